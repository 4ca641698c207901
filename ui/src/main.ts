// App shell: makes the views and wires the window's controls to them. The session's lifecycle,
// the selection and the panels live in their own modules; their state in ui/src/store.ts.

// The modules' stylesheets, in cascade order (at equal specificity a later rule wins). Each module
// imports its own too; importing them here first keeps this order whatever order the modules
// load in.
import "./library/library.css";
import "./summary/summary.css";
import "./shortcuts.css";
import "./session/session.css";
import "./timeline/timeline.css";
import "./review/review.css";

import { $ } from "./dom";
import { GraphView } from "./graph/view";
import { setGraph } from "./graph/shared";
import { expandFold, toggleAllFolds } from "./graph/folds";
import { showPicker } from "./library";
import { notify, report } from "./notice";
import { continueHere, setLabel } from "./session/entry-actions";
import { afterRename, openFile, openPath, readOnlyBanner, startSessions } from "./session/lifecycle";
import { initNotices } from "./session/notices";
import { search } from "./session/search";
import { jumpTo, refreshContext, select, setBringBack } from "./session/selection";
import { showSession } from "./session/header";
import { initTitleEdit } from "./session/title";
import * as store from "./store";
import { initSummarize } from "./summarize/panel";
import { initTheme } from "./theme";
import { initShortcuts } from "./shortcuts";
import { initTimeline } from "./timeline";
import { startQualityMarks } from "./summary/marks";
import { initExport, openExport } from "./export/dialog";
import { budgetArgs, loadBudgets, preview, saveBudgets, stepSlider } from "./views/budgets";
import { escapeClosesDialog } from "./views/dialogs";
import { showTab } from "./views/tabs";
import { initWindow } from "./views/window";
import { initPiTab } from "./views/pi";
import { startReview } from "./review/dialog";
import { clearPicks, initCompare, pickNode, picked } from "./compare";
import { initRecall, openRecall } from "./recall/dialog";
import { recallIds } from "./recall/pure";
import { initForks } from "./forks/strip";

initTheme(document.getElementById("theme-select") as HTMLSelectElement | null);

const graph = new GraphView($("graph"), {
  onSelect: (row) => void select(row.entryId),
  onActivate: (row) => void expandFold(row),
  onParent: () => {
    const parent = $("detail").dataset.parentId;
    if (parent) void jumpTo(parent).catch(report);
  },
  onLeaf: () => {
    const leaf = store.session()?.leafId;
    if (leaf) void jumpTo(leaf).catch(report);
  },
  onPick: (row) => pickNode(row.entryId),
});
setGraph(graph);

document.querySelectorAll<HTMLElement>(".tab").forEach((t) => t.addEventListener("click", () => showTab(t.dataset.tab ?? "detail")));
// The picker reads from the session index (ui/src/library).
$("btn-sessions").addEventListener("click", () => void showPicker());
$("btn-close-picker").addEventListener("click", () => ($("picker").hidden = true));
$("btn-demo").addEventListener("click", () => void openPath(null, true));
$("btn-open-file").addEventListener("click", () => void openFile());
$("btn-continue").addEventListener("click", () => void continueHere());
$("btn-label").addEventListener("click", () => void setLabel(false));
$("btn-clear-label").addEventListener("click", () => void setLabel(true));
$("btn-zoom-in").addEventListener("click", () => graph.zoom(1.15));
$("btn-unfold").addEventListener("click", () => void toggleAllFolds());
$("btn-zoom-out").addEventListener("click", () => graph.zoom(1 / 1.15));
$("search").addEventListener("keydown", (e) => {
  if (e.key === "Enter") void search();
});

// The Budgets tab (ui/src/views/budgets.ts) and the window of the model (ui/src/views/window.ts):
// a change redraws the preview, and the context view where the number matters to it.
$("budget-scope").addEventListener("change", () => void loadBudgets());
initWindow(async () => {
  await refreshContext();
  await preview();
}, report);
for (const input of document.querySelectorAll<HTMLInputElement>('input[type="range"][data-step]')) {
  input.addEventListener("keydown", (e) => stepSlider(input, e));
}
for (const id of ["reserve", "keep-recent", "branch-reserve", "budget-enabled"]) {
  $(id).addEventListener("input", () => {
    void preview().catch(report);
    if (id !== "keep-recent" && id !== "branch-reserve") void refreshContext().catch(report);
  });
}
$("btn-save-budgets").addEventListener("click", () => void saveBudgets());

// Escape for the dialogs and the picker, in the capture phase (ui/src/views/dialogs.ts).
document.addEventListener("keydown", escapeClosesDialog, true);
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

initExport({ notify });
$("btn-export").addEventListener("click", openExport);

// Benchmark hook for the end-to-end benchmark (reads frame times; changes nothing).
(window as unknown as { arborBench: unknown }).arborBench = {
  frameTimes: () => graph.frameTimes.slice(),
  scrollBy: (px: number) => ($("graph").scrollTop += px),
};

// The session title: click or F2 renames the session (ui/src/session/title.ts).
initTitleEdit({ readOnly: readOnlyBanner, afterRename, notify, report });

// Every summary's quality marks, computed in the background after a session opens (the graph's
// markers and the Timeline read them: ui/src/summary/marks.ts).
startQualityMarks();

// The Timeline tab: the context waterfall (ui/src/timeline).
initTimeline({ jumpTo: (id) => void jumpTo(id).catch(report), budgets: budgetArgs, report });

// The Model tab, Compact…, Continue with summary… and the composer (ui/src/summarize).
initSummarize({
  showSession,
  select,
  setCursor: (row) => graph.setCursor(row, false),
  preview,
  notify,
  budgets: budgetArgs,
  jumpTo,
});

// Compare two nodes, Bring back into context, and a fork's parent path above its graph
// (ui/src/compare, ui/src/recall, ui/src/forks).
initCompare({ jumpTo, bringBack: (ids) => void openRecall(ids) });
setBringBack((ids) => void openRecall(ids));
initRecall({ entries: () => recallIds(picked(), store.selectedId()), afterWrite: () => void clearPicks() });
initForks({ openPath: (p) => openPath(p), jumpTo, report });

// The Pi tab, and Pi's requests for review: taken from the start, since Pi waits meanwhile (the
// library's first pass over a big folder takes seconds); the dialog opens Pi's session itself.
initPiTab();
void startReview().catch(report);
void initNotices({ openPath: (p) => openPath(p), jumpTo, notify });
void startSessions();
