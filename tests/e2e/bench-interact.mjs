// Interaction benchmark in the real webview (the app's targets in docs/PERFORMANCE.md; not part of the test run).
//
//   node scripts/gen-sessions.mjs --entries 100000 --seed 42 --out $DIR/agent/sessions/--p--/s100k.jsonl
//   ARBOR_BIN=<release arbor> ARBOR_BENCH_AGENT_DIR=$DIR/agent node tests/e2e/bench-interact.mjs
//
// Opens the big session, then measures, each until the UI's state is updated ("updated") and
// until the frame that paints it ("painted"; times are taken at the start of that frame's
// animation callbacks):
//  (1) click on a node of the graph -> detail, context window, context view and timeline
//      selection updated (`data-select-done` on <body>, set by main.ts's select() once those are
//      drawn; a summary node's workbench fills in after that and is not counted);
//  (2) "Continue from here" on a selected node -> leaf moved, graph, detail and preview updated
//      (`data-continue-done`; as for a click, a summary leaf's workbench fills in after that and
//      is not counted: until 2026-12-02 Continue's mark waited for it). Continue writes no session line (Arbor keeps the position in
//      its own state file), so the session file is only read. Continue's "painted" is the first
//      frame that paints both the mark and the new leaf's row (its `.g-row.m-leaf` element,
//      inside the graph's view): until 2026-12-05 it was the frame after the mark alone
//      ("nextFrame" below), which on a Continue that re-lays the graph out drew the graph empty.
// Targets: 50 ms each. ARBOR_BENCH_TRACE=1 prints each Continue's IPC calls to stderr. The nodes are rows of the graph spread over its whole height.

import path from "node:path";
import fs from "node:fs";
import { benchStats, runBench } from "./driver.mjs";

const ROUNDS = Number(process.env.ARBOR_BENCH_ROUNDS || 12);
/** ARBOR_BENCH_SETTLE=0: click as soon as the picked row is in view (the method until 2026-12-02,
 *  whose click frame also carried the scroll jump's paint). */
const SETTLE = process.env.ARBOR_BENCH_SETTLE !== "0";
/** ARBOR_BENCH_PAUSE=<ms>: wait that long between a click's selection and the Continue after it
 *  (a person moving to the button; 0, the default, clicks Continue one frame after the selection
 *  was drawn, while the webview may still be painting it). */
const PAUSE = Number(process.env.ARBOR_BENCH_PAUSE || 0);


/** Scrolls the graph to `fraction` of its height and returns a visible node row's entry id. */
const pickRow = (s, fraction) =>
  s.exec(
    `const g = document.getElementById("graph");
     const settle = arguments[1];
     g.scrollTop = g.scrollHeight * arguments[0];
     // The rows of a new scroll position arrive through graph_window: wait for them.
     const t0 = performance.now();
     return new Promise((resolve) => {
       const poll = () => {
         const top = g.getBoundingClientRect().top, bottom = g.getBoundingClientRect().bottom;
         const rows = [...document.querySelectorAll('.g-row:not([data-kind="fold"])')].filter((r) => {
           const b = r.getBoundingClientRect();
           return r.dataset.entryId && b.top >= top && b.bottom <= bottom;
         });
         // Then let the jump's own frames (the graph's rows and lanes around the view) finish, so
         // that the click's frame does not also carry them.
         if (rows.length) {
           const id = rows[Math.floor(rows.length / 2)].dataset.entryId;
           if (settle) requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(() => resolve(id), 100)));
           else resolve(id);
         }
         else if (performance.now() - t0 > 10000) resolve(null);
         else setTimeout(poll, 20);
       };
       poll();
     });`,
    fraction,
    SETTLE,
  );

/** Runs `action` in the page and times it until <body data-{what}-done> names `entryId` anew
 *  ("done"), then one frame ("painted"). For Continue also until the first frame that paints the
 *  new leaf's row ("leaf"): the row of the entry #status-leaf names once the session was shown
 *  anew, with the leaf marker, inside the graph's view. A change made in a frame's animation
 *  callbacks (the graph draws there) is painted by that frame, one made between frames by the
 *  next: a callback that runs first in every frame notes when the frame began and a message
 *  posted from it, which runs once the frame is painted, when it ended. */
