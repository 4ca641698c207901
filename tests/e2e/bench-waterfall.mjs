// Context waterfall benchmark in the real webview (not part of the test run).
//
//   node scripts/gen-sessions.mjs --entries 100000 --seed 42 --out $DIR/agent/sessions/--p--/s100k.jsonl
//   ARBOR_BIN=... ARBOR_BENCH_AGENT_DIR=$DIR/agent node tests/e2e/bench-waterfall.mjs
//
// Opens the big session, then measures (1) the first draw of the Timeline tab: click on the tab
// -> command -> chart drawn and painted (the first call on a session reads every entry of the
// path once; later calls use the kept numbers), (1b) the same again 8 times: another tab, new
// budgets while the Timeline tab is hidden, a pause, click on the Timeline tab (the whole
// first-draw path: command, decoding, the tab's DOM, the chart), (2) a redraw with new budgets (command + draw,
// the numbers kept), (3) get_timeline alone over IPC, (4) hover: the mousemove handler's work
// (synchronous, per event) over 400 positions, and event -> next painted frame for a few.
// Targets: first draw 100 ms, hover 16 ms.

import fs from "node:fs";
import path from "node:path";
import { benchStats, runBench } from "./driver.mjs";



/** Show the Timeline tab (or nudge the context window) and time it until the chart is painted. */
const timeDraw = (s, how) =>
  s.exec(
    `const box = document.getElementById("timeline");
     const before = box.dataset.firstDrawMs;
     delete box.dataset.firstDrawMs;
     const t0 = performance.now();
     if (arguments[0] === "tab") document.querySelector('.tab[data-tab="timeline"]').click();
     else { const r = document.getElementById("reserve"); r.value = String(Number(r.value) + (Number(r.value) > 30000 ? -512 : 512)); r.dispatchEvent(new Event("input")); }
     return new Promise((resolve) => {
       const t1 = performance.now();
       const poll = () => {
         if (performance.now() - t1 > 60000) { resolve({ error: document.getElementById("notice").textContent, box: box.textContent.slice(0, 200) }); return; }
         if (box.dataset.firstDrawMs) requestAnimationFrame(() => resolve({ paintedMs: performance.now() - t0, clickToStartMs: +box.dataset.startedAt - t0, doneToFrameMs: performance.now() - +box.dataset.doneAt, commandMs: +box.dataset.commandMs, commandAndDrawMs: +box.dataset.firstDrawMs, buildMs: +box.dataset.buildMs, source: box.dataset.source, phases: box.querySelector(".wf-chart").dataset.phases + " | " + box.dataset.showPhases, decodeMs: +box.dataset.decodeMs, chartDrawMs: +box.querySelector(".wf-chart").dataset.drawMs, layoutMs: +box.querySelector(".wf-chart").dataset.layoutMs, styleMs: +box.querySelector(".wf-chart").dataset.styleMs, downsampleMs: +box.querySelector(".wf-chart").dataset.downsampleMs, points: +box.querySelector(".wf-chart").dataset.points, drops: +box.querySelector(".wf-chart").dataset.drops, before }));
         else setTimeout(poll, 1);
       };
       poll();
     });`,
    how,
  );

