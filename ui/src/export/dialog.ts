// Export dialog (issue 12 item 2): the open session, the branch to the selected node, or the
// context the model sees there, as Markdown or one self-contained HTML file. The path field is
// prefilled (documents folder, named after the session); "Browse…" opens the native save dialog.
// A big export shows progress and can be cancelled; an existing file is replaced only after the
// user confirms it.

import { Channel } from "@tauri-apps/api/core";
import { api, call, CommandError } from "../ipc";
import type { ExportFormat, ExportProgress, ExportScope } from "../ipc";

export interface ExportDeps {
  /** The node selected on the graph (branch and context scopes are about it). */
  selectedId: () => string | null;
  hasSession: () => boolean;
  notify: (text: string, kind?: "info" | "error") => void;
}

let deps: ExportDeps;
let running = false;
let pathTouched = false;

const q = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;

function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

function build(): HTMLElement {
  const root = el("div", { id: "export-dialog", class: "picker", role: "dialog", "aria-modal": "true", "aria-labelledby": "export-title" });
  root.hidden = true;
  const box = el("div", { class: "picker-box sum-box" });
  const head = el("div", { class: "picker-head" });
  head.append(el("b", { id: "export-title" }, "Export"));
  const what = el("fieldset", { class: "export-choices" });
  what.append(el("legend", {}, "What"));
  for (const [v, t] of [
    ["session", "The whole session (every branch, the active path first)"],
    ["branch", "The branch from the root to the selected node"],
    ["context", "What the model sees at the selected node"],
  ]) {
    const l = el("label", { class: "row" });
    const r = el("input", { type: "radio", name: "export-scope", value: v });
    if (v === "session") r.checked = true;
    l.append(r, document.createTextNode(` ${t}`));
    what.append(l);
  }
  const fmt = el("label", { class: "row" }, "Format ");
  const sel = el("select", { id: "export-format" });
  sel.append(el("option", { value: "html" }, "HTML (one self-contained file, no scripts)"), el("option", { value: "markdown" }, "Markdown"));
  fmt.append(sel);
  const pathRow = el("label", { class: "row export-path" }, "Save to ");
  const input = el("input", { id: "export-path", type: "text", autocomplete: "off", spellcheck: "false" });
  const browse = el("button", { id: "export-browse", type: "button" }, "Browse…");
  pathRow.append(input, browse);
  const bar = el("progress", { id: "export-progress", max: "1", value: "0" });
  bar.hidden = true;
  const status = el("div", { id: "export-status", class: "muted small", "aria-live": "polite" });
  const buttons = el("div", { class: "row" });
  buttons.append(
    el("button", { id: "export-start", type: "button" }, "Export"),
    el("button", { id: "export-cancel", type: "button", disabled: "" }, "Cancel export"),
    el("button", { id: "export-close", type: "button" }, "Close"),
  );
  box.append(head, what, fmt, pathRow, bar, status, buttons);
  root.append(box);
  return root;
}

const scope = () => ((document.querySelector('input[name="export-scope"]:checked') as HTMLInputElement | null)?.value ?? "session") as ExportScope;
const format = () => (q<HTMLSelectElement>("export-format").value || "html") as ExportFormat;
const errorText = (e: unknown) => (e instanceof CommandError ? `${e.ipc.message}. ${e.ipc.hint}` : String(e));

/** Branch and context need a node; without a selection they are about the leaf. */
function nodeFor(s: ExportScope): string | null {
  return s === "session" ? null : deps.selectedId();
}

async function suggest(): Promise<void> {
  if (pathTouched) {
    // Keep the user's folder and name; only the extension follows the format.
    const input = q<HTMLInputElement>("export-path");
    input.value = input.value.replace(/\.(md|html)$/i, format() === "html" ? ".html" : ".md");
    return;
  }
  try {
    q<HTMLInputElement>("export-path").value = await call(api.exportDefaultPath(scope(), nodeFor(scope()), format()));
  } catch (e) {
    q("export-status").textContent = errorText(e);
  }
}

export function openExport(): void {
  if (!deps.hasSession()) {
    deps.notify("Open a session first: Export works on the open session.");
    return;
  }
  if (running) {
    q("export-dialog").hidden = false;
    return;
  }
  pathTouched = false;
  q("export-status").textContent = "";
  q<HTMLProgressElement>("export-progress").hidden = true;
  q("export-dialog").hidden = false;
  void suggest().then(() => q<HTMLInputElement>("export-path").focus());
}

function close(): void {
  // Closing does not stop a running export; it keeps going and reports when done.
  q("export-dialog").hidden = true;
}

async function start(replace = false): Promise<void> {
  if (running) return;
  const path = q<HTMLInputElement>("export-path").value.trim();
  const status = q("export-status");
  if (!path) {
    status.textContent = "Choose where to save the export.";
    return;
  }
  const bar = q<HTMLProgressElement>("export-progress");
  bar.hidden = false;
  bar.value = 0;
  running = true;
  q<HTMLButtonElement>("export-start").disabled = true;
  q<HTMLButtonElement>("export-cancel").disabled = false;
  status.textContent = "Exporting…";
  status.dataset.state = "running";
  const ch = new Channel<ExportProgress>();
  ch.onmessage = (p) => {
    const total = p.total ?? 0;
    bar.value = total > 0 ? (p.done ?? 0) / total : 1;
    status.textContent = `Exporting… ${Math.round(bar.value * 100)}%`;
  };
  try {
    const r = await call(api.exportSession(scope(), nodeFor(scope()), format(), path, replace, ch));
    bar.value = 1;
    status.dataset.state = "done";
    status.textContent = `Exported ${r.entries.toLocaleString()} entries (${((r.bytes ?? 0) / 1024).toFixed(0)} KB) to ${r.path} in ${Math.round(r.ms ?? 0)} ms.`;
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
    q<HTMLButtonElement>("export-start").disabled = false;
    q<HTMLButtonElement>("export-cancel").disabled = true;
  }
}

async function browse(): Promise<void> {
  try {
    const p = await call(api.pickExportPath(q<HTMLInputElement>("export-path").value));
    if (p) {
      q<HTMLInputElement>("export-path").value = p;
      pathTouched = true;
    }
  } catch (e) {
    q("export-status").textContent = errorText(e);
  }
}

export function initExport(d: ExportDeps): void {
  deps = d;
  document.body.append(build());
  q("export-start").addEventListener("click", () => void start());
  q("export-cancel").addEventListener("click", () => void api.cancelExport().catch(() => undefined));
  q("export-close").addEventListener("click", close);
  q("export-browse").addEventListener("click", () => void browse());
  q("export-format").addEventListener("change", () => void suggest());
  for (const r of document.querySelectorAll('input[name="export-scope"]')) r.addEventListener("change", () => void suggest());
  q("export-path").addEventListener("input", () => (pathTouched = true));
  q("export-path").addEventListener("keydown", (e) => {
    if (e.key === "Enter") void start();
  });
  // Escape closes the dialog (capture phase, before the app's other Escape handlers).
  document.addEventListener(
    "keydown",
    (e) => {
      if (e.key !== "Escape" || q("export-dialog").hidden) return;
      close();
      e.preventDefault();
      e.stopImmediatePropagation();
    },
    true,
  );
}
