// App shell: wires the graph, the side panels, the picker and the composer to the commands.

import { api, call, CommandError } from "./ipc";
import type { BudgetArgs, Budgets, CompactionPreview_Serialize as CompactionPreview, ContextView_Serialize as ContextView, GraphRow, OpenedSession, Selection_Serialize as Selection, SettingsScope } from "./ipc";
import { GraphView } from "./graph/view";
import { renderDetail, renderDetailHead } from "./render/detail";
import { renderContext } from "./views/context";
import { formatTokens } from "./format";
import { showPicker as showLibraryPicker, startLibrary } from "./library";
import { initSummarize } from "./summarize/panel";
import { hideWorkbench, showWorkbench } from "./summary/workbench";
import type { WorkbenchDeps } from "./summary/workbench";
import { initTheme } from "./theme";
import { initShortcuts } from "./shortcuts";
import { applyWindow, currentWindow, initWindow } from "./views/window";
import { startLaunch } from "./session/launch";
import { initTitleEdit } from "./session/title";
import { addEntryCopy } from "./session/copy";
import { initTimeline, timelineSelected } from "./timeline";
import { initExport, openExport } from "./export/dialog";

initTheme(document.getElementById("theme-select") as HTMLSelectElement | null);

const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;

let session: OpenedSession | null = null;
let selectedId: string | null = null;
/** The entry the detail panel shows. */
let shownDetail: Selection["detail"] | null = null;
let searchHits: { entryId: string; row: number }[] = [];
let searchPos = 0;

const graph = new GraphView($("graph"), {
  onSelect: (row) => void select(row.entryId),
  onActivate: (row) => void expandFold(row),
  onParent: () => {
    const parent = $("detail").dataset.parentId;
    if (parent) void jumpTo(parent).catch(report);
  },
  onLeaf: () => {
    if (session?.leafId) void jumpTo(session.leafId).catch(report);
  },
});

function notify(text: string, kind: "info" | "error" = "info"): void {
  const n = $("notice");
  n.hidden = false;
  n.className = `notice ${kind}`;
  n.textContent = text;
}

function report(e: unknown): void {
  if (e instanceof CommandError) notify(`${e.ipc.message}. ${e.ipc.hint}`, "error");
  else notify(String(e), "error");
}

function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

// ---- session lifecycle -------------------------------------------------------------------

function showSession(s: OpenedSession): void {
  session = s;
  $("session-title").textContent = `${s.name ?? "(unnamed session)"}${s.isDemo ? " · demo" : ""}`;
  $("session-title").title = s.path;
  $("status-leaf").textContent = s.leafId ?? "(none)";
  $("status-info").textContent = `${s.entryCount} entries · ${s.totalRows} rows · ${s.lanes} lanes${s.diagnostics.length ? ` · ${s.diagnostics.length} skipped lines` : ""}`;
  graph.reset(s.totalRows, s.lanes);
}

/** Opens a session (or the demo); false (with the error shown) when it could not be opened. */
async function openPath(path: string | null, demo = false): Promise<boolean> {
  try {
    const s = await call(demo || path === null ? api.openDemoSession() : api.openSession(path));
    $("picker").hidden = true;
    showSession(s);
    if (s.readOnly) readOnlyBanner(s.readOnly);
    else if (s.isDemo) notify("This is Arbor's demo session (no Pi sessions were found, or you chose it). Labels you set go to a copy in Arbor's data folder.");
    else $("notice").hidden = true;
    if (s.leafRow !== null) graph.showRowNow(s.leafRow);
    if (s.leafId) await select(s.leafId);
    await loadBudgets();
    return true;
  } catch (e) {
    report(e);
    return false;
  }
}

/** The read-only banner; a version 1/2 session gets the "Save as v3 copy" button it mentions. */
function readOnlyBanner(why: string): void {
  notify(`Read-only: ${why}`, "error");
  if (!why.includes("Save as v3 copy")) return;
  const b = el("button", "notice-action", "Save as v3 copy");
  b.id = "btn-save-v3";
  b.type = "button";
  b.title = "Write a version 3 copy beside this file (this file is not changed) and open the copy";
  b.addEventListener("click", () => void saveV3Copy());
  $("notice").appendChild(b);
}

