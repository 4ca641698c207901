// The Entry pane's actions on the selected entry: Continue from here (Pi's /tree navigation
// without a summary), and its label.

import { api, call } from "../ipc";
import { $ } from "../dom";
import { graph } from "../graph/shared";
import { notify, report } from "../notice";
import * as store from "../store";
import { holdWorkbenchDuring } from "../summary/workbench";
import { budgetArgs, startPreview } from "../views/budgets";
import { showSession } from "./header";
import { markDone, select, showSelection } from "./selection";

export async function continueHere(): Promise<void> {
  if (!store.selectedId()) return;
  await holdWorkbenchDuring(moveHere());
}

async function moveHere(): Promise<void> {
  try {
    // One round trip: the moved leaf, the new leaf's selection, the budget preview and the new
    // layout's rows the graph's view draws at the new leaf, so that the frame after draws graph,
    // detail and preview at once.
    const from = store.selectedId()!;
    const drawPreview = startPreview();
    const c = await call(api.continueFromEntry(from, budgetArgs(), graph().viewRequest()));
    const nav = c.navigation;
    showSession(nav.session, c.rows);
    if (nav.composerText !== null) ($("composer") as HTMLTextAreaElement).value = nav.composerText;
    notify(nav.note);
    drawPreview(c.preview);
    // A click meanwhile keeps its own selection.
    if (c.selection && store.selectedId() === from) await showSelection(c.selection, false);
    // Scrolling to the leaf reads the page's layout: after every change above, so that the
    // page is laid out once for all of them.
    if (nav.session.leafId && nav.session.leafRow !== null) graph().setCursor(nav.session.leafRow, false);
    markDone("continue", store.selectedId() ?? "");
  } catch (e) {
    report(e);
  }
}

export async function setLabel(clear: boolean): Promise<void> {
  const id = store.selectedId();
  if (!id) return;
  const text = ($("label-input") as HTMLInputElement).value;
  try {
    const s = await call(api.setEntryLabel(id, clear ? null : text));
    showSession(s);
    notify(clear ? "Label cleared (a label entry was appended)." : "Label set (a label entry was appended, as Pi does).");
    await select(store.selectedId()!);
  } catch (e) {
    report(e);
  }
}
