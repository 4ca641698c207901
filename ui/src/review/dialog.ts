// The review of Pi's compaction while Pi waits: a sheet beside the graph (so the proposed cut
// stays in view) with Pi's draft as section cards, the drop alarm against the previous
// compaction and the retention of the span, a countdown to Pi's time limit, and the choices:
// Accept, Accept edited, Move the cut (pick an entry on the graph), Write with Arbor's model,
// Cancel this compaction, Let Pi decide. Requests arrive over a channel (state/review.rs), one
// dialog at a time; a second Pi asking meanwhile waits in line.

import "./review.css";
import { Channel } from "@tauri-apps/api/core";
import { api, call, errorText } from "../ipc";
import type { CutPreview, ReviewChoice, ReviewEvent, ReviewEvent_Deserialize, ReviewPrompt, ReviewView, SectionView, SummaryProgress_Deserialize } from "../ipc";
import { $, button, el } from "../dom";
import { renderMarkdown } from "../render/markdown";
import { notify, report } from "../notice";
import { showSession } from "../session/header";
import { jumpTo } from "../session/selection";
import { graph } from "../graph/shared";
import * as store from "../store";
import { bodyOf, countdownText, dropAlarmText, editSection, retentionText } from "./pure";
import { ROLE_CLASS } from "../summary/pure";
import { ledgerPreferred, rememberReviewPrefs, renderReviewLedger } from "./ledger";

interface Open {
  prompt: ReviewPrompt;
  view: ReviewView | null;
  /** The text that would be sent: Pi's draft until the person edits it. */
  text: string;
  /** The sections of `text` (Pi's own until a section is edited; stale after a raw edit). */
  sections: SectionView[];
  /** An edit in progress: a section's index, or "raw". */
  editing: number | "raw" | null;
  /** Picking a new cut on the graph. */
  picking: boolean;
  cut: CutPreview | null;
  arbor: string | null;
  /** "Add artifact ledger": Accept and Accept edited send the text with the ledger. */
  ledger: boolean;
  busy: boolean;
}

const queue: ReviewPrompt[] = [];
let current: Open | null = null;
let timer: number | undefined;
let stopPick: (() => void) | null = null;

declare global {
  interface Window {
    /** When the last review dialog was painted (the review benchmark reads it). */
    __arborReviewPainted?: { reviewId: number; at: number; computeMs: number; askedAt: number; viewAt: number; renderedAt: number; reopened: boolean };
  }
}

export async function startReview(): Promise<void> {
  const ch = new Channel<ReviewEvent_Deserialize>();
  ch.onmessage = (e) => onEvent(e as ReviewEvent);
  rememberReviewPrefs((await call(api.reviewSubscribe(ch))).prefs);
}

function onEvent(e: ReviewEvent): void {
  if (e.type === "request") {
    if (current) queue.push(e.prompt);
    else void open(e.prompt);
  } else if (e.type === "ended") {
    if (current?.prompt.reviewId === e.reviewId) {
      if (e.reason !== "decided") notify(e.reason, "error");
      close();
    } else {
      const i = queue.findIndex((p) => p.reviewId === e.reviewId);
      if (i >= 0) queue.splice(i, 1);
    }
  } else if (e.type === "watched") {
    const what = e.kind === "compaction" ? "compacted" : "summarized a branch of";
    const name = e.sessionFile ? e.sessionFile.split("/").pop() : "a session without a file";
    notify(`Pi ${what} ${name}; under the watch policy it was not held for review.`);
  }
}

