// The extension's own logic, loaded by Pi's loader (jiti with Pi's aliases) exactly as Pi loads
// it, with Pi's real compaction code as the reference and a fake Arbor on a Unix socket.
//
//   node --test pi-extension/test/
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import * as H from "./harness.mjs";

const FIXTURES = path.join(H.REPO, "src-tauri/crates/session-engine/tests/fixtures/real-pi");
let X; // the extension module
let PiCompaction;
let SM;

before(async () => {
  X = await H.loadExtensionModule();
  PiCompaction = await H.piImport("core/compaction/compaction.js");
  SM = await H.piImport("core/session-manager.js");
});
after(() => H.cleanupAll());

function branchOf(file) {
  const sm = SM.SessionManager.inMemory("/");
  sm.setSessionFile(file);
  return sm.getBranch();
}

const plain = (prep) => ({ ...prep, fileOps: { read: [...prep.fileOps.read].sort(), written: [...prep.fileOps.written].sort(), edited: [...prep.fileOps.edited].sort() } });

describe("the socket path", () => {
  test("ARBOR_REVIEW_SOCKET, then XDG_RUNTIME_DIR, then /tmp/arbor-<uid>", () => {
    assert.equal(X.socketPath({ ARBOR_REVIEW_SOCKET: "/x/y.sock", XDG_RUNTIME_DIR: "/run/user/5" }, 5), "/x/y.sock");
    assert.equal(X.socketPath({ XDG_RUNTIME_DIR: "/run/user/5" }, 5), "/run/user/5/arbor/review.sock");
    assert.equal(X.socketPath({ XDG_RUNTIME_DIR: "relative" }, 5), "/tmp/arbor-5/review.sock");
    assert.equal(X.socketPath({}, 1000), "/tmp/arbor-1000/review.sock");
  });

  test("a folder of another user, or open to others, is not trusted", () => {
    const root = H.scratch();
    const sock = path.join(root, "arbor", "review.sock");
    assert.equal(X.checkSocketFolder(sock), "absent");
    fs.mkdirSync(path.dirname(sock), { mode: 0o700 });
    assert.equal(X.checkSocketFolder(sock), "");
    fs.chmodSync(path.dirname(sock), 0o755);
    assert.match(X.checkSocketFolder(sock), /open to other users \(mode 755/);
    fs.chmodSync(path.dirname(sock), 0o700);
    if (process.getuid() === 0) {
      fs.chownSync(path.dirname(sock), 65534, 65534);
      assert.match(X.checkSocketFolder(sock), /belongs to uid 65534, not to you \(uid 0\)/);
    }
  });
});

describe("a preparation for another cut", () => {
  for (const name of ["print-autocompact", "rpc-manual", "rpc-branch"]) {
    test(`equals Pi's prepareCompaction wherever Pi cuts at a cut point (${name})`, () => {
      const branch = branchOf(path.join(FIXTURES, `${name}.jsonl`));
      let compared = 0;
      for (let end = 1; end <= branch.length; end++) {
        const entries = branch.slice(0, end);
        for (const keep of [0, 1, 200, 800, 2000, 3500, 8000, 1e9]) {
          const pi = PiCompaction.prepareCompaction(entries, { enabled: true, reserveTokens: 2000, keepRecentTokens: keep });
          if (!pi) continue;
          const cut = entries.find((e) => e.id === pi.firstKeptEntryId);
          if (!X.validCuts(entries).includes(entries.indexOf(cut))) continue;
          const ours = X.preparationForCut(entries, pi.firstKeptEntryId, pi);
          assert.deepEqual(plain(ours), plain(pi), `${name}: leaf ${entries[end - 1].id}, keep ${keep}`);
          compared++;
        }
      }
      assert.ok(compared > 20, `only ${compared} comparisons`);
    });
  }

  test("refuses tool results, other branches, the already summarized, unknown ids, with the nearest valid named", () => {
    const branch = branchOf(path.join(FIXTURES, "rpc-manual.jsonl"));
    const base = PiCompaction.prepareCompaction(branch, { enabled: true, reserveTokens: 2000, keepRecentTokens: 3500 });
    const valid = X.validCuts(branch);
    const toolResult = branch.findIndex((e, i) => i > valid[0] && e.type === "message" && e.message.role === "toolResult");
    assert.throws(() => X.preparationForCut(branch, branch[toolResult].id, base), (e) => e.code === "invalid-cut" && /is a tool result, not a valid cut point; nearest valid: \w+, \w+/.test(e.message));
    assert.throws(() => X.preparationForCut(branch, "nope1234", base), /not on the branch being compacted; nearest valid: /);
    // rpc-manual has a compaction: entries before its kept entry are summarized already.
    const prev = branch.findLast((e) => e.type === "compaction");
    const keptAt = branch.findIndex((e) => e.id === prev.firstKeptEntryId);
    const early = branch.findIndex((e, i) => i < keptAt && e.type === "message" && e.message.role === "user");
    assert.throws(() => X.preparationForCut(branch, branch[early].id, base), /before the previous compaction's kept entry/);
    // The first message of the span has nothing before it to summarize.
    const fresh = branchOf(path.join(FIXTURES, "rpc-branch.jsonl"));
    const firstUser = fresh.find((e) => e.type === "message" && e.message.role === "user");
    assert.throws(() => X.preparationForCut(fresh, firstUser.id, base), /leaves nothing to summarize/);
    for (const i of valid) assert.equal(X.preparationForCut(branch, branch[i].id, base).firstKeptEntryId, branch[i].id);
  });
});

describe("reading Arbor's lines", () => {
  test("a greeting of another protocol or program is refused by name", () => {
    assert.throws(() => X.readHello({ type: "hello", arbor: "review", protocol: 2 }), /Arbor speaks review protocol 2 and this extension speaks 1/);
    assert.throws(() => X.readHello({ type: "hello", protocol: 1 }), /does not speak Arbor's review protocol/);
    assert.throws(() => X.readHello({ type: "error", code: "peer_refused", message: "uid 0 only" }), /Arbor refused: uid 0 only/);
    assert.deepEqual(X.readHello({ type: "hello", arbor: "review", protocol: 1, timeoutMs: 1500, policy: "watch", server: "s" }), { timeoutMs: 1500, policy: "watch", server: "s" });
  });

  test("answers are checked field by field", () => {
    const a = (x) => ({ type: "answer", protocol: 1, requestId: "r", round: 1, ...x });
    assert.deepEqual(X.readAnswer(a({ decision: "edit", summary: "S" }), "r", "compaction"), { decision: "edit", summary: "S", note: undefined });
    for (const [bad, why] of [
      [a({ decision: "edit", summary: "  " }), /empty/],
      [a({ decision: "edit" }), /empty or not text/],
      [a({ decision: "move_cut" }), /names no entry/],
      [a({ decision: "explode" }), /unknown decision/],
      [a({ decision: "accept", requestId: "other" }), /another request/],
      [a({ decision: "accept", round: 2 }), /another request/],
      [{ type: "answer", protocol: 2, requestId: "r", decision: "accept" }, /not a protocol 1 answer/],
    ])
      assert.throws(() => X.readAnswer(bad, "r", "compaction"), why);
    assert.throws(() => X.readAnswer(a({ decision: "move_cut", firstKeptEntryId: "x" }), "r", "branch_summary"), /branch summary, which has none/);
  });
});

// ------------------------------------------------------------------------------------------
// The handlers, with fake Pi parts and a fake Arbor
// ------------------------------------------------------------------------------------------

function fakePi() {
  const handlers = {};
  return { handlers, on: (name, fn) => (handlers[name] = fn), getThinkingLevel: () => "off" };
}

function fakeCtx({ hasUI = false, stale = false } = {}) {
  const notes = [];
  const ctx = {
    notes,
    ui: { notify: (m, level) => notes.push({ m, level }) },
    model: { provider: "loopback", id: "m" },
    modelRegistry: { getApiKeyAndHeaders: async () => ({ ok: true, apiKey: "k", headers: undefined }) },
    cwd: "/",
    sessionManager: { getSessionFile: () => "/s.jsonl", getSessionId: () => "sid", getCwd: () => "/", getLeafId: () => "leaf" },
  };
  Object.defineProperty(ctx, "hasUI", {
    get() {
      if (stale) throw new Error("This extension ctx is stale");
      return hasUI;
    },
  });
  return ctx;
}

/** An event like Pi's for the last branch of rpc-manual (Pi's preparation, branch entries). */
function compactEvent(signal = new AbortController().signal) {
  const branch = branchOf(path.join(FIXTURES, "rpc-manual.jsonl"));
  const preparation = PiCompaction.prepareCompaction(branch, { enabled: true, reserveTokens: 2000, keepRecentTokens: 3500 });
  return { type: "session_before_compact", preparation, branchEntries: branch, customInstructions: undefined, signal };
}

async function withExtension(env, run, { compact } = {}) {
  const drafts = [];
  const deps = {
    ...X.defaultDeps,
    env,
    compact: compact ?? (async (prep) => (drafts.push(prep), { summary: `draft for ${prep.firstKeptEntryId}`, firstKeptEntryId: prep.firstKeptEntryId, tokensBefore: prep.tokensBefore, details: { readFiles: [], modifiedFiles: [] } })),
    generateBranchSummary: async (entries) => ({ summary: `branch draft of ${entries.length}`, readFiles: ["a"], modifiedFiles: [] }),
    branchReserveTokens: () => 2000,
  };
  const pi = fakePi();
  X.createArborExtension(deps)(pi);
  const stderr = [];
  const orig = process.stderr.write.bind(process.stderr);
  process.stderr.write = (s, ...rest) => (String(s).startsWith("arbor: ") ? (stderr.push(String(s)), true) : orig(s, ...rest));
  try {
    return await run({ pi, drafts, stderr });
  } finally {
    process.stderr.write = orig;
  }
}

describe("session_before_compact", () => {
  let root;
  let sock;
  before(() => {
    root = H.scratch();
  });
  const fresh = () => {
    const dir = fs.mkdtempSync(path.join(root, "s-"));
    fs.chmodSync(dir, 0o700);
    sock = H.socketIn(dir);
    return { ARBOR_REVIEW_SOCKET: sock };
  };

  test("Arbor not running: undefined at once, nothing said (no folder, no socket, a stale socket file)", async () => {
    for (const setup of ["no-folder", "no-socket", "stale"]) {
      const env = fresh();
      if (setup === "no-folder") fs.rmSync(path.dirname(sock), { recursive: true });
      if (setup === "stale") {
        H.leaveStaleSocket(sock);
        assert.ok(fs.existsSync(sock));
      }
      await withExtension(env, async ({ pi, drafts, stderr }) => {
        const t0 = performance.now();
        const out = await pi.handlers.session_before_compact(compactEvent(), fakeCtx());
        const ms = performance.now() - t0;
        assert.equal(out, undefined, setup);
        assert.equal(drafts.length, 0, "no draft: Pi drafts by itself");
        assert.deepEqual(stderr, []);
        assert.ok(ms < 200, `${setup}: ${ms} ms`);
      });
    }
  });

  test("accept, edit, cancel, let Pi decide", async () => {
    for (const [decision, extra, expect] of [
      ["accept", {}, (o, d) => assert.deepEqual(o, { compaction: d })],
      ["edit", { summary: "EDITED" }, (o, d) => assert.deepEqual(o, { compaction: { ...d, summary: "EDITED" } })],
      ["cancel", {}, (o) => assert.deepEqual(o, { cancel: true })],
      ["pi_decides", {}, (o) => assert.equal(o, undefined)],
    ]) {
      const env = fresh();
      const arbor = await H.fakeArbor(sock, (req) => H.answer(req, decision, extra));
      await withExtension(env, async ({ pi, drafts }) => {
        const ev = compactEvent();
        const out = await pi.handlers.session_before_compact(ev, fakeCtx());
        assert.equal(drafts.length, 1);
        assert.equal(drafts[0], ev.preparation, "Pi's own preparation is drafted");
        const req = arbor.requests[0];
        assert.equal(req.kind, "compaction");
        assert.equal(req.compaction.firstKeptEntryId, ev.preparation.firstKeptEntryId);
        assert.equal(req.compaction.messagesToSummarize, ev.preparation.messagesToSummarize.length);
        assert.equal(req.session.file, "/s.jsonl");
        expect(out, { summary: `draft for ${ev.preparation.firstKeptEntryId}`, firstKeptEntryId: ev.preparation.firstKeptEntryId, tokensBefore: ev.preparation.tokensBefore, details: { readFiles: [], modifiedFiles: [] } });
      });
      await arbor.close();
    }
  });

  test("a moved cut is drafted again for the new span and reviewed again", async () => {
    const env = fresh();
    const ev = compactEvent();
    const valid = X.validCuts(ev.branchEntries);
    const target = ev.branchEntries[valid[1]].id;
    const arbor = await H.fakeArbor(sock, (req) => (req.round === 1 ? H.answer(req, "move_cut", { firstKeptEntryId: target }) : H.answer(req, "accept")));
    await withExtension(env, async ({ pi, drafts }) => {
      const out = await pi.handlers.session_before_compact(ev, fakeCtx());
      assert.equal(drafts.length, 2);
      assert.deepEqual(plain(drafts[1]), plain(X.preparationForCut(ev.branchEntries, target, ev.preparation)));
      assert.equal(out.compaction.firstKeptEntryId, target);
      assert.equal(out.compaction.summary, `draft for ${target}`);
      assert.equal(arbor.requests[1].round, 2);
      assert.equal(arbor.requests[1].compaction.movedFrom, ev.preparation.firstKeptEntryId);
      assert.equal(arbor.requests[1].requestId, arbor.requests[0].requestId);
    });
    await arbor.close();
  });

  test("an invalid moved cut keeps Pi's draft and says why", async () => {
    const env = fresh();
    const ev = compactEvent();
    const tool = ev.branchEntries.findLast((e) => e.type === "message" && e.message.role === "toolResult");
    const arbor = await H.fakeArbor(sock, (req) => H.answer(req, "move_cut", { firstKeptEntryId: tool.id }));
    await withExtension(env, async ({ pi, drafts, stderr }) => {
      const out = await pi.handlers.session_before_compact(ev, fakeCtx());
      assert.equal(drafts.length, 1);
      assert.equal(out.compaction.firstKeptEntryId, ev.preparation.firstKeptEntryId);
      assert.match(stderr.join(""), /is a tool result, not a valid cut point; nearest valid: .*; the draft at \w+ is used/);
    });
    await arbor.close();
  });

  test("malformed, oversized, error and silent answers, a closed connection: Pi's draft and one line", async () => {
    const cases = [
      ["malformed", () => "this is not json\n", /Arbor's answer is not JSON; Pi's own draft is used/],
      ["array", () => "[1,2]\n", /not a JSON object/],
      ["oversized", (req, c) => (c.write(Buffer.alloc(X.MAX_LINE_BYTES + 10, 0x61)), undefined), /larger than 4194304 bytes/],
      ["error", () => ({ type: "error", protocol: 1, code: "bad_request", message: "nope" }), /Arbor refused the request: nope/],
      ["closed", (req, c) => (c.end(), undefined), /closed the connection without answering/],
      ["silent", () => undefined, /did not answer within 300 ms/],
    ];
    for (const [name, respond, why] of cases) {
      const env = { ...fresh(), ARBOR_REVIEW_TIMEOUT_MS: "300" };
      const arbor = await H.fakeArbor(sock, respond);
      await withExtension(env, async ({ pi, stderr }) => {
        const ctx = fakeCtx({ hasUI: name === "silent" });
        const ev = compactEvent();
        const out = await pi.handlers.session_before_compact(ev, ctx);
        assert.equal(out.compaction.summary, `draft for ${ev.preparation.firstKeptEntryId}`, name);
        const said = name === "silent" ? ctx.notes.map((n) => n.m).join("\n") : stderr.join("");
        assert.match(said, why, name);
        assert.equal(said.trim().split("\n").length, 1, `${name}: one line`);
      });
      await arbor.close();
    }
  });

  test("another protocol in the greeting: Pi goes on by itself, with the reason", async () => {
    const env = fresh();
    const arbor = await H.fakeArbor(sock, () => undefined, { hello: { type: "hello", arbor: "review", protocol: 2, timeoutMs: 1000 } });
    await withExtension(env, async ({ pi, drafts, stderr }) => {
      assert.equal(await pi.handlers.session_before_compact(compactEvent(), fakeCtx()), undefined);
      assert.equal(drafts.length, 0);
      assert.match(stderr.join(""), /Arbor speaks review protocol 2 and this extension speaks 1/);
    });
    await arbor.close();
  });

  test("Pi aborting while Arbor reviews: Pi's draft at once, and the connection is closed", async () => {
    const env = fresh();
    let closed;
    const gone = new Promise((r) => (closed = r));
    const arbor = await H.fakeArbor(sock, (req, c) => (c.on("close", closed), undefined));
    await withExtension(env, async ({ pi, stderr }) => {
      const ac = new AbortController();
      const ev = compactEvent(ac.signal);
      setTimeout(() => ac.abort(), 100);
      const t0 = performance.now();
      const out = await pi.handlers.session_before_compact(ev, fakeCtx());
      assert.ok(performance.now() - t0 < 1000);
      assert.equal(out.compaction.firstKeptEntryId, ev.preparation.firstKeptEntryId);
      assert.match(stderr.join(""), /Pi cancelled while Arbor was reviewing the compaction/);
      await gone;
    });
    await arbor.close();
  });

  test("a context Pi already disposed: Pi goes on by itself", async () => {
    const env = fresh();
    const arbor = await H.fakeArbor(sock, (req) => H.answer(req, "cancel"));
    await withExtension(env, async ({ pi, drafts }) => {
      assert.equal(await pi.handlers.session_before_compact(compactEvent(), fakeCtx({ stale: true })), undefined);
      assert.equal(drafts.length, 0);
    });
    await arbor.close();
  });

  test("a failing draft is left to Pi (it drafts again and reports its own error)", async () => {
    const env = fresh();
    const arbor = await H.fakeArbor(sock, (req) => H.answer(req, "accept"));
    await withExtension(
      env,
      async ({ pi, stderr }) => {
        assert.equal(await pi.handlers.session_before_compact(compactEvent(), fakeCtx()), undefined);
        assert.match(stderr.join(""), /Pi's draft failed before review \(model down\)/);
        assert.equal(arbor.requests.length, 0);
      },
      { compact: async () => Promise.reject(new Error("model down")) },
    );
    await arbor.close();
  });
});

describe("session_before_tree", () => {
  const treeEvent = (userWantsSummary = true) => ({
    type: "session_before_tree",
    preparation: { targetId: "t", oldLeafId: "o", commonAncestorId: "c", entriesToSummarize: [{ type: "message", id: "x" }], userWantsSummary },
    signal: new AbortController().signal,
  });

  test("accept, edit, cancel; no summary asked: no connection", async () => {
    const root = H.scratch();
    const sock = H.socketIn(root);
    for (const [decision, extra, expect] of [
      ["accept", {}, (o) => assert.deepEqual(o, { summary: { summary: "branch draft of 1", details: { readFiles: ["a"], modifiedFiles: [] } } })],
      ["edit", { summary: "E" }, (o) => assert.deepEqual(o, { summary: { summary: "E", details: { readFiles: ["a"], modifiedFiles: [] } } })],
      ["cancel", {}, (o) => assert.deepEqual(o, { cancel: true })],
      ["pi_decides", {}, (o) => assert.equal(o, undefined)],
    ]) {
      const arbor = await H.fakeArbor(sock, (req) => H.answer(req, decision, extra));
      await withExtension({ ARBOR_REVIEW_SOCKET: sock }, async ({ pi }) => {
        expect(await pi.handlers.session_before_tree(treeEvent(), fakeCtx()));
        assert.equal(arbor.requests[0].kind, "branch_summary");
        assert.equal(arbor.requests[0].branch.targetId, "t");
        assert.equal(await pi.handlers.session_before_tree(treeEvent(false), fakeCtx()), undefined);
        assert.equal(arbor.requests.length, 1);
      });
      await arbor.close();
      fs.rmSync(sock, { force: true });
    }
  });
});
