// What the workbench's panels share: the summary shown, the app's hooks, and the calls into the
// workbench that one panel makes on another's behalf (the editor, the overlay).

import type { OpenedSession, SummaryView, SummaryWrite } from "../ipc";
import { button } from "../dom";

export interface WorkbenchDeps {
  /** Reveal an entry on the graph and select it. */
  jumpTo(entryId: string): Promise<void>;
  /** After an append: the new session DTO and the entry to select. */
  afterWrite(s: OpenedSession, entryId: string, note: string): Promise<void>;
  notify(text: string, kind?: "info" | "error"): void;
  report(e: unknown): void;
  /** Bring back… for entries the summary replaced (the preview first). */
  bringBack(entryIds: string[]): void;
}

/** One workbench, as its panels see it (ui/src/summary/workbench.ts). */
export interface Bench {
  readonly v: SummaryView;
  readonly deps: WorkbenchDeps;
  /** The editor on one section (`section` its index) or, with null, on the whole raw text. */
  openEditor(section: number | null, text: string): void;
  /** Appends the original text again (an edit's "Revert to original"). */
  revert(): Promise<void>;
  /** Appends an edit or a revert, then shows the new entry as the leaf. */
  write(f: () => Promise<SummaryWrite>, what: "edit" | "revert"): Promise<void>;
  /** Opens a modal overlay (closing any other) and returns its body. */
  openOverlay(title: string, id: string): HTMLElement;
}

/** A button that reads as a link (an entry id, "open", "diff"). */
export function link(text: string, onClick: () => void, title = ""): HTMLButtonElement {
  return button(text, onClick, "wb-link", title);
}
