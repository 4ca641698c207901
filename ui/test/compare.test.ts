import { describe, expect, it } from "vitest";
import { comparePair, contextText, costText, fileGroups, outcomeText, picksText, scoreText, togglePick } from "../src/compare/pure";
import type { ComparisonView, FileLink, SideView } from "../src/ipc";

describe("picking nodes on the graph", () => {
  it("the first Ctrl+click picks the selected node too, so two nodes are picked", () => {
    expect(togglePick([], "b", "a")).toEqual(["a", "b"]);
    // with nothing selected, or the selected node itself, only that node
    expect(togglePick([], "b", null)).toEqual(["b"]);
    expect(togglePick([], "a", "a")).toEqual(["a"]);
  });
  it("a second Ctrl+click on a picked node takes it back; others add in order", () => {
    expect(togglePick(["a", "b"], "b", "a")).toEqual(["a"]);
    expect(togglePick(["a", "b"], "c", "a")).toEqual(["a", "b", "c"]);
    const before = ["a"];
    togglePick(before, "b", null);
    expect(before).toEqual(["a"]);
  });
  it("compares exactly two different nodes, A first", () => {
    expect(comparePair(["a", "b"])).toEqual(["a", "b"]);
    expect(comparePair(["a"])).toBeNull();
    expect(comparePair(["a", "b", "c"])).toBeNull();
    expect(comparePair(["a", "a"])).toBeNull();
    expect(picksText(0)).toBe("");
    expect(picksText(1)).toContain("another");
    expect(picksText(3)).toBe("3 nodes picked");
  });
});

const file = (path: string, a: string | null, b: string | null): FileLink => ({ path, aEntryId: a, bEntryId: b });

function side(over: Partial<SideView> = {}): SideView {
  return {
    tip: { entryId: "t", kind: "user", title: "tip" },
    firstEntryId: "f",
    entries: 3,
    turns: 1,
    contextTokens: 12_345,
    tokens: [
      { category: "user", tokens: 100 },
      { category: "toolResults", tokens: 9000 },
    ],
    summaries: [],
    readFiles: [],
    modifiedFiles: [],
    commands: [],
    errors: [],
    lastUserRequest: null,
    model: null,
    cost: 0,
    ...over,
  };
}

describe("the Compare panel's texts", () => {
  it("names outcomes, costs and scores", () => {
    expect([outcomeText("ok"), outcomeText("error"), outcomeText("unknown")]).toEqual(["ok", "failed", "no result"]);
    expect(costText(0)).toBe("—");
    expect(costText(0.0042)).toBe("$0.0042");
    expect(costText(1.5)).toBe("$1.50");
    expect(scoreText(null)).toBe("no score");
    expect(scoreText(0.8)).toBe("kept 80 %");
  });
  it("the context at a node: total, then the categories largest first", () => {
    expect(contextText(side())).toBe("12k tokens (Tool results 9.0k, User 100)");
    expect(contextText(side({ tokens: [], contextTokens: 0 }))).toBe("0 tokens");
  });
  it("files apart: only A, only B, both, empty lists left out", () => {
    const c: ComparisonView = {
      ancestor: null,
      a: side(),
      b: side(),
      onlyA: { readFiles: [], modifiedFiles: [file("x.rs", "a1", null)] },
      onlyB: { readFiles: [file("r.rs", null, "b2")], modifiedFiles: [] },
      both: { readFiles: [], modifiedFiles: [file("m.rs", "a3", "b3")], modifiedDifferently: [file("m.rs", "a3", "b3")] },
    };
    const g = fileGroups(c);
    expect(g.map((x) => x.key)).toEqual(["only-a", "only-b", "both"]);
    expect(g[0].lists).toEqual([{ what: "modified", files: [file("x.rs", "a1", null)] }]);
    expect(g[1].lists.map((l) => l.what)).toEqual(["read"]);
    expect(g[2].lists.map((l) => l.what)).toEqual(["modified differently", "modified"]);
  });
});
