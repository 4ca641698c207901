// Shared WebDriver plumbing for the end-to-end test and the benchmark: Xvfb + tauri-driver (npm)
// + WebKitWebDriver, plain WebDriver over fetch (no extra Rust dev-dependencies to compile).
// Xvfb and the driver run in their own process groups, which are killed whole at the end
// (killing only tauri-driver leaves WebKitWebDriver behind with the pipe open).

import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const ARTIFACTS = path.join(ROOT, "tests", "artifacts");
export const BIN = process.env.ARBOR_BIN || path.join(process.env.CARGO_TARGET_DIR || path.join(ROOT, "target"), "debug", "arbor");
// Installed by scripts/setup.sh (outside ui/'s lockfile, see there).
export const DRIVER = path.join(ROOT, "tests", "e2e", "driver", "node_modules", ".bin", "tauri-driver");
const groups = [];
export const counts = { passed: 0, failed: 0 };

export function killAll() {
  for (const pid of groups.splice(0)) {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      /* already gone */
    }
  }
}
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => (killAll(), process.exit(1)));
process.on("exit", killAll);

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let xDisplay = null;

/**
 * The Xvfb screen as a PNG: what the window shows, as a person would see it. WebDriver's own
 * screenshot waits for WebKit's next "presentation update", which, when the window paints
 * without OpenGL compositing (the default where there is no GPU), stops coming a few seconds
 * after the page loads although the window keeps painting: the command then never answers.
 * ImageMagick's `import` (scripts/setup.sh installs it) reads the X server instead.
 */
export function captureDisplay(file) {
  if (!xDisplay) throw new Error("no Xvfb display to capture (startXvfb first)");
  const r = spawnSync("import", ["-display", xDisplay, "-window", "root", file], { encoding: "utf8", timeout: 20_000 });
  if (r.status !== 0) throw new Error(`capturing ${xDisplay} failed: ${r.error || r.stderr}`);
}

export async function startXvfb() {
  const x = spawn("Xvfb", ["-displayfd", "1", "-screen", "0", "1280x800x24", "-nolisten", "tcp"], {
    detached: true,
    stdio: ["ignore", "pipe", "ignore"],
  });
  groups.push(x.pid);
  const display = await new Promise((resolve, reject) => {
    let buf = "";
    const t = setTimeout(() => reject(new Error("Xvfb did not report a display in 10 s")), 10_000);
    x.stdout.on("data", (d) => {
      buf += d;
      const m = /(\d+)\s*\n/.exec(buf);
      if (m) {
        clearTimeout(t);
        resolve(`:${m[1]}`);
      }
    });
    x.on("exit", (c) => reject(new Error(`Xvfb exited with ${c}`)));
  });
  xDisplay = display;
  return display;
}

/** A port the OS says is free now (bound to port 0, then released). A random number in the
 *  ephemeral range could be an outgoing connection's local port ("Unable to listen"). */
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

export async function startDriver(display, env) {
  let err = "";
  // A port can still be taken between the check and tauri-driver's bind: then it exits, and
  // another pair of ports is tried.
  for (let attempt = 0; attempt < 3; attempt++) {
    const [port, nativePort] = [await freePort(), await freePort()];
    const d = spawn(DRIVER, ["--port", String(port), "--native-port", String(nativePort)], {
      detached: true,
      stdio: ["ignore", "ignore", "pipe"],
      env: { ...process.env, ...env, DISPLAY: display },
    });
    groups.push(d.pid);
    err = "";
    d.stderr.on("data", (x) => (err += x));
    const base = `http://127.0.0.1:${port}`;
    for (let i = 0; i < 100 && d.exitCode === null; i++) {
      try {
        const r = await fetch(`${base}/status`);
        if (r.ok) return { base, pgid: d.pid };
      } catch {
        /* not up yet */
      }
      await sleep(100);
    }
    if (d.exitCode === null) break; // running but not answering: not a port clash
  }
  throw new Error(`tauri-driver did not start: ${err}`);
}

