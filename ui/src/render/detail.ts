// Entry detail: typed blocks to DOM. Text goes through the safe markdown renderer; tool results
// and thinking start collapsed with their size.

import type { Block, EntryDetail } from "../ipc";
import { formatChars } from "../format";
import { renderMarkdown } from "./markdown";

function el<K extends keyof HTMLElementTagNameMap>(doc: Document, tag: K, cls?: string, text?: string) {
  const e = doc.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function collapsed(doc: Document, title: string, body: HTMLElement, cls: string): HTMLElement {
  const d = el(doc, "details", cls);
  d.appendChild(el(doc, "summary", undefined, title));
  d.appendChild(body);
  return d;
}

function pre(doc: Document, text: string): HTMLElement {
  const p = el(doc, "pre");
  p.appendChild(el(doc, "code", undefined, text));
  return p;
}

export function renderBlock(b: Block, doc: Document = document): HTMLElement {
  switch (b.type) {
    case "text":
      return renderMarkdown(b.text, doc);
    case "thinking":
      return collapsed(doc, `Thinking (${formatChars(b.chars)})`, renderMarkdown(b.text, doc), "blk-thinking");
    case "toolCall": {
      const d = el(doc, "div", "blk-toolcall");
      d.appendChild(el(doc, "div", "blk-title", `Tool call: ${b.name}`));
      d.appendChild(pre(doc, b.argumentsJson));
      return d;
    }
    case "toolResult":
      return collapsed(
        doc,
        `${b.isError ? "Error from" : "Result of"} ${b.toolName || "tool"} (${formatChars(b.chars)})`,
        pre(doc, b.text),
        b.isError ? "blk-toolresult error" : "blk-toolresult",
      );
    case "image":
      return el(doc, "div", "blk-meta", `[image ${b.mimeType}, ${b.bytes} bytes, not shown]`);
    case "summary": {
      const d = el(doc, "div", "blk-summary");
      d.appendChild(el(doc, "div", "blk-title", b.title));
      d.appendChild(renderMarkdown(b.text, doc));
      return d;
    }
    case "meta":
      return el(doc, "div", "blk-meta", b.text);
  }
}

/** The head row: kind, id, time, label and where the entry stands (leaf, other branch). */
export function renderDetailHead(d: EntryDetail, doc: Document = document): HTMLElement {
  const head = el(doc, "div", "detail-head");
  head.appendChild(el(doc, "span", "detail-kind", d.role ?? d.entryType));
  head.appendChild(el(doc, "span", "detail-id", d.id));
  head.appendChild(el(doc, "span", "detail-time", d.timestamp));
  if (d.label) head.appendChild(el(doc, "span", "g-label", d.label));
  if (d.isLeaf) head.appendChild(el(doc, "span", "g-badge b-leaf", "leaf"));
  else if (!d.onActivePath) head.appendChild(el(doc, "span", "g-badge", "other branch"));
  return head;
}

export function renderDetail(d: EntryDetail, doc: Document = document): HTMLElement {
  const root = el(doc, "div", "detail");
  root.appendChild(renderDetailHead(d, doc));
  const body = el(doc, "div", "detail-body");
  for (const b of d.blocks) body.appendChild(renderBlock(b, doc));
  root.appendChild(body);
  root.appendChild(collapsed(doc, "Raw JSON", pre(doc, d.rawJson), "blk-raw"));
  return root;
}
