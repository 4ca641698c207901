// Small pure formatting helpers (unit-tested).

export function formatTokens(n: number): string {
  if (n >= 1_000_000) return `${(n / 1_000_000).toFixed(n % 1_000_000 === 0 ? 0 : 1)}M`;
  if (n >= 10_000) return `${Math.round(n / 1000)}k`;
  if (n >= 1000) return `${(n / 1000).toFixed(1)}k`;
  return String(n);
}

export function formatChars(n: number): string {
  return n === 1 ? "1 char" : `${formatTokens(n)} chars`;
}

export function formatTime(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toISOString().replace("T", " ").slice(0, 16);
}

export const CATEGORY_LABELS: Record<string, string> = {
  summary: "Summary",
  user: "User",
  assistantText: "Assistant text",
  thinking: "Thinking",
  toolCalls: "Tool calls",
  toolResults: "Tool results",
  other: "Other",
};

export interface Segment {
  key: string;
  tokens: number;
  /** Percent of the bar's scale. */
  width: number;
}

/** Stacked bar geometry: the scale is the larger of the window and the total. */
export function stackSegments(
  cats: { category: string; tokens: number }[],
  contextWindow: number,
  threshold: number,
): { segments: Segment[]; thresholdPct: number; scale: number } {
  const total = cats.reduce((a, c) => a + c.tokens, 0);
  const scale = Math.max(contextWindow, total, 1);
  const segments = cats
    .filter((c) => c.tokens > 0)
    .map((c) => ({ key: c.category, tokens: c.tokens, width: (100 * c.tokens) / scale }));
  return { segments, thresholdPct: (100 * threshold) / scale, scale };
}
