// End-to-end test of the everyday desktop features in the real window, under Xvfb:
// themes (switch, remembered across a reload and a restart, dark native dropdowns), Escape closing
// the picker and dialogs, "Save as v3 copy" from the read-only banner of a version 1 session, and
// the window drawn without OpenGL compositing on a machine with no GPU render node.
//
//   ARBOR_BIN=/path/to/arbor node tests/e2e/e2e-desktop.mjs [theme|v3copy]
//
// Screenshots go to tests/artifacts/desktop-*.png (gitignored).

import fs from "node:fs";
import path from "node:path";
import { ROOT, Session, appMemory, check, finish, runScenarios, sleep, startDriver, tempEnv, waitForDemo } from "./driver.mjs";

const CONF = path.join(ROOT, "src-tauri", "crates", "session-engine", "tests", "fixtures", "conformance");

/** Relative luminance (0 black … 1 white) of a computed `rgb(…)`/`rgba(…)` colour. */
function lum(css) {
  const m = /rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)/.exec(css || "");
  if (!m) return NaN;
  const ch = (c) => {
    const s = Number(c) / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * ch(m[1]) + 0.7152 * ch(m[2]) + 0.0722 * ch(m[3]);
}

const pageBg = (s) => s.exec(`return getComputedStyle(document.body).backgroundColor === "rgba(0, 0, 0, 0)" ? getComputedStyle(document.documentElement).backgroundColor : getComputedStyle(document.body).backgroundColor`);

/** How many canvas pixels of the graph are exactly each of the given #rrggbb colours. */
const canvasCounts = (s, colours) =>
  s.exec(`const c = document.querySelector(".graph-canvas:not([hidden])"); const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
    const want = arguments[0].map((h) => [parseInt(h.slice(1, 3), 16), parseInt(h.slice(3, 5), 16), parseInt(h.slice(5, 7), 16)]);
    const n = want.map(() => 0);
    for (let i = 0; i < d.length; i += 4) want.forEach((w, k) => { if (d[i + 3] === 255 && d[i] === w[0] && d[i + 1] === w[1] && d[i + 2] === w[2]) n[k]++; });
    return n;`, colours);
// The lane colours of each theme (--lane-0 … --lane-6 in ui/src/style.css).
const DARK_LANES = ["#7fb4e6", "#9ad07a", "#e3b25a", "#d884c8", "#6fd0c4", "#e07b6a", "#b0a4f0"];
const LIGHT_LANES = ["#1f6fbf", "#2f8a3e", "#b07800", "#a03b92", "#0f8a80", "#c0392b", "#6a4fd0"];
const laneCounts = async (s) => {
  const n = await canvasCounts(s, [...DARK_LANES, ...LIGHT_LANES]);
  const sum = (a) => a.reduce((x, y) => x + y, 0);
  return [sum(n.slice(0, 7)), sum(n.slice(7))];
};

async function chooseTheme(s, mode) {
  await s.exec(`const t = document.getElementById("theme-select"); t.value = arguments[0]; t.dispatchEvent(new Event("change"));`, mode);
  return s.waitFor(`theme ${mode}`, async () => {
    const t = await s.exec(`return document.documentElement.dataset.theme`);
    return mode === "system" || t === mode ? t : null;
  });
}

/** Send one key to the focused element through WebDriver (a real key event, not a script). */
async function pressKey(s, css, key) {
  const e = await s.find(css);
  await s.cmd("POST", `/element/${e}/value`, { text: key });
}

