// End-to-end test of export from the app in the real window, under Xvfb:
// the Export dialog (prefilled path, scope and format, progress, an existing file refused until
// confirmed, Escape), the files it writes, the HTML export of the hostile F47 session loaded in
// the real webview (no script runs, nothing is fetched, no handler or outside link survives), and
// a session with planted keys: the dialog lists them before exporting, the file holds none of
// them unless "Keep secrets" is ticked, and the session file is unchanged.
//
//   ARBOR_BIN=/path/to/arbor node tests/e2e/e2e-export.mjs [demo|hostile|secrets]
//
// Screenshots go to tests/artifacts/export-*.png (gitignored).

import fs from "node:fs";
import path from "node:path";
import { ROOT, Session, check, finish, runScenarios, startDriver, tempEnv, waitForDemo } from "./driver.mjs";

const F47 = path.join(ROOT, "src-tauri", "crates", "cli", "tests", "fixtures", "export", "f47-hostile.jsonl");

/** Opens the Export dialog, sets scope/format/path, clicks Export and waits for the outcome. */
async function exportVia(s, { scope, format, out }) {
  await s.click("#btn-export");
  await s.waitFor("export dialog", () => s.exec(`return !document.getElementById("export-dialog").hidden`));
  await s.exec(
    `document.querySelector('input[name="export-scope"][value="' + arguments[0] + '"]').click();
     const f = document.getElementById("export-format"); f.value = arguments[1]; f.dispatchEvent(new Event("change"));`,
    scope,
    format,
  );
  // The suggestion follows scope and format; wait for it, then type the path the test wants.
  const suggested = await s.waitFor("a suggested path", async () => {
    const v = await s.exec(`return document.getElementById("export-path").value`);
    return v && v.endsWith(format === "html" ? ".html" : ".md") ? v : null;
  });
  await s.exec(`const p = document.getElementById("export-path"); p.value = arguments[0]; p.dispatchEvent(new Event("input"));`, out);
  await s.click("#export-start");
  const state = await s.waitFor("export finished", async () => {
    const st = await s.exec(`return document.getElementById("export-status").dataset.state`);
    return st && st !== "running" ? st : null;
  }, 30_000);
  return { suggested, state, status: await s.text("#export-status") };
}

