import { describe, expect, it } from "vitest";
import type { SectionLike } from "../src/summary/pure";
import {
  addBack,
  appendItem,
  bodyOf,
  diffCounts,
  findSection,
  headingOf,
  itemLine,
  joinText,
  markerBadges,
  replaceSectionBody,
  scoreLabel,
  sectionCounts,
} from "../src/summary/pure";

// A hand-split summary, as the engine's parser would give it (raws concatenate to the text).
const RAWS = [
  "## Goal\nShip the loader.\n\n",
  "## Progress\n",
  "### Done\n- [x] Budget in `loader.ts`\n\n",
  "### In Progress\n- [ ] (none)\n\n",
  "## Key Decisions\n- **Per load**: not per attempt.\n\n",
  "## Next Steps\n1. Wire flags.\n2. Run tests.\n",
];
const APPENDIX = "\n<read-files>\nsrc/a.ts\n</read-files>";
const META: Omit<SectionLike, "index" | "raw">[] = [
  { title: "Goal", name: "Goal", level: 2, role: "goal", items: [] },
  { title: "Progress", name: "Progress", level: 2, role: "other", items: [] },
  { title: "Done", name: "Progress › Done", level: 3, role: "done", items: [{ text: "Budget in `loader.ts`", marker: "checkbox", checked: true, depth: 0 }] },
  { title: "In Progress", name: "Progress › In Progress", level: 3, role: "inProgress", items: [{ text: "(none)", marker: "checkbox", checked: false, depth: 0 }] },
  { title: "Key Decisions", name: "Key Decisions", level: 2, role: "decisions", items: [{ text: "**Per load**: not per attempt.", marker: "bullet", checked: null, depth: 0 }] },
  {
    title: "Next Steps",
    name: "Next Steps",
    level: 2,
    role: "nextSteps",
    items: [
      { text: "Wire flags.", marker: "numbered", checked: null, depth: 0 },
      { text: "Run tests.", marker: "numbered", checked: null, depth: 0 },
    ],
  },
];
const SECTIONS: SectionLike[] = META.map((m, i) => ({ ...m, index: i, raw: RAWS[i] }));
const TEXT = RAWS.join("") + APPENDIX;

describe("section bodies", () => {
  it("splits heading and body, and joins back to the text", () => {
    expect(headingOf(SECTIONS[0])).toBe("## Goal\n");
    expect(bodyOf(SECTIONS[0])).toBe("Ship the loader.\n\n");
    expect(bodyOf(SECTIONS[1])).toBe("");
    expect(joinText(SECTIONS, APPENDIX)).toBe(TEXT);
    const lead: SectionLike = { index: 0, title: "", name: "(untitled)", level: 0, role: "other", raw: "just text\n", items: [] };
    expect(headingOf(lead)).toBe("");
    expect(bodyOf(lead)).toBe("just text\n");
  });

  it("replaces one body and keeps every other byte", () => {
    const out = replaceSectionBody(SECTIONS, APPENDIX, 0, "Ship the loader with a budget.");
    expect(out).toBe(TEXT.replace("Ship the loader.", "Ship the loader with a budget."));
    // The last section keeps the newline before the appendix even when the user trims it.
    const last = replaceSectionBody(SECTIONS, APPENDIX, 5, "1. Only this.");
    expect(last.endsWith("1. Only this.\n" + APPENDIX)).toBe(true);
    // An unchanged body gives the same text.
    expect(replaceSectionBody(SECTIONS, APPENDIX, 2, bodyOf(SECTIONS[2]))).toBe(TEXT);
  });
});

