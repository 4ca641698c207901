// The summary workbench (issue 11), shown in the Entry pane when a compaction or branch summary
// is selected: section cards, files, span, author, history, drop alarm and retention; the editor
// (per section or raw text), the section-aware diff, and re-summarize & compare.
// Session content is untrusted: every piece of it becomes text nodes (renderMarkdown for free text).

import { Channel } from "@tauri-apps/api/core";
import { api, call, CommandError } from "../ipc";
import type {
  OpenedSession_Serialize as OpenedSession,
  ResummaryView_Serialize as ResummaryView,
  SectionView_Serialize as SectionView,
  SummaryDiffView_Serialize as SummaryDiffView,
  SummaryProgress,
  SummaryView_Serialize as SummaryView,
  SummaryWrite_Serialize as SummaryWrite,
} from "../ipc";
import { renderMarkdown } from "../render/markdown";
import { formatTokens } from "../format";
import { copyText } from "../session/copy";
import { addBack, authorLabel, bodyOf, diffCounts, isPlaceholder, replaceSectionBody, scoreLabel, sectionChanged, sectionCounts } from "./pure";
import "./summary.css";

export interface WorkbenchDeps {
  /** Reveal an entry on the graph and select it. */
  jumpTo(entryId: string): Promise<void>;
  /** After an append: the new session DTO and the entry to select. */
  afterWrite(s: OpenedSession, entryId: string, note: string): Promise<void>;
  notify(text: string, kind?: "info" | "error"): void;
  report(e: unknown): void;
}

function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function button(text: string, onClick: () => void, cls = "", title = ""): HTMLButtonElement {
  const b = el("button", cls, text);
  b.type = "button";
  if (title) b.title = title;
  b.addEventListener("click", onClick);
  return b;
}

function link(text: string, onClick: () => void, title = ""): HTMLButtonElement {
  return button(text, onClick, "wb-link", title);
}

const ROLE_CLASS: Record<string, string> = {
  goal: "r-goal",
  constraints: "r-constraints",
  done: "r-done",
  inProgress: "r-progress",
  blocked: "r-blocked",
  decisions: "r-decisions",
  nextSteps: "r-next",
  criticalContext: "r-critical",
};

/** One workbench instance per selected summary. */
export class Workbench {
  readonly root: HTMLElement;
  private editorBox: HTMLElement;
  private overlay: HTMLElement | null = null;
  private keyHandler = (e: KeyboardEvent) => this.onKey(e);

  constructor(private v: SummaryView, private deps: WorkbenchDeps) {
    this.root = el("div", "workbench");
    this.root.id = "workbench";
    this.root.dataset.entryId = v.entryId;
    this.editorBox = el("div", "wb-editor-box");
    document.addEventListener("keydown", this.keyHandler);
    this.render();
  }

  dispose(): void {
    document.removeEventListener("keydown", this.keyHandler);
    this.closeOverlay();
  }

  private onKey(e: KeyboardEvent): void {
    if (!this.root.isConnected) {
      this.dispose();
      return;
    }
    if (e.key === "Escape") {
      if (this.overlay) {
        e.preventDefault();
        this.closeOverlay();
      } else if (this.editorBox.childElementCount) {
        e.preventDefault();
        this.closeEditor();
      }
    } else if (e.key === "Enter" && (e.ctrlKey || e.metaKey) && this.editorBox.childElementCount) {
      e.preventDefault();
      void this.saveEditor();
    }
  }

  // ---- inspect --------------------------------------------------------------------------------

  private render(): void {
    const v = this.v;
    const r = this.root;
    r.replaceChildren();
    r.appendChild(this.header());
    r.appendChild(this.editorBox);
    r.appendChild(this.alarm());
    r.appendChild(this.retention());
    const main = v.sections.filter((s) => !s.turnPrefix);
    const prefix = v.sections.filter((s) => s.turnPrefix);
    const cards = el("div", "wb-cards");
    cards.id = "wb-sections";
    for (const s of main) cards.appendChild(this.card(s));
    r.appendChild(cards);
    if (prefix.length) {
      const box = el("div", "wb-prefix");
      box.id = "wb-turn-prefix";
      box.appendChild(el("div", "wb-h", "Turn context (split turn): the summary of the turn's first part, kept apart"));
      for (const s of prefix) box.appendChild(this.card(s));
      r.appendChild(box);
    }
    r.appendChild(this.files());
    r.appendChild(this.history());
    r.appendChild(el("div", "muted small wb-timing", `computed in ${(v.computeMs ?? 0).toFixed(1)} ms`));
  }

