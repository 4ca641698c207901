// End-to-end test of reviewing Pi's compaction in the real window: the real `pi` program in
// print mode with Arbor's extension (`-e pi-extension/arbor.ts`), the scripted model on
// 127.0.0.1 whose reported usage makes Pi compact by itself, and the Arbor app under Xvfb as the
// reviewer on a private socket. The person's choice is made by clicking in the dialog; what Pi
// then writes is checked in the file, and loads the same in Arbor and in Pi.
//
//   ARBOR_BIN=/path/to/arbor ARBOR_CLI=/path/to/arbor-cli node tests/e2e/e2e-review.mjs [scenario]
//
// Screenshots go to tests/artifacts/review-*.png (gitignored).

import fs from "node:fs";
import path from "node:path";
import { Session, check, finish, revealRow, runScenarios, sleep, startDriver, tempEnv } from "./driver.mjs";
import * as H from "../../pi-extension/test/harness.mjs";

const THIRD = `Third: please look at this long paste. ${H.filler(2500, "ledger")}`;

if (!H.piInstalled()) throw new Error("Pi 0.73.1 is not installed in tests/pi: run scripts/setup.sh");
if (!H.arborCli()) throw new Error("arbor-cli is not built: run `cargo build -p arbor-cli` (or set ARBOR_CLI)");

let model;
let base;
let root;

/** A two-turn session the real Pi wrote, below the threshold; each scenario compacts a copy. */
async function prepare() {
  root = H.scratch("arbor-e2e-review-");
  model = await H.startModel(path.join(root, "model.jsonl"));
  const agent = path.join(root, "agent");
  H.writeAgentDir(agent, model.port, { compaction: { enabled: false } });
  const cwd = path.join(root, "proj");
  fs.mkdirSync(cwd);
  for (const args of [["-p", "First question: what is in this project?"], ["-p", "--continue", "Second question: and how do I run it?"]]) {
    const r = await H.runPi(args, { cwd, env: H.piEnv(agent) });
    if (r.code !== 0) throw new Error(r.stderr);
  }
  base = { agent, cwd, file: H.sessionFile(agent, cwd) };
  H.setCompaction(agent, { enabled: true });
}

/** The app on a copy of the base session, reviewing on a socket of its own; and that copy. */
async function startCase(display, tag) {
  const { dir, env } = tempEnv(`review-${tag}`);
  const file = path.join(dir, "pi-session.jsonl");
  fs.copyFileSync(base.file, file);
  const sock = H.socketIn(dir);
  env.ARBOR_REVIEW_SOCKET = sock;
  // Install starts Pi once with the extension to check it loads: the repo's Pi 0.73.1.
  env.ARBOR_PI = `${JSON.stringify(process.execPath)} ${JSON.stringify(H.PI_CLI)}`;
  const driver = await startDriver(display, env);
  const s = await Session.start(driver.base, [file]);
  await s.waitFor("graph rows", () => s.exec(`return document.querySelectorAll(".g-row").length > 3`), 30_000);
  await s.waitFor("Arbor listening", () => fs.existsSync(sock), 10_000);
  return { s, driver, dir, file, sock };
}

/** Pi's third prompt, above the threshold: Pi compacts and asks Arbor. Resolves when Pi exits. */
function piCompacts(c) {
  const env = H.piEnv(base.agent, { ARBOR_REVIEW_SOCKET: c.sock });
  return H.runPi(["-p", "--session", c.file, THIRD], { cwd: base.cwd, env });
}

async function dialogShown(s, round = 1) {
  await s.waitFor(
    `the review dialog (round ${round})`,
    () => s.exec(`const r = document.getElementById("review"); return !r.hidden && r.querySelectorAll(".review-card").length > 0 && (document.querySelector(".review-facts")?.textContent ?? "").includes(arguments[0])`, round > 1 ? `round ${round}` : "entries summarized"),
    60_000,
  );
}

