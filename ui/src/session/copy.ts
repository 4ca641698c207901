// Copy buttons: the entry's text and a summary's markdown go to the system clipboard through
// Rust (tauri-plugin-clipboard-manager); the webview itself has no clipboard permission.

import { api, call } from "../ipc";
import type { EntryDetail } from "../ipc";

export interface CopyDeps {
  notify(text: string, kind?: "info" | "error"): void;
  report(e: unknown): void;
}

/** The text of an entry as a reader would copy it: its text, summary and tool-result blocks in
 * order (thinking, tool calls and images left out), or the raw JSON when it has none. */
export function entryText(d: EntryDetail): string {
  const parts: string[] = [];
  for (const b of d.blocks) {
    if (b.type === "text" || b.type === "summary" || b.type === "toolResult") {
      if (b.text) parts.push(b.text);
    }
  }
  return parts.length ? parts.join("\n\n") : d.rawJson;
}

export async function copyText(text: string, what: string, deps: CopyDeps): Promise<void> {
  try {
    const n = await call(api.copyText(text));
    deps.notify(`Copied ${what} to the clipboard (${n} characters).`);
  } catch (e) {
    deps.report(e);
  }
}

/** A Copy button for the shown entry, in the detail's head row. */
export function addEntryCopy(host: HTMLElement, d: EntryDetail, deps: CopyDeps): void {
  const head = host.querySelector(".detail-head") ?? host;
  const b = document.createElement("button");
  b.type = "button";
  b.id = "btn-copy-entry";
  b.className = "copy-btn";
  b.textContent = "Copy";
  b.title = "Copy this entry's text to the clipboard";
  b.addEventListener("click", () => void copyText(entryText(d), "the entry's text", deps));
  head.appendChild(b);
}