async function themeScenario(display) {
  const { dir, env } = tempEnv("desktop-theme");
  const driver = await startDriver(display, env);
  let s = await Session.start(driver.base);
  try {
    await waitForDemo(s);
    // The switch reaches the page's own process, which draws the window.
    const web = appMemory(driver.pgid).web;
    const webEnv = web ? fs.readFileSync(`/proc/${web.pid}/environ`, "utf8").split("\0") : [];
    const noGpu = !(fs.existsSync("/dev/dri") && fs.readdirSync("/dev/dri").some((n) => n.startsWith("renderD")));
    const own = process.env.WEBKIT_DISABLE_COMPOSITING_MODE;
    const want = own !== undefined ? own : noGpu ? "1" : undefined;
    const got = webEnv.find((v) => v.startsWith("WEBKIT_DISABLE_COMPOSITING_MODE="))?.split("=")[1];
    check(`the web process draws ${want === undefined || want === "0" ? "with" : "without"} OpenGL compositing (no GPU: ${noGpu}; the user's setting: ${own ?? "none"})`, !!web && got === want, `${web?.pid}: ${got}`);
    const mode0 = await s.exec(`return document.getElementById("theme-select").value`);
    check("the theme switch starts on System", mode0 === "system", mode0);
    const sys = await s.exec(`return { t: document.documentElement.dataset.theme, dark: matchMedia("(prefers-color-scheme: dark)").matches }`);
    check("System follows prefers-color-scheme", sys.t === (sys.dark ? "dark" : "light"), JSON.stringify(sys));

    await chooseTheme(s, "light");
    await sleep(200);
    const light = await pageBg(s);
    check("Light makes the page background light", lum(light) > 0.8, light);
    await sleep(300);
    const [dOnLight, lOnLight] = await laneCounts(s);
    await s.screenshot("desktop-01-light");

    await chooseTheme(s, "dark");
    await sleep(200);
    const dark = await pageBg(s);
    check("Dark makes the page background dark", lum(dark) < 0.05, dark);
    await sleep(300);
    const [dOnDark, lOnDark] = await laneCounts(s);
    check("the graph canvas draws with the light theme's lane colours in Light", lOnLight > 0 && dOnLight === 0, `${lOnLight} light px, ${dOnLight} dark px`);
    check("and redraws with the dark theme's lane colours in Dark", dOnDark > 0 && lOnDark === 0, `${dOnDark} dark px, ${lOnDark} light px`);
    await s.screenshot("desktop-02-dark");

    // Native dropdowns in dark: the picker's select and its options are dark with light text.
    await s.click("#btn-sessions");
    await s.waitFor("picker open", async () => !(await s.exec(`return document.getElementById("picker").hidden`)));
    const sel = await s.waitFor("a select in the picker", () =>
      s.exec(`const e = document.querySelector("#picker select"); if (!e) return null; const o = e.querySelector("option") || e;
        const c = getComputedStyle(e), oc = getComputedStyle(o);
        return { bg: c.backgroundColor, fg: c.color, obg: oc.backgroundColor, ofg: oc.color, scheme: getComputedStyle(document.documentElement).colorScheme }`),
    );
    check("the picker's select has a dark background and light text in dark theme", lum(sel.bg) < 0.05 && lum(sel.fg) > 0.5, JSON.stringify(sel));
    check("its options are dark with light text too", lum(sel.obg) < 0.05 && lum(sel.ofg) > 0.5, JSON.stringify(sel));
    check("the page declares color-scheme dark (native popups follow it)", sel.scheme === "dark", sel.scheme);
    await s.screenshot("desktop-03-picker-dark");

    // Escape closes the picker.
    await pressKey(s, "#picker select", "\uE00C");
    const closed = await s.waitFor("picker closed by Escape", () => s.exec(`return document.getElementById("picker").hidden`), 3000).catch(() => false);
    check("Escape closes the session picker", closed === true);

    // Escape closes the Compact dialog.
    await s.exec(`document.querySelector(".g-row.m-leaf")?.click()`);
    await s.waitFor("Compact enabled", () => s.exec(`return !document.getElementById("btn-compact").disabled`));
    await s.click("#btn-compact");
    await s.waitFor("compact dialog open", async () => !(await s.exec(`return document.getElementById("sum-dialog").hidden`)));
    await pressKey(s, "#sum-instructions", "\uE00C");
    const dlgClosed = await s.waitFor("dialog closed by Escape", () => s.exec(`return document.getElementById("sum-dialog").hidden`), 3000).catch(() => false);
    check("Escape closes the Compact dialog", dlgClosed === true);

    // Remembered: light survives a reload and a restart of the app.
    await chooseTheme(s, "light");
    await s.exec(`location.reload()`);
    await sleep(500);
    await waitForDemo(s);
    const afterReload = await pageBg(s);
    const modeReload = await s.exec(`return document.getElementById("theme-select").value`);
    check("the chosen theme survives a reload", lum(afterReload) > 0.8 && modeReload === "light", `${afterReload} ${modeReload}`);

    await s.end();
    s = await Session.start(driver.base);
    await waitForDemo(s);
    const afterRestart = await pageBg(s);
    const modeRestart = await s.exec(`return document.getElementById("theme-select").value`);
    check("the chosen theme survives a restart", lum(afterRestart) > 0.8 && modeRestart === "light", `${afterRestart} ${modeRestart}`);
    // And back to dark, the other direction, after the restart.
    await chooseTheme(s, "dark");
    await sleep(200);
    check("switching back to Dark after the restart darkens the page", lum(await pageBg(s)) < 0.05);
    await s.screenshot("desktop-04-restart");
  } finally {
    await finish(s, driver, dir);
  }
}

