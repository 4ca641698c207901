// Summary quality in the UI: the words of scores, growth and the cost of forgetting, where each
// citation goes in the workbench's cards, the graph's badge and the Timeline's marks; and the
// quality panel drawn from a judgement (text nodes only, the unsupported mark, the empty state,
// a source's click revealing its entry).
import { describe, expect, it, vi } from "vitest";
import {
  forgettingLines,
  forgettingMarks,
  forgettingTip,
  growthFlagText,
  growthLine,
  kindScoreLabel,
  kindScoreLine,
  markerBadges,
  overallLabel,
  percent,
  placeCitations,
  qualityClass,
  sourceLabel,
} from "../src/summary/pure";
import type { ForgettingLike, ScoreLike } from "../src/summary/pure";

const k = (probes: number, answered: number) => ({ probes, answered });
/** rpc-manual's first compaction (05e34e69), as the app's tests measure it. */
const SCORE: ScoreLike = { score: 0.909, byKind: { recall: k(9, 7), artifact: k(7, 6), decision: k(2, 2), continuation: k(2, 2) } };
const FORGOT: ForgettingLike = {
  rereadFiles: ["data/transactions.csv", "ledger/core.py"],
  rerunCommands: ["python3 -m unittest discover -s tests -v"],
  callsBeforeFirstEdit: 2,
  edited: true,
  baselineCallsBeforeFirstEdit: 3,
  windowEntries: 20,
  cost: 3,
};

describe("scores", () => {
  it("labels the score overall and by kind, as percentages and n/m", () => {
    expect(percent(0.909)).toBe("91 %");
    expect(overallLabel(SCORE)).toBe("91 %");
    expect(overallLabel({ ...SCORE, score: null })).toBe("no probes");
    expect(kindScoreLabel("recall", k(9, 7))).toBe("recall 78 % (7/9)");
    expect(kindScoreLabel("decision", k(0, 0))).toBe("decision: no probe");
    expect(kindScoreLine(SCORE)).toBe("recall 78 % (7/9) · artifact 86 % (6/7) · decision 100 % (2/2) · continuation 100 % (2/2)");
    expect([qualityClass(0.8), qualityClass(0.79), qualityClass(0.5), qualityClass(0.49)]).toEqual(["q-good", "q-fair", "q-fair", "q-poor"]);
  });

  it("puts the score badge beside the drop alarm on a summary row, with the kinds in its tooltip", () => {
    expect(markerBadges({ dropped: 1, retained: 3, facts: 4, quality: 0.78 }, SCORE)).toEqual([
      { cls: "b-dropped", text: "⚠ 1 dropped" },
      { cls: "b-quality q-fair", text: "78 %", title: `Summary quality: probes it answers. ${kindScoreLine(SCORE)}` },
      { cls: "b-retention", text: "kept 3/4" },
    ]);
    // A score of 0 is a badge too; no score yet, none.
    expect(markerBadges({ quality: 0 }).map((b) => b.text)).toEqual(["0 %"]);
    expect(markerBadges({ quality: null })).toEqual([]);
  });
});

