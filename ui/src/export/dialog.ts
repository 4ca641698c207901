// Export dialog: the open session, the branch to the selected node, or the context the model
// sees there, as Markdown or one self-contained HTML file. The path field is prefilled
// (documents folder, named after the session); "Browse…" opens the native save dialog. A big
// export shows progress and can be cancelled; an existing file is replaced only after the user
// confirms it. Before exporting, the dialog lists the secrets (API keys, tokens, private keys) the
// export will redact, for the scope chosen; they stay out of the file unless "Keep secrets" is
// ticked, which is never the default.

import { Channel } from "@tauri-apps/api/core";
import { api, call, CommandError, errorText } from "../ipc";
import type { ExportFormat, ExportProgress, ExportScope, ExportSecrets } from "../ipc";
import { $, elAttrs } from "../dom";
import * as store from "../store";

export interface ExportDeps {
  notify: (text: string, kind?: "info" | "error") => void;
}

let deps: ExportDeps;
let running = false;
let pathTouched = false;
/** Which scope's secrets the list shows; a late answer for another scope is dropped. */
let secretsAsked = "";
/** Items of the list shown before "and N more". */
const SECRETS_SHOWN = 12;

function build(): HTMLElement {
  const root = elAttrs("div", { id: "export-dialog", class: "picker", role: "dialog", "aria-modal": "true", "aria-labelledby": "export-title" });
  root.hidden = true;
  const box = elAttrs("div", { class: "picker-box sum-box" });
  const head = elAttrs("div", { class: "picker-head" });
  head.append(elAttrs("b", { id: "export-title" }, "Export"));
  const what = elAttrs("fieldset", { class: "export-choices" });
  what.append(elAttrs("legend", {}, "What"));
  for (const [v, t] of [
    ["session", "The whole session (every branch, the active path first)"],
    ["branch", "The branch from the root to the selected node"],
    ["context", "What the model sees at the selected node"],
  ]) {
    const l = elAttrs("label", { class: "row" });
    const r = elAttrs("input", { type: "radio", name: "export-scope", value: v });
    if (v === "session") r.checked = true;
    l.append(r, document.createTextNode(` ${t}`));
    what.append(l);
  }
  const fmt = elAttrs("label", { class: "row" }, "Format ");
  const sel = elAttrs("select", { id: "export-format" });
  sel.append(elAttrs("option", { value: "html" }, "HTML (one self-contained file, no scripts)"), elAttrs("option", { value: "markdown" }, "Markdown"));
  fmt.append(sel);
  const pathRow = elAttrs("label", { class: "row export-path" }, "Save to ");
  const input = elAttrs("input", { id: "export-path", type: "text", autocomplete: "off", spellcheck: "false" });
  const browse = elAttrs("button", { id: "export-browse", type: "button" }, "Browse…");
  pathRow.append(input, browse);
  const secrets = elAttrs("div", { id: "export-secrets", class: "export-secrets small", "aria-live": "polite" });
  secrets.append(elAttrs("div", { id: "export-secrets-summary" }), elAttrs("ul", { id: "export-secrets-list" }));
  const keep = elAttrs("label", { class: "row small" });
  const keepBox = elAttrs("input", { id: "export-keep-secrets", type: "checkbox" });
  keep.append(keepBox, document.createTextNode(" Keep secrets in the exported file (API keys, tokens, private keys)"));
  const bar = elAttrs("progress", { id: "export-progress", max: "1", value: "0" });
  bar.hidden = true;
  const status = elAttrs("div", { id: "export-status", class: "muted small", "aria-live": "polite" });
  const buttons = elAttrs("div", { class: "row" });
  buttons.append(
    elAttrs("button", { id: "export-start", type: "button" }, "Export"),
    elAttrs("button", { id: "export-cancel", type: "button", disabled: "" }, "Cancel export"),
    elAttrs("button", { id: "export-close", type: "button" }, "Close"),
  );
  box.append(head, what, fmt, pathRow, secrets, keep, bar, status, buttons);
  root.append(box);
  return root;
}

const scope = () => ((document.querySelector('input[name="export-scope"]:checked') as HTMLInputElement | null)?.value ?? "session") as ExportScope;
const format = () => ($<HTMLSelectElement>("export-format").value || "html") as ExportFormat;

/** Branch and context are about the node selected on the graph; without a selection they are
 * about the leaf. */
function nodeFor(s: ExportScope): string | null {
  return s === "session" ? null : store.selectedId();
}

async function suggest(): Promise<void> {
  if (pathTouched) {
    // Keep the user's folder and name; only the extension follows the format.
    const input = $<HTMLInputElement>("export-path");
    input.value = input.value.replace(/\.(md|html)$/i, format() === "html" ? ".html" : ".md");
    return;
  }
  try {
    $<HTMLInputElement>("export-path").value = await call(api.exportDefaultPath(scope(), nodeFor(scope()), format()));
  } catch (e) {
    $("export-status").textContent = errorText(e);
  }
}

function describeSecrets(r: ExportSecrets | null): void {
  const summary = $("export-secrets-summary");
  const list = $("export-secrets-list");
  list.replaceChildren();
  const box = $("export-secrets");
  if (!r) {
    summary.textContent = "Looking for secrets (API keys, tokens, private keys)…";
    box.dataset.state = "looking";
    return;
  }
  const keep = $<HTMLInputElement>("export-keep-secrets").checked;
  box.dataset.state = r.total === 0 ? "none" : keep ? "kept" : "redacted";
  const n = r.total;
  const many = n === 1 ? "1 secret" : `${n.toLocaleString()} secrets`;
  if (n === 0) {
    summary.textContent = "No secrets found (API keys, tokens, private keys).";
    return;
  }
  summary.textContent = keep ? `${many} will be kept in the file, as written in the session:` : `${many} will be redacted:`;
  for (const it of r.items.slice(0, SECRETS_SHOWN)) {
    // Never the secret itself: its kind and where it is.
    list.append(elAttrs("li", {}, `${it.kind} in ${it.entryKind} ${it.entryId} (${it.field}, ${it.start}–${it.end})`));
  }
  if (n > SECRETS_SHOWN) list.append(elAttrs("li", { class: "muted" }, `and ${(n - SECRETS_SHOWN).toLocaleString()} more (arbor-cli secrets FILE lists them all)`));
}