describe("add back", () => {
  it("finds the section by name, title or last part", () => {
    expect(findSection(SECTIONS, "Key Decisions")?.index).toBe(4);
    expect(findSection(SECTIONS, "Progress › Done")?.index).toBe(2);
    expect(findSection(SECTIONS, "Done")?.index).toBe(2);
    expect(findSection(SECTIONS, "Critical Context")).toBeUndefined();
  });

  it("writes the item as the section writes its items", () => {
    expect(itemLine(SECTIONS[2], "Flags wired")).toBe("- [x] Flags wired");
    expect(itemLine(SECTIONS[5], "Ship")).toBe("3. Ship");
    expect(itemLine(SECTIONS[4], "a\nb")).toBe("- a\n  b");
    expect(itemLine(undefined, "x")).toBe("- x");
  });

  it("replaces a (none) placeholder", () => {
    expect(appendItem("- [ ] (none)\n\n", "- [ ] Jitter")).toBe("- [ ] Jitter\n");
    expect(appendItem("- a\n\n", "- b")).toBe("- a\n- b\n");
  });

  it("restores a dropped decision into its section", () => {
    const a = addBack(SECTIONS, APPENDIX, { section: "Key Decisions", text: "**Cap**: 30 s." });
    expect(a.sectionIndex).toBe(4);
    expect(a.text).toBe("- **Per load**: not per attempt.\n- **Cap**: 30 s.\n");
    const full = replaceSectionBody(SECTIONS, APPENDIX, 4, a.text);
    expect(full).toContain("- **Per load**: not per attempt.\n- **Cap**: 30 s.\n\n## Next Steps");
  });

  it("adds a missing section before the appendix", () => {
    const a = addBack(SECTIONS, APPENDIX, { section: "Critical Context", text: "tests expect 3 attempts" });
    expect(a.sectionIndex).toBeNull();
    expect(a.text).toContain("2. Run tests.\n\n## Critical Context\n- tests expect 3 attempts\n\n<read-files>");
    expect(a.text.startsWith(RAWS.slice(0, 5).join(""))).toBe(true);
  });
});

describe("labels", () => {
  it("counts items and checkboxes", () => {
    expect(sectionCounts(SECTIONS[0])).toBe("no items");
    expect(sectionCounts(SECTIONS[2])).toBe("1 item · 1/1 checked");
    expect(sectionCounts(SECTIONS[5])).toBe("2 items");
  });

  it("scores and badges", () => {
    expect(scoreLabel(0, 0)).toBe("no facts in the span");
    expect(scoreLabel(7, 12)).toBe("7/12 facts (58%)");
    expect(markerBadges({ dropped: 1, retained: 3, facts: 4 })).toEqual([
      { cls: "b-dropped", text: "⚠ 1 dropped" },
      { cls: "b-retention", text: "kept 3/4" },
    ]);
    expect(markerBadges({ dropped: 0, retained: null, facts: null })).toEqual([]);
    expect(diffCounts({ added: ["a"], removed: [], unchanged: ["b", "c"], reworded: [{}] })).toBe("+1 ~1 =2");
  });
});

describe("rendering stays text-only", () => {
  it("renders a diff of hostile text as text nodes", async () => {
    const { renderDiff } = await import("../src/summary/diff");
    const evil = `<img src=x onerror="window.hacked=1"><script>window.hacked=1</script>`;
    const root = renderDiff({
      from: "a",
      to: "b",
      sections: [{ title: evil, added: [evil], removed: [evil], unchanged: [evil], reworded: [{ from: evil, to: evil, words: [{ op: "insert", text: evil }] }], textChanged: true }],
      moved: [{ text: evil, from: evil, to: evil }],
      filesAdded: [evil],
      filesRemoved: [],
    });
    expect(root.querySelectorAll("img, script, a, iframe").length).toBe(0);
    expect(root.textContent).toContain("<script>");
    expect(root.querySelectorAll(".wb-dline.add").length).toBe(2);
    expect(root.querySelector(".w-ins")?.textContent).toBe(evil);
    for (const e of root.querySelectorAll("*")) for (const a of e.attributes) expect(a.name.startsWith("on")).toBe(false);
  });
});

describe("placeholders", () => {
  it("recognises placeholder items", async () => {
    const { isPlaceholder } = await import("../src/summary/pure");
    for (const t of ["(none)", "none", "None.", "(n/a)", "nothing yet"]) expect(isPlaceholder(t)).toBe(true);
    for (const t of ["none of the tests fail", "Full jitter", "(none of it)"]) expect(isPlaceholder(t)).toBe(false);
  });
});

describe("authorLabel", () => {
  it("names Pi and the session's model as an inference, without nested parentheses", async () => {
    const { authorLabel } = await import("../src/summary/pure");
    expect(authorLabel("pi", "loopback/scripted-13k")).toBe("Pi, probably with loopback/scripted-13k (inferred)");
    expect(authorLabel("unknown", "")).toBe("Pi or another tool (not recorded)");
    expect(authorLabel("model", "openai gpt-4o-mini")).toBe("model (openai gpt-4o-mini)");
    expect(authorLabel("offline", "Arbor's offline summarizer")).toBe("offline summarizer");
  });
});
