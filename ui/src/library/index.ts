// The session library in the window: the picker reads from the index (projects, sessions,
// sorting, filters by project / model / date, the user's folders), a search box across sessions
// or within the open one (each hit with a snippet and a status badge; one click opens the session
// at that entry on the graph), and live follow (events pushed over a channel).

import { Channel } from "@tauri-apps/api/core";
import { api, call } from "../ipc";
import type { HitStatus, IndexStatus, LibraryHit, LibraryListing, LibraryUiEvent, LibraryUiEvent_Deserialize, OpenedSession, SessionRow, SortKey } from "../ipc";
import { $, el } from "../dom";
import type { NoticeKind } from "../notice";
import * as store from "../store";
import { formatTime, formatTokens } from "../format";
import { DATE_FILTERS, SORTS, forgettingFact, formatBytes, hitsText, progressText, sinceMs, snippetParts } from "./pure";
import { forkCountText, forkedFromText } from "../forks/pure";
import { openRecall } from "../recall/dialog";
import "./library.css";

export interface LibraryHooks {
  openPath(path: string): Promise<void>;
  openDemo(): Promise<void>;
  /** Reveal (unfolding as needed), scroll to and select an entry of the open session. */
  jumpTo(entryId: string): Promise<void>;
  /** Pi appended to the open session: redraw its graph and context, keep the selection. */
  onOpenSessionChanged(s: OpenedSession): Promise<void>;
  notify(text: string, kind?: NoticeKind): void;
  report(e: unknown): void;
  /** True when a session was opened at start (`arbor FILE`): then no picker or demo at start. */
  skipDefault?(): boolean;
}

let hooks: LibraryHooks;
let status: IndexStatus | null = null;
let syncedWaiters: (() => void)[] = [];
let refreshTimer: number | null = null;
let lastHits: LibraryHit[] = [];

/** The open session's file, or null. */
const currentPath = (): string | null => store.session()?.path ?? null;

function pickerVisible(): boolean {
  return !$("picker").hidden;
}

// ---- DOM (built here so the shared index.html stays as it is) ----------------------------------

function option(value: string, text: string): HTMLOptionElement {
  const o = el("option", undefined, text);
  o.value = value;
  return o;
}

