// The notice line under the top bar: what an action did, or why it failed.

import { errorText } from "./ipc";
import { $ } from "./dom";

/**
 * `aside` is news nobody asked for (the open file grew under Pi). It follows a notice shown in
 * the last few seconds instead of hiding it, since that notice (Pi's time limit passed, Pi
 * compacted under the watch policy) usually explains the very change the aside reports; a later
 * aside replaces the earlier one, never that notice.
 */
export type NoticeKind = "info" | "error" | "aside";

const NOTICE_STAYS_MS = 15_000;
let lead: { text: string; kind: "info" | "error"; at: number } | null = null;

export function notify(text: string, kind: NoticeKind = "info"): void {
  const n = $("notice");
  const now = Date.now();
  let shown: "info" | "error" = kind === "error" ? "error" : "info";
  let line = text;
  if (kind !== "aside") lead = { text, kind: shown, at: now };
  else if (lead && !n.hidden && now - lead.at < NOTICE_STAYS_MS && n.textContent?.startsWith(lead.text)) {
    shown = lead.kind;
    line = `${lead.text} ${text}`;
  } else lead = null;
  n.hidden = false;
  n.className = `notice ${shown}`;
  n.textContent = line;
}

/** A failure in the notice line: a command's message and hint, or the error as text. */
export function report(e: unknown): void {
  notify(errorText(e), "error");
}
