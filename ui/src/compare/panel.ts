// The Compare panel: two nodes side by side, docked over the side panel so the graph stays in
// view. The common ancestor, then per side (A, B) the entries since it, turns, the context at
// the node by category, summaries with their score, commands with how they last ended, errors,
// the last request, model, cost and files; then the files only A, only B and both touched (and
// those both modified differently). Every item is a link: a click reveals its entry on the graph
// and selects it. Escape or Close closes it.

import { api, call } from "../ipc";
import type { ComparisonView, EntryLink, FileLink, SideView } from "../ipc";
import { button, el } from "../dom";
import { report } from "../notice";
import { contextText, costText, fileGroups, outcomeText, scoreText, summaryKindText } from "./pure";
import { setPicks } from "./picks";
import "./compare.css";

export interface CompareDeps {
  jumpTo(entryId: string): Promise<void>;
}
let deps: CompareDeps;
let seq = 0;

export function initComparePanel(d: CompareDeps): void {
  deps = d;
}

function sheet(): HTMLElement {
  let s = document.getElementById("compare");
  if (s) return s;
  s = el("section", "compare-sheet");
  s.id = "compare";
  s.hidden = true;
  s.setAttribute("role", "dialog");
  s.setAttribute("aria-modal", "false");
  s.setAttribute("aria-labelledby", "compare-title");
  document.body.appendChild(s);
  return s;
}

export function compareOpen(): boolean {
  const s = document.getElementById("compare");
  return !!s && !s.hidden;
}

export function closeCompare(): void {
  const s = document.getElementById("compare");
  if (!s || s.hidden) return;
  s.hidden = true;
  s.replaceChildren();
  document.getElementById("graph")?.focus({ preventScroll: true });
}

/** A link to an entry: a button with its id (and text), revealing it on the graph. */
function link(entryId: string, text: string = entryId, cls = ""): HTMLButtonElement {
  const b = button(text, () => void deps.jumpTo(entryId).catch(report), `cmp-link ${cls}`.trim(), `Show ${entryId} on the graph`);
  b.dataset.entryId = entryId;
  return b;
}

function entryLink(e: EntryLink): HTMLElement {
  const w = el("span", "cmp-entry");
  w.append(link(e.entryId, e.entryId, "cmp-id"), el("span", `cmp-kind k-${e.kind}`, e.kind), el("span", "cmp-title", e.title));
  return w;
}

function list<T>(items: T[], item: (x: T) => HTMLElement, none = "none"): HTMLElement {
  if (!items.length) return el("span", "muted", none);
  const ul = el("ul", "cmp-list");
  for (const x of items) {
    const li = el("li");
    li.append(item(x));
    ul.append(li);
  }
  return ul;
}

function fileItem(f: FileLink): HTMLElement {
  const w = el("span", "cmp-file");
  w.dataset.path = f.path;
  const first = f.aEntryId ?? f.bEntryId;
  w.append(first ? link(first, f.path, "cmp-path") : el("span", "cmp-path", f.path));
  if (f.aEntryId && f.bEntryId) w.append(link(f.aEntryId, "A", "cmp-side"), link(f.bEntryId, "B", "cmp-side"));
  return w;
}

/** One side's facts, in the order of the rows. */
function sideCells(s: SideView): HTMLElement[] {
  const text = (t: string) => el("span", undefined, t);
  return [
    entryLink(s.tip),
    s.firstEntryId ? link(s.firstEntryId, `${s.entries} entries`, "cmp-count") : text("0 entries (this node is the ancestor)"),
    text(String(s.turns)),
    text(contextText(s)),
    text(s.model ?? "—"),
    text(costText(s.cost)),
    s.lastUserRequest ? link(s.lastUserRequest.entryId, s.lastUserRequest.text, "cmp-text") : text("—"),
    list(s.summaries, (m) => link(m.entryId, `${summaryKindText(m.kind)} ${m.entryId} · ${scoreText(m.score)}`)),
    list(s.commands, (c) => {
      const w = link(c.entryId, "", `cmp-cmd o-${c.lastOutcome}`);
      w.append(el("code", undefined, c.command), document.createTextNode(` → ${outcomeText(c.lastOutcome)}${c.runs > 1 ? ` (${c.runs} runs)` : ""}`));
      return w;
    }),
    list(s.errors, (e) => link(e.entryId, e.text, "cmp-text cmp-error")),
    list(s.readFiles, fileItem),
    list(s.modifiedFiles, fileItem),
  ];
}

const ROWS = ["Node", "Since the ancestor", "Turns", "Context at the node", "Model", "Cost", "Last request", "Summaries", "Commands", "Errors", "Files read", "Files modified"];

function render(c: ComparisonView): HTMLElement[] {
  const head = el("div", "cmp-head");
  const title = el("h3", undefined, "Compare");
  title.id = "compare-title";
  const close = button("Close", closeCompare, "", "Escape closes too");
  close.id = "compare-close";
  head.append(title, close);
  const anc = el("div", "cmp-ancestor");
  anc.id = "compare-ancestor";
  anc.dataset.entryId = c.ancestor?.entryId ?? "";
  anc.append(el("b", undefined, "Common ancestor: "));
  anc.append(c.ancestor ? entryLink(c.ancestor) : el("span", "muted", "none: the two nodes start from different roots"));
  const table = el("table", "cmp-table");
  const tr0 = el("tr");
  tr0.append(el("th"), el("th", "cmp-a", "A"), el("th", "cmp-b", "B"));
  table.append(tr0);
  const [a, b] = [sideCells(c.a), sideCells(c.b)];
  ROWS.forEach((name, i) => {
    const tr = el("tr");
    const ta = el("td", "cmp-a");
    const tb = el("td", "cmp-b");
    ta.append(a[i]);
    tb.append(b[i]);
    tr.append(el("th", undefined, name), ta, tb);
    table.append(tr);
  });
  const files = el("div", "cmp-files");
  files.id = "compare-files";
  for (const g of fileGroups(c)) {
    const box = el("div", "cmp-group");
    box.dataset.group = g.key;
    box.append(el("h4", undefined, g.title));
    if (!g.lists.length) box.append(el("span", "muted", "no file"));
    for (const l of g.lists) {
      const sub = el("div", "cmp-sub");
      sub.dataset.what = l.what;
      sub.append(el("div", "muted small", l.what), list(l.files, fileItem));
      box.append(sub);
    }
    files.append(box);
  }
  return [head, anc, table, el("h4", undefined, "Files apart"), files];
}

/** Compares `a` (side A) with `b` (side B) and shows the panel. */
export async function openCompare(a: string, b: string): Promise<void> {
  const n = ++seq;
  const s = sheet();
  s.hidden = false;
  s.dataset.a = a;
  s.dataset.b = b;
  delete s.dataset.ready;
  s.replaceChildren(el("div", "muted", `Comparing ${a} with ${b}…`));
  setPicks([a, b]);
  try {
    const c = await call(api.compareEntries(a, b));
    if (n !== seq) return;
    s.replaceChildren(...render(c));
    s.dataset.ready = "true";
    (document.getElementById("compare-close") as HTMLElement | null)?.focus({ preventScroll: true });
  } catch (e) {
    if (n === seq) closeCompare();
    report(e);
  }
}
