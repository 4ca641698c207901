// Folded runs on the graph: one run unfolded from its row (Enter), or every run at once from the
// top bar's Unfold all / Fold runs.

import { api, call } from "../ipc";
import type { GraphRow } from "../ipc";
import { $ } from "../dom";
import { report } from "../notice";
import { graph } from "./shared";

export async function expandFold(row: GraphRow): Promise<void> {
  try {
    const total = await call(api.toggleGraphFold(row.entryId));
    graph().reset(total, graph().lanes);
  } catch (e) {
    report(e);
  }
}

/** The top bar's button: unfolds every run, or folds them again. */
export async function toggleAllFolds(): Promise<void> {
  const btn = $("btn-unfold");
  const unfold = btn.dataset.unfolded !== "true";
  try {
    const total = await call(api.unfoldAllRuns(unfold));
    btn.dataset.unfolded = String(unfold);
    btn.textContent = unfold ? "Fold runs" : "Unfold all";
    graph().reset(total, graph().lanes);
    $("status-info").textContent = $("status-info").textContent.replace(/\d+ rows/, `${total} rows`);
  } catch (e) {
    report(e);
  }
}
