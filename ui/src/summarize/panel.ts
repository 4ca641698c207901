// Summarizer in the app: keyring notice, model + key panel, hooks, "Compact…", "Compact up to
// here" (a preview first, ./cut.ts), "Continue with summary…" and the composer's Send. Calls Rust only through ../ipc (the progress channel is Tauri's `Channel`).

import { Channel } from "@tauri-apps/api/core";
import { api, call, CommandError, errorText } from "../ipc";
import type { BudgetArgs, OpenedSession, SummarizerConfig, SummaryProgress_Deserialize } from "../ipc";
import { $ } from "../dom";
import * as store from "../store";
import { cutPreviewView } from "./cut";

export interface AppHooks {
  showSession: (s: OpenedSession) => void;
  select: (id: string) => Promise<void>;
  setCursor: (row: number) => void;
  preview: () => Promise<void>;
  notify: (text: string, kind?: "info" | "error") => void;
  /** The Budgets panel's values, with the window of the model at the selection. */
  budgets: () => BudgetArgs;
  /** Reveals an entry on the graph and selects it. */
  jumpTo: (id: string) => Promise<void>;
}

const input = (id: string) => $(id) as HTMLInputElement;

let app: AppHooks;
let config: SummarizerConfig | null = null;
let running = false;
/** What to do once the Compact dialog's compaction is written (Bring back's "Compact first"). */
let afterCompact: (() => void) | null = null;

async function adoptSession(s: OpenedSession): Promise<void> {
  app.showSession(s);
  if (s.leafRow != null) app.setCursor(s.leafRow);
  if (s.leafId) await app.select(s.leafId);
  await app.preview().catch(() => {});
}

// ---- model, keys, hooks ----------------------------------------------------------------------

function byLabel(c: SummarizerConfig): string {
  return c.offline ? "offline summarizer" : `${c.choice.provider} ${c.choice.model ?? ""}`;
}

function showConfig(c: SummarizerConfig): void {
  config = c;
  input("model-provider").value = c.choice.provider;
  input("model-id").value = c.choice.model ?? "";
  input("model-base-url").value = c.choice.baseUrl ?? "";
  input("model-base-url").placeholder = c.effectiveBaseUrl ?? "provider default";
  const list = $("model-list");
  list.replaceChildren(
    ...c.models
      .filter((m) => m.provider === input("model-provider").value)
      .map((m) => {
        const o = document.createElement("option");
        o.value = m.id;
        o.textContent = `${m.contextWindow.toLocaleString()} tokens`;
        return o;
      }),
  );
  $("model-window").textContent = c.contextWindow
    ? `Context window ${c.contextWindow.toLocaleString()} tokens (from the catalog): the threshold of Arbor's replies and compactions uses it.`
    : c.offline ? "" : "Model not in the catalog: the window of the session's model (Budgets tab) is used.";
  const mode = $("model-mode");
  mode.dataset.offline = String(c.offline);
  mode.textContent = c.offline
    ? "Offline: summaries are extractive (no model, no key). Sending messages needs a model."
    : `Summaries and replies by ${byLabel(c)}${c.effectiveBaseUrl ? ` at ${c.effectiveBaseUrl}` : ""}.`;
  showKeyStatus();
}

function showKeyStatus(): void {
  if (!config) return;
  const p = input("model-provider").value;
  const k = config.keys.find((x) => x.provider === p);
  const s = $("key-status");
  s.dataset.stored = String(!!k?.stored);
  s.textContent = p === "offline" ? "(not needed offline)" : k?.problem ? `keyring: ${k.problem}` : k?.stored ? `stored for ${p}` : `none stored for ${p}`;
}

async function loadConfig(): Promise<void> {
  try {
    showConfig(await call(api.getSummarizerConfig()));
  } catch (e) {
    app.notify(errorText(e), "error");
  }
}

async function saveModel(): Promise<void> {
  try {
    const c = await call(
      api.saveModelChoice({
        provider: input("model-provider").value,
        model: input("model-id").value.trim() || null,
        baseUrl: input("model-base-url").value.trim() || null,
      }),
    );
    showConfig(c);
    app.notify(`Summaries and replies now by ${byLabel(c)}.`);
  } catch (e) {
    app.notify(errorText(e), "error");
  }
}

