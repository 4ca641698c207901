// The Budgets tab: Pi's compaction settings (global or project settings file) on sliders, and
// the preview of the cut they give at the leaf, drawn on the graph and in figures.

import { api, call } from "../ipc";
import type { BudgetArgs, Budgets, CompactionPreview, SettingsScope } from "../ipc";
import { $, el } from "../dom";
import { formatTokens } from "../format";
import { graph } from "../graph/shared";
import { report } from "../notice";
import * as store from "../store";
import { currentWindow } from "./window";

const scope = (): SettingsScope => ($("budget-scope") as HTMLSelectElement).value as SettingsScope;

export function budgetsFromForm(): Budgets {
  const n = (id: string) => Number(($(id) as HTMLInputElement).value);
  return {
    enabled: ($("budget-enabled") as HTMLInputElement).checked,
    reserveTokens: n("reserve"),
    keepRecentTokens: n("keep-recent"),
    branchReserveTokens: n("branch-reserve"),
  };
}

/** The panel's budgets with the window of the model at the selection. */
export const budgetArgs = (): BudgetArgs => ({ ...budgetsFromForm(), contextWindow: currentWindow() });

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

/** Exact sliders (step 1) still move by their coarse step (`data-step`) from the keyboard: arrows
 * one step, Page Up/Down eight, Home/End (the browser's own) to the ends. */
export function stepSlider(input: HTMLInputElement, e: KeyboardEvent): void {
  const step = Number(input.dataset.step);
  const by: Record<string, number> = { ArrowRight: step, ArrowUp: step, ArrowLeft: -step, ArrowDown: -step, PageUp: 8 * step, PageDown: -8 * step };
  if (!(e.key in by)) return;
  e.preventDefault();
  const v = Math.min(Number(input.max), Math.max(Number(input.min), Number(input.value) + by[e.key]));
  input.value = String(v);
  input.dispatchEvent(new Event("input", { bubbles: true }));
}

export async function loadBudgets(): Promise<void> {
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

/** Starts a preview request (a slider's, or Continue's, which brings its own preview); the
 * returned call draws its answer unless a newer request started meanwhile. */
export function startPreview(): (p: CompactionPreview) => void {
  const seq = ++previewSeq;
  return (p) => {
    if (seq === previewSeq) showPreview(p);
  };
}

export async function preview(): Promise<void> {
  if (!store.session()) return;
  showBudgetValues();
  const draw = startPreview();
  draw(await call(api.previewCompaction(budgetArgs())));
}

/** Draws a budget preview: the cut on the graph and the figures in the Budgets tab. */
function showPreview(p: CompactionPreview): void {
  const g = graph();
  if (p.totalRows !== g.totalRows) g.reset(p.totalRows, g.lanes);
  g.setCut(p.firstKeptRow);
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

export async function saveBudgets(): Promise<void> {
  try {
    const s = await call(api.saveBudgets(scope(), budgetsFromForm()));
    $("budget-saved").textContent = `Saved to ${s.path}`;
  } catch (e) {
    report(e);
  }
}