  private header(): HTMLElement {
    const v = this.v;
    const h = el("div", "wb-head");
    const title = el("div", "wb-title");
    title.appendChild(el("b", undefined, v.kind === "compaction" ? "Compaction summary" : "Branch summary"));
    const score = el("span", "wb-score", scoreLabel(v.check.retention.mentioned, v.check.retention.total));
    score.id = "wb-score";
    score.title = "Retention: facts of the summarized span that the summary mentions";
    title.appendChild(score);
    if (v.check.dropped.length) {
      const d = el("span", "wb-dropped-badge", `⚠ ${v.check.dropped.length} dropped`);
      d.id = "wb-dropped-badge";
      title.appendChild(d);
    }
    h.appendChild(title);
    const facts = el("dl", "wb-facts");
    const row = (k: string, ...vals: (string | Node)[]) => {
      facts.appendChild(el("dt", undefined, k));
      const dd = el("dd");
      for (const x of vals) dd.append(x);
      facts.appendChild(dd);
    };
    row("written by", authorLabel(v.author, v.authorDetail));
    if (v.tokensBefore !== null) row("tokensBefore", formatTokens(v.tokensBefore));
    const sp = v.span;
    if (sp.count > 0 && sp.firstId) {
      const reveal = link(`${sp.count} entries`, () => void this.deps.jumpTo(sp.firstId!), "Reveal and select the span's first entry on the graph");
      reveal.id = "wb-span-link";
      row(
        "span",
        reveal,
        ` ${sp.firstId} → ${sp.lastId ?? "?"}`,
        sp.exact ? "" : " (inferred: the branch that was left)",
      );
    } else {
      row("span", "nothing before it (empty span)");
    }
    if (v.firstKeptEntryId) {
      const fk = v.firstKeptFound
        ? link(v.firstKeptEntryId, () => void this.deps.jumpTo(v.firstKeptEntryId!), "Reveal the first kept entry")
        : el("span", "wb-warn", `${v.firstKeptEntryId} (not in this file: Pi keeps everything after the compaction only)`);
      row("firstKeptEntryId", fk);
    }
    if (v.check.previousEntryId) {
      const prev = v.check.previousEntryId;
      row("previous", link(prev, () => void this.deps.jumpTo(prev)), " ", link("diff", () => void this.openDiff(prev, v.entryId)));
    }
    h.appendChild(facts);
    const actions = el("div", "wb-actions");
    const edit = button("Edit text", () => this.openEditor(null, v.text), "", v.editable ? "Edit the whole summary as text" : v.editRefusal ?? "");
    edit.id = "wb-edit-raw";
    edit.disabled = !v.editable;
    actions.appendChild(edit);
    // The engine picks what to compare with (an edit: its original; a compaction: the one before
    // it; a branch summary: the summary before it on its path); with nothing, the button says why.
    const isVersion = v.history.length > 1 && v.history[0]?.entryId !== v.entryId;
    const diffFrom = v.diffBaseId;
    const diff = button("Diff…", () => { if (diffFrom) void this.openDiff(diffFrom, v.entryId); }, "", v.diffBaseNote);
    diff.id = "wb-diff";
    diff.disabled = !diffFrom;
    actions.appendChild(diff);
    const re = button("Re-summarize & compare…", () => this.openResummarize());
    re.id = "wb-resummarize";
    actions.appendChild(re);
    const cp = button("Copy", () => void copyText(v.text, "the summary's markdown", this.deps), "", "Copy the summary's markdown to the clipboard");
    cp.id = "wb-copy";
    actions.appendChild(cp);
    if (isVersion && v.history.find((h) => h.entryId === v.entryId)?.kind === "edit") {
      const rv = button(`Revert to original`, () => void this.revert(), "", v.editable ? `Append the text of ${v.history[0].entryId} again` : v.editRefusal ?? "");
      rv.id = "wb-revert";
      rv.disabled = !v.editable;
      actions.appendChild(rv);
    }
    h.appendChild(actions);
    if (!v.editable && v.editRefusal) h.appendChild(el("div", "muted small wb-refusal", v.editRefusal));
    return h;
  }

