// Graph benchmark in the real webview (not part of the test run; takes about a minute).
//
//   node scripts/gen-sessions.mjs --entries 100000 --seed 42 --out $DIR/agent/sessions/--p--/s100k.jsonl
//   ARBOR_BIN=... ARBOR_BENCH_AGENT_DIR=$DIR/agent node tests/e2e/bench.mjs
//
// Measures (1) click on the session in the picker -> first painted graph rows, (2) the
// open_session command alone (engine open + layout + IPC), (3) frame times while scrolling,
// against (4) a static text list scrolled the same way in the same window (the scrolling ratio of docs/PERFORMANCE.md).

import fs from "node:fs";
import path from "node:path";
import { Session, benchStats, killAll, startDriver, startXvfb, tempEnv } from "./driver.mjs";

const agent = process.env.ARBOR_BENCH_AGENT_DIR;
if (!agent) throw new Error("set ARBOR_BENCH_AGENT_DIR to an agent dir with one big session");


async function main() {
  const display = await startXvfb();
  const { dir, env } = tempEnv("bench");
  env.PI_CODING_AGENT_DIR = agent;
  const driver = await startDriver(display, env);
  const s = await Session.start(driver.base);
  try {
    await s.cmd("POST", "/timeouts", { script: 300_000 });
    const tPick = Date.now();
    await s.waitFor("picker", () => s.exec(`return document.querySelectorAll(".session-card").length > 0`), 300_000);
    console.log(`picker listed the sessions after ${Date.now() - tPick} ms (the listing reads each file)`);
    const sessionPath = await s.exec(`return document.querySelector(".session-card").dataset.path`);
    const firstPaint = await s.exec(`
      const t0 = performance.now();
      document.querySelector(".session-card").click();
      return new Promise((resolve) => {
        const poll = () => {
          if (document.querySelectorAll(".g-row").length > 0) requestAnimationFrame(() => resolve(performance.now() - t0));
          else setTimeout(poll, 2);
        };
        poll();
      });`);
    const info = await s.text("#status-info");
    const openOnly = [];
    for (let i = 0; i < 3; i++) {
      openOnly.push(await s.exec(`
        const t = performance.now();
        return window.__TAURI_INTERNALS__.invoke("open_session", { path: arguments[0] }).then(() => performance.now() - t);`, sessionPath));
    }
    await s.exec(`return window.__TAURI_INTERNALS__.invoke("open_session", { path: arguments[0] })`, sessionPath);
    await s.screenshot("bench-100k-open");
    const folded = await scrollBench(s);
    // A JS click: a notice can cover the button for WebDriver.
    await s.exec(`document.getElementById("btn-unfold").click()`);
    // Unfolded, every entry has a row: "N entries · N rows" (any size of session).
    const entries = (info.match(/(\d+) entries/) || [])[1];
    await s.waitFor("unfolded rows", async () => new RegExp(`\\b${entries} rows`).test(await s.text("#status-info")), 120_000);
    const unfolded = await scrollBench(s, 0.4);
    const staticList = await staticListBench(s);
    // The same ratio with the two scrolled in turns (4 x 150 frames each), so that a change in
    // the shared machine's load during the run falls on both alike.
    const turns = { graph: [], list: [] };
    for (let k = 0; k < 4; k++) {
      turns.graph.push(...(await scrollBench(s, 0.1 + 0.2 * k, 150)).intervals);
      turns.list.push(...(await staticListBench(s, 150)).intervals);
    }
    const interleaved = { graphMs: benchStats(turns.graph), listMs: benchStats(turns.list) };
    interleaved.frameRatioUnfolded = +(interleaved.graphMs.median / interleaved.listMs.median).toFixed(2);
    await s.screenshot("bench-100k-unfolded");
    const report = {
      session: path.basename(sessionPath),
      bytes: fs.statSync(sessionPath).size,
      status: info,
      clickToFirstPaintMs: +firstPaint.toFixed(1),
      openSessionCommandMs: openOnly.map((x) => +x.toFixed(1)),
      folded: { ...folded, intervals: undefined },
      unfolded: { ...unfolded, intervals: undefined },
      staticList: { ...staticList, intervals: undefined },
      frameRatioFolded: +(folded.rafIntervalMs.median / staticList.rafIntervalMs.median).toFixed(2),
      frameRatioUnfolded: +(unfolded.rafIntervalMs.median / staticList.rafIntervalMs.median).toFixed(2),
      meanFrameRatioUnfolded: +(unfolded.meanIntervalMs / staticList.meanIntervalMs).toFixed(2),
      interleaved,
    };
    console.log(JSON.stringify(report, null, 2));
  } finally {
    await s.end();
    killAll();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** From `startFraction` of the height, scroll 10 rows per frame for `frames` frames; rAF intervals
 * and the graph's own draw times. Each interval is also classed by whether the frame before it
 * made row elements (the band moved) or not, so the two kinds of frame are reported apart. */
async function scrollBench(s, startFraction = 0, frames = 600) {
  const scroll = await s.exec(`
      const g = document.getElementById("graph");
      g.scrollTop = g.scrollHeight * arguments[0];
      const intervals = [], made = [];
      let last = null, n = 0, added = 0;
      const mo = new MutationObserver((ms) => {
        for (const m of ms) for (const a of m.addedNodes) if (a.classList?.contains("g-row")) added++;
      });
      mo.observe(g, { childList: true, subtree: true });
      const before = window.arborBench.frameTimes().length;
      return new Promise((resolve) => {
        const step = (ts) => {
          if (last !== null) {
            intervals.push(ts - last);
            made.push(added);
          }
          added = 0;
          last = ts;
          g.scrollTop += 240;
          if (++n < arguments[1]) requestAnimationFrame(step);
          else {
            mo.disconnect();
            setTimeout(() => resolve({ intervals, made, draws: window.arborBench.frameTimes().slice(before), rows: g.scrollHeight / 24 }), 200);
          }
        };
        requestAnimationFrame(step);
      });`, startFraction, frames);
  const kind = (moved) => {
    const iv = scroll.intervals.filter((_, i) => (scroll.made[i] > 0) === moved);
    return benchStats(iv);
  };
  return {
    rows: Math.round(scroll.rows),
    intervals: scroll.intervals,
    rafIntervalMs: benchStats(scroll.intervals),
    meanIntervalMs: mean(scroll.intervals),
    // frames that made row elements (a band move) and frames that made none
    bandMoveFramesMs: kind(true),
    stillFramesMs: kind(false),
    graphDrawMs: benchStats(scroll.draws),
  };
}

/** The reference: a static text list of 4000 rows laid over the graph, in the same window and
 * size, scrolled the same way (240 px per frame for `frames` frames). */
async function staticListBench(s, frames = 600) {
  const r = await s.exec(`
      const g = document.getElementById("graph");
      const box = g.getBoundingClientRect();
      const list = document.createElement("div");
      list.style.cssText = "position:fixed;overflow:auto;z-index:9999;background:#fff;font:13px monospace;left:" + box.left + "px;top:" + box.top + "px;width:" + box.width + "px;height:" + box.height + "px";
      const rows = [];
      for (let i = 0; i < 4000; i++) rows.push("<div style='height:24px;line-height:24px;white-space:nowrap'>row " + i + " · assistant · a static line of text of about graph-row length</div>");
      list.innerHTML = rows.join("");
      document.body.appendChild(list);
      const intervals = [];
      let last = null, n = 0;
      return new Promise((resolve) => {
        const step = (ts) => {
          if (last !== null) intervals.push(ts - last);
          last = ts;
          list.scrollTop += 240;
          if (list.scrollTop + list.clientHeight >= list.scrollHeight - 1) list.scrollTop = 0;
          if (++n < arguments[0]) requestAnimationFrame(step);
          else { list.remove(); resolve(intervals); }
        };
        requestAnimationFrame(step);
      });`, frames);
  return { intervals: r, rafIntervalMs: benchStats(r), meanIntervalMs: mean(r) };
}

function mean(xs) {
  return +(xs.reduce((a, b) => a + b, 0) / xs.length).toFixed(1);
}

main().catch((e) => {
  console.error(e);
  killAll();
  process.exit(1);
});