let lastSecrets: ExportSecrets | null = null;

async function findSecrets(): Promise<void> {
  const key = `${scope()}:${nodeFor(scope()) ?? ""}`;
  secretsAsked = key;
  lastSecrets = null;
  describeSecrets(null);
  try {
    const r = await call(api.exportSecrets(scope(), nodeFor(scope())));
    if (secretsAsked !== key) return;
    lastSecrets = r;
    describeSecrets(r);
  } catch (e) {
    if (secretsAsked === key) $("export-secrets-summary").textContent = `Secrets could not be listed: ${errorText(e)}. They are still redacted unless kept.`;
  }
}

export function openExport(): void {
  if (!store.session()) {
    deps.notify("Open a session first: Export works on the open session.");
    return;
  }
  if (running) {
    $("export-dialog").hidden = false;
    return;
  }
  pathTouched = false;
  // Keeping secrets is a choice made for one export, never remembered.
  $<HTMLInputElement>("export-keep-secrets").checked = false;
  void findSecrets();
  $("export-status").textContent = "";
  $<HTMLProgressElement>("export-progress").hidden = true;
  $("export-dialog").hidden = false;
  void suggest().then(() => $<HTMLInputElement>("export-path").focus());
}

function close(): void {
  // Closing does not stop a running export; it keeps going and reports when done.
  $("export-dialog").hidden = true;
}

async function start(replace = false): Promise<void> {
  if (running) return;
  const path = $<HTMLInputElement>("export-path").value.trim();
  const status = $("export-status");
  if (!path) {
    status.textContent = "Choose where to save the export.";
    return;
  }
  const bar = $<HTMLProgressElement>("export-progress");
  bar.hidden = false;
  bar.value = 0;
  running = true;
  $<HTMLButtonElement>("export-start").disabled = true;
  $<HTMLButtonElement>("export-cancel").disabled = false;
  status.textContent = "Exporting…";
  status.dataset.state = "running";
  const ch = new Channel<ExportProgress>();
  ch.onmessage = (p) => {
    const total = p.total ?? 0;
    bar.value = total > 0 ? (p.done ?? 0) / total : 1;
    status.textContent = `Exporting… ${Math.round(bar.value * 100)}%`;
  };
  try {
    const keep = $<HTMLInputElement>("export-keep-secrets").checked;
    const r = await call(api.exportSession(scope(), nodeFor(scope()), format(), path, replace, keep, ch));
    bar.value = 1;
    status.dataset.state = "done";
    const redacted = r.redacted > 0 ? ` ${r.redacted.toLocaleString()} ${r.redacted === 1 ? "secret" : "secrets"} redacted.` : "";
    status.textContent = `Exported ${r.entries.toLocaleString()} entries (${((r.bytes ?? 0) / 1024).toFixed(0)} KB) to ${r.path} in ${Math.round(r.ms ?? 0)} ms.${redacted}`;
    deps.notify(`Exported to ${r.path}.`);
  } catch (e) {
    status.dataset.state = e instanceof CommandError ? e.ipc.kind : "error";
    const exists = e instanceof CommandError && e.ipc.kind === "refused" && /already exists/.test(e.ipc.message);
    if (exists && window.confirm(`${path} already exists. Replace it?`)) {
      running = false;
      return start(true);
    }
    status.textContent = errorText(e);
    bar.hidden = true;
  } finally {
    running = false;
    $<HTMLButtonElement>("export-start").disabled = false;
    $<HTMLButtonElement>("export-cancel").disabled = true;
  }
}

async function browse(): Promise<void> {
  try {
    const p = await call(api.pickExportPath($<HTMLInputElement>("export-path").value));
    if (p) {
      $<HTMLInputElement>("export-path").value = p;
      pathTouched = true;
    }
  } catch (e) {
    $("export-status").textContent = errorText(e);
  }
}

export function initExport(d: ExportDeps): void {
  deps = d;
  document.body.append(build());
  $("export-start").addEventListener("click", () => void start());
  $("export-cancel").addEventListener("click", () => void api.cancelExport().catch(() => undefined));
  $("export-close").addEventListener("click", close);
  $("export-browse").addEventListener("click", () => void browse());
  $("export-format").addEventListener("change", () => void suggest());
  for (const r of document.querySelectorAll('input[name="export-scope"]'))
    r.addEventListener("change", () => {
      void suggest();
      void findSecrets();
    });
  $("export-keep-secrets").addEventListener("change", () => {
    if (lastSecrets) describeSecrets(lastSecrets);
  });
  $("export-path").addEventListener("input", () => (pathTouched = true));
  $("export-path").addEventListener("keydown", (e) => {
    if (e.key === "Enter") void start();
  });
  // Escape closes the dialog (capture phase, before the app's other Escape handlers).
  document.addEventListener(
    "keydown",
    (e) => {
      if (e.key !== "Escape" || $("export-dialog").hidden) return;
      close();
      e.preventDefault();
      e.stopImmediatePropagation();
    },
    true,
  );
}
