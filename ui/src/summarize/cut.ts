// "Compact up to here": the words of its preview (what the summary would stand for, what stays,
// the context after) and of a refusal. Pure; the dialog that shows them is ./panel.ts.

import type { CompactHerePreview, CutPlan } from "../ipc";

const n = (x: number) => x.toLocaleString("en-US");
const plural = (k: number, one: string, many = `${one}s`) => `${n(k)} ${k === 1 ? one : many}`;

/** The preview's lines for a valid cut: summarized, kept, after (and notes when they apply). */
export function cutPlanLines(p: CutPlan, entryId: string): string[] {
  const lines = [
    `Summarized: ${plural(p.summarizedMessages, "message")}, about ${n(p.summarizedTokens)} tokens${p.updatesPreviousSummary ? " (the previous summary is updated)" : ""}.`,
    `Kept as they are: ${plural(p.keptEntries, "entry", "entries")} from ${entryId} to the leaf, about ${n(p.keptTokens)} tokens.`,
    `Context after: the summary, then ${plural(p.messagesAfter - 1, "kept message")} (about ${n(p.keptTokens)} tokens plus the summary; ${n(p.tokensBefore)} now).`,
  ];
  if (p.isSplitTurn) lines.push(`${entryId} is inside a turn: the turn's start is summarized on its own, as Pi does.`);
  return lines;
}

/** What the dialog shows for a preview: its lines, or the refusal with the points to pick instead. */
export function cutPreviewView(p: CompactHerePreview): { ok: boolean; lines: string[]; nearest: { entryId: string; label: string }[] } {
  if (p.plan) return { ok: true, lines: cutPlanLines(p.plan, p.entryId), nearest: [] };
  const r = p.refusal;
  const nearest = (r?.nearest ?? []).map((c) => ({ entryId: c.entryId, label: `${c.entryId} (${c.kind}: ${c.title || "…"})` }));
  const lines = [`Cannot compact up to ${p.entryId}: ${r?.message ?? "no plan"}. Nothing was written.`];
  lines.push(nearest.length ? "Valid points nearby (click one to select it):" : "This path has no valid point to keep from.");
  return { ok: false, lines, nearest };
}
