// Context view: what the model would see from the selected node, with a stacked token bar.

import type { ContextView } from "../ipc";
import { el } from "../dom";
import { CATEGORY_LABELS, formatTokens, stackSegments } from "../format";

export function renderContext(v: ContextView, onPick: (entryId: string) => void): HTMLElement {
  const root = el("div", "context");
  const head = el("div", "ctx-head");
  const total = el("span", undefined, `${formatTokens(v.estimatedTokens)} tokens estimated`);
  total.id = "context-total";
  total.dataset.tokens = String(v.estimatedTokens);
  head.appendChild(total);
  const leaf = el("span", "ctx-leaf", v.leafId ? `as if ${v.leafId} were the leaf` : "empty path");
  leaf.id = "context-leaf";
  leaf.dataset.leaf = v.leafId ?? "";
  head.appendChild(leaf);
  root.appendChild(head);
  root.appendChild(el("div", "ctx-model muted small", `model ${v.model ?? "(none yet)"} · thinking ${v.thinkingLevel}`));

  const { segments, thresholdPct } = stackSegments(v.categories, v.contextWindow, v.threshold);
  const bar = el("div", "ctx-bar");
  for (const s of segments) {
    const seg = el("div", `seg seg-${s.key}`);
    seg.style.width = `${s.width}%`;
    seg.title = `${CATEGORY_LABELS[s.key] ?? s.key}: ${s.tokens} tokens`;
    bar.appendChild(seg);
  }
  const line = el("div", "ctx-threshold");
  line.style.left = `${Math.min(100, thresholdPct)}%`;
  line.title = `threshold ${v.threshold} = window ${v.contextWindow} − reserve ${v.reserveTokens}`;
  bar.appendChild(line);
  root.appendChild(bar);

  const legend = el("div", "ctx-legend");
  for (const c of v.categories) {
    const item = el("span", "legend-item");
    item.appendChild(el("span", `swatch seg-${c.category}`));
    item.appendChild(document.createTextNode(`${CATEGORY_LABELS[c.category] ?? c.category} ${formatTokens(c.tokens)}`));
    legend.appendChild(item);
  }
  root.appendChild(legend);
  const status = el(
    "div",
    v.overThreshold ? "ctx-status over" : "ctx-status",
    `Pi's estimate ${formatTokens(v.contextTokens)} · threshold ${formatTokens(v.threshold)} (window ${formatTokens(v.contextWindow)} − reserve ${formatTokens(v.reserveTokens)})` +
      (v.overThreshold ? " · over: Pi would compact" : ""),
  );
  status.id = "context-status";
  root.appendChild(status);

  if (v.messages.length === 0) {
    root.appendChild(el("div", "empty", "Nothing would be sent to the model from here."));
    return root;
  }
  const list = el("ol", "ctx-list");
  for (const m of v.messages) {
    const li = el("li", `ctx-msg r-${m.role}`);
    li.appendChild(el("span", "ctx-role", m.role));
    li.appendChild(el("span", "ctx-tokens", formatTokens(m.tokens)));
    li.appendChild(el("span", "ctx-preview", m.preview));
    if (m.entryId) {
      const id = m.entryId;
      li.addEventListener("click", () => onPick(id));
    }
    list.appendChild(li);
  }
  root.appendChild(list);
  return root;
}
