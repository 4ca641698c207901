// The Timeline tab: the context waterfall of the active path, or of the path to the selected
// node when it is not on the active path, with a mark under each compaction after which the agent
// re-read files or re-ran commands (the cost of forgetting, from summary/marks.ts). Fetched only
// while the tab is shown; selecting a node on the charted path just moves the marker.

import { api, call } from "../ipc";
import type { BudgetArgs } from "../ipc";
import { el } from "../dom";
import * as store from "../store";
import { WaterfallChart } from "./chart";
import { onQualityMarks, qualityMark } from "../summary/marks";
import { forgettingMarks } from "../summary/pure";
import { aheadFits, decodeTimeline, formatCost, formatCount } from "./pure";
import type { Timeline } from "./pure";
import "./timeline.css";

export interface TimelineDeps {
  /** Reveal and select an entry on the graph. */
  jumpTo: (entryId: string) => void;
  /** The Budgets panel's values, with the window of the model at the selection. */
  budgets: () => BudgetArgs;
  report: (e: unknown) => void;
}

let deps: TimelineDeps | null = null;
/** The user's choice of scale (Fit to the data), for the session file it was made on: another
 * session opens at its own initial scale (fitted when its data stays under a quarter of its
 * window), which a remembered global choice would override. */
let fitChoice: { path: string; fit: boolean } | null = null;
let chart: WaterfallChart | null = null;
let shownKey = "";
let seq = 0;

const panel = () => document.getElementById("panel-timeline");
const box = () => document.getElementById("timeline") as HTMLElement | null;
const visible = () => panel()?.hidden === false;

/** The budgets as the command takes them (whole tokens; a window of at least 1). */
const wholeWindow = (n: number) => Math.max(1, Math.round(Number(n) || 200_000));
const wholeReserve = (n: number) => Math.max(0, Math.round(Number(n) || 0));
const windowNow = () => wholeWindow(deps?.budgets().contextWindow ?? 0);
const reserveNow = () => wholeReserve(deps?.budgets().reserveTokens ?? 0);
/** What get_timeline is asked with: the panel's budgets (read once), window and reserve whole. */
function budgetsNow(d: TimelineDeps): BudgetArgs {
  const b = d.budgets();
  return { ...b, contextWindow: wholeWindow(b.contextWindow), reserveTokens: wholeReserve(b.reserveTokens) };
}

/** What the chart shows depends on: the file, its leaf and length, the selection, the budgets. */
function keyOf(): string {
  return keyParts().join("|");
}

/** The parts of the key: file, leaf, entry count, selected id, window, reserve ([] without a session). */
function keyParts(): string[] {
  const s = store.session();
  if (!deps || !s) return [];
  return [s.path, s.leafId ?? "", String(s.entryCount), store.selectedId() ?? "", String(windowNow()), String(reserveNow())];
}

export function initTimeline(d: TimelineDeps): void {
  deps = d;
  // The cost of forgetting arrives from the background run after the chart may be drawn.
  onQualityMarks(() => {
    if (chart?.data) markForgetting(chart, chart.data);
  });
  // Shown: draw (the panel was hidden, so its size was unknown).
  const p = panel();
  if (p) new MutationObserver(() => visible() && void refreshTimeline()).observe(p, { attributes: true, attributeFilter: ["hidden"] });
  for (const id of ["context-window", "reserve"]) document.getElementById(id)?.addEventListener("input", () => void refreshTimeline());
}

let warmedKey = "";

/** An answer fetched ahead of the tab (after the numbers are warm), for the tab's first draw:
 * the key it was fetched for, and the answer (pending while in flight). */
let ahead: { key: string[]; answer: Promise<Timeline | null> } | null = null;

/** After a session opens or grows, read its numbers in the background (in short slices, off the
 * main thread), then fetch the chart's answer, so the tab's first draw is the drawing only. */
function warm(): void {
  const s = store.session();
  if (!deps || !s) return;
  const key = [s.path, s.entryCount].join("|");
  if (key === warmedKey) return;
  warmedKey = key;
  ahead = null;
  void call(api.warmTimeline())
    .then(() => {
      if (warmedKey === key && !visible()) fetchAhead();
    })
    .catch(() => (warmedKey = ""));
}

function fetchAhead(): void {
  if (!deps) return;
  const key = keyParts();
  const answer = call(api.getTimeline(store.selectedId(), budgetsNow(deps)))
    .then(decodeTimeline)
    .catch(() => null);
  ahead = { key, answer };
}

/** The answer fetched ahead, if it is the one the tab would fetch now (see aheadFits). Taken once. */
async function takeAhead(): Promise<Timeline | null> {
  const a = ahead;
  if (!a) return null;
  ahead = null;
  const now = keyParts();
  const fit = aheadFits(a.key, now);
  if (!fit) return null;
  const v = await a.answer;
  if (!v || fit === "same") return v;
  const selected = now[3];
  const pos = selected === "" ? -1 : v.series.ids.indexOf(selected);
  if (!v.activePath || (selected !== "" && pos < 0)) return null;
  v.selectedPos = pos >= 0 ? pos : null;
  return v;
}