  private card(s: SectionView): HTMLElement {
    const d = el("details", `wb-card ${ROLE_CLASS[s.role] ?? ""}`);
    d.open = true;
    d.dataset.section = s.name;
    d.dataset.index = String(s.index);
    const sum = el("summary");
    sum.appendChild(el("span", "wb-card-title", s.name || "(untitled)"));
    sum.appendChild(el("span", "wb-count", sectionCounts(s)));
    if (this.v.editable) {
      const e = button("edit", () => this.openEditor(s.index, bodyOf(s)), "wb-card-edit", "Edit this section");
      e.addEventListener("click", (ev) => ev.preventDefault());
      sum.appendChild(e);
    }
    d.appendChild(sum);
    if (s.text.trim()) d.appendChild(renderMarkdown(s.text));
    if (s.items.length) {
      const ul = el("ul", "wb-items");
      for (const it of s.items) {
        const li = el("li", `wb-item d${Math.min(it.depth, 4)}`);
        if (it.marker === "checkbox") {
          const box = el("span", `wb-box ${it.checked ? "on" : "off"}`, it.checked ? "☑" : "☐");
          box.title = it.checked ? "checked" : "not checked";
          li.appendChild(box);
        } else if (it.marker === "numbered") {
          li.appendChild(el("span", "wb-num", "#"));
        } else {
          li.appendChild(el("span", "wb-num", "•"));
        }
        li.appendChild(renderMarkdown(it.text));
        ul.appendChild(li);
      }
      d.appendChild(ul);
    }
    if (!s.items.length && !s.text.trim()) d.appendChild(el("div", "muted small", "(empty)"));
    return d;
  }

  private alarm(): HTMLElement {
    const c = this.v.check;
    const box = el("div", "wb-alarm");
    box.id = "wb-alarm";
    if (!c.previousEntryId) {
      box.appendChild(el("div", "muted small", this.v.kind === "compaction" ? "First compaction on this path: nothing to compare with." : ""));
      return box;
    }
    const moved = c.moved.filter((m) => !isPlaceholder(m.text));
    if (!c.dropped.length && !moved.length) {
      box.appendChild(el("div", "wb-ok small", `Carries every constraint, done item, decision and critical fact of ${c.previousEntryId}.`));
      return box;
    }
    if (c.dropped.length) {
      box.appendChild(el("div", "wb-h wb-bad", `Drop alarm: ${c.dropped.length} item${c.dropped.length === 1 ? "" : "s"} of ${c.previousEntryId} no longer carried`));
      const ul = el("ul", "wb-dropped");
      for (const d of c.dropped) {
        const li = el("li");
        li.appendChild(el("span", "wb-sec", d.section));
        li.appendChild(el("span", "wb-prev", d.text));
        const b = button("Add back", () => this.addBack(d), "wb-addback", this.v.editable ? "Open the editor with this item restored" : this.v.editRefusal ?? "");
        b.disabled = !this.v.editable;
        li.appendChild(b);
        ul.appendChild(li);
      }
      box.appendChild(ul);
    }
    if (moved.length) {
      box.appendChild(el("div", "wb-h", "Moved since the previous summary"));
      const ul = el("ul", "wb-moved");
      for (const m of moved) ul.appendChild(el("li", undefined, `${m.text}  (${m.from} → ${m.to})`));
      box.appendChild(ul);
    }
    return box;
  }

