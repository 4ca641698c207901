// What a summary holds, as the workbench shows it: a card per section (items with their
// checkboxes and numbers, and their citations once judged: summary/quality.ts; the split turn's
// prefix kept apart), the files it read and modified, and its history of edits.

import type { SectionView, SummaryView } from "../ipc";
import { button, el, fillOnOpen } from "../dom";
import { renderMarkdown } from "../render/markdown";
import { link } from "./bench";
import type { Bench } from "./bench";
import { openDiff } from "./diff";
import { bodyOf, ROLE_CLASS, sectionCounts } from "./pure";

/** The section cards, and the split turn's prefix sections in a box of their own. */
export function renderSections(b: Bench): HTMLElement[] {
  const v = b.v;
  const out: HTMLElement[] = [];
  const main = v.sections.filter((s) => !s.turnPrefix);
  const prefix = v.sections.filter((s) => s.turnPrefix);
  const cards = el("div", "wb-cards");
  cards.id = "wb-sections";
  for (const s of main) cards.appendChild(card(b, s));
  out.push(cards);
  if (prefix.length) {
    const box = el("div", "wb-prefix");
    box.id = "wb-turn-prefix";
    box.appendChild(el("div", "wb-h", "Turn context (split turn): the summary of the turn's first part, kept apart"));
    for (const s of prefix) box.appendChild(card(b, s));
    out.push(box);
  }
  return out;
}

function card(b: Bench, s: SectionView): HTMLElement {
  const d = el("details", `wb-card ${ROLE_CLASS[s.role] ?? ""}`);
  d.open = true;
  d.dataset.section = s.name;
  d.dataset.index = String(s.index);
  const sum = el("summary");
  sum.appendChild(el("span", "wb-card-title", s.name || "(untitled)"));
  sum.appendChild(el("span", "wb-count", sectionCounts(s)));
  if (b.v.editable) {
    const e = button("edit", () => b.openEditor(s.index, bodyOf(s)), "wb-card-edit", "Edit this section");
    e.addEventListener("click", (ev) => ev.preventDefault());
    sum.appendChild(e);
  }
  d.appendChild(sum);
  if (s.text.trim()) d.appendChild(renderMarkdown(s.text));
  if (s.items.length) {
    const ul = el("ul", "wb-items");
    s.items.forEach((it, i) => {
      const li = el("li", `wb-item d${Math.min(it.depth, 4)}`);
      // Where the item's citation goes (summary/quality.ts).
      li.dataset.item = String(i);
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
    });
    d.appendChild(ul);
  }
  if (!s.items.length && !s.text.trim()) d.appendChild(el("div", "muted small", "(empty)"));
  return d;
}

export function renderFiles(v: SummaryView): HTMLElement {
  const box = el("div", "wb-files");
  const list = (title: string, files: string[], id: string) => {
    const d = el("details", "wb-filelist");
    d.id = id;
    d.appendChild(el("summary", undefined, `${title} (${files.length})`));
    const ul = el("ul");
    d.appendChild(ul);
    fillOnOpen(d, () => {
      for (const f of files) ul.appendChild(el("li", "mono", f));
      if (!files.length) ul.appendChild(el("li", "muted", "(none)"));
    });
    return d;
  };
  box.appendChild(list("Read files", v.readFiles, "wb-read-files"));
  box.appendChild(list("Modified files", v.modifiedFiles, "wb-modified-files"));
  return box;
}

export function renderHistory(b: Bench): HTMLElement {
  const v = b.v;
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
      li.appendChild(link("open", () => void b.deps.jumpTo(h.entryId)));
      li.appendChild(link("diff", () => void openDiff(b, h.entryId, v.entryId)));
    } else li.appendChild(el("span", "muted small", "(this one)"));
    ol.appendChild(li);
  }
  box.appendChild(ol);
  return box;
}
