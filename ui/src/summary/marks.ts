// The quality marks of every summary of the open session (probe score by kind; the cost of
// forgetting after each compaction). Rust computes them in the background, in slices at low
// priority, once a session has opened and its graph is drawn, and again after the file grew; they
// arrive here batch by batch. The graph's markers and the Timeline read them; the workbench's own
// judgement of a summary arrives here too (Rust sends it as that summary's mark).

import { Channel } from "@tauri-apps/api/core";
import { api, call } from "../ipc";
import type { QualityMarkView, QualityMarkView_Deserialize } from "../ipc";
import * as store from "../store";

const marks = new Map<string, QualityMarkView>();
const listeners = new Set<(changed: QualityMarkView[]) => void>();
/** The file and entry count the marks were last asked for. */
let askedKey = "";
let shownPath = "";

/** The mark of a summary entry, once computed. */
export function qualityMark(entryId: string): QualityMarkView | undefined {
  return marks.get(entryId);
}

/** Calls `listener` with each batch of marks that arrives; returns the call that stops it. */
export function onQualityMarks(listener: (changed: QualityMarkView[]) => void): () => void {
  listeners.add(listener);
  return () => void listeners.delete(listener);
}

/** Starts following the open session: its marks are asked for after each open or growth. */
export function startQualityMarks(): void {
  store.subscribe(sessionChanged);
}

function sessionChanged(): void {
  const s = store.session();
  if (!s) return;
  const key = `${s.path}|${s.entryCount}`;
  if (key === askedKey) return;
  askedKey = key;
  if (s.path !== shownPath) {
    shownPath = s.path;
    marks.clear();
  }
  // After the next paint, and a little after it: the open's first rows and the leaf's selection
  // are asked for first (the run takes a core, at low priority, for seconds on a big session).
  requestAnimationFrame(() => setTimeout(() => ask(key, s.path), 150));
}

function ask(key: string, path: string): void {
  if (key !== askedKey) return;
  const ch = new Channel<QualityMarkView_Deserialize[]>();
  // A run of another file may still be sending its last batch: only this file's are kept.
  ch.onmessage = (batch) => {
    if (path === shownPath) receive(batch as QualityMarkView[]);
  };
  void call(api.warmSummaryQuality(ch))
    .then((w) => {
      if (w.joined || key !== askedKey) return;
      // For the real-window tests: how many marks the window holds once a run is done.
      document.body.dataset.qualityMarks = String(marks.size);
    })
    .catch(() => {
      if (key === askedKey) askedKey = "";
    });
}

function receive(batch: QualityMarkView[]): void {
  for (const m of batch) marks.set(m.entryId, m);
  for (const l of [...listeners]) l(batch);
}
