// End-to-end test of the summarizer in the real Arbor window (Xvfb + tauri-driver), against a
// loopback OpenAI-compatible SSE server started here:
//
//   ARBOR_BIN=/path/to/arbor scripts/with-secret-service.sh node tests/e2e/e2e-summarize.mjs
//
// The app reads ARBOR_OPENAI_BASE_URL at start. The key is stored through the app's UI in the
// real Secret Service when a D-Bus session is present (with-secret-service.sh provides one).
// Flow: choose the model, store the key, cancel a stalled compaction (nothing appended),
// compact with instructions, navigate with a branch summary, send a message that triggers an
// automatic compaction; "Compact up to here" on a refused entry (a tool result: the nearest valid
// points are offered) and on a valid one (preview, confirm, the graph's new compaction marker);
// a compaction appended by another writer to the followed session, which the app announces with
// an OS notification shown by a real notification daemon (dunst) on the test's bus; clicking it
// opens the workbench on the compaction, and turned off, the next one is not announced. Checks
// the appended lines in the session file. Screenshots go to tests/artifacts/summarize-*.png.

import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { Session, check, collectRows, revealRow, runScenarios, selectOffPathUser, sleep, startDriver, tempEnv, finish, waitForDemo } from "./driver.mjs";

const KEY = "sk-e2e-fake-key-0123456789";

/** The fake provider: summaries answer `## Goal\n[fake summary N]`, chats `Fake reply N` with a
 *  large prompt usage (so the threshold is crossed), and a prompt containing STALL hangs. */
function startFake() {
  const reqs = [];
  let summaries = 0;
  let chats = 0;
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      const j = JSON.parse(body || "{}");
      const text = JSON.stringify(j.messages ?? []);
      const isChat = text.includes("You are continuing a coding session");
      reqs.push({ url: req.url, auth: req.headers.authorization ?? "", body: j, isChat, text });
      if (isChat && text.includes("OVERFLOW")) {
        res.writeHead(400, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: "This model's maximum context length is 32000 tokens. However, your messages resulted in 50000 tokens.", type: "invalid_request_error", code: "context_length_exceeded" } }));
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      const send = (o) => res.write(`data: ${JSON.stringify(o)}\n\n`);
      if (!isChat && text.includes("STALL")) {
        send({ choices: [{ index: 0, delta: { role: "assistant", content: "thinking slowly…" }, finish_reason: null }] });
        return; // never ends; the app must cancel
      }
      const answer = isChat ? `Fake reply ${++chats}` : `## Goal\n[fake summary ${++summaries}]`;
      const [a, b] = [answer.slice(0, 5), answer.slice(5)];
      send({ choices: [{ index: 0, delta: { role: "assistant", content: a }, finish_reason: null }] });
      setTimeout(() => {
        send({ choices: [{ index: 0, delta: { content: b }, finish_reason: null }] });
        send({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] });
        send({ choices: [], usage: { prompt_tokens: isChat ? 30000 : 800, completion_tokens: 12 } });
        res.end("data: [DONE]\n\n");
      }, 50);
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({ server, reqs, port: server.address().port })));
}

const lines = (f) => fs.readFileSync(f, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l));

async function setValue(s, id, value, event = "input") {
  await s.exec(`const e = document.getElementById(arguments[0]); e.value = arguments[1]; e.dispatchEvent(new Event(arguments[2]));`, id, value, event);
}

function appEnv(fake, tag) {
  const { dir, env } = tempEnv(tag);
  env.ARBOR_OPENAI_BASE_URL = `http://127.0.0.1:${fake.port}/v1`;
  fs.mkdirSync(env.ARBOR_DATA_DIR, { recursive: true });
  fs.writeFileSync(
    path.join(env.ARBOR_DATA_DIR, "models.json"),
    JSON.stringify({ models: [{ provider: "openai", id: "fake-small", contextWindow: 32000, maxOutput: 2000 }] }),
  );
  return { dir, env };
}

/** Offline by default; a failed branch summary changes nothing; overflow with compaction off
 *  offers "Compact now". */
