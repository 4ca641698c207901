import { describe, expect, it } from "vitest";
import { confirmText, costText, crossingText, doneText, parseMaxChars, recallIds, secretLines } from "../src/recall/pure";
import type { RecallPreview } from "../src/ipc";

function preview(over: Partial<RecallPreview> = {}): RecallPreview {
  return {
    entryIds: ["e1"],
    leafId: "leaf1",
    maxChars: 8000,
    refusal: null,
    text: "[Brought back by Arbor: user message e1 …]\nhello",
    tokens: 20,
    contextTokens: 1000,
    contextTokensAfter: 1020,
    threshold: 183_616,
    crossesThreshold: false,
    cut: [],
    sources: [{ entryId: "e1", place: "compacted away" }],
    secrets: [],
    secretsKept: false,
    ...over,
  };
}

describe("Bring back", () => {
  it("takes the picked nodes, else the selected entry", () => {
    expect(recallIds(["a", "b"], "c")).toEqual(["a", "b"]);
    expect(recallIds([], "c")).toEqual(["c"]);
    expect(recallIds([], null)).toEqual([]);
  });
  it("reads the max-characters field as a whole number in range", () => {
    expect(parseMaxChars(" 8000 ")).toBe(8000);
    expect(parseMaxChars("0")).toBeNull();
    expect(parseMaxChars("12.5")).toBeNull();
    expect(parseMaxChars("-3")).toBeNull();
    expect(parseMaxChars("")).toBeNull();
    expect(parseMaxChars("10000001")).toBeNull();
  });
  it("says the cost and the context before and after against the threshold", () => {
    expect(costText(preview())).toBe("This message: 20 tokens. The context at the leaf goes from 1.0k to 1.0k tokens (compaction threshold 184k).");
    expect(crossingText(preview())).toBeNull();
    expect(crossingText(preview({ crossesThreshold: true }))).toContain("Compact first");
  });
  it("the confirm text says where it goes and that it cannot be undone", () => {
    const t = confirmText(preview());
    expect(t).toContain("after leaf1");
    expect(t).toContain("cannot be undone");
    expect(confirmText(preview({ entryIds: ["a", "b"] }))).toContain("these 2 entries");
    expect(doneText("n1", true)).toContain("past the compaction threshold");
    expect(doneText("n1", false)).not.toContain("threshold");
  });
  it("lists the secrets found, saying whether they are redacted or kept", () => {
    const secrets = [
      { entryId: "e1", kind: "github-token", start: 10, end: 50 },
      { entryId: "e2", kind: "jwt", start: 0, end: 120 },
    ];
    const red = secretLines(preview({ secrets }));
    expect(red.head).toContain("2 secrets");
    expect(red.head).toContain("redacted");
    expect(red.items).toEqual(["github-token in entry e1, bytes 10–50 of its text", "jwt in entry e2, bytes 0–120 of its text"]);
    const kept = secretLines(preview({ secrets: secrets.slice(0, 1), secretsKept: true }));
    expect(kept.head).toContain("1 secret ");
    expect(kept.head).toContain("as they are");
  });
});