/** The file loads in Arbor without a diagnostic and with the context Pi builds. */
async function sameInArborAndPi(name, file) {
  const a = H.arborView(file);
  const p = await H.piView(file);
  check(`${name}: Arbor loads Pi's file cleanly`, a.diagnostics.length === 0, JSON.stringify(a.diagnostics));
  check(`${name}: Arbor and Pi build the same context`, JSON.stringify({ m: a.messages, t: a.tokens, l: a.leafId }) === JSON.stringify({ m: p.messages, t: p.tokens, l: p.leafId }));
}

const lastCompaction = (file) => H.compactions(file).at(-1);
const userIds = (file) => H.readEntries(file).filter((e) => e.type === "message" && e.message.role === "user").map((e) => e.id);

async function editScenario(display) {
  const c = await startCase(display, "edit");
  const { s } = c;
  try {
    const t0 = Date.now();
    const pi = piCompacts(c);
    await dialogShown(s);
    const painted = await s.exec(`return window.__arborReviewPainted ?? null`);
    check("edit: the dialog shows Pi's draft as section cards", (await s.exec(`return document.querySelectorAll("#review .review-card").length`)) >= 3);
    check("edit: the drop alarm line is shown", ((await s.text("#review-alarm")) || "").length > 0);
    check("edit: the countdown runs to Pi's time limit", /Pi waits \d+:\d\d more/.test((await s.text("#review-countdown")) || ""));
    check("edit: the proposed first kept entry is selected on the graph", await s.waitFor("cut selected", async () => (await s.exec(`return document.getElementById("detail").dataset.entryId`)) === userIds(c.file)[2], 10_000).catch(() => false));
    await s.screenshot("review-dialog");
    // Edit the Goal section's body in its card, then Accept edited.
    await s.exec(`document.querySelector('#review .review-card[data-section="Goal"] .wb-link').click()`);
    await s.waitFor("section editor", () => s.exec(`return !!document.getElementById("review-editor")`));
    await s.exec(
      `const ta = document.getElementById("review-editor"); ta.value = ta.value.replace(/\\s*$/, "") + "\\n- Reviewed in Arbor: keep integer cents.\\n"; ta.dispatchEvent(new Event("input"));`,
    );
    check("edit: Accept edited is enabled after an edit", !(await s.exec(`return document.getElementById("review-accept-edited").disabled`)));
    await s.exec(`document.getElementById("review-accept-edited").click()`);
    const r = await pi;
    check("edit: Pi finishes its turn", r.code === 0, r.stderr);
    const comp = lastCompaction(c.file);
    check("edit: Pi wrote the edited summary", !!comp && comp.summary.includes("- Reviewed in Arbor: keep integer cents."), comp?.summary?.slice(0, 300));
    check("edit: Pi marks it as the extension's (fromHook true)", comp?.fromHook === true);
    check("edit: Pi kept its own cut", comp?.firstKeptEntryId === userIds(c.file)[2]);
    await s.waitFor("dialog closed", () => s.exec(`return document.getElementById("review").hidden`), 10_000);
    check("edit: the dialog closes once Pi has the answer", true);
    await sameInArborAndPi("edit", c.file);
    if (painted) console.log(`# review dialog painted ${painted.at - t0} ms after Pi started (Pi's draft call included), view computed in ${painted.computeMs.toFixed(1)} ms`);
  } finally {
    await finish(s, c.driver, c.dir);
  }
}

