import { describe, expect, it } from "vitest";
import { cutPlanLines, cutPreviewView } from "../src/summarize/cut";
import type { CompactHerePreview, CutPlan } from "../src/ipc";

const plan: CutPlan = {
  summarizedMessages: 12,
  summarizedTokens: 8400,
  keptEntries: 7,
  keptTokens: 2100,
  tokensBefore: 10600,
  messagesAfter: 6,
  isSplitTurn: false,
  updatesPreviousSummary: false,
};

describe("Compact up to here: the preview's words", () => {
  it("says what is summarized, what stays and the context after", () => {
    const l = cutPlanLines(plan, "e5");
    expect(l).toEqual([
      "Summarized: 12 messages, about 8,400 tokens.",
      "Kept as they are: 7 entries from e5 to the leaf, about 2,100 tokens.",
      "Context after: the summary, then 5 kept messages (about 2,100 tokens plus the summary; 10,600 now).",
    ]);
  });

  it("says when a previous summary is updated and when a turn is split, in the singular where it fits", () => {
    const l = cutPlanLines({ ...plan, summarizedMessages: 1, keptEntries: 1, messagesAfter: 2, isSplitTurn: true, updatesPreviousSummary: true }, "a9");
    expect(l[0]).toBe("Summarized: 1 message, about 8,400 tokens (the previous summary is updated).");
    expect(l[1]).toContain("1 entry from a9");
    expect(l[2]).toContain("then 1 kept message (");
    expect(l[3]).toContain("a9 is inside a turn");
  });

  it("shows a refusal with the nearest valid points to pick, and no plan", () => {
    const p: CompactHerePreview = {
      entryId: "t3",
      leafId: "z9",
      plan: null,
      refusal: {
        message: "it is a tool result (it must stay with its tool call)",
        nearest: [
          { entryId: "u2", kind: "user", title: "Write the parser" },
          { entryId: "a4", kind: "assistant", title: "" },
        ],
      },
    };
    const v = cutPreviewView(p);
    expect(v.ok).toBe(false);
    expect(v.lines[0]).toBe("Cannot compact up to t3: it is a tool result (it must stay with its tool call). Nothing was written.");
    expect(v.nearest).toEqual([
      { entryId: "u2", label: "u2 (user: Write the parser)" },
      { entryId: "a4", label: "a4 (assistant: …)" },
    ]);
    const none = cutPreviewView({ ...p, refusal: { message: "it is a label entry, not a message", nearest: [] } });
    expect(none.lines[1]).toBe("This path has no valid point to keep from.");
    expect(cutPreviewView({ ...p, plan, refusal: null }).ok).toBe(true);
  });
});
