// Memory benchmark in the real window (not part of the test run).
//
//   ARBOR_BIN=<release arbor> ARBOR_BENCH_AGENT_DIR=$DIR/agent node tests/e2e/bench-memory.mjs
//
// Opens the big session from the picker, then reads from /proc the resident memory (VmRSS) and
// its peak (VmHWM) of the app's main process and of its web process, sampled every 250 ms:
//  - "opened": once the graph is drawn and the leaf selected;
//  - "settled": once the background work an open starts is done (the quality marks of every
//    summary, `data-quality-marks` on <body>; the library's index of the folder, `data-synced` on
//    the index status), or after ARBOR_BENCH_SETTLE_S seconds (default 240);
//  - "interacted": after ARBOR_BENCH_ROUNDS (default 6) clicks on nodes spread over the graph,
//    each followed by "Continue from here", and 3 s of rest.
// The peak over the whole run is VmHWM at the end. Each figure is also given as a multiple of the
// session file's size.

import fs from "node:fs";
import path from "node:path";
import { appMemory, runBench, sleep } from "./driver.mjs";

const SETTLE_S = Number(process.env.ARBOR_BENCH_SETTLE_S || 240);
const ROUNDS = Number(process.env.ARBOR_BENCH_ROUNDS || 6);

runBench("bench-memory", async (s, sessionPath, { pgid }) => {
  const bytes = fs.statSync(sessionPath).size;
  const mb = bytes / (1 << 20);
  const ratio = (m) => (m ? { ...m, rssX: +(m.rssMB / mb).toFixed(2), peakX: +(m.peakMB / mb).toFixed(2) } : null);
  const read = () => {
    const m = appMemory(pgid);
    return { main: ratio(m.main), web: ratio(m.web), network: m.network };
  };
  const opened = read();
  if (!opened.main) throw new Error(`no app process found in process group ${pgid}`);

  // Settle: sample until the open's background work is done, keeping the highest resident.
  let maxMainRss = 0;
  let maxWebRss = 0;
  const sample = () => {
    const m = read();
    maxMainRss = Math.max(maxMainRss, m.main?.rssMB || 0);
    maxWebRss = Math.max(maxWebRss, m.web?.rssMB || 0);
    return m;
  };
  const t0 = Date.now();
  let settledAfterS = null;
  while (Date.now() - t0 < SETTLE_S * 1000) {
    sample();
    const done = await s.exec(
      `const l = document.getElementById("lib-status");
       return !!document.body.dataset.qualityMarks && (!l || l.dataset.synced === "true");`,
    );
    if (done) {
      settledAfterS = +((Date.now() - t0) / 1000).toFixed(1);
      break;
    }
    await sleep(250);
  }
  await sleep(2000);
  const settled = sample();

  // Interact: click nodes spread over the graph and continue from each.
  for (let i = 0; i < ROUNDS; i++) {
    const id = await s.exec(
      `const g = document.getElementById("graph");
       g.scrollTop = g.scrollHeight * arguments[0];
       return new Promise((resolve) => {
         const t0 = performance.now();
         const poll = () => {
           const b = g.getBoundingClientRect();
           const rows = [...document.querySelectorAll('.g-row:not([data-kind="fold"])')].filter((r) => {
             const a = r.getBoundingClientRect();
             return r.dataset.entryId && a.top >= b.top && a.bottom <= b.bottom;
           });
           if (rows.length) resolve(rows[Math.floor(rows.length / 2)].dataset.entryId);
           else if (performance.now() - t0 > 10000) resolve(null);
           else setTimeout(poll, 20);
         };
         poll();
       });`,
      (i + 0.5) / ROUNDS,
    );
    if (!id) throw new Error(`no node row at ${(i + 0.5) / ROUNDS}`);
    await s.exec(`document.querySelector('.g-row[data-entry-id="' + arguments[0] + '"]').click()`, id);
    await s.waitFor(`${id} selected`, () => s.exec(`return (document.body.dataset.selectDone || "").startsWith(arguments[0] + "#")`, id), 30_000);
    const before = await s.exec(`return document.body.dataset.continueDone || ""`);
    await s.exec(`document.getElementById("btn-continue").click()`);
    await s.waitFor(`continue from ${id}`, async () => (await s.exec(`return document.body.dataset.continueDone || ""`)) !== before, 30_000);
    sample();
  }
  await sleep(3000);
  const interacted = sample();

  return {
    session: path.basename(sessionPath),
    bytes,
    settledAfterS,
    opened,
    settled,
    interacted,
    maxResidentMB: { main: maxMainRss, web: maxWebRss },
    maxResidentX: { main: +(maxMainRss / mb).toFixed(2), web: +(maxWebRss / mb).toFixed(2) },
    // VmHWM at the end: the highest resident over the whole run, between samples too.
    peakMB: { main: interacted.main?.peakMB, web: interacted.web?.peakMB },
    peakX: { main: interacted.main?.peakX, web: interacted.web?.peakX },
  };
});