/** A node was selected: on the charted path the marker moves; elsewhere the chart follows. */
export function timelineSelected(entryId: string): void {
  if (!visible()) {
    warm();
    return;
  }
  const v = chart?.data;
  const pos = v && chart ? chart.indexOf(entryId) : -1;
  if (v && v.activePath && pos >= 0 && visible() && shownKey.split("|").slice(0, 3).join("|") === keyOf().split("|").slice(0, 3).join("|")) {
    v.selectedPos = pos;
    chart?.markSelected(pos);
    shownKey = keyOf();
    return;
  }
  void refreshTimeline();
}

/** Fetches and draws when the tab is shown and something it depends on changed. */
export async function refreshTimeline(force = false): Promise<void> {
  const b = box();
  if (!deps || !b || !visible()) return;
  const key = keyOf();
  if (!force && key === shownKey) return;
  const s = store.session();
  if (!s) {
    shownKey = key;
    b.replaceChildren(el("div", "empty", "Open a session to see its context along a path."));
    return;
  }
  const my = ++seq;
  const t0 = performance.now();
  try {
    const early = force ? null : await takeAhead();
    if (my !== seq) return;
    const answer = early ? null : await call(api.getTimeline(store.selectedId(), budgetsNow(deps)));
    if (my !== seq) return;
    const t1 = performance.now();
    const v = early ?? decodeTimeline(answer as ArrayBuffer);
    const t2 = performance.now();
    b.dataset.source = early ? "ahead" : "fetched";
    shownKey = key;
    show(b, v);
    const t3 = performance.now();
    b.dataset.commandMs = (t1 - t0).toFixed(1);
    b.dataset.buildMs = v.buildMs.toFixed(1);
    b.dataset.decodeMs = (t2 - t1).toFixed(1);
    b.dataset.startedAt = t0.toFixed(1);
    b.dataset.doneAt = t3.toFixed(1);
    b.dataset.firstDrawMs = (t3 - t0).toFixed(1);
  } catch (e) {
    if (my === seq) deps.report(e);
  }
}

/** The compactions of the chart's path after which the agent re-read or re-ran something. */
function markForgetting(c: WaterfallChart, v: Timeline): void {
  c.setForgetting(forgettingMarks(v.compactions, (p) => v.series.ids.at(p), (id) => qualityMark(id)?.forgetting));
}

function show(b: HTMLElement, v: Timeline): void {
  if (v.count === 0) {
    chart = null;
    b.replaceChildren(el("div", "empty", "This path is empty: the session has no entries yet."));
    return;
  }
  if (!chart) chart = new WaterfallChart({ select: (id) => deps?.jumpTo(id) });
  const path = store.session()?.path ?? "";
  chart.fit = fitChoice && fitChoice.path === path ? fitChoice.fit : null;
  const head = el("div", "wf-head");
  const what = v.activePath ? "Active path" : "Path to the selected node (not on the active path)";
  head.append(el("b", undefined, what), el("span", "muted", ` · ${v.count.toLocaleString("en-US")} entries · ${v.compactions.length} compactions`));
  if (v.totalCost !== null) head.append(el("span", "muted", ` · cost ${formatCost(v.totalCost)}`));
  const legend = el("div", "wf-legend small");
  const item = (cls: string, text: string) => {
    const i = el("span", "wf-key");
    i.append(el("span", `wf-swatch ${cls}`), document.createTextNode(text));
    return i;
  };
  legend.append(
    item("wf-s-est", "Pi's estimate"),
    item("wf-s-use", "reported usage"),
    item("wf-s-drop", "compaction"),
    item("wf-s-forget", "↻ files re-read / commands re-run after a compaction"),
    item("wf-s-thr", `threshold ${formatCount(v.threshold)}`),
    item("wf-s-win", `window ${formatCount(v.contextWindow)}`),
  );
  const fit = el("label", "wf-fit small");
  const box = el("input");
  box.type = "checkbox";
  box.id = "wf-fit";
  box.addEventListener("change", () => {
    if (!chart) return;
    fitChoice = { path, fit: box.checked };
    chart.fit = box.checked;
    chart.draw();
  });
  fit.append(box, document.createTextNode(" Fit to the data (else the scale is the window)"));
  legend.append(fit);
  const notes: HTMLElement[] = [];
  if (v.absurdPoints > 0)
    notes.push(
      el("div", "muted small", `${v.absurdPoints} numbers are negative, not numbers, or above 4× the window: they are drawn at the edges; hover shows Pi's value.`),
    );
  const help = el("div", "muted small", "Hover or use the arrows (Shift: faster) to read an entry; click or Enter selects it on the graph.");
  const t = performance.now();
  b.replaceChildren(head, legend, chart.root, chart.forgetStrip, ...notes, help);
  const t1 = performance.now();
  chart.setData(v);
  markForgetting(chart, v);
  // The box shows the scale drawn: the user's choice, or the one this data opens at.
  box.checked = chart.fit ?? chart.scale().fitted;
  b.dataset.showPhases = `${(t1 - t).toFixed(1)}/${(performance.now() - t1).toFixed(1)} (replace/setData)`;
}