runBench("bench-waterfall", async (s, sessionPath) => {
  await new Promise((r) => setTimeout(r, 1000));

  const first = await timeDraw(s, "tab");
  if (first.error !== undefined) throw new Error(`the chart was not drawn: ${JSON.stringify(first)}`);
  await s.screenshot("bench-waterfall-100k");
  const tabAgain = [];
  for (let i = 0; i < 8; i++) {
    await new Promise((r) => setTimeout(r, 300));
    // Another tab, new budgets while the Timeline tab is hidden (the context view and the
    // preview follow them; let them finish), then the Timeline tab again.
    await s.exec(`document.querySelector('.tab[data-tab="detail"]').click(); const r = document.getElementById("reserve"); r.value = String(Number(r.value) + (Number(r.value) > 30000 ? -512 : 512)); r.dispatchEvent(new Event("input"));`);
    await new Promise((r) => setTimeout(r, 1500));
    tabAgain.push(await timeDraw(s, "tab"));
  }
  const again = [];
  for (let i = 0; i < 5; i++) again.push(await timeDraw(s, "budgets"));
  const cmd = [];
  for (let i = 0; i < 5; i++) {
    cmd.push(
      await s.exec(`const t = performance.now();
        return window.__TAURI_INTERNALS__.invoke("get_timeline", { entryId: null, budgets: { enabled: true, reserveTokens: 16384, keepRecentTokens: 20000, branchReserveTokens: 16384, contextWindow: 200000 } }).then(() => performance.now() - t);`),
    );
  }
  // Hover: synthetic mousemoves over the whole width, each timed around its handler.
  const hover = await s.exec(`
    const c = document.querySelector("#timeline .wf-chart");
    const r = c.getBoundingClientRect();
    const sync = [];
    for (let k = 0; k < 400; k++) {
      const x = r.left + 4 + ((k * 7919) % Math.floor(r.width - 8));
      const t = performance.now();
      c.dispatchEvent(new MouseEvent("mousemove", { clientX: x, clientY: r.top + 40, bubbles: true }));
      sync.push(performance.now() - t);
    }
    const hoverId = c.dataset.hoverId;
    const toPaint = [];
    return new Promise((resolve) => {
      let k = 0;
      const one = () => {
        const x = r.left + 4 + ((k * 104729) % Math.floor(r.width - 8));
        const t = performance.now();
        c.dispatchEvent(new MouseEvent("mousemove", { clientX: x, clientY: r.top + 40, bubbles: true }));
        requestAnimationFrame(() => requestAnimationFrame(() => {
          toPaint.push(performance.now() - t);
          if (++k < 30) one(); else resolve({ sync, toPaint, hoverId, tip: c.querySelector(".wf-tip").textContent });
        }));
      };
      one();
    });`);
  await s.screenshot("bench-waterfall-100k-hover");
  const report = {
    session: path.basename(sessionPath),
    bytes: fs.statSync(sessionPath).size,
    points: first.points,
    drops: first.drops,
    firstDraw: {
      clickToPaintedMs: +first.paintedMs.toFixed(1),
      answer: first.source,
      commandMs: first.commandMs,
      buildMs: first.buildMs,
      decodeMs: first.decodeMs,
      commandAndDrawMs: first.commandAndDrawMs,
      chartDrawMs: first.chartDrawMs,
      ofWhichLayoutMs: first.layoutMs,
      ofWhichStyleMs: first.styleMs,
      ofWhichDownsampleMs: first.downsampleMs,
      phases: first.phases,
      clickToStartMs: +first.clickToStartMs.toFixed(1),
      doneToFrameMs: +first.doneToFrameMs.toFixed(1),
    },
    tabShownAgain: {
      clickToPaintedMs: benchStats(tabAgain.map((a) => a.paintedMs)),
      answers: [...new Set(tabAgain.map((a) => a.source))],
      commandMs: benchStats(tabAgain.map((a) => a.commandMs)),
      buildMs: benchStats(tabAgain.map((a) => a.buildMs)),
      decodeMs: benchStats(tabAgain.map((a) => a.decodeMs)),
      commandAndDrawMs: benchStats(tabAgain.map((a) => a.commandAndDrawMs)),
      chartDrawMs: benchStats(tabAgain.map((a) => a.chartDrawMs)),
      ofWhichLayoutMs: benchStats(tabAgain.map((a) => a.layoutMs)),
      ofWhichStyleMs: benchStats(tabAgain.map((a) => a.styleMs)),
      ofWhichDownsampleMs: benchStats(tabAgain.map((a) => a.downsampleMs)),
      phases: tabAgain.map((a) => a.phases),
      doneToFrameMs: benchStats(tabAgain.map((a) => a.doneToFrameMs)),
    },
    redrawWithNewBudgets: {
      commandAndDrawMs: benchStats(again.map((a) => a.commandAndDrawMs)),
      commandMs: benchStats(again.map((a) => a.commandMs)),
      chartDrawMs: benchStats(again.map((a) => a.chartDrawMs)),
      paintedMs: benchStats(again.map((a) => a.paintedMs)),
    },
    getTimelineCommandMs: benchStats(cmd),
    hoverHandlerMs: benchStats(hover.sync),
    hoverToSecondFrameMs: benchStats(hover.toPaint),
    lastTooltip: hover.tip,
  };
  return report;
});
