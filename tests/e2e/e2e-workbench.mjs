// End-to-end test of the summary workbench in the real Arbor window (Xvfb +
// tauri-driver), on the bundled demo session:
//
//   ARBOR_BIN=/path/to/arbor node tests/e2e/e2e-workbench.mjs
//
// Flow: the compaction that lost a decision shows a drop-alarm badge on the graph; selecting it
// shows its sections and retention score; "Add back" opens the editor with the decision restored;
// saving appends one compaction entry (the new leaf, on the graph, its text in the context view);
// the diff shows the restored item; revert appends the original text; re-summarize with the
// offline summarizer compares side by side and writes nothing. Screenshots: tests/artifacts/workbench-*.png.

import fs from "node:fs";
import path from "node:path";
import { Session, check, collectRows, finish, runScenarios, scrollRowIntoView, sleep, startDriver, tempEnv, waitForDemo } from "./driver.mjs";

/** The demo's governing compaction (scripts/gen-demo.mjs), which drops C4's decision "Entry API in `allow_at`". */
const C5 = "57a13fd6";
const C4 = "fbd4e3dc";
/** The demo's first compaction (a split turn), its branch summaries with and without a summary above them. */
const C1 = "e85c1832";
const BS_AFTER_C4 = "2ec6b75d";
const BS_FIRST = "0261656c";
/** The Goal item the e2e edits, and its edited wording. */
const GOAL_ITEM = "- One token bucket per key";
const GOAL_EDITED = "- One token bucket (edited in the e2e) per key";

const lines = (f) => fs.readFileSync(f, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l));

async function selectRow(s, id, what) {
  const rows = await collectRows(s);
  const r = rows.find((x) => x.id === id);
  if (!r) throw new Error(`no graph row for ${id} (${what})`);
  await scrollRowIntoView(s, r.row);
  await s.click(`.g-row[data-entry-id="${id}"]`);
  await s.waitFor(what, async () => (await s.exec(`const w = document.getElementById("workbench"); return w && w.dataset.entryId`)) === id, 15_000);
  return r;
}

async function key(s, key, ctrl = false) {
  await s.exec(
    `const t = document.activeElement || document.body; t.dispatchEvent(new KeyboardEvent("keydown", { key: arguments[0], ctrlKey: arguments[1], bubbles: true }));`,
    key,
    ctrl,
  );
}