async function offlineAndFailures(display, fake) {
  const { dir, env } = appEnv(fake, "summarize-fail");
  const driver = await startDriver(display, env);
  const s = await Session.start(driver.base);
  const demoFile = path.join(env.ARBOR_DATA_DIR, "demo", "demo-session.jsonl");
  try {
    await waitForDemo(s);
    await s.waitFor("compact enabled", () => s.exec(`return !document.getElementById("btn-compact").disabled`));

    // 1. First start, no key: Compact… uses the offline summarizer, marked offline.
    const n0 = lines(demoFile).length;
    const reqs0 = fake.reqs.length;
    await s.click("#btn-compact");
    const by = await s.text("#sum-by");
    check("the dialog says the offline summarizer will write", by.includes("offline"), by);
    await s.click("#sum-start");
    const comp = await s.waitFor("offline compaction", () => {
      const l = lines(demoFile);
      return l.length > n0 ? l[l.length - 1] : null;
    }, 20_000);
    check("offline compaction appended, marked offline", comp.type === "compaction" && comp.details?.offline === true && comp.details?.summarizer?.provider === "offline", JSON.stringify(comp.details).slice(0, 160));
    check("no request reached any provider", fake.reqs.length === reqs0, String(fake.reqs.length - reqs0));
    const notice = await s.waitFor("notice", async () => {
      const t = await s.text("#notice");
      return t.includes("Compacted") ? t : null;
    });
    check("the result says offline", notice.includes("(offline)"), notice);
    await s.screenshot("summarize-10-offline-compacted");

    // 2. A branch summary that fails (dead base URL): the navigation does not happen.
    await s.click(`.tab[data-tab="model"]`);
    await setValue(s, "model-provider", "openai", "change");
    await setValue(s, "model-id", "fake-small");
    const dead = http.createServer();
    await new Promise((r) => dead.listen(0, "127.0.0.1", r));
    const deadUrl = `http://127.0.0.1:${dead.address().port}/v1`;
    await new Promise((r) => dead.close(r));
    await setValue(s, "model-base-url", deadUrl);
    await s.click("#btn-save-model");
    await s.waitFor("model saved", async () => ((await s.text("#model-mode")) || "").includes(deadUrl));
    await s.click(`.tab[data-tab="detail"]`);
    await selectOffPathUser(s, "detail of the target");
    const bytes = fs.readFileSync(demoFile);
    const leafBefore = await s.text("#status-leaf");
    await s.click("#btn-continue-summary");
    await s.click("#sum-start");
    const state = await s.waitFor("navigation error", async () => {
      const v = await s.exec(`return document.getElementById("sum-progress").dataset.state`);
      return v && v !== "running" && v !== "idle" ? v : null;
    }, 20_000);
    const why = await s.text("#sum-progress");
    check("a failed branch summary is shown with its reason", state === "provider" && why.includes("network") && why.includes("nothing changed"), `${state}: ${why}`);
    check("failed summary: nothing written", Buffer.compare(bytes, fs.readFileSync(demoFile)) === 0);
    check("failed summary: the leaf did not move", (await s.text("#status-leaf")) === leafBefore);
    await s.screenshot("summarize-11-navigation-failed");
    await s.click("#sum-close");

    // 3. Overflow with compaction.enabled = false: a clear error and a "Compact now" action.
    await s.click(`.tab[data-tab="model"]`);
    await setValue(s, "model-base-url", "");
    await s.click("#btn-save-model");
    await s.waitFor("model saved", async () => ((await s.text("#model-mode")) || "").includes(`127.0.0.1:${fake.port}`));
    await s.exec(`const e = document.getElementById("budget-enabled"); e.checked = false; e.dispatchEvent(new Event("input"));`);
    await setValue(s, "composer", "OVERFLOW please");
    await s.click("#btn-send");
    const st = await s.waitFor("overflow error", async () => {
      const v = await s.exec(`return document.getElementById("reply-stream").dataset.state`);
      return v && v !== "running" ? v : null;
    }, 20_000);
    const msg = await s.text("#reply-stream");
    check("overflow with compaction off: a clear error", st === "compactionDisabled" && msg.includes("compaction.enabled = false"), `${st}: ${msg}`);
    await s.screenshot("summarize-12-overflow-disabled");
    await s.click("#btn-compact-now");
    const open = await s.exec(`return !document.getElementById("sum-dialog").hidden && document.getElementById("sum-title").textContent`);
    check("\"Compact now\" opens the compaction", typeof open === "string" && open.startsWith("Compact"), String(open));
    const n1 = lines(demoFile).length;
    await s.click("#sum-start");
    const c2 = await s.waitFor("compaction after compact now", () => {
      const l = lines(demoFile);
      return l.length > n1 ? l[l.length - 1] : null;
    }, 20_000);
    check("compact now appends a compaction", c2.type === "compaction" && c2.summary.includes("[fake summary"), JSON.stringify(c2).slice(0, 160));
  } finally {
    await finish(s, driver, dir);
  }
}

