// End-to-end test of the summary workbench in the real Arbor window (Xvfb +
// tauri-driver), on the bundled demo session:
//
//   ARBOR_BIN=/path/to/arbor node tests/e2e/e2e-workbench.mjs
//
// Flow: the compaction that lost a decision shows a drop-alarm badge and its quality score on the
// graph; selecting it shows its sections, retention score and quality panel (score by kind,
// probes, growth), its cards' citations, and a click on a probe's or a citation's source reveals
// that entry on the graph; "Add back" opens the editor with the decision restored; saving an edit
// that adds an invented item appends one compaction entry (the new leaf, on the graph with its
// score, its text in the context view) whose invented item is marked unsupported; the diff shows
// the restored item; revert appends the original text; re-summarize with the offline summarizer
// compares side by side (both scores by kind) and writes nothing.
// Screenshots: tests/artifacts/workbench-*.png.

import fs from "node:fs";
import path from "node:path";
import { ROOT, Session, check, collectRows, finish, runScenarios, scrollRowIntoView, sleep, startDriver, tempEnv, waitForDemo } from "./driver.mjs";

/** The demo's governing compaction (scripts/gen-demo.mjs), which drops C4's decision "Entry API in `allow_at`". */
const C5 = "57a13fd6";
const C4 = "fbd4e3dc";
/** The demo's first compaction (a split turn), its branch summaries with and without a summary above them. */
const C1 = "e85c1832";
const BS_AFTER_C4 = "2ec6b75d";
const BS_FIRST = "0261656c";
/** The Goal item the e2e edits, and its edited wording; and an item the edit adds at the end of
 *  the Goal that nothing in the span says (the quality panel marks it unsupported). */
const GOAL_ITEM = "- One token bucket per key";
const GOAL_EDITED = "- One token bucket (edited in the e2e) per key";
const INVENTED = "Ship the zeppelin fleet's quantum scheduler before Friday";
/** Every summary entry of the demo: a source that is none of them is a plain span entry. */
const SUMMARIES = [C1, C4, C5, BS_AFTER_C4, BS_FIRST];

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

/** What the window shows as selected: the detail's entry and the graph's cursor row. */
const selection = (s) =>
  s.exec(`return { detail: document.getElementById("detail").dataset.entryId, cursor: document.querySelector(".g-row.cursor")?.dataset.entryId ?? null }`);

/** Clicks `selector` (a source link) and waits until its entry is selected with the graph's
 *  cursor on its row (revealed: the run that hid it unfolded, scrolled into view). */
