// The selected entry and what is drawn of it: the Entry pane's detail (or a summary's
// workbench), the window of the session's model there, the Context tab and the timeline's marker.

import { api, call } from "../ipc";
import type { ContextView, Selection } from "../ipc";
import { $ } from "../dom";
import { graph } from "../graph/shared";
import { notify, report } from "../notice";
import { renderDetail, renderDetailHead } from "../render/detail";
import * as store from "../store";
import { hideWorkbench, showWorkbench } from "../summary/workbench";
import type { WorkbenchDeps } from "../summary/workbench";
import { timelineSelected } from "../timeline";
import { budgetArgs, budgetsFromForm, preview } from "../views/budgets";
import { renderContext } from "../views/context";
import { applyWindow } from "../views/window";
import { addEntryCopy } from "./copy";
import { showSession } from "./header";

/** The entry the detail panel shows. */
let shownDetail: Selection["detail"] | null = null;

/** Marks a finished interaction on <body> (`data-select-done`, `data-continue-done`: the entry
 * and a sequence number), for the real-window tests and benchmarks. */
let doneSeq = 0;
export function markDone(what: "select" | "continue", entryId: string): void {
  document.body.dataset[`${what}Done`] = `${entryId}#${++doneSeq}`;
}

/** Select `entryId`: detail, the model's window and the context view, drawn in one round trip
 * (`data-select-done`). A summary's workbench fills in after; `waitForWorkbench: false` returns
 * without waiting for it. */
export async function select(entryId: string, waitForWorkbench = true): Promise<void> {
  store.setSelectedId(entryId);
  try {
    // One round trip: detail, the model's window at this node and the context view with it.
    const sel = await call(api.selectEntry(entryId, budgetsFromForm()));
    if (store.selectedId() !== entryId) return; // a newer click won
    await showSelection(sel, waitForWorkbench);
  } catch (e) {
    report(e);
  }
}

/** Draws a selection (a click's, or the new leaf's after Continue, which does not wait for a
 * summary's workbench: its own mark covers graph, detail and preview only) and marks it done. */
export async function showSelection(sel: Selection, waitForWorkbench: boolean): Promise<void> {
  const entryId = sel.detail.id;
  store.setSelectedId(entryId);
  const d = sel.detail;
  // The same entry drawn again (Continue from the selected node): only its head changes (it is
  // the leaf now), so the body, and the page layout of it, are kept. A summary is drawn anew, as
  // its workbench replaces part of the body.
  const head = $("detail").querySelector(".detail-head");
  const summary = d.entryType === "compaction" || d.entryType === "branch_summary";
  if (head && !summary && shownDetail?.id === d.id && shownDetail.rawJson === d.rawJson) head.replaceWith(renderDetailHead(d));
  else $("detail").replaceChildren(renderDetail(d));
  shownDetail = d;
  addEntryCopy($("detail"), d, { notify, report });
  $("detail").dataset.entryId = d.id;
  $("detail").dataset.parentId = d.parentId ?? "";
  ($("label-input") as HTMLInputElement).value = d.label ?? "";
  for (const id of ["btn-continue", "btn-label", "btn-clear-label"]) ($(id) as HTMLButtonElement).disabled = false;
  // The window of the session's model at this node (ui/src/views/window.ts).
  if (applyWindow(sel.window, entryId)) void preview().catch(report);
  showContext(sel.context);
  timelineSelected(entryId);
  // Graph, detail and context are up to date; a summary's workbench fills in after.
  markDone("select", entryId);
  if (summary) {
    const filling = showWorkbench($("detail"), d.id, workbenchDeps).catch(report);
    if (waitForWorkbench) await filling;
  } else hideWorkbench();
}

/** Bring back…, set by main.ts (the recall dialog selects entries itself, so it is not imported
 * here). */
let bringBack: (entryIds: string[]) => void = () => {};
export function setBringBack(f: (entryIds: string[]) => void): void {
  bringBack = f;
}

// The summary workbench (ui/src/summary): reveals entries, and after an edit or revert shows
// the appended entry as the new leaf.
const workbenchDeps: WorkbenchDeps = {
  jumpTo: (id) => jumpTo(id).catch(report),
  afterWrite: async (s, entryId, note) => {
    showSession(s);
    if (s.leafRow !== null) graph().setCursor(s.leafRow, false);
    await select(entryId);
    notify(note);
    await preview();
  },
  notify,
  report,
  bringBack: (ids) => bringBack(ids),
};

/** Reveals an entry on the graph (unfolding the run that hides it), scrolls to it and selects it. */
export async function jumpTo(entryId: string): Promise<void> {
  const g = graph();
  const row = await call(api.revealEntry(entryId));
  const s = await call(api.currentSession());
  if (s.totalRows !== g.totalRows) g.reset(s.totalRows, s.lanes);
  g.setCursor(row, false);
  await select(entryId);
}

// ---- the Context tab -------------------------------------------------------------------------

/** What the hidden Context tab shows when it is shown: a view in hand (a selection's), "fetch"
 * (the budgets changed since), or nothing new. A hidden panel is not drawn: its list of up to
 * hundreds of messages cost a click and a Continue 2-25 ms on the 100k-entry session. */
let contextPending: ContextView | "fetch" | null = null;

function showContext(v: ContextView): void {
  if ($("panel-context").hidden) contextPending = v;
  else {
    contextPending = null;
    $("context").replaceChildren(renderContext(v, (id) => void jumpTo(id)));
  }
}

/** The context view again after a budget change; while its tab is hidden only noted, and asked
 * for when the tab is shown (a slider's every step asked for it). */
export async function refreshContext(): Promise<void> {
  if (!store.session()) return;
  if ($("panel-context").hidden) contextPending = "fetch";
  else showContext(await call(api.getContextView(store.selectedId(), budgetArgs())));
}

/** The Context tab was shown: draws what changed while it was hidden. */
export function contextTabShown(): void {
  if (!contextPending) return;
  if (contextPending === "fetch") void refreshContext().catch(report);
  else showContext(contextPending);
}