async function scenario(display, fake) {
  const { dir, env } = tempEnv("summarize");
  env.ARBOR_OPENAI_BASE_URL = `http://127.0.0.1:${fake.port}/v1`;
  const realKeyring = !!process.env.DBUS_SESSION_BUS_ADDRESS;
  const driver = await startDriver(display, env);
  const s = await Session.start(driver.base);
  const demoFile = path.join(env.ARBOR_DATA_DIR, "demo", "demo-session.jsonl");
  try {
    await waitForDemo(s);

    // Keyring self-test: a banner only when no backend works.
    const kr = await s.waitFor("keyring self-test", () => s.exec(`return document.getElementById("keyring-banner").dataset.ok`), 20_000);
    if (realKeyring) check("keyring self-test passes under the real Secret Service (no banner)", kr === "true" && (await s.exec(`return document.getElementById("keyring-banner").hidden`)), kr);
    else check("no keyring: the banner says so", kr === "false" && !(await s.exec(`return document.getElementById("keyring-banner").hidden`)), kr);

    // Offline by default.
    await s.click(`.tab[data-tab="model"]`);
    const mode0 = await s.waitFor("model mode", () => s.text("#model-mode"));
    check("the default summarizer is offline", mode0.startsWith("Offline"), mode0);

    // Choose the model (catalog window feeds the threshold) and store the key through the UI.
    await setValue(s, "model-provider", "openai", "change");
    await setValue(s, "model-id", "fake-small");
    // A model of the user's own with a small window, added to the catalog through the UI.
    await s.exec(`document.getElementById("add-model").open = true`);
    await setValue(s, "add-model-window", "32000");
    await setValue(s, "add-model-output", "2000");
    await s.click("#btn-add-model");
    await s.waitFor("model added", async () => ((await s.text("#notice")) || "").includes("added to the catalog"));
    const userModels = JSON.parse(fs.readFileSync(path.join(env.ARBOR_DATA_DIR, "models.json"), "utf8")).models;
    check("the model is added to the user's catalog", userModels.some((m) => m.id === "fake-small" && m.contextWindow === 32000), JSON.stringify(userModels));
    await s.click("#btn-save-model");
    const mode = await s.waitFor("model saved", async () => {
      const t = await s.text("#model-mode");
      return t.includes("fake-small") ? t : null;
    });
    check("model chosen, base URL from ARBOR_OPENAI_BASE_URL", mode.includes(`127.0.0.1:${fake.port}/v1`), mode);
    // (The Budgets tab shows the session's model's window from Pi's table; the chosen model's
    // catalog window is what Arbor's replies and compactions use: the Model tab says so.)
    const cw = await s.text("#model-window");
    check("the catalog's context window feeds the threshold", /32[,.\s\u00a0\u202f]?000/.test(cw) && cw.includes("threshold"), cw);
    if (realKeyring) {
      await setValue(s, "key-input", KEY);
      await s.click("#btn-set-key");
      const stored = await s.waitFor("key stored", async () => ((await s.exec(`return document.getElementById("key-status").dataset.stored`)) === "true" ? true : null));
      check("key stored in the OS keyring through the UI", stored === true);
      check("the key input is cleared at once", (await s.exec(`return document.getElementById("key-input").value`)) === "");
      check("the key is nowhere in the page", !(await s.exec(`return document.documentElement.outerHTML.includes(arguments[0])`, KEY)));
    } else {
      console.log("     (no D-Bus session: key step skipped; the loopback server needs no key)");
    }
    await s.screenshot("summarize-01-model");

    // Cancel a stalled compaction: stops fast, nothing appended.
    await s.click(`.tab[data-tab="detail"]`);
    const bytes0 = fs.readFileSync(demoFile);
    await s.click("#btn-compact");
    await setValue(s, "sum-instructions", "STALL please");
    await s.click("#sum-start");
    await s.waitFor("streamed progress", async () => ((await s.text("#sum-progress")) || "").includes("thinking slowly"));
    await s.screenshot("summarize-02-streaming");
    const t0 = Date.now();
    await s.click("#sum-cancel");
    const st = await s.waitFor("cancelled", async () => {
      const v = await s.exec(`return document.getElementById("sum-progress").dataset.state`);
      return v === "cancelled" ? v : null;
    });
    const cancelMs = Date.now() - t0;
    check("cancel stops the compaction", st === "cancelled");
    console.log(`     cancel → UI shows cancelled in ${cancelMs} ms (incl. WebDriver round trips)`);
    check("cancel: nothing appended", Buffer.compare(bytes0, fs.readFileSync(demoFile)) === 0);

    // Compact with instructions.
    const n0 = lines(demoFile).length;
    const leaf0 = await s.text("#status-leaf");
    await setValue(s, "sum-instructions", "Keep every file path exactly");
    await s.click("#sum-start");
    const comp = await s.waitFor("compaction line", () => {
      const l = lines(demoFile);
      return l.length > n0 ? l[l.length - 1] : null;
    }, 20_000);
    check("compaction appended", comp.type === "compaction" && comp.parentId === leaf0, JSON.stringify(comp).slice(0, 200));
    check("its summary is the model's", comp.summary.startsWith("## Goal\n[fake summary"), comp.summary.slice(0, 80));
    check("details name the model, not offline", comp.details?.summarizer?.model === "fake-small" && !comp.details?.summarizer?.offline, JSON.stringify(comp.details?.summarizer));
    const summaryReq = fake.reqs.filter((r) => !r.isChat).at(-1);
    check("the instructions reached the model", summaryReq.text.includes("Keep every file path exactly"));
    if (realKeyring) check("the request carried the key from the keyring", summaryReq.auth === `Bearer ${KEY}`, summaryReq.auth.slice(0, 12));
    const leaf1 = await s.waitFor("leaf on the compaction", async () => ((await s.text("#status-leaf")) === comp.id ? comp.id : null));
    check("the new compaction is the leaf", leaf1 === comp.id);
    const notice = await s.waitFor("result notice", async () => {
      const t = await s.text("#notice");
      return t.includes("Compacted by") ? t : null;
    }).catch(async () => s.text("#notice"));
    check("the result is shown", notice.includes("Compacted by openai fake-small") && notice.includes(comp.id), notice);
    // The new entry's own graph row and its marks (null when the row is not drawn).
    const compRow = await s
      .waitFor("compaction on the graph", () => s.exec(`const r = document.querySelector('.g-row[data-entry-id="' + CSS.escape(arguments[0]) + '"]'); return r && r.classList.contains("m-compaction") ? { kind: r.dataset.kind, cls: r.className } : null`, comp.id))
      .catch(() => null);
    check("the compaction is on the graph", compRow?.kind === "compaction" && compRow.cls.split(" ").includes("m-compaction"), JSON.stringify(compRow));
    await s.click(`.tab[data-tab="context"]`);
    const ctxLeaf = await s.waitFor("context view on the new leaf", () => s.exec(`const l = document.getElementById("context-leaf"); return l && l.dataset.leaf === arguments[0] ? l.dataset.leaf : null`, comp.id));
    check("the context view follows the compaction", ctxLeaf === comp.id);
    await s.screenshot("summarize-03-compacted");

    // Navigate with a branch summary (with instructions) to a user message on another branch.
    await s.click(`.tab[data-tab="detail"]`);
    const trow = await selectOffPathUser(s, "detail of the target");
    check("found a user message on another branch", !!trow);
    const target = trow.id;
    const targetParent = await s.exec(`return document.getElementById("detail").dataset.parentId`);
    const n1 = lines(demoFile).length;
    await s.click("#btn-continue-summary");
    await s.click('input[name="sum-mode"][value="instructions"]');
    check("the instructions field opens for 'summarize with instructions'", await s.exec(`return !document.getElementById("sum-instructions").disabled`));
    await setValue(s, "sum-instructions", "Mention what was abandoned");
    await s.screenshot("summarize-04-navigate-dialog");
    await s.click("#sum-start");
    const bs = await s.waitFor("branch_summary line", () => {
      const l = lines(demoFile);
      return l.length > n1 ? l[l.length - 1] : null;
    }, 20_000);
    check("branch summary appended", bs.type === "branch_summary" && bs.fromId === targetParent && bs.parentId === targetParent, JSON.stringify(bs).slice(0, 200));
    check("branch summary is the model's", bs.summary.includes("[fake summary"), bs.summary.slice(0, 80));
    check("navigate instructions reached the model", fake.reqs.filter((r) => !r.isChat).at(-1).text.includes("Mention what was abandoned"));
    const leaf2 = await s.waitFor("leaf on the branch summary", async () => ((await s.text("#status-leaf")) === bs.id ? bs.id : null));
    check("the branch summary is the new leaf", leaf2 === bs.id);
    const composer = await s.waitFor("composer text", () => s.exec(`return document.getElementById("composer").value`), 5000).catch(() => "");
    check("the target's text is back in the composer", composer.length > 0, `target ${target}, parent ${targetParent}, leaf ${leaf2}`);
    await s.screenshot("summarize-05-navigated");

    // Send a message: the reply is appended with usage, and the threshold (32000 − reserve) is
    // crossed by the reply's usage, so an automatic compaction follows.
    const n2 = lines(demoFile).length;
    check("the composer says Arbor runs no tools", ((await s.text(".composer-actions")) || "").includes("Arbor runs no tools"));
    await setValue(s, "composer", "What should I do next?");
    await s.click("#btn-send");
    await s.waitFor("reply", async () => ((await s.exec(`return document.getElementById("reply-stream").dataset.state`)) === "done" ? true : null), 30_000);
    const added = lines(demoFile).slice(n2);
    const types = added.map((l) => (l.type === "message" ? `message:${l.message.role}` : l.type));
    check("user message, assistant reply and an automatic compaction appended", types.includes("message:user") && types.includes("message:assistant") && types.at(-1) === "compaction", types.join(","));
    const asst = added.find((l) => l.type === "message" && l.message.role === "assistant");
    check("the reply is appended with usage", asst?.message.content[0].text.startsWith("Fake reply") && asst.message.usage.input === 30000 && asst.message.usage.output === 12, JSON.stringify(asst?.message.usage));
    const user = added.find((l) => l.type === "message" && l.message.role === "user");
    check("the user message has the composer's text", JSON.stringify(user?.message.content).includes("What should I do next?"));
    const chatReq = fake.reqs.find((r) => r.isChat);
    check("the chat request carried the built context (branch summary included)", chatReq && chatReq.text.includes("What should I do next?") && chatReq.text.includes("[fake summary"));
    const status = await s.text("#send-status");
    check("the UI reports the automatic compaction", status.includes("compacted automatically"), status);
    const leaf3 = await s.text("#status-leaf");
    check("the leaf follows the file", leaf3 === added.at(-1).id, `${leaf3} vs ${added.at(-1).id}`);
    await s.screenshot("summarize-06-sent");

    // Hooks in the settings view.
    await s.click(`.tab[data-tab="model"]`);
    await setValue(s, "hook-compact", "/bin/true --compact");
    await s.click("#btn-save-hooks");
    const hp = await s.waitFor("hooks saved", async () => {
      const t = await s.text("#hooks-path");
      return t.startsWith("Saved to") ? t : null;
    });
    const settingsFile = hp.replace("Saved to ", "");
    const saved = JSON.parse(fs.readFileSync(settingsFile, "utf8"));
    check("the before-compact hook is saved in Arbor's settings", JSON.stringify(saved.hooks?.beforeCompact?.command) === JSON.stringify(["/bin/true", "--compact"]), JSON.stringify(saved));
    await s.screenshot("summarize-07-settings");

    // A before-navigate hook that writes the branch summary itself (fromHook: true).
    const hook = path.join(dir, "nav-hook.mjs");
    fs.writeFileSync(hook, `let b = ""; process.stdin.on("data", (d) => (b += d)); process.stdin.on("end", () => {
      const prep = JSON.parse(b);
      process.stdout.write(JSON.stringify({ summary: "Hook summary of " + Object.keys(prep).length + " keys" }));
    });`);
    await setValue(s, "hook-navigate", `${process.execPath} ${hook}`);
    await s.click("#btn-save-hooks");
    await s.waitFor("hook saved", async () => ((await s.text("#hooks-path")) || "").startsWith("Saved to") && JSON.parse(fs.readFileSync(settingsFile, "utf8")).hooks?.beforeNavigate);
    await s.click(`.tab[data-tab="detail"]`);
    const t2 = await selectOffPathUser(s, "detail of the hook target");
    const n3 = lines(demoFile).length;
    const reqsBeforeHook = fake.reqs.length;
    await s.click("#btn-continue-summary");
    await s.click('input[name="sum-mode"][value="summary"]');
    await s.click("#sum-start");
    const hb = await s.waitFor("hook branch summary", () => {
      const l = lines(demoFile);
      return l.length > n3 ? l[l.length - 1] : null;
    }, 20_000);
    check("the before-navigate hook wrote the branch summary (fromHook)", hb.type === "branch_summary" && hb.fromHook === true && hb.summary.startsWith("Hook summary of"), JSON.stringify(hb).slice(0, 200));
    check("with a hook summary no model is called", fake.reqs.length === reqsBeforeHook, String(fake.reqs.length - reqsBeforeHook));
    await s.screenshot("summarize-08-hook-summary");
    await s.click(`.tab[data-tab="model"]`);

    if (realKeyring) {
      await s.click("#btn-delete-key");
      const gone = await s.waitFor("key deleted", async () => ((await s.exec(`return document.getElementById("key-status").dataset.stored`)) === "false" ? true : null));
      check("the key can be deleted", gone === true);
    }
  } finally {
    await finish(s, driver, dir);
  }
}


