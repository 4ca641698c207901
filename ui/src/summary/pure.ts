// Pure helpers of the summary workbench (no DOM, no IPC): section bodies and headings, the
// whole text after a section edit, "add back" of a dropped item, labels, and the words of summary
// quality (scores by kind, growth, the cost of forgetting, where citations go). Tested in ui/test.

/** The part of a section the workbench needs (a subset of the generated SectionView). */
export interface SectionLike {
  index: number;
  title: string;
  name: string;
  level: number;
  role: string;
  raw: string;
  items: { text: string; marker: string; checked?: boolean | null; depth: number }[];
  turnPrefix?: boolean;
}

/** The heading line of a section, newline included ("" for the untitled lead section). */
export function headingOf(s: SectionLike): string {
  if (s.level === 0) return "";
  const nl = s.raw.indexOf("\n");
  return nl < 0 ? s.raw : s.raw.slice(0, nl + 1);
}

/** Everything after the heading line: what the section editor shows. */
export function bodyOf(s: SectionLike): string {
  return s.raw.slice(headingOf(s).length);
}

/** The trailing whitespace run of a string ("\n\n" after a section body). */
function trailingSpace(s: string): string {
  const m = /\s*$/.exec(s);
  return m ? m[0] : "";
}

/**
 * The whole summary text with section `index`'s body replaced. The edited body keeps the
 * original's trailing blank lines, so the next heading stays on a line of its own; every other
 * section and the file-list appendix are kept byte for byte.
 */
export function replaceSectionBody(sections: SectionLike[], appendixRaw: string, index: number, newBody: string): string {
  return (
    sections
      .map((s) => {
        if (s.index !== index) return s.raw;
        const old = bodyOf(s);
        let tail = trailingSpace(old);
        const isLast = s.index === sections[sections.length - 1]?.index;
        if (!tail && (!isLast || appendixRaw)) tail = "\n";
        const trimmed = newBody.replace(/\s+$/, "");
        // A heading-only section whose body was empty: the heading line may lack its newline.
        const head = headingOf(s);
        const sep = head && !head.endsWith("\n") && trimmed ? "\n" : "";
        return head + sep + trimmed + tail;
      })
      .join("") + appendixRaw
  );
}

/** The whole text of a summary from its sections and appendix (the parser's round trip). */
export function joinText(sections: SectionLike[], appendixRaw: string): string {
  return sections.map((s) => s.raw).join("") + appendixRaw;
}

const norm = (t: string) => t.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, " ").trim();

/** The section a dropped item belongs back into: same name, else same title, else same last title part. */
export function findSection(sections: SectionLike[], name: string): SectionLike | undefined {
  const n = norm(name);
  const last = norm(name.split("›").pop() ?? name);
  return (
    sections.find((s) => norm(s.name) === n) ??
    sections.find((s) => norm(s.title) === n) ??
    sections.find((s) => !s.turnPrefix && norm(s.title) === last)
  );
}

/** How an item is written back: as a checked box in a Done section, else as the section's items are. */
export function itemLine(section: SectionLike | undefined, text: string): string {
  const lines = text.split("\n");
  const cont = lines.slice(1).map((l) => `  ${l}`);
  const first = lines[0];
  if (section) {
    const sample = section.items.find((i) => i.depth === 0);
    if (section.role === "done" || sample?.marker === "checkbox") {
      const checked = section.role === "done" ? true : sample?.checked ?? false;
      return [`- [${checked ? "x" : " "}] ${first}`, ...cont].join("\n");
    }
    if (sample?.marker === "numbered") {
      const n = section.items.filter((i) => i.depth === 0).length + 1;
      return [`${n}. ${first}`, ...cont].join("\n");
    }
  }
  return [`- ${first}`, ...cont].join("\n");
}

/** A section body with `line` added as its last item (before its trailing blank lines); a
 *  placeholder "(none)" item is replaced. */
export function appendItem(body: string, line: string): string {
  const trimmed = body.replace(/\s+$/, "");
  const kept = trimmed
    .split("\n")
    .filter((l) => !/^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?\(none\)\s*$/.test(l))
    .join("\n");
  return kept ? `${kept}\n${line}\n` : `${line}\n`;
}