async function open(prompt: ReviewPrompt): Promise<void> {
  const askedAt = Date.now();
  current = { prompt, view: null, text: "", sections: [], editing: null, picking: false, cut: null, arbor: null, ledger: ledgerPreferred(), busy: false };
  const sheet = $("review");
  sheet.hidden = false;
  sheet.replaceChildren(el("div", "review-head", "Pi is waiting: reading its draft…"));
  startCountdown();
  try {
    const v = await call(api.getReviewView(prompt.reviewId));
    const viewAt = Date.now();
    if (current?.prompt.reviewId !== prompt.reviewId) return;
    current.view = v;
    current.text = v.summary;
    current.sections = v.sections;
    if (v.opened) showSession(v.opened);
    render();
    const renderedAt = Date.now();
    requestAnimationFrame(() => {
      window.__arborReviewPainted = { reviewId: prompt.reviewId, at: Date.now(), computeMs: v.computeMs ?? 0, askedAt, viewAt, renderedAt, reopened: v.opened !== null };
    });
    graph().setReviewSpan(new Set(v.spanEntryIds), v.firstKeptEntryId);
    const cutAt = v.firstKeptEntryId ?? v.targetId;
    if (cutAt && store.session()) void jumpTo(cutAt).catch(() => undefined);
  } catch (e) {
    report(e);
    render();
  }
}

function close(): void {
  graph().setReviewSpan(null, null);
  stopPick?.();
  stopPick = null;
  window.clearInterval(timer);
  current = null;
  const sheet = $("review");
  sheet.hidden = true;
  sheet.replaceChildren();
  const next = queue.shift();
  if (next) void open(next);
}

function startCountdown(): void {
  window.clearInterval(timer);
  const tick = () => {
    const c = $("review-countdown");
    if (c && current) c.textContent = countdownText((current.prompt.deadlineEpochMs ?? 0) - Date.now());
  };
  timer = window.setInterval(tick, 1000);
}

async function send(choice: ReviewChoice, done: string): Promise<void> {
  if (!current || current.busy) return;
  current.busy = true;
  try {
    const ledger = current.ledger && (choice.action === "accept" || choice.action === "edit");
    await call(api.reviewDecide(current.prompt.reviewId, choice, ledger));
    notify(ledger ? `${done} It gets Arbor's artifact ledger.` : done);
  } catch (e) {
    report(e);
    if (current) current.busy = false;
  }
}

function render(): void {
  const o = current;
  if (!o) return;
  const v = o.view;
  const sheet = $("review");
  const compaction = o.prompt.kind === "compaction";
  const head = el("div", "review-head");
  const title = el("h3", "", compaction ? "Pi is about to compact" : "Pi is about to summarize the branch it leaves");
  title.id = "review-title";
  head.append(title, el("span", "review-countdown muted", countdownText((o.prompt.deadlineEpochMs ?? 0) - Date.now())));
  head.lastElementChild!.id = "review-countdown";
  const parts: HTMLElement[] = [head];
  const facts: string[] = [];
  if (o.prompt.sessionFile) facts.push(o.prompt.sessionFile.split("/").pop()!);
  if (o.prompt.round > 1) facts.push(`round ${o.prompt.round} (cut moved from ${v?.movedFrom ?? "?"})`);
  if (v?.tokensBefore != null) facts.push(`${Math.round(v.tokensBefore).toLocaleString()} tokens before`);
  if (v) facts.push(`${v.spanEntryIds.length} entries summarized`);
  if (v?.keptTokens != null) facts.push(`${Math.round(v.keptTokens).toLocaleString()} tokens kept from ${v.firstKeptEntryId}`);
  if (v?.isSplitTurn) facts.push("split turn");
  if (v?.model) facts.push(`Pi's model ${v.model}`);
  parts.push(el("div", "review-facts muted small", facts.join(" · ")));
  if (v?.customInstructions) parts.push(el("div", "review-facts small", `Instructions: ${v.customInstructions}`));
  if (v?.analysisNote) parts.push(el("div", "review-note small", v.analysisNote));
  if (v?.check) {
    const alarm = el("div", v.check.dropped.length ? "review-alarm" : "review-ok", dropAlarmText(v.check.dropped.length, v.check.previousEntryId));
    alarm.id = "review-alarm";
    parts.push(alarm);
    if (v.check.dropped.length) {
      const ul = el("ul", "review-dropped");
      for (const d of v.check.dropped) ul.appendChild(el("li", "", `${d.section}: ${d.text}`));
      parts.push(ul);
    }
    const r = v.check.retention;
    const ret = el("details", "review-retention");
    ret.appendChild(el("summary", "", retentionText(r.mentioned, r.total)));
    const ul = el("ul");
    for (const f of r.facts.filter((f) => !f.mentioned).slice(0, 20)) ul.appendChild(el("li", "small", `${f.kind}: ${f.text}`));
    ret.appendChild(ul);
    parts.push(ret);
  }
  if (v?.ledger) parts.push(renderReviewLedger(v.ledger, o.ledger, o.text !== v.summary, (on) => (o.ledger = on)));
  parts.push(renderDraft(o));
  if (o.picking || o.cut) parts.push(renderCut(o));
  if (o.arbor !== null) parts.push(renderArbor(o));
  parts.push(renderActions(o, compaction));
  sheet.replaceChildren(...parts);
}

