import { describe, expect, it } from "vitest";
import { SORTS, forgettingFact, formatBytes, hitsText, progressText, sinceMs, snippetParts } from "../src/library/pure";

describe("library snippet", () => {
  it("splits matches marked with « »", () => {
    expect(snippetParts("…we chose «blue» over «green» here")).toEqual([
      { text: "…we chose ", hit: false },
      { text: "blue", hit: true },
      { text: " over ", hit: false },
      { text: "green", hit: true },
      { text: " here", hit: false },
    ]);
  });
  it("keeps text without marks and tolerates an unclosed mark", () => {
    expect(snippetParts("plain")).toEqual([{ text: "plain", hit: false }]);
    expect(snippetParts("a «b")).toEqual([{ text: "a ", hit: false }, { text: "b", hit: true }]);
    expect(snippetParts("")).toEqual([]);
  });
  it("never produces markup: text stays text", () => {
    const parts = snippetParts("<img src=x onerror=alert(1)> «<b>»");
    expect(parts.map((p) => p.text).join("")).toBe("<img src=x onerror=alert(1)> <b>");
  });
});

describe("library filters", () => {
  it("date filters count back from now", () => {
    expect(sinceMs("any", 1_000_000_000)).toBeNull();
    expect(sinceMs("7", 1_000_000_000)).toBe(1_000_000_000 - 7 * 86_400_000);
  });
  it("progress text only while indexing", () => {
    expect(progressText({ synced: true, done: 5, total: 5 })).toBeNull();
    expect(progressText({ synced: false, done: 25, total: 500 })).toBe("Indexing 25 / 500 sessions…");
    expect(progressText({ synced: false, done: 25, total: 500, fullText: true })).toBe(
      "Sessions listed; indexing full text 25 / 500… (search may miss the rest)",
    );
  });
  it("says when hits may be incomplete", () => {
    expect(hitsText(1, { synced: true, done: 5, total: 5 })).toBe("1 hit");
    expect(hitsText(0, null)).toBe("no match");
    expect(hitsText(3, { synced: false, done: 100, total: 500, fullText: true })).toBe(
      "3 hits: still indexing, results may be incomplete (400 of 500 sessions not searched yet)",
    );
    expect(hitsText(0, { synced: false, done: 10, total: 500 })).toBe("no match: still indexing, results may be incomplete");
  });
  it("formats sizes", () => {
    expect(formatBytes(512)).toBe("512 B");
    expect(formatBytes(3 * 1024 * 1024)).toBe("3.0 MB");
  });
});

describe("library: what compactions made the agent redo", () => {
  it("is a sort choice that says what it counts", () => {
    const f = SORTS.find((o) => o.key === "forgetting");
    expect(f?.label).toBe("Re-done after compactions");
    expect(f?.title).toMatch(/read again .* ran again .* before the compaction's cut/);
    expect(new Set(SORTS.map((o) => o.key)).size).toBe(SORTS.length);
    expect(SORTS[0].key).toBe("modified");
  });
  it("shows the count on a card with compactions, with its tooltip", () => {
    expect(forgettingFact({ forgetting: 3, forgettingCompactions: 1 })).toEqual({
      text: "3 re-done",
      title: expect.stringMatching(/did not carry them: 3 over 1 compaction$/),
    });
    expect(forgettingFact({ forgetting: 0, forgettingCompactions: 2 })?.title).toMatch(/: 0 over 2 compactions$/);
  });
  it("shows nothing without a compaction or before the full text is indexed", () => {
    expect(forgettingFact({ forgetting: 0, forgettingCompactions: 0 })).toBeNull();
    expect(forgettingFact({ forgetting: null, forgettingCompactions: null })).toBeNull();
  });
});
