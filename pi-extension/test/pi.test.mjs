// The real `pi` program with Arbor's extension (`-e pi-extension/arbor.ts`), the scripted model on
// 127.0.0.1 (its reported usage makes Pi compact by itself), and the real `arbor-cli pi serve` as
// the reviewer (or a fake Arbor in this process, for answers Arbor never sends). Every file Pi
// writes is loaded by Arbor's engine (`arbor-cli inspect`) and by Pi, with the same context.
//
//   cargo build -p arbor-cli && node --test pi-extension/test/
//   (ARBOR_CLI=path/to/arbor-cli to pick another build)
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import * as H from "./harness.mjs";

const THIRD = `Third: please look at this long paste. ${H.filler(2500, "ledger")}`;
const FIGURES = [];

let root;
let model;
let agent;
let cwd;
let base; // a two-turn session Pi wrote; each case compacts its own copy
let baseEntries;

before(async () => {
  assert.ok(H.piInstalled(), "Pi 0.73.1 is not installed in tests/pi: run scripts/setup.sh");
  assert.ok(H.arborCli(), "arbor-cli is not built: run `cargo build -p arbor-cli` (or set ARBOR_CLI)");
  root = H.scratch("arbor-pi-");
  model = await H.startModel(path.join(root, "model.jsonl"));
  agent = path.join(root, "agent");
  H.writeAgentDir(agent, model.port, { compaction: { enabled: false } });
  cwd = path.join(root, "proj");
  fs.mkdirSync(cwd);
  const env = H.piEnv(agent);
  for (const args of [["-p", "First question: what is in this project?"], ["-p", "--continue", "Second question: and how do I run it?"]]) {
    const r = await H.runPi(args, { cwd, env });
    assert.equal(r.code, 0, r.stderr);
  }
  base = H.sessionFile(agent, cwd);
  baseEntries = H.readEntries(base);
  H.setCompaction(agent, { enabled: true });
});

after(async () => {
  H.killAll();
  await model?.close();
  H.cleanupAll();
  if (FIGURES.length) {
    console.log("\n# extension overhead in Pi's compaction (ms), from ARBOR_REVIEW_TRACE:");
    for (const f of FIGURES) console.log(`#   ${f}`);
  }
});

let n = 0;
function newCase() {
  const dir = path.join(root, `case-${++n}`);
  fs.mkdirSync(dir, { mode: 0o700 });
  const file = path.join(dir, "session.jsonl");
  fs.copyFileSync(base, file);
  return { dir, file, sock: H.socketIn(dir), trace: path.join(dir, "trace.jsonl") };
}

const users = () => baseEntries.filter((e) => e.type === "message" && e.message.role === "user");
const assistants = () => baseEntries.filter((e) => e.type === "message" && e.message.role === "assistant");

function caseEnv(c, extra = {}) {
  return H.piEnv(agent, { ARBOR_REVIEW_SOCKET: c.sock, ARBOR_REVIEW_TRACE: c.trace, ...extra });
}

/** Pi's third prompt, which ends above the threshold: Pi compacts automatically. */
async function compactRun(c, extra = {}, opts = {}) {
  const before = model.requests().length;
  const r = await H.runPi(["-p", "--session", c.file, THIRD], { cwd, env: caseEnv(c, extra), ...opts });
  assert.equal(r.code, 0, r.stderr);
  const requests = model.requests().slice(before);
  return { ...r, requests, summaries: requests.filter((q) => q.kind !== "agent"), arborLines: r.stderr.split("\n").filter((l) => l.startsWith("arbor: ")) };
}

function traces(c) {
  return fs.existsSync(c.trace) ? H.readEntries(c.trace) : [];
}

/** Arbor's engine loads the file without a diagnostic and builds the context Pi builds. */
async function sameInArborAndPi(file) {
  const a = H.arborView(file);
  assert.deepEqual(a.diagnostics, [], `${file}: Arbor reports ${JSON.stringify(a.diagnostics)}`);
  const p = await H.piView(file);
  assert.deepEqual({ messages: a.messages, tokens: a.tokens, leafId: a.leafId }, p);
  return p;
}

const lastCompaction = (file) => H.compactions(file).at(-1);
const userIds = (file) => H.readEntries(file).filter((e) => e.type === "message" && e.message.role === "user").map((e) => e.id);

