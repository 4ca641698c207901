// The summary workbench, shown in the Entry pane when a compaction or branch summary is selected.
// This file holds the workbench itself (its keys, and the order of its panels); each panel is a
// file of its own: the head (head.ts), the editor with edit and revert (editor.ts), the drop
// alarm and retention (checks.ts), quality and citations (quality.ts), the section cards, files
// and history (cards.ts), the diff
// (diff.ts) and re-summarize & compare (resummarize.ts), the latter two in an overlay
// (overlay.ts). Session content is untrusted: every piece of it becomes text nodes
// (renderMarkdown for free text).

import { api, call } from "../ipc";
import type { SummaryView, SummaryWrite } from "../ipc";
import { el } from "../dom";
import type { Bench, WorkbenchDeps } from "./bench";
import { renderFiles, renderHistory, renderSections } from "./cards";
import { renderAlarm, renderRetention } from "./checks";
import { SummaryEditor } from "./editor";
import { renderHead } from "./head";
import { Overlay } from "./overlay";
import { applyCitations, fillQuality, loadQuality, renderQualityBox } from "./quality";
import "./summary.css";

export type { WorkbenchDeps } from "./bench";

/** One workbench instance per selected summary. */
export class Workbench implements Bench {
  readonly root: HTMLElement;
  private readonly editor: SummaryEditor;
  private readonly overlay = new Overlay();
  private keyHandler = (e: KeyboardEvent) => this.onKey(e);

  constructor(readonly v: SummaryView, readonly deps: WorkbenchDeps) {
    this.root = el("div", "workbench");
    this.root.id = "workbench";
    this.root.dataset.entryId = v.entryId;
    this.editor = new SummaryEditor(v, deps, () => this.closeOverlay());
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
      if (this.overlay.isOpen) {
        e.preventDefault();
        this.closeOverlay();
      } else if (this.editor.isOpen) {
        e.preventDefault();
        this.closeEditor();
      }
    } else if (e.key === "Enter" && (e.ctrlKey || e.metaKey) && this.editor.isOpen) {
      e.preventDefault();
      void this.editor.save();
    }
  }

  private render(): void {
    const v = this.v;
    const r = this.root;
    r.replaceChildren();
    r.appendChild(renderHead(this));
    r.appendChild(this.editor.box);
    r.appendChild(renderAlarm(this));
    const quality = renderQualityBox();
    r.appendChild(quality);
    r.appendChild(renderRetention(this));
    for (const box of renderSections(this)) r.appendChild(box);
    r.appendChild(renderFiles(v));
    r.appendChild(renderHistory(this));
    r.appendChild(el("div", "muted small wb-timing", `computed in ${(v.computeMs ?? 0).toFixed(1)} ms`));
    // The judgement costs up to ~20 ms on a big span: it fills in after the workbench is drawn.
    void loadQuality(this, r).then((q) => {
      if (!q) return;
      fillQuality(this, quality, q);
      applyCitations(this, r, q);
      r.dataset.qualityDone = "1";
    });
  }

  // ---- what the panels call (Bench) -----------------------------------------------------------

  /** section null: the raw text editor. */
  openEditor(section: number | null, text: string): void {
    this.editor.open(section, text);
  }

  closeEditor(): void {
    this.editor.close();
  }

  revert(): Promise<void> {
    return this.editor.revert();
  }

  write(f: () => Promise<SummaryWrite>, what: "edit" | "revert"): Promise<void> {
    return this.editor.write(f, what);
  }

  openOverlay(title: string, id: string): HTMLElement {
    return this.overlay.open(title, id);
  }

  closeOverlay(): void {
    this.overlay.close();
  }
}

let current: Workbench | null = null;
/** The last workbench asked for: views are made off the app's main thread, so an earlier
 * request (the same summary before a Continue moved the leaf) can answer after a later one. */
let asked = 0;
/** A Continue on its way (see [`holdWorkbenchDuring`]). */
let holding: Promise<void> | null = null;

/** Runs `work` (a Continue) with the workbenches whose views arrive meanwhile held until it is
 *  over. A Continue draws the selection anew, with a workbench of its own if it is a summary, so
 *  a view asked for by the selection before it (a summary clicked, then Continue at once) would
 *  be laid out for nothing, in the middle of the Continue: some 30 ms of text layout that the
 *  Continue's answer waited behind. Held, it is dropped once the Continue has drawn its own
 *  selection, or drawn after all if the Continue failed. */
export async function holdWorkbenchDuring(work: Promise<void>): Promise<void> {
  const h = work.then(
    () => {},
    () => {},
  );
  holding = h;
  try {
    await work;
  } finally {
    if (holding === h) holding = null;
  }
}

/** Shows the workbench of `entryId` in `host` (replacing the plain summary block). */
export async function showWorkbench(host: HTMLElement, entryId: string, deps: WorkbenchDeps): Promise<Workbench | null> {
  current?.dispose();
  current = null;
  const mine = ++asked;
  const v = await call(api.getSummaryView(entryId));
  while (holding) await holding;
  // The selection may have moved on while the view was computed, or a newer view been asked for.
  if (host.dataset.entryId !== entryId || mine !== asked) return null;
  const wb = new Workbench(v, deps);
  current = wb;
  host.querySelector(".blk-summary")?.replaceWith(wb.root);
  if (!wb.root.isConnected) host.appendChild(wb.root);
  return wb;
}

/** Drops the workbench when something else is selected. */
export function hideWorkbench(): void {
  asked++;
  current?.dispose();
  current = null;
}