export interface AddBack {
  /** The section to open in the editor, or null when a new section was added (raw editor). */
  sectionIndex: number | null;
  /** The section body with the item restored (sectionIndex set), else the whole new text. */
  text: string;
}

/** "Add back": the dropped item restored in its section, ready for the editor. */
export function addBack(sections: SectionLike[], appendixRaw: string, dropped: { section: string; text: string }): AddBack {
  const target = findSection(sections, dropped.section);
  if (target) return { sectionIndex: target.index, text: appendItem(bodyOf(target), itemLine(target, dropped.text)) };
  // No such section any more: add it before the turn-prefix part and the appendix.
  const title = dropped.section.split("›").pop()?.trim() || dropped.section;
  const block = `## ${title}\n${itemLine(undefined, dropped.text)}\n`;
  const firstPrefix = sections.findIndex((s) => s.turnPrefix);
  const main = firstPrefix < 0 ? sections : sections.slice(0, firstPrefix);
  const rest = firstPrefix < 0 ? [] : sections.slice(firstPrefix);
  let head = main.map((s) => s.raw).join("");
  if (head && !head.endsWith("\n\n")) head += head.endsWith("\n") ? "\n" : "\n\n";
  const sep = rest.length || (appendixRaw && !appendixRaw.startsWith("\n")) ? "\n" : "";
  return { sectionIndex: null, text: head + block + sep + rest.map((s) => s.raw).join("") + appendixRaw };
}

/** "3 items · 2/3 done" for a card header. */
export function sectionCounts(s: SectionLike): string {
  const n = s.items.length;
  if (n === 0) return "no items";
  const boxes = s.items.filter((i) => i.marker === "checkbox");
  const base = `${n} item${n === 1 ? "" : "s"}`;
  if (!boxes.length) return base;
  return `${base} · ${boxes.filter((i) => i.checked).length}/${boxes.length} checked`;
}

/** "7/12 facts (58%)". */
export function scoreLabel(mentioned: number, total: number): string {
  if (total === 0) return "no facts in the span";
  return `${mentioned}/${total} facts (${Math.round((100 * mentioned) / total)}%)`;
}

/** The graph badges of a summary row: the drop alarm, the quality score (once the background
 *  run or the workbench computed it; its tooltip by kind when the mark is known), retention. */
export function markerBadges(
  row: { dropped?: number | null; retained?: number | null; facts?: number | null; quality?: number | null },
  score?: ScoreLike | null,
): { cls: string; text: string; title?: string }[] {
  const out: { cls: string; text: string; title?: string }[] = [];
  if (row.dropped) out.push({ cls: "b-dropped", text: `⚠ ${row.dropped} dropped` });
  if (row.quality !== null && row.quality !== undefined) {
    const title = score ? `Summary quality: probes it answers. ${kindScoreLine(score)}` : "Summary quality: the share of probes it answers";
    out.push({ cls: `b-quality ${qualityClass(row.quality)}`, text: percent(row.quality), title });
  }
  if (row.facts) out.push({ cls: "b-retention", text: `kept ${row.retained ?? 0}/${row.facts}` });
  return out;
}

// ---- summary quality --------------------------------------------------------------------------

/** The probes of one kind, and how many the summary answers. */
export interface KindScoreLike {
  probes: number;
  answered: number;
}

/** A probe score: overall (0..1, null without probes) and by kind. */
export interface ScoreLike {
  score: number | null;
  byKind: { recall: KindScoreLike; artifact: KindScoreLike; decision: KindScoreLike; continuation: KindScoreLike };
}

export const PROBE_KINDS = ["recall", "artifact", "decision", "continuation"] as const;

/** "78 %" (a 0..1 share, rounded). */
export function percent(share: number): string {
  return `${Math.round(share * 100)} %`;
}

/** The colour class of a score: good from 80 %, fair from 50 %, else poor. */
export function qualityClass(share: number): string {
  return share >= 0.8 ? "q-good" : share >= 0.5 ? "q-fair" : "q-poor";
}

