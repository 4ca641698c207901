// Comparing two summaries: the section-aware diff (sections, items added, removed, reworded and
// moved, files) and the overlay that picks any two summaries of the session to compare.

import { api, call, errorText } from "../ipc";
import type { SummaryDiffView, SummaryView } from "../ipc";
import { el } from "../dom";
import type { Bench } from "./bench";
import { diffCounts, isPlaceholder, sectionChanged } from "./pure";

/** The summaries one can compare with: this one, its diff base, the previous compaction on the
 * path, its history and the session's other summaries, each once. */
function summaryOptions(v: SummaryView, select: HTMLSelectElement, chosen: string): void {
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

/** The diff overlay, from `fromId` to `toId`; either side can be changed in it. */
export async function openDiff(b: Bench, fromId: string, toId: string): Promise<void> {
  const body = b.openOverlay("Compare summaries", "wb-diff-view");
  const pick = el("div", "wb-actions");
  const from = el("select");
  from.id = "wb-diff-from";
  const to = el("select");
  to.id = "wb-diff-to";
  summaryOptions(b.v, from, fromId);
  summaryOptions(b.v, to, toId);
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
      out.replaceChildren(el("div", "wb-bad", errorText(e)));
    }
  };
  from.addEventListener("change", () => void run());
  to.addEventListener("change", () => void run());
  await run();
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
