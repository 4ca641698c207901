// The window's one session graph. main.ts makes it; the session's lifecycle, the selection and
// the budgets preview size it, move its cursor and mark the cut on it.

import type { GraphView } from "./view";

let view: GraphView | null = null;

export function setGraph(g: GraphView): void {
  view = g;
}

export function graph(): GraphView {
  if (!view) throw new Error("the session graph is not made yet");
  return view;
}