function buildDom(): void {
  const box = document.querySelector<HTMLElement>("#picker .picker-box");
  if (!box || $("lib-panel")) return;
  const panel = el("div", "lib-panel");
  panel.id = "lib-panel";

  const searchRow = el("div", "lib-row");
  const input = el("input");
  input.id = "lib-search";
  input.type = "search";
  input.placeholder = "Search sessions: words or \"a phrase\" (Enter)";
  input.autocomplete = "off";
  const scope = el("select");
  scope.id = "lib-scope";
  scope.append(option("all", "All sessions"), option("session", "This session"));
  const which = el("select");
  which.id = "lib-hit-status";
  which.title = "Only hits with this status";
  which.append(option("", "Any status"), option("inContext", "In context"), option("compacted", "Compacted"), option("abandoned", "Abandoned branch"));
  const go = el("button", undefined, "Search");
  go.type = "button";
  go.id = "lib-search-go";
  const st = el("span", "muted small");
  st.id = "lib-search-status";
  searchRow.append(input, scope, which, go, st);

  const hits = el("div", "lib-hits");
  hits.id = "lib-hits";

  const statusLine = el("div", "lib-status muted small");
  statusLine.id = "lib-status";
  // Cancel beside the progress of a running pass; Resume after a cancel.
  const cancelIdx = el("button", "small", "Cancel");
  cancelIdx.type = "button";
  cancelIdx.id = "lib-cancel-index";
  cancelIdx.title = "Stop indexing: what is indexed stays, the rest is indexed on the next start";
  cancelIdx.hidden = true;
  cancelIdx.addEventListener("click", () => void cancelIndexing());
  const resumeIdx = el("button", "small", "Resume indexing");
  resumeIdx.type = "button";
  resumeIdx.id = "lib-resume-index";
  resumeIdx.hidden = true;
  resumeIdx.addEventListener("click", () => void resumeIndexing());
  statusLine.append(el("span"), cancelIdx, resumeIdx);

  const filters = el("div", "lib-row lib-filters");
  const project = el("select");
  project.id = "lib-project";
  const model = el("select");
  model.id = "lib-model";
  const date = el("select");
  date.id = "lib-date";
  for (const d of DATE_FILTERS) date.append(option(d.key, d.label));
  const sort = el("select");
  sort.id = "lib-sort";
  for (const o of SORTS) {
    const opt = option(o.key, `Sort: ${o.label}`);
    if (o.title) opt.title = o.title;
    sort.append(opt);
  }
  // the closed select says what the chosen sort counts (an option's own title shows, if at all,
  // only while the menu is open)
  const sortTitle = () => (sort.title = SORTS.find((o) => o.key === sort.value)?.title ?? "");
  sort.addEventListener("change", sortTitle);
  const ascLabel = el("label", "small");
  const asc = el("input");
  asc.type = "checkbox";
  asc.id = "lib-asc";
  ascLabel.append(asc, document.createTextNode(" ascending"));
  filters.append(project, model, date, sort, ascLabel);

  const roots = el("details", "lib-roots");
  roots.id = "lib-roots-box";
  const sum = el("summary", undefined, "Folders indexed");
  const rootList = el("div");
  rootList.id = "lib-roots";
  const add = el("button", undefined, "Add folder…");
  add.type = "button";
  add.id = "lib-add-root";
  const pathInput = el("input");
  pathInput.id = "lib-root-path";
  pathInput.type = "text";
  pathInput.placeholder = "or type a folder path";
  const addPath = el("button", undefined, "Add");
  addPath.type = "button";
  addPath.id = "lib-add-root-path";
  const addRow = el("div", "lib-row");
  addRow.append(add, pathInput, addPath);
  roots.append(sum, rootList, addRow);

  panel.append(searchRow, hits, statusLine, filters, roots);
  box.insertBefore(panel, $("picker-list"));

  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter") void runSearch();
  });
  go.addEventListener("click", () => void runSearch());
  for (const s of [project, model, date, sort, asc]) s.addEventListener("change", () => void refresh());
  add.addEventListener("click", () => void addRoot());
  addPath.addEventListener("click", () => void addRootPath(pathInput.value.trim()));
  pathInput.addEventListener("keydown", (e) => {
    if (e.key === "Enter") void addRootPath(pathInput.value.trim());
  });
  for (const s of [scope, which]) s.addEventListener("change", () => void runSearch());

  // A topbar button that opens the picker on the search box.
  const top = el("button", undefined, "Search all");
  top.type = "button";
  top.id = "btn-lib-search";
  top.title = "Search every indexed session";
  $("btn-sessions").insertAdjacentElement("afterend", top);
  top.addEventListener("click", () => void showPicker(true));
}

// ---- listing ------------------------------------------------------------------------------------

function query() {
  const v = (id: string) => ($(id) as HTMLSelectElement).value;
  const project = v("lib-project");
  const model = v("lib-model");
  return {
    project: project === "__all" || project === "" ? null : project === "__none" ? "" : project,
    model: model === "__all" || model === "" ? null : model,
    modifiedSinceMs: sinceMs(v("lib-date"), Date.now()),
    sort: v("lib-sort") as SortKey,
    ascending: ($("lib-asc") as HTMLInputElement).checked,
    limit: 500,
  };
}

function fillSelect(id: string, allText: string, values: { value: string; text: string }[]): void {
  const s = $(id) as HTMLSelectElement;
  const keep = s.value;
  s.replaceChildren(option("__all", allText), ...values.map((x) => option(x.value, x.text)));
  s.value = [...s.options].some((o) => o.value === keep) ? keep : "__all";
}

function card(s: SessionRow): HTMLElement {
  const b = el("button", "session-card");
  b.type = "button";
  b.dataset.path = s.path;
  b.appendChild(el("span", "sc-name", s.name ?? s.firstMessage));
  b.appendChild(el("span", "sc-first muted", s.name ? s.firstMessage : ""));
  const facts = [
    `${s.messageCount} messages`,
    s.branchCount > 1 ? `${s.branchCount} branches` : "",
    forkCountText(s.forkCount),
    s.compactionCount ? `${s.compactionCount} compactions` : "",
    s.tokensAtLeaf ? `${formatTokens(s.tokensAtLeaf)} tokens` : "",
    s.model ?? "",
    formatBytes(s.size ?? 0),
    s.modified ? formatTime(s.modified) : "",
  ].filter(Boolean);
  const meta = el("span", "sc-meta muted", facts.join(" · "));
  const redone = forgettingFact(s);
  if (redone) {
    const f = el("span", "sc-forget", redone.text);
    f.title = redone.title;
    meta.append(document.createTextNode(" · "), f);
  }
  b.dataset.forgetting = s.forgetting === null ? "" : String(s.forgetting);
  b.appendChild(meta);
  if (s.duplicateId) b.appendChild(el("span", "sc-first small over", "Another file has the same session id (a copy?)"));
  const fork = forkedFromText(s);
  if (fork) b.appendChild(el("span", "sc-fork", fork));
  b.addEventListener("click", () => void hooks.openPath(s.path));
  return b;
}