async function addModel(): Promise<void> {
  try {
    const c = await call(
      api.addUserModel({
        provider: input("model-provider").value,
        id: input("model-id").value.trim(),
        contextWindow: Number(input("add-model-window").value) || 0,
        maxOutput: Number(input("add-model-output").value) || 0,
        userAdded: true,
      }),
    );
    const provider = input("model-provider").value;
    const id = input("model-id").value;
    showConfig(c);
    // Keep the user's unsaved choice in the form; "Use this model" saves it.
    input("model-provider").value = provider;
    input("model-id").value = id;
    app.notify(`Model ${id} added to the catalog for ${provider}.`);
  } catch (e) {
    app.notify(errorText(e), "error");
  }
}

async function setKey(del: boolean): Promise<void> {
  const provider = input("model-provider").value;
  if (provider === "offline") return app.notify("The offline summarizer needs no key; choose a provider first.", "error");
  try {
    const k = del ? await call(api.deleteApiKey(provider)) : await call(api.setApiKey(provider, input("key-input").value));
    input("key-input").value = ""; // the key leaves the page at once
    if (config) config.keys = config.keys.map((x) => (x.provider === provider ? k : x));
    showKeyStatus();
    app.notify(del ? `Key for ${provider} deleted from the keyring.` : `Key for ${provider} stored in the OS keyring.`);
  } catch (e) {
    input("key-input").value = "";
    app.notify(errorText(e), "error");
  }
}

async function loadHooks(): Promise<void> {
  try {
    const h = await call(api.getHooks());
    input("hook-compact").value = h.beforeCompact ?? "";
    input("hook-navigate").value = h.beforeNavigate ?? "";
    input("hook-timeout").value = String(h.timeoutMs);
    input("branch-max-tokens").value = h.branchSummaryMaxTokens ? String(h.branchSummaryMaxTokens) : "";
    input("artifact-ledger").checked = h.artifactLedger;
    $("hooks-path").textContent = h.path ? `Arbor settings: ${h.path}` : "No home folder: settings cannot be saved.";
  } catch (e) {
    app.notify(errorText(e), "error");
  }
}

async function saveHooks(): Promise<void> {
  try {
    const h = await call(
      api.saveHookSettings({
        beforeCompact: input("hook-compact").value.trim() || null,
        beforeNavigate: input("hook-navigate").value.trim() || null,
        timeoutMs: Number(input("hook-timeout").value) || 30000,
        branchSummaryMaxTokens: Number(input("branch-max-tokens").value) || null,
        artifactLedger: input("artifact-ledger").checked,
        path: null,
      }),
    );
    $("hooks-path").textContent = `Saved to ${h.path}`;
  } catch (e) {
    app.notify(errorText(e), "error");
  }
}

// ---- progress dialog -------------------------------------------------------------------------

type Mode = "compact" | "navigate" | "keep";
let mode: Mode = "compact";
/** The entry of "Continue with summary…", or the one "Compact up to here" keeps from. */
let navTarget: string | null = null;
/** Preview requests of "Compact up to here"; a newer one wins. */
let previewSeq = 0;

function progressChannel(out: HTMLElement): Channel<SummaryProgress_Deserialize> {
  const ch = new Channel<SummaryProgress_Deserialize>();
  let streamed = 0;
  ch.onmessage = (p) => {
    if (p.kind === "text" && p.delta) {
      streamed += p.delta.length;
      out.textContent = (out.textContent ?? "") + p.delta;
      out.dataset.chars = String(streamed);
      out.scrollTop = out.scrollHeight;
    } else if (p.kind === "retrying" && p.message) {
      out.textContent = (out.textContent ?? "") + `\n[${p.message}]\n`;
    } else if (p.kind === "attempt" && (p.attempt ?? 1) > 1) {
      out.textContent = (out.textContent ?? "") + `\n[attempt ${p.attempt}]\n`;
    }
  };
  return ch;
}