const timeUntilDone = (s, what, action, entryId) =>
  s.exec(
    `const [what, action, entryId] = arguments;
     const key = what + "Done";
     const before = document.body.dataset[key] || "";
     const row = () => document.querySelector('.g-row[data-entry-id="' + entryId + '"]');
     return new Promise((resolve) => {
       // The graph re-creates its row elements when it redraws: take the row as it is now.
       const start = performance.now();
       const go = () => {
         if (action === "click" && !row()) {
           if (performance.now() - start > 10000) resolve({ done: -2, painted: -2 });
           else setTimeout(go, 10);
           return;
         }
         t0 = performance.now();
         if (window.__benchTrace) window.__benchTrace = { t0, calls: [] };
         if (action === "click") row().click();
         else document.getElementById("btn-continue").click();
         poll();
       };
       let t0 = 0;
       // A MutationObserver sees the mark as it is set (a timer poll would add up to ~4 ms).
       let timer = 0;
       let result = null;
       const finish = () => {
         if (!result || (watchLeaf && !leaf)) return;
         clearTimeout(timer);
         gObs.disconnect();
         sObs.disconnect();
         resolve({ ...result, leaf, at: performance.timeOrigin + t0, trace: window.__benchTrace && window.__benchTrace.calls });
       };
       const obs = new MutationObserver(() => check());
       const check = () => {
         const now = document.body.dataset[key] || "";
         if (now !== before && (what !== "select" || now.startsWith(entryId + "#"))) {
           const done = performance.now() - t0;
           obs.disconnect();
           requestAnimationFrame(() => { result = { done, painted: performance.now() - t0 }; finish(); });
           return true;
         }
         return false;
       };
       // Continue: the frame that paints the new leaf's row.
       const watchLeaf = action === "continue";
       let leaf = 0, shown = false, frameStart = 0, inFrame = false;
       const graphEl = document.getElementById("graph");
       const leafDrawn = () => {
         if (!shown) return false;
         const id = document.getElementById("status-leaf").textContent;
         const e = graphEl.querySelector('.g-row.m-leaf[data-entry-id="' + id + '"]');
         if (!e) return false;
         const g = graphEl.getBoundingClientRect(), b = e.getBoundingClientRect();
         return b.bottom > g.top && b.top < g.bottom;
       };
       const ends = new MessageChannel();
       ends.port1.onmessage = () => { inFrame = false; };
       const onFrame = () => {
         if (leaf) return;
         frameStart = performance.now();
         inFrame = true;
         ends.port2.postMessage(0);
         if (leafDrawn()) { leaf = frameStart - t0; finish(); }
         else requestAnimationFrame(onFrame);
       };
       const seen = () => {
         if (leaf || !leafDrawn()) return;
         if (inFrame) { leaf = frameStart - t0; finish(); }
         // Drawn between frames: the next frame's callback (onFrame) notes it.
       };
       const gObs = new MutationObserver(seen);
       // showSession writes the leaf's id into the status line: from then on the rows are the new layout's.
       const sObs = new MutationObserver(() => { shown = true; seen(); });
       const poll = () => {
         obs.observe(document.body, { attributes: true });
         if (watchLeaf) {
           gObs.observe(graphEl, { subtree: true, childList: true, attributes: true, attributeFilter: ["class", "style"] });
           sObs.observe(document.getElementById("status-leaf"), { childList: true, characterData: true, subtree: true });
           requestAnimationFrame(onFrame);
         }
         timer = setTimeout(() => { obs.disconnect(); gObs.disconnect(); sObs.disconnect(); resolve({ done: -1, painted: -1, leaf: -1 }); }, 30000);
         check();
       };
       go();
     });`,
    what,
    action,
    entryId,
  );

runBench("bench-interact", async (s, sessionPath) => {
  // Let the warm-ups after open (timeline numbers, library indexing) settle.
  await new Promise((r) => setTimeout(r, 8000));
  if (process.env.ARBOR_BENCH_TRACE) {
    // Each IPC call of an action (command, sent and answered in ms after the action), to stderr:
    // Tauri's IPC goes through fetch("ipc://localhost/<command>").
    await s.exec(`
      window.__benchTrace = { t0: 0, calls: [] };
      const orig = window.fetch;
      window.fetch = (url, init) => {
        const tr = window.__benchTrace, a = performance.now() - tr.t0;
        const p = orig.call(window, url, init);
        p.then(() => tr.calls.push([String(url).split("/").pop(), +a.toFixed(1), +(performance.now() - tr.t0).toFixed(1)]));
        return p;
      };`);
  }
  const click = [];
  const cont = [];
  for (let i = 0; i < ROUNDS; i++) {
    const id = await pickRow(s, (i + 0.5) / ROUNDS);
    if (!id) throw new Error(`no node row at ${(i + 0.5) / ROUNDS}`);
    const ms = await timeUntilDone(s, "select", "click", id);
    if (ms.done < 0) throw new Error(`selecting ${id} did not finish (${ms.done === -2 ? "its row left the graph" : "no select mark in 30 s"}): ${await s.text("#notice")}`);
    click.push(ms);
    if (PAUSE) await new Promise((r) => setTimeout(r, PAUSE));
    const c = await timeUntilDone(s, "continue", "continue", id);
    if (c.done < 0) throw new Error(`continue from ${id} did not finish: ${await s.text("#notice")}`);
    cont.push(c);
    if (c.trace) console.error(JSON.stringify({ continue: +c.done.toFixed(1), at: +c.at.toFixed(1), calls: c.trace }));
  }
  await s.screenshot("bench-interact-100k");
  return {
    session: path.basename(sessionPath),
    bytes: fs.statSync(sessionPath).size,
    status: await s.text("#status-info"),
    clickToUpdatedMs: benchStats(click.map((x) => x.done), { all: true }),
    clickToPaintedMs: benchStats(click.map((x) => x.painted), { all: true }),
    continueToUpdatedMs: benchStats(cont.map((x) => x.done), { all: true }),
    // The first frame that paints both the mark and the new leaf's row.
    continueToPaintedMs: benchStats(cont.map((x) => Math.max(x.painted, x.leaf)), { all: true }),
    // The frame after the mark alone (this file's "painted" until 2026-12-05).
    continueToNextFrameMs: benchStats(cont.map((x) => x.painted), { all: true }),
    // The first frame that paints the new leaf's row.
    continueToLeafRowMs: benchStats(cont.map((x) => x.leaf), { all: true }),
    targetMs: 50,
  };
});