  private retention(): HTMLElement {
    const r = this.v.check.retention;
    const d = el("details", "wb-retention");
    d.id = "wb-retention";
    d.appendChild(el("summary", undefined, `Retention: ${scoreLabel(r.mentioned, r.total)} of the span mentioned`));
    const ul = el("ul", "wb-factlist");
    const sorted = [...r.facts].sort((a, b) => Number(a.mentioned) - Number(b.mentioned));
    for (const f of sorted.slice(0, 300)) {
      const li = el("li", f.mentioned ? "yes" : "no");
      li.appendChild(el("span", "wb-mark", f.mentioned ? "✓" : "✗"));
      li.appendChild(el("span", `wb-kind k-${f.kind}`, f.kind));
      const t = el("span", "wb-fact", f.text);
      t.title = f.text;
      li.appendChild(t);
      li.appendChild(link(f.sourceEntryId, () => void this.deps.jumpTo(f.sourceEntryId), "Go to the entry this fact comes from"));
      ul.appendChild(li);
    }
    if (r.facts.length > 300) ul.appendChild(el("li", "muted", `… and ${r.facts.length - 300} more`));
    d.appendChild(ul);
    return d;
  }

  private files(): HTMLElement {
    const v = this.v;
    const box = el("div", "wb-files");
    const list = (title: string, files: string[], id: string) => {
      const d = el("details", "wb-filelist");
      d.id = id;
      d.appendChild(el("summary", undefined, `${title} (${files.length})`));
      const ul = el("ul");
      for (const f of files) ul.appendChild(el("li", "mono", f));
      if (!files.length) ul.appendChild(el("li", "muted", "(none)"));
      d.appendChild(ul);
      return d;
    };
    box.appendChild(list("Read files", v.readFiles, "wb-read-files"));
    box.appendChild(list("Modified files", v.modifiedFiles, "wb-modified-files"));
    return box;
  }

  private history(): HTMLElement {
    const v = this.v;
    const box = el("div", "wb-history");
    box.id = "wb-history";
    if (v.history.length <= 1) {
      box.appendChild(el("div", "muted small", "History: the original, never edited."));
      return box;
    }
    box.appendChild(el("div", "wb-h", "History"));
    const ol = el("ol", "wb-chain");
    for (const h of v.history) {
      const li = el("li", h.entryId === v.entryId ? "current" : "");
      li.dataset.entryId = h.entryId;
      li.appendChild(el("span", `wb-vkind v-${h.kind}`, h.kind));
      li.appendChild(el("span", "mono", h.entryId));
      li.appendChild(el("span", "muted small", h.timestamp));
      if (h.entryId !== v.entryId) {
        li.appendChild(link("open", () => void this.deps.jumpTo(h.entryId)));
        li.appendChild(link("diff", () => void this.openDiff(h.entryId, v.entryId)));
      } else li.appendChild(el("span", "muted small", "(this one)"));
      ol.appendChild(li);
    }
    box.appendChild(ol);
    return box;
  }

  // ---- editor ---------------------------------------------------------------------------------

  private editing: { section: number | null } | null = null;

  /** section null: the raw text editor. */
  openEditor(section: number | null, text: string): void {
    if (!this.v.editable) {
      this.deps.notify(this.v.editRefusal ?? "This summary cannot be edited here.", "error");
      return;
    }
    this.editing = { section };
    const box = this.editorBox;
    box.replaceChildren();
    const s = section === null ? null : this.v.sections.find((x) => x.index === section);
    box.appendChild(el("div", "wb-h", s ? `Editing section “${s.name}”` : "Editing the whole summary (raw text)"));
    const ta = el("textarea", "wb-textarea");
    ta.id = "wb-editor";
    ta.value = text;
    ta.rows = Math.min(24, Math.max(6, text.split("\n").length + 1));
    ta.spellcheck = false;
    box.appendChild(ta);
    const row = el("div", "wb-actions");
    const save = button("Save as new entry", () => void this.saveEditor(), "primary", "Ctrl+Enter");
    save.id = "wb-save";
    row.appendChild(save);
    const cancel = button("Cancel", () => this.closeEditor(), "", "Escape");
    cancel.id = "wb-cancel";
    row.appendChild(cancel);
    if (section !== null) row.appendChild(button("Raw text instead", () => this.openEditor(null, this.editedText() ?? this.v.text)));
    row.appendChild(el("span", "muted small", "Saving appends a compaction entry at the leaf; nothing earlier in the file changes."));
    box.appendChild(row);
    ta.focus();
    box.scrollIntoView({ block: "nearest" });
  }

