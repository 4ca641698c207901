// The notice line under the top bar: what an action did, or why it failed.

import { errorText } from "./ipc";
import { $ } from "./dom";

export function notify(text: string, kind: "info" | "error" = "info"): void {
  const n = $("notice");
  n.hidden = false;
  n.className = `notice ${kind}`;
  n.textContent = text;
}

/** A failure in the notice line: a command's message and hint, or the error as text. */
export function report(e: unknown): void {
  notify(errorText(e), "error");
}
