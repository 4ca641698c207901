// Pure helpers of Compare and of the nodes picked on the graph (unit-tested in
// ui/test/compare.test.ts): which nodes a Ctrl/Cmd+click or Space picks, the pair a comparison
// takes, and the texts and groups the Compare panel draws.

import type { CommandOutcome, ComparisonView, FileLink, SideView } from "../ipc";
import { CATEGORY_LABELS, formatTokens } from "../format";

/** A Ctrl/Cmd+click (or Space) on `id`: takes it out of the picks, or adds it. The first pick
 * also takes the selected entry, so "select a node, Ctrl+click another" picks the two. */
export function togglePick(picks: readonly string[], id: string, selected: string | null): string[] {
  const out = picks.length === 0 && selected && selected !== id ? [selected] : picks.slice();
  const at = out.indexOf(id);
  if (at >= 0) out.splice(at, 1);
  else out.push(id);
  return out;
}

/** The two nodes a comparison takes, A then B in the order they were picked; null unless exactly two. */
export function comparePair(picks: readonly string[]): [string, string] | null {
  return picks.length === 2 && picks[0] !== picks[1] ? [picks[0], picks[1]] : null;
}

/** What the bar under the graph says of the picks. */
export function picksText(n: number): string {
  if (n === 0) return "";
  if (n === 1) return "1 node picked: Ctrl+click (or Space on) another to compare the two";
  return `${n} nodes picked`;
}

export function outcomeText(o: CommandOutcome): string {
  return o === "ok" ? "ok" : o === "error" ? "failed" : "no result";
}

export function costText(cost: number | null): string {
  return cost !== null && cost > 0 ? `$${cost.toFixed(cost < 0.01 ? 4 : 2)}` : "—";
}

export function scoreText(score: number | null): string {
  return score === null ? "no score" : `kept ${Math.round(score * 100)} %`;
}

export function summaryKindText(kind: string): string {
  return kind === "branch_summary" ? "branch summary" : kind;
}

/** The context at a side's node: the total and each category (largest first). */
export function contextText(s: SideView): string {
  const cats = [...s.tokens].sort((a, b) => b.tokens - a.tokens).map((c) => `${CATEGORY_LABELS[c.category] ?? c.category} ${formatTokens(c.tokens)}`);
  return `${formatTokens(s.contextTokens)} tokens${cats.length ? ` (${cats.join(", ")})` : ""}`;
}

export interface FileGroup {
  /** data-group of the list, for the tests and styles: only-a, only-b, both. */
  key: "only-a" | "only-b" | "both";
  title: string;
  lists: { what: string; files: FileLink[] }[];
}

/** The files each side touched apart: only A, only B, both (and those both modified
 * differently); empty lists are left out, a group with none says so. */
export function fileGroups(c: ComparisonView): FileGroup[] {
  const lists = (xs: [string, FileLink[]][]) => xs.filter(([, f]) => f.length).map(([what, files]) => ({ what, files }));
  return [
    { key: "only-a", title: "Only A", lists: lists([["modified", c.onlyA.modifiedFiles], ["read", c.onlyA.readFiles]]) },
    { key: "only-b", title: "Only B", lists: lists([["modified", c.onlyB.modifiedFiles], ["read", c.onlyB.readFiles]]) },
    {
      key: "both",
      title: "Both",
      lists: lists([["modified differently", c.both.modifiedDifferently], ["modified", c.both.modifiedFiles], ["read", c.both.readFiles]]),
    },
  ];
}
