// End-to-end test of the context waterfall in the real window, under Xvfb: the
// Timeline tab draws the demo session's active path (canvas pixels, point and drop counts checked
// against the session file itself; far below its window, it opens fitted to its data), hovering
// a compaction shows its tooltip, a click and the keyboard (arrows, Enter) select the entry on
// the graph, and a node off the active path gets the chart of its own path.
//
//   ARBOR_BIN=/path/to/arbor node tests/e2e/e2e-waterfall.mjs
//
// Screenshots go to tests/artifacts/waterfall-*.png (gitignored).

import fs from "node:fs";
import { Session, check, finish, runScenarios, selectOffPathUser, sleep, startDriver, tempEnv, waitForDemo } from "./driver.mjs";

/** Root-first path of `leafId` in a session file, with each entry's type (read by this test, not the app). */
function pathOf(file, leafId) {
  const byId = new Map();
  for (const line of fs.readFileSync(file, "utf8").split("\n")) {
    if (!line.trim()) continue;
    const e = JSON.parse(line);
    if (e.type !== "session" && e.id) byId.set(e.id, e);
  }
  const out = [];
  for (let e = byId.get(leafId); e; e = e.parentId ? byId.get(e.parentId) : undefined) out.push({ id: e.id, type: e.type });
  return out.reverse();
}

const chartData = (s) =>
  s.exec(`const c = document.querySelector("#timeline .wf-chart"); if (!c) return null;
    const r = c.getBoundingClientRect();
    return { ...c.dataset, width: r.width, height: r.height, head: document.querySelector("#timeline .wf-head")?.textContent ?? "" };`);

/** Pixels of the chart canvas close to each theme colour (CSS variable names). */
const canvasColours = (s, vars) =>
  s.exec(`const c = document.querySelector("#timeline .wf-canvas"); const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
    const css = getComputedStyle(document.documentElement);
    const want = arguments[0].map((v) => { const h = css.getPropertyValue(v).trim().replace("#", ""); return [parseInt(h.slice(0, 2), 16), parseInt(h.slice(2, 4), 16), parseInt(h.slice(4, 6), 16)]; });
    const n = want.map(() => 0);
    for (let i = 0; i < d.length; i += 4) {
      if (d[i + 3] < 200) continue;
      want.forEach((w, k) => { if (Math.abs(d[i] - w[0]) < 12 && Math.abs(d[i + 1] - w[1]) < 12 && Math.abs(d[i + 2] - w[2]) < 12) n[k]++; });
    }
    return n;`, vars);

/** A real pointer move (and optionally a click) at plot x `px` inside the chart (W3C actions, viewport coordinates). */
async function pointerAt(s, px, click = false) {
  const r = await s.exec(`const r = document.querySelector("#timeline .wf-chart").getBoundingClientRect(); return { left: r.left, top: r.top }`);
  // +1: the chart's border; 4: the plot's left padding; +0.5: the middle of the pixel.
  const x = Math.floor(r.left + 1 + 4 + px);
  const actions = [{ type: "pointerMove", duration: 0, origin: "viewport", x, y: Math.floor(r.top + 40) }];
  if (click) actions.push({ type: "pointerDown", button: 0 }, { type: "pointerUp", button: 0 });
  await s.cmd("POST", "/actions", { actions: [{ type: "pointer", id: "mouse", parameters: { pointerType: "mouse" }, actions }] });
  await s.cmd("DELETE", "/actions").catch(() => {});
}

async function pressKey(s, css, key) {
  const e = await s.find(css);
  await s.cmd("POST", `/element/${e}/value`, { text: key });
}

const selected = (s) =>
  s.exec(`return { detail: document.getElementById("detail").dataset.entryId, cursor: document.querySelector(".g-row.cursor")?.dataset.entryId ?? null, leaf: document.getElementById("status-leaf").textContent }`);