function openDialog(m: Mode): void {
  mode = m;
  afterCompact = null;
  navTarget = m === "compact" ? null : store.selectedId();
  $("sum-title").textContent = m === "compact" ? "Compact the session at the leaf" : m === "keep" ? `Compact up to ${navTarget}` : `Continue from ${navTarget}`;
  $("sum-choices").hidden = m !== "navigate";
  const pv = $("sum-preview");
  pv.hidden = m !== "keep";
  pv.replaceChildren();
  pv.dataset.state = m === "keep" ? "loading" : "";
  ($("sum-instructions") as HTMLTextAreaElement).value = "";
  syncInstructions();
  const out = $("sum-progress");
  out.textContent = "";
  out.dataset.state = "idle";
  $("sum-by").textContent = config ? `Summarizer: ${byLabel(config)}${config.offline ? " (offline, marked as such in the entry)" : ""}` : "";
  ($("sum-start") as HTMLButtonElement).disabled = m === "keep";
  ($("sum-start") as HTMLButtonElement).textContent = m === "keep" ? "Compact" : "Start";
  ($("sum-cancel") as HTMLButtonElement).disabled = true;
  $("sum-dialog").hidden = false;
  ($("sum-instructions") as HTMLTextAreaElement).focus();
  if (m === "keep" && navTarget) void showCutPreview(navTarget);
}

/** "Compact up to here": the preview (nothing is written), then Start confirms. A refused entry
 * shows why, with the nearest valid points as buttons that select them. */
async function showCutPreview(entryId: string): Promise<void> {
  const seq = ++previewSeq;
  const pv = $("sum-preview");
  pv.textContent = "Planning…";
  try {
    const p = await call(api.previewCompactHere(app.budgets(), entryId));
    if (seq !== previewSeq || mode !== "keep") return;
    const v = cutPreviewView(p);
    const lines = v.lines.map((t) => {
      const d = document.createElement("div");
      d.textContent = t;
      return d;
    });
    const near = v.nearest.map((c) => {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "cut-point";
      b.dataset.entryId = c.entryId;
      b.textContent = c.label;
      b.addEventListener("click", () => {
        $("sum-dialog").hidden = true;
        void app.jumpTo(c.entryId);
      });
      return b;
    });
    pv.replaceChildren(...lines, ...near);
    pv.dataset.state = v.ok ? "ok" : "refused";
    ($("sum-start") as HTMLButtonElement).disabled = !v.ok;
  } catch (e) {
    if (seq !== previewSeq) return;
    pv.textContent = errorText(e);
    pv.dataset.state = "error";
  }
}

/** Navigation: the instructions field only counts for "summarize with instructions". */
function syncInstructions(): void {
  const ta = $("sum-instructions") as HTMLTextAreaElement;
  ta.disabled = mode === "navigate" && navMode() !== "instructions";
  ta.placeholder = ta.disabled ? "Choose \"Summarize with instructions\" to add instructions" : "Optional instructions for the summary (what to keep, what to focus on)";
}

function navMode(): string {
  return (document.querySelector('input[name="sum-mode"]:checked') as HTMLInputElement | null)?.value ?? "summary";
}

