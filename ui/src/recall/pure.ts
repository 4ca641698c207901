// Pure helpers of Bring back into context (unit-tested in ui/test/recall.test.ts): which entries
// a Bring back takes, the max-characters field, and the sentences of the preview.

import type { RecallPreview } from "../ipc";
import { formatTokens } from "../format";

/** The entries Bring back… takes: the nodes picked on the graph, else the selected entry. */
export function recallIds(picks: readonly string[], selected: string | null): string[] {
  if (picks.length) return picks.slice();
  return selected ? [selected] : [];
}

/** The max-characters field: a whole number from 1 to 10,000,000, else null. */
export function parseMaxChars(text: string): number | null {
  const t = text.trim();
  if (!/^\d+$/.test(t)) return null;
  const n = Number(t);
  return n >= 1 && n <= 10_000_000 ? n : null;
}

/** What the message costs and where it leaves the context. */
export function costText(p: RecallPreview): string {
  return `This message: ${formatTokens(p.tokens)} tokens. The context at the leaf goes from ${formatTokens(p.contextTokens)} to ${formatTokens(p.contextTokensAfter)} tokens (compaction threshold ${formatTokens(p.threshold)}).`;
}

/** Said when the message puts the context past the threshold. */
export function crossingText(p: RecallPreview): string | null {
  if (!p.crossesThreshold) return null;
  return `With it, the context is past the compaction threshold: Pi compacts before the next prompt, and this message would be summarized with the rest. Compact first to keep it whole.`;
}

/** The confirm text: what is written, where, and that it cannot be taken back. */
export function confirmText(p: RecallPreview): string {
  const n = p.entryIds.length;
  const what = n === 1 ? "this entry's text" : `these ${n} entries' text`;
  return `Bring back appends one message with ${what} to the session file, after ${p.leafId ?? "the start"} (the leaf); Pi sends it to the model with the next prompt. It cannot be undone: session files are append-only.`;
}

/** The notice after the write. */
export function doneText(entryId: string, crosses: boolean): string {
  return `Brought back as message ${entryId}, now the leaf: Pi sends it to the model with the next prompt.${crosses ? " The context is now past the compaction threshold, so Pi compacts first." : ""}`;
}

/** The preview's list of secrets: a heading saying what happens to them, and one line each. */
export function secretLines(p: RecallPreview): { head: string; items: string[] } {
  const n = p.secrets.length;
  const what = n === 1 ? "1 secret" : `${n} secrets`;
  const head = p.secretsKept
    ? `${what} (API keys, tokens, private keys) will be brought back as they are, and sent to the model's provider:`
    : `${what} (API keys, tokens, private keys) redacted in the message; the session file keeps them:`;
  return { head, items: p.secrets.map((s) => `${s.kind} in entry ${s.entryId}, bytes ${s.start}–${s.end} of its text`) };
}
