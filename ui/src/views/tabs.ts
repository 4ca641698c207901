// The side panel's tabs (Entry, Context, Budgets, Model, Timeline, Pi): one shown at a time.

import { $ } from "../dom";
import { contextTabShown } from "../session/selection";
import { report } from "../notice";
import { refreshPiTab } from "./pi";

export function showTab(name: string): void {
  document.querySelectorAll<HTMLElement>(".tab").forEach((t) => t.classList.toggle("active", t.dataset.tab === name));
  for (const p of ["detail", "context", "budgets", "model", "timeline", "pi"]) $(`panel-${p}`).hidden = p !== name;
  if (name === "context") contextTabShown();
  if (name === "pi") void refreshPiTab().catch(report);
}