async function startDialog(): Promise<void> {
  if (running) return;
  const out = $("sum-progress");
  out.textContent = "";
  out.dataset.state = "running";
  running = true;
  ($("sum-start") as HTMLButtonElement).disabled = true;
  ($("sum-cancel") as HTMLButtonElement).disabled = false;
  const instructions = ($("sum-instructions") as HTMLTextAreaElement).value.trim() || null;
  try {
    if (mode === "compact" || (mode === "keep" && navTarget)) {
      const r = mode === "keep" && navTarget
        ? await call(api.compactUpTo(app.budgets(), navTarget, instructions, progressChannel(out)))
        : await call(api.compactLeaf(app.budgets(), instructions, progressChannel(out)));
      out.dataset.state = "done";
      out.dataset.entryId = r.entryId;
      out.textContent = r.summary;
      app.notify(
        `Compacted by ${r.summarizer}${r.offline ? " (offline)" : ""}${r.fromHook ? " (summary from the before-compact hook)" : ""}: ${r.tokensBefore.toLocaleString()} → ${r.tokensAfter.toLocaleString()} tokens. New compaction entry ${r.entryId}.`,
      );
      await adoptSession(r.session);
      const then = afterCompact;
      afterCompact = null;
      if (then) queueMicrotask(then);
    } else if (navTarget) {
      const m = navMode();
      const r = await call(api.navigateWithSummary(navTarget, m !== "none", m === "instructions" ? instructions : null, app.budgets(), progressChannel(out)));
      out.dataset.state = "done";
      out.dataset.entryId = r.summaryEntryId ?? "";
      out.textContent = r.summary ?? "(no summary)";
      if (r.navigation.composerText != null) ($("composer") as HTMLTextAreaElement).value = r.navigation.composerText;
      app.notify(r.navigation.note);
      await adoptSession(r.navigation.session);
    }
    $("sum-dialog").hidden = true;
  } catch (e) {
    out.dataset.state = e instanceof CommandError ? e.ipc.kind : "error";
    out.textContent = `${(out.textContent ?? "").trim() ? "\n" : ""}${errorText(e)}${mode === "navigate" ? " The navigation was cancelled: nothing changed." : ""}`;
    if (mode === "keep") ($("sum-preview") as HTMLElement).dataset.state = "failed";
    app.notify(errorText(e), "error");
  } finally {
    running = false;
    ($("sum-start") as HTMLButtonElement).disabled = false;
    ($("sum-cancel") as HTMLButtonElement).disabled = true;
  }
}

async function cancelRun(): Promise<void> {
  try {
    await call(api.cancelSummary());
  } catch (e) {
    app.notify(errorText(e), "error");
  }
}

// ---- composer --------------------------------------------------------------------------------

async function send(): Promise<void> {
  if (running) return;
  const box = $("composer") as HTMLTextAreaElement;
  const text = box.value;
  if (!text.trim()) return;
  const out = $("reply-stream");
  const status = $("send-status");
  out.hidden = false;
  out.textContent = "";
  out.dataset.state = "running";
  status.textContent = "sending…";
  running = true;
  ($("btn-send") as HTMLButtonElement).textContent = "Cancel";
  try {
    const r = await call(api.sendMessage(text, app.budgets(), progressChannel(out)));
    box.value = "";
    out.dataset.state = "done";
    out.textContent = r.reply;
    const comp = r.compactions.map((c) => `compacted automatically (${c.reason}, ${c.tokensBefore.toLocaleString()} tokens) into ${c.entryId}`);
    out.dataset.compactions = String(r.compactions.length);
    status.textContent = `reply ${r.assistantEntryId}: ${r.inputTokens} in / ${r.outputTokens} out tokens${comp.length ? ` · ${comp.join("; ")}` : ""}`;
    await adoptSession(r.session);
  } catch (e) {
    out.dataset.state = e instanceof CommandError ? e.ipc.kind : "error";
    status.textContent = "";
    const msg = document.createElement("div");
    msg.className = "over";
    msg.textContent = errorText(e);
    out.replaceChildren(msg);
    if (e instanceof CommandError && e.ipc.kind === "compactionDisabled") {
      const b = document.createElement("button");
      b.type = "button";
      b.id = "btn-compact-now";
      b.textContent = "Compact now";
      b.addEventListener("click", () => openDialog("compact"));
      out.appendChild(b);
    }
    const s = await call(api.currentSession()).catch(() => null);
    if (s) await adoptSession(s).catch(() => {});
  } finally {
    running = false;
    ($("btn-send") as HTMLButtonElement).textContent = "Send";
  }
}

// ---- wiring ----------------------------------------------------------------------------------

