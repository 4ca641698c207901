// The workbench's editor (one section, or the whole summary as raw text) and the two ways a
// summary is rewritten: saving an edit and reverting to the original. Either appends a compaction
// entry at the leaf; nothing earlier in the file changes.

import { api, call } from "../ipc";
import type { SummaryView, SummaryWrite } from "../ipc";
import { button, el } from "../dom";
import type { WorkbenchDeps } from "./bench";
import { replaceSectionBody } from "./pure";
import { ledgerOption, type LedgerOption } from "./ledger";

export class SummaryEditor {
  /** Where the editor opens, above the section cards; empty while it is closed. */
  readonly box: HTMLElement = el("div", "wb-editor-box");
  private editing: { section: number | null } | null = null;
  private ledger: LedgerOption | null = null;
  private busy = false;

  constructor(
    private readonly v: SummaryView,
    private readonly deps: WorkbenchDeps,
    /** Closes the workbench's overlay (a comparison's "Use this" writes from there). */
    private readonly closeOverlay: () => void,
  ) {}

  get isOpen(): boolean {
    return this.box.childElementCount > 0;
  }

  /** section null: the raw text editor. */
  open(section: number | null, text: string): void {
    if (!this.v.editable) {
      this.deps.notify(this.v.editRefusal ?? "This summary cannot be edited here.", "error");
      return;
    }
    this.editing = { section };
    const box = this.box;
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
    const save = button("Save as new entry", () => void this.save(), "primary", "Ctrl+Enter");
    save.id = "wb-save";
    row.appendChild(save);
    const cancel = button("Cancel", () => this.close(), "", "Escape");
    cancel.id = "wb-cancel";
    row.appendChild(cancel);
    if (section !== null) row.appendChild(button("Raw text instead", () => this.open(null, this.editedText() ?? this.v.text)));
    row.appendChild(el("span", "muted small", "Saving appends a compaction entry at the leaf; nothing earlier in the file changes."));
    box.appendChild(row);
    this.ledger = ledgerOption(this.v.entryId, () => this.editedText() ?? this.v.text, "wb-ledger");
    box.appendChild(this.ledger.el);
    ta.focus();
    box.scrollIntoView({ block: "nearest" });
  }

  private editedText(): string | null {
    const ta = this.box.querySelector<HTMLTextAreaElement>("#wb-editor");
    if (!ta || !this.editing) return null;
    if (this.editing.section === null) return ta.value;
    return replaceSectionBody(this.v.sections, this.v.appendixRaw, this.editing.section, ta.value);
  }

  close(): void {
    this.editing = null;
    this.ledger = null;
    this.box.replaceChildren();
  }

  async save(): Promise<void> {
    const text = this.editedText();
    if (text === null || this.busy) return;
    const ledger = this.ledger?.checked() ?? false;
    // Unchanged text with the ledger box checked still saves: the ledger is the change.
    if (text === this.v.text && !ledger) {
      this.deps.notify("Nothing changed; no entry was appended.");
      this.close();
      return;
    }
    await this.write(() => call(api.saveSummaryEdit(this.v.entryId, text, ledger)), "edit");
  }

  async revert(): Promise<void> {
    await this.write(() => call(api.revertSummary(this.v.entryId)), "revert");
  }

  async write(f: () => Promise<SummaryWrite>, what: "edit" | "revert"): Promise<void> {
    this.busy = true;
    try {
      const w = await f();
      this.close();
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
}
