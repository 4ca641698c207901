import { describe, expect, it } from "vitest";
import { baseName, forkCountText, forkedFromText, stripHead, stripRows } from "../src/forks/pure";
import type { ForkView } from "../src/ipc";

function view(over: Partial<ForkView> = {}): ForkView {
  return {
    parentSession: "/s/p.jsonl",
    parentPath: "/s/p.jsonl",
    status: "resolves",
    sentence: "forked from p.jsonl",
    parentName: null,
    forkPointId: "e2",
    rows: [
      { entryId: "e1", kind: "user", title: "hi", timestamp: "t", inFork: true },
      { entryId: "e2", kind: "assistant", title: "yo", timestamp: "t", inFork: true },
    ],
    earlier: 0,
    ancestry: [],
    ...over,
  };
}

describe("forks in the picker", () => {
  it("names a fork's parent, or says it is gone", () => {
    expect(forkedFromText({ forkedFrom: null })).toBeNull();
    expect(forkedFromText({ forkedFrom: { path: "/s/p.jsonl", name: "Fix the parser", exists: true } })).toBe("forked from Fix the parser");
    expect(forkedFromText({ forkedFrom: { path: "/s/gone.jsonl", name: null, exists: false } })).toBe("forked from gone.jsonl, which is no longer there");
  });
  it("counts forks", () => {
    expect([forkCountText(0), forkCountText(1), forkCountText(4)]).toEqual(["", "1 fork", "4 forks"]);
    expect(baseName("/a/b/c.jsonl")).toBe("c.jsonl");
    expect(baseName("C:\\x\\y.jsonl")).toBe("y.jsonl");
  });
});

describe("a fork's parent path", () => {
  const notCopied = (v: ForkView): ForkView => ({ ...v, rows: v.rows.map((r) => ({ ...r, inFork: false })) });
  it("heads the rows with the parent, and says when rows were left out", () => {
    expect(stripHead(notCopied(view()))).toMatch(/^Forked from p\.jsonl: its path up to the fork point\. Read-only/);
    expect(stripHead(notCopied(view({ parentName: "Parser work", earlier: 5 })))).toContain("Parser work: its path up to the fork point (5 earlier entries not shown)");
  });
  it("does not draw again the path a /fork copied into this session: only the fork point", () => {
    const v = view();
    expect(stripRows(v).map((r) => r.entryId)).toEqual(["e2"]);
    expect(stripHead(v)).toBe("Forked from p.jsonl at e2: this session starts with a copy of its path (1 entry, in the graph below). Read-only here; click an entry to open the parent there.");
    expect(stripRows(notCopied(v)).map((r) => r.entryId)).toEqual(["e1", "e2"]);
  });
  it("a parent that is gone is named in the engine's sentence, not an error", () => {
    const v = view({ status: "missing", rows: [], forkPointId: null, sentence: "forked from p.jsonl, which is no longer there (moved or deleted)" });
    expect(stripHead(v)).toBe("Forked from p.jsonl, which is no longer there (moved or deleted)");
  });
});