async function v3CopyScenario(display) {
  const { dir, env } = tempEnv("desktop-v3");
  const proj = path.join(env.PI_CODING_AGENT_DIR, "sessions", "--home-dev-project--");
  fs.mkdirSync(proj, { recursive: true });
  const file = path.join(proj, "2025-03-01T09-00-00-000Z_legacy.jsonl");
  fs.copyFileSync(path.join(CONF, "load-v1-legacy.jsonl"), file);
  const before = fs.readFileSync(file);
  const driver = await startDriver(display, env);
  const s = await Session.start(driver.base);
  try {
    const real = fs.realpathSync(file);
    await s.waitFor("the legacy session in the picker", async () => {
      const n = await s.exec(`return document.querySelectorAll("#picker-list .session-card").length`);
      return n >= 1;
    }, 60_000);
    await s.exec(`(document.querySelector('#picker-list .session-card[data-path="' + arguments[0] + '"]') || document.querySelector('#picker-list .session-card[data-path="' + arguments[1] + '"]') || document.querySelector("#picker-list .session-card")).click()`, file, real);
    const banner = await s.waitFor("read-only banner", async () => {
      const t = await s.text("#notice");
      return t && t.includes("Read-only") ? t : null;
    });
    check("a version 1 session opens with the read-only banner", banner.includes("Save as v3 copy"), banner);
    const hasButton = await s.exec(`return !!document.getElementById("btn-save-v3")`);
    check("the banner has a Save as v3 copy button", hasButton);
    await s.screenshot("desktop-05-v1-banner");
    await s.click("#btn-save-v3");
    const copy = path.join(proj, "2025-03-01T09-00-00-000Z_legacy-v3.jsonl");
    await s.waitFor("the copy is open", async () => (await s.exec(`return document.getElementById("session-title").title`)).endsWith("legacy-v3.jsonl"), 10_000);
    // The read-only banner goes when the copy opens, and the notice saying where the copy went
    // follows once it is open: wait for that notice itself (an empty notice in between is not it).
    const notice = await s.waitFor("the copy's notice", async () => {
      const n = await s.exec(`const e = document.getElementById("notice"); return e.hidden ? "" : e.textContent`);
      return n.includes("version 3 copy") ? n : null;
    }).catch((e) => String(e));
    check("the read-only banner is gone", !notice.includes("Read-only") && !(await s.exec(`return !!document.getElementById("btn-save-v3")`)), notice);
    check("the app says where the copy went", notice.includes("version 3 copy") && notice.includes("legacy-v3.jsonl"), notice);
    check("the copy was written beside the original as version 3", fs.existsSync(copy) && JSON.parse(fs.readFileSync(copy, "utf8").split("\n")[0]).version === 3);
    check("the original file is unchanged", Buffer.compare(fs.readFileSync(file), before) === 0);
    // Writable: setting a label appends to the copy.
    await s.waitFor("Set label enabled", () => s.exec(`return !document.getElementById("btn-label").disabled`));
    await s.exec(`document.getElementById("label-input").value = "after-migration"`);
    await s.click("#btn-label");
    const labelled = await s.waitFor("label appended to the copy", () => fs.readFileSync(copy, "utf8").includes("after-migration"), 5000).catch(() => false);
    check("the copy is writable (a label was appended to it)", labelled === true);
    await s.screenshot("desktop-06-v3-copy");
  } finally {
    await finish(s, driver, dir);
  }
}

await runScenarios("e2e-desktop", [
  ["theme", themeScenario],
  ["v3copy", v3CopyScenario],
]);
