// Compare and the nodes picked on the graph, wired to the window: the graph's Ctrl/Cmd+click and
// Space pick nodes (ui/src/compare/picks.ts), the Entry pane's "Compare with…" waits for a second
// node, and the Compare panel (ui/src/compare/panel.ts) shows the two side by side. Escape closes
// the panel, or clears the picks.

import { $, button } from "../dom";
import * as store from "../store";
import { clearPicks, initPicks, startCompareWith, togglePicked } from "./picks";
import { closeCompare, compareOpen, initComparePanel, openCompare } from "./panel";

export interface CompareHooks {
  jumpTo(entryId: string): Promise<void>;
  /** Bring back… with these entries (ui/src/recall). */
  bringBack(ids: string[]): void;
}

/** For the graph's `onPick`. */
export const pickNode = togglePicked;
export { clearPicks, picked } from "./picks";

function onEscape(e: KeyboardEvent): void {
  if (e.key !== "Escape" || e.defaultPrevented) return;
  // A modal above (Bring back's preview, a workbench overlay, the shortcuts list, the export
  // dialog) takes it, and so does a text field (the title's rename cancels with it).
  if (document.querySelector(".wb-overlay, #recall-dialog:not([hidden]), #help-overlay:not([hidden]), #export-dialog:not([hidden])")) return;
  const a = document.activeElement as HTMLElement | null;
  if (a && (a.tagName === "INPUT" || a.tagName === "TEXTAREA" || a.isContentEditable)) return;
  if (compareOpen()) closeCompare();
  else if (!clearPicks()) return;
  e.preventDefault();
  e.stopImmediatePropagation();
}

export function initCompare(h: CompareHooks): void {
  initComparePanel({ jumpTo: h.jumpTo });
  initPicks({ compare: (a, b) => void openCompare(a, b), bringBack: h.bringBack });
  const withBtn = button(
    "Compare with…",
    () => {
      const id = store.selectedId();
      if (id) startCompareWith(id);
    },
    "",
    "Compare the selected node with another: click it next (or Ctrl+click it on the graph); Escape cancels",
  );
  withBtn.id = "btn-compare-with";
  withBtn.disabled = true;
  $("btn-continue").parentElement?.append(withBtn);
  store.subscribe(() => (withBtn.disabled = !store.session() || !store.selectedId()));
  // After the dialogs' own Escape (ui/src/views/dialogs.ts), which stops what it handles.
  document.addEventListener("keydown", onEscape, true);
}