async function demoScenario(display) {
  const { dir, env } = tempEnv("waterfall");
  const driver = await startDriver(display, env);
  const s = await Session.start(driver.base);
  try {
    await waitForDemo(s);
    const file = await s.exec(`return document.getElementById("session-title").title`);
    const leaf = (await s.text("#status-leaf")).trim();
    const path = pathOf(file, leaf);
    const drops = path.filter((e) => e.type === "compaction").length;
    check("the demo's active path has entries and compactions", path.length > 50 && drops >= 1, `${path.length} entries, ${drops} compactions`);

    await s.click('.tab[data-tab="timeline"]');
    const d = await s.waitFor("the waterfall drawn", async () => {
      const c = await chartData(s);
      return c && Number(c.points) > 0 && Number(c.columns) > 0 ? c : null;
    });
    check("the chart draws one point per entry of the active path", Number(d.points) === path.length, `${d.points} vs ${path.length}`);
    check("the chart draws one drop per compaction on the path", Number(d.drops) === drops, `${d.drops} vs ${drops}`);
    check("the estimate is drawn in (nearly) every pixel column", Number(d.columns) >= Math.min(path.length, Number(d.plotWidth)) * 0.9, JSON.stringify(d));
    check("reported usage is drawn", Number(d.usageColumns) > 5, d.usageColumns);
    check("the header says it is the active path", d.head.startsWith("Active path") && d.head.includes(`${path.length} entries`), d.head);
    // The demo uses a few percent of its window: it opens fitted to its data, the window and the
    // threshold pinned to the top edge as markers instead of lines, the box ticked.
    const fitBox = () => s.exec(`return document.getElementById("wf-fit").checked`);
    check(
      "the demo (under a quarter of its window) opens fitted to its data, window and threshold marked above",
      d.scaleFitted === "true" && d.offScale === "window threshold" && (await fitBox()),
      JSON.stringify({ top: d.scaleTop, fitted: d.scaleFitted, offScale: d.offScale }),
    );
    const [accent, amber, green] = await canvasColours(s, ["--accent", "--amber", "--green"]);
    check("canvas: the estimate line, drops and usage have pixels", accent > 100 && amber > 10 && green > 20, JSON.stringify({ accent, amber, green }));
    await s.screenshot("waterfall-01-demo");
    // Show the window: the scale's top goes up to the window, the budgets are lines again.
    const top0 = Number(d.scaleTop);
    await s.click("#wf-fit");
    const w = await s.waitFor("the window's scale", async () => {
      const c = await chartData(s);
      return c.scaleFitted === "false" ? c : null;
    }).catch(() => chartData(s));
    const top1 = Number(w.scaleTop);
    check("Show the window rescales the chart up to the window, no budget above it", top1 > top0 && w.offScale === "" && !(await fitBox()), `${top0} -> ${top1} (${w.offScale})`);
    const [red] = await canvasColours(s, ["--red"]);
    check("canvas: at the window's scale the threshold line has pixels", red > 20, String(red));
    await s.screenshot("waterfall-01b-window");
    await s.click("#wf-fit");

    // Hover the first compaction: the tooltip names it.
    const comp = path.findIndex((e) => e.type === "compaction");
    const width = Number(d.plotWidth);
    const xOf = (i) => ((i + 0.5) * width) / path.length;
    await pointerAt(s, xOf(comp));
    const hover = await s.waitFor("hover on the compaction", async () => {
      const h = await s.exec(`const c = document.querySelector("#timeline .wf-chart"); const t = c.querySelector(".wf-tip"); return { id: c.dataset.hoverId, tip: t.hidden ? "" : t.textContent }`);
      return h.id ? h : null;
    });
    check("hover picks the entry under the pointer", hover.id === path[comp].id, `${hover.id} vs ${path[comp].id}`);
    check("the tooltip shows the entry's type, id and tokens", hover.tip.startsWith("compaction") && hover.tip.includes(path[comp].id) && /context [\d,]+ tokens/.test(hover.tip) && hover.tip.includes("→"), hover.tip);
    await s.screenshot("waterfall-02-hover");

    // Click: the entry becomes the selected node on the graph.
    const target = Math.max(1, Math.floor(path.length / 3));
    await pointerAt(s, xOf(target), true);
    const sel = await s.waitFor("the clicked entry selected", async () => {
      const v = await selected(s);
      return v.detail === path[target].id ? v : null;
    }).catch(async () => selected(s));
    check("a click selects the entry (Entry pane)", sel.detail === path[target].id, JSON.stringify(sel));
    const cursor = await s.waitFor("the graph cursor on it", async () => {
      const v = await selected(s);
      return v.cursor === path[target].id ? v.cursor : null;
    }).catch(() => null);
    check("a click selects the entry on the graph (cursor row)", cursor === path[target].id, String(cursor));
    const mark = await s.exec(`return document.querySelector("#timeline .wf-chart").dataset.selectedId`);
    check("the chart marks the selected entry and stays on the active path", mark === path[target].id && (await chartData(s)).head.startsWith("Active path"), mark);

    // Keyboard: focus, Right moves the hover one entry, Enter selects it.
    await s.exec(`document.querySelector("#timeline .wf-chart").focus()`);
    await pressKey(s, "#timeline .wf-chart", "\uE014");
    await pressKey(s, "#timeline .wf-chart", "\uE014");
    const kh = await s.exec(`return document.querySelector("#timeline .wf-chart").dataset.hoverId`);
    check("Right arrow moves the hover one entry at a time", kh === path[target + 2].id, `${kh} vs ${path[target + 2].id}`);
    await pressKey(s, "#timeline .wf-chart", "\uE007");
    const ks = await s.waitFor("Enter selects", async () => {
      const v = await selected(s);
      return v.detail === path[target + 2].id ? v : null;
    }).catch(async () => selected(s));
    check("Enter selects the hovered entry on the graph", ks.detail === path[target + 2].id, JSON.stringify(ks));

    // A node off the active path: the chart follows its path.
    await s.click('.tab[data-tab="detail"]');
    const off = await selectOffPathUser(s, "an off-path user message selected");
    await s.click('.tab[data-tab="timeline"]');
    const offPath = pathOf(file, off.id);
    const od = await s.waitFor("the off-path chart", async () => {
      const c = await chartData(s);
      return c && c.head.startsWith("Path to the selected node") ? c : null;
    }).catch(async () => chartData(s));
    check("a node off the active path gets the chart of its own path", Number(od.points) === offPath.length && od.selectedId === off.id, JSON.stringify({ points: od.points, want: offPath.length, sel: od.selectedId, head: od.head }));
    await s.screenshot("waterfall-03-off-path");
  } finally {
    await finish(s, driver, dir);
  }
}

