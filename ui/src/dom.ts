// Tiny DOM helpers shared by every view. Session content only ever becomes text nodes
// (`textContent`), never markup.

/** The element with this id (the caller knows it exists and what it is). */
export const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;

/** A new element of `doc`, with a class (when not empty) and text (when given). */
export function elIn<K extends keyof HTMLElementTagNameMap>(doc: Document, tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
  const e = doc.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** A new element of the window's document, with a class (when not empty) and text (when given). */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
  return elIn(document, tag, cls, text);
}

/** A new element with these attributes (id, class, type, aria-…) and text (when given). */
export function elAttrs<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

/** A `type="button"` button that runs `onClick`; `title` is its tooltip (none when empty). */
export function button(text: string, onClick: () => void, cls = "", title = ""): HTMLButtonElement {
  const b = el("button", cls, text);
  b.type = "button";
  if (title) b.title = title;
  b.addEventListener("click", onClick);
  return b;
}

/** Calls `fill` the first time `d` is opened (at once if it is open already): a closed
 *  `<details>` is not drawn, but its elements still cost the page their creation and style
 *  (hundreds of list rows took a summary's workbench 15-20 ms on the 100k-entry session). */
export function fillOnOpen(d: HTMLDetailsElement, fill: () => void): void {
  let filled = false;
  const go = () => {
    if (filled || !d.open) return;
    filled = true;
    fill();
  };
  d.addEventListener("toggle", go);
  go();
}