async function moveCutScenario(display) {
  const c = await startCase(display, "move");
  const { s } = c;
  try {
    const pi = piCompacts(c);
    await dialogShown(s);
    await s.exec(`document.getElementById("review-move").click()`);
    // An entry Pi never cuts at (the model_change Pi writes first): refused, valid ones named.
    const notACut = H.readEntries(c.file).find((e) => e.type === "model_change");
    await revealRow(s, notACut.id);
    await s.exec(`document.querySelector('.g-row[data-entry-id="' + CSS.escape(arguments[0]) + '"]').click()`, notACut.id);
    const refusal = await s.waitFor("the refusal", () => s.text("#review-cut .review-alarm"), 10_000).catch(() => "");
    check("move: an entry that is no cut point is refused", /Not a cut point/.test(refusal), refusal);
    check("move: the refusal names the nearest valid cut points", (await s.exec(`return document.querySelectorAll("#review-cut .wb-link").length`)) > 0);
    check("move: the span under review is marked on the graph", (await s.exec(`return document.querySelectorAll(".g-row.review-span").length`)) > 0);
    const target = userIds(c.file)[1];
    await revealRow(s, target);
    await s.exec(`document.querySelector('.g-row[data-entry-id="' + CSS.escape(arguments[0]) + '"]').click()`, target);
    await s.waitFor("the cut preview", () => s.exec(`return !!document.getElementById("review-move-send")`), 10_000);
    check("move: the preview says what is summarized and kept", /entries summarized, [\d,]+ tokens kept/.test((await s.text("#review-cut")) || ""));
    await s.exec(`document.getElementById("review-move-send").click()`);
    await dialogShown(s, 2);
    check("move: Pi drafts again for the new cut and Arbor shows round 2", true);
    await s.exec(`document.getElementById("review-accept").click()`);
    const r = await pi;
    check("move: Pi finishes its turn", r.code === 0, r.stderr);
    const comp = lastCompaction(c.file);
    check("move: Pi keeps from the entry picked on the graph", comp?.firstKeptEntryId === target, `${comp?.firstKeptEntryId} vs ${target}`);
    await sameInArborAndPi("move", c.file);
  } finally {
    await finish(s, c.driver, c.dir);
  }
}

async function cancelScenario(display) {
  const c = await startCase(display, "cancel");
  const { s } = c;
  try {
    const pi = piCompacts(c);
    await dialogShown(s);
    await s.exec(`window.confirm = () => true; document.getElementById("review-cancel").click()`);
    const r = await pi;
    check("cancel: Pi goes on with its turn", r.code === 0, r.stderr);
    check("cancel: Pi wrote no compaction", H.compactions(c.file).length === 0);
    await sameInArborAndPi("cancel", c.file);
  } finally {
    await finish(s, c.driver, c.dir);
  }
}

async function letPiDecideScenario(display) {
  const c = await startCase(display, "pi-decides");
  const { s } = c;
  try {
    const pi = piCompacts(c);
    await dialogShown(s);
    await s.exec(`document.getElementById("review-pi-decides").click()`);
    const r = await pi;
    check("let Pi decide: Pi finishes its turn", r.code === 0, r.stderr);
    check("let Pi decide: Pi wrote its own compaction (fromHook false)", lastCompaction(c.file)?.fromHook === false);
    await sameInArborAndPi("let Pi decide", c.file);
  } finally {
    await finish(s, c.driver, c.dir);
  }
}