async function emptyScenario(display) {
  const { dir, env } = tempEnv("waterfall-empty");
  // A session with a header only: the active path is empty.
  const proj = `${env.PI_CODING_AGENT_DIR}/sessions/--tmp-empty--`;
  fs.mkdirSync(proj, { recursive: true });
  const file = `${proj}/2025-03-01T09-00-00-000Z_empty.jsonl`;
  fs.writeFileSync(file, `${JSON.stringify({ type: "session", version: 3, id: "e1", timestamp: "2025-03-01T09:00:00.000Z", cwd: "/tmp/empty" })}\n`);
  const driver = await startDriver(display, env);
  const s = await Session.start(driver.base);
  try {
    const real = fs.realpathSync(file);
    await s.waitFor("the empty session in the picker", () => s.exec(`return document.querySelectorAll("#picker-list .session-card").length >= 1`), 60_000);
    await s.exec(`(document.querySelector('#picker-list .session-card[data-path="' + arguments[0] + '"]') || document.querySelector('#picker-list .session-card[data-path="' + arguments[1] + '"]') || document.querySelector("#picker-list .session-card")).click()`, file, real);
    await s.waitFor("the empty session open", async () => (await s.exec(`return document.getElementById("session-title").title`)).endsWith("_empty.jsonl"), 20_000);
    await s.click('.tab[data-tab="timeline"]');
    const t = await s.waitFor("the empty state", async () => {
      const x = await s.text("#timeline");
      return x && x.includes("empty") ? x : null;
    }).catch(async () => s.text("#timeline"));
    check("an empty path shows the empty state, no chart", t.includes("This path is empty") && !(await s.exec(`return !!document.querySelector("#timeline .wf-chart")`)), t);
    await s.screenshot("waterfall-04-empty");
  } finally {
    await finish(s, driver, dir);
  }
}

