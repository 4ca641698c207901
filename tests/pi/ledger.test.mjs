// The artifact ledger with the real `pi` (Pi 0.73.1 in tests/pi/node_modules): Arbor writes a
// compaction with the ledger (`arbor-cli compact --ledger`, the real binary, summarizing with
// the scripted loopback model), Pi loads the file and shows the ledger in its context, Pi
// continues the session through the loopback model (the ledger reaches the model in the
// summary message), and Pi compacts again: its update prompt hands the ledger to the model as
// the previous summary. Nothing leaves 127.0.0.1.
//
//   ARBOR_CLI=target/debug/arbor-cli node --test tests/pi/ledger.test.mjs
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { children, killTree, loopbackModels, PI_CLI, PI_COMMON, PI_HOME, piEnv, PiRpc, readEntries } from "./pi-driver.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, "../..");
const RECORDING = path.join(REPO, "src-tauri/crates/session-engine/tests/fixtures/real-pi/rpc-manual.jsonl");
const TIMEOUT_MS = Number(process.env.PI_TIMEOUT_MS || 120000);

function arborCli() {
  const candidates = [process.env.ARBOR_CLI, path.join(process.env.CARGO_TARGET_DIR || path.join(REPO, "target"), "debug/arbor-cli")].filter(Boolean);
  const bin = candidates.find((c) => fs.existsSync(c));
  if (!bin) throw new Error("arbor-cli is not built: run `cargo build -p arbor-cli` (or set ARBOR_CLI)");
  return bin;
}

/** The ledger's item lines in a summary (empty when it has none). */
function ledgerLines(summary) {
  const at = summary.indexOf("\n## Artifacts\n");
  if (at < 0) return [];
  const lines = summary.slice(at + 1).split("\n").slice(2);
  const end = lines.findIndex((l) => !l.startsWith("- "));
  return end < 0 ? lines : lines.slice(0, end);
}