async function scenario(display) {
  const { dir, env } = tempEnv("workbench");
  const driver = await startDriver(display, env);
  const s = await Session.start(driver.base);
  const demoFile = path.join(env.ARBOR_DATA_DIR, "demo", "demo-session.jsonl");
  try {
    await waitForDemo(s);

    // 1. The drop-alarm badge and the retention score on the compaction markers.
    const rows = await collectRows(s);
    const c5 = rows.find((r) => r.id === C5);
    check("the demo's last compaction is on the graph", !!c5);
    await scrollRowIntoView(s, c5.row);
    const badge = await s.waitFor("drop badge", () => s.text(`.g-row[data-entry-id="${C5}"] .b-dropped`));
    check("the compaction that lost a decision shows a drop-alarm badge", badge.includes("1 dropped"), badge);
    const kept = await s.text(`.g-row[data-entry-id="${C5}"] .b-retention`);
    check("its marker shows the retention score", /kept \d+\/\d+/.test(kept ?? ""), kept);
    const c4Badge = await s.exec(`return !!document.querySelector('.g-row[data-entry-id="${C4}"] .b-dropped')`);
    check("the compaction that carried everything has no drop badge", c4Badge === false);
    await s.screenshot("workbench-01-graph-badges");

    // 2. Inspect: sections, counts, score, alarm.
    await selectRow(s, C5, "workbench of the compaction");
    const sections = await s.exec(`return [...document.querySelectorAll("#wb-sections .wb-card")].map((c) => c.dataset.section)`);
    check("sections are shown as cards", ["Goal", "Progress › Done", "Progress › In Progress", "Key Decisions", "Next Steps"].every((n) => sections.includes(n)), JSON.stringify(sections));
    const doneCount = await s.text(`.wb-card[data-section="Progress › Done"] .wb-count`);
    check("the Done card counts its checked items", doneCount.includes("12 items") && doneCount.includes("12/12 checked"), doneCount);
    const score = await s.text("#wb-score");
    check("the retention score is shown", /\d+\/\d+ facts/.test(score), score);
    const alarm = await s.text("#wb-alarm");
    check("the drop alarm lists the lost decision with the previous wording", alarm.includes("Entry API in") && alarm.includes("cloning it lost every take") && alarm.includes(C4), alarm);
    check("the move In Progress → Done is listed", alarm.includes("Bound the memory") && alarm.includes("In Progress → Progress › Done"), alarm);
    const author = await s.text(".wb-facts");
    check("who wrote it is shown", author.includes("claude-haiku-4-5"), author);
    await s.exec(`document.getElementById("wb-retention").open = true`);
    const facts = await s.exec(`return document.querySelectorAll("#wb-retention .wb-factlist li").length`);
    check("the retention facts are listed", facts > 3, String(facts));
    await s.screenshot("workbench-10-inspect");

    // 3. Add back opens the editor with the lost decision restored; Escape cancels, nothing written.
    const n0 = lines(demoFile).length;
    await s.click("#wb-alarm .wb-addback");
    const editor = await s.waitFor("editor", () => s.exec(`const t = document.getElementById("wb-editor"); return t && t.value`));
    check("Add back opens the editor with the decision restored in its section", editor.includes("Entry API in `allow_at`") && editor.includes("Keep the hand-written parser") && !editor.includes("## Goal"), editor);
    await s.screenshot("workbench-20-add-back");
    await key(s, "Escape");
    check("Escape closes the editor", await s.exec(`return !document.getElementById("wb-editor")`));
    check("cancelling writes nothing", lines(demoFile).length === n0);

    // 4. Edit the Goal section and save with Ctrl+Enter: one appended compaction entry.
    await s.click(`.wb-card[data-section="Goal"] .wb-card-edit`);
    const body = await s.waitFor("goal editor", () => s.exec(`const t = document.getElementById("wb-editor"); return t && t.value`));
    check("the section editor holds the section's body only", body.startsWith("Per-client rate limits for `throttle`") && body.includes(GOAL_ITEM) && !body.includes("## "), body);
    await s.exec(`const t = document.getElementById("wb-editor"); t.value = t.value.replace(arguments[0], arguments[1]); t.focus();`, GOAL_ITEM, GOAL_EDITED);
    await s.screenshot("workbench-21-editor");
    await key(s, "Enter", true);
    const edit = await s.waitFor("edit appended", () => {
      const l = lines(demoFile);
      return l.length > n0 ? l[l.length - 1] : null;
    }, 15_000);
    check("saving appends exactly one compaction entry", lines(demoFile).length === n0 + 1 && edit.type === "compaction", JSON.stringify(edit).slice(0, 200));
    check("the entry records the edit", edit.details?.editedFrom === C5 && edit.details?.editKind === "edit", JSON.stringify(edit.details));
    check("only the Goal section changed", edit.summary === lines(demoFile).find((e) => e.id === C5).summary.replace(GOAL_ITEM, GOAL_EDITED));
    await s.waitFor("workbench of the edit", async () => (await s.exec(`const w = document.getElementById("workbench"); return w && w.dataset.entryId`)) === edit.id, 15_000);
    check("the new entry is the leaf", (await s.text("#status-leaf")) === edit.id);
    const leafRow = await s.waitFor("leaf row", () => s.exec(`const r = document.querySelector('.g-row.m-leaf'); return r && r.dataset.entryId`));
    check("the new entry is on the graph as the leaf", leafRow === edit.id, String(leafRow));
    const authorNow = await s.text(".wb-facts");
    check("the new version says it was edited by the user, over the original's span", authorNow.includes("edited by the user") && !authorNow.includes("empty span"), authorNow);
    await s.screenshot("workbench-30-saved");
    await s.click(`.tab[data-tab="context"]`);
    const ctx = await s.waitFor("context with the edit", async () => {
      const t = await s.text("#context");
      return t && t.includes("edited in the e2e") ? t : null;
    });
    check("the context view starts from the edited summary", !!ctx && (await s.text("#context-leaf")).includes(edit.id));
    await s.screenshot("workbench-31-context");
    await s.click(`.tab[data-tab="detail"]`);

    // Diff: the edit against its original (the default for an edit).
    await s.click("#wb-diff");
    await s.waitFor("diff", async () => {
      const t = await s.text("#wb-diff-view .wb-diff");
      return t && t.length > 10 ? t : null;
    });
    const goal = await s.exec(`return [...document.querySelectorAll('#wb-diff-view .wb-dsec[data-section="Goal"] .wb-dline')].map((e) => e.className + ":" + e.textContent).join("|")`);
    check("the diff shows the reworded goal item", goal.includes("rew") && goal.includes("edited in the e2e"), goal);
    const ins = await s.exec(`return [...document.querySelectorAll('#wb-diff-view .wb-dsec[data-section="Goal"] .w-ins')].map((e) => e.textContent).join(" ")`);
    check("word-level changes inside the reworded item", ins.includes("edited"), ins);
    const from = await s.exec(`return document.getElementById("wb-diff-from").value`);
    check("an edit is compared with its original by default", from === C5, from);
    await s.screenshot("workbench-40-diff");
    await key(s, "Escape");
    check("Escape closes the diff", await s.exec(`return !document.getElementById("wb-diff-view")`));

    // 5. Revert: one more entry with the original text; the history shows the chain.
    const n1 = lines(demoFile).length;
    const original = lines(demoFile).find((e) => e.id === C5).summary;
    await s.click("#wb-revert");
    const rev = await s.waitFor("revert appended", () => {
      const l = lines(demoFile);
      return l.length > n1 ? l[l.length - 1] : null;
    }, 15_000);
    check("revert appends the original text", rev.type === "compaction" && rev.summary === original && rev.details?.editKind === "revert", JSON.stringify(rev.details));
    await s.waitFor("workbench of the revert", async () => (await s.exec(`const w = document.getElementById("workbench"); return w && w.dataset.entryId`)) === rev.id, 15_000);
    const chain = await s.exec(`return [...document.querySelectorAll("#wb-history li .wb-vkind")].map((e) => e.textContent)`);
    check("the history shows original → edit → revert", JSON.stringify(chain) === JSON.stringify(["original", "edit", "revert"]), JSON.stringify(chain));
    await s.screenshot("workbench-50-reverted");

    // 6. Re-summarize with the offline summarizer: side by side, nothing written.
    const n2 = lines(demoFile).length;
    await s.click("#wb-resummarize");
    await s.exec(`const p = document.getElementById("wb-resum-provider"); p.value = "offline"; p.dispatchEvent(new Event("change"));`);
    await s.click("#wb-resum-go");
    const alt = await s.waitFor("alternative summary", () => s.text("#wb-col-new"), 20_000);
    check("re-summarize shows the alternative beside the existing one", alt.includes("Alternative") && !!(await s.text("#wb-col-existing")), alt.slice(0, 120));
    const scores = await s.exec(`return [...document.querySelectorAll("#wb-resum-out .wb-col .wb-score")].map((e) => e.textContent)`);
    check("both retention scores are shown", scores.length === 2 && scores.every((t) => /\d+\/\d+ facts|no facts/.test(t)), JSON.stringify(scores));
    check("re-summarize writes nothing", lines(demoFile).length === n2);
    await s.screenshot("workbench-60-resummarize");
    // "Use this" appends the alternative as an edit.
    const altText = await s.exec(`return document.getElementById("wb-col-new").textContent`);
    await s.click("#wb-use-this");
    const used = await s.waitFor("alternative appended", () => {
      const l = lines(demoFile);
      return l.length > n2 ? l[l.length - 1] : null;
    }, 15_000);
    check("Use this appends the alternative as an edit", used.type === "compaction" && used.details?.editKind === "edit" && used.details?.editedFrom === rev.id && lines(demoFile).length === n2 + 1, JSON.stringify(used.details));
    await s.waitFor("workbench of the used alternative", async () => (await s.exec(`const w = document.getElementById("workbench"); return w && w.dataset.entryId`)) === used.id, 15_000);
    // (the shown text is rendered markdown: inline code loses its backticks)
    const firstLine = used.summary.split("\n").find((l) => l.trim() && !l.startsWith("#")) ?? "";
    check("the appended text is the alternative shown, and the comparison closed", altText.includes(firstLine.replace(/^[-*]\s+/, "").replace(/`/g, "").slice(0, 30)) && !(await s.exec(`return !!document.getElementById("wb-resum-view")`)), firstLine);

    // 7. A split-turn compaction shows its turn-prefix part apart; a branch summary is not editable.
    await selectRow(s, C1, "workbench of the split-turn compaction");
    const prefix = await s.exec(`return [...document.querySelectorAll("#wb-turn-prefix .wb-card")].map((c) => c.dataset.section)`);
    check("the turn-prefix part is shown apart", prefix.length >= 3 && prefix.every((n) => n.startsWith("Turn Context")), JSON.stringify(prefix));
    const mainCards = await s.exec(`return [...document.querySelectorAll("#wb-sections .wb-card")].map((c) => c.dataset.section)`);
    check("and not among the main sections", mainCards.length > 3 && !mainCards.some((n) => n.startsWith("Turn Context")), JSON.stringify(mainCards));
    check("an older compaction cannot be edited here, and says why", (await s.exec(`return document.getElementById("wb-edit-raw").disabled`)) && ((await s.text(".wb-refusal")) || "").length > 10);
    await s.screenshot("workbench-65-split-turn");
    await selectRow(s, BS_AFTER_C4, "workbench of a branch summary");
    const bs = await s.text(".wb-facts");
    check("a branch summary shows its inferred span", bs.includes("inferred"), bs);
    check("a branch summary is not editable", await s.exec(`return document.getElementById("wb-edit-raw").disabled`));
    // Its Diff compares with the summary before it on its path (here the compaction C4), not with itself.
    const bsDiff = await s.exec(`const b = document.getElementById("wb-diff"); return { disabled: b.disabled, title: b.title }`);
    check("a branch summary's Diff is enabled and names what it compares with", !bsDiff.disabled && bsDiff.title.includes(C4), JSON.stringify(bsDiff));
    await s.click("#wb-diff");
    const bsFrom = await s.waitFor("branch summary diff", () => s.exec(`const f = document.getElementById("wb-diff-from"); return f && f.value`));
    const bsTo = await s.exec(`return document.getElementById("wb-diff-to").value`);
    check("a branch summary is compared with the previous summary on its path by default", bsFrom === C4 && bsTo === BS_AFTER_C4, `${bsFrom} → ${bsTo}`);
    await s.screenshot("workbench-66-branch-summary");
    await key(s, "Escape");
    // A branch summary with no summary before it on its path: Diff is disabled and says why.
    await selectRow(s, BS_FIRST, "workbench of the first branch summary");
    const noDiff = await s.exec(`const b = document.getElementById("wb-diff"); return { disabled: b.disabled, title: b.title }`);
    check("with nothing before it, Diff is disabled with a tooltip saying why", noDiff.disabled && noDiff.title.startsWith("Nothing to compare with"), JSON.stringify(noDiff));
    await s.screenshot("workbench-67-branch-summary-no-diff");

    // 8. Back on the graph: the drop-alarm badge is still on the compaction that lost the decision.
    const rows2 = await collectRows(s);
    const again = rows2.find((r) => r.id === C5);
    await scrollRowIntoView(s, again.row);
    await sleep(200);
    const badge2 = await s.waitFor("drop badge again", () => s.text(`.g-row[data-entry-id="${C5}"] .b-dropped`));
    check("the drop-alarm badge stays on the compaction that lost a decision", badge2.includes("dropped"), badge2);
    await s.screenshot("workbench-70-graph-after");
  } finally {
    await finish(s, driver, dir);
  }
}

runScenarios("e2e-workbench", [["workbench", scenario]]);
