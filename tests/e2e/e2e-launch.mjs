// End-to-end test of starting on a file, handing a file to the running window, renaming the
// session from its title and the Copy buttons, in the real window
// under Xvfb, with a private D-Bus session bus (the single-instance plugin finds the running
// Arbor on it) and xclip reading the X clipboard back.
//
//   ARBOR_BIN=/path/to/arbor node tests/e2e/e2e-launch.mjs [launch]
//
// Screenshots go to tests/artifacts/launch-*.png (gitignored).

import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { BIN, ROOT, Session, check, finish, revealRow, runScenarios, sleep, startDriver, tempEnv } from "./driver.mjs";

const CONF = path.join(ROOT, "src-tauri", "crates", "session-engine", "tests", "fixtures", "conformance");
const own = [];
process.on("exit", () => {
  for (const pid of own.splice(0)) {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {}
  }
});

/** A private session bus: its address. */
async function startDbus() {
  const d = spawn("dbus-daemon", ["--session", "--nofork", "--nopidfile", "--print-address=1"], { detached: true, stdio: ["ignore", "pipe", "ignore"] });
  own.push(d.pid);
  return new Promise((resolve, reject) => {
    let buf = "";
    const t = setTimeout(() => reject(new Error("dbus-daemon did not print its address in 10 s")), 10_000);
    d.stdout.on("data", (x) => {
      buf += x;
      const line = buf.split("\n")[0];
      if (buf.includes("\n")) {
        clearTimeout(t);
        resolve(line.trim());
      }
    });
    d.on("exit", (c) => reject(new Error(`dbus-daemon exited with ${c}`)));
  });
}