/** "recall 78 % (7/9)", or "recall: no probe" for a kind the span gave nothing to ask about. */
export function kindScoreLabel(kind: string, k: KindScoreLike): string {
  if (k.probes === 0) return `${kind}: no probe`;
  return `${kind} ${percent(k.answered / k.probes)} (${k.answered}/${k.probes})`;
}

/** "recall 78 % (7/9) · artifact 86 % (6/7) · …". */
export function kindScoreLine(s: ScoreLike): string {
  return PROBE_KINDS.map((k) => kindScoreLabel(k, s.byKind[k])).join(" · ");
}

/** The overall score's label: "91 %", or why there is none. */
export function overallLabel(s: ScoreLike): string {
  return s.score === null ? "no probes" : percent(s.score);
}

/** The growth flag in words (null: none). */
export function growthFlagText(flag: string | null | undefined): string | null {
  if (flag === "notSmaller") return "not smaller than what it replaced";
  if (flag === "grew") return "grew more than 1.5× over the previous summary";
  return null;
}

/** "428 tokens for 4,465 replaced · previous summary 300". */
export function growthLine(g: { summaryTokens: number | null; replacedTokens: number | null; previousSummaryTokens: number | null }): string {
  const n = (x: number | null) => Math.round(x ?? 0).toLocaleString("en-US");
  const prev = g.previousSummaryTokens === null ? "" : ` · previous summary ${n(g.previousSummaryTokens)}`;
  return `${n(g.summaryTokens)} tokens for ${n(g.replacedTokens)} replaced${prev}`;
}

/** What the cost of forgetting looks like (the view's `ForgettingView`). */
export interface ForgettingLike {
  rereadFiles: string[];
  rerunCommands: string[];
  callsBeforeFirstEdit: number;
  edited: boolean;
  baselineCallsBeforeFirstEdit: number | null;
  windowEntries: number;
  cost: number;
}