describe("growth and forgetting in words", () => {
  it("says the growth flags in words", () => {
    expect(growthFlagText("notSmaller")).toBe("not smaller than what it replaced");
    expect(growthFlagText("grew")).toBe("grew more than 1.5× over the previous summary");
    expect(growthFlagText(null)).toBeNull();
    expect(growthLine({ summaryTokens: 742, replacedTokens: 7674, previousSummaryTokens: 428 })).toBe("742 tokens for 7,674 replaced · previous summary 428");
    expect(growthLine({ summaryTokens: 428, replacedTokens: 4465, previousSummaryTokens: null })).toBe("428 tokens for 4,465 replaced");
  });

  it("says what was re-read, re-run, and the calls before the first edit against the session start's", () => {
    expect(forgettingLines(FORGOT)).toEqual([
      "2 files re-read: data/transactions.csv, ledger/core.py",
      "1 command re-run: python3 -m unittest discover -s tests -v",
      "2 tool calls before the first edit (the session start: 3)",
    ]);
    const none = { ...FORGOT, rereadFiles: [], rerunCommands: [], cost: 0, edited: false, callsBeforeFirstEdit: 1, baselineCallsBeforeFirstEdit: null };
    expect(forgettingLines(none)).toEqual(["no file re-read", "no command re-run", "1 tool call, no edit yet (the session start made no edit)"]);
    expect(forgettingLines({ ...none, windowEntries: 0 })).toEqual(["Nothing happened after it yet."]);
    const many = { ...FORGOT, rereadFiles: ["a", "b", "c", "d", "e", "f", "g"] };
    expect(forgettingLines(many)[0]).toBe("7 files re-read: a, b, c, d, e and 2 more");
    expect(forgettingTip("05e34e69", FORGOT).split("\n")[0]).toBe("After compaction 05e34e69, the agent did again what the summary did not carry:");
  });

  it("marks on the Timeline only the compactions with a cost of forgetting", () => {
    const ids = ["c1", "c2", "c3", ""];
    const costs: Record<string, ForgettingLike | null> = { c1: FORGOT, c2: { ...FORGOT, rereadFiles: [], rerunCommands: [], cost: 0 }, c3: null };
    const marks = forgettingMarks([10, 20, 30, 40], (p) => ids[p / 10 - 1], (id) => costs[id]);
    expect(marks.map((m) => [m.pos, m.entryId, m.cost])).toEqual([[10, "c1", 3]]);
    expect(marks[0].tip).toContain("2 files re-read: data/transactions.csv, ledger/core.py");
  });
});

describe("citations", () => {
  const sections = [
    { index: 0, name: "Goal", items: [] },
    { index: 1, name: "Progress › Done", items: [{ text: "Ran the tests" }, { text: "Ran the tests" }, { text: "Edited `core.py`" }] },
    { index: 2, name: "Next Steps", items: [{ text: "Wait for the user's next request" }] },
  ];
  const cite = (section: string, text: string, unsupported = false) => ({ section, text, sources: unsupported ? [] : [{ entryId: "d081ee73", score: 1 }], unsupported });

  it("puts each citation beside its item, equal items in turn, and free text under its section", () => {
    const c = [
      cite("Goal", "Fix the rounding bug."),
      cite("Progress › Done", "Ran the tests"),
      cite("Progress › Done", "Ran the tests"),
      cite("Progress › Done", "  Edited `core.py` "),
      cite("Next Steps", "Wait for the user's next request", true),
      cite("Nowhere", "lost"),
    ];
    const { items, lines } = placeCitations(sections, c);
    expect([...items.keys()]).toEqual(["1:0", "1:1", "1:2", "2:0"]);
    expect(items.get("1:1")).toBe(c[2]);
    expect(items.get("2:0")?.unsupported).toBe(true);
    expect(lines.get(0)).toEqual([c[0]]);
    expect(lines.size).toBe(1);
  });

  it("labels a source with its share", () => {
    expect(sourceLabel({ entryId: "d081ee73", score: 1 })).toBe("d081ee73 1.00");
    expect(sourceLabel({ entryId: "c33cfe8e", score: 0.4512 })).toBe("c33cfe8e 0.45");
  });
});