async function demoScenario(display) {
  const { dir, env } = tempEnv("export-demo");
  const driver = await startDriver(display, env);
  const s = await Session.start(driver.base);
  try {
    await waitForDemo(s);
    const outDir = path.join(dir, "exports");
    fs.mkdirSync(outDir);
    const html = path.join(outDir, "demo.html");
    const r = await exportVia(s, { scope: "session", format: "html", out: html });
    check("the suggested path is in the home or documents folder, named after the session", r.suggested.startsWith(env.HOME) && r.suggested.includes("demo"), r.suggested);
    check("the whole session exports to HTML", r.state === "done" && fs.existsSync(html), `${r.state}: ${r.status}`);
    const text = fs.existsSync(html) ? fs.readFileSync(html, "utf8") : "";
    check("the status says how many entries went where", /Exported [\d,]+ entries/.test(r.status) && r.status.includes(html), r.status);
    check("the file is one self-contained HTML page without script", text.toLowerCase().startsWith("<!doctype html") && !/<script/i.test(text));
    const progress = await s.exec(`return document.getElementById("export-progress").value`);
    check("the progress bar ends full", progress === 1, String(progress));
    await s.screenshot("export-01-done");

    // Exporting again to the same path is refused until the user confirms; the file stays.
    const before = fs.readFileSync(html);
    await s.exec(`window.confirm = () => false;`);
    await s.click("#export-start");
    const refused = await s.waitFor("refused", async () => {
      const st = await s.exec(`return document.getElementById("export-status").dataset.state`);
      return st && st !== "running" && st !== "done" ? st : null;
    });
    const msg = await s.text("#export-status");
    check("an existing file is not replaced without confirmation", refused === "refused" && msg.includes("already exists") && Buffer.compare(fs.readFileSync(html), before) === 0, msg);
    await s.exec(`window.confirm = () => true;`);
    await s.exec(`document.getElementById("export-format").value = "html";`);
    await s.click("#export-start");
    const replaced = await s.waitFor("replaced", async () => {
      const st = await s.exec(`return document.getElementById("export-status").dataset.state`);
      return st === "done" ? st : null;
    });
    check("after confirming, the export replaces the file", replaced === "done");

    // Escape closes the dialog.
    await s.exec(`document.getElementById("export-path").focus()`);
    const e = await s.find("#export-path");
    await s.cmd("POST", `/element/${e}/value`, { text: "\uE00C" });
    await s.waitFor("dialog closed", () => s.exec(`return document.getElementById("export-dialog").hidden`), 3000).catch(() => false);
    check("Escape closes the export dialog", await s.exec(`return document.getElementById("export-dialog").hidden`));

    // The context at the selected node, as Markdown: only what the model sees.
    const md = path.join(outDir, "context.md");
    const r2 = await exportVia(s, { scope: "context", format: "markdown", out: md });
    const mdText = fs.existsSync(md) ? fs.readFileSync(md, "utf8") : "";
    check("the context at the node exports to Markdown", r2.state === "done" && mdText.startsWith("#"), `${r2.state}: ${r2.status}`);
    const all = (text.match(/<article /g) || []).length;
    const ctx = (mdText.match(/<a id="e\d+"><\/a>/g) || []).length;
    check("the context export holds fewer entries than the whole session", ctx > 0 && ctx < all, `${ctx} of ${all}`);
    check("the session file itself was not written", !fs.readdirSync(outDir).some((f) => f.endsWith(".jsonl")) && fs.readdirSync(outDir).every((f) => !f.startsWith(".")), fs.readdirSync(outDir).join(","));
  } finally {
    await finish(s, driver, dir);
  }
}

async function hostileScenario(display) {
  const { dir, env } = tempEnv("export-hostile");
  const proj = path.join(env.PI_CODING_AGENT_DIR, "sessions", "--home-dev-project--");
  fs.mkdirSync(proj, { recursive: true });
  const file = path.join(proj, "2025-03-01T09-00-00-000Z_f47.jsonl");
  fs.copyFileSync(F47, file);
  const driver = await startDriver(display, env);
  const s = await Session.start(driver.base);
  try {
    // Open it from the picker, as a user would.
    await s.waitFor("the F47 session in the picker", () => s.exec(`return document.querySelectorAll("#picker-list .session-card").length >= 1`), 60_000);
    await s.exec(`document.querySelector("#picker-list .session-card").click()`);
    await s.waitFor("the F47 session is open", async () => ((await s.exec(`return document.getElementById("session-title").title || ""`)) || "").endsWith("_f47.jsonl"), 30_000);
    const out = path.join(dir, "f47.html");
    const r = await exportVia(s, { scope: "session", format: "html", out });
    check("the hostile session exports", r.state === "done" && fs.existsSync(out), `${r.state}: ${r.status}`);
    // Load the export in the real webview, as a user opening the file would.
    await s.cmd("POST", "/url", { url: `file://${out}` });
    await s.waitFor("the export page loaded", () => s.exec(`return document.readyState === "complete" && !!document.querySelector("article")`), 10_000);
    const probe = await s.exec(`
      const all = [...document.querySelectorAll("*")];
      return {
        scripts: document.scripts.length,
        hacked: typeof window.hacked !== "undefined" || typeof window.pwned !== "undefined",
        handlers: all.filter((e) => [...e.attributes].some((a) => a.name.toLowerCase().startsWith("on"))).length,
        embeds: document.querySelectorAll("img, iframe, object, embed, video, audio, source, link[rel], form, input, svg").length,
        outside: [...document.querySelectorAll("a[href]")].filter((a) => !a.getAttribute("href").startsWith("#")).length,
        requests: performance.getEntriesByType("resource").length,
        csp: !!document.querySelector('meta[http-equiv="Content-Security-Policy"]'),
        articles: document.querySelectorAll("article").length,
        payloadAsText: document.body.textContent.includes("<script>"),
      };`);
    check("no script element in the loaded export", probe.scripts === 0, JSON.stringify(probe));
    check("no payload ran (window.hacked / window.pwned unset)", probe.hacked === false);
    check("no element carries an event handler", probe.handlers === 0, String(probe.handlers));
    check("no image, frame, form or other fetching element", probe.embeds === 0, String(probe.embeds));
    check("no link leaves the page", probe.outside === 0, String(probe.outside));
    check("the page made no request", probe.requests === 0, String(probe.requests));
    check("the page carries its own Content-Security-Policy", probe.csp);
    check("the payloads are shown as text", probe.payloadAsText && probe.articles > 5, JSON.stringify(probe));
    await s.screenshot("export-02-f47-in-webview");
  } finally {
    await finish(s, driver, dir);
  }
}