/** A list for one line: every name up to `max`, then "and N more". */
function names(list: string[], max = 5): string {
  const shown = list.slice(0, max).join(", ");
  return list.length > max ? `${shown} and ${list.length - max} more` : shown;
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** The cost of forgetting in lines of words: what was re-read, re-run, and the tool calls before
 *  the first edit against the session start's. */
export function forgettingLines(f: ForgettingLike): string[] {
  if (f.windowEntries === 0) return ["Nothing happened after it yet."];
  const out: string[] = [];
  out.push(f.rereadFiles.length ? `${plural(f.rereadFiles.length, "file", "files")} re-read: ${names(f.rereadFiles)}` : "no file re-read");
  out.push(f.rerunCommands.length ? `${plural(f.rerunCommands.length, "command", "commands")} re-run: ${names(f.rerunCommands, 3)}` : "no command re-run");
  const calls = f.edited
    ? `${plural(f.callsBeforeFirstEdit, "tool call", "tool calls")} before the first edit`
    : `${plural(f.callsBeforeFirstEdit, "tool call", "tool calls")}, no edit yet`;
  const base = f.baselineCallsBeforeFirstEdit === null ? "the session start made no edit" : `the session start: ${f.baselineCallsBeforeFirstEdit}`;
  out.push(`${calls} (${base})`);
  return out;
}

/** The Timeline's tooltip of a compaction's forgetting mark. */
export function forgettingTip(entryId: string, f: ForgettingLike): string {
  return [`After compaction ${entryId}, the agent did again what the summary did not carry:`, ...forgettingLines(f)].join("\n");
}

/** An item of the summary with its sources (the view's `CitedView`). */
export interface CitedLike {
  section: string;
  text: string;
  sources: { entryId: string; score: number | null }[];
  unsupported: boolean;
}

/** Where each citation goes in the cards: `items` by "sectionIndex:itemIndex", and the free-text
 *  lines of each section (by section index) in their order. Matched by section name and the
 *  item's text, each item once, in order (two equal items take the citations in turn). */
export function placeCitations<C extends CitedLike>(
  sections: { index: number; name: string; items: { text: string }[] }[],
  cites: C[],
): { items: Map<string, C>; lines: Map<number, C[]> } {
  const items = new Map<string, C>();
  const lines = new Map<number, C[]>();
  const byName = new Map<string, { index: number; free: Map<string, number[]> }>();
  for (const s of sections) {
    if (byName.has(s.name)) continue;
    const free = new Map<string, number[]>();
    s.items.forEach((it, i) => {
      const t = it.text.trim();
      free.set(t, [...(free.get(t) ?? []), i]);
    });
    byName.set(s.name, { index: s.index, free });
  }
  for (const c of cites) {
    const s = byName.get(c.section);
    if (!s) continue;
    const queue = s.free.get(c.text.trim());
    const i = queue?.shift();
    if (i !== undefined) items.set(`${s.index}:${i}`, c);
    else lines.set(s.index, [...(lines.get(s.index) ?? []), c]);
  }
  return { items, lines };
}

/** A source's label: "d081ee73 1.00". */
export function sourceLabel(s: { entryId: string; score: number | null }): string {
  return s.score === null ? s.entryId : `${s.entryId} ${s.score.toFixed(2)}`;
}

/** Forgetting marks of the Timeline: the compactions of the charted path (their positions, and
 *  the id at a position) whose cost of forgetting is above 0, with their tooltip. */
export function forgettingMarks(
  positions: number[],
  idAt: (pos: number) => string,
  forgettingOf: (entryId: string) => ForgettingLike | null | undefined,
): { pos: number; entryId: string; cost: number; tip: string }[] {
  const out: { pos: number; entryId: string; cost: number; tip: string }[] = [];
  for (const pos of positions) {
    const id = idAt(pos);
    const f = id ? forgettingOf(id) : null;
    if (f && f.cost > 0) out.push({ pos, entryId: id, cost: f.cost, tip: forgettingTip(id, f) });
  }
  return out;
}

/** Counts of a section diff for its header: "+2 −1 ~1 =3". */
export function diffCounts(d: { added: string[]; removed: string[]; unchanged: string[]; reworded: unknown[] }): string {
  const parts: string[] = [];
  if (d.added.length) parts.push(`+${d.added.length}`);
  if (d.removed.length) parts.push(`−${d.removed.length}`);
  if (d.reworded.length) parts.push(`~${d.reworded.length}`);
  parts.push(`=${d.unchanged.length}`);
  return parts.join(" ");
}

/** True when a section diff has anything to show besides unchanged items. */
export function sectionChanged(d: { added: string[]; removed: string[]; reworded: unknown[]; textChanged: boolean }): boolean {
  return d.added.length > 0 || d.removed.length > 0 || d.reworded.length > 0 || d.textChanged;
}

/** Human name of an author kind. */
export function authorLabel(author: string, detail: string): string {
  // Pi records no author: Arbor infers it from the session's model at that point, and says so.
  if (author === "pi") return `Pi, probably with ${detail} (inferred)`;
  if (author === "unknown") return "Pi or another tool (not recorded)";
  const names: Record<string, string> = { model: "model", offline: "offline summarizer", hook: "hook", userEdit: "edited by the user" };
  const n = names[author] ?? author;
  return detail && author !== "offline" ? `${n} (${detail})` : n;
}

/** A placeholder item ("(none)", "none", "n/a") that moving between sections says nothing about. */
export function isPlaceholder(text: string): boolean {
  return /^\s*\(?\s*(none|n\/a|nothing( yet)?)\s*\)?\.?\s*$/i.test(text);
}

/** A section role's CSS class (the colour bar of a card, in the workbench and the review). */
export const ROLE_CLASS: Record<string, string> = {
  goal: "r-goal",
  constraints: "r-constraints",
  done: "r-done",
  inProgress: "r-progress",
  blocked: "r-blocked",
  decisions: "r-decisions",
  nextSteps: "r-next",
  criticalContext: "r-critical",
};

/** Judge mode's progress line. */
export function judgeProgressText(done: number, total: number): string {
  return total ? `Judging: ${done} of ${total} probes graded…` : "Judging: asking the model…";
}

/** The mark of a judge's verdict: correct ✓, partial ½, wrong or unparseable ✗. */
export function judgeVerdictMark(verdict: string): string {
  return verdict === "correct" ? "✓" : verdict === "partial" ? "½" : "✗";
}