async function revealBy(s, selector, what) {
  const id = await s.exec(`const a = document.querySelector(arguments[0]); return a && (a.dataset.entryId || a.textContent.split(" ")[0])`, selector);
  await s.click(selector);
  const sel = await s.waitFor(what, async () => {
    const v = await selection(s);
    return v.detail === id && v.cursor === id ? v : null;
  }, 15_000);
  return { id, sel };
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
    // The quality score comes from the background run, after the graph is drawn.
    const q = await s.waitFor("quality badge", () => s.exec(`const b = document.querySelector('.g-row[data-entry-id="${C5}"] .b-quality'); return b && { text: b.textContent, title: b.title }`), 20_000);
    check("its marker shows the quality score beside the drop alarm", /^\d+ %$/.test(q.text), JSON.stringify(q));
    check("the score's tooltip gives it by kind", q.title.includes("recall") && q.title.includes("continuation"), q.title);
    const order = await s.exec(`return [...document.querySelectorAll('.g-row[data-entry-id="${C5}"] .g-badge')].map((b) => b.className.split(" ")[1])`);
    check("the score badge sits right after the drop badge", order.indexOf("b-quality") === order.indexOf("b-dropped") + 1, JSON.stringify(order));
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

    // 2b. Quality: the score by kind, growth, the probes, and each card item's sources.
    await s.waitFor("quality panel", () => s.exec(`return document.getElementById("workbench").dataset.qualityDone === "1"`), 20_000);
    const qScore = await s.text("#wb-quality-score");
    check("the quality panel shows the score", /^\d+ %$/.test(qScore), qScore);
    check("the panel's score is the graph badge's", qScore === q.text, `${qScore} vs ${q.text}`);
    const kinds = await s.exec(`return [...document.querySelectorAll("#wb-quality .wb-qkind")].map((e) => e.textContent)`);
    check("the score is given by kind, as percentages and n/m", kinds.length === 4 && kinds.every((t) => /^(recall|artifact|decision|continuation) (\d+ % \(\d+\/\d+\)|: no probe)/.test(t) || t.endsWith(": no probe")), JSON.stringify(kinds));
    check("growth is shown", /\d+ tokens for [\d,]+ replaced/.test(await s.text("#wb-growth")), await s.text("#wb-growth"));
    check("the cost of forgetting is shown for a compaction", /re-read|Nothing happened after it/.test(await s.text("#wb-forgetting")), await s.text("#wb-forgetting"));
    check("Judge with model is offered (it asks the Model tab's model)", await s.exec(`const b = document.getElementById("wb-judge"); return !b.disabled && b.title.includes("Model tab")`));
    await s.exec(`document.getElementById("wb-probes").open = true`);
    const probe = await s.exec(`const li = document.querySelector("#wb-probes li[data-kind]"); return li && { mark: li.querySelector(".wb-mark").textContent, q: li.querySelector(".wb-question").textContent, expected: li.querySelector(".wb-expected").textContent }`);
    check("a probe is listed with its answer mark, question and expected answer", !!probe && /[✓✗]/.test(probe.mark) && probe.q.length > 5 && probe.expected.length > 0, JSON.stringify(probe));
    const cited = await s.exec(`return document.querySelectorAll("#wb-sections .wb-item .wb-cite-source").length`);
    check("card items show their sources", cited > 5, String(cited));
    await s.screenshot("workbench-11-quality");
    // A click on a probe's source, then on a citation's, reveals that entry on the graph.
    const p = await revealBy(s, "#wb-probes .wb-probe-source", "the probe's source revealed");
    check("a click on a probe's source reveals that entry on the graph", !!p.sel, p.id);
    await selectRow(s, C5, "workbench of the compaction again");
    await s.waitFor("quality again", () => s.exec(`return document.getElementById("workbench").dataset.qualityDone === "1"`), 20_000);
    const plain = await s.exec(`return [...document.querySelectorAll("#wb-sections .wb-cite-source")].map((a) => a.dataset.entryId).find((id) => !arguments[0].includes(id))`, SUMMARIES);
    check("some item cites a span entry that is not a summary", !!plain, String(plain));
    const c = await revealBy(s, `#wb-sections .wb-cite-source[data-entry-id="${plain}"]`, "the citation's source revealed");
    check("a click on a citation's source reveals that entry on the graph", c.id === plain && !!c.sel, JSON.stringify(c));
    await s.screenshot("workbench-12-citation-revealed");
    await selectRow(s, C5, "workbench of the compaction once more");

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
    await s.exec(`const t = document.getElementById("wb-editor"); t.value = t.value.replace(arguments[0], arguments[1]).trimEnd() + "\\n- " + arguments[2] + "\\n"; t.focus();`, GOAL_ITEM, GOAL_EDITED, INVENTED);
    await s.screenshot("workbench-21-editor");
    await key(s, "Enter", true);
    const edit = await s.waitFor("edit appended", () => {
      const l = lines(demoFile);
      return l.length > n0 ? l[l.length - 1] : null;
    }, 15_000);
    check("saving appends exactly one compaction entry", lines(demoFile).length === n0 + 1 && edit.type === "compaction", JSON.stringify(edit).slice(0, 200));
    check("the entry records the edit", edit.details?.editedFrom === C5 && edit.details?.editKind === "edit", JSON.stringify(edit.details));
    check("only the Goal section changed", edit.summary.replace(`\n- ${INVENTED}`, "") === lines(demoFile).find((e) => e.id === C5).summary.replace(GOAL_ITEM, GOAL_EDITED));
    check("the invented item ends the Goal", edit.summary.includes(`\n- ${INVENTED}\n`));
    await s.waitFor("workbench of the edit", async () => (await s.exec(`const w = document.getElementById("workbench"); return w && w.dataset.entryId`)) === edit.id, 15_000);
    check("the new entry is the leaf", (await s.text("#status-leaf")) === edit.id);
    const leafRow = await s.waitFor("leaf row", () => s.exec(`const r = document.querySelector('.g-row.m-leaf'); return r && r.dataset.entryId`));
    check("the new entry is on the graph as the leaf", leafRow === edit.id, String(leafRow));
    const authorNow = await s.text(".wb-facts");
    check("the new version says it was edited by the user, over the original's span", authorNow.includes("edited by the user") && !authorNow.includes("empty span"), authorNow);
    // The invented item: nothing in the span says it.
    await s.waitFor("quality of the edit", () => s.exec(`return document.getElementById("workbench").dataset.qualityDone === "1"`), 20_000);
    const invented = await s.exec(`const li = [...document.querySelectorAll('.wb-card[data-section="Goal"] li.wb-item')].find((l) => l.textContent.includes("zeppelin")); return li && { cls: li.className, mark: li.querySelector(".wb-unsupported")?.textContent ?? null }`);
    check("the invented item is marked unsupported on its card", !!invented && invented.cls.includes("unsupported") && invented.mark === "unsupported: nothing in its span says this", JSON.stringify(invented));
    const unsupportedList = await s.text("#wb-unsupported");
    check("and listed among the unsupported items", (unsupportedList ?? "").includes(INVENTED), unsupportedList);
    const editBadge = await s.waitFor("the edit's score on the graph", () => s.exec(`const b = document.querySelector('.g-row[data-entry-id="${edit.id}"] .b-quality'); return b && b.textContent`), 20_000);
    check("the appended edit's marker shows its score", /^\d+ %$/.test(editBadge), editBadge);
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
    const qs = await s.exec(`return ["wb-col-existing-quality", "wb-col-new-quality"].map((id) => [...document.querySelectorAll("#" + id + " .wb-qscore, #" + id + " .wb-qkind")].map((e) => e.textContent))`);
    check("both probe scores are shown, by kind", qs.every((l) => l.length === 5 && /^\d+ %$/.test(l[0]) && l.slice(1).every((t) => /\(\d+\/\d+\)|no probe/.test(t))), JSON.stringify(qs));
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

    // 9. Continue from a summary that cannot be edited at the leaf: it becomes the leaf and the
    //    compaction that governs it, so its new workbench (the view asked for last, whatever the
    //    order the two views answer in) can edit it.
    await selectRow(s, C1, "workbench of the first compaction again");
    check("before the Continue, the first compaction cannot be edited", await s.exec(`return document.getElementById("wb-edit-raw").disabled`));
    await s.exec(`document.getElementById("workbench").dataset.e2eOld = "1"`);
    await s.click("#btn-continue");
    const cont = await s.waitFor("Continue from the first compaction", () =>
      s.exec(`const w = document.querySelectorAll("#workbench"), d = document.getElementById("detail");
        return (document.body.dataset.continueDone || "").startsWith(arguments[0] + "#") && w.length === 1 && !w[0].dataset.e2eOld
          ? { leaf: document.getElementById("status-leaf").textContent, id: w[0].dataset.entryId, editable: !document.getElementById("wb-edit-raw").disabled,
              refusal: !!document.querySelector(".wb-refusal"), badge: !!d.querySelector(".detail-head .b-leaf"), benches: document.querySelectorAll(".workbench").length }
          : null`, C1), 15_000);
    check("Continue from a summary makes it the leaf, its head says so, and its new workbench can edit it", cont.leaf === C1 && cont.id === C1 && cont.badge && cont.editable && !cont.refusal && cont.benches === 1, JSON.stringify(cont));
    await s.screenshot("workbench-71-continue-from-summary");
  } finally {
    await finish(s, driver, dir);
  }
}

