// Pure helpers of the library UI (unit-tested in ui/test/library.test.ts).

import type { SortKey } from "../ipc";

export interface SnippetPart {
  text: string;
  hit: boolean;
}

/** Split an index snippet into plain and matched parts (matches are between « and »). */
export function snippetParts(snippet: string): SnippetPart[] {
  const out: SnippetPart[] = [];
  let rest = snippet;
  while (rest.length) {
    const open = rest.indexOf("«");
    if (open < 0) {
      out.push({ text: rest, hit: false });
      break;
    }
    if (open > 0) out.push({ text: rest.slice(0, open), hit: false });
    const close = rest.indexOf("»", open + 1);
    if (close < 0) {
      out.push({ text: rest.slice(open + 1), hit: true });
      break;
    }
    if (close > open + 1) out.push({ text: rest.slice(open + 1, close), hit: true });
    rest = rest.slice(close + 1);
  }
  return out;
}

export const DATE_FILTERS: { key: string; label: string; days: number | null }[] = [
  { key: "any", label: "Any time", days: null },
  { key: "1", label: "Last 24 hours", days: 1 },
  { key: "7", label: "Last 7 days", days: 7 },
  { key: "30", label: "Last 30 days", days: 30 },
  { key: "365", label: "Last year", days: 365 },
];

/** The `modifiedSinceMs` of a date filter key, relative to `now` (ms). */
export function sinceMs(key: string, now: number): number | null {
  const f = DATE_FILTERS.find((d) => d.key === key);
  return f && f.days !== null ? now - f.days * 86_400_000 : null;
}

/** "Indexing 25 / 500 sessions…" (the catalog), then "Indexing full text 25 / 500…", or null
 * when the index is ready. */
export function progressText(s: { synced: boolean; done: number; total: number; fullText?: boolean }): string | null {
  if (s.synced) return null;
  if (s.fullText) return `Sessions listed; indexing full text ${s.done} / ${s.total}… (search may miss the rest)`;
  return s.total ? `Indexing ${s.done} / ${s.total} sessions…` : "Indexing sessions…";
}

/** The hit count line, with a warning while the full text is not complete. */
export function hitsText(n: number, s: { synced: boolean; done: number; total: number; fullText?: boolean } | null): string {
  const base = n ? `${n} hit${n === 1 ? "" : "s"}` : "no match";
  if (!s || s.synced) return base;
  const left = s.fullText && s.total ? ` (${s.total - s.done} of ${s.total} sessions not searched yet)` : "";
  return `${base}: still indexing, results may be incomplete${left}`;
}

export function formatBytes(n: number): string {
  if (n >= 1 << 30) return `${(n / (1 << 30)).toFixed(1)} GB`;
  if (n >= 1 << 20) return `${(n / (1 << 20)).toFixed(1)} MB`;
  if (n >= 1 << 10) return `${Math.round(n / (1 << 10))} KB`;
  return `${n} B`;
}

/** What "re-done" counts, for its tooltips. */
export const FORGETTING_TITLE =
  "Re-done after compactions: files the agent read again and commands it ran again after a compaction, " +
  "having read or run them before the compaction's cut, so the summary did not carry them";

/** The picker's sort choices, in menu order, with a tooltip where the label needs one. */
export const SORTS: { key: SortKey; label: string; title?: string }[] = [
  { key: "modified", label: "Newest activity" },
  { key: "created", label: "Created" },
  { key: "name", label: "Name" },
  { key: "messages", label: "Messages" },
  { key: "tokens", label: "Context tokens" },
  { key: "forgetting", label: "Re-done after compactions", title: `${FORGETTING_TITLE}; most first` },
  { key: "size", label: "File size" },
];

/** A session card's "re-done" fact and its tooltip; null when the session has no compaction
 * (nothing to count) or its full text is not indexed yet (not counted yet). */
export function forgettingFact(s: { forgetting: number | null; forgettingCompactions: number | null }): { text: string; title: string } | null {
  const n = s.forgettingCompactions;
  if (s.forgetting === null || !n) return null;
  return {
    text: `${s.forgetting} re-done`,
    title: `${FORGETTING_TITLE}: ${s.forgetting} over ${n} compaction${n === 1 ? "" : "s"}`,
  };
}