/** The selected entry's id, once the Entry pane shows `id`. */
async function selectEntry(s, id, what) {
  const row = await revealRow(s, id);
  if (row === null) throw new Error(`the row of ${id} is not drawn (${what})`);
  await s.click(`.g-row[data-entry-id="${id}"]`);
  await s.waitFor(what, async () => (await s.exec(`return document.getElementById("detail").dataset.entryId`)) === id);
}

const previewState = (s) =>
  s.waitFor("the preview", async () => {
    const v = await s.exec(`return document.getElementById("sum-preview").dataset.state`);
    return v === "ok" || v === "refused" || v === "error" ? v : null;
  }, 10_000);

/** "Compact up to here" (offline summarizer): a tool result is refused, naming valid points that
 *  select when clicked; a valid point shows the preview, and confirming appends a compaction that
 *  keeps from it, drawn on the graph. */
async function compactHere(display) {
  const { dir, env } = tempEnv("compact-here");
  const driver = await startDriver(display, env);
  const s = await Session.start(driver.base);
  const demoFile = path.join(env.ARBOR_DATA_DIR, "demo", "demo-session.jsonl");
  try {
    await waitForDemo(s);
    const rows = await collectRows(s);
    const active = rows.filter((r) => r.cls.split(" ").includes("m-active"));
    const tool = active.filter((r) => r.kind === "toolResult").sort((a, b) => b.row - a.row)[0];
    check("a tool result on the active path to try", !!tool, JSON.stringify(active.map((r) => r.kind)));
    const bytes = fs.readFileSync(demoFile);

    // A refused point: the reason, the nearest valid points, nothing written, no Start.
    await selectEntry(s, tool.id, "the tool result selected");
    await s.waitFor("Compact up to here enabled", () => s.exec(`return !document.getElementById("btn-compact-here").disabled`));
    await s.click("#btn-compact-here");
    const st0 = await previewState(s);
    const refusal = await s.text("#sum-preview");
    check("a tool result is refused, with the reason", st0 === "refused" && refusal.includes("tool result") && refusal.includes("Nothing was written"), `${st0}: ${refusal}`);
    const near = await s.exec(`return [...document.querySelectorAll("#sum-preview .cut-point")].map((b) => b.dataset.entryId)`);
    check("the nearest valid points are offered", near.length >= 1, JSON.stringify(near));
    check("a refused point cannot be started", await s.exec(`return document.getElementById("sum-start").disabled`));
    check("refused: nothing written", Buffer.compare(bytes, fs.readFileSync(demoFile)) === 0);
    await s.screenshot("summarize-20-compact-here-refused");

    // Clicking a named point selects it; that one compacts.
    const chosen = near[0];
    await s.click(`#sum-preview .cut-point[data-entry-id="${chosen}"]`);
    await s.waitFor("the named point selected", async () => (await s.exec(`return document.getElementById("detail").dataset.entryId`)) === chosen);
    check("the dialog closed on the pick", await s.exec(`return document.getElementById("sum-dialog").hidden`));
    await s.click("#btn-compact-here");
    const st1 = await previewState(s);
    const pv = await s.text("#sum-preview");
    check("a valid point shows the preview", st1 === "ok" && pv.includes("Summarized:") && pv.includes(`Kept as they are:`) && pv.includes(`from ${chosen} to the leaf`) && pv.includes("Context after: the summary"), `${st1}: ${pv}`);
    check("the preview wrote nothing", Buffer.compare(bytes, fs.readFileSync(demoFile)) === 0);
    await s.screenshot("summarize-21-compact-here-preview");
    const n0 = lines(demoFile).length;
    await s.click("#sum-start");
    const comp = await s.waitFor("compaction line", () => {
      const l = lines(demoFile);
      return l.length > n0 ? l[l.length - 1] : null;
    }, 20_000);
    check("one compaction appended, kept from the chosen entry", lines(demoFile).length === n0 + 1 && comp.type === "compaction" && comp.firstKeptEntryId === chosen && comp.details?.offline === true, JSON.stringify(comp).slice(0, 200));
    await s.waitFor("leaf on the compaction", async () => ((await s.text("#status-leaf")) === comp.id ? true : null));
    const row = await revealRow(s, comp.id);
    const marker = row === null ? null : await s.exec(`const r = document.querySelector('.g-row[data-entry-id="' + CSS.escape(arguments[0]) + '"]'); return r ? { kind: r.dataset.kind, cls: r.className } : null`, comp.id);
    check("the graph shows the new compaction marker", marker?.kind === "compaction" && marker.cls.split(" ").includes("m-compaction"), JSON.stringify(marker));
    await s.screenshot("summarize-22-compact-here-done");
  } finally {
    await finish(s, driver, dir);
  }
}

