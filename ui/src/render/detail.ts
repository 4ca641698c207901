// Entry detail: typed blocks to DOM. Text goes through the safe markdown renderer; tool results
// and thinking start collapsed with their size.

import type { Block, EntryDetail } from "../ipc";
import { formatChars } from "../format";
import { elIn } from "../dom";
import { renderMarkdown } from "./markdown";

function collapsed(doc: Document, title: string, body: HTMLElement, cls: string): HTMLElement {
  const d = elIn(doc, "details", cls);
  d.appendChild(elIn(doc, "summary", undefined, title));
  d.appendChild(body);
  return d;
}

function pre(doc: Document, text: string): HTMLElement {
  const p = elIn(doc, "pre");
  p.appendChild(elIn(doc, "code", undefined, text));
  return p;
}

export function renderBlock(b: Block, doc: Document = document): HTMLElement {
  switch (b.type) {
    case "text":
      return renderMarkdown(b.text, doc);
    case "thinking":
      return collapsed(doc, `Thinking (${formatChars(b.chars)})`, renderMarkdown(b.text, doc), "blk-thinking");
    case "toolCall": {
      const d = elIn(doc, "div", "blk-toolcall");
      d.appendChild(elIn(doc, "div", "blk-title", `Tool call: ${b.name}`));
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
      return elIn(doc, "div", "blk-meta", `[image ${b.mimeType}, ${b.bytes} bytes, not shown]`);
    case "summary": {
      const d = elIn(doc, "div", "blk-summary");
      d.appendChild(elIn(doc, "div", "blk-title", b.title));
      d.appendChild(renderMarkdown(b.text, doc));
      return d;
    }
    case "meta":
      return elIn(doc, "div", "blk-meta", b.text);
  }
}

/** The head row: kind, id, time, label and where the entry stands (leaf, other branch). */
export function renderDetailHead(d: EntryDetail, doc: Document = document): HTMLElement {
  const head = elIn(doc, "div", "detail-head");
  head.appendChild(elIn(doc, "span", "detail-kind", d.role ?? d.entryType));
  head.appendChild(elIn(doc, "span", "detail-id", d.id));
  head.appendChild(elIn(doc, "span", "detail-time", d.timestamp));
  if (d.label) head.appendChild(elIn(doc, "span", "g-label", d.label));
  if (d.isLeaf) head.appendChild(elIn(doc, "span", "g-badge b-leaf", "leaf"));
  else if (!d.onActivePath) head.appendChild(elIn(doc, "span", "g-badge", "other branch"));
  return head;
}

export function renderDetail(d: EntryDetail, doc: Document = document): HTMLElement {
  const root = elIn(doc, "div", "detail");
  root.appendChild(renderDetailHead(d, doc));
  const body = elIn(doc, "div", "detail-body");
  for (const b of d.blocks) body.appendChild(renderBlock(b, doc));
  root.appendChild(body);
  root.appendChild(collapsed(doc, "Raw JSON", pre(doc, d.rawJson), "blk-raw"));
  return root;
}
