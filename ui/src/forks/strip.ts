// A fork's parent above its graph: when the open session's header names a parentSession, the
// parent's path from its root to the fork point, dimmed and read-only (a click opens the parent
// at that entry). A parent that is gone, names the fork itself or is no session is said in a
// sentence: the fork opens as it is.

import { api, call } from "../ipc";
import type { ForkView } from "../ipc";
import { button, el } from "../dom";
import { graphColumn } from "../graph/column";
import { SHORT_KIND } from "../graph/view";
import * as store from "../store";
import { isCopied, stripHead, stripRows } from "./pure";
import "./forks.css";

export interface ForkHooks {
  openPath(path: string): Promise<boolean>;
  jumpTo(entryId: string): Promise<void>;
  report(e: unknown): void;
}

let hooks: ForkHooks;
let shownPath: string | null = null;
let seq = 0;

function strip(): HTMLElement {
  let s = document.getElementById("fork-strip");
  if (s) return s;
  s = el("details", "fork-strip");
  s.id = "fork-strip";
  (s as HTMLDetailsElement).open = true;
  s.hidden = true;
  graphColumn().prepend(s);
  return s;
}

async function openParentAt(v: ForkView, entryId: string): Promise<void> {
  try {
    if (!(await hooks.openPath(v.parentPath))) return;
    await hooks.jumpTo(entryId);
  } catch (e) {
    hooks.report(e);
  }
}

function render(v: ForkView | null): void {
  const s = strip();
  s.hidden = !v;
  if (!v) {
    s.replaceChildren();
    return;
  }
  s.dataset.status = v.status;
  s.dataset.parent = v.parentPath;
  s.dataset.forkPoint = v.forkPointId ?? "";
  const head = el("summary", "fork-head", stripHead(v));
  head.title = v.parentPath;
  const parts: HTMLElement[] = [head];
  s.classList.remove("show-copied");
  const copied = v.rows.length - stripRows(v).length;
  if (v.rows.length) {
    const rows = el("div", "fork-rows");
    rows.setAttribute("role", "list");
    for (const r of v.rows) {
      const point = r.entryId === v.forkPointId;
      const b = button("", () => void openParentAt(v, r.entryId), `fork-row${point ? " fork-point" : ""}`, `Open the parent at ${r.entryId}`);
      b.setAttribute("role", "listitem");
      b.dataset.entryId = r.entryId;
      b.append(el("span", `g-kind k-${r.kind}`, SHORT_KIND[r.kind]), el("span", "fork-title", r.title));
      if (point) b.append(el("span", "g-badge b-fork-point", "fork point: this session goes on below"));
      else if (isCopied(v, r)) b.classList.add("fork-copied");
      else b.append(el("span", "g-badge", "only in the parent"));
      rows.append(b);
    }
    parts.push(rows);
  }
  if (copied) {
    const label = (shown: boolean) => (shown ? "Hide the copied path" : `Show the copied path here too (${copied})`);
    const toggle = button(label(false), () => {
      const on = s.classList.toggle("show-copied");
      toggle.textContent = label(on);
    }, "small fork-toggle", "The parent's entries this session holds a copy of, as the parent has them (a click opens the parent there)");
    toggle.id = "fork-toggle-copied";
    parts.push(toggle);
  }
  if (v.ancestry.length) parts.push(el("div", "muted small fork-ancestry", v.ancestry.join("; ")));
  s.replaceChildren(...parts);
  // The fork point sits right above the fork's own first row.
  const rows = s.querySelector(".fork-rows");
  if (rows) rows.scrollTop = rows.scrollHeight;
}

async function update(): Promise<void> {
  const path = store.session()?.path ?? null;
  if (path === shownPath) return;
  shownPath = path;
  const n = ++seq;
  if (!path) return render(null);
  try {
    const v = await call(api.forkParent());
    if (n === seq) render(v);
  } catch (e) {
    if (n === seq) render(null);
    hooks.report(e);
  }
}

export function initForks(h: ForkHooks): void {
  hooks = h;
  strip();
  store.subscribe(() => void update());
}
