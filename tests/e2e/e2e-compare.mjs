// End-to-end test of Compare, Bring back into context and forks across files in the real Arbor
// window (Xvfb + tauri-driver), on a copy of the conformance corpus's branched session:
//
//   ARBOR_BIN=/path/to/arbor node tests/e2e/e2e-compare.mjs
//
// Flow: select one tip, Ctrl+click the other, Compare: the common ancestor and a file only one
// side wrote, a click on it reveals its entry; "Compare with…" from the keyboard; Escape closes
// and clears. Bring back an entry of the branch that was left: the preview, the write (one
// custom_message at the leaf, in the file, on the graph and in the context view), and the
// refusal when the model already sees it. Forks: the picker says "forked from" and "1 fork";
// opening the fork shows the parent's fork point dimmed above its graph (the path /fork copied is
// the fork's own first rows, and shows in the strip too on request); a click
// opens the parent there; a fork whose parent is gone says so. Screenshots: tests/artifacts/compare-*.png.

import fs from "node:fs";
import path from "node:path";
import { ROOT, Session, check, finish, revealRow, runScenarios, startDriver, tempEnv } from "./driver.mjs";

const CONF = path.join(ROOT, "src-tauri", "crates", "session-engine", "tests", "fixtures", "conformance");
/** branch-simple-siblings.jsonl: two branches leave FORK_AT; side A ends at TIP_A (edits
 * tests/session.test.ts), side B at the leaf TIP_B (writes Makefile at MAKEFILE_ENTRY). */
const FORK_AT = "3a3a8877";
const TIP_A = "55732918";
const TIP_B = "c2dfa6ab";
const MAKEFILE_ENTRY = "86b00dbe";
/** The first user message of the branch that was left, and a later one on it with its text. */
const LEFT_USER = "2a75225b";
const OTHER_LEFT = "a3785dba";
const OTHER_LEFT_TEXT = "Filter fixture trait sink summary iterator level";

const lines = (f) => fs.readFileSync(f, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l));

/** A fork as Pi's /fork writes it: the parent's path root → `at` copied with its ids, then a user message. */
function writeFork(file, sessionId, parentSession, parentFile, at) {
  const src = lines(parentFile);
  const byId = new Map(src.slice(1).map((e) => [e.id, e]));
  const chain = [];
  for (let id = at; id; id = byId.get(id).parentId) chain.unshift(byId.get(id));
  const header = { type: "session", version: 3, id: sessionId, timestamp: "2025-03-01T10:00:00.000Z", cwd: "/home/dev/project", parentSession };
  const user = { type: "message", id: "f0f0f0f0", parentId: at, timestamp: "2025-03-01T10:00:01.000Z", message: { role: "user", content: "a fork: try it the other way", timestamp: 1740823201000 } };
  fs.writeFileSync(file, [header, ...chain, user].map((v) => JSON.stringify(v)).join("\n") + "\n");
}

async function selected(s) {
  return s.exec(`return document.getElementById("detail").dataset.entryId || null`);
}

async function selectRow(s, id) {
  const row = await revealRow(s, id);
  if (row === null) throw new Error(`row of ${id} not drawn`);
  await s.click(`.g-row[data-entry-id="${id}"]`);
  await s.waitFor(`${id} selected`, async () => (await selected(s)) === id);
}

async function key(s, key, target = null) {
  await s.exec(
    `const t = arguments[1] ? document.querySelector(arguments[1]) : (document.activeElement || document.body);
     t.dispatchEvent(new KeyboardEvent("keydown", { key: arguments[0], bubbles: true, cancelable: true }));`,
    key,
    target,
  );
}

async function shot(s, name) {
  await s.exec(`return new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(r, 300))))`);
  await s.screenshot(name);
}