/** dunst, the notification daemon, on the test's session bus and the Xvfb display, with
 *  notifications that stay until acted on; or null when it is not installed. Its own config
 *  folder keeps a developer's dunst settings out. */
async function startDunst(display, dir) {
  if (!runs("dunst", ["-v"])) return null;
  const conf = path.join(dir, "dunstrc");
  fs.writeFileSync(conf, "[global]\n    follow = none\n[urgency_low]\n    timeout = 0\n[urgency_normal]\n    timeout = 0\n[urgency_critical]\n    timeout = 0\n");
  const env = { ...process.env, DISPLAY: display, XDG_CONFIG_HOME: path.join(dir, "dunst-config") };
  // Asked of the bus itself: a call to the service before dunst owns its name would start
  // another dunst through D-Bus activation, without the display.
  const owned = () =>
    execFileSync("dbus-send", ["--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.NameHasOwner", "string:org.freedesktop.Notifications"], { encoding: "utf8" }).includes("boolean true");
  let errs = "";
  // Three tries: once, in a full CI run, dunst exited at once with "Cannot open X11 display" on
  // the Xvfb display the scenarios before it had just used (alone it started every time since).
  for (let attempt = 1; attempt <= 3; attempt++) {
    const p = spawn("dunst", ["-config", conf], { env, detached: true, stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    p.stderr.on("data", (d) => (err += d));
    const stop = () => {
      try {
        process.kill(-p.pid, "SIGKILL");
      } catch {
        /* already gone */
      }
    };
    for (let i = 0; i < 100 && p.exitCode === null; i++) {
      if (owned()) return { stop, err: () => err };
      await sleep(100);
    }
    stop();
    errs += `attempt ${attempt}: ${err}\n`;
    await sleep(500);
  }
  throw new Error(`dunst did not take the notification service's name:\n${errs}`);
}

function runs(cmd, args) {
  try {
    execFileSync(cmd, args, { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

const dunstctl = (...args) => execFileSync("dunstctl", args, { encoding: "utf8" }).trim();

/** Another writer (as Pi would) appends a compaction to the session the window follows: the app
 *  sends the desktop's notification service a `Notify` naming the session, with the workbench's
 *  numbers. dunst shows it; its default action (`dunstctl action 0`, as a click) brings the
 *  workbench of that compaction, and the app closes the notification. Turned off in the Model
 *  tab, the next compaction shows nothing. Needs a D-Bus session (scripts/with-secret-service.sh
 *  gives one) and dunst (scripts/setup.sh installs it); without either the scenario fails. */
async function notifyOnPiCompaction(display) {
  if (!process.env.DBUS_SESSION_BUS_ADDRESS) throw new Error("no D-Bus session: run this script under scripts/with-secret-service.sh (scripts/test.sh does)");
  const { dir, env } = tempEnv("notify");
  const file = path.join(dir, "2025-03-01T09-00-00-000Z_notify-demo.jsonl");
  const demo = path.join(path.dirname(new URL(import.meta.url).pathname), "../../src-tauri/demo/demo-session.jsonl");
  fs.copyFileSync(demo, file);
  const mon = spawn("dbus-monitor", ["interface='org.freedesktop.Notifications'"], { stdio: ["ignore", "pipe", "ignore"] });
  let seen = "";
  mon.stdout.on("data", (d) => (seen += d));
  const dunst = await startDunst(display, dir).catch((e) => {
    mon.kill();
    throw e;
  });
  if (!dunst) {
    mon.kill();
    throw new Error("dunst is not installed: run scripts/setup.sh, which installs it");
  }
  const driver = await startDriver(display, env);
  const s = await Session.start(driver.base, [file]);
  const notifies = () => seen.split("member=Notify").length - 1;
  const detailOn = (id) => s.exec(`return document.getElementById("detail").dataset.entryId === arguments[0]`, id);
  try {
    // The demo session has a name (Pi's /name), which the notification names it by.
    const name = "throttle: per-client rate limits (Arbor demo)";
    await s.waitFor("the session open", async () => ((await s.text("#session-title")) || "").includes("throttle"), 15_000);
    await s.waitFor("graph rows", () => s.exec(`return document.querySelectorAll(".g-row").length > 5`));
    check("notifications are on by default", await s.exec(`return document.getElementById("notify-summaries").checked`));
    const l = lines(file);
    const leaf = l[l.length - 1].id;
    const kept = l.filter((e) => e.type === "message" && e.message?.role === "user").at(-1).id;
    // Elsewhere before the click: another entry selected, another tab in front.
    await selectEntry(s, kept, "another entry selected");
    await s.click('.tab[data-tab="budgets"]');
    await sleep(1500); // the follow has seen the file once
    const compaction = { type: "compaction", id: "c0ffee77", parentId: leaf, timestamp: new Date().toISOString(), summary: "## Goal\nShip the parser in `src/parser.rs`.", firstKeptEntryId: kept, tokensBefore: 12000 };
    fs.appendFileSync(file, JSON.stringify(compaction) + "\n");
    const call = await s.waitFor("a Notify call on the bus", () => {
      const i = seen.indexOf("member=Notify");
      return i >= 0 && seen.slice(i).includes("compacted") ? seen.slice(i, i + 600) : null;
    }, 20_000).catch(() => null);
    check("the app asked the notification service to show it", !!call, seen.slice(0, 300));
    check("the notification names the session and the drop alarm and retention", !!call && call.includes(`${name}: compacted`) && /drop alarm/.test(call) && /retention|no facts/.test(call), call ?? "");
    const row = await s.waitFor("the compaction on the graph", () => s.exec(`return !!document.querySelector('.g-row[data-entry-id="c0ffee77"]')`), 10_000).catch(() => false);
    check("the window followed the append", row === true);
    check("the click has not happened yet: the workbench is elsewhere", !(await detailOn("c0ffee77")));
    await s.screenshot("summarize-23-notified");

    const shown = await s.waitFor("dunst showing the notification", () => dunstctl("count", "displayed") === "1", 10_000).catch(() => false);
    check("dunst shows the notification", shown === true, `displayed ${dunstctl("count", "displayed")}; ${dunst.err()}`);
    dunstctl("action", "0");
    const invoked = await s.waitFor("ActionInvoked on the bus", () => /member=ActionInvoked[^]*?string "default"/.test(seen), 10_000).catch(() => false);
    check("dunst reported the click as the default action", invoked === true, seen.slice(seen.indexOf("member=ActionInvoked")).slice(0, 300));
    const opened = await s.waitFor("the workbench of the compaction", () => s.exec(
      `const w = document.getElementById("workbench");
       return document.body.dataset.noticeOpened === "c0ffee77" && document.getElementById("detail").dataset.entryId === "c0ffee77"
         && !document.getElementById("panel-detail").hidden && !!w && w.dataset.entryId === "c0ffee77";`,
    ), 10_000).catch(() => false);
    check("the click opened the workbench on the appended compaction", opened === true,
      JSON.stringify(await s.exec(`const w = document.getElementById("workbench"); return { opened: document.body.dataset.noticeOpened, detail: document.getElementById("detail").dataset.entryId, wb: w && w.dataset.entryId, detailShown: !document.getElementById("panel-detail").hidden }`)));
    const gone = await s.waitFor("the notification gone", () => dunstctl("count", "displayed") === "0", 10_000).catch(() => false);
    check("the notification is gone after the click", gone === true && /member=CloseNotification/.test(seen), `displayed ${dunstctl("count", "displayed")}`);
    await s.screenshot("summarize-24-notice-clicked");

    // Turned off (the Model tab's checkbox): the next compaction is followed but not announced.
    await s.click('.tab[data-tab="model"]');
    await s.click("#notify-summaries");
    await s.waitFor("notifications off", async () => ((await s.text("#notice")) || "").includes("summaries are off"));
    check("the setting shows off", !(await s.exec(`return document.getElementById("notify-summaries").checked`)));
    const [calls, displayed, history] = [notifies(), dunstctl("count", "displayed"), dunstctl("count", "history")];
    const second = { ...compaction, id: "c0ffee78", parentId: "c0ffee77", timestamp: new Date().toISOString() };
    fs.appendFileSync(file, JSON.stringify(second) + "\n");
    const followed = await s.waitFor("the second compaction read", async () => (await s.text("#status-leaf")) === "c0ffee78", 10_000).catch(() => false);
    check("the window followed the second append", followed === true, await s.text("#status-leaf"));
    await sleep(2500);
    check("turned off: no notification arrived", notifies() === calls && dunstctl("count", "displayed") === displayed && dunstctl("count", "history") === history,
      `Notify calls ${calls} -> ${notifies()}, displayed ${displayed} -> ${dunstctl("count", "displayed")}, history ${history} -> ${dunstctl("count", "history")}`);
  } finally {
    mon.kill();
    dunst?.stop();
    await finish(s, driver, dir);
  }
}

const fake = await startFake();
runScenarios("e2e-summarize", [["model", scenario], ["offline", offlineAndFailures], ["compactHere", compactHere], ["notify", notifyOnPiCompaction]], {
  args: [fake],
  cleanup: () => {
    fake.server.closeAllConnections?.();
    fake.server.close();
  },
});
