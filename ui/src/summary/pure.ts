// Pure helpers of the summary workbench (no DOM, no IPC): section bodies and headings, the
// whole text after a section edit, "add back" of a dropped item, labels. Tested in ui/test.

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

/** The graph badge texts of a summary row. */
export function markerBadges(row: { dropped?: number | null; retained?: number | null; facts?: number | null }): { cls: string; text: string }[] {
  const out: { cls: string; text: string }[] = [];
  if (row.dropped) out.push({ cls: "b-dropped", text: `⚠ ${row.dropped} dropped` });
  if (row.facts) out.push({ cls: "b-retention", text: `kept ${row.retained ?? 0}/${row.facts}` });
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
