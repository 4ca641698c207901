// The graph's column: the graph with what sits above it (a fork's parent path, ui/src/forks) and
// below it (the bar of the nodes picked, ui/src/compare), made once around #graph so that
// neither of them scrolls with the graph's rows.

import { $, el } from "../dom";

export function graphColumn(): HTMLElement {
  const found = document.getElementById("graph-col");
  if (found) return found;
  const g = $("graph");
  const col = el("div", "graph-col");
  col.id = "graph-col";
  g.replaceWith(col);
  col.append(g);
  return col;
}
