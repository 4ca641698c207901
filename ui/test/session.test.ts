import { describe, expect, it } from "vitest";
import { entryText } from "../src/session/copy";
import type { EntryDetail } from "../src/ipc";

const detail = (blocks: EntryDetail["blocks"], rawJson = "{}"): EntryDetail => ({
  id: "a1b2c3d4",
  parentId: null,
  entryType: "message",
  role: "assistant",
  timestamp: "2025-03-01T09:00:00.000Z",
  label: null,
  blocks,
  rawJson,
  onActivePath: true,
  isLeaf: false,
});

describe("entryText (the entry Copy button)", () => {
  it("copies the text, summary and tool-result blocks in order, leaving thinking and tool calls out", () => {
    const d = detail([
      { type: "thinking", text: "hmm", chars: 3 },
      { type: "text", text: "First **part**" },
      { type: "toolCall", name: "read", argumentsJson: "{\"path\":\"a\"}" },
      { type: "toolResult", toolName: "read", text: "file body", chars: 9, isError: false },
      { type: "text", text: "Second" },
    ]);
    expect(entryText(d)).toBe("First **part**\n\nfile body\n\nSecond");
  });
  it("copies a summary's markdown", () => {
    expect(entryText(detail([{ type: "summary", title: "Compaction", text: "## Goal\n- x" }]))).toBe("## Goal\n- x");
  });
  it("falls back to the raw JSON for an entry without text", () => {
    expect(entryText(detail([{ type: "meta", text: "model: x" }], "{\n  \"type\": \"model_change\"\n}"))).toBe("{\n  \"type\": \"model_change\"\n}");
    expect(entryText(detail([{ type: "text", text: "" }], "RAW"))).toBe("RAW");
  });
});
