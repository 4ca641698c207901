// Bring back into context: the preview of entries the model no longer sees brought back as one
// message at the leaf (the message text, its cost, the context before and after against the
// compaction threshold, a cut for long texts), then the write. A refusal shows the engine's
// sentence and writes nothing; past the threshold, "Compact first" opens the Compact dialog and
// the preview comes back once the compaction is written. Secrets in the text (keys a tool
// printed) are listed and redacted, unless the person ticks the box that keeps them.
// The write cannot be undone (session files are append-only), and the confirm text says so.

import { api, call } from "../ipc";
import type { RecallPreview } from "../ipc";
import { $, button, el, elAttrs } from "../dom";
import { graph } from "../graph/shared";
import { notify, report } from "../notice";
import { showSession } from "../session/header";
import * as store from "../store";
import { select } from "../session/selection";
import { budgetArgs, preview as budgetPreview } from "../views/budgets";
import { compactThen } from "../summarize/panel";
import { confirmText, costText, crossingText, doneText, parseMaxChars, secretLines } from "./pure";
import "./recall.css";

let ids: string[] = [];
/** The box "keep them as they are", for the entries being previewed. */
let keepSecrets = false;
let shown: RecallPreview | null = null;
let seq = 0;
let returnFocus: HTMLElement | null = null;
/** Called after a write (the picks are cleared). */
let afterWrite: () => void = () => {};

function dialog(): HTMLElement {
  const found = document.getElementById("recall-dialog");
  if (found) return found;
  const root = elAttrs("div", { id: "recall-dialog", class: "picker", role: "dialog", "aria-modal": "true", "aria-labelledby": "recall-title" });
  root.hidden = true;
  const box = el("div", "picker-box recall-box");
  const head = el("div", "picker-head");
  const title = el("b", undefined, "Bring back into context");
  title.id = "recall-title";
  head.append(title);
  const body = el("div", "recall-body");
  body.id = "recall-body";
  const max = elAttrs("input", { id: "recall-max", type: "number", min: "1", step: "500" });
  max.addEventListener("change", () => void refresh());
  max.addEventListener("keydown", (e) => {
    if (e.key === "Enter") void refresh();
  });
  const maxLabel = el("label", "recall-max small");
  maxLabel.append(document.createTextNode("Longest text per entry (characters) "), max);
  const confirm = el("div", "recall-confirm small");
  confirm.id = "recall-confirm";
  const go = button("Bring back", () => void write(), "", "Append the message at the leaf");
  go.id = "recall-go";
  const cancel = button("Cancel", () => closeRecall(), "", "Escape");
  cancel.id = "recall-cancel";
  const row = el("div", "row");
  row.append(go, cancel);
  box.append(head, maxLabel, body, confirm, row);
  root.append(box);
  root.addEventListener("keydown", (e) => {
    if (e.key !== "Escape") return;
    e.preventDefault();
    e.stopPropagation();
    closeRecall();
  });
  document.body.append(root);
  return root;
}

export function closeRecall(): void {
  const d = document.getElementById("recall-dialog");
  if (!d || d.hidden) return;
  d.hidden = true;
  seq++;
  const back = returnFocus;
  returnFocus = null;
  if (back?.isConnected) back.focus({ preventScroll: true });
}

function renderPreview(p: RecallPreview): void {
  const body = $("recall-body");
  const go = $("recall-go") as HTMLButtonElement;
  const d = $("recall-dialog");
  d.dataset.state = p.refusal ? "refused" : p.crossesThreshold ? "crosses" : "ok";
  ($("recall-max") as HTMLInputElement).value = String(p.maxChars);
  if (p.refusal) {
    const r = el("div", "recall-refusal", p.refusal[0].toUpperCase() + p.refusal.slice(1) + ". Nothing is written.");
    r.id = "recall-refusal";
    body.replaceChildren(r);
    $("recall-confirm").textContent = "";
    go.disabled = true;
    return;
  }
  const sources = el("ul", "recall-sources small");
  for (const s of p.sources) sources.append(el("li", undefined, `${s.entryId}: ${s.place}`));
  const text = el("pre", "recall-text");
  text.id = "recall-text";
  text.textContent = p.text;
  const cost = el("div", "recall-cost");
  cost.id = "recall-cost";
  cost.textContent = costText(p);
  const parts: HTMLElement[] = [sources];
  if (p.secrets.length) parts.push(secretsBox(p));
  parts.push(text, cost);
  if (p.cut.length) parts.push(el("div", "muted small", `Cut to ${p.maxChars} characters: ${p.cut.join(", ")}.`));
  const crossing = crossingText(p);
  if (crossing) {
    const warn = el("div", "recall-crossing");
    warn.id = "recall-crossing";
    warn.append(document.createTextNode(crossing + " "));
    const first = button("Compact first", compactFirst, "small", "Close this and open the Compact dialog; bring the entries back after it");
    first.id = "recall-compact-first";
    warn.append(first);
    parts.push(warn);
  }
  body.replaceChildren(...parts);
  $("recall-confirm").textContent = confirmText(p);
  go.disabled = false;
}

