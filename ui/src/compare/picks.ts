// The nodes picked on the graph besides the selected one: Ctrl/Cmd+click or Space picks a node
// (or takes it back), "Compare with…" waits for the next node selected. Two picks compare;
// any number are brought back together as one message. A bar under the graph says what is
// picked and offers both; Escape clears it (or cancels "Compare with…").

import { $, button, el } from "../dom";
import { graph } from "../graph/shared";
import { graphColumn } from "../graph/column";
import * as store from "../store";
import { comparePair, picksText, togglePick } from "./pure";

let picks: string[] = [];
/** "Compare with…" is waiting for a second node: the first one. */
let comparingFrom: string | null = null;
let lastSelected: string | null = null;
let lastPath: string | null = null;

export interface PickActions {
  compare(a: string, b: string): void;
  bringBack(ids: string[]): void;
}
let act: PickActions;

export function picked(): string[] {
  return picks.slice();
}

/** Sets the picks (the Compare panel marks its two nodes) and redraws the bar and the graph. */
export function setPicks(ids: string[]): void {
  picks = ids.slice();
  draw();
}

export function clearPicks(): boolean {
  const had = picks.length > 0 || comparingFrom !== null;
  picks = [];
  comparingFrom = null;
  draw();
  return had;
}

/** A Ctrl/Cmd+click or Space on a graph row. */
export function togglePicked(id: string): void {
  comparingFrom = null;
  picks = togglePick(picks, id, store.selectedId());
  draw();
}

/** "Compare with…": the next node selected (click, or arrows and Enter) is compared with `from`. */
export function startCompareWith(from: string): void {
  comparingFrom = from;
  picks = [from];
  draw();
  $("graph").focus({ preventScroll: true });
}

function bar(): HTMLElement {
  let b = document.getElementById("picks-bar");
  if (b) return b;
  b = el("div", "picks-bar");
  b.id = "picks-bar";
  b.setAttribute("role", "status");
  b.hidden = true;
  graphColumn().append(b);
  return b;
}

function draw(): void {
  graph().setPicked(new Set(picks));
  const b = bar();
  b.hidden = picks.length === 0 && comparingFrom === null;
  b.dataset.count = String(picks.length);
  b.dataset.comparing = comparingFrom ?? "";
  if (b.hidden) {
    b.replaceChildren();
    return;
  }
  if (comparingFrom) {
    b.replaceChildren(
      el("span", undefined, `Compare ${comparingFrom} with…: click another node (or move with the arrows and press Enter).`),
      button("Cancel", () => clearPicks(), "small", "Escape cancels too"),
    );
    return;
  }
  const pair = comparePair(picks);
  const compare = button("Compare", () => pair && act.compare(pair[0], pair[1]), "small", "Side by side: the common ancestor and what each side did");
  compare.id = "btn-picks-compare";
  compare.disabled = !pair;
  const back = button(
    picks.length > 1 ? `Bring back ${picks.length}…` : "Bring back…",
    () => act.bringBack(picks.slice()),
    "small",
    "Bring the picked entries back into the model's context, as one message (a preview first)",
  );
  back.id = "btn-picks-recall";
  const clear = button("Clear", () => clearPicks(), "small", "Escape clears too");
  clear.id = "btn-picks-clear";
  b.replaceChildren(el("span", "picks-text", `${picksText(picks.length)}: ${picks.join(", ")}`), compare, back, clear);
}

/** Wires the picks: the graph's Ctrl/Cmd+click and Space come through `togglePicked`; a new
 * selection while "Compare with…" waits compares; another session drops them. */
export function initPicks(a: PickActions): void {
  act = a;
  bar();
  store.subscribe(() => {
    const path = store.session()?.path ?? null;
    if (path !== lastPath) {
      lastPath = path;
      if (picks.length || comparingFrom) clearPicks();
    }
    const sel = store.selectedId();
    if (sel === lastSelected) return;
    lastSelected = sel;
    if (comparingFrom && sel && sel !== comparingFrom) {
      const from = comparingFrom;
      comparingFrom = null;
      picks = [from, sel];
      draw();
      act.compare(from, sel);
    }
  });
}