  private editedText(): string | null {
    const ta = this.editorBox.querySelector<HTMLTextAreaElement>("#wb-editor");
    if (!ta || !this.editing) return null;
    if (this.editing.section === null) return ta.value;
    return replaceSectionBody(this.v.sections, this.v.appendixRaw, this.editing.section, ta.value);
  }

  closeEditor(): void {
    this.editing = null;
    this.editorBox.replaceChildren();
  }

  private busy = false;

  private async saveEditor(): Promise<void> {
    const text = this.editedText();
    if (text === null || this.busy) return;
    if (text === this.v.text) {
      this.deps.notify("Nothing changed; no entry was appended.");
      this.closeEditor();
      return;
    }
    await this.write(() => call(api.saveSummaryEdit(this.v.entryId, text)), "edit");
  }

  private async revert(): Promise<void> {
    await this.write(() => call(api.revertSummary(this.v.entryId)), "revert");
  }

  private async write(f: () => Promise<SummaryWrite>, what: "edit" | "revert"): Promise<void> {
    this.busy = true;
    try {
      const w = await f();
      this.closeEditor();
      this.closeOverlay();
      const note =
        what === "edit"
          ? `Saved: compaction ${w.entryId} (an edit of ${w.editedFrom}) was appended at the leaf; Pi builds its context from it.`
          : `Reverted: compaction ${w.entryId} with the original text was appended at the leaf.`;
      await this.deps.afterWrite(w.session, w.entryId, note + (w.synced ? "" : " (the disk did not confirm the write)"));
    } catch (e) {
      this.deps.report(e);
    } finally {
      this.busy = false;
    }
  }

  private addBack(d: { section: string; text: string }): void {
    const a = addBack(this.v.sections, this.v.appendixRaw, d);
    this.openEditor(a.sectionIndex, a.text);
  }

  // ---- overlays: diff and re-summarize --------------------------------------------------------

  private openOverlay(title: string, id: string): HTMLElement {
    this.closeOverlay();
    const o = el("div", "wb-overlay");
    o.id = id;
    const box = el("div", "wb-overlay-box");
    const head = el("div", "wb-overlay-head");
    head.appendChild(el("b", undefined, title));
    const close = button("Close (Esc)", () => this.closeOverlay());
    close.className = "wb-close";
    head.appendChild(close);
    box.appendChild(head);
    const body = el("div", "wb-overlay-body");
    box.appendChild(body);
    o.appendChild(box);
    document.body.appendChild(o);
    this.overlay = o;
    return body;
  }

  closeOverlay(): void {
    this.overlay?.remove();
    this.overlay = null;
  }

  private summaryOptions(select: HTMLSelectElement, chosen: string): void {
    const v = this.v;
    const seen = new Set<string>();
    const add = (id: string, label: string) => {
      if (seen.has(id)) return;
      seen.add(id);
      const o = el("option", undefined, label);
      o.value = id;
      if (id === chosen) o.selected = true;
      select.appendChild(o);
    };
    add(v.entryId, `${v.entryId} (this one)`);
    if (v.diffBaseId) add(v.diffBaseId, `${v.diffBaseId} (${v.diffBaseNote.replace(/^Compare with /, "").replace(/, \S+.*$/, "")})`);
    if (v.check.previousEntryId) add(v.check.previousEntryId, `${v.check.previousEntryId} (previous compaction on the path)`);
    if (v.history[0]) add(v.history[0].entryId, `${v.history[0].entryId} (original)`);
    for (const h of v.history) add(h.entryId, `${h.entryId} (${h.kind})`);
    for (const o of v.others) add(o.entryId, `${o.entryId} ${o.kind === "compaction" ? "compaction" : "branch summary"} ${o.timestamp.slice(0, 16)}${o.onPath ? "" : " (other branch)"}`);
  }

