import { describe, expect, it } from "vitest";
import { renderMarkdown } from "../src/render/markdown";
import { renderBlock, renderDetail } from "../src/render/detail";

const PAYLOADS = [
  `<script>window.hacked = 1</script>`,
  `<img src=x onerror="window.hacked = 1">`,
  `[click](javascript:window.hacked=1)`,
  `<a href="javascript:alert(1)">x</a>`,
  "```html\n<script>alert(1)</script>\n```",
  `**<b onmouseover="x()">bold</b>**`,
];

function noActiveContent(root: HTMLElement) {
  expect(root.querySelectorAll("script, img, a, iframe, svg, object, embed").length).toBe(0);
  for (const el of root.querySelectorAll("*")) {
    for (const attr of el.attributes) {
      expect(attr.name.startsWith("on")).toBe(false);
      expect(attr.value.toLowerCase()).not.toContain("javascript:");
    }
  }
}

describe("renderMarkdown (F47: untrusted session content)", () => {
  it.each(PAYLOADS)("renders %s inert, as text", (p) => {
    const root = renderMarkdown(p);
    noActiveContent(root);
    expect(root.textContent).toContain(p.includes("```") ? "<script>alert(1)</script>" : p.replace(/\*\*/g, "").replace(/\[click\]\(.*\)/, "click"));
  });

  it("keeps markdown structure: headings, lists, code blocks, inline code", () => {
    const root = renderMarkdown("## Goal\n- one `x`\n- two **b**\n\n```rust\nfn main() {}\n```\ntext *em*");
    expect(root.querySelector("h4")?.textContent).toBe("Goal");
    expect(root.querySelectorAll("li").length).toBe(2);
    expect(root.querySelector("li code")?.textContent).toBe("x");
    expect(root.querySelector("strong")?.textContent).toBe("b");
    expect(root.querySelector("pre code")?.textContent).toBe("fn main() {}");
    expect((root.querySelector("pre code") as HTMLElement).dataset.lang).toBe("rust");
    expect(root.querySelector("em")?.textContent).toBe("em");
  });

  it("shows links as text with the target only in a title", () => {
    const root = renderMarkdown("see [docs](https://example.org/x)");
    const link = root.querySelector(".md-link") as HTMLElement;
    expect(link.tagName).toBe("SPAN");
    expect(link.textContent).toBe("docs");
    expect(link.title).toBe("https://example.org/x");
  });
});

describe("entry detail blocks", () => {
  it("collapses tool results and thinking, with sizes", () => {
    const tr = renderBlock({ type: "toolResult", toolName: "bash", text: "<img src=x onerror=alert(1)>", chars: 28, isError: true });
    expect(tr.tagName).toBe("DETAILS");
    expect((tr as HTMLDetailsElement).open).toBe(false);
    expect(tr.querySelector("summary")?.textContent).toBe("Error from bash (28 chars)");
    noActiveContent(tr);
    const th = renderBlock({ type: "thinking", text: "hmm", chars: 3 });
    expect(th.querySelector("summary")?.textContent).toBe("Thinking (3 chars)");
  });

  it("shows tool call arguments as text", () => {
    const tc = renderBlock({ type: "toolCall", name: "edit", argumentsJson: '{\n  "path": "<script>"\n}' });
    expect(tc.querySelector("pre")?.textContent).toContain('"path": "<script>"');
    noActiveContent(tc);
  });

  it("renders a whole entry without active content", () => {
    const d = renderDetail({
      id: "abc", parentId: null, entryType: "message", role: "user", timestamp: "t", label: "<img onerror=x>",
      blocks: PAYLOADS.map((text) => ({ type: "text" as const, text })), rawJson: PAYLOADS.join(""),
      onActivePath: true, isLeaf: true,
    });
    noActiveContent(d);
    expect(d.textContent).toContain("<img onerror=x>");
  });
});
