// Open benchmark in the real webview (not part of the test run).
//
//   ARBOR_BIN=<release arbor> ARBOR_BENCH_AGENT_DIR=$DIR/agent node tests/e2e/bench-open.mjs
//
// Opens the big session from the picker ARBOR_BENCH_ROUNDS times (default 6; the first open is
// done by the harness and not counted) and times, from the click on the session's card: the
// first painted graph rows of the new open ("firstPaint"), and the leaf selected with detail
// and context drawn (`data-select-done`, "leafSelected"). ARBOR_BENCH_TRACE=1 prints each IPC
// call of an open (command, sent and answered in ms after the click) to stderr. Between rounds the app rests 3 s, so
// each open starts with the background work of the previous one finished. The report ends with
// the main process's peak resident memory over the run (mainPeakMB).

import { appMemory, benchStats, runBench, sleep } from "./driver.mjs";

const ROUNDS = Number(process.env.ARBOR_BENCH_ROUNDS || 6);

runBench("bench-open", async (s, _path, { pgid }) => {
  const paint = [];
  const selected = [];
  for (let i = 0; i < ROUNDS; i++) {
    await sleep(3000);
    await s.exec(`document.getElementById("btn-sessions").click()`);
    await s.waitFor("picker", () => s.exec(`return !document.getElementById("picker").hidden && document.querySelectorAll(".session-card").length > 0`), 60_000);
    const r = await s.exec(`
      const trace = [];
      let t0 = performance.now();
      if (arguments[0]) {
        // Tauri's IPC goes through fetch("ipc://localhost/<command>") (the invoke hook itself is read-only).
        if (!window.__benchFetch) window.__benchFetch = window.fetch;
        window.fetch = (url, init) => {
          const a = performance.now() - t0;
          const cmd = String(url).split("/").pop() + (String(url).endsWith("graph_window") ? " " + init.body : "");
          const p = window.__benchFetch.call(window, url, init);
          p.then(() => trace.push([cmd, +a.toFixed(1), +(performance.now() - t0).toFixed(1)]), () => trace.push([cmd, +a.toFixed(1), "err"]));
          return p;
        };
      }
      for (const row of document.querySelectorAll(".g-row")) row.dataset.stale = "1";
      const before = document.body.dataset.selectDone || "";
      t0 = performance.now();
      document.querySelector(".session-card").click();
      return new Promise((resolve) => {
        let painted = null, doneAt = null, lastTick = performance.now();
        const poll = () => {
          const now = performance.now();
          if (arguments[0] && now - lastTick > 25) trace.push(["blocked", +(lastTick - t0).toFixed(1), +(now - t0).toFixed(1)]);
          lastTick = now;
          if (painted === null && document.querySelector(".g-row:not([data-stale])")) {
            painted = -1;
            trace.push(["rows in the DOM", +(performance.now() - t0).toFixed(1)]);
            requestAnimationFrame(() => {
              painted = performance.now() - t0;
              trace.push(["painted", +painted.toFixed(1)]);
            });
          }
          if (doneAt === null && (document.body.dataset.selectDone || "") !== before) {
            doneAt = performance.now() - t0;
            trace.push(["leaf selected", +doneAt.toFixed(1)]);
          }
          if (painted > 0 && doneAt !== null) setTimeout(() => resolve({ painted, selected: doneAt, trace }), arguments[0] ? 1500 : 0);
          else if (performance.now() - t0 > 60000) resolve({ painted, selected: -1 });
          else setTimeout(poll, 2);
        };
        poll();
      });`, !!process.env.ARBOR_BENCH_TRACE);
    if (r.trace?.length) console.error(JSON.stringify(r.trace));
    paint.push(r.painted);
    selected.push(r.selected);
  }
  // The main process's peak (VmHWM) over the whole run: the harness's open and every round.
  const main = appMemory(pgid).main;
  return { rounds: ROUNDS, firstPaintMs: benchStats(paint, { all: true }), leafSelectedMs: benchStats(selected, { all: true }), mainPeakMB: main?.peakMB ?? null };
});