function syncButtons(): void {
  const leaf = $("status-leaf").textContent ?? "";
  const open = leaf !== "" && leaf !== "–";
  ($("btn-compact") as HTMLButtonElement).disabled = !open;
  ($("btn-send") as HTMLButtonElement).disabled = !open;
  ($("btn-continue-summary") as HTMLButtonElement).disabled = !$("detail").dataset.entryId;
  ($("btn-compact-here") as HTMLButtonElement).disabled = !open || !$("detail").dataset.entryId;
}

/** The keyring unavailable: a one-line notice, shown once (a dismissal is remembered in Arbor's
 * state); the details stay in the Model tab, where keys are set. */
async function keyringNotice(): Promise<void> {
  try {
    const n = await call(api.getKeyringNotice());
    const k = n.status;
    const b = $("keyring-banner");
    b.dataset.ok = String(k.ok);
    b.dataset.shown = String(n.show);
    let details = document.getElementById("keyring-details");
    if (!details) {
      details = document.createElement("div");
      details.id = "keyring-details";
      details.className = "small over";
      $("key-status").closest("h4")?.insertAdjacentElement("afterend", details);
    }
    details.hidden = k.ok;
    details.textContent = k.ok ? "" : `The OS keyring (${k.backend}) is not available: ${k.message}. Keys cannot be stored until it is; the offline summarizer works without one.`;
    if (!n.show) {
      b.hidden = true;
      return;
    }
    b.className = "notice keyring-notice small";
    const text = document.createElement("span");
    text.textContent = "OS keyring unavailable: API keys cannot be stored (the offline summarizer still works). ";
    const more = document.createElement("button");
    more.type = "button";
    more.id = "keyring-details-btn";
    more.className = "notice-action";
    more.textContent = "Details";
    more.addEventListener("click", () => document.querySelector<HTMLElement>('.tab[data-tab="model"]')?.click());
    const close = document.createElement("button");
    close.type = "button";
    close.id = "keyring-dismiss";
    close.className = "notice-action";
    close.textContent = "Dismiss";
    close.title = "Do not show this again (the details stay in the Model tab)";
    close.addEventListener("click", () => {
      b.hidden = true;
      void call(api.dismissKeyringNotice()).catch((e) => app.notify(errorText(e), "error"));
    });
    b.replaceChildren(text, more, close);
    b.hidden = false;
  } catch (e) {
    app.notify(errorText(e), "error");
  }
}

/** The Compact dialog on the leaf, then `then` once its compaction is written (not when it is
 * cancelled or fails). */
export function compactThen(then: () => void): void {
  openDialog("compact");
  afterCompact = then;
}

export function initSummarize(hooks: AppHooks): void {
  app = hooks;
  $("btn-compact").addEventListener("click", () => openDialog("compact"));
  $("btn-continue-summary").addEventListener("click", () => openDialog("navigate"));
  $("btn-compact-here").addEventListener("click", () => openDialog("keep"));
  $("sum-start").addEventListener("click", () => void startDialog());
  $("sum-cancel").addEventListener("click", () => void cancelRun());
  $("sum-close").addEventListener("click", () => {
    if (running) void cancelRun();
    $("sum-dialog").hidden = true;
  });
  $("btn-send").addEventListener("click", () => (running ? void cancelRun() : void send()));
  $("model-provider").addEventListener("change", () => {
    if (config) showConfig({ ...config, choice: { ...config.choice, provider: input("model-provider").value, model: null }, contextWindow: null });
  });
  $("btn-save-model").addEventListener("click", () => void saveModel());
  document.querySelectorAll('input[name="sum-mode"]').forEach((r) => r.addEventListener("change", syncInstructions));
  $("btn-set-key").addEventListener("click", () => void setKey(false));
  $("btn-add-model").addEventListener("click", () => void addModel());
  $("btn-delete-key").addEventListener("click", () => void setKey(true));
  $("btn-save-hooks").addEventListener("click", () => void saveHooks());
  const obs = new MutationObserver(syncButtons);
  obs.observe($("status-leaf"), { childList: true, characterData: true, subtree: true });
  obs.observe($("detail"), { attributes: true, attributeFilter: ["data-entry-id"] });
  syncButtons();
  void keyringNotice();
  void loadConfig();
  void loadHooks();
}