function renderDraft(o: Open): HTMLElement {
  const box = el("div", "review-draft");
  const edited = o.view !== null && o.text !== o.view.summary;
  box.appendChild(el("div", "review-h", edited ? "Your edit of Pi's draft" : "Pi's draft"));
  if (o.editing === "raw") {
    box.appendChild(editor(o.text, (t) => (o.text = t)));
    return box;
  }
  const sections = o.view ? sectionsOf(o) : [];
  if (!sections.length) box.appendChild(el("pre", "review-raw", o.text));
  for (const s of sections) {
    const card = el("div", `review-card ${ROLE_CLASS[s.role] ?? ""}`);
    card.dataset.section = s.name;
    const h = el("div", "review-card-head");
    h.append(el("b", "", s.name), button("Edit", () => edit(s.index), "wb-link", `Edit “${s.name}”`));
    card.appendChild(h);
    if (o.editing === s.index) {
      card.appendChild(
        editor(bodyOf(s), (body) => {
          const r = editSection(o.sections, o.text, s.index, body);
          o.text = r.text;
          o.sections = r.sections as SectionView[];
        }),
      );
    } else {
      card.appendChild(renderMarkdown(bodyOf(s)));
    }
    box.appendChild(card);
  }
  return box;
}

/** The sections of the text as edited so far. */
function sectionsOf(o: Open): SectionView[] {
  return o.sections;
}

function editor(text: string, onInput: (t: string) => void): HTMLElement {
  const ta = el("textarea", "review-editor");
  ta.id = "review-editor";
  ta.value = text;
  ta.rows = Math.min(24, Math.max(4, text.split("\n").length + 1));
  ta.addEventListener("input", () => {
    onInput(ta.value);
    const accept = document.getElementById("review-accept-edited") as HTMLButtonElement | null;
    if (accept) accept.disabled = !current || current.text === current.view?.summary;
  });
  queueMicrotask(() => ta.focus());
  return ta;
}

function edit(section: number | "raw"): void {
  if (!current) return;
  current.editing = section;
  render();
}

function renderCut(o: Open): HTMLElement {
  const box = el("div", "review-cut");
  box.id = "review-cut";
  if (o.picking && !o.cut) box.appendChild(el("div", "", "Click the entry on the graph that Pi should keep from."));
  const c = o.cut;
  if (c && c.valid) {
    box.appendChild(
      el(
        "div",
        "",
        `Keep from ${c.entryId}: ${c.summarizedEntries} entries summarized, ${Math.round(c.keptTokens ?? 0).toLocaleString()} tokens kept${c.isSplitTurn ? " (split turn)" : ""}. Pi drafts again for this cut, and you review that draft.`,
      ),
    );
    const go = button("Keep from here", () => void send({ action: "moveCut", firstKeptEntryId: c.entryId }, "Pi drafts again for the new cut."), "primary");
    go.id = "review-move-send";
    box.appendChild(go);
  } else if (c) {
    box.appendChild(el("div", "review-alarm", `Not a cut point: ${c.reason ?? ""}`));
    if (c.nearest.length) {
      const near = el("div", "small", "Nearest valid: ");
      for (const id of c.nearest) near.appendChild(button(id, () => void jumpTo(id).catch(report), "wb-link"));
      box.appendChild(near);
    }
  }
  return box;
}