async function saveV3Copy(): Promise<void> {
  try {
    const s = await call(api.saveV3Copy());
    await openPath(s.path);
    notify(`Saved a version 3 copy as ${s.path}; the original file was not changed.`);
  } catch (e) {
    report(e);
  }
}

async function showPicker(): Promise<void> {
  // The picker reads from the session index (ui/src/library).
  await showLibraryPicker();
}

// ---- selection, detail, context -------------------------------------------------------------

/** Marks a finished interaction on <body> (`data-select-done`, `data-continue-done`: the entry
 * and a sequence number), for the real-window tests and benchmarks. */
let doneSeq = 0;
function markDone(what: "select" | "continue", entryId: string): void {
  document.body.dataset[`${what}Done`] = `${entryId}#${++doneSeq}`;
}

/** Select `entryId`: detail, the model's window and the context view, drawn in one round trip
 * (`data-select-done`). A summary's workbench fills in after; `waitForWorkbench: false` returns
 * without waiting for it. */
async function select(entryId: string, waitForWorkbench = true): Promise<void> {
  selectedId = entryId;
  try {
    // One round trip: detail, the model's window at this node and the context view with it.
    const sel = await call(api.selectEntry(entryId, budgetsFromForm()));
    if (selectedId !== entryId) return; // a newer click won
    await showSelection(sel, waitForWorkbench);
  } catch (e) {
    report(e);
  }
}

/** Draws a selection (a click's, or the new leaf's after Continue, which does not wait for a
 * summary's workbench: its own mark covers graph, detail and preview only) and marks it done. */
