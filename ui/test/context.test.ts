import { describe, expect, it } from "vitest";
import { renderContext } from "../src/views/context";
import type { ContextView } from "../src/ipc";

const view: ContextView = {
  leafId: "abcd1234",
  model: "anthropic/claude-sonnet-4-5",
  thinkingLevel: "medium",
  messages: [
    { entryId: "c1", role: "compactionSummary", tokens: 300, preview: "<b>summary</b>" },
    { entryId: "u1", role: "user", tokens: 100, preview: "hello" },
  ],
  categories: [
    { category: "summary", tokens: 300 },
    { category: "user", tokens: 100 },
    { category: "thinking", tokens: 0 },
  ],
  estimatedTokens: 400,
  contextTokens: 900,
  contextWindow: 1000,
  reserveTokens: 200,
  threshold: 800,
  overThreshold: true,
};

describe("context view", () => {
  it("draws the stacked bar, the threshold and the messages as text", () => {
    const picked: string[] = [];
    const root = renderContext(view, (id) => picked.push(id));
    const segs = [...root.querySelectorAll<HTMLElement>(".ctx-bar .seg")];
    expect(segs.map((s) => s.className)).toEqual(["seg seg-summary", "seg seg-user"]);
    expect(segs[0].style.width).toBe("30%");
    expect(root.querySelector<HTMLElement>(".ctx-threshold")!.style.left).toBe("80%");
    expect(root.querySelector("#context-status")!.textContent).toContain("over: Pi would compact");
    expect(root.querySelector(".ctx-model")!.textContent).toContain("anthropic/claude-sonnet-4-5");
    expect(root.querySelector("b")).toBeNull();
    expect(root.textContent).toContain("<b>summary</b>");
    root.querySelectorAll<HTMLElement>(".ctx-msg")[1].click();
    expect(picked).toEqual(["u1"]);
  });

  it("says so when nothing would be sent", () => {
    const root = renderContext({ ...view, messages: [], categories: [], estimatedTokens: 0, overThreshold: false }, () => {});
    expect(root.querySelector(".empty")!.textContent).toContain("Nothing would be sent");
  });
});