  async openDiff(fromId: string, toId: string): Promise<void> {
    const body = this.openOverlay("Compare summaries", "wb-diff-view");
    const pick = el("div", "wb-actions");
    const from = el("select");
    from.id = "wb-diff-from";
    const to = el("select");
    to.id = "wb-diff-to";
    this.summaryOptions(from, fromId);
    this.summaryOptions(to, toId);
    pick.append("from ", from, " to ", to);
    body.appendChild(pick);
    const out = el("div", "wb-diff-out");
    body.appendChild(out);
    const run = async () => {
      out.replaceChildren(el("div", "muted", "…"));
      try {
        const d = await call(api.diffSummaries(from.value, to.value));
        out.replaceChildren(renderDiff(d));
      } catch (e) {
        out.replaceChildren(el("div", "wb-bad", e instanceof CommandError ? `${e.ipc.message}. ${e.ipc.hint}` : String(e)));
      }
    };
    from.addEventListener("change", () => void run());
    to.addEventListener("change", () => void run());
    await run();
  }

  private openResummarize(): void {
    const body = this.openOverlay("Re-summarize the same span and compare (nothing is written)", "wb-resum-view");
    const form = el("div", "wb-resum-form");
    const provider = el("select");
    provider.id = "wb-resum-provider";
    for (const [val, label] of [["", "the model chosen in the Model panel"], ["offline", "offline summarizer"], ["openai", "OpenAI-compatible"], ["anthropic", "Anthropic"], ["gemini", "Google Gemini"]]) {
      const o = el("option", undefined, label);
      o.value = val;
      provider.appendChild(o);
    }
    const model = el("input");
    model.id = "wb-resum-model";
    model.placeholder = "model (for another provider)";
    const instr = el("textarea");
    instr.id = "wb-resum-instructions";
    instr.rows = 2;
    instr.placeholder = "Optional instructions (what to keep, what to focus on)";
    const go = button("Generate", () => void start(), "primary");
    go.id = "wb-resum-go";
    const stop = button("Cancel", () => void call(api.cancelSummary()).catch(() => {}));
    stop.disabled = true;
    form.append("Summarize with ", provider, " ", model, instr, go, stop);
    body.appendChild(form);
    const progress = el("pre", "wb-progress");
    body.appendChild(progress);
    const out = el("div", "wb-resum-out");
    out.id = "wb-resum-out";
    body.appendChild(out);
    const start = async () => {
      go.disabled = true;
      stop.disabled = false;
      progress.textContent = "";
      out.replaceChildren();
      const ch = new Channel<SummaryProgress>();
      ch.onmessage = (p) => {
        if (p.kind === "text" && p.delta) progress.textContent = (progress.textContent ?? "") + p.delta;
        else if (p.message) progress.textContent = (progress.textContent ?? "") + `\n[${p.message}]\n`;
      };
      try {
        const r = await call(api.resummarizeSummary(this.v.entryId, provider.value || null, model.value.trim() || null, instr.value.trim() || null, ch));
        progress.textContent = `${r.summarizer} · ${Math.round(r.elapsedMs ?? 0)} ms${r.notices.length ? ` · ${r.notices.join("; ")}` : ""}`;
        out.replaceChildren(this.compare(r));
      } catch (e) {
        progress.textContent = e instanceof CommandError ? `${e.ipc.message}. ${e.ipc.hint}` : String(e);
      } finally {
        go.disabled = false;
        stop.disabled = true;
      }
    };
  }

  private compare(r: ResummaryView): HTMLElement {
    const box = el("div", "wb-compare");
    const cols = el("div", "wb-cols");
    const col = (title: string, score: string, text: string, id: string) => {
      const c = el("div", "wb-col");
      c.id = id;
      const h = el("div", "wb-h");
      h.append(title, " ", el("span", "wb-score", score));
      c.appendChild(h);
      c.appendChild(renderMarkdown(text));
      return c;
    };
    cols.appendChild(col(`Existing (${this.v.entryId})`, scoreLabel(r.retentionExisting.mentioned, r.retentionExisting.total), this.v.text, "wb-col-existing"));
    cols.appendChild(col(`Alternative (${r.summarizer})`, scoreLabel(r.retentionNew.mentioned, r.retentionNew.total), r.text, "wb-col-new"));
    box.appendChild(cols);
    const actions = el("div", "wb-actions");
    const use = button("Use this", () => void this.write(() => call(api.saveSummaryEdit(this.v.entryId, r.text)), "edit"), "primary", this.v.editRefusal ?? "Append it as an edit of this summary");
    use.id = "wb-use-this";
    use.disabled = !this.v.editable;
    actions.appendChild(use);
    if (!this.v.editable && this.v.editRefusal) actions.appendChild(el("span", "muted small", this.v.editRefusal));
    box.appendChild(actions);
    box.appendChild(el("div", "wb-h", "Diff: existing → alternative"));
    box.appendChild(renderDiff(r.diff));
    return box;
  }
}

