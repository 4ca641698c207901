// A session's life in the window: opening one (from the picker, a file, the command line or a
// later `arbor FILE` launch, or the demo), the read-only banner and its v3 copy, and showing the
// session again after it changed on disk or was renamed.

import { api, call } from "../ipc";
import type { OpenedSession } from "../ipc";
import { $, el } from "../dom";
import { graph } from "../graph/shared";
import { startLibrary } from "../library";
import { notify, report } from "../notice";
import * as store from "../store";
import { loadBudgets, preview } from "../views/budgets";
import { showSession } from "./header";
import { startLaunch } from "./launch";
import { enterPreview } from "./preview";
import { jumpTo, select } from "./selection";

/** Opens a session (or the demo); false (with the error shown) when it could not be opened.
 *
 * A big file (src-tauri/src/commands/preview.rs says which) is drawn twice: its newest entries
 * at once, read-only (ui/src/session/preview.ts), then the whole session when the full open has
 * read it; the leaf stays where the preview drew it. The full open is the same command as for any
 * file, on the main thread, started once the preview is on screen: run off the main thread it took
 * 1.4–1.8× as long at a million entries (the parse's memory then comes from per-thread allocator
 * arenas, and the webview paints beside it on two cores). */
export async function openPath(path: string | null, demo = false): Promise<boolean> {
  // One open at a time: a second one (a later `arbor FILE` launch) waits for the first, whose
  // preview would otherwise be replaced by a session it did not ask for.
  const before = opening;
  let done = () => {};
  opening = new Promise<void>((r) => (done = r));
  await before;
  let endPreview: (() => void) | null = null;
  try {
    const pv = demo || path === null ? null : await call(api.previewSession(path)).catch(() => null);
    if (pv) {
      $("picker").hidden = true;
      $("session-title").textContent = pv.name ?? path!.split("/").pop() ?? path!;
      graph().showPreview(pv.rows, pv.lanes, pv.leafRow ?? 0);
      endPreview = enterPreview(pv);
    }
    let s: OpenedSession;
    try {
      if (pv) await previewOnScreen();
      s = await call(demo || path === null ? api.openDemoSession() : api.openSession(path));
    } catch (e) {
      if (pv) await showCurrentAgain();
      throw e;
    }
    // Where the preview drew the leaf, to draw the whole graph's leaf at the same place.
    const keep = pv && pv.leafRow !== null && pv.leafId === s.leafId ? graph().offsetInView(pv.leafRow) : null;
    endPreview?.();
    endPreview = null;
    $("picker").hidden = true;
    showSession(s);
    if (s.readOnly) readOnlyBanner(s.readOnly);
    else if (s.isDemo) notify("This is Arbor's demo session (no Pi sessions were found, or you chose it). Labels you set go to a copy in Arbor's data folder.");
    else $("notice").hidden = true;
    if (s.leafRow !== null && keep !== null) graph().placeRow(s.leafRow, keep);
    if (s.leafRow !== null) graph().showRowNow(s.leafRow);
    if (s.leafId) await select(s.leafId);
    await loadBudgets();
    return true;
  } catch (e) {
    endPreview?.();
    report(e);
    return false;
  } finally {
    done();
  }
}

/** Resolves once the preview's frame has been painted and handed to the window: the full open
 * then holds the main thread, which presents frames, for seconds. */
function previewOnScreen(): Promise<void> {
  return new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(r, 30))));
}

/** The open in flight (resolved when there is none). */
let opening: Promise<void> = Promise.resolve();

/** A big file's full open failed after its preview was drawn: the session open before (which the
 * failed open reads again) replaces the preview, or an empty graph when there is none. */
async function showCurrentAgain(): Promise<void> {
  const s = await call(api.currentSession()).catch(() => null);
  if (!s) {
    graph().reset(0, 1);
    $("session-title").textContent = "No session";
    return;
  }
  showSession(s);
  if (s.leafRow !== null) graph().showRowNow(s.leafRow);
}

/** The top bar's Open file…: the native file dialog, then the file. */
export async function openFile(): Promise<void> {
  try {
    const p = await call(api.pickSessionFile());
    if (p) await openPath(p);
  } catch (e) {
    report(e);
  }
}

/** The read-only banner; a version 1/2 session gets the "Save as v3 copy" button it mentions. */
export function readOnlyBanner(why: string): void {
  notify(`Read-only: ${why}`, "error");
  if (!why.includes("Save as v3 copy")) return;
  const b = el("button", "notice-action", "Save as v3 copy");
  b.id = "btn-save-v3";
  b.type = "button";
  b.title = "Write a version 3 copy beside this file (this file is not changed) and open the copy";
  b.addEventListener("click", () => void saveV3Copy());
  $("notice").appendChild(b);
}

async function saveV3Copy(): Promise<void> {
  try {
    const s = await call(api.saveV3Copy());
    await openPath(s.path);
    notify(`Saved a version 3 copy as ${s.path}; the original file was not changed.`);
  } catch (e) {
    report(e);
  }
}

/** After a rename (a session_info entry appended): the session with its new leaf selected. */
export async function afterRename(s: OpenedSession): Promise<void> {
  showSession(s);
  if (s.leafRow !== null) graph().setCursor(s.leafRow, false);
  if (s.leafId) await select(s.leafId);
  await preview();
}

/** Pi appended to the open session: new rows, same scroll position and selection. */
async function followOpenSession(s: OpenedSession): Promise<void> {
  const keep = store.selectedId();
  showSession(s);
  // A re-read file may no longer hold the selected entry: then select the leaf.
  const row = keep ? await call(api.revealEntry(keep)).catch(() => null) : null;
  const g = graph();
  if (keep && row !== null) {
    const now = await call(api.currentSession());
    if (now.totalRows !== g.totalRows) g.reset(now.totalRows, now.lanes);
    g.cursor = row;
    g.schedule();
    await select(keep);
  } else if (s.leafId) {
    if (s.leafRow !== null) g.setCursor(s.leafRow, false);
    await select(s.leafId);
  }
  await preview();
}

/** At start: `arbor FILE.jsonl` opens that session instead of the picker; when it cannot be
 * opened, the error stays in view and the app goes on as usual (picker or demo). Later
 * `arbor FILE` launches hand their file to this window (ui/src/session/launch.ts). Then the
 * session library (ui/src/library) indexes the sessions and follows their files. */
export async function startSessions(): Promise<void> {
  let startupOpened = false;
  let startupError: string | null = null;
  try {
    const startup = await startLaunch((p) => openPath(p));
    if (startup) {
      startupOpened = await openPath(startup);
      if (!startupOpened) startupError = $("notice").textContent;
    }
  } catch (e) {
    report(e);
  }
  try {
    await startLibrary({
      skipDefault: () => startupOpened,
      openPath: async (p) => void (await openPath(p)),
      openDemo: async () => void (await openPath(null, true)),
      jumpTo,
      onOpenSessionChanged: followOpenSession,
      notify,
      report,
    });
  } catch (e) {
    report(e);
  }
  if (startupError) notify(startupError, "error");
}
