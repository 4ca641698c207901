// End-to-end test of a big session's first paint in the real window: its newest entries drawn
// read-only while the full open reads the file, then the whole graph at the same leaf. The app's
// size threshold (512 MiB) is lowered so a generated 10k-entry session (27 MB) takes that path.
//
//   ARBOR_BIN=/path/to/arbor node tests/e2e/e2e-preview.mjs

import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { ROOT, Session, check, finish, runScenarios, startDriver, tempEnv } from "./driver.mjs";

async function preview(display) {
  const { dir, env } = tempEnv("preview");
  const file = path.join(env.PI_CODING_AGENT_DIR, "sessions", "--p--", "s10k.jsonl");
  fs.mkdirSync(path.dirname(file), { recursive: true });
  execFileSync("node", [path.join(ROOT, "scripts", "gen-sessions.mjs"), "--entries", "10000", "--seed", "42", "--out", file], { stdio: "ignore" });
  const driver = await startDriver(display, { ...env, ARBOR_PREVIEW_MIN_BYTES: "1" });
  const s = await Session.start(driver.base);
  try {
    await s.cmd("POST", "/timeouts", { script: 120_000 });
    await s.waitFor("session cards", () => s.exec(`return document.querySelectorAll(".session-card").length > 0`), 60_000);
    // Watch every frame from the click: what the preview drew, and what the whole graph drew.
    const r = await s.exec(`
      const seen = { preview: null, ids: new Set() };
      const before = document.body.dataset.selectDone || "";
      document.querySelector(".session-card").click();
      return new Promise((resolve) => {
        const t0 = performance.now();
        const poll = () => {
          if (document.body.dataset.preview === "1") {
            const rows = [...document.querySelectorAll(".g-row")];
            for (const e of rows) if (e.dataset.entryId) seen.ids.add(e.dataset.entryId);
            const leaf = document.querySelector(".g-row.m-leaf");
            const cont = document.getElementById("btn-continue");
            if (!seen.preview && leaf) seen.preview = {
              leaf: leaf.dataset.entryId,
              continueDisabled: cont.disabled,
              continueTitle: cont.title,
              sessionsDisabled: document.getElementById("btn-sessions").disabled,
              banner: document.getElementById("notice").textContent,
            };
          }
          if ((document.body.dataset.selectDone || "") !== before && document.body.dataset.preview !== "1") {
            resolve({ ...seen, ids: [...seen.ids], selected: document.getElementById("detail").dataset.entryId,
              sessionsDisabled: document.getElementById("btn-sessions").disabled, banner: document.getElementById("notice").hidden });
          } else if (performance.now() - t0 > 100000) resolve({ ...seen, ids: [...seen.ids], timeout: true });
          else requestAnimationFrame(poll);
        };
        poll();
      });`);
    const p = r.preview;
    // (The "earlier entries" row sits at the top of the graph, out of view; tests/preview_cmds.rs checks it.)
    check("the preview is drawn before the full open, with its leaf", !!p && !!p.leaf, JSON.stringify(r).slice(0, 400));
    check("the preview says it is reading the whole session", /Reading the whole session/.test(p?.banner ?? ""), p?.banner);
    check("Continue and the picker wait for the full open, saying why", p?.continueDisabled && p?.sessionsDisabled && /whole session is read/.test(p?.continueTitle ?? ""), JSON.stringify(p));
    check("the whole graph replaces it at the same leaf, the controls back", r.selected === p?.leaf && r.sessionsDisabled === false && r.banner === true, JSON.stringify({ selected: r.selected, leaf: p?.leaf }));
    // Every entry the preview drew is in the open session.
    const missing = await s.exec(`
      return (async (ids) => {
        const missing = [];
        for (const id of ids) {
          try { await window.__TAURI_INTERNALS__.invoke("reveal_entry", { entryId: id }); } catch (e) { missing.push(id); }
        }
        return missing;
      })(arguments[0]);`, r.ids);
    check("every entry the preview drew is in the full session", r.ids.length > 10 && missing.length === 0, `${r.ids.length} drawn, missing ${JSON.stringify(missing)}`);
  } finally {
    await finish(s, driver, dir);
  }
}

runScenarios("e2e-preview", [["preview", preview]]);