describe("the quality panel", () => {
  const evil = `<img src=x onerror="window.hacked=1">`;
  const view = (probes: boolean) => ({
    entryId: "05e34e69",
    score: probes ? SCORE : { score: null, byKind: { recall: k(0, 0), artifact: k(0, 0), decision: k(0, 0), continuation: k(0, 0) } },
    probes: probes
      ? [
          { kind: "recall" as const, question: `What did ${evil} take?`, expected: "0.006s", sourceEntryId: "bbdde4f9", answered: false },
          { kind: "artifact" as const, question: "Which file was read?", expected: "ledger/core.py", sourceEntryId: "c33cfe8e", answered: true },
        ]
      : [],
    citations: [
      { section: "Next Steps", text: "Wait for the user's next request", sources: [], unsupported: true },
      { section: "Goal", text: evil, sources: [{ entryId: "d081ee73", score: 1 }], unsupported: false },
    ],
    unsupported: [{ section: "Next Steps", text: "Wait for the user's next request" }],
    growth: { summaryTokens: 742, replacedTokens: 7674, previousSummaryTokens: 428, flag: "grew" as const },
    forgetting: { ...FORGOT, baselineCallsBeforeFirstEdit: 3 },
    computeMs: 1,
  });
  const bench = () => {
    const jumpTo = vi.fn(async () => {});
    const b = {
      v: { entryId: "05e34e69", sections: [{ index: 0, name: "Goal", items: [] }, { index: 1, name: "Next Steps", items: [{ text: "Wait for the user's next request" }] }] },
      deps: { jumpTo, afterWrite: async () => {}, notify: () => {}, report: () => {}, bringBack: () => {} },
      openEditor: () => {},
      revert: async () => {},
      write: async () => {},
      openOverlay: () => document.createElement("div"),
    };
    return { b, jumpTo };
  };

  it("shows the score by kind, growth in words, forgetting, unsupported items and probes as text", async () => {
    const { fillQuality, renderQualityBox } = await import("../src/summary/quality");
    const { b, jumpTo } = bench();
    const box = renderQualityBox();
    fillQuality(b as never, box, view(true) as never);
    expect(box.querySelector("#wb-quality-score")?.textContent).toBe("91 %");
    expect(box.querySelector('[data-kind="recall"]')?.textContent).toBe("recall 78 % (7/9)");
    expect(box.querySelector("#wb-growth")?.textContent).toContain("grew more than 1.5× over the previous summary");
    expect(box.querySelector("#wb-forgetting")?.textContent).toContain("2 files re-read");
    expect(box.querySelector("#wb-unsupported")?.textContent).toContain("Wait for the user's next request");
    expect((box.querySelector("#wb-judge") as HTMLButtonElement).disabled).toBe(false);
    // The probe rows are drawn when their list is first opened.
    const probes = box.querySelector("#wb-probes") as HTMLDetailsElement;
    expect(probes.open).toBe(false);
    expect(probes.querySelectorAll("li")).toHaveLength(0);
    probes.open = true;
    probes.dispatchEvent(new Event("toggle"));
    const rows = [...box.querySelectorAll("#wb-probes li")];
    expect(rows.map((r) => r.querySelector(".wb-mark")?.textContent)).toEqual(["✗", "✓"]);
    expect(box.querySelector("img")).toBeNull();
    expect(rows[0].textContent).toContain(evil);
    (rows[0].querySelector(".wb-probe-source") as HTMLButtonElement).click();
    expect(jumpTo).toHaveBeenCalledWith("bbdde4f9");
  });

  it("says so when the span gave no probe", async () => {
    const { fillQuality, renderQualityBox } = await import("../src/summary/quality");
    const box = renderQualityBox();
    fillQuality(bench().b as never, box, view(false) as never);
    expect(box.querySelector("#wb-quality-score")?.textContent).toBe("no probes");
    expect(box.querySelector("#wb-probes .wb-empty")?.textContent).toContain("No probes");
  });

  it("marks an unsupported item on its card and reveals a source on click", async () => {
    const { applyCitations, UNSUPPORTED } = await import("../src/summary/quality");
    const { b, jumpTo } = bench();
    const root = document.createElement("div");
    root.innerHTML = `<details class="wb-card" data-index="0"></details><details class="wb-card" data-index="1"><ul><li class="wb-item" data-item="0"></li></ul></details>`;
    applyCitations(b as never, root, view(true) as never);
    const item = root.querySelector('.wb-card[data-index="1"] li.wb-item') as HTMLElement;
    expect(item.classList.contains("unsupported")).toBe(true);
    expect(item.querySelector(".wb-unsupported")?.textContent).toBe(UNSUPPORTED);
    expect(UNSUPPORTED).toBe("unsupported: nothing in its span says this");
    // The Goal's free text has its line with the source; hostile text stays text.
    const line = root.querySelector('.wb-card[data-index="0"] .wb-cite-lines li') as HTMLElement;
    expect(line.querySelector(".wb-cite-text")?.textContent).toBe(evil);
    expect(root.querySelector("img")).toBeNull();
    (line.querySelector(".wb-cite-source") as HTMLButtonElement).click();
    expect(jumpTo).toHaveBeenCalledWith("d081ee73");
  });
});

import { judgeProgressText, judgeVerdictMark } from "../src/summary/pure";

describe("judge mode's words", () => {
  it("says how far the judge got, and marks each verdict", () => {
    expect(judgeProgressText(0, 0)).toBe("Judging: asking the model…");
    expect(judgeProgressText(3, 10)).toBe("Judging: 3 of 10 probes graded…");
    expect(["correct", "partial", "wrong", "unparseable"].map(judgeVerdictMark)).toEqual(["✓", "½", "✗", "✗"]);
  });
});
