// The context window in the Budgets tab: a display of the window of the session's model at the
// selected node (the user's override > Pi's models.json > Pi's model table > 200k, resolved in Rust by
// select_entry and set_context_window_override), saying where the number came from, with a control to set one's own.

import { api, call } from "../ipc";
import type { ContextWindowView } from "../ipc";
import { $ } from "../dom";

let current: ContextWindowView | null = null;
let entry: string | null = null;

/** The window the views and the summarizer use now (200k until a session is open). */
export function currentWindow(): number {
  return current?.tokens ?? 200_000;
}

function show(v: ContextWindowView): void {
  current = v;
  const box = $("context-window-box");
  box.dataset.source = v.source;
  box.dataset.tokens = String(v.tokens);
  $("context-window-label").textContent = v.label;
  const input = $("context-window") as HTMLInputElement;
  if (document.activeElement !== input) input.value = String(v.tokens);
  ($("btn-window-clear") as HTMLButtonElement).disabled = v.source !== "override";
  const table =
    v.source === "override" && v.tableTokens != null ? `Pi's model table says ${v.tableTokens.toLocaleString()} tokens${v.tableName ? ` (${v.tableName})` : ""}.` : "";
  // A models.json that Pi ignores is why a custom model falls back to the table or 200k: say so.
  $("context-window-table").textContent = [table, v.warning ?? ""].filter(Boolean).join(" ");
  $("context-window-table").classList.toggle("warn", !!v.warning);
}

/** Show a window resolved elsewhere (a selection) for `entryId`; true when the number changed. */
export function applyWindow(v: ContextWindowView, entryId: string | null): boolean {
  entry = entryId;
  const before = currentWindow();
  show(v);
  return currentWindow() !== before;
}

async function setOwn(tokens: number | null, changed: () => Promise<void>): Promise<void> {
  const v = await call(api.setContextWindowOverride(entry, tokens));
  show(v);
  await changed();
}

/** Build the display in place of the old number field; `changed` redraws what depends on it. */
export function initWindow(changed: () => Promise<void>, report: (e: unknown) => void): void {
  const input = $("context-window") as HTMLInputElement;
  const label = input.closest("label");
  const box = document.createElement("div");
  box.id = "context-window-box";
  box.className = "context-window-box";
  const head = document.createElement("div");
  head.append("Context window (model): ");
  const text = document.createElement("b");
  text.id = "context-window-label";
  text.textContent = "open a session";
  head.append(text);
  const own = document.createElement("details");
  own.id = "context-window-own";
  const sum = document.createElement("summary");
  sum.className = "muted small";
  sum.textContent = "Set your own for this model";
  const row = document.createElement("div");
  row.className = "row";
  input.removeAttribute("value");
  const set = document.createElement("button");
  set.type = "button";
  set.id = "btn-window-set";
  set.textContent = "Use this window";
  const clear = document.createElement("button");
  clear.type = "button";
  clear.id = "btn-window-clear";
  clear.textContent = "Back to Pi's table";
  clear.disabled = true;
  row.append(input, set, clear);
  const note = document.createElement("div");
  note.id = "context-window-table";
  note.className = "muted small";
  own.append(sum, row, note);
  box.append(head, own);
  (label ?? input).replaceWith(box);
  set.addEventListener("click", () => void setOwn(Math.round(Number(input.value)), changed).catch(report));
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter") void setOwn(Math.round(Number(input.value)), changed).catch(report);
  });
  clear.addEventListener("click", () => void setOwn(null, changed).catch(report));
}
