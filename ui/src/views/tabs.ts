// The side panel's tabs (Entry, Context, Budgets, Model, Timeline): one shown at a time.

import { $ } from "../dom";
import { contextTabShown } from "../session/selection";

export function showTab(name: string): void {
  document.querySelectorAll<HTMLElement>(".tab").forEach((t) => t.classList.toggle("active", t.dataset.tab === name));
  for (const p of ["detail", "context", "budgets", "model", "timeline"]) $(`panel-${p}`).hidden = p !== name;
  if (name === "context") contextTabShown();
}