/** A session the real `pi` program wrote for a custom 13k model, with the agent folder it ran in
 * (Pi's models.json and settings.json): the window shown is models.json's, the Timeline's
 * threshold is Pi's 11,000, and of its three compactions only the one that lost a constraint
 * carries a drop alarm on the graph. */
async function realPiScenario(display) {
  const { dir, env } = tempEnv("waterfall-real-pi");
  const real = new URL("../../src-tauri/crates/session-engine/tests/fixtures/real-pi/", import.meta.url).pathname;
  const proj = `${env.PI_CODING_AGENT_DIR}/sessions/--tmp-arbor-pi-record-print-autocompact--`;
  fs.mkdirSync(proj, { recursive: true });
  fs.copyFileSync(`${real}print-autocompact.jsonl`, `${proj}/print-autocompact.jsonl`);
  for (const f of ["models.json", "settings.json"]) fs.copyFileSync(`${real}agent/${f}`, `${env.PI_CODING_AGENT_DIR}/${f}`);
  const driver = await startDriver(display, env);
  const s = await Session.start(driver.base);
  try {
    await s.waitFor("the recorded session in the picker", () => s.exec(`return document.querySelectorAll("#picker-list .session-card").length >= 1`), 60_000);
    await s.exec(`document.querySelector("#picker-list .session-card").click()`);
    await s.waitFor("graph rows", () => s.exec(`return document.querySelectorAll(".g-row").length > 5`), 30_000);
    const label = await s.waitFor("the window's source", async () => {
      const t = await s.text("#context-window-label");
      return t && t.includes("models.json") ? t : null;
    }).catch(async () => s.text("#context-window-label"));
    check("the window is Pi's models.json's, and says so", label.includes("scripted-13k · 13k from Pi's models.json (loopback)"), label);
    // The markers' facts come from a background command after the rows are drawn: wait for
    // them, and report what the rows showed last when they do not come.
    let lastAlarms = null;
    const alarms = await s.waitFor("the graph's drop alarms", async () => {
      const n = await s.exec(`return [...document.querySelectorAll(".g-row")].filter((r) => /compaction/.test(r.textContent)).map((r) => (/⚠ (\\d+) dropped/.exec(r.textContent) || [0, "0"])[1])`);
      lastAlarms = n;
      return JSON.stringify(n) === JSON.stringify(["0", "0", "1"]) ? n : null;
    }, 30_000).catch(() => lastAlarms);
    check("of three compactions after split turns, only the one that lost a constraint rings", JSON.stringify(alarms) === JSON.stringify(["0", "0", "1"]), JSON.stringify(alarms));
    await s.click('.tab[data-tab="timeline"]');
    const d = await s.waitFor("the chart", () => chartData(s), 20_000);
    check("the Timeline uses Pi's window and threshold (13,000 and 11,000) at the window's scale", d.scaleFitted === "false" && d.offScale === "" && (await s.text("#timeline")).includes("11,000"), JSON.stringify({ fitted: d.scaleFitted, off: d.offScale, text: (await s.text("#timeline")).slice(0, 300) }));
    await s.screenshot("waterfall-05-real-pi");
    // Pi's reserve of 2000 is shown exactly (a 512-token slider step made it 2048), and the
    // keyboard still moves the slider by its coarse step.
    await s.click('.tab[data-tab="budgets"]');
    check("the reserve slider holds Pi's 2000 exactly", (await s.exec(`return document.getElementById("reserve").value`)) === "2000");
    await pressKey(s, "#reserve", "\uE014"); // ArrowRight
    const moved = await s.waitFor("the slider moved", async () => {
      const v = await s.exec(`return document.getElementById("reserve").value`);
      return v !== "2000" ? v : null;
    }, 5_000).catch(() => "2000");
    check("ArrowRight moves the reserve by 512", moved === "2512", moved);
  } finally {
    await finish(s, driver, dir);
  }
}

await runScenarios("e2e-waterfall", [
  ["demo", demoScenario],
  ["empty", emptyScenario],
  ["real-pi", realPiScenario],
]);
void sleep;