function renderStatus(): void {
  if (!status) return;
  const parts: string[] = [];
  const p = progressText(status);
  if (status.cancelled) {
    const left = status.fullTextLeft ? `, ${status.fullTextLeft} of them not searchable yet` : "";
    parts.push(`Indexing cancelled: ${status.files} sessions indexed${left}; the rest is indexed on the next start or with Resume indexing`);
  }
  else parts.push(p ?? `${status.files} sessions indexed${status.lastPassMs !== null ? ` in ${(status.lastPassMs / 1000).toFixed(1)} s` : ""} · index ${status.dbPath}`);
  if (status.errors.length) parts.push(`${status.errors.length} problem(s): ${status.errors.slice(-2).join("; ")}`);
  const line = $("lib-status");
  (line.firstElementChild as HTMLElement).textContent = parts.join(" · ") + " ";
  $("lib-cancel-index").hidden = status.synced;
  $("lib-resume-index").hidden = !status.cancelled;
  line.dataset.cancelled = String(status.cancelled);
  line.dataset.synced = String(status.synced);
  line.dataset.done = String(status.done);
  line.dataset.total = String(status.total);
}

function renderListing(l: LibraryListing): void {
  status = l.status;
  renderStatus();
  $("picker-root").textContent = l.roots.filter((r) => r.exists).map((r) => r.path).join(" · ") || "(no session folders yet)";
  fillSelect("lib-project", "All projects", l.projects.map((p) => ({ value: p.cwd === "" ? "__none" : p.cwd, text: `${p.cwd || "(no project)"} (${p.sessionCount})` })));
  fillSelect("lib-model", "All models", l.models.map((m) => ({ value: m, text: m })));
  const roots = $("lib-roots");
  roots.replaceChildren(
    ...l.roots.map((r) => {
      const row = el("div", "lib-root");
      row.dataset.path = r.path;
      row.append(el("span", r.exists ? undefined : "muted", `${r.path}${r.user ? "" : " (Pi)"}${r.exists ? "" : " (missing)"}`));
      if (r.user) {
        const rm = el("button", "small", "Remove");
        rm.type = "button";
        rm.addEventListener("click", () => void removeRoot(r.path));
        row.append(rm);
      }
      return row;
    }),
  );
  const items: HTMLElement[] = [];
  if (l.recent.length) {
    items.push(el("h3", undefined, "Recent"));
    l.recent.forEach((s) => items.push(card(s)));
  }
  const q = query();
  if (q.project !== null || q.sort !== "modified" || q.ascending) {
    // One flat list in the chosen order.
    items.push(el("h3", "group", q.project !== null ? q.project || "(no project)" : "Sessions"));
    l.sessions.forEach((s) => items.push(card(s)));
  } else {
    const groups = new Map<string, SessionRow[]>();
    for (const s of l.sessions) {
      if (!groups.has(s.cwd)) groups.set(s.cwd, []);
      groups.get(s.cwd)!.push(s);
    }
    for (const [cwd, ss] of groups) {
      items.push(el("h3", "group", cwd || "(no project)"));
      ss.forEach((s) => items.push(card(s)));
    }
  }
  if (!l.sessions.length) {
    items.push(
      el("div", "empty", status && !status.synced ? "Indexing… sessions appear here as they are read." : "No sessions match. Add a folder, open a .jsonl file, or look around in the demo session."),
    );
  }
  $("picker-list").replaceChildren(...items);
}

/** The newest listing asked for. Listings run concurrently and can come back out of order: an
 * older one carries an older index status (say, indexing still running after a Cancelled event
 * was shown), so only the newest asked for is drawn. */
let listingSeq = 0;

async function refresh(): Promise<LibraryListing | null> {
  const seq = ++listingSeq;
  try {
    const l = await call(api.libraryListing(query()));
    if (seq === listingSeq) renderListing(l);
    return l;
  } catch (e) {
    hooks.report(e);
    return null;
  }
}

function scheduleRefresh(): void {
  if (refreshTimer !== null || !pickerVisible()) return;
  refreshTimer = window.setTimeout(() => {
    refreshTimer = null;
    void refresh();
  }, 300);
}

