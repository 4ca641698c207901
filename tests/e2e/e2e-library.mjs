// End-to-end test of the session library in the real Arbor window under Xvfb, driven
// through WebDriver (same plumbing as e2e.mjs):
//
//   ARBOR_BIN=/path/to/arbor node tests/e2e/e2e-library.mjs
//
// 1. start with an empty index over a folder of sessions (copies of the repo's fixtures);
// 2. search for a phrase that exists only in a compacted-away message;
// 3. see it badged "compacted";
// 4. open it on the graph (the entry is selected and scrolled into view, its fold expanded);
// 5. append to that session from another process and watch the graph grow, selection kept;
// plus the picker's project filter, search within the open session, and the picker updating live.
// Screenshots go to tests/artifacts/library-*.png.

import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { ROOT, Session, check, runScenarios, startDriver, tempEnv, finish } from "./driver.mjs";

const CONF = path.join(ROOT, "src-tauri", "crates", "session-engine", "tests", "fixtures", "conformance");
const COMPACTED_FILE = "2025-03-01T09-00-00-000Z_019550ef-1280-711a-b453-8fd0b31fd7b0.jsonl";
// Only in user message a6771de3 of compaction-repeated.jsonl, which later compactions summarized.
const PHRASE = "queue resolve timeout reducer";
const COMPACTED_ID = "a6771de3";
const NEW_ID = "fee1f011";

function setupSessions(agentDir) {
  const proj = path.join(agentDir, "sessions", "--home-dev-project--");
  const other = path.join(agentDir, "sessions", "--home-dev-other--");
  fs.mkdirSync(proj, { recursive: true });
  fs.mkdirSync(other, { recursive: true });
  fs.copyFileSync(path.join(CONF, "compaction-repeated.jsonl"), path.join(proj, COMPACTED_FILE));
  fs.copyFileSync(path.join(ROOT, "src-tauri", "demo", "demo-session.jsonl"), path.join(proj, "2025-03-01T09-00-00-000Z_demo.jsonl"));
  fs.copyFileSync(path.join(CONF, "branch-simple-siblings.jsonl"), path.join(proj, "2025-03-01T09-00-00-000Z_siblings.jsonl"));
  // A second project, so the project filter has something to filter.
  fs.writeFileSync(
    path.join(other, "2025-04-02T10-00-00-000Z_other.jsonl"),
    [
      `{"type":"session","version":3,"id":"01960000-0000-7000-8000-000000000001","timestamp":"2025-04-02T10:00:00.000Z","cwd":"/home/dev/other"}`,
      `{"type":"message","id":"0a000001","parentId":null,"timestamp":"2025-04-02T10:00:01.000Z","message":{"role":"user","content":"other project: tune the parser","timestamp":1743588001000}}`,
      "",
    ].join("\n"),
  );
  // Hostile content (F47): search snippets must render it as text.
  const xss = path.join(agentDir, "sessions", "--tmp-xss--");
  fs.mkdirSync(xss, { recursive: true });
  const payload = `zzpayloadzz <img src=x onerror="window.__pwned=1;window.__TAURI_INTERNALS__.invoke('canary')"> <script>window.__pwned=2</script> <b onmouseover="window.__pwned=3">bold</b>`;
  fs.writeFileSync(
    path.join(xss, "2025-04-03T10-00-00-000Z_xss.jsonl"),
    [
      `{"type":"session","version":3,"id":"01960000-0000-7000-8000-0000000000f4","timestamp":"2025-04-03T10:00:00.000Z","cwd":"/tmp/xss"}`,
      JSON.stringify({ type: "message", id: "0b000001", parentId: null, timestamp: "2025-04-03T10:00:01.000Z", message: { role: "user", content: payload, timestamp: 1743674401000 } }),
      "",
    ].join("\n"),
  );
  return path.join(proj, COMPACTED_FILE);
}

async function selectedId(s) {
  return s.exec(`return document.getElementById("detail").dataset.entryId || null`);
}

