// Escape closes the open dialog (the summarize dialog) or the session picker. Listened to in the
// capture phase, so the Entry pane's editor keeps its text when Escape was meant for a dialog
// above it. The workbench's own overlays and the export dialog close themselves.

import { $ } from "../dom";

export function escapeClosesDialog(e: KeyboardEvent): void {
  if (e.key !== "Escape" || document.querySelector(".wb-overlay")) return;
  if (!$("sum-dialog").hidden) $("sum-close").click();
  else if (!$("picker").hidden) $("picker").hidden = true;
  else return;
  e.preventDefault();
  e.stopImmediatePropagation();
}
