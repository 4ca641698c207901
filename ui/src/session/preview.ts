// A big session's first paint: while the full open reads the whole file (seconds at a million
// entries), the graph shows the file's newest entries (src-tauri/src/commands/preview.rs) with a
// banner, and the controls that need the open session wait. The full open's graph then replaces
// it at the same leaf.

import type { SessionPreview } from "../ipc";
import { $ } from "../dom";

/** Why a control waits, as its tooltip says. */
export const PREVIEW_WAIT =
  "Available once the whole session is read: this needs every entry, and only the newest are read yet";

/** The controls that need the open session (its whole tree, or another open): disabled while a
 *  preview is drawn. Zoom, the theme and the tabs stay. */
export const PREVIEW_BLOCKED = [
  "btn-sessions",
  "btn-open-file",
  "btn-export",
  "search",
  "btn-unfold",
  "btn-continue",
  "label-input",
  "btn-label",
  "btn-clear-label",
  "btn-continue-summary",
  "btn-compact",
  "btn-compact-here",
  "btn-send",
];

/** The banner's text. It names no elapsed time: the full open runs on the window's main thread
 *  (off it, the same open took 1.4–1.8× as long), so the banner cannot tick while it reads. */
export function previewBanner(p: SessionPreview): string {
  const mib = (kib: number) => `${(kib / 1024).toLocaleString("en", { maximumFractionDigits: kib < 10 * 1024 ? 1 : 0 })} MiB`;
  const entries = p.entryCount.toLocaleString("en");
  return (
    `Reading the whole session (${mib(p.fileKib)})… ` +
    `Shown meanwhile: its newest ${entries} entries (the last ${mib(p.tailKib)}), read-only; ` +
    `Continue, navigation, compaction and search wait for the rest.`
  );
}

/** Draws the preview state (banner, controls disabled with why); returns the call that ends it
 *  and puts every control back as it was. */
export function enterPreview(p: SessionPreview): () => void {
  const saved = PREVIEW_BLOCKED.map((id) => document.getElementById(id) as HTMLButtonElement | HTMLInputElement | null)
    .filter((e): e is HTMLButtonElement | HTMLInputElement => e !== null)
    .map((e) => ({ e, disabled: e.disabled, title: e.getAttribute("title") }));
  for (const { e } of saved) {
    e.disabled = true;
    e.title = PREVIEW_WAIT;
  }
  document.body.dataset.preview = "1";
  const notice = $("notice");
  notice.hidden = false;
  notice.className = "notice info preview";
  notice.textContent = previewBanner(p);
  return () => {
    delete document.body.dataset.preview;
    if (notice.classList.contains("preview")) {
      notice.hidden = true;
      notice.classList.remove("preview");
    }
    for (const { e, disabled, title } of saved) {
      e.disabled = disabled;
      if (title === null) e.removeAttribute("title");
      else e.title = title;
    }
  };
}