/** Runs `bin args` to its end without blocking this process (the loopback model answers from it). */
function run(bin, args, { env, timeoutMs }) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    children.add(child);
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const t = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${bin} ${args[0]} timed out after ${timeoutMs} ms: ${stderr}`));
    }, timeoutMs);
    child.on("exit", (status) => {
      clearTimeout(t);
      children.delete(child);
      resolve({ status, stdout, stderr });
    });
  });
}

const scratchDirs = [];
after(() => {
  for (const c of children) killTree(c, "SIGKILL");
  for (const d of scratchDirs) fs.rmSync(d, { recursive: true, force: true });
});

test("Pi loads Arbor's ledger, continues the session and hands the ledger to its next compaction", { timeout: TIMEOUT_MS * 3 }, async () => {
  assert.ok(fs.existsSync(PI_CLI), `Pi is not installed (${PI_CLI}); run scripts/setup.sh, or set ARBOR_SKIP_PI=1 to skip the Pi-backed tests`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "arbor-ledger-pi-"));
  scratchDirs.push(dir);
  const log = path.join(dir, "model-requests.jsonl");
  const { startLoopbackModel } = await import(pathToFileURL(path.join(PI_HOME, "record/loopback-model.mjs")).href);
  const model = await startLoopbackModel({ port: 0, logFile: log });
  try {
    const agentDir = path.join(dir, "agent");
    fs.mkdirSync(agentDir);
    fs.writeFileSync(path.join(agentDir, "models.json"), JSON.stringify(loopbackModels(model.port, { name: "Scripted loopback model", contextWindow: 13000 }), null, 2));
    // Pi keeps little, so that its own compaction after one more turn has something to summarize.
    const settings = {
      defaultProvider: "loopback",
      defaultModel: "scripted-13k",
      defaultThinkingLevel: "off",
      compaction: { enabled: true, reserveTokens: 2000, keepRecentTokens: 300 },
      retry: { enabled: false },
    };
    fs.writeFileSync(path.join(agentDir, "settings.json"), JSON.stringify(settings, null, 2));
    const file = path.join(dir, "session.jsonl");
    // The recording's header names the recorder's scratch folder as its working directory, which
    // a fresh machine does not have, and Pi refuses to resume a session whose folder is gone. The
    // copy (this test's own file) names the test's folder instead; every other line is as recorded.
    const [header, ...rest] = fs.readFileSync(RECORDING, "utf8").split("\n");
    fs.writeFileSync(file, [JSON.stringify({ ...JSON.parse(header), cwd: dir }), ...rest].join("\n"));

    // 1. Arbor compacts with the ledger, summarizing with the same loopback model.
    const compact = await run(
      arborCli(),
      ["compact", file, "--provider", "openai", "--model", "scripted-13k", "--base-url", `http://127.0.0.1:${model.port}/v1`, "--keep-recent-tokens", "1000", "--ledger"],
      { env: { ...process.env, PI_CODING_AGENT_DIR: agentDir, ARBOR_SETTINGS: path.join(dir, "arbor-settings.json"), ARBOR_KEYRING: "off", OPENAI_API_KEY: "loopback-not-a-secret" }, timeoutMs: TIMEOUT_MS },
    );
    assert.equal(compact.status, 0, `arbor-cli compact --ledger failed: ${compact.stderr}`);
    const arborId = compact.stdout.trim();
    const ours = readEntries(file).find((e) => e.id === arborId);
    assert.equal(ours?.type, "compaction", "arbor-cli printed the id of the compaction it wrote");
    const lines = ledgerLines(ours.summary);
    assert.ok(lines.length >= 2, `the ledger lists what the model's summary left out:\n${ours.summary}`);
    assert.ok(ours.summary.indexOf("## Artifacts") < ours.summary.indexOf("<read-files>"), "the ledger comes before Pi's file lists");

    // 2. Pi loads the file: its context starts with Arbor's summary, ledger included.
    const pi = new PiRpc([...PI_COMMON, "--mode", "rpc", "--session", file], { cwd: dir, env: piEnv(agentDir), timeoutMs: TIMEOUT_MS, idPrefix: "ledger", pollMs: 100, killSignal: "SIGKILL" });
    try {
      const { data } = await pi.send({ type: "get_messages" });
      const summaryMsg = data.messages.find((m) => m.role === "compactionSummary");
      assert.ok(summaryMsg, `Pi's context has a compaction summary: ${JSON.stringify(data.messages.map((m) => m.role))}`);
      assert.equal(summaryMsg.summary, ours.summary, "Pi's context holds Arbor's summary as written");
      for (const l of lines) assert.ok(summaryMsg.summary.includes(l), `Pi's context shows the ledger line ${l}`);

      // 3. Pi continues the session: the ledger reaches the model inside the summary message.
      await pi.prompt("Where do we stand? Answer in one line.");
      const requests = () =>
        fs
          .readFileSync(log, "utf8")
          .split("\n")
          .filter(Boolean)
          .map((l) => JSON.parse(l));
      const agent = requests().filter((r) => r.kind === "agent").pop();
      assert.ok(agent, "Pi asked the loopback model to continue");
      const sent = JSON.stringify(agent.body.messages);
      for (const l of lines) assert.ok(sent.includes(JSON.stringify(l).slice(1, -1)), `the continuation's request carries the ledger line ${l}`);

      // 4. Pi compacts again: its update prompt hands Arbor's summary, ledger included, to the model.
      const res = await pi.send({ type: "compact" }, TIMEOUT_MS);
      assert.ok(res.success, `Pi compacted: ${JSON.stringify(res)}`);
      await pi.idle();
      const update = requests().filter((r) => r.kind === "update").pop();
      assert.ok(update, `Pi sent an update prompt: ${requests().map((r) => r.kind).join(", ")}`);
      const prompt = update.body.messages.filter((m) => m.role === "user").map((m) => (typeof m.content === "string" ? m.content : m.content.map((c) => c.text ?? "").join(""))).join("\n");
      const prev = /<previous-summary>\n([\s\S]*?)\n<\/previous-summary>/.exec(prompt)?.[1];
      assert.ok(prev, "the update prompt has a previous summary");
      assert.ok(prev.includes("## Artifacts\n"), `the previous summary Pi sends has the ledger:\n${prev}`);
      for (const l of lines) assert.ok(prev.includes(l), `the update prompt carries the ledger line ${l}`);
    } finally {
      await pi.close();
    }

    // Pi wrote its own compaction after Arbor's, on the same chain.
    const entries = readEntries(file);
    const comps = entries.filter((e) => e.type === "compaction");
    assert.equal(comps.length >= 2 && comps.at(-1).id !== arborId, true, "Pi appended a compaction of its own");
    const byId = new Map(entries.filter((e) => e.id).map((e) => [e.id, e]));
    let at = comps.at(-1);
    while (at && at.id !== arborId) at = byId.get(at.parentId);
    assert.ok(at, "Pi's compaction continues the path through Arbor's");
  } finally {
    model.server.closeAllConnections();
    await model.close();
  }
});
