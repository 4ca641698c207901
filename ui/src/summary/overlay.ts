// The workbench's modal overlay (the diff and the re-summarize comparison): one at a time, over
// the whole window; Escape or its Close button closes it.

import { button, el } from "../dom";

export class Overlay {
  private shown: HTMLElement | null = null;

  get isOpen(): boolean {
    return this.shown !== null;
  }

  /** Opens an overlay (closing any other) and returns its body. */
  open(title: string, id: string): HTMLElement {
    this.close();
    const o = el("div", "wb-overlay");
    o.id = id;
    const box = el("div", "wb-overlay-box");
    const head = el("div", "wb-overlay-head");
    head.appendChild(el("b", undefined, title));
    const close = button("Close (Esc)", () => this.close());
    close.className = "wb-close";
    head.appendChild(close);
    box.appendChild(head);
    const body = el("div", "wb-overlay-body");
    box.appendChild(body);
    o.appendChild(box);
    document.body.appendChild(o);
    this.shown = o;
    return body;
  }

  close(): void {
    this.shown?.remove();
    this.shown = null;
  }
}