export class Session {
  constructor(base, id) {
    this.base = base;
    this.id = id;
  }
  /** `args`: the app's command line after the program (e.g. a session file to open). */
  static async start(base, args) {
    const opts = { application: BIN, ...(args ? { args } : {}) };
    const r = await fetch(`${base}/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ capabilities: { alwaysMatch: { browserName: "wry", "tauri:options": opts } } }),
    });
    const j = await r.json();
    if (!r.ok) throw new Error(`new session failed: ${JSON.stringify(j)}`);
    return new Session(base, j.value.sessionId);
  }
  async cmd(method, p, body) {
    const r = await fetch(`${this.base}/session/${this.id}${p}`, {
      method,
      headers: { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const j = await r.json();
    if (!r.ok) throw new Error(`${method} ${p}: ${JSON.stringify(j.value)}`);
    return j.value;
  }
  exec(script, ...args) {
    return this.cmd("POST", "/execute/sync", { script, args });
  }
  async find(css) {
    const v = await this.cmd("POST", "/element", { using: "css selector", value: css });
    return Object.values(v)[0];
  }
  async click(css) {
    const e = await this.find(css);
    await this.cmd("POST", `/element/${e}/click`, {});
  }
  /** textContent (WebKitWebDriver's element text endpoint proved unreliable here). */
  async text(css) {
    return this.exec(`const e = document.querySelector(arguments[0]); return e ? e.textContent : null`, css);
  }
  async waitFor(what, fn, timeout = 10_000) {
    const end = Date.now() + timeout;
    let last;
    while (Date.now() < end) {
      try {
        last = await fn();
        if (last) return last;
      } catch (e) {
        last = e;
      }
      await sleep(100);
    }
    throw new Error(`timed out waiting for ${what} (last: ${last})`);
  }
  async screenshot(name) {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    captureDisplay(path.join(ARTIFACTS, `${name}.png`));
  }
  async end() {
    await fetch(`${this.base}/session/${this.id}`, { method: "DELETE" }).catch(() => {});
  }
}

export function check(name, cond, detail = "") {
  if (cond) {
    counts.passed++;
    console.log(`ok   ${name}`);
  } else {
    counts.failed++;
    console.log(`FAIL ${name} ${detail}`);
  }
}

export function tempEnv(tag) {
  const t = fs.mkdtempSync(path.join(os.tmpdir(), `arbor-e2e-${tag}-`));
  const env = {
    HOME: path.join(t, "home"),
    PI_CODING_AGENT_DIR: path.join(t, "agent"),
    ARBOR_DATA_DIR: path.join(t, "data"),
    XDG_DATA_HOME: path.join(t, "xdg"),
  };
  for (const d of Object.values(env)) fs.mkdirSync(d, { recursive: true });
  return { dir: t, env };
}

/**
 * For the benchmarks: the app on the agent dir `ARBOR_BENCH_AGENT_DIR` (one big session), that
 * session opened from the picker, its graph drawn and its leaf selected.
 * Returns `{ s, dir, sessionPath }`; end with `s.end()`, `killAll()` and removing `dir`.
 */
export async function openBenchSession(tag) {
  const agent = process.env.ARBOR_BENCH_AGENT_DIR;
  if (!agent) throw new Error("set ARBOR_BENCH_AGENT_DIR to an agent dir with one big session");
  const display = await startXvfb();
  const { dir, env } = tempEnv(tag);
  env.PI_CODING_AGENT_DIR = agent;
  const driver = await startDriver(display, env);
  const s = await Session.start(driver.base);
  await s.cmd("POST", "/timeouts", { script: 300_000 });
  await s.waitFor("picker", () => s.exec(`return document.querySelectorAll(".session-card").length > 0`), 300_000);
  const sessionPath = await s.exec(`return document.querySelector(".session-card").dataset.path`);
  await s.exec(`document.querySelector(".session-card").click()`);
  await s.waitFor("graph rows", () => s.exec(`return document.querySelectorAll(".g-row").length > 0`), 300_000);
  await s.waitFor("leaf selected", async () => !!(await s.exec(`return document.getElementById("detail").dataset.entryId`)), 60_000);
  return { s, dir, sessionPath, pgid: driver.pgid };
}

/**
 * Resident memory of the app's processes started through the driver of process group `pgid`
 * (WebKitWebDriver starts the app in the driver's group, and the app its web processes), from
 * /proc: `{ main, web, network }`, each `{ pid, rssMB, peakMB, anonMB, fileMB }` (VmRSS, VmHWM,
 * RssAnon, RssFile) or null.
 * Linux only.
 */
export function appMemory(pgid) {
  const out = { main: null, web: null, network: null };
  const mainName = path.basename(BIN).slice(0, 15);
  for (const pid of fs.readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    let stat, status;
    try {
      stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
      status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
    } catch {
      continue; // gone meanwhile
    }
    // The fields after the command's closing parenthesis: state, ppid, pgrp, ...
    const pgrp = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
    if (pgrp !== pgid) continue;
    const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
    const kb = (k) => Number((new RegExp(`^${k}:\\s+(\\d+) kB`, "m").exec(status) || [])[1] || 0);
    const mb = (k) => +(kb(k) / 1024).toFixed(1);
    // RssAnon is the process's own memory; RssFile mostly the libraries it maps (WebKitGTK's).
    const m = { pid: Number(pid), rssMB: mb("VmRSS"), peakMB: mb("VmHWM"), anonMB: mb("RssAnon"), fileMB: mb("RssFile") };
    const slot = comm === mainName ? "main" : comm.startsWith("WebKitWebProces") ? "web" : comm.startsWith("WebKitNetwork") ? "network" : null;
    if (slot && (!out[slot] || m.rssMB > out[slot].rssMB)) out[slot] = m;
  }
  return out;
}

/** Median, p95 and max of the finite numbers in `xs` (with `all`: the sorted values too). */
export function benchStats(xs, { all = false } = {}) {
  const a = xs.filter((x) => typeof x === "number" && Number.isFinite(x)).sort((x, y) => x - y);
  if (!a.length) return { n: 0, raw: xs };
  const q = (p) => a[Math.min(a.length - 1, Math.floor(p * a.length))];
  const r = (x) => +x.toFixed(2);
  return { n: a.length, median: r(q(0.5)), p95: r(q(0.95)), max: r(a[a.length - 1]), ...(all ? { all: a.map(r) } : {}) };
}

/**
 * Runs a benchmark on the big session (`openBenchSession(tag)`): `body(s, sessionPath)` returns
 * the report, printed as JSON; the app and the temporary folders go away whatever happens, and a
 * failure exits with status 1.
 */
export function runBench(tag, body) {
  (async () => {
    const { s, dir, sessionPath, pgid } = await openBenchSession(tag);
    try {
      console.log(JSON.stringify(await body(s, sessionPath, { pgid }), null, 2));
    } finally {
      await s.end();
      killAll();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  })().catch((e) => {
    console.error(e);
    killAll();
    process.exit(1);
  });
}

/** Wait until the bundled demo session is open and its graph has rows. */
export async function waitForDemo(s, timeout = 10_000) {
  await s.waitFor("demo session", async () => ((await s.text("#session-title")) || "").includes("demo"), timeout);
  await s.waitFor("graph rows", () => s.exec(`return document.querySelectorAll(".g-row").length > 5`));
}

/** Scroll the graph so that row `row` is in the middle of its visible part (with the graph's
 * drawn row height, not an assumed one: a short graph pane or a zoomed graph used to leave the
 * row below the view), and let it paint. */
export async function scrollRowIntoView(s, row) {
  await s.exec(
    `const g = document.getElementById("graph");
     const r = g.querySelector(".g-row");
     const h = (r && r.getBoundingClientRect().height) || 24;
     g.scrollTop = Math.max(0, arguments[0] * h - (g.clientHeight - h) / 2);`,
    row,
  );
  await sleep(300);
}

/** Entry `id`'s graph row, scrolled into view and drawn inside the graph's visible part: waits
 * (at most `timeout` ms) and returns the row number, or null when it is not drawn in time. The
 * row number is looked up again when the row does not show (an append relayouts the graph and
 * can shift rows). */
export async function revealRow(s, id, rowHint, timeout = 8_000) {
  let row = rowHint;
  let tries = 0;
  return s
    .waitFor(
      `the graph row of ${id} drawn in view`,
      async () => {
        if (row === undefined || tries++ % 2 === 1) row = (await collectRows(s)).find((r) => r.id === id)?.row;
        if (row === undefined) return null;
        await scrollRowIntoView(s, row);
        return s.exec(
          `const g = document.getElementById("graph");
           const r = g.querySelector('.g-row[data-entry-id="' + CSS.escape(arguments[0]) + '"]');
           if (!r) return null;
           const a = r.getBoundingClientRect(), b = g.getBoundingClientRect();
           return a.height > 0 && a.top >= b.top - 1 && a.bottom <= b.bottom + 1 ? Number(r.dataset.row) + 1 : null;`,
          id,
        );
      },
      timeout,
    )
    .then((n) => n - 1)
    .catch(() => null);
}

/** Select the lowest user message that is off the active path (on another branch) and wait for
 * its detail; returns its graph row ({ id, row, … }). Throws when there is none. */
export async function selectOffPathUser(s, what) {
  const rows = await collectRows(s);
  const t = rows.filter((r) => r.kind === "user" && !r.cls.split(" ").includes("m-active")).sort((a, b) => b.row - a.row)[0];
  if (!t) throw new Error(`no user message off the active path (${what})`);
  await scrollRowIntoView(s, t.row);
  await s.click(`.g-row[data-entry-id="${t.id}"]`);
  await s.waitFor(what, async () => (await s.exec(`return document.getElementById("detail").dataset.entryId`)) === t.id);
  return t;
}

/** Marks of all rows, by scrolling the graph through (only visible rows exist in the DOM). */
export async function collectRows(s) {
  return s.exec(`
    const g = document.getElementById("graph");
    return new Promise((resolve) => {
      const seen = new Map();
      let top = 0;
      const step = () => {
        g.scrollTop = top;
        requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(() => {
          for (const r of document.querySelectorAll(".g-row")) {
            seen.set(r.dataset.row, { row: +r.dataset.row, id: r.dataset.entryId, kind: r.dataset.kind, cls: r.className });
          }
          if (top >= g.scrollHeight - g.clientHeight) { resolve([...seen.values()]); return; }
          top += Math.max(100, g.clientHeight - 50);
          step();
        }, 60)));
      };
      step();
    });`);
}

/**
 * Runs the scenarios (or only the one named on the command line) on one Xvfb display, then
 * prints `<label>: N passed, N failed` and exits with the result. `args` are passed to each
 * scenario after the display; `cleanup` runs before exiting.
 */
export async function runScenarios(label, scenarios, { args = [], cleanup = () => {} } = {}) {
  if (!fs.existsSync(BIN)) throw new Error(`app binary not found at ${BIN}; build it first (cargo build -p arbor)`);
  if (!fs.existsSync(DRIVER)) throw new Error(`tauri-driver not found at ${DRIVER}; run scripts/setup.sh`);
  const display = await startXvfb();
  const only = process.argv[2];
  for (const [name, fn] of scenarios) {
    if (only && only !== name) continue;
    try {
      await fn(display, ...args);
    } catch (e) {
      counts.failed++;
      console.log(`FAIL ${name} scenario: ${e.stack || e}`);
    }
  }
  cleanup();
  killAll();
  console.log(`${label}: ${counts.passed} passed, ${counts.failed} failed`);
  process.exit(counts.failed ? 1 : 0);
}

/** Ends a scenario: closes the WebDriver session, kills the driver's process group, removes the temp dir. */
export async function finish(s, driver, dir) {
  await s.end();
  try {
    process.kill(-driver.pgid, "SIGKILL");
  } catch {}
  fs.rmSync(dir, { recursive: true, force: true });
}