/** The secrets found in the text, before anything is written, and the explicit choice to keep
 * them. */
function secretsBox(p: RecallPreview): HTMLElement {
  const box = el("div", "recall-secrets");
  box.id = "recall-secrets";
  const lines = secretLines(p);
  box.append(el("div", undefined, lines.head));
  const list = el("ul", "small");
  for (const l of lines.items) list.append(el("li", undefined, l));
  const keep = elAttrs("input", { id: "recall-keep-secrets", type: "checkbox" }) as HTMLInputElement;
  keep.checked = p.secretsKept;
  keep.addEventListener("change", () => {
    keepSecrets = keep.checked;
    void refresh();
  });
  const label = el("label", "small");
  label.append(keep, document.createTextNode(" Keep them as they are (the message goes to the model's provider)"));
  box.append(list, label);
  return box;
}

/** Past the threshold: the app's own Compact flow, then this preview again for the same entries
 * (planned on the new leaf, so the cost is the one after the compaction). */
function compactFirst(): void {
  const again = ids.slice();
  const keep = keepSecrets;
  closeRecall();
  if (($("btn-compact") as HTMLButtonElement).disabled) return notify("Compact works on the open session's leaf: open a session first.");
  compactThen(() => void openRecall(again, keep));
  notify("Compact first: once the compaction is written, the Bring back preview opens again for these entries.");
}

async function refresh(): Promise<void> {
  const raw = ($("recall-max") as HTMLInputElement).value;
  const max = raw.trim() === "" ? null : parseMaxChars(raw);
  if (raw.trim() !== "" && max === null) {
    notify("The longest text per entry is a whole number of characters, from 1 to 10000000.", "error");
    return;
  }
  const n = ++seq;
  ($("recall-go") as HTMLButtonElement).disabled = true;
  try {
    const p = await call(api.previewRecall(ids, max, keepSecrets, budgetArgs()));
    if (n !== seq) return;
    shown = p;
    renderPreview(p);
    $("recall-dialog").dataset.ready = "true";
  } catch (e) {
    if (n === seq) closeRecall();
    report(e);
  }
}

async function write(): Promise<void> {
  if (!shown || shown.refusal) return;
  const go = $("recall-go") as HTMLButtonElement;
  go.disabled = true;
  try {
    const done = await call(api.bringBackEntries(shown.entryIds, shown.maxChars, shown.secretsKept, budgetArgs()));
    closeRecall();
    afterWrite();
    showSession(done.session);
    if (done.session.leafRow !== null) graph().setCursor(done.session.leafRow, false);
    await select(done.entryId);
    notify(doneText(done.entryId, done.crossesThreshold));
    await budgetPreview();
  } catch (e) {
    go.disabled = false;
    report(e);
  }
}

/** Bring back… for `entryIds`: opens the preview (nothing is written until Bring back). */
export async function openRecall(entryIds: string[], keep = false): Promise<void> {
  if (!entryIds.length) return;
  keepSecrets = keep;
  const d = dialog();
  const a = document.activeElement;
  returnFocus = a instanceof HTMLElement && a !== document.body ? a : null;
  ids = entryIds.slice();
  shown = null;
  d.hidden = false;
  delete d.dataset.ready;
  d.dataset.entryIds = ids.join(",");
  ($("recall-max") as HTMLInputElement).value = "";
  $("recall-body").replaceChildren(el("div", "muted", `Planning ${ids.length === 1 ? ids[0] : `${ids.length} entries`}…`));
  $("recall-confirm").textContent = "";
  ($("recall-cancel") as HTMLElement).focus();
  await refresh();
}

/** The Entry pane's Bring back… button, on the selected entry (or the nodes picked). */
export function initRecall(h: { entries(): string[]; afterWrite(): void }): void {
  afterWrite = h.afterWrite;
  const b = button("Bring back…", () => void openRecall(h.entries()), "", "Bring the entry back into the model's context as one message at the leaf (a preview first)");
  b.id = "btn-recall";
  b.disabled = true;
  $("btn-continue").parentElement?.append(b);
  store.subscribe(() => (b.disabled = !store.session() || !store.selectedId()));
}