export async function showPicker(focusSearch = false): Promise<void> {
  $("picker").hidden = false;
  ($("lib-scope") as HTMLSelectElement).value = focusSearch || !currentPath() ? "all" : ($("lib-scope") as HTMLSelectElement).value;
  await refresh();
  if (focusSearch) $("lib-search").focus();
}

// ---- search -------------------------------------------------------------------------------------

function renderHit(h: LibraryHit): HTMLElement {
  const b = el("button", `lib-hit st-${h.status}`);
  b.type = "button";
  b.dataset.entryId = h.entryId;
  b.dataset.sessionPath = h.sessionPath;
  b.dataset.status = h.status;
  const head = el("div", "lib-hit-head");
  const badge = el("span", `hit-badge b-${h.status}`, h.badge);
  badge.title =
    h.status === "compacted"
      ? "Summarized away by a compaction: the model no longer sees the raw text"
      : h.status === "abandoned"
        ? "On a branch the session left"
        : "Still sent to the model from the session's leaf";
  head.append(badge, el("span", "lib-hit-session", h.sessionName ?? h.sessionPath.split("/").pop() ?? h.sessionPath));
  head.append(el("span", "muted small", `${h.role ?? h.entryType}${h.timestamp ? ` · ${formatTime(h.timestamp)}` : ""}`));
  const snip = el("div", "lib-snippet");
  for (const part of snippetParts(h.snippet)) snip.append(part.hit ? el("mark", undefined, part.text) : document.createTextNode(part.text));
  b.append(head, snip);
  b.addEventListener("click", () => void openHit(h));
  if (h.status === "inContext") return b;
  // The model no longer sees it: offer to bring it back (ui/src/recall), in its session.
  const row = el("div", "lib-hit-row");
  const back = el("button", "small lib-hit-recall", "Bring back…");
  back.type = "button";
  back.dataset.entryId = h.entryId;
  back.title = "Open the session at this entry and bring it back into the model's context (a preview first)";
  back.addEventListener("click", () => void openHit(h).then(() => (currentPath() === h.sessionPath ? openRecall([h.entryId]) : undefined)));
  row.append(b, back);
  return row;
}

let searchSeq = 0;
async function runSearch(): Promise<void> {
  const seq = ++searchSeq;
  const text = ($("lib-search") as HTMLInputElement).value;
  const inSession = ($("lib-scope") as HTMLSelectElement).value === "session";
  const st = $("lib-search-status");
  if (!text.trim()) {
    $("lib-hits").replaceChildren();
    st.textContent = "";
    return;
  }
  if (inSession && !currentPath()) {
    st.textContent = "Open a session first, or search all sessions.";
    return;
  }
  try {
    const p = query();
    const only = ($("lib-hit-status") as HTMLSelectElement).value as HitStatus | "";
    st.textContent = "searching…";
    const hits = await call(
      api.librarySearch({ text, sessionPath: inSession ? currentPath() : null, project: inSession ? null : p.project, statuses: only ? [only] : [], limit: 100 }),
    );
    if (seq !== searchSeq) return; // a newer search is under way
    lastHits = hits;
    st.textContent = hitsText(lastHits.length, status);
    st.dataset.complete = String(!status || status.synced);
    st.dataset.count = String(lastHits.length);
    $("lib-hits").replaceChildren(...lastHits.map(renderHit));
  } catch (e) {
    hooks.report(e);
  }
}

async function openHit(h: LibraryHit): Promise<void> {
  try {
    if (currentPath() !== h.sessionPath) await hooks.openPath(h.sessionPath);
    if (currentPath() !== h.sessionPath) return; // opening failed (reported)
    $("picker").hidden = true;
    await hooks.jumpTo(h.entryId);
    hooks.notify(
      h.status === "compacted"
        ? `This entry was compacted away: the model sees only the summary, not this text.`
        : h.status === "abandoned"
          ? `This entry is on an abandoned branch (off the session's current path).`
          : `This entry is in the model's context.`,
    );
  } catch (e) {
    hooks.report(e);
  }
}

// ---- folders -------------------------------------------------------------------------------------

async function addRoot(): Promise<void> {
  try {
    const p = await call(api.libraryPickFolder());
    if (!p) return;
    await call(api.libraryAddRoot(p));
    await refresh();
  } catch (e) {
    hooks.report(e);
  }
}

async function addRootPath(path: string): Promise<void> {
  if (!path) return;
  try {
    await call(api.libraryAddRoot(path));
    ($("lib-root-path") as HTMLInputElement).value = "";
    await refresh();
  } catch (e) {
    hooks.report(e);
  }
}