async function showSelection(sel: Selection, waitForWorkbench: boolean): Promise<void> {
  const entryId = sel.detail.id;
  selectedId = entryId;
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

// The summary workbench (ui/src/summary): reveals entries, and after an edit or revert shows
// the appended entry as the new leaf.
const workbenchDeps: WorkbenchDeps = {
  jumpTo: (id) => jumpTo(id).catch(report),
  afterWrite: async (s, entryId, note) => {
    showSession(s);
    if (s.leafRow !== null) graph.setCursor(s.leafRow, false);
    await select(entryId);
    notify(note);
    await preview();
  },
  notify,
  report,
};

/** The context view again after a budget change; while its tab is hidden only noted, and asked
 * for when the tab is shown (a slider's every step asked for it). */
async function refreshContext(): Promise<void> {
  if (!session) return;
  if ($("panel-context").hidden) contextPending = "fetch";
  else showContext(await call(api.getContextView(selectedId, budgetArgs())));
}

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

async function jumpTo(entryId: string): Promise<void> {
  const row = await call(api.revealEntry(entryId));
  const s = await call(api.currentSession());
  if (s.totalRows !== graph.totalRows) graph.reset(s.totalRows, s.lanes);
  graph.setCursor(row, false);
  await select(entryId);
}

async function expandFold(row: GraphRow): Promise<void> {
  try {
    const total = await call(api.toggleGraphFold(row.entryId));
    graph.reset(total, graph.lanes);
  } catch (e) {
    report(e);
  }
}

async function continueHere(): Promise<void> {
  if (!selectedId) return;
  try {
    // One round trip: the moved leaf, the new leaf's selection and the budget preview.
    const from = selectedId;
    const seq = ++previewSeq;
    const c = await call(api.continueFromEntry(from, budgetArgs()));
    const nav = c.navigation;
    showSession(nav.session);
    if (nav.composerText !== null) ($("composer") as HTMLTextAreaElement).value = nav.composerText;
    notify(nav.note);
    if (seq === previewSeq) showPreview(c.preview);
    // A click meanwhile keeps its own selection.
    if (c.selection && selectedId === from) await showSelection(c.selection, false);
    // Scrolling to the leaf reads the page's layout: after every change above, so that the
    // page is laid out once for all of them.
    if (nav.session.leafId && nav.session.leafRow !== null) graph.setCursor(nav.session.leafRow, false);
    markDone("continue", selectedId ?? "");
  } catch (e) {
    report(e);
  }
}

async function setLabel(clear: boolean): Promise<void> {
  if (!selectedId) return;
  const text = ($("label-input") as HTMLInputElement).value;
  try {
    const s = await call(api.setEntryLabel(selectedId, clear ? null : text));
    showSession(s);
    notify(clear ? "Label cleared (a label entry was appended)." : "Label set (a label entry was appended, as Pi does).");
    await select(selectedId);
  } catch (e) {
    report(e);
  }
}

// ---- search ----------------------------------------------------------------------------------

async function search(): Promise<void> {
  const q = ($("search") as HTMLInputElement).value;
  if (!session || !q.trim()) return;
  try {
    if (searchHits.length && ($("search") as HTMLInputElement).dataset.q === q) {
      searchPos = (searchPos + 1) % searchHits.length;
    } else {
      searchHits = await call(api.searchSession(q));
      searchPos = 0;
      ($("search") as HTMLInputElement).dataset.q = q;
    }
    $("search-status").textContent = searchHits.length ? `${searchPos + 1}/${searchHits.length}` : "no match";
    if (searchHits.length) await jumpTo(searchHits[searchPos].entryId);
  } catch (e) {
    report(e);
  }
}

// ---- budgets ---------------------------------------------------------------------------------

const scope = (): SettingsScope => ($("budget-scope") as HTMLSelectElement).value as SettingsScope;
const contextWindow = () => currentWindow();

function budgetsFromForm(): Budgets {
  const n = (id: string) => Number(($(id) as HTMLInputElement).value);
  return {
    enabled: ($("budget-enabled") as HTMLInputElement).checked,
    reserveTokens: n("reserve"),
    keepRecentTokens: n("keep-recent"),
    branchReserveTokens: n("branch-reserve"),
  };
}

/** The panel's budgets with the window of the model at the selection. */
const budgetArgs = (): BudgetArgs => ({ ...budgetsFromForm(), contextWindow: contextWindow() });

function showBudgetValues(): void {
  const b = budgetsFromForm();
  $("reserve-value").textContent = String(b.reserveTokens);
  $("keep-recent-value").textContent = String(b.keepRecentTokens);
  $("branch-reserve-value").textContent = String(b.branchReserveTokens);
}

/** Sets a budget slider to a value from Pi's settings exactly: the sliders step by one token (a
 * coarser step would snap Pi's 2000 to 2048 and move the threshold off Pi's), and a value past
 * the slider's end widens it rather than being clamped. */
function setBudgetSlider(id: string, value: number): void {
  const input = $(id) as HTMLInputElement;
  if (value > Number(input.max)) input.max = String(value);
  input.value = String(value);
}

async function loadBudgets(): Promise<void> {
  try {
    const s = await call(api.getBudgets(scope()));
    ($("budget-enabled") as HTMLInputElement).checked = s.budgets.enabled;
    setBudgetSlider("reserve", s.budgets.reserveTokens);
    setBudgetSlider("keep-recent", s.budgets.keepRecentTokens);
    setBudgetSlider("branch-reserve", s.budgets.branchReserveTokens);
    $("budget-path").textContent = `${s.path}${s.exists ? "" : " (not created yet)"}`;
    showBudgetValues();
    await preview();
  } catch (e) {
    report(e);
  }
}

let previewSeq = 0;
async function preview(): Promise<void> {
  if (!session) return;
  showBudgetValues();
  const seq = ++previewSeq;
  const p = await call(api.previewCompaction(budgetArgs()));
  if (seq === previewSeq) showPreview(p);
}

/** Draws a budget preview: the cut on the graph and the figures in the Budgets tab. */
function showPreview(p: CompactionPreview): void {
  if (p.totalRows !== graph.totalRows) graph.reset(p.totalRows, graph.lanes);
  graph.setCut(p.firstKeptRow);
  const box = $("preview");
  box.dataset.firstKept = p.firstKeptId ?? "";
  if (p.refusal) {
    box.replaceChildren(el("div", "muted", `No cut: ${p.refusal}`));
    return;
  }
  box.replaceChildren(
    el("div", undefined, `Cut point (first kept): ${p.firstKeptId} at row ${p.firstKeptRow ?? "?"}${p.isSplitTurn ? " · splits a turn" : ""}`),
    el("div", undefined, `To summarize: ${formatTokens(p.tokensToSummarize)} tokens · kept: ${formatTokens(p.tokensKept)} tokens`),
    el("div", p.overThreshold ? "over" : undefined,
      `Context now ${formatTokens(p.tokensBefore)} vs threshold ${formatTokens(p.threshold)}: ${p.overThreshold ? "crossed, Pi would compact" : "not crossed"}`),
  );
}

async function saveBudgets(): Promise<void> {
  try {
    const s = await call(api.saveBudgets(scope(), budgetsFromForm()));
    $("budget-saved").textContent = `Saved to ${s.path}`;
  } catch (e) {
    report(e);
  }
}

// ---- wiring ----------------------------------------------------------------------------------

function showTab(name: string): void {
  document.querySelectorAll<HTMLElement>(".tab").forEach((t) => t.classList.toggle("active", t.dataset.tab === name));
  for (const p of ["detail", "context", "budgets", "model", "timeline"]) $(`panel-${p}`).hidden = p !== name;
  if (name !== "context" || !contextPending) return;
  if (contextPending === "fetch") void refreshContext().catch(report);
  else showContext(contextPending);
}

document.querySelectorAll<HTMLElement>(".tab").forEach((t) => t.addEventListener("click", () => showTab(t.dataset.tab ?? "detail")));
$("btn-sessions").addEventListener("click", () => void showPicker());
$("btn-close-picker").addEventListener("click", () => ($("picker").hidden = true));
$("btn-demo").addEventListener("click", () => void openPath(null, true));
$("btn-open-file").addEventListener("click", async () => {
  try {
    const p = await call(api.pickSessionFile());
    if (p) await openPath(p);
  } catch (e) {
    report(e);
  }
});
$("btn-continue").addEventListener("click", () => void continueHere());
$("btn-label").addEventListener("click", () => void setLabel(false));
$("btn-clear-label").addEventListener("click", () => void setLabel(true));
$("btn-zoom-in").addEventListener("click", () => graph.zoom(1.15));
$("btn-unfold").addEventListener("click", async () => {
  const btn = $("btn-unfold");
  const unfold = btn.dataset.unfolded !== "true";
  try {
    const total = await call(api.unfoldAllRuns(unfold));
    btn.dataset.unfolded = String(unfold);
    btn.textContent = unfold ? "Fold runs" : "Unfold all";
    graph.reset(total, graph.lanes);
    $("status-info").textContent = $("status-info").textContent.replace(/\d+ rows/, `${total} rows`);
  } catch (e) {
    report(e);
  }
});
$("btn-zoom-out").addEventListener("click", () => graph.zoom(1 / 1.15));
$("search").addEventListener("keydown", (e) => {
  if (e.key === "Enter") void search();
});
$("budget-scope").addEventListener("change", () => void loadBudgets());
initWindow(async () => {
  await refreshContext();
  await preview();
}, report);
// Exact sliders (step 1) still move by their coarse step from the keyboard: arrows one step,
// Page Up/Down eight, Home/End to the ends.
for (const input of document.querySelectorAll<HTMLInputElement>('input[type="range"][data-step]')) {
  input.addEventListener("keydown", (e) => {
    const step = Number(input.dataset.step);
    const by: Record<string, number> = { ArrowRight: step, ArrowUp: step, ArrowLeft: -step, ArrowDown: -step, PageUp: 8 * step, PageDown: -8 * step };
    if (!(e.key in by)) return;
    e.preventDefault();
    const v = Math.min(Number(input.max), Math.max(Number(input.min), Number(input.value) + by[e.key]));
    input.value = String(v);
    input.dispatchEvent(new Event("input", { bubbles: true }));
  });
}
for (const id of ["reserve", "keep-recent", "branch-reserve", "budget-enabled"]) {
  $(id).addEventListener("input", () => {
    void preview().catch(report);
    if (id !== "keep-recent" && id !== "branch-reserve") void refreshContext().catch(report);
  });
}
$("btn-save-budgets").addEventListener("click", () => void saveBudgets());
// Escape closes the open dialog or the picker (capture phase, so the Entry pane's editor keeps
// its text when Escape was meant for a dialog above it). The workbench's own overlays close
// themselves.
document.addEventListener(
  "keydown",
  (e) => {
    if (e.key !== "Escape" || document.querySelector(".wb-overlay")) return;
    if (!$("sum-dialog").hidden) $("sum-close").click();
    else if (!$("picker").hidden) $("picker").hidden = true;
    else return;
    e.preventDefault();
    e.stopImmediatePropagation();
  },
  true,
);
// Every other shortcut (tabs, Compact, Send, `/`, `?` for the list of shortcuts): ui/src/shortcuts.ts.
initShortcuts({
  showTab: (name) => document.querySelector<HTMLElement>(`.tab[data-tab="${name}"]`)?.click(),
  compact: () => {
    const b = $("btn-compact") as HTMLButtonElement;
    if (b.disabled) notify("Open a session first: Compact works on the open session's leaf.");
    else b.click();
  },
  send: () => {
    const b = $("btn-send") as HTMLButtonElement;
    if (!b.disabled && b.textContent === "Send") b.click();
  },
  focusSearch: () => $("search").focus(),
});

initExport({ selectedId: () => selectedId, hasSession: () => session !== null, notify });
$("btn-export").addEventListener("click", openExport);

// Benchmark hook for the end-to-end benchmark (reads frame times; changes nothing).
(window as unknown as { arborBench: unknown }).arborBench = {
  frameTimes: () => graph.frameTimes.slice(),
  scrollBy: (px: number) => ($("graph").scrollTop += px),
};

async function start(): Promise<void> {
  // `arbor FILE.jsonl` opens that session instead of the picker; when it cannot be opened, the
  // error stays in view and the app goes on as usual (picker or demo). Later `arbor FILE`
  // launches hand their file to this window (ui/src/session/launch.ts).
  let startupOpened = false;
  let startupError: string | null = null;
  try {
    const startup = await startLaunch((p) => openPath(p));
    if (startup) {
      startupOpened = await openPath(startup);
      if (!startupOpened) startupError = $("notice").textContent;
    }
  } catch (e) {
    report(e);
  }
  try {
    await startLibrary({
      skipDefault: () => startupOpened,
      openPath: async (p) => void (await openPath(p)),
      openDemo: async () => void (await openPath(null, true)),
      jumpTo,
      currentPath: () => session?.path ?? null,
      // Pi appended to the open session: new rows, same scroll position and selection.
      onOpenSessionChanged: async (s) => {
        const keep = selectedId;
        showSession(s);
        // A re-read file may no longer hold the selected entry: then select the leaf.
        const row = keep ? await call(api.revealEntry(keep)).catch(() => null) : null;
        if (keep && row !== null) {
          const now = await call(api.currentSession());
          if (now.totalRows !== graph.totalRows) graph.reset(now.totalRows, now.lanes);
          graph.cursor = row;
          graph.schedule();
          await select(keep);
        } else if (s.leafId) {
          if (s.leafRow !== null) graph.setCursor(s.leafRow, false);
          await select(s.leafId);
        }
        await preview();
      },
      notify,
      report,
    });
  } catch (e) {
    report(e);
  }
  if (startupError) notify(startupError, "error");
}

// The session title: click or F2 renames the session (ui/src/session/title.ts).
initTitleEdit({
  current: () => session,
  readOnly: readOnlyBanner,
  afterRename: async (s) => {
    showSession(s);
    if (s.leafRow !== null) graph.setCursor(s.leafRow, false);
    if (s.leafId) await select(s.leafId);
    await preview();
  },
  notify,
  report,
});

// The Timeline tab: the context waterfall (ui/src/timeline).
initTimeline({
  session: () => session,
  selectedId: () => selectedId,
  jumpTo: (id) => void jumpTo(id).catch(report),
  budgets: budgetArgs,
  report,
});

initSummarize({
  selectedId: () => selectedId,
  showSession,
  select,
  setCursor: (row) => graph.setCursor(row, false),
  preview,
  notify,
  budgets: budgetArgs,
});

void start();