/** The cursor row of the graph, if it is drawn and inside the visible part of the graph. */
async function cursorRow(s) {
  return s.exec(`
    const g = document.getElementById("graph");
    const r = document.querySelector(".g-row.cursor");
    if (!r) return null;
    const gr = g.getBoundingClientRect(), rr = r.getBoundingClientRect();
    return { id: r.dataset.entryId, row: +r.dataset.row, visible: rr.top >= gr.top - 1 && rr.bottom <= gr.bottom + 1 };`);
}

/** Screenshot after the next paints (WebKitGTK under Xvfb paints a little after the DOM changes). */
async function shot(s, name) {
  await s.exec(`return new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(r, 300))))`);
  await s.screenshot(name);
}

function infoCounts(text) {
  return { entries: Number(/(\d+) entries/.exec(text)?.[1] ?? NaN), rows: Number(/(\d+) rows/.exec(text)?.[1] ?? NaN) };
}

async function libraryScenario(display) {
  const { dir, env } = tempEnv("library");
  const file = setupSessions(env.PI_CODING_AGENT_DIR);
  const indexFile = path.join(env.ARBOR_DATA_DIR, "index.sqlite3");
  check("the index does not exist before the first start", !fs.existsSync(indexFile));
  const driver = await startDriver(display, env);
  const s = await Session.start(driver.base);
  try {
    // 1. First start: the index is built (with progress), then the picker lists the sessions.
    const synced = await s.waitFor("first index pass", async () => {
      const st = await s.exec(`const e = document.getElementById("lib-status"); return e && e.dataset.synced === "true" ? e.textContent : null`);
      return st;
    }, 60_000);
    check("first start builds the index", fs.existsSync(indexFile) && /5 sessions indexed/.test(synced), synced);
    const cards = await s.waitFor("session cards", async () => {
      const n = await s.exec(`return document.querySelectorAll("#picker-list .session-card").length`);
      return n >= 5 ? n : null;
    });
    check("the picker lists the indexed sessions", cards === 5, String(cards));
    const groups = await s.exec(`return [...document.querySelectorAll("#picker-list h3.group")].map((h) => h.textContent)`);
    check("sessions are grouped by project", groups.includes("/home/dev/project") && groups.includes("/home/dev/other"), JSON.stringify(groups));
    await shot(s, "library-01-picker");

    // Project filter.
    await s.exec(`const p = document.getElementById("lib-project"); p.value = "/home/dev/other"; p.dispatchEvent(new Event("change"));`);
    const filtered = await s.waitFor("project filter", async () => {
      const n = await s.exec(`return document.querySelectorAll("#picker-list .session-card").length`);
      return n === 1 ? n : null;
    });
    check("filter by project", filtered === 1);
    await s.exec(`const p = document.getElementById("lib-project"); p.value = "__all"; p.dispatchEvent(new Event("change"));`);
    await s.waitFor("all projects again", async () => (await s.exec(`return document.querySelectorAll("#picker-list .session-card").length`)) === 5);

    // A folder the user adds (typed path; the "Add folder…" button opens the native dialog) is
    // indexed and listed; removing it takes its sessions out of the picker.
    const extra = path.join(dir, "elsewhere");
    fs.mkdirSync(extra, { recursive: true });
    fs.writeFileSync(
      path.join(extra, "kept-elsewhere.jsonl"),
      `{"type":"session","version":3,"id":"01960000-0000-7000-8000-0000000000e1","timestamp":"2025-04-04T10:00:00.000Z","cwd":"/home/dev/elsewhere"}\n` +
        JSON.stringify({ type: "message", id: "0c000001", parentId: null, timestamp: "2025-04-04T10:00:01.000Z", message: { role: "user", content: "a session kept elsewhere", timestamp: 1743760801000 } }) + "\n",
    );
    await s.exec(`document.getElementById("lib-roots-box").open = true; document.getElementById("lib-root-path").value = arguments[0];`, extra);
    await s.click("#lib-add-root-path");
    const withExtra = await s.waitFor("the added folder's session", async () => {
      const n = await s.exec(`return document.querySelectorAll("#picker-list .session-card").length`);
      return n === 6 ? n : null;
    }, 30_000);
    const rootsShown = await s.exec(`return [...document.querySelectorAll("#lib-roots .lib-root")].map((r) => ({ path: r.dataset.path, removable: !!r.querySelector("button") }))`);
    check("an added folder is indexed and listed", withExtra === 6 && rootsShown.some((r) => r.removable && r.path === fs.realpathSync(extra)), JSON.stringify(rootsShown));
    await shot(s, "library-01b-folder-added");
    await s.click(`#lib-roots .lib-root[data-path="${fs.realpathSync(extra)}"] button`);
    const afterRemove = await s.waitFor("folder removed", async () => {
      const n = await s.exec(`return document.querySelectorAll("#picker-list .session-card").length`);
      return n === 5 ? n : null;
    }, 30_000);
    check("removing the folder takes its sessions out of the picker", afterRemove === 5);

    // F47 in search: a hostile snippet is shown as text, nothing runs, the canary stays silent.
    await s.cmd("POST", `/element/${await s.find("#lib-search")}/value`, { text: `zzpayloadzz\uE007` });
    const xssHit = await s.waitFor("payload hit", () => s.exec(`const h = document.querySelector("#lib-hits .lib-hit"); return h ? h.querySelector(".lib-snippet").textContent : null`));
    await new Promise((r) => setTimeout(r, 500));
    const dom = await s.exec(`return { els: document.querySelectorAll("#lib-hits img, #lib-hits script, #lib-hits b, #lib-hits [onerror], #lib-hits [onmouseover]").length, pwned: window.__pwned === undefined ? null : window.__pwned }`);
    check("F47: search snippets render hostile markup as text", xssHit.includes("<img") && dom.els === 0 && dom.pwned === null, JSON.stringify({ xssHit, dom }));
    check("F47: the canary command was never invoked from a snippet", !fs.existsSync(path.join(env.ARBOR_DATA_DIR, "canary-invoked")));
    await s.exec(`document.getElementById("lib-search").value = ""; document.getElementById("lib-hits").replaceChildren();`);

    // 2-3. Search a phrase that only exists in a compacted-away message: one hit, badged "compacted".
    await s.cmd("POST", `/element/${await s.find("#lib-search")}/value`, { text: `"${PHRASE}"\uE007` });
    const hits = await s.waitFor("search hits", async () => {
      const h = await s.exec(`return [...document.querySelectorAll("#lib-hits .lib-hit")].map((b) => ({
        id: b.dataset.entryId, status: b.dataset.status, badge: b.querySelector(".hit-badge").textContent,
        mark: b.querySelector(".lib-snippet mark") ? b.querySelector(".lib-snippet mark").textContent : null, path: b.dataset.sessionPath }))`);
      return h.length ? h : null;
    });
    check("the phrase is found once, across sessions", hits.length === 1, JSON.stringify(hits));
    check("the hit is the compacted-away message", hits[0].id === COMPACTED_ID && hits[0].path === file, JSON.stringify(hits[0]));
    check('the hit is badged "compacted"', hits[0].status === "compacted" && hits[0].badge === "compacted", JSON.stringify(hits[0]));
    check("the snippet highlights the match", !!hits[0].mark && PHRASE.includes(hits[0].mark.toLowerCase()), String(hits[0].mark));
    // The status filter: the phrase is not in the model's context anywhere.
    await s.exec(`const w = document.getElementById("lib-hit-status"); w.value = "inContext"; w.dispatchEvent(new Event("change"));`);
    const none = await s.waitFor("filtered search", async () => {
      const t = await s.exec(`return document.getElementById("lib-search-status").textContent`);
      return t === "no match" ? t : null;
    });
    check('filtering hits to "in context" leaves none', none === "no match");
    await s.exec(`const w = document.getElementById("lib-hit-status"); w.value = ""; w.dispatchEvent(new Event("change"));`);
    await s.waitFor("unfiltered search", async () => (await s.exec(`return document.querySelectorAll("#lib-hits .lib-hit").length`)) === 1);
    await shot(s, "library-02-search-compacted");

    // 4. One click opens the session at that entry on the graph.
    await s.click(`#lib-hits .lib-hit[data-entry-id="${COMPACTED_ID}"]`);
    await s.waitFor("the entry selected", async () => (await selectedId(s)) === COMPACTED_ID, 20_000);
    const cur = await s.waitFor("cursor row drawn", async () => {
      const c = await cursorRow(s);
      return c && c.id === COMPACTED_ID ? c : null;
    });
    check("the entry is selected on the graph and scrolled into view", cur.id === COMPACTED_ID && cur.visible, JSON.stringify(cur));
    const rowCls = await s.exec(`const r = document.querySelector(".g-row.cursor"); return r ? r.className : ""`);
    check("the graph greys it (beyond the horizon)", rowCls.includes("m-beyondHorizon"), rowCls);
    check("the picker closed on the session", await s.exec(`return document.getElementById("picker").hidden`));
    await shot(s, "library-03-opened-at-entry");

    // 5. Another process appends to the session: the graph grows, the selection stays.
    const graphRows = () => s.exec(`const g = document.getElementById("graph"); return Math.round(g.querySelector(".graph-spacer").offsetHeight / 24)`);
    const rows0 = await graphRows();
    const info0 = infoCounts(await s.text("#status-info"));
    const leaf0 = await s.text("#status-leaf");
    const line = JSON.stringify({
      type: "message",
      id: NEW_ID,
      parentId: leaf0,
      timestamp: "2025-03-01T10:00:00.000Z",
      message: { role: "user", content: "live follow: a zebra crossing appended by another process", timestamp: 1740823200000 },
    });
    execFileSync("sh", ["-c", 'printf "%s\\n" "$1" >> "$2"', "sh", line, file]);
    const info1 = await s.waitFor("graph to grow", async () => {
      const c = infoCounts(await s.text("#status-info"));
      return c.entries === info0.entries + 1 ? c : null;
    }, 20_000);
    const rows1 = await graphRows();
    check("the graph grew by the appended entry without a reload", info1.entries === info0.entries + 1 && rows1 > rows0, `entries ${info0.entries} -> ${info1.entries}, rows ${rows0} -> ${rows1}`);
    console.log(`     graph rows ${rows0} -> ${rows1}, entries ${info0.entries} -> ${info1.entries}`);
    const leaf1 = await s.waitFor("leaf follows Pi", async () => {
      const l = await s.text("#status-leaf");
      return l === NEW_ID ? l : null;
    });
    check("the leaf follows Pi's new entry", leaf1 === NEW_ID, leaf1);
    check("the selection is kept", (await selectedId(s)) === COMPACTED_ID, String(await selectedId(s)));
    // (the graph refetches its rows after the update; wait for them to be drawn)
    const curAfter = await s.waitFor("cursor row after the update", async () => {
      const c = await cursorRow(s);
      return c && c.id === COMPACTED_ID ? c : null;
    }).catch(() => cursorRow(s));
    check("the cursor stays on the selected entry", curAfter && curAfter.id === COMPACTED_ID, JSON.stringify(curAfter));
    await shot(s, "library-04-after-append-selection-kept");
    // The new entry is on the graph (scroll to the end).
    await s.exec(`const g = document.getElementById("graph"); g.scrollTop = g.querySelector(".graph-spacer").offsetHeight - g.clientHeight;`);
    const newRow = await s.waitFor("new row drawn", () => s.exec(`const r = document.querySelector('.g-row[data-entry-id="${NEW_ID}"]'); return r ? r.className : null`));
    check("the appended entry appears on the graph as the leaf", newRow.includes("m-leaf"), newRow);
    await shot(s, "library-05-new-entry-on-graph");

    // The index followed too: search within the open session finds the appended text, in context.
    await s.click("#btn-sessions");
    await s.exec(`document.getElementById("lib-scope").value = "session"; const i = document.getElementById("lib-search"); i.value = "zebra crossing";`);
    await s.click("#lib-search-go");
    const own = await s.waitFor("search in this session", async () => {
      const h = await s.exec(`return [...document.querySelectorAll("#lib-hits .lib-hit")].map((b) => ({ id: b.dataset.entryId, status: b.dataset.status, badge: b.querySelector(".hit-badge").textContent }))`);
      return h.length && h[0].id === NEW_ID ? h : null;
    });
    check('search within the open session finds the appended entry "in context"', own.length === 1 && own[0].status === "inContext" && own[0].badge === "in context", JSON.stringify(own));
    const card = await s.exec(`const c = document.querySelector('#picker-list .session-card[data-path="${file}"] .sc-meta'); return c ? c.textContent : null`);
    const msgs0 = Number(/(\d+) messages/.exec(card ?? "")?.[1] ?? NaN);
    const expected = execFileSync("sh", ["-c", `grep -c '"type":"message"' "$1"`, "sh", file]).toString().trim();
    check("the picker shows the new message count", msgs0 === Number(expected), `${card} vs ${expected}`);
    await shot(s, "library-06-search-in-session");
  } finally {
    await finish(s, driver, dir);
  }
}