function renderArbor(o: Open): HTMLElement {
  const box = el("div", "review-arbor");
  box.appendChild(el("div", "review-h", "Arbor's draft (the model chosen in the Model tab)"));
  const pre = el("pre", "review-raw", o.arbor ?? "");
  pre.id = "review-arbor-text";
  box.appendChild(pre);
  if (o.arbor) {
    box.appendChild(
      button("Use Arbor's draft", () => {
        if (!current || current.arbor === null) return;
        current.text = current.arbor;
        current.editing = "raw";
        render();
      }),
    );
  }
  return box;
}

function renderActions(o: Open, compaction: boolean): HTMLElement {
  const row = el("div", "review-actions");
  const edited = o.view !== null && o.text !== o.view.summary;
  const accept = button("Accept", () => void send({ action: "accept" }, "Pi writes its draft."), "primary", "Pi writes its own draft (Ctrl+Enter)");
  accept.id = "review-accept";
  const acceptEdited = button("Accept edited", () => void send({ action: "edit", summary: o.text }, "Pi writes your edit."), "", "Pi writes your edited summary");
  acceptEdited.id = "review-accept-edited";
  acceptEdited.disabled = !edited;
  const raw = button("Edit raw", () => edit("raw"), "", "Edit the whole summary as text");
  raw.id = "review-edit-raw";
  row.append(accept, acceptEdited, raw);
  if (compaction) {
    const move = button(o.picking ? "Stop picking" : "Move the cut", () => togglePick(), "", "Pick another entry for Pi to keep from");
    move.id = "review-move";
    row.append(move);
  }
  const arbor = button("Write with Arbor's model", () => void arborDraft(), "", "Draft the same summary with the model chosen in the Model tab, beside Pi's");
  arbor.id = "review-arbor";
  row.append(arbor);
  const cancel = button(
    compaction ? "Cancel this compaction" : "Don't navigate",
    () => {
      const warn = compaction
        ? "Pi will not compact now. Its context stays as large as it is and may overflow the model's window. Cancel this compaction?"
        : "Pi will not navigate. Cancel?";
      if (window.confirm(warn)) void send({ action: "cancel" }, compaction ? "Pi does not compact this time." : "Pi stays where it is.");
    },
    "danger",
  );
  cancel.id = "review-cancel";
  const pi = button("Let Pi decide", () => void send({ action: "letPiDecide" }, "Pi drafts again by itself and writes that."), "", "As without Arbor: Pi drafts and writes on its own");
  pi.id = "review-pi-decides";
  row.append(cancel, pi);
  return row;
}

function togglePick(): void {
  const o = current;
  if (!o) return;
  o.picking = !o.picking;
  o.cut = null;
  stopPick?.();
  stopPick = null;
  if (o.picking) {
    let last = store.selectedId();
    stopPick = store.subscribe(() => {
      const id = store.selectedId();
      if (!id || id === last || !current?.picking) return;
      last = id;
      void call(api.reviewCutPreview(current.prompt.reviewId, id))
        .then((c) => {
          if (!current) return;
          current.cut = c;
          render();
        })
        .catch(report);
    });
  }
  render();
}

async function arborDraft(): Promise<void> {
  const o = current;
  if (!o || o.busy) return;
  o.arbor = "";
  render();
  const ch = new Channel<SummaryProgress_Deserialize>();
  ch.onmessage = (p) => {
    if (current === o && p.delta) {
      o.arbor = (o.arbor ?? "") + p.delta;
      const pre = document.getElementById("review-arbor-text");
      if (pre) pre.textContent = o.arbor;
    }
  };
  try {
    const text = await call(api.reviewArborDraft(o.prompt.reviewId, ch));
    if (current !== o) return;
    o.arbor = text;
    render();
  } catch (e) {
    if (current === o) o.arbor = null;
    notify(errorText(e), "error");
    render();
  }
}

/** Ctrl+Enter accepts (the edit, when there is one) while the sheet is open. */
document.addEventListener("keydown", (e) => {
  if (!current || !current.view || !(e.ctrlKey && e.key === "Enter")) return;
  e.preventDefault();
  const o = current;
  if (o.text !== o.view!.summary) void send({ action: "edit", summary: o.text }, "Pi writes your edit.");
  else void send({ action: "accept" }, "Pi writes its draft.");
});