/** What the scripted model answered to a summary request (its answers are deterministic). */
async function modelText(request) {
  const { answer } = await import(new URL("../../tests/pi/record/loopback-model.mjs", import.meta.url).href);
  return answer(request.body).text;
}

function writeScript(dir, name, body) {
  const f = path.join(dir, name);
  fs.writeFileSync(f, body);
  return f;
}

/** A decide command (node script): `decide(request)` returns the decision object. */
function decider(dir, source) {
  const f = writeScript(dir, "decide.mjs", `let s = ""; process.stdin.on("data", (d) => (s += d)); process.stdin.on("end", async () => { const req = JSON.parse(s); const decide = ${source}; process.stdout.write(JSON.stringify(await decide(req))); });\n`);
  return `${JSON.stringify(process.execPath)} ${JSON.stringify(f)}`;
}

describe("Pi with Arbor's extension", () => {
  test("loads: pi starts with -e arbor.ts in print mode and answers, with no Arbor running", async () => {
    const c = newCase();
    const r = await H.runPi(["-p", "--no-session", "Just say hello."], { cwd, env: caseEnv(c) });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, "");
    assert.match(r.stdout, /no scripted answer/);
  });

  test("installed by arbor-cli, Pi discovers it and Arbor reviews", async () => {
    const c = newCase();
    const agent2 = path.join(c.dir, "agent");
    fs.cpSync(agent, agent2, { recursive: true, filter: (src) => !src.includes(`${path.sep}sessions`) });
    // install starts Pi once to check that it loads the file: this Pi, not whatever is on PATH.
    const env = { ...caseEnv(c), PI_CODING_AGENT_DIR: agent2, ARBOR_PI: `${JSON.stringify(process.execPath)} ${JSON.stringify(H.PI_CLI)}` };
    const inst = spawnSync(H.arborCli(), ["pi", "install-extension"], { env, encoding: "utf8" });
    assert.equal(inst.status, 0, inst.stderr);
    assert.match(inst.stdout, /checked: Pi 0\.73\.1 starts with it \(\d+ ms/);
    assert.equal(fs.readFileSync(path.join(agent2, "extensions/arbor.ts"), "utf8"), fs.readFileSync(H.EXTENSION, "utf8"));
    const serve = await H.startServe(c.sock);
    const st = JSON.parse(spawnSync(H.arborCli(), ["pi", "status", "--json"], { env, encoding: "utf8" }).stdout);
    assert.equal(st.locations[0].current, true);
    assert.equal(st.reviewer.listening, true);
    const r = await H.runPi(["-p", "--session", c.file, THIRD], { cwd, env, extension: false, discover: true });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(serve.reviews().length, 1);
    assert.equal(lastCompaction(c.file).fromHook, true);
    await serve.stop();
    assert.equal(spawnSync(H.arborCli(), ["pi", "uninstall-extension"], { env }).status, 0);
    assert.ok(!fs.existsSync(path.join(agent2, "extensions/arbor.ts")));
  });

  test("Arbor not running: Pi compacts exactly as before (its own draft, fromHook false, one summary call)", async () => {
    const c = newCase();
    const r = await compactRun(c);
    const comp = lastCompaction(c.file);
    assert.equal(comp.fromHook, false);
    assert.equal(comp.firstKeptEntryId, userIds(c.file)[2], "Pi's own cut: the third prompt");
    assert.equal(r.summaries.length, 1);
    assert.deepEqual(r.arborLines, []);
    const t = traces(c);
    assert.equal(t.length, 1);
    assert.equal(t[0].outcome, "not-running");
    FIGURES.push(`not running: handler ${t[0].totalMs.toFixed(2)} (connect attempt ${t[0].connectMs.toFixed(2)})`);
    await sameInArborAndPi(c.file);
  });

  test("accept: Pi writes its own draft, fromHook true, with no second summary call", async () => {
    const c = newCase();
    const serve = await H.startServe(c.sock);
    const r = await compactRun(c);
    const comp = lastCompaction(c.file);
    assert.equal(comp.fromHook, true);
    assert.equal(r.summaries.length, 1);
    assert.equal(comp.summary, await modelText(r.summaries[0]), "the draft Pi's compact() made, unchanged");
    assert.equal(comp.firstKeptEntryId, userIds(c.file)[2]);
    const [rev] = serve.reviews();
    assert.equal(rev.action, "accept");
    assert.equal(rev.kind, "compaction");
    assert.equal(rev.session, c.file);
    assert.equal(rev.firstKeptEntryId, comp.firstKeptEntryId);
    assert.equal(rev.tokensBefore, comp.tokensBefore);
    // The branch Pi compacted: every entry but the header and the compaction itself.
    assert.deepEqual(rev.entries, { branch: H.readEntries(c.file).length - 2, toSummarize: 4, turnPrefix: 0 });
    assert.ok(typeof rev.ms === "number" && typeof rev.time === "string");
    const t = traces(c)[0];
    FIGURES.push(`headless accept: handler minus Pi's summary call ${(t.totalMs - t.draftMs).toFixed(2)} (review round trip ${t.reviewMs.toFixed(2)})`);
    await serve.stop();
    await sameInArborAndPi(c.file);
  });

  test("watch: accepted at once and logged", async () => {
    const c = newCase();
    const serve = await H.startServe(c.sock, ["--policy", "watch"]);
    await compactRun(c);
    assert.equal(serve.reviews()[0].action, "accept");
    assert.equal(lastCompaction(c.file).fromHook, true);
    const t = traces(c)[0];
    FIGURES.push(`watch: handler minus Pi's summary call ${(t.totalMs - t.draftMs).toFixed(2)}`);
    await serve.stop();
    await sameInArborAndPi(c.file);
  });

  test("edit: Pi writes the edited summary (fromHook true) and its next request carries it", async () => {
    const c = newCase();
    const serve = await H.startServe(c.sock, ["--edit-command", "cat; printf '\\n\\nReviewed in Arbor: keep integer cents.\\n'"]);
    const r = await compactRun(c);
    const comp = lastCompaction(c.file);
    assert.equal(comp.fromHook, true);
    assert.ok(comp.summary.endsWith("\n\nReviewed in Arbor: keep integer cents."), comp.summary.slice(-200));
    assert.equal(r.summaries.length, 1);
    assert.equal(serve.reviews()[0].action, "edit");
    await serve.stop();
    await sameInArborAndPi(c.file);
    // Pi's next request to the model starts from the edited summary.
    const before = model.requests().length;
    const next = await H.runPi(["-p", "--session", c.file, "Fourth: what next?"], { cwd, env: caseEnv(c) });
    assert.equal(next.code, 0, next.stderr);
    const agentReq = model.requests().slice(before).find((q) => q.kind === "agent");
    const first = agentReq.body.messages.find((m) => m.role === "user");
    const text = typeof first.content === "string" ? first.content : first.content.map((b) => b.text).join("");
    assert.ok(text.startsWith("The conversation history before this point was compacted into the following summary:"), text.slice(0, 120));
    assert.ok(text.includes("Reviewed in Arbor: keep integer cents.\n</summary>"), text.slice(-300));
    await sameInArborAndPi(c.file);
  });

  test("cut moved: drafted again for the new span, reviewed again, written at the chosen entry", async () => {
    const c = newCase();
    const target = users()[1].id; // keep the second turn too
    const cmd = decider(c.dir, `(req) => (req.round === 1 ? { decision: "move_cut", firstKeptEntryId: ${JSON.stringify(target)} } : { decision: "accept" })`);
    const serve = await H.startServe(c.sock, ["--decide-command", cmd]);
    const r = await compactRun(c);
    const comp = lastCompaction(c.file);
    assert.equal(comp.firstKeptEntryId, target);
    assert.equal(comp.fromHook, true);
    // Two drafts by Pi's own compact(): for Pi's cut, then for the moved one (turn 1 only).
    assert.equal(r.summaries.length, 2);
    const conv = JSON.stringify(r.summaries[1].body.messages);
    assert.ok(conv.includes("First question") && !conv.includes("Second question"), "the second draft summarizes the first turn only");
    const revs = serve.reviews();
    assert.deepEqual(revs.map((x) => [x.round, x.action]), [[1, "move_cut"], [2, "accept"]]);
    assert.equal(revs[0].newFirstKeptEntryId, target);
    assert.equal(revs[1].firstKeptEntryId, target);
    await serve.stop();
    const p = await sameInArborAndPi(c.file);
    assert.deepEqual(p.messages.map((m) => m.role), ["compactionSummary", "user", "assistant", "user", "assistant"]);
  });

  test("cut moved to an invalid point: refused with the nearest valid named; Pi's draft is written", async () => {
    const c = newCase();
    const target = users()[0].id; // nothing before it to summarize
    const cmd = decider(c.dir, `() => ({ decision: "move_cut", firstKeptEntryId: ${JSON.stringify(target)} })`);
    const serve = await H.startServe(c.sock, ["--decide-command", cmd]);
    const r = await compactRun(c);
    const comp = lastCompaction(c.file);
    assert.notEqual(comp.firstKeptEntryId, target);
    assert.equal(comp.fromHook, true);
    assert.match(r.arborLines.join("\n"), new RegExp(`cannot keep from ${target}: nothing before it is left to summarize; nearest valid cut points: ${assistants()[0].id}; Pi's draft is used`));
    assert.equal(serve.reviews()[0].action, "accept");
    await serve.stop();
    await sameInArborAndPi(c.file);
  });

  test("cancel: an automatic compaction is not written", async () => {
    const c = newCase();
    const serve = await H.startServe(c.sock, ["--decide-command", decider(c.dir, `() => ({ decision: "cancel" })`)]);
    await compactRun(c);
    assert.equal(H.compactions(c.file).length, 0);
    assert.equal(serve.reviews()[0].action, "cancel");
    await serve.stop();
    await sameInArborAndPi(c.file);
  });

  test("cancel: a manual compaction in RPC mode fails with \"Compaction cancelled\"", async () => {
    const c = newCase();
    const serve = await H.startServe(c.sock, ["--decide-command", decider(c.dir, `() => ({ decision: "cancel", note: "not now" })`)]);
    const pi = new H.RpcPi(["--session", c.file], { cwd, env: caseEnv(c) });
    try {
      const res = await pi.request({ type: "compact", customInstructions: "Keep the paths" });
      assert.equal(res.success, false);
      assert.equal(res.error, "Compaction cancelled");
      assert.ok(pi.notifications().some((m) => m === "Arbor: not now"), JSON.stringify(pi.notifications()));
    } finally {
      await pi.close();
    }
    assert.equal(H.compactions(c.file).length, 0);
    const [rev] = serve.reviews();
    assert.equal(rev.action, "cancel");
    await serve.stop();
    await sameInArborAndPi(c.file);
  });

  test("let Pi decide: Pi drafts again by itself and writes fromHook false", async () => {
    const c = newCase();
    const serve = await H.startServe(c.sock, ["--decide-command", decider(c.dir, `() => ({ decision: "pi_decides" })`)]);
    const r = await compactRun(c);
    assert.equal(lastCompaction(c.file).fromHook, false);
    assert.equal(r.summaries.length, 2, "the extension's draft, then Pi's own");
    await serve.stop();
    await sameInArborAndPi(c.file);
  });

  test("the reviewer past the server's time limit: Pi's draft, and one line says so", async () => {
    const c = newCase();
    const serve = await H.startServe(c.sock, ["--timeout", "1", "--decide-command", "sleep 10"]);
    const t0 = performance.now();
    const r = await compactRun(c);
    assert.ok(performance.now() - t0 < 8000);
    assert.equal(lastCompaction(c.file).fromHook, true);
    assert.deepEqual(r.arborLines, ["arbor: no decision within 1 s; Pi's draft is used"]);
    assert.equal(serve.reviews()[0].timedOut, true);
    await serve.stop();
    await sameInArborAndPi(c.file);
  });

  test("Arbor silent past the extension's limit: Pi's draft, one line, and the server sees the client go", async () => {
    const c = newCase();
    const serve = await H.startServe(c.sock, ["--timeout", "60", "--decide-command", "sleep 10"]);
    const r = await compactRun(c, { ARBOR_REVIEW_TIMEOUT_MS: "700" });
    assert.equal(lastCompaction(c.file).fromHook, true);
    assert.deepEqual(r.arborLines, ["arbor: Arbor did not answer within 700 ms; Pi's own draft is used"]);
    await serve.waitFor((l) => l.event === "gone");
    await serve.stop();
    await sameInArborAndPi(c.file);
  });

  test("malformed and oversized answers: Pi's draft and one line", async () => {
    for (const [respond, why] of [
      [() => "{not json\n", /Arbor's answer is not JSON; Pi's own draft is used/],
      [(req, conn) => (conn.write(Buffer.alloc(5 * 1024 * 1024, 0x7b)), undefined), /Arbor's answer is larger than 4194304 bytes; Pi's own draft is used/],
    ]) {
      const c = newCase();
      const arbor = await H.fakeArbor(c.sock, respond);
      const r = await compactRun(c);
      await arbor.close();
      assert.equal(lastCompaction(c.file).fromHook, true);
      assert.equal(r.arborLines.length, 1);
      assert.match(r.arborLines[0], why);
      await sameInArborAndPi(c.file);
    }
  });

  test("a second Pi asks while the first waits: both are reviewed at the same time", async () => {
    const a = newCase();
    const b = newCase();
    b.sock = a.sock;
    const serve = await H.startServe(a.sock, ["--decide-command", `sleep 1.5; echo '{"decision":"edit","summary":"both reviewed"}'`]);
    await Promise.all([compactRun(a), compactRun(b)]);
    for (const c of [a, b]) assert.equal(lastCompaction(c.file).summary, "both reviewed");
    const revs = serve.reviews();
    assert.equal(revs.length, 2);
    const span = revs.map((x) => [Date.parse(x.time) - x.ms, Date.parse(x.time)]);
    assert.ok(span[0][0] < span[1][1] && span[1][0] < span[0][1], `the reviews overlap: ${JSON.stringify(span)}`);
    await serve.stop();
    for (const c of [a, b]) await sameInArborAndPi(c.file);
  });

  test("a socket file left by a killed server: Pi goes on at once; a new server replaces it", async () => {
    const c = newCase();
    const killed = await H.startServe(c.sock);
    await killed.stop("SIGKILL");
    assert.ok(fs.existsSync(c.sock), "SIGKILL leaves the socket file");
    const r = await compactRun(c);
    assert.equal(lastCompaction(c.file).fromHook, false);
    assert.deepEqual(r.arborLines, []);
    assert.equal(traces(c)[0].outcome, "not-running");
    const serve = await H.startServe(c.sock);
    const listening = serve.lines.find((l) => l.event === "listening");
    assert.match(listening.notes.join("\n"), /replaced .*review\.sock, left by a reviewer that is no longer running/);
    const c2 = newCase();
    c2.sock = c.sock;
    await compactRun(c2);
    assert.equal(serve.reviews().length, 1);
    assert.equal(lastCompaction(c2.file).fromHook, true);
    await serve.stop();
    assert.ok(!fs.existsSync(c.sock), "a stopped server removes its socket");
  });

  test("branch summary: Arbor edits what Pi writes when it navigates with a summary", async () => {
    const c = newCase();
    const serve = await H.startServe(c.sock, ["--edit-command", "cat; printf '\\n(checked in Arbor)'"]);
    const nav = path.join(H.REPO, "tests/pi/record/navigate-ext.ts");
    const pi = new H.RpcPi(["--session", c.file], { cwd, env: caseEnv(c), extra: [nav] });
    const target = assistants()[0].id;
    try {
      await pi.command(`/arbor-nav ${target} first-answer`);
    } finally {
      await pi.close();
    }
    const bs = H.readEntries(c.file).find((e) => e.type === "branch_summary");
    assert.ok(bs, "a branch_summary entry");
    assert.equal(bs.parentId, target);
    assert.equal(bs.fromHook, true);
    assert.ok(bs.summary.endsWith("\n(checked in Arbor)"), bs.summary.slice(-100));
    const [rev] = serve.reviews();
    assert.equal(rev.kind, "branch_summary");
    assert.equal(rev.action, "edit");
    assert.deepEqual(rev.entries, { toSummarize: 2 });
    await serve.stop();
    await sameInArborAndPi(c.file);
  });

  test("figures: extra time in Pi's compaction, three runs each", async () => {
    const med = (xs) => xs.sort((p, q) => p - q)[Math.floor(xs.length / 2)];
    const runs = { "not running": [], watch: [], accept: [] };
    for (let i = 0; i < 3; i++) {
      for (const kind of Object.keys(runs)) {
        const c = newCase();
        const serve = kind === "not running" ? null : await H.startServe(c.sock, kind === "watch" ? ["--policy", "watch"] : []);
        await compactRun(c);
        await serve?.stop();
        const t = traces(c)[0];
        runs[kind].push(kind === "not running" ? t.totalMs : t.totalMs - t.draftMs);
      }
    }
    for (const [k, xs] of Object.entries(runs)) FIGURES.push(`${k}: median ${med([...xs]).toFixed(2)} of ${xs.map((x) => x.toFixed(2)).join(", ")}`);
    assert.equal(runs.accept.length, 3);
  });
});