/** A damaged index file: the app moves it aside, rebuilds, and tells the user. */
async function corruptScenario(display) {
  const { dir, env } = tempEnv("library-corrupt");
  setupSessions(env.PI_CODING_AGENT_DIR);
  const indexFile = path.join(env.ARBOR_DATA_DIR, "index.sqlite3");
  fs.writeFileSync(indexFile, Buffer.alloc(8192, "this is not an SQLite database. "));
  const driver = await startDriver(display, env);
  const s = await Session.start(driver.base);
  try {
    const notice = await s.waitFor("index notice", async () => {
      const n = await s.exec(`const e = document.getElementById("notice"); return e && !e.hidden ? e.textContent : null`);
      return n && /index/i.test(n) ? n : null;
    }, 30_000);
    check("a corrupt index is reported to the user", /moved/.test(notice) && /rebuilt/.test(notice), notice);
    const aside = fs.readdirSync(env.ARBOR_DATA_DIR).filter((f) => f.includes(".corrupt-"));
    check("the damaged index was moved aside, not deleted", aside.length >= 1, JSON.stringify(aside));
    const n = await s.waitFor("rebuilt listing", async () => {
      const c = await s.exec(`return document.querySelectorAll("#picker-list .session-card").length`);
      return c >= 5 ? c : null;
    }, 30_000);
    check("the index is rebuilt from the session files", n === 5, String(n));
    await shot(s, "library-07-corrupt-index-notice");
  } finally {
    await finish(s, driver, dir);
  }
}