function hasXclip() {
  try {
    execFileSync("xclip", ["-version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** Puts `text` on the X clipboard with xclip (which keeps serving it until another client owns it). */
function setClipboard(display, text) {
  const x = spawn("xclip", ["-i", "-selection", "clipboard"], { detached: true, stdio: ["pipe", "ignore", "ignore"], env: { ...process.env, DISPLAY: display } });
  own.push(x.pid);
  x.stdin.end(text);
  return sleep(300);
}

function readClipboard(display) {
  try {
    return execFileSync("xclip", ["-o", "-selection", "clipboard"], { env: { ...process.env, DISPLAY: display }, timeout: 5000, encoding: "utf8" });
  } catch (e) {
    return `(xclip failed: ${e.message})`;
  }
}

/** Runs `arbor ARGS…` as a user would, in `cwd`: resolves with its exit code and stderr. */
function launch(args, cwd, env, timeout = 30_000) {
  return new Promise((resolve) => {
    const p = spawn(BIN, args, { cwd, env, detached: true, stdio: ["ignore", "ignore", "pipe"] });
    own.push(p.pid);
    let err = "";
    p.stderr.on("data", (x) => (err += x));
    const t = setTimeout(() => resolve({ code: "still running", err, pid: p.pid }), timeout);
    p.on("exit", (code) => {
      clearTimeout(t);
      resolve({ code, err });
    });
  });
}

/** Empties the title editor without WebDriver's Element Clear, which blurs the element (and a
 * blur cancels the edit, as clicking elsewhere does). */
const clearInput = (s) => s.exec(`document.getElementById("session-title-input").value = ""`);
const lines = (file) => fs.readFileSync(file, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l));
const titlePath = (s) => s.exec(`return document.getElementById("session-title").title`);
const titleText = (s) => s.exec(`return document.getElementById("session-title").textContent`);
const notice = (s) => s.exec(`const n = document.getElementById("notice"); return n.hidden ? "" : n.textContent`);

/** The text the entry Copy button copies (ui/src/session/copy.ts entryText), from the file. */
function messageText(e) {
  const c = e.message.content;
  if (typeof c === "string") return c;
  return c.filter((b) => b.type === "text" && b.text).map((b) => b.text).join("\n\n");
}

async function launchScenario(display) {
  const { dir, env } = tempEnv("launch");
  const bus = await startDbus();
  const fullEnv = { ...process.env, ...env, DISPLAY: display, DBUS_SESSION_BUS_ADDRESS: bus };
  // A session in Pi's folder, so that a start without a file would show the picker.
  const proj = path.join(env.PI_CODING_AGENT_DIR, "sessions", "--home-dev-project--");
  fs.mkdirSync(proj, { recursive: true });
  fs.copyFileSync(path.join(CONF, "basic-simple-chat.jsonl"), path.join(proj, "2025-03-01T09-00-00-000Z_in-pi.jsonl"));
  // The files to open live elsewhere (as a file manager would hand them over).
  const elsewhere = path.join(dir, "elsewhere");
  fs.mkdirSync(elsewhere);
  const fileA = path.join(elsewhere, "a-labels.jsonl");
  const fileB = path.join(elsewhere, "b compaction.jsonl");
  fs.copyFileSync(path.join(CONF, "basic-labels-and-names.jsonl"), fileA);
  fs.copyFileSync(path.join(CONF, "compaction-repeated.jsonl"), fileB);
  const driver = await startDriver(display, { ...env, DBUS_SESSION_BUS_ADDRESS: bus });
  const s = await Session.start(driver.base, [fileA]);
  try {
    // 1. `arbor FILE`: that session opens instead of the picker.
    const opened = await s.waitFor("the command line's session open", async () => ((await titlePath(s)) === fileA ? true : null), 20_000).catch(() => false);
    check("arbor FILE opens that session at start", opened === true, await titlePath(s));
    check("the picker does not cover it", await s.exec(`return document.getElementById("picker").hidden`));
    const rowsA = await s.waitFor("graph rows", () => s.exec(`return document.querySelectorAll(".g-row").length`));
    check("its graph is drawn", rowsA > 5, String(rowsA));
    await s.screenshot("launch-01-started-on-file");

    // 2. A second `arbor FILE2` (relative to its own cwd) hands the file to this window and exits.
    const t0 = Date.now();
    const second = await launch(["elsewhere/b compaction.jsonl"], dir, fullEnv);
    const secondMs = Date.now() - t0;
    check("the second arbor process exits at once with status 0", second.code === 0, `${second.code} after ${secondMs} ms ${second.err.slice(-400)}`);
    const switched = await s.waitFor("the running window switched", async () => ((await titlePath(s)) === fileB ? true : null), 10_000).catch(() => false);
    check("the running window switched to the second file (its path resolved against the second process's cwd)", switched === true, await titlePath(s));
    const rowsB = await s.waitFor("graph rows of the second file", () => s.exec(`return document.querySelectorAll(".g-row").length`));
    check("the second file's graph is drawn", rowsB > 5, String(rowsB));
    console.log(`     second launch handed over in ${secondMs} ms (process start to exit)`);
    await s.screenshot("launch-02-second-launch");

    // 3. A second launch with a file that does not exist: the usual error, the open session stays.
    const bad = await launch(["no-such-session.jsonl"], dir, fullEnv);
    check("a second launch with a missing file exits too", bad.code === 0, `${bad.code} ${bad.err.slice(-300)}`);
    const seen = new Set();
    const err = await s.waitFor("an error notice", async () => {
      const n = await notice(s);
      seen.add(n);
      return n.includes("no-such-session.jsonl") ? n : null;
    }, 10_000).catch(async (e) => `${e}; notices seen: ${JSON.stringify([...seen])}; title ${JSON.stringify(await titlePath(s))}`);
    check("the window says the file could not be opened, naming it", err.includes("no-such-session.jsonl"), err);
    check("and keeps the session that was open", (await titlePath(s)) === fileB, await titlePath(s));

    // A launch with another data dir (another profile, another test run) on the same bus is an
    // Arbor of its own: it keeps running and the window here does not change.
    const otherData = path.join(dir, "other-data");
    fs.mkdirSync(otherData);
    const other = await launch([fileA], dir, { ...fullEnv, ARBOR_DATA_DIR: otherData }, 6000);
    check("a launch with another ARBOR_DATA_DIR does not hand over (it runs on its own)", other.code === "still running", `${other.code} ${other.err.slice(-300)}`);
    if (other.pid) {
      try {
        process.kill(-other.pid, "SIGKILL");
      } catch {}
    }
    check("and the window here keeps its session", (await titlePath(s)) === fileB, await titlePath(s));

    // 4. Rename from the title: Escape cancels, an empty name is refused, Enter saves.
    const linesBefore = lines(fileB).length;
    const oldTitle = await titleText(s);
    await s.click("#session-title");
    await s.waitFor("the title editor", () => s.exec(`return !!document.getElementById("session-title-input")`));
    let input = await s.find("#session-title-input");
    await clearInput(s);
    await s.cmd("POST", `/element/${input}/value`, { text: "never saved\uE00C" });
    const cancelled = await s.waitFor("editor closed by Escape", () => s.exec(`return !document.getElementById("session-title-input")`), 3000).catch(() => false);
    check("Escape closes the title editor", cancelled === true);
    check("and changes nothing", (await titleText(s)) === oldTitle && lines(fileB).length === linesBefore, await titleText(s));

    // F2 opens the editor too (a real key press, sent to the page).
    await s.exec(`document.activeElement && document.activeElement.blur && document.activeElement.blur()`);
    await s.cmd("POST", "/actions", { actions: [{ type: "key", id: "kb", actions: [{ type: "keyDown", value: "\uE032" }, { type: "keyUp", value: "\uE032" }] }] });
    await s.cmd("DELETE", "/actions").catch(() => {});
    const f2 = await s.waitFor("the title editor by F2", () => s.exec(`return document.activeElement && document.activeElement.id === "session-title-input"`), 3000).catch(() => false);
    check("F2 opens the title editor, focused", f2 === true);
    if (!f2) await s.click("#session-title");
    input = await s.find("#session-title-input");
    await clearInput(s);
    await s.cmd("POST", `/element/${input}/value`, { text: "   \uE007" });
    const empty = await s.waitFor("the empty-name message", async () => {
      const n = await notice(s);
      return n.includes("name is empty") ? n : null;
    }, 3000).catch((e) => String(e));
    check("an empty name is refused with a message", empty.includes("name is empty"), empty);
    check("and nothing is written", lines(fileB).length === linesBefore);
    await clearInput(s);
    const name = "Renamed in Arbor ✓";
    await s.cmd("POST", `/element/${input}/value`, { text: `${name}\uE007` });
    const shown = await s.waitFor("the new title", async () => ((await titleText(s)) === name ? true : null), 5000).catch(() => false);
    check("Enter saves: the title shows the new name", shown === true, await titleText(s));
    const all = lines(fileB);
    const last = all[all.length - 1];
    check("the file's last line is Pi's session_info with the name", all.length === linesBefore + 1 && last.type === "session_info" && last.name === name, JSON.stringify(last));
    const leaf = await s.exec(`return document.getElementById("status-leaf").textContent`);
    check("the entry is the new leaf", leaf === last.id, `${leaf} vs ${last.id}`);
    await s.screenshot("launch-03-renamed");

    // 5. Copy buttons: the X clipboard (read back with xclip) really changes.
    if (!hasXclip()) {
      check("xclip is installed (scripts/setup.sh installs it) to read the clipboard back", false);
      return;
    }
    const entries = lines(fileB);
    const user = [...entries].reverse().find((e) => e.type === "message" && e.message.role === "user" && messageText(e).length > 0);
    await setClipboard(display, "arbor-e2e-sentinel");
    check("the clipboard starts with the test's sentinel", readClipboard(display) === "arbor-e2e-sentinel");
    const row = await revealRow(s, user.id);
    if (row === null) throw new Error(`the user message ${user.id} was not drawn`);
    await s.click(`.g-row[data-entry-id="${user.id}"]`);
    await s.waitFor("the user message's detail", async () => (await s.exec(`return document.getElementById("detail").dataset.entryId`)) === user.id);
    await s.click("#btn-copy-entry");
    const got = await s.waitFor("the clipboard changed", () => {
      const c = readClipboard(display);
      return c !== "arbor-e2e-sentinel" ? c : null;
    }, 5000).catch(() => readClipboard(display));
    check("Copy on the entry puts its text on the clipboard", got === messageText(user), `${JSON.stringify(got.slice(0, 120))} vs ${JSON.stringify(messageText(user).slice(0, 120))}`);
    const copiedNote = await notice(s);
    check("and says so", copiedNote.includes("Copied"), copiedNote);

    const comp = [...entries].reverse().find((e) => e.type === "compaction");
    const crow = await revealRow(s, comp.id);
    if (crow === null) throw new Error(`the compaction ${comp.id} was not drawn`);
    await s.click(`.g-row[data-entry-id="${comp.id}"]`);
    await s.waitFor("the summary workbench", () => s.exec(`return !!document.getElementById("wb-copy")`), 10_000);
    await s.click("#wb-copy");
    const sum = await s.waitFor("the clipboard holds the summary", () => {
      const c = readClipboard(display);
      return c === comp.summary ? c : null;
    }, 5000).catch(() => readClipboard(display));
    check("Copy on the summary view puts the summary's markdown on the clipboard", sum === comp.summary, `${JSON.stringify(sum.slice(0, 120))}`);
    await s.screenshot("launch-04-copied");
  } finally {
    await finish(s, driver, dir);
  }
}

async function readOnlyScenario(display) {
  // A legacy file named on the command line opens read-only; its title offers no editor but the
  // banner with its Save as v3 copy button.
  const { dir, env } = tempEnv("launch-ro");
  const file = path.join(dir, "legacy.jsonl");
  fs.copyFileSync(path.join(CONF, "load-v1-legacy.jsonl"), file);
  const before = fs.readFileSync(file);
  const driver = await startDriver(display, env);
  const s = await Session.start(driver.base, [file]);
  try {
    const opened = await s.waitFor("the legacy session open", async () => ((await titlePath(s)) === file ? true : null), 20_000).catch(() => false);
    check("arbor LEGACY.jsonl opens it at start", opened === true, await titlePath(s));
    await s.exec(`document.getElementById("notice").hidden = true`);
    await s.click("#session-title");
    await sleep(300);
    const n = await notice(s);
    check("clicking the title of a read-only session shows the read-only banner, not an editor", n.includes("Read-only") && !(await s.exec(`return !!document.getElementById("session-title-input")`)), n);
    check("with its Save as v3 copy button", await s.exec(`return !!document.getElementById("btn-save-v3")`));
    check("the legacy file is unchanged", Buffer.compare(fs.readFileSync(file), before) === 0);
  } finally {
    await finish(s, driver, dir);
  }
}

async function badStartScenario(display) {
  const { dir, env } = tempEnv("launch-bad");
  const file = path.join(dir, "not-a-session.jsonl");
  fs.writeFileSync(file, '{"hello":"world"}\n');
  const driver = await startDriver(display, env);
  const s = await Session.start(driver.base, [file]);
  try {
    // No Pi sessions here, so the app goes on to its demo, with the error kept in view.
    await s.waitFor("the demo session", async () => ((await titleText(s)) || "").includes("demo"), 20_000);
    const n = await s.waitFor("the error notice", async () => {
      const t = await notice(s);
      return t.includes("not-a-session.jsonl") ? t : null;
    }, 5000).catch((e) => String(e));
    check("a start on a non-session file shows the usual error, naming it", n.includes("not a Pi session"), n);
    check("and the app still opens (the demo, as without a file)", ((await titleText(s)) || "").includes("demo"));
    check("the file is only read", fs.readFileSync(file, "utf8") === '{"hello":"world"}\n');
    await s.screenshot("launch-05-bad-start");
  } finally {
    await finish(s, driver, dir);
  }
}

await runScenarios("e2e-launch", [
  ["launch", launchScenario],
  ["readonly", readOnlyScenario],
  ["badstart", badStartScenario],
]);
