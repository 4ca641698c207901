// Pure helpers of the review dialog (no DOM, no IPC): the countdown, the alarm and retention
// lines, and a section edit applied to the text being reviewed. Tested in ui/test.

import { bodyOf, replaceSectionBody } from "../summary/pure";
import type { SectionLike } from "../summary/pure";

/** "Pi waits 4:59 more, then writes its own draft", or that the limit passed. */
export function countdownText(msLeft: number): string {
  if (msLeft <= 0) return "Pi's time limit has passed";
  const s = Math.ceil(msLeft / 1000);
  const m = Math.floor(s / 60);
  const rest = String(s % 60).padStart(2, "0");
  return `Pi waits ${m}:${rest} more, then writes its own draft`;
}

export function dropAlarmText(dropped: number, previousId: string | null): string {
  if (previousId === null) return "No earlier compaction on this path: nothing to lose against.";
  if (dropped === 0) return `Carries every item of the previous summary (${previousId}) that must carry over.`;
  return `⚠ ${dropped} item${dropped === 1 ? "" : "s"} of the previous summary (${previousId}) ${dropped === 1 ? "is" : "are"} gone from this draft:`;
}

export function retentionText(mentioned: number, total: number): string {
  if (total === 0) return "The span has no paths, commands, errors or constraints to check.";
  return `Mentions ${mentioned} of ${total} facts of the span (${Math.round((100 * mentioned) / total)} %); the ones it does not:`;
}

/**
 * Section `index`'s body replaced in the sections being edited: the new text, and the sections
 * with that section's raw text updated (so that a second section edit builds on the first).
 * `text` is the whole current text; what follows the sections is the file-list appendix.
 */
export function editSection(sections: SectionLike[], text: string, index: number, body: string): { text: string; sections: SectionLike[] } {
  const rawLen = sections.reduce((n, s) => n + s.raw.length, 0);
  const appendix = text.slice(rawLen);
  const next = replaceSectionBody(sections, appendix, index, body);
  const before = sections.filter((s) => s.index < index).reduce((n, s) => n + s.raw.length, 0);
  const after = sections.filter((s) => s.index > index).reduce((n, s) => n + s.raw.length, 0) + appendix.length;
  const raw = next.slice(before, next.length - after);
  return { text: next, sections: sections.map((s) => (s.index === index ? { ...s, raw } : s)) };
}

export { bodyOf };