/** Pi has never run here: its sessions folder does not exist when Arbor starts. The demo opens;
 * when Pi then writes its first session, the picker lists it without a restart. */
async function firstRunScenario(display) {
  const { dir, env } = tempEnv("library-first-run");
  const sessions = path.join(env.PI_CODING_AGENT_DIR, "sessions");
  check("Pi's sessions folder does not exist at start", !fs.existsSync(sessions));
  const driver = await startDriver(display, env);
  const s = await Session.start(driver.base);
  try {
    await s.waitFor("demo session", async () => (((await s.text("#session-title")) || "").includes("demo") ? true : null), 60_000);
    // Pi runs for the first time, in another process.
    const proj = path.join(sessions, "--home-dev-late--");
    execFileSync("sh", ["-c", `mkdir -p "$1" && cat > "$1/2025-05-01T10-00-00-000Z_late.jsonl"`, "sh", proj], {
      input:
        `{"type":"session","version":3,"id":"01960000-0000-7000-8000-0000000000a1","timestamp":"2025-05-01T10:00:00.000Z","cwd":"/home/dev/late"}\n` +
        JSON.stringify({ type: "message", id: "0d000001", parentId: null, timestamp: "2025-05-01T10:00:01.000Z", message: { role: "user", content: "the first session Pi wrote here", timestamp: 1746093601000 } }) + "\n",
    });
    await s.click("#btn-sessions");
    let lastClick = Date.now();
    const card = await s.waitFor("the new session in the picker", async () => {
      const t = await s.exec(`const c = document.querySelector("#picker-list .session-card"); return c ? c.textContent : null`);
      if (!t && Date.now() - lastClick > 1000) {
        lastClick = Date.now();
        await s.exec(`document.getElementById("btn-sessions").click()`); // list again
      }
      return t;
    }, 20_000);
    check("a Pi sessions folder created after start is followed without a restart", /the first session Pi wrote here/.test(card), card);
    await shot(s, "library-08-first-run-folder-appears");
  } finally {
    await finish(s, driver, dir);
  }
}

runScenarios("e2e-library", [["library", libraryScenario], ["corrupt", corruptScenario], ["first-run", firstRunScenario]]);