async function removeRoot(path: string): Promise<void> {
  try {
    await call(api.libraryRemoveRoot(path));
    await refresh();
  } catch (e) {
    hooks.report(e);
  }
}

// ---- cancel / resume the index pass ------------------------------------------------------------

async function cancelIndexing(): Promise<void> {
  try {
    ($("lib-cancel-index") as HTMLButtonElement).disabled = true;
    await call(api.libraryCancelIndexing());
  } catch (e) {
    hooks.report(e);
  } finally {
    ($("lib-cancel-index") as HTMLButtonElement).disabled = false;
  }
}

async function resumeIndexing(): Promise<void> {
  try {
    status = await call(api.libraryResumeIndexing());
    renderStatus();
  } catch (e) {
    hooks.report(e);
  }
}

// ---- live follow ---------------------------------------------------------------------------------

function onEvent(ev: LibraryUiEvent): void {
  switch (ev.kind) {
    case "indexing":
      if (status) {
        status = { ...status, done: ev.done, total: ev.total, fullText: ev.fullText, synced: false };
        renderStatus();
      }
      scheduleRefresh();
      break;
    case "synced":
      if (status) status = { ...status, synced: true, fullText: false, done: ev.files, total: ev.files, files: ev.files, lastPassMs: ev.ms };
      renderStatus();
      // hits shown while indexing may be incomplete: search again now that the index is whole
      if (($("lib-search") as HTMLInputElement).value.trim() && $("lib-search-status").dataset.complete === "false") void runSearch();
      for (const w of syncedWaiters.splice(0)) w();
      scheduleRefresh();
      break;
    case "cancelled":
      if (status) status = { ...status, synced: true, cancelled: true, fullText: false, files: ev.indexed, fullTextLeft: ev.fullTextLeft, lastPassMs: null };
      renderStatus();
      hooks.notify(
        `Indexing cancelled: ${ev.indexed} of ${ev.files} sessions are indexed${ev.fullTextLeft ? ` (${ev.fullTextLeft} of them not yet searchable)` : ""}. The rest is indexed on the next start, or now with "Resume indexing" in the session picker.`,
      );
      for (const w of syncedWaiters.splice(0)) w();
      scheduleRefresh();
      break;
    case "sessionChanged":
      if (ev.open) {
        const open = ev.open;
        const n = ev.newEntries;
        void hooks
          .onOpenSessionChanged(open)
          .then(() => hooks.notify(`The session file grew${n ? ` by ${n} entr${n === 1 ? "y" : "ies"}` : ""} (Pi's leaf is now ${open.fileLeafId ?? "?"}); graph and context are up to date.`, "aside"))
          .catch(hooks.report);
      }
      scheduleRefresh();
      break;
    case "sessionRemoved":
      if (ev.path === currentPath()) hooks.notify(`The open session file is gone from disk (${ev.path}). What you see is the last version read; reopen it from the picker if it comes back.`, "error");
      scheduleRefresh();
      break;
    case "notice":
      hooks.notify(ev.message, "error");
      break;
    case "error":
      if (status) {
        status = { ...status, errors: [...status.errors, ev.path ? `${ev.path}: ${ev.message}` : ev.message] };
        renderStatus();
      }
      break;
  }
}

/** Build the library UI, subscribe to live events, wait for the first index pass, then show the
 * picker (or the demo session when there is nothing to show). Replaces the old start-up listing. */
export async function startLibrary(h: LibraryHooks): Promise<void> {
  hooks = h;
  buildDom();
  const ch = new Channel<LibraryUiEvent_Deserialize>();
  ch.onmessage = (m) => onEvent(m as LibraryUiEvent);
  status = await call(api.librarySubscribe(ch));
  if (status.notices.length) hooks.notify(status.notices.join(" "), "error");
  renderStatus();
  if (h.skipDefault?.()) return;
  if (!status.synced) {
    $("picker").hidden = false;
    const synced = new Promise<void>((r) => syncedWaiters.push(r));
    await refresh();
    await synced;
    // Closed while the first pass ran (a session opened from it, Close, Escape): it stays closed
    // (it came back over the session opened meanwhile; showPicker lists the sessions anew).
    if ($("picker").hidden) return;
  }
  const l = await refresh();
  if (!l) return;
  if (!l.sessions.length && !l.recent.length) {
    await hooks.openDemo();
    if (status.notices.length) hooks.notify(status.notices.join(" "), "error");
    return;
  }
  $("picker").hidden = false;
}