async function settingsScenario(display) {
  const c = await startCase(display, "settings");
  const { s } = c;
  try {
    await s.exec(`document.querySelector('.tab[data-tab="pi"]').click()`);
    await s.waitFor("the Pi tab's status", async () => /Listening on/.test((await s.text("#review-status")) || ""), 10_000);
    check("settings: the Pi tab says Arbor listens", true);
    check("settings: the extension is not installed yet", (await s.text("#ext-locations"))?.includes("not installed"));
    await s.exec(`document.getElementById("btn-ext-install").click()`);
    await s.waitFor("installed", async () => /All sessions: installed/.test((await s.text("#ext-locations")) || ""), 60_000).catch(() => null);
    check("settings: Install puts the extension where Pi finds it", /All sessions: installed/.test((await s.text("#ext-locations")) || ""));
    const note = (await s.waitFor("the install note", async () => ((await s.text("#notice")) || "").match(/Installed.*/)?.[0], 60_000).catch(() => "")) || "";
    check("settings: Install started Pi 0.73.1 with the extension to check it", /Pi 0\.73\.1 starts with it \(checked in \d+ ms\)/.test(note), note);
    await s.exec(`document.getElementById("btn-ext-remove").click()`);
    await s.waitFor("removed", async () => /not installed/.test((await s.text("#ext-locations")) || ""), 10_000).catch(() => null);
    check("settings: Remove takes it away", /not installed/.test((await s.text("#ext-locations")) || ""));
    // An older copy of Arbor's extension (as an earlier Arbor installed it): Install replaces it.
    const installed = path.join(c.dir, "agent", "extensions", "arbor.ts");
    fs.mkdirSync(path.dirname(installed), { recursive: true });
    fs.writeFileSync(installed, fs.readFileSync(H.EXTENSION, "utf8").replace('ARBOR_EXTENSION_VERSION = "', 'ARBOR_EXTENSION_VERSION = "0.0.'));
    await s.exec(`document.querySelector('.tab[data-tab="detail"]').click(); document.querySelector('.tab[data-tab="pi"]').click()`);
    await s.waitFor("the older copy", async () => /Install replaces it/.test((await s.text("#ext-locations")) || ""), 10_000).catch(() => null);
    check("settings: an older copy of the extension is named as such", /version 0\.0\.0\.1\.0 \(Install replaces it/.test((await s.text("#ext-locations")) || ""), await s.text("#ext-locations"));
    await s.exec(`document.getElementById("btn-ext-install").click()`);
    await s.waitFor("replaced", async () => /All sessions: installed$/.test((await s.text("#ext-locations")) || ""), 60_000).catch(() => null);
    check("settings: Install replaces the older copy with this Arbor's", fs.readFileSync(installed, "utf8") === fs.readFileSync(H.EXTENSION, "utf8"));
    await s.exec(`document.getElementById("btn-ext-remove").click()`);
    await s.waitFor("removed again", async () => /not installed/.test((await s.text("#ext-locations")) || ""), 10_000).catch(() => null);
    // Off: the socket goes, and Pi compacts by itself at once.
    await s.exec(`document.getElementById("review-policy").value = "off"; document.getElementById("btn-save-review").click()`);
    await s.waitFor("socket removed", () => !fs.existsSync(c.sock), 10_000).catch(() => null);
    check("settings: off removes the socket", !fs.existsSync(c.sock));
    const r = await piCompacts(c);
    check("settings: with review off Pi compacts by itself", r.code === 0 && lastCompaction(c.file)?.fromHook === false, r.stderr);
  } finally {
    await finish(s, c.driver, c.dir);
  }
}

async function timeLimitScenario(display) {
  const c = await startCase(display, "limit");
  const { s } = c;
  try {
    // A 3-second limit, set in the Pi tab.
    await s.exec(`document.querySelector('.tab[data-tab="pi"]').click()`);
    await s.waitFor("the Pi tab", async () => /Listening on/.test((await s.text("#review-status")) || ""), 10_000);
    await saveReview(s, `document.getElementById("review-timeout").value = "0.05"`);
    const pi = piCompacts(c);
    await dialogShown(s);
    const r = await pi;
    check("time limit: Pi goes on by itself", r.code === 0, r.stderr);
    check("time limit: Pi wrote its own draft through the extension (fromHook true)", lastCompaction(c.file)?.fromHook === true);
    await s.waitFor("dialog closed", () => s.exec(`return document.getElementById("review").hidden`), 10_000).catch(() => null);
    check("time limit: the dialog closes", await s.exec(`return document.getElementById("review").hidden`));
    // The window follows Pi's append too; its notice must not hide why Pi wrote its own draft.
    await s.waitFor("the file's growth noticed", async () => /grew/.test((await s.text("#notice")) || ""), 10_000).catch(() => null);
    check("time limit: the window says Pi wrote its own draft, and that the file grew", /time limit passed.*grew/i.test((await s.text("#notice")) || ""), await s.text("#notice"));
    await sameInArborAndPi("time limit", c.file);
  } finally {
    await finish(s, c.driver, c.dir);
  }
}

async function twoPisScenario(display) {
  const c = await startCase(display, "two");
  const { s } = c;
  const other = path.join(c.dir, "other-session.jsonl");
  fs.copyFileSync(base.file, other);
  try {
    const first = piCompacts(c);
    await dialogShown(s);
    const second = piCompacts({ ...c, file: other });
    // The second request waits in line behind the open dialog; Pi waits meanwhile.
    await sleep(2500);
    check("two Pis: the second waits while the first is reviewed", H.compactions(other).length === 0);
    await s.exec(`document.getElementById("review-accept").click()`);
    await first;
    await s.waitFor("the second dialog", async () => ((await s.text(".review-facts")) || "").includes("other-session.jsonl"), 30_000).catch(() => null);
    check("two Pis: the second request's dialog follows, on its own session", ((await s.text(".review-facts")) || "").includes("other-session.jsonl"));
    await s.exec(`document.getElementById("review-accept").click()`);
    const r = await second;
    check("two Pis: both compactions written", r.code === 0 && lastCompaction(c.file)?.fromHook === true && lastCompaction(other)?.fromHook === true);
    await sameInArborAndPi("two Pis (first)", c.file);
    await sameInArborAndPi("two Pis (second)", other);
  } finally {
    await finish(s, c.driver, c.dir);
  }
}

async function branchScenario(display) {
  const c = await startCase(display, "branch");
  const { s } = c;
  try {
    const nav = path.join(H.REPO, "tests/pi/record/navigate-ext.ts");
    const env = H.piEnv(base.agent, { ARBOR_REVIEW_SOCKET: c.sock });
    const pi = new H.RpcPi(["--session", c.file], { cwd: base.cwd, env, extra: [nav] });
    const target = H.readEntries(c.file).find((e) => e.type === "message" && e.message.role === "assistant").id;
    const done = pi.command(`/arbor-nav ${target} first-answer`);
    await s.waitFor("the branch review", async () => /summarize the branch/.test((await s.text("#review-title")) || ""), 60_000);
    check("branch: the dialog asks about the branch Pi leaves", true);
    check("branch: Move the cut is not offered for a branch summary", !(await s.exec(`return !!document.getElementById("review-move")`)));
    await s.exec(`document.getElementById("review-arbor").click()`);
    await s.waitFor("Arbor's draft", () => s.exec(`return !!Array.from(document.querySelectorAll("#review button")).find((b) => b.textContent === "Use Arbor's draft")`), 30_000);
    const arborText = await s.text("#review-arbor-text");
    check("branch: Arbor's summarizer drafted the same branch (offline, no key)", /## Goal/.test(arborText || ""), arborText?.slice(0, 200));
    await s.exec(`Array.from(document.querySelectorAll("#review button")).find((b) => b.textContent === "Use Arbor's draft").click()`);
    await s.exec(`document.getElementById("review-accept-edited").click()`);
    await done;
    await pi.close();
    const bs = H.readEntries(c.file).find((e) => e.type === "branch_summary");
    check("branch: Pi wrote Arbor's draft as the branch summary", !!bs && bs.fromHook === true && bs.summary === arborText, bs?.summary?.slice(0, 200));
    await sameInArborAndPi("branch", c.file);
  } finally {
    await finish(s, c.driver, c.dir);
  }
}

/** Sets the Pi tab's review preferences with `set` (page script), saves them and waits for the
 * notice that says so. Every text the notice line shows is kept: Arbor's follow of a file Pi just
 * wrote can replace "Saved" before a poll sees it. */
async function saveReview(s, set) {
  await s.exec(`window.__notices = [];
    new MutationObserver(() => window.__notices.push(document.getElementById("notice").textContent)).observe(document.getElementById("notice"), { childList: true, characterData: true, subtree: true });
    ${set}; document.getElementById("btn-save-review").click()`);
  await s.waitFor("saved", () => s.exec(`return window.__notices.some((t) => /Saved: review/.test(t))`), 10_000);
}

/** The review preference "add the artifact ledger", saved in the Pi tab, checks the dialog's
 * box; Pi then writes the summary with the `## Artifacts` section. The span gets artifacts from a
 * scripted turn whose tools run in the empty project (a failing grep, read and python). When
 * Pi's draft already names every artifact, the person's short edit gets the ledger instead. */
async function ledgerScenario(display) {
  const c = await startCase(display, "ledger");
  const { s } = c;
  try {
    H.setCompaction(base.agent, { enabled: false });
    const tools = await H.runPi(["-p", "--session", c.file, "Show me how `ledger/legacy.py` formats amounts compared to `format_cents`."], { cwd: base.cwd, env: H.piEnv(base.agent) });
    H.setCompaction(base.agent, { enabled: true });
    check("ledger: Pi ran the scripted tool turn", tools.code === 0, tools.stderr);
    await s.exec(`document.querySelector('.tab[data-tab="pi"]').click()`);
    await s.waitFor("the Pi tab", async () => /Listening on/.test((await s.text("#review-status")) || ""), 10_000);
    await saveReview(s, `document.getElementById("review-ledger").checked = true`);
    const pi = piCompacts(c);
    await dialogShown(s);
    await s.waitFor("the ledger panel", () => s.exec(`return !!document.getElementById("review-ledger")`), 10_000);
    check("ledger: the preference checks the dialog's box", await s.exec(`return document.getElementById("review-ledger-box").checked`));
    check("ledger: the dialog shows the draft's artifact probes with and without the ledger", /^artifact\d+\/\d+\d+\/\d+$/.test((await s.text('#review-ledger-scores tr[data-kind="artifact"]')) || ""), await s.text("#review-ledger-scores"));
    const shown = await s.exec(`return Array.from(document.querySelectorAll("#review-ledger-lines li")).map((li) => li.textContent)`);
    await s.screenshot("review-ledger");
    if (shown.length) {
      await s.exec(`document.getElementById("review-accept").click()`);
    } else {
      // Pi's draft names every artifact: a short edit leaves them out, and the ledger lists them.
      await s.exec(`document.getElementById("review-edit-raw").click()`);
      await s.waitFor("raw editor", () => s.exec(`return !!document.getElementById("review-editor")`));
      await s.exec(`const ta = document.getElementById("review-editor"); ta.value = "## Goal\nReviewed in Arbor.\n"; ta.dispatchEvent(new Event("input"));`);
      await s.exec(`document.getElementById("review-accept-edited").click()`);
    }
    const r = await pi;
    check("ledger: Pi finishes its turn", r.code === 0, r.stderr);
    const comp = lastCompaction(c.file);
    check("ledger: Pi wrote the summary with the ledger", !!comp && comp.summary.includes("\n## Artifacts\n") && comp.fromHook === true, comp?.summary?.slice(-600));
    check("ledger: every line the dialog showed is in what Pi wrote", shown.every((l) => comp?.summary?.includes(`- ${l}\n`) || comp?.summary?.endsWith(`- ${l}`)), JSON.stringify(shown));
    check("ledger: the ledger comes before Pi's file lists", !comp?.summary?.includes("<read-files>") || comp.summary.indexOf("## Artifacts") < comp.summary.indexOf("<read-files>"));
    await sameInArborAndPi("ledger", c.file);
  } finally {
    H.setCompaction(base.agent, { enabled: true });
    await finish(s, c.driver, c.dir);
  }
}

await prepare();
await runScenarios(
  "e2e-review",
  [
    ["edit", editScenario],
    ["move", moveCutScenario],
    ["cancel", cancelScenario],
    ["pi-decides", letPiDecideScenario],
    ["limit", timeLimitScenario],
    ["two", twoPisScenario],
    ["branch", branchScenario],
    ["ledger", ledgerScenario],
    ["settings", settingsScenario],
  ],
  {
    cleanup: () => {
      H.killAll();
      void model?.close();
      H.cleanupAll();
    },
  },
);