/** A real Pi session (the engine's fixture rpc-manual.jsonl, Pi 0.73.1): after its first compaction
 *  05e34e69 the agent read two files again and ran the tests again; its second, 7e4d8172, grew
 *  more than 1.5× over the first. Opened from the command line. */
async function forgettingScenario(display) {
  const { dir, env } = tempEnv("workbench-forgetting");
  const file = path.join(dir, "rpc-manual.jsonl");
  fs.copyFileSync(path.join(ROOT, "src-tauri/crates/session-engine/tests/fixtures/real-pi/rpc-manual.jsonl"), file);
  const driver = await startDriver(display, env);
  const s = await Session.start(driver.base, [file]);
  try {
    await s.waitFor("the session open", async () => (await s.exec(`return document.getElementById("session-title").title`)) === file, 20_000);
    await s.waitFor("graph rows", () => s.exec(`return document.querySelectorAll(".g-row").length > 5`));
    const rows = await collectRows(s);
    await scrollRowIntoView(s, rows.find((r) => r.id === "05e34e69").row);
    const badge = await s.waitFor("quality badge", () => s.text(`.g-row[data-entry-id="05e34e69"] .b-quality`), 20_000);
    check("a real Pi compaction's marker shows its score", badge === "91 %", badge);

    // The Timeline marks the compaction after which the agent did things again.
    await s.click('.tab[data-tab="timeline"]');
    const mark = await s.waitFor("forgetting mark", () => s.exec(`const m = document.querySelector('#timeline .wf-fmark[data-entry-id="05e34e69"]'); return m && { text: m.textContent, title: m.title }`), 20_000);
    check("the Timeline marks the compaction with a cost of forgetting", mark.text === "↻3", JSON.stringify(mark));
    check("its tooltip says what was re-read and re-run", mark.title.includes("2 files re-read: data/transactions.csv, ledger/core.py") && mark.title.includes("1 command re-run: python3 -m unittest discover -s tests -v"), mark.title);
    const others = await s.exec(`return [...document.querySelectorAll("#timeline .wf-fmark")].map((m) => m.dataset.entryId)`);
    check("a compaction after which nothing was done again has no mark", JSON.stringify(others) === JSON.stringify(["05e34e69"]), JSON.stringify(others));
    await s.screenshot("workbench-80-timeline-forgetting");
    await s.click('#timeline .wf-fmark[data-entry-id="05e34e69"]');
    await s.waitFor("the compaction selected", () => s.exec(`return document.getElementById("detail").dataset.entryId === "05e34e69"`), 15_000);
    await s.click('.tab[data-tab="detail"]');
    await s.waitFor("its quality", () => s.exec(`const w = document.getElementById("workbench"); return w && w.dataset.entryId === "05e34e69" && w.dataset.qualityDone === "1"`), 20_000);
    const f = await s.text("#wb-forgetting");
    check("its workbench says what was forgotten, against the session start", f.includes("2 files re-read") && f.includes("2 tool calls before the first edit (the session start: 3)"), f);
    const wait = await s.exec(`const li = [...document.querySelectorAll(".wb-item")].find((l) => l.textContent.includes("Wait for the user's next request")); return li && li.querySelector(".wb-cite")?.textContent`);
    check("Pi's own unsupported item is marked on its card", wait === "unsupported: nothing in its span says this", String(wait));
    await selectRow(s, "7e4d8172", "workbench of the second compaction");
    await s.waitFor("its quality", () => s.exec(`return document.getElementById("workbench").dataset.qualityDone === "1"`), 20_000);
    const g = await s.text("#wb-growth");
    check("growth flags a summary that grew in words", g.includes("742 tokens") && g.includes("grew more than 1.5× over the previous summary"), g);
    await s.screenshot("workbench-81-growth");
  } finally {
    await finish(s, driver, dir);
  }
}

runScenarios("e2e-workbench", [
  ["workbench", scenario],
  ["forgetting", forgettingScenario],
]);