/** The section-aware diff as DOM (text nodes only). */
export function renderDiff(d: SummaryDiffView): HTMLElement {
  const root = el("div", "wb-diff");
  root.dataset.from = d.from ?? "";
  root.dataset.to = d.to ?? "";
  const changed = d.sections.filter(sectionChanged);
  const movedItems = d.moved.filter((m) => !isPlaceholder(m.text));
  if (!changed.length && !movedItems.length && !d.filesAdded.length && !d.filesRemoved.length) {
    root.appendChild(el("div", "wb-ok", "No difference in sections, items or files."));
  }
  if (movedItems.length) {
    const m = el("div", "wb-dsec moved");
    m.appendChild(el("div", "wb-h", `Moved (${movedItems.length})`));
    for (const x of movedItems) {
      const line = el("div", "wb-dline mv");
      line.append(el("span", "wb-sign", "↷"), el("span", undefined, x.text), el("span", "muted small", `  ${x.from} → ${x.to}`));
      m.appendChild(line);
    }
    root.appendChild(m);
  }
  for (const s of d.sections) {
    const sec = el("details", "wb-dsec");
    sec.open = sectionChanged(s);
    sec.dataset.section = s.title;
    const sum = el("summary");
    sum.append(el("span", "wb-card-title", s.title || "(untitled)"), el("span", "wb-count", diffCounts(s)));
    if (s.textChanged) sum.appendChild(el("span", "wb-count", "text changed"));
    sec.appendChild(sum);
    for (const a of s.added) {
      const line = el("div", "wb-dline add");
      line.append(el("span", "wb-sign", "+"), el("span", undefined, a));
      sec.appendChild(line);
    }
    for (const r of s.removed) {
      const line = el("div", "wb-dline del");
      line.append(el("span", "wb-sign", "−"), el("span", undefined, r));
      sec.appendChild(line);
    }
    for (const w of s.reworded) {
      const line = el("div", "wb-dline rew");
      line.appendChild(el("span", "wb-sign", "~"));
      const words = el("span");
      for (const c of w.words) words.appendChild(el("span", c.op === "insert" ? "w-ins" : c.op === "delete" ? "w-del" : "w-eq", c.text));
      line.appendChild(words);
      sec.appendChild(line);
    }
    if (s.unchanged.length) {
      const u = el("details", "wb-unchanged");
      u.appendChild(el("summary", undefined, `${s.unchanged.length} unchanged`));
      for (const x of s.unchanged) u.appendChild(el("div", "wb-dline eq", x));
      sec.appendChild(u);
    }
    root.appendChild(sec);
  }
  if (d.filesAdded.length || d.filesRemoved.length) {
    const f = el("div", "wb-dsec");
    f.appendChild(el("div", "wb-h", "Files"));
    for (const x of d.filesAdded) f.appendChild(el("div", "wb-dline add", `+ ${x}`));
    for (const x of d.filesRemoved) f.appendChild(el("div", "wb-dline del", `− ${x}`));
    root.appendChild(f);
  }
  return root;
}

let current: Workbench | null = null;

/** Shows the workbench of `entryId` in `host` (replacing the plain summary block). */
export async function showWorkbench(host: HTMLElement, entryId: string, deps: WorkbenchDeps): Promise<Workbench | null> {
  current?.dispose();
  current = null;
  const v = await call(api.getSummaryView(entryId));
  // The selection may have moved on while the view was computed.
  if (host.dataset.entryId !== entryId) return null;
  const wb = new Workbench(v, deps);
  current = wb;
  host.querySelector(".blk-summary")?.replaceWith(wb.root);
  if (!wb.root.isConnected) host.appendChild(wb.root);
  return wb;
}

/** Drops the workbench when something else is selected. */
export function hideWorkbench(): void {
  current?.dispose();
  current = null;
}