async function scenario(display) {
  const { dir, env } = tempEnv("compare");
  const proj = path.join(env.PI_CODING_AGENT_DIR, "sessions", "--home-dev-project--");
  fs.mkdirSync(proj, { recursive: true });
  const file = path.join(proj, "2025-03-01T09-00-00-000Z_siblings.jsonl");
  fs.copyFileSync(path.join(CONF, "branch-simple-siblings.jsonl"), file);
  const fork = path.join(proj, "2025-03-01T10-00-00-000Z_fork.jsonl");
  writeFork(fork, "0195f0f0-0000-7000-8000-00000000f0f1", file, file, FORK_AT);
  const orphan = path.join(proj, "2025-03-01T11-00-00-000Z_orphan.jsonl");
  writeFork(orphan, "0195f0f0-0000-7000-8000-00000000f0f2", "/nowhere/gone.jsonl", file, FORK_AT);
  const driver = await startDriver(display, env);
  const s = await Session.start(driver.base, [file]);
  try {
    await s.waitFor("the session open", async () => (await s.text("#status-leaf")) === TIP_B, 30_000);
    await s.click("#btn-unfold");
    await s.waitFor("graph rows", () => s.exec(`return document.querySelectorAll(".g-row").length > 10`));

    // 1. Compare: select A, Ctrl+click B, Compare.
    await selectRow(s, TIP_A);
    await revealRow(s, TIP_B);
    await s.exec(`document.querySelector('.g-row[data-entry-id="${TIP_B}"]').dispatchEvent(new MouseEvent("click", { bubbles: true, ctrlKey: true }))`);
    const bar = await s.waitFor("two picks", () => s.exec(`const b = document.getElementById("picks-bar"); return b && !b.hidden && b.dataset.count === "2" ? b.textContent : null`));
    check("Ctrl+click picks a second node beside the selected one", bar.includes(TIP_A) && bar.includes(TIP_B), bar);
    check("the picked node is marked on the graph", await s.exec(`return document.querySelector('.g-row[data-entry-id="${TIP_B}"]').classList.contains("picked")`));
    check("Ctrl+click does not move the selection", (await selected(s)) === TIP_A);
    await s.click("#btn-picks-compare");
    await s.waitFor("the comparison", () => s.exec(`const c = document.getElementById("compare"); return c && c.dataset.ready === "true"`), 20_000);
    const anc = await s.exec(`return document.getElementById("compare-ancestor").dataset.entryId`);
    check("Compare shows the common ancestor", anc === FORK_AT, anc);
    const onlyB = await s.exec(`return [...document.querySelectorAll('.cmp-group[data-group="only-b"] .cmp-file')].map((f) => f.dataset.path)`);
    const onlyA = await s.exec(`return [...document.querySelectorAll('.cmp-group[data-group="only-a"] .cmp-file')].map((f) => f.dataset.path)`);
    check("a file only side B wrote is listed under Only B, not Only A", onlyB.includes("Makefile") && !onlyA.includes("Makefile"), JSON.stringify({ onlyA, onlyB }));
    check("a file only side A modified is under Only A", onlyA.includes("tests/session.test.ts"), JSON.stringify(onlyA));
    const both = await s.exec(`return [...document.querySelectorAll('.cmp-group[data-group="both"] .cmp-sub[data-what="modified differently"] .cmp-file')].map((f) => f.dataset.path)`);
    check("a file both modified differently is listed apart", both.includes("/home/dev/project/.env.example"), JSON.stringify(both));
    const cols = await s.exec(`return [...document.querySelectorAll(".cmp-table tr")].map((r) => r.firstElementChild.textContent)`);
    check("the sides are drawn in rows of facts", ["Since the ancestor", "Context at the node", "Summaries", "Commands", "Errors", "Last request", "Model", "Cost"].every((r) => cols.includes(r)), JSON.stringify(cols));
    await shot(s, "compare-10-panel");
    await s.click(`.cmp-group[data-group="only-b"] .cmp-file[data-path="Makefile"] .cmp-link`);
    await s.waitFor("the Makefile's entry selected", async () => (await selected(s)) === MAKEFILE_ENTRY);
    // The selection lands before the graph redraws its cursor row: wait for the row, not a frame.
    const cursorRow = await s
      .waitFor("the cursor on the Makefile's row", () => s.exec(`const r = document.querySelector(".g-row.cursor"); return r && r.dataset.entryId === arguments[0] ? r.dataset.entryId : null`, MAKEFILE_ENTRY), 10_000)
      .catch(() => null);
    check("a file's link reveals and selects its entry on the graph", cursorRow === MAKEFILE_ENTRY);
    check("the panel stays open beside the graph", await s.exec(`return !document.getElementById("compare").hidden`));
    await key(s, "Escape", "body");
    check("Escape closes the Compare panel", await s.exec(`return document.getElementById("compare").hidden`));
    await key(s, "Escape", "body");
    check("Escape again clears the picks", await s.exec(`return document.getElementById("picks-bar").hidden && !document.querySelector(".g-row.picked")`));

    // "Compare with…" from the keyboard: the button, then arrows and Enter on the graph.
    await selectRow(s, TIP_B);
    await s.click("#btn-compare-with");
    const waiting = await s.exec(`return document.getElementById("picks-bar").dataset.comparing`);
    check("Compare with… waits for a second node", waiting === TIP_B, waiting);
    await key(s, "ArrowUp", "#graph");
    await key(s, "Enter", "#graph");
    const pair = await s.waitFor("the keyboard comparison", () =>
      s.exec(`const c = document.getElementById("compare"); return c && c.dataset.ready === "true" ? [c.dataset.a, c.dataset.b] : null`), 20_000);
    check("arrows and Enter pick the second node and compare", pair[0] === TIP_B && pair[1] && pair[1] !== TIP_B, JSON.stringify(pair));
    await key(s, "Escape", "body");
    await key(s, "Escape", "body");

    // 2. Bring back an entry of the branch that was left.
    const n0 = lines(file).length;
    await selectRow(s, LEFT_USER);
    await s.click("#btn-recall");
    await s.waitFor("the preview", () => s.exec(`const d = document.getElementById("recall-dialog"); return d && d.dataset.ready === "true"`), 20_000);
    const text = await s.text("#recall-text");
    check("the preview shows the message text with where it came from", text.includes(`user message ${LEFT_USER}`) && text.includes("on a branch that was left"), text.slice(0, 160));
    const cost = await s.text("#recall-cost");
    check("the preview shows the token cost and the context before and after", /This message: \d+ tokens\. The context at the leaf goes from .+ to .+ tokens \(compaction threshold/.test(cost), cost);
    check("the max-characters control starts at the engine's default", (await s.exec(`return document.getElementById("recall-max").value`)) === "8000");
    const confirm = await s.text("#recall-confirm");
    check("the confirm text says it cannot be undone", confirm.includes("cannot be undone") && confirm.includes(TIP_B), confirm);
    check("a preview writes nothing", lines(file).length === n0);
    // A short cut: the preview plans again and says what was cut.
    await s.exec(`const m = document.getElementById("recall-max"); m.value = "40"; m.dispatchEvent(new Event("change"));`);
    const cut = await s.waitFor("the cut preview", async () => {
      const t = await s.text("#recall-text");
      return t && t.includes("more characters not brought back") ? t : null;
    });
    check("a long text is cut to the max characters, with a marker", !!cut);
    await s.exec(`const m = document.getElementById("recall-max"); m.value = "8000"; m.dispatchEvent(new Event("change"));`);
    await s.waitFor("the full preview again", async () => !((await s.text("#recall-text")) || "").includes("more characters"));
    await shot(s, "compare-20-recall-preview");
    await s.click("#recall-go");
    const added = await s.waitFor("the appended message", () => {
      const l = lines(file);
      return l.length > n0 ? l[l.length - 1] : null;
    }, 15_000);
    check(
      "Bring back appends one custom_message at the leaf",
      lines(file).length === n0 + 1 && added.type === "custom_message" && added.customType === "arbor-recall" && added.parentId === TIP_B && added.details?.sources?.[0]?.entryId === LEFT_USER,
      JSON.stringify(added).slice(0, 240),
    );
    await s.waitFor("the new leaf", async () => (await s.text("#status-leaf")) === added.id);
    const leafRow = await s.waitFor("the leaf row", () => s.exec(`const r = document.querySelector(".g-row.m-leaf"); return r && r.dataset.entryId === arguments[0] ? r.dataset.kind : null`, added.id));
    check("the graph shows the new custom message as the leaf", leafRow === "custom_message", leafRow);
    await s.click(`.tab[data-tab="context"]`);
    const ctx = await s.waitFor("the context with the message", async () => {
      const last = await s.exec(`const li = [...document.querySelectorAll("#context .ctx-msg")].pop(); return li ? li.className + "|" + li.textContent : null`);
      return last && last.includes("Brought back by Arbor") ? last : null;
    });
    check("the context view shows it where Pi puts it: the last message, role custom", ctx.includes("r-custom"), ctx.slice(0, 160));
    await shot(s, "compare-21-recalled");
    await s.click(`.tab[data-tab="detail"]`);
    // Again: the model sees it now; the engine's sentence, and nothing written.
    await selectRow(s, LEFT_USER);
    await s.click("#btn-recall");
    const refusal = await s.waitFor("the refusal", () => s.text("#recall-refusal"), 15_000);
    check("a refusal shows the engine's sentence", refusal.includes("already sees") && refusal.includes("Nothing is written"), refusal);
    check("and Bring back is disabled", await s.exec(`return document.getElementById("recall-go").disabled`));
    await key(s, "Escape", "#recall-cancel");
    check("Escape closes the preview", await s.exec(`return document.getElementById("recall-dialog").hidden`));
    check("a refusal writes nothing", lines(file).length === n0 + 1);
    // From a search hit the model no longer sees: its Bring back… opens the same preview.
    await s.click("#btn-lib-search");
    await s.exec(`const i = document.getElementById("lib-search"); i.value = arguments[0]; document.getElementById("lib-search-go").click();`, `"${OTHER_LEFT_TEXT}"`);
    await s.waitFor("the hit's Bring back…", () => s.exec(`return !!document.querySelector('#lib-hits .lib-hit-recall[data-entry-id="${OTHER_LEFT}"]')`), 30_000);
    await shot(s, "compare-25-search-hit");
    await s.click(`#lib-hits .lib-hit-recall[data-entry-id="${OTHER_LEFT}"]`);
    await s.waitFor("the hit's preview", () => s.exec(`const d = document.getElementById("recall-dialog"); return d && !d.hidden && d.dataset.ready === "true" && d.dataset.entryIds === arguments[0]`, OTHER_LEFT), 20_000);
    check("a search hit's Bring back… previews that entry, with the picker closed", (await s.text("#recall-text")).includes(`user message ${OTHER_LEFT}`) && (await s.exec(`return document.getElementById("picker").hidden`)));
    await s.click("#recall-cancel");
    check("Cancel writes nothing", lines(file).length === n0 + 1 && (await s.exec(`return document.getElementById("recall-dialog").hidden`)));

    // 3. Forks across files: the picker, then the fork's parent path above its graph.
    await s.click("#btn-sessions");
    const cards = await s.waitFor("the picker's cards", async () => {
      const c = await s.exec(`return [...document.querySelectorAll("#picker-list .session-card")].map((b) => ({ path: b.dataset.path, text: b.textContent }))`);
      return c.some((x) => x.path === fork) && c.some((x) => x.path === orphan) ? c : null;
    }, 30_000);
    const card = (p) => cards.find((c) => c.path === p)?.text ?? "";
    check("a fork's card says which session it was forked from", card(fork).includes("forked from Metric window glob"), card(fork));
    check("the parent's card counts its forks", card(file).includes("1 fork"), card(file));
    check("a fork whose parent is gone says so", card(orphan).includes("forked from gone.jsonl, which is no longer there"), card(orphan));
    await shot(s, "compare-30-picker-forks");
    await s.click(`.session-card[data-path="${fork}"]`);
    const strip = await s.waitFor("the parent path", () =>
      s.exec(`const f = document.getElementById("fork-strip"); return f && !f.hidden && f.dataset.status === "resolves" ? { point: f.dataset.forkPoint, rows: f.querySelectorAll(".fork-row").length, visible: [...f.querySelectorAll(".fork-row")].filter((r) => r.offsetParent !== null).length, head: f.querySelector("summary").textContent } : null`), 20_000);
    check("opening a fork shows the parent above its graph, without drawing the copied path twice", strip.rows > 5 && strip.visible === 1 && strip.head.startsWith("Forked from") && strip.head.includes("a copy of its path"), JSON.stringify(strip));
    await s.click("#fork-toggle-copied");
    const all = await s.exec(`return [...document.querySelectorAll("#fork-strip .fork-row")].filter((r) => r.offsetParent !== null).length`);
    check("the copied path shows in the strip on request", all === strip.rows, `${all} of ${strip.rows}`);
    const last = await s.exec(`const r = [...document.querySelectorAll("#fork-strip .fork-row")].pop(); return { id: r.dataset.entryId, point: r.classList.contains("fork-point"), opacity: Number(getComputedStyle(document.querySelector("#fork-strip .fork-row")).opacity) }`);
    check("the last row is the fork point", strip.point === FORK_AT && last.id === FORK_AT && last.point, JSON.stringify(last));
    check("the parent's rows are dimmed", last.opacity < 1, String(last.opacity));
    const aboveGraph = await s.exec(`const f = document.getElementById("fork-strip").getBoundingClientRect(), g = document.getElementById("graph").getBoundingClientRect(); return f.bottom <= g.top + 1`);
    check("the parent path sits above the fork's own entries", aboveGraph);
    await shot(s, "compare-40-fork");
    await s.click(`#fork-strip .fork-row[data-entry-id="${FORK_AT}"]`);
    await s.waitFor("the parent open at the fork point", async () => (await s.exec(`return document.getElementById("session-title").title`)) === file && (await selected(s)) === FORK_AT, 20_000);
    check("a click on the parent path opens the parent at that entry", true);
    await s.waitFor("no parent path on the parent", () => s.exec(`return document.getElementById("fork-strip").hidden`));
    check("the parent, which is no fork, shows no parent path", true);
    // A fork whose parent is gone opens as it is, and names the missing parent.
    await s.click("#btn-sessions");
    await s.waitFor("the orphan's card", () => s.exec(`return !!document.querySelector('.session-card[data-path="${orphan}"]')`));
    await s.click(`.session-card[data-path="${orphan}"]`);
    const gone = await s.waitFor("the missing parent", () =>
      s.exec(`const f = document.getElementById("fork-strip"); return f && !f.hidden && f.dataset.status === "missing" ? f.textContent : null`), 20_000);
    check("a missing parent is named, not an error", gone.includes("no longer there") && (await s.exec(`return document.getElementById("notice").hidden || !document.getElementById("notice").classList.contains("error")`)), gone);
    await shot(s, "compare-41-orphan");
  } finally {
    await finish(s, driver, dir);
  }
}

/** compaction-repeated.jsonl: three compactions; FIRST_USER is compacted away by the first. */
const COMPACTION = "6ff09278";
const FIRST_USER = "a6771de3";
/** A GitHub token made here (no key is written in the repository), planted in FIRST_USER's text. */
const TOKEN = "ghp_" + Array.from({ length: 36 }, (_, i) => "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"[(i * 7 + 3) % 36]).join("");

async function openRecallFor(s, id) {
  await selectRow(s, id);
  await s.click("#btn-recall");
  await s.waitFor(`the preview of ${id}`, () => s.exec(`const d = document.getElementById("recall-dialog"); return d && !d.hidden && d.dataset.ready === "true" && d.dataset.entryIds === arguments[0]`, id), 20_000);
}

/** Bring back from the workbench's retention facts, the secrets listed before writing with the
 * explicit choice to keep them, and "Compact first" coming back to the preview. */
async function recallScenario(display) {
  const { dir, env } = tempEnv("recall");
  const proj = path.join(env.PI_CODING_AGENT_DIR, "sessions", "--home-dev-project--");
  fs.mkdirSync(proj, { recursive: true });
  const file = path.join(proj, "2025-03-01T09-00-00-000Z_compacted.jsonl");
  const src = lines(path.join(CONF, "compaction-repeated.jsonl"));
  const first = src.find((e) => e.id === FIRST_USER);
  first.message.content[0].text += `\nexport GITHUB_TOKEN=${TOKEN}`;
  fs.writeFileSync(file, src.map((v) => JSON.stringify(v)).join("\n") + "\n");
  const leaf = src[src.length - 1].id;
  const driver = await startDriver(display, env);
  const s = await Session.start(driver.base, [file]);
  try {
    await s.waitFor("the session open", async () => (await s.text("#status-leaf")) === leaf, 30_000);
    await s.click("#btn-unfold");
    await s.waitFor("graph rows", () => s.exec(`return document.querySelectorAll(".g-row").length > 10`));

    // From the workbench's retention facts.
    await selectRow(s, COMPACTION);
    const factId = await s.waitFor("the retention facts", () => s.exec(`const d = document.getElementById("wb-retention"); if (!d) return null; d.open = true; const b = d.querySelector(".wb-bringback"); return b ? b.dataset.entryId : null`), 20_000);
    await s.click(`#wb-retention .wb-bringback[data-entry-id="${factId}"]`);
    await s.waitFor("the fact's preview", () => s.exec(`const d = document.getElementById("recall-dialog"); return d && !d.hidden && d.dataset.ready === "true" && d.dataset.entryIds === arguments[0]`, factId), 20_000);
    const factText = await s.text("#recall-text");
    check("a retention fact's Bring back… previews the entry it comes from, compacted away", factText.includes(factId) && factText.includes("compacted away"), factText.slice(0, 160));
    await s.click("#recall-cancel");

    // Secrets: listed before anything is written, redacted unless the box is ticked.
    const n0 = lines(file).length;
    await openRecallFor(s, FIRST_USER);
    const listed = await s.text("#recall-secrets");
    check("the preview lists the secret, its kind and entry, before writing", listed.includes(`github-token in entry ${FIRST_USER}`) && listed.includes("redacted"), listed);
    let text = await s.text("#recall-text");
    check("the preview's text holds the placeholder, not the token", text.includes("[redacted: github-token]") && !text.includes(TOKEN));
    await shot(s, "compare-50-recall-secrets");
    await s.click("#recall-keep-secrets");
    text = await s.waitFor("the kept preview", async () => {
      const t = await s.text("#recall-text");
      return t && t.includes(TOKEN) ? t : null;
    });
    check("ticking Keep them brings the token back as it is, and says so", !!text && (await s.text("#recall-secrets")).includes("as they are"));
    await s.click("#recall-keep-secrets");
    await s.waitFor("redacted again", async () => !((await s.text("#recall-text")) || "").includes(TOKEN));
    await s.click("#recall-go");
    const added = await s.waitFor("the appended message", () => {
      const l = lines(file);
      return l.length > n0 ? l[l.length - 1] : null;
    }, 15_000);
    check("the message written holds the placeholder; the source entry keeps its text", added.content.includes("[redacted: github-token]") && !added.content.includes(TOKEN) && fs.readFileSync(file, "utf8").includes(TOKEN));

    // Past the threshold: Compact first, and the preview comes back for the same entries.
    await s.exec(`const r = document.getElementById("reserve"); r.max = "400000"; r.value = "199990"; r.dispatchEvent(new Event("input", { bubbles: true })); r.dispatchEvent(new Event("change", { bubbles: true })); const k = document.getElementById("keep-recent"); k.value = "2000"; k.dispatchEvent(new Event("input", { bubbles: true }));`);
    const second = src.find((e) => e.type === "message" && e.message.role === "user" && e.id !== FIRST_USER && src.indexOf(e) < src.findIndex((x) => x.id === COMPACTION)).id;
    await openRecallFor(s, second);
    await s.waitFor("the crossing warning", () => s.exec(`return !!document.getElementById("recall-compact-first")`));
    await s.click("#recall-compact-first");
    await s.waitFor("the Compact dialog", () => s.exec(`return !document.getElementById("sum-dialog").hidden`));
    check("Compact first closes the preview and opens the Compact dialog", await s.exec(`return document.getElementById("recall-dialog").hidden`));
    const n1 = lines(file).length;
    await s.click("#sum-start");
    await s.waitFor("the preview again", () => s.exec(`const d = document.getElementById("recall-dialog"); return d && !d.hidden && d.dataset.ready === "true" && d.dataset.entryIds === arguments[0]`, second), 60_000);
    const l = lines(file);
    check("after the compaction is written, the preview opens again for the same entry", l.length === n1 + 1 && l[l.length - 1].type === "compaction");
    check("nothing was brought back yet", !l.slice(n1).some((e) => e.type === "custom_message"));
    await shot(s, "compare-51-after-compact-first");
    await s.click("#recall-cancel");
  } finally {
    await finish(s, driver, dir);
  }
}

runScenarios("e2e-compare", [["compare", scenario], ["recall", recallScenario]]);