/** Keys in well-known formats, random on each run (so none is written in the repository). */
function plantedKeys() {
  const pick = (set, n) => Array.from({ length: n }, () => set[Math.floor(Math.random() * set.length)]).join("");
  const B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  const B64 = ALNUM + "+/";
  const pem = ["-----BEGIN RSA PRIVATE KEY-----", ...Array.from({ length: 5 }, () => pick(B64, 64)), "-----END RSA PRIVATE KEY-----"].join("\n");
  return [
    { kind: "aws-access-key", secret: `AKIA${pick(B32, 16)}`, where: "user" },
    { kind: "github-token", secret: `ghp_${pick(ALNUM, 36)}`, where: "toolResult" },
    { kind: "private-key", secret: pem, where: "toolCall" },
  ];
}

/** A Pi session holding the keys: in a user message, a tool result and a tool call's arguments. */
function plantedSession(keys) {
  const head = { type: "session", version: 3, id: "5ec2e7a2-0000-4000-8000-0000000e2e01", timestamp: "2025-03-01T09:00:00.000Z", cwd: "/home/dev/project" };
  const lines = [head];
  let parent = null;
  const push = (message) => {
    const id = (lines.length).toString(16).padStart(8, "0");
    lines.push({ type: "message", id, parentId: parent, timestamp: `2025-03-01T09:00:${String(lines.length).padStart(2, "0")}.000Z`, message: { ...message, timestamp: 1740819600000 + lines.length } });
    parent = id;
  };
  const usage = { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
  const [aws, gh, pem] = keys;
  push({ role: "user", content: [{ type: "text", text: `deploy with aws_access_key_id = ${aws.secret} and commit 3f9c2e1d4b5a69788f0e1d2c3b4a59687f0e1d2c` }] });
  push({ role: "assistant", content: [{ type: "toolCall", id: "call_1", name: "bash", arguments: { command: "cat .env" } }], api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5", usage, stopReason: "toolUse" });
  push({ role: "toolResult", toolCallId: "call_1", toolName: "bash", content: [{ type: "text", text: `GITHUB_TOKEN=${gh.secret}\nDEBUG=true\nPORT=8080` }], isError: false });
  push({ role: "assistant", content: [{ type: "toolCall", id: "call_2", name: "write", arguments: { path: "id_rsa", content: pem.secret } }], api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5", usage, stopReason: "toolUse" });
  push({ role: "toolResult", toolCallId: "call_2", toolName: "write", content: [{ type: "text", text: "written" }], isError: false });
  return lines.map((l) => JSON.stringify(l)).join("\n") + "\n";
}

async function secretsScenario(display) {
  const { dir, env } = tempEnv("export-secrets");
  const proj = path.join(env.PI_CODING_AGENT_DIR, "sessions", "--home-dev-project--");
  fs.mkdirSync(proj, { recursive: true });
  const file = path.join(proj, "2025-03-01T09-00-00-000Z_planted.jsonl");
  const keys = plantedKeys();
  fs.writeFileSync(file, plantedSession(keys));
  const before = fs.readFileSync(file);
  const driver = await startDriver(display, env);
  const s = await Session.start(driver.base);
  try {
    await s.waitFor("the planted session in the picker", () => s.exec(`return document.querySelectorAll("#picker-list .session-card").length >= 1`), 60_000);
    await s.exec(`document.querySelector("#picker-list .session-card").click()`);
    await s.waitFor("the planted session is open", async () => ((await s.exec(`return document.getElementById("session-title").title || ""`)) || "").endsWith("_planted.jsonl"), 30_000);
    await s.click("#btn-export");
    const listed = await s.waitFor("the list of secrets", async () => {
      const st = await s.exec(`return document.getElementById("export-secrets").dataset.state`);
      return st && st !== "looking" ? st : null;
    }, 30_000);
    const summary = await s.text("#export-secrets-summary");
    const items = await s.exec(`return [...document.querySelectorAll("#export-secrets-list li")].map((li) => li.textContent)`);
    check("the dialog lists the secrets before exporting", listed === "redacted" && summary.includes("3 secrets will be redacted"), `${listed}: ${summary}`);
    for (const k of keys) check(`the list names the ${k.kind} and its entry`, items.some((t) => t.startsWith(`${k.kind} in `)), JSON.stringify(items));
    check("the list never shows a key", items.every((t) => keys.every((k) => !t.includes(k.secret.slice(0, 12)))), JSON.stringify(items));
    check("keeping secrets is not ticked", (await s.exec(`return document.getElementById("export-keep-secrets").checked`)) === false);
    await s.screenshot("export-03-secrets-listed");
    await s.click("#export-close");
    const out = path.join(dir, "planted.html");
    const r = await exportVia(s, { scope: "session", format: "html", out });
    const html = fs.existsSync(out) ? fs.readFileSync(out, "utf8") : "";
    check("the export is written", r.state === "done" && html.length > 0, `${r.state}: ${r.status}`);
    check("the status says the secrets were redacted", r.status.includes("3 secrets redacted"), r.status);
    for (const k of keys) {
      const first = k.secret.split("\n")[k.kind === "private-key" ? 1 : 0];
      check(`the export holds no ${k.kind}`, !html.includes(first) && html.includes(`[redacted: ${k.kind}]`));
    }
    check("look-alikes stay (a commit hash, DEBUG=true)", html.includes("3f9c2e1d4b5a69788f0e1d2c3b4a59687f0e1d2c") && html.includes("DEBUG=true"));
    // Ticking "keep" says so, and the file has the keys as written.
    await s.exec(`const b = document.getElementById("export-keep-secrets"); b.click();`);
    const kept = await s.waitFor("the list says kept", async () => ((await s.exec(`return document.getElementById("export-secrets").dataset.state`)) === "kept" ? true : null));
    check("ticking keep says the secrets will be kept", kept && (await s.text("#export-secrets-summary")).includes("will be kept"));
    const out2 = path.join(dir, "kept.md");
    await s.exec(`document.getElementById("export-path").value = arguments[0]; document.getElementById("export-path").dispatchEvent(new Event("input"));`, out2);
    await s.exec(`const f = document.getElementById("export-format"); f.value = "markdown"; f.dispatchEvent(new Event("change"));`);
    await s.exec(`document.getElementById("export-path").value = arguments[0];`, out2);
    await s.click("#export-start");
    await s.waitFor("the kept export", async () => {
      const st = await s.exec(`return document.getElementById("export-status").dataset.state`);
      return st && st !== "running" ? st : null;
    }, 30_000);
    const md = fs.existsSync(out2) ? fs.readFileSync(out2, "utf8") : "";
    check("with keep ticked, the keys are written as they are", keys.slice(0, 2).every((k) => md.includes(k.secret)), (await s.text("#export-status")));
    check("the session file is byte-identical", Buffer.compare(fs.readFileSync(file), before) === 0);
  } finally {
    await finish(s, driver, dir);
  }
}

await runScenarios("e2e-export", [
  ["demo", demoScenario],
  ["hostile", hostileScenario],
  ["secrets", secretsScenario],
]);
