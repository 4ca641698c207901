#!/usr/bin/env node
// Writes Arbor's bundled demo session, src-tauri/demo/demo-session.jsonl (embedded by
// src-tauri/src/commands/sessions.rs as DEMO_SESSION). Deterministic: no clock, no randomness;
// ids are hashes of a counter. No dependencies.
//
//   node scripts/gen-demo.mjs            # write the file
//   node scripts/gen-demo.mjs --check    # exit 1 when the committed file differs
//   DEMO_DEBUG=1 node scripts/gen-demo.mjs  # also print, per compaction, the keepRecentTokens
//                                           # range that cuts where the story expects
//
// The story: in a small Rust CLI, `throttle` (passes stdin lines through a token bucket), the
// user asks Pi (claude-sonnet-4-5) for per-client limits. Turn 1 adds `KeyedLimiter`; its first
// version takes tokens from a clone of the bucket, `cargo test` fails, the fix uses the entry
// API. Turn 2 first tries `clap` (abandoned: the user wants no dependencies; a branch summary
// records it) and then extends the hand-written parser. Pi compacts (a split turn). `--stats`,
// the `(no key)` bucket, a clippy fix and a commit follow; Pi compacts again. Idle-key eviction
// is first done with a sweeper thread (abandoned: a thread, a Mutex, a changed constructor; a
// second branch summary) and then lazily, without threads. After a benchmark the user compacts
// in Arbor with claude-haiku-4-5, whose summary drops one Key Decision of the previous summary
// and moves the memory item from In Progress to Done: what the summary workbench's drop alarm
// and diff show. Pi then finishes the README and tags v0.4.0.
//
// Every entry is in Pi 0.73.1's key order and shape. Each compaction's `firstKeptEntryId`,
// `tokensBefore` and file lists are what Pi computes at that point with the project's setting
// `compaction.keepRecentTokens` = KEEP_RECENT (computed below with Pi's rules, FORMAT.md §5-§7,
// and checked against Arbor's engine and Pi itself by tests/demo.rs).

import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ARGS_RS, BASE_TESTS, BUCKET_RS, CARGO_TOML, file, KEYED_RS, KEYED_RS_V1, KEYED_TESTS, LIB_RS, MAIN_RS, README, testRun } from "./gen-demo-project.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const OUT = path.join(ROOT, "src-tauri", "demo", "demo-session.jsonl");

/**
 * The project's `.pi/settings.json` in the story: {"compaction": {"keepRecentTokens": 600}}, so
 * that a session this small compacts with about one turn kept (Pi's default is 20000).
 */
export const KEEP_RECENT = 600;
/** Tokens of Pi's system prompt and tool definitions, as the provider counts them. */
const SYSTEM_TOKENS = 4870;
/** Provider tokens per estimated token (code tokenizes denser than chars / 4). */
const TOKEN_RATIO = 1.13;

// ---------------------------------------------------------------------------------------------
// Pi's rules, for the numbers the entries carry.

const textLen = (content) =>
  typeof content === "string" ? content.length : content.filter((b) => b.type === "text").reduce((n, b) => n + b.text.length, 0);

/** estimateTokens (FORMAT.md §5.3). */
function estimateTokens(m) {
  let chars = 0;
  switch (m.role) {
    case "user":
      chars = textLen(m.content);
      break;
    case "assistant":
      for (const b of m.content) {
        if (b.type === "text") chars += b.text.length;
        else if (b.type === "thinking") chars += b.thinking.length;
        else if (b.type === "toolCall") chars += b.name.length + JSON.stringify(b.arguments).length;
      }
      break;
    case "toolResult":
      chars = textLen(m.content);
      break;
    case "branchSummary":
    case "compactionSummary":
      chars = m.summary.length;
      break;
  }
  return Math.ceil(chars / 4);
}

const hasUsage = (m) => m.role === "assistant" && m.usage && m.stopReason !== "error" && m.stopReason !== "aborted";
const usageTotal = (u) => u.totalTokens || u.input + u.output + u.cacheRead + u.cacheWrite;

/** estimateContextTokens: the last usage plus the estimates after it. */
function estimateContext(msgs) {
  let last = -1;
  msgs.forEach((m, i) => hasUsage(m) && (last = i));
  if (last < 0) return msgs.reduce((n, m) => n + estimateTokens(m), 0);
  return usageTotal(msgs[last].usage) + msgs.slice(last + 1).reduce((n, m) => n + estimateTokens(m), 0);
}

// ---------------------------------------------------------------------------------------------
// The session being written.

const entries = [];
const byId = new Map();
let leaf = null;
let counter = 0;
const digest = (s) => crypto.createHash("sha256").update(`arbor-demo/${s}`).digest();

/** A fresh id; `key` names an entry added after the first version of the story, so that it does
 * not shift the ids (and tool call ids) of everything after it. */
function newId(key) {
  if (key) return digest(`entry-${key}`).toString("hex").slice(0, 8);
  for (;;) {
    const id = digest(`entry-${counter++}`).toString("hex").slice(0, 8);
    if (!byId.has(id)) return id;
  }
}

const B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const base62 = (buf, n) => [...buf].slice(0, n).map((b) => B62[b % 62]).join("");
const toolCallId = () => `toolu_01${base62(digest(`call-${counter++}`), 22)}`;
const responseId = () => `msg_01${base62(digest(`response-${counter++}`), 22)}`;
const signature = () => Buffer.concat([digest(`sig-a-${counter}`), digest(`sig-b-${counter}`), digest(`sig-c-${counter++}`), Buffer.from("EqQBCkgIBhABGAIiQA")]).toString("base64");

let clock = Date.parse("2025-03-01T09:00:00.000Z");
const iso = (ms) => new Date(ms).toISOString();
const wait = (seconds) => (clock += Math.round(seconds * 1000));

function append(entry) {
  if (byId.has(entry.id)) throw new Error(`duplicate id ${entry.id}`);
  entries.push(entry);
  byId.set(entry.id, entry);
  leaf = entry.id;
  return entry.id;
}

const pathTo = (id) => {
  const p = [];
  for (let e = byId.get(id); e; e = e.parentId === null ? undefined : byId.get(e.parentId)) p.unshift(e);
  return p;
};

/** The message an entry contributes to the context (FORMAT.md §5.1). */
function contextMessage(e) {
  if (e.type === "message") return e.message;
  if (e.type === "branch_summary" && e.summary) return { role: "branchSummary", summary: e.summary, fromId: e.fromId, timestamp: Date.parse(e.timestamp) };
  return null;
}

/** buildSessionContext at `leafId` (FORMAT.md §5.1). */
function contextAt(leafId) {
  const p = pathTo(leafId);
  let c = -1;
  p.forEach((e, i) => e.type === "compaction" && (c = i));
  if (c < 0) return p.map(contextMessage).filter(Boolean);
  const comp = p[c];
  const k = p.findIndex((e, i) => i < c && e.id === comp.firstKeptEntryId);
  const kept = k < 0 ? [] : p.slice(k, c);
  return [
    { role: "compactionSummary", summary: comp.summary, tokensBefore: comp.tokensBefore, timestamp: Date.parse(comp.timestamp) },
    ...[...kept, ...p.slice(c + 1)].map(contextMessage).filter(Boolean),
  ];
}

// --- entries --------------------------------------------------------------------------------

function modelChange(provider, modelId) {
  wait(0.4);
  return append({ type: "model_change", id: newId(), parentId: leaf, timestamp: iso(clock), provider, modelId });
}

function thinkingLevel(level, key) {
  wait(0.6);
  return append({ type: "thinking_level_change", id: newId(key), parentId: leaf, timestamp: iso(clock), thinkingLevel: level });
}

function sessionName(name) {
  wait(3.1);
  return append({ type: "session_info", id: newId(), parentId: leaf, timestamp: iso(clock), name });
}

function label(targetId, text) {
  wait(6.3);
  return append({ type: "label", id: newId(), parentId: leaf, timestamp: iso(clock), targetId, label: text });
}

function user(text, think = 25) {
  wait(think);
  const message = { role: "user", content: [{ type: "text", text }], timestamp: clock };
  return append({ type: "message", id: newId(), parentId: leaf, timestamp: iso(clock + 3), message });
}

// The model and its prices (pi-ai's catalog, $ per million tokens).
const MODEL = { api: "anthropic-messages", provider: "anthropic", id: "claude-sonnet-4-5", cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } };
/** The prompt tokens the previous request wrote to or read from the cache (its prefix). */
let cachedPrefix = 0;
let lastCalls = [];

/**
 * An assistant message answering the context at the current leaf. `calls` are [name, args]
 * pairs; their ids are kept for the tool results that follow.
 */
function assistant({ thinking, text, calls = [], seconds = 9 }) {
  const started = clock + 400;
  const content = [];
  if (thinking) content.push({ type: "thinking", thinking, thinkingSignature: signature() });
  if (text) content.push({ type: "text", text });
  lastCalls = calls.map(([name, args]) => ({ type: "toolCall", id: toolCallId(), name, arguments: args }));
  content.push(...lastCalls);
  const message = { role: "assistant", content, api: MODEL.api, provider: MODEL.provider, model: MODEL.id, usage: null, stopReason: calls.length ? "toolUse" : "stop", timestamp: started };
  // What the provider counts: the system prompt and tools, then the context at the leaf.
  const prompt = SYSTEM_TOKENS + Math.round(contextAt(leaf).reduce((n, m) => n + estimateTokens(m), 0) * TOKEN_RATIO);
  const input = 3 + (counter % 5);
  const cacheRead = Math.min(cachedPrefix, prompt - input);
  const cacheWrite = prompt - input - cacheRead;
  const output = Math.round(estimateTokens(message) * TOKEN_RATIO) + 11;
  cachedPrefix = prompt - input;
  const c = MODEL.cost;
  const cost = { input: (c.input / 1e6) * input, output: (c.output / 1e6) * output, cacheRead: (c.cacheRead / 1e6) * cacheRead, cacheWrite: (c.cacheWrite / 1e6) * cacheWrite, total: 0 };
  cost.total = cost.input + cost.output + cost.cacheRead + cost.cacheWrite;
  message.usage = { input, output, cacheRead, cacheWrite, totalTokens: input + output + cacheRead + cacheWrite, cost };
  message.responseId = responseId();
  wait(seconds);
  return append({ type: "message", id: newId(), parentId: leaf, timestamp: iso(clock), message });
}

/** The result of the previous assistant's `i`-th tool call. */
function result(i, text, { isError = false, details, seconds = 1.2 } = {}) {
  const call = lastCalls[i];
  wait(seconds);
  const message = { role: "toolResult", toolCallId: call.id, toolName: call.name, content: [{ type: "text", text }], details, isError, timestamp: clock };
  if (details === undefined) delete message.details;
  return append({ type: "message", id: newId(), parentId: leaf, timestamp: iso(clock + 2), message });
}

/** Pi's edit tool: `edits` applied to `file` (a { text } holder), with its result and diff. */
function editResult(i, file, startLine) {
  const call = lastCalls[i];
  const { path: p, edits } = call.arguments;
  const diff = [];
  for (const { oldText, newText } of edits) {
    if (!file.text.includes(oldText)) throw new Error(`edit of ${p}: oldText not found: ${oldText}`);
    const line = file.text.slice(0, file.text.indexOf(oldText)).split("\n").length;
    file.text = file.text.replace(oldText, newText);
    oldText.split("\n").forEach((l, k) => diff.push(`-${String(line + k).padStart(3)} ${l}`));
    newText.split("\n").forEach((l, k) => diff.push(`+${String(line + k).padStart(3)} ${l}`));
  }
  return result(i, `Successfully replaced ${edits.length} block(s) in ${p}.`, { details: { diff: diff.join("\n"), firstChangedLine: startLine } });
}

// --- what Pi computes when it compacts and summarizes branches --------------------------------

const isValidCut = (e) =>
  (e.type === "message" && ["user", "assistant", "bashExecution", "custom", "branchSummary", "compactionSummary"].includes(e.message.role)) ||
  e.type === "branch_summary" ||
  e.type === "custom_message";

/** FileOps of assistant tool calls (FORMAT.md §6.2). */
function addToolCalls(ops, m) {
  if (m.role !== "assistant") return;
  for (const b of m.content) {
    if (b.type !== "toolCall" || typeof b.arguments?.path !== "string" || !b.arguments.path) continue;
    if (b.name === "read") ops.read.add(b.arguments.path);
    else if (b.name === "write") ops.written.add(b.arguments.path);
    else if (b.name === "edit") ops.edited.add(b.arguments.path);
  }
}

function fileLists(ops) {
  const modified = new Set([...ops.edited, ...ops.written]);
  return { readFiles: [...ops.read].filter((f) => !modified.has(f)).sort(), modifiedFiles: [...modified].sort() };
}

function appendix({ readFiles, modifiedFiles }) {
  const parts = [];
  if (readFiles.length) parts.push(`<read-files>\n${readFiles.join("\n")}\n</read-files>`);
  if (modifiedFiles.length) parts.push(`<modified-files>\n${modifiedFiles.join("\n")}\n</modified-files>`);
  return parts.length ? `\n\n${parts.join("\n\n")}` : "";
}

/** prepareCompaction at the current leaf (FORMAT.md §6.1-6.2). */
export function prepareCompaction(keepRecent = KEEP_RECENT) {
  const p = pathTo(leaf);
  let prev = -1;
  p.forEach((e, i) => e.type === "compaction" && (prev = i));
  let start = 0;
  if (prev >= 0) {
    const k = p.findIndex((e) => e.id === p[prev].firstKeptEntryId);
    start = k >= 0 ? k : prev + 1;
  }
  const cuts = [];
  for (let i = start; i < p.length; i++) if (isValidCut(p[i])) cuts.push(i);
  let cut = cuts[0];
  let acc = 0;
  for (let i = p.length - 1; i >= start; i--) {
    if (p[i].type !== "message") continue;
    acc += estimateTokens(p[i].message);
    if (acc >= keepRecent) {
      const k = cuts.find((c) => c >= i);
      if (k !== undefined) cut = k;
      break;
    }
  }
  while (cut > start && p[cut - 1].type !== "message" && p[cut - 1].type !== "compaction") cut--;
  const isUser = p[cut].type === "message" && p[cut].message.role === "user";
  let turnStart = -1;
  if (!isUser) {
    for (let i = cut; i >= start; i--) {
      const e = p[i];
      if (e.type === "branch_summary" || e.type === "custom_message" || (e.type === "message" && ["user", "bashExecution"].includes(e.message.role))) {
        turnStart = i;
        break;
      }
    }
  }
  const split = !isUser && turnStart >= 0;
  const ops = { read: new Set(), written: new Set(), edited: new Set() };
  if (prev >= 0 && !p[prev].fromHook && p[prev].details) {
    for (const f of p[prev].details.readFiles ?? []) ops.read.add(f);
    for (const f of p[prev].details.modifiedFiles ?? []) ops.edited.add(f);
  }
  for (let i = start; i < cut; i++) if (p[i].type === "message") addToolCalls(ops, p[i].message);
  return { firstKept: p[cut], split, tokensBefore: estimateContext(contextAt(leaf)), files: fileLists(ops), keptMessages: p.slice(cut).map(contextMessage).filter(Boolean) };
}

const SPLIT = "\n\n---\n\n**Turn Context (split turn):**\n\n";

/**
 * A compaction at the current leaf. `expectFirstKept` is the entry the story was written to keep
 * from (the summaries describe what lies before it); `prefix` is the turn-prefix summary of a
 * split turn. `arbor` = written by Arbor with that summarizer model (Arbor's details extras).
 */
function compaction({ history, prefix, expectFirstKept, arbor }) {
  const prep = prepareCompaction();
  if (process.env.DEMO_DEBUG) {
    // The keepRecentTokens values that cut at the expected entry.
    const p = pathTo(leaf);
    const e = p.findIndex((x) => x.id === expectFirstKept);
    let prevValid = -1;
    for (let i = 0; i < e; i++) if (isValidCut(p[i])) prevValid = i;
    const sumFrom = (i) => p.slice(i).reduce((n, x) => n + (x.type === "message" ? estimateTokens(x.message) : 0), 0);
    let pmin = prevValid + 1;
    while (p[pmin].type !== "message") pmin++;
    console.error(`compaction at ${leaf}: keepRecent in (${sumFrom(e + 1)}, ${sumFrom(pmin)}] cuts at ${expectFirstKept}; tokensBefore ${prep.tokensBefore}`);
    for (let i = Math.max(0, e - 12); i < p.length; i++) if (isValidCut(p[i])) console.error(`   ${p[i].id} ${p[i].type === "message" ? p[i].message.role : p[i].type} from ${sumFrom(i)} ${JSON.stringify(contextMessage(p[i]))?.slice(0, 70)}`);
  }
  if (prep.firstKept.id !== expectFirstKept) {
    throw new Error(`compaction at ${leaf}: Pi cuts at ${prep.firstKept.id} (${JSON.stringify(contextMessage(prep.firstKept))?.slice(0, 80)}), the story expects ${expectFirstKept}`);
  }
  if (prep.split !== !!prefix) throw new Error(`compaction at ${leaf}: split turn is ${prep.split}, the story says ${!!prefix}`);
  const summary = (prefix ? history + SPLIT + prefix : history) + appendix(prep.files);
  let details = { readFiles: prep.files.readFiles, modifiedFiles: prep.files.modifiedFiles };
  if (arbor) {
    const tokensAfter = estimateTokens({ role: "compactionSummary", summary }) + prep.keptMessages.reduce((n, m) => n + estimateTokens(m), 0);
    details = { ...details, usage: arbor.usage, tokensAfter, summarizer: { provider: "anthropic", model: arbor.model } };
  }
  wait(arbor ? 41 : 23);
  cachedPrefix = SYSTEM_TOKENS;
  return append({ type: "compaction", id: newId(), parentId: leaf, timestamp: iso(clock), summary, firstKeptEntryId: prep.firstKept.id, tokensBefore: prep.tokensBefore, details, fromHook: false });
}

const BRANCH_PREAMBLE = "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n";

/**
 * Pi's navigation to the user message `targetId` with a summary (FORMAT.md §7): the leaf moves to
 * the target's parent and a branch_summary of the branch left is appended there.
 */
function navigateWithSummary(targetId, text) {
  const oldPath = pathTo(leaf);
  const target = byId.get(targetId);
  const onOld = new Set(oldPath.map((e) => e.id));
  let ancestor = null;
  for (const e of pathTo(targetId).reverse()) if (onOld.has(e.id)) { ancestor = e.id; break; }
  const left = oldPath.slice(oldPath.findIndex((e) => e.id === ancestor) + 1);
  // Everything fits the budget here; file ops come from the tool calls of the branch left.
  const ops = { read: new Set(), written: new Set(), edited: new Set() };
  for (const e of left) if (e.type === "message") addToolCalls(ops, e.message);
  leaf = target.parentId;
  wait(38);
  const files = fileLists(ops);
  return append({ type: "branch_summary", id: newId(), parentId: leaf, timestamp: iso(clock), fromId: leaf ?? "root", summary: BRANCH_PREAMBLE + text + appendix(files), details: files, fromHook: false });
}

// ---------------------------------------------------------------------------------------------
// The story.

const header = { type: "session", version: 3, id: "019550ef-1280-78f0-8b39-2fa79c3beef3", timestamp: iso(clock), cwd: "/home/dev/project" };

modelChange("anthropic", "claude-sonnet-4-5");
thinkingLevel("medium");
sessionName("throttle: per-client rate limits (Arbor demo)");

// Turn 1: KeyedLimiter, a failing test, the fix.
user(
  "I want per-client limits in throttle. Our access logs look like `2025-02-28T17:04:11Z 10.0.0.7 GET /api/items 200`, and one noisy client should not eat everybody's budget. Add a `KeyedLimiter` that keeps one token bucket per key.\n\nTwo rules for this whole session: never change the public API of `throttle::Limiter` (the ingest service links against it), and keep `cargo test` green after every step.",
  4,
);
assistant({
  thinking: "Per-key buckets. Before writing anything I need the public API of the crate (lib.rs) and how the bucket refills (bucket.rs), and a baseline test run.",
  text: "I'll start with the crate's public API.",
  calls: [["read", { path: "src/lib.rs" }]],
  seconds: 6,
});
result(0, LIB_RS.text);
assistant({ calls: [["read", { path: "src/bucket.rs" }]], seconds: 4 });
result(0, BUCKET_RS.text);
assistant({
  thinking: "TokenBucket is Clone, refills with as_secs_f64 and takes an explicit Instant, so a keyed limiter can reuse it as is. Baseline test run next.",
  calls: [["bash", { command: "cargo test 2>&1 | tail -n 15" }]],
  seconds: 5,
});
{
  const r = testRun(BASE_TESTS);
  result(0, ["     Running unittests src/main.rs (target/debug/deps/throttle-0b7f5e0c2d1a9e44)", "", `running ${BASE_TESTS.length} tests`, ...r.lines, "", r.summary, "", "   Doc-tests throttle", "", "running 0 tests", "", "test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s"].join("\n"), { seconds: 7.8 });
}
assistant({
  thinking:
    "Plan: src/keyed.rs with KeyedLimiter { rate, burst, buckets: HashMap<String, TokenBucket> }, same allow/allow_at shape as Limiter but with a key. lib.rs only gets `mod keyed;` and `pub use keyed::KeyedLimiter;` so Limiter's API is untouched. Tests: burst per key, independent refill, and one that pins Limiter's API.",
  text: "Baseline is green (9 tests). Plan: a new `src/keyed.rs` with `KeyedLimiter`, one `TokenBucket` per key in a `HashMap<String, TokenBucket>`. `Limiter` stays exactly as it is; `lib.rs` only gains an export.",
  calls: [["write", { path: "src/keyed.rs", content: KEYED_RS_V1 }]],
  seconds: 31,
});
result(0, `Successfully wrote ${KEYED_RS_V1.length} bytes to src/keyed.rs`);
assistant({
  calls: [["edit", { path: "src/lib.rs", edits: [{ oldText: "mod bucket;\n", newText: "mod bucket;\nmod keyed;\n" }, { oldText: "pub use bucket::TokenBucket;\n", newText: "pub use bucket::TokenBucket;\npub use keyed::KeyedLimiter;\n" }] }]],
  seconds: 6,
});
editResult(0, LIB_RS, 3);
assistant({ calls: [["bash", { command: "cargo test 2>&1 | tail -n 25" }]], seconds: 4 });
{
  const names = [...BASE_TESTS.slice(0, 4), ...KEYED_TESTS, ...BASE_TESTS.slice(4)];
  const r = testRun(names, { failed: ["keyed::tests::burst_is_per_key"] });
  result(
    0,
    [
      ...r.lines.slice(3),
      "",
      "failures:",
      "",
      "---- keyed::tests::burst_is_per_key stdout ----",
      "",
      "thread 'keyed::tests::burst_is_per_key' panicked at src/keyed.rs:45:9:",
      "the third request from 10.0.0.1 must be refused",
      "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace",
      "",
      "",
      "failures:",
      "    keyed::tests::burst_is_per_key",
      "",
      r.summary,
      "",
      "error: test failed, to rerun pass `--bin throttle`",
      "",
      "",
      "Command exited with code 101",
    ].join("\n"),
    { isError: true, seconds: 9.4 },
  );
}
const FIX_OLD = "        let mut bucket = self.buckets.get(key).cloned().unwrap_or_else(|| TokenBucket::new(self.rate, self.burst));\n        bucket.take(now, 1.0)";
const FIX_NEW = "        let (rate, burst) = (self.rate, self.burst);\n        self.buckets.entry(key.to_string()).or_insert_with(|| TokenBucket::new(rate, burst)).take(now, 1.0)";
assistant({
  thinking:
    "burst_is_per_key: the third request was allowed. allow_at clones the stored bucket (or makes a new one), takes from the clone and drops it: nothing is ever written back, so every key always looks full, and the HashMap stays empty. The entry API updates the stored bucket in place.",
  text: "My mistake: `allow_at` takes the token from a *clone* of the bucket and never stores it back, so every key always looks full (and `buckets` stays empty). The entry API updates the stored bucket in place.",
  calls: [["edit", { path: "src/keyed.rs", edits: [{ oldText: FIX_OLD, newText: FIX_NEW }] }]],
  seconds: 14,
});
editResult(0, KEYED_RS, 24);
assistant({ calls: [["bash", { command: "cargo test 2>&1 | tail -n 4" }]], seconds: 3 });
const turn1Green = result(0, `test keyed::tests::limiter_api_is_unchanged ... ok\n\ntest result: ok. 12 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n`, { seconds: 6.1 });
assistant({
  text: "Green again: 12 tests pass.\n\n- `src/keyed.rs`: `KeyedLimiter::new(rate, burst)`, `allow(key)`, `allow_at(key, now)`, `len()`; one `TokenBucket` per key, created full on first use.\n- `src/lib.rs`: only `mod keyed;` and `pub use keyed::KeyedLimiter;` were added; `Limiter` is untouched, and `limiter_api_is_unchanged` pins it.\n\nThe first version failed `burst_is_per_key` because it took tokens from a clone of the bucket; it now uses the entry API.",
  seconds: 8,
});
label(turn1Green, "keyed-green");

// Turn 2, first try: clap (abandoned).
const turn2Text =
  "Now wire it into the CLI: `--key-field N` picks the N-th whitespace-separated field of each line as the key (1-based). Lines without that field share one bucket.";
const turn2a = user(turn2Text, 95);
assistant({ text: "Let me see how the CLI reads its flags.", calls: [["read", { path: "src/main.rs" }]], seconds: 5 });
result(0, MAIN_RS.text);
assistant({ calls: [["read", { path: "src/args.rs" }]], seconds: 3 });
result(0, ARGS_RS.text);
const CLAP_ARGS = `//! Command-line flags (clap derive).

use clap::Parser;

#[derive(Debug, Clone, PartialEq, Parser)]
#[command(name = "throttle", version, about = "Pass lines from stdin through at a fixed rate")]
pub struct Opts {
    /// Lines per second.
    #[arg(long, value_parser = positive)]
    pub rate: f64,
    /// Lines allowed at once before the rate applies.
    #[arg(long, default_value_t = 1)]
    pub burst: u32,
    /// Print dropped lines to stderr.
    #[arg(long)]
    pub drop_log: bool,
    /// Rate-limit per key: the N-th whitespace-separated field (1-based).
    #[arg(long, value_name = "N")]
    pub key_field: Option<usize>,
}

fn positive(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 => Ok(v),
        _ => Err(format!("must be a number greater than 0: {s}")),
    }
}
`;
assistant({
  thinking: "The hand-rolled parser would need another arm, a usage string update and tests for every flag. clap derive gives --help, --version and validation; the code gets shorter.",
  text: "The hand-written parser in `src/args.rs` grows with every flag. I'll switch it to `clap` with derive, which gives `--help` and validation for free.",
  calls: [["edit", { path: "Cargo.toml", edits: [{ oldText: "[dependencies]\n", newText: '[dependencies]\nclap = { version = "4.5", features = ["derive"] }\n' }] }]],
  seconds: 12,
});
editResult(0, file(CARGO_TOML.text), 8);
assistant({ calls: [["write", { path: "src/args.rs", content: CLAP_ARGS }]], seconds: 15 });
result(0, `Successfully wrote ${CLAP_ARGS.length} bytes to src/args.rs`);
assistant({ calls: [["bash", { command: "cargo build 2>&1 | tail -n 8" }]], seconds: 3 });
result(
  0,
  "  Downloaded clap_derive v4.5.18\n  Downloaded clap_builder v4.5.23\n  Downloaded 11 crates (1.1 MB) in 0.62s\n   Compiling proc-macro2 v1.0.92\n   Compiling clap_derive v4.5.18\n   Compiling clap v4.5.23\n   Compiling throttle v0.3.1 (/home/dev/project)\n    Finished `dev` profile [unoptimized + debuginfo] target(s) in 14.37s",
  { seconds: 16.2 },
);
assistant({ text: "It builds: `clap` parses `--rate`, `--burst`, `--drop-log` and the new `--key-field`. Next I'll make `main.rs` use `KeyedLimiter` when `--key-field` is given.", seconds: 5 });
user("Hold on. That pulls clap and a dozen crates into a tool that had zero dependencies, just for one flag. I'd rather keep the hand-written parser.", 48);
assistant({
  text: "Understood. On this branch `Cargo.toml` has the `clap` dependency and `src/args.rs` is the clap version; I'll leave them. Extending the hand-written parser needs one more match arm and a field in `Opts`.",
  seconds: 6,
});
const bs1 = navigateWithSummary(
  turn2a,
  "## Goal\nWire `KeyedLimiter` into the CLI as `--key-field N` (the N-th whitespace-separated field of each line is the key, 1-based).\n\n## Constraints & Preferences\n- Never change the public API of `throttle::Limiter`.\n- Keep `cargo test` green after every step.\n- No new dependencies: the user rejected `clap` for a tool that had none.\n\n## Progress\n### Done\n- [x] Read `src/main.rs` and `src/args.rs` (hand-written parser for `--rate`, `--burst`, `--drop-log`)\n- [x] Added `clap = { version = \"4.5\", features = [\"derive\"] }` to `Cargo.toml` and rewrote `src/args.rs` with clap derive; `cargo build` passed\n\n### In Progress\n- [ ] (none)\n\n### Blocked\n- Abandoned: the user does not want the `clap` dependency\n\n## Key Decisions\n- **Keep the hand-written parser**: zero dependencies matter more than a generated `--help`\n\n## Next Steps\n1. Add `--key-field N` to the hand-written parser in `src/args.rs`\n2. Use `KeyedLimiter` in `src/main.rs` only when `--key-field` is given",
);

// Turn 2 again: the hand-written parser.
const turn2b = user(
  `${turn2Text} No new dependencies: extend the hand-written parser in \`src/args.rs\`. Without \`--key-field\` the output must stay byte-for-byte what it is today.`,
  70,
);
assistant({
  thinking: "The clap experiment from the other branch is still on disk (Cargo.toml, Cargo.lock, src/args.rs). Restore those three from git first; lib.rs and keyed.rs are this branch's work and stay.",
  text: "The `clap` change from the branch you left is still on disk. Restoring those files first.",
  calls: [["bash", { command: "git status --short && git checkout -- Cargo.toml Cargo.lock src/args.rs && git status --short" }]],
  seconds: 9,
});
result(0, " M Cargo.lock\n M Cargo.toml\n M src/args.rs\n M src/lib.rs\n?? src/keyed.rs\n M src/lib.rs\n?? src/keyed.rs");
const ARGS_EDITS = [
  { oldText: 'pub const USAGE: &str = "usage: throttle --rate N [--burst N] [--drop-log]";', newText: 'pub const USAGE: &str = "usage: throttle --rate N [--burst N] [--drop-log] [--key-field N]";' },
  { oldText: "    pub drop_log: bool,\n}", newText: "    pub drop_log: bool,\n    /// 1-based field of each line that selects the bucket (per-key limits).\n    pub key_field: Option<usize>,\n}" },
  { oldText: "    let mut opts = Opts { rate: 0.0, burst: 1, drop_log: false };", newText: "    let mut opts = Opts { rate: 0.0, burst: 1, drop_log: false, key_field: None };" },
  {
    oldText: '            "--drop-log" => opts.drop_log = true,',
    newText: '            "--drop-log" => opts.drop_log = true,\n            "--key-field" => match value(&mut it, "--key-field")? {\n                0 => return Err("--key-field counts from 1".into()),\n                n => opts.key_field = Some(n),\n            },',
  },
];
const c1Kept = assistant({
  thinking: "Parser: a key_field: Option<usize> in Opts, reject 0 because fields count from 1, update USAGE. Then main.rs: without the flag the exact old loop with Limiter, so output is byte-identical.",
  calls: [["edit", { path: "src/args.rs", edits: ARGS_EDITS }]],
  seconds: 17,
});
editResult(0, ARGS_RS, 3);
const MAIN_EDITS = [
  { oldText: "use throttle::Limiter;", newText: "use throttle::{KeyedLimiter, Limiter};" },
  {
    oldText: "    let mut limiter = Limiter::new(opts.rate, opts.burst);",
    newText:
      "    let mut one = Limiter::new(opts.rate, opts.burst);\n    let mut keyed = KeyedLimiter::new(opts.rate, opts.burst);\n    let mut allow = |line: &str| match opts.key_field {\n        None => one.allow(),\n        Some(n) => keyed.allow(line.split_whitespace().nth(n - 1).unwrap_or(\"\")),\n    };",
  },
  { oldText: "        if limiter.allow() {", newText: "        if allow(&line) {" },
];
assistant({ calls: [["edit", { path: "src/main.rs", edits: MAIN_EDITS }]], seconds: 14 });
editResult(0, MAIN_RS, 3);
assistant({
  text: "Trying it on four lines, two clients, burst 2:",
  calls: [["bash", { command: "cargo build -q && printf '%s\\n' 't1 10.0.0.1 GET /a' 't1 10.0.0.1 GET /b' 't1 10.0.0.2 GET /a' 't1 10.0.0.1 GET /c' | ./target/debug/throttle --rate 1 --burst 2 --key-field 2 --drop-log" }]],
  seconds: 7,
});
result(0, "t1 10.0.0.1 GET /a\nt1 10.0.0.1 GET /b\nt1 10.0.0.2 GET /a\ndropped: t1 10.0.0.1 GET /c", { seconds: 6.5 });
assistant({ calls: [["bash", { command: "cargo test 2>&1 | tail -n 3 && cmp <(./target/debug/throttle --rate 100000 --burst 100000 < tests/data/sample.log) tests/data/sample.log && echo identical" }]], seconds: 6 });
result(0, "test result: ok. 12 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n\nidentical", { seconds: 8.8 });
assistant({
  text: "Done. `--key-field N` is parsed by the hand-written parser (`0` is rejected: fields count from 1), and `main.rs` uses `KeyedLimiter` only when it is given. Without the flag the output is byte-for-byte the same as before (`cmp` against `tests/data/sample.log`), and the 12 tests pass. No dependency was added.",
  seconds: 7,
});

// Pi compacts (the user typed /compact): a split turn.
compaction({
  expectFirstKept: c1Kept,
  history:
    "## Goal\nPer-client rate limits for `throttle`, a Rust CLI that rate-limits stdin lines:\n- One token bucket per key, e.g. the client IP of access-log lines like `2025-02-28T17:04:11Z 10.0.0.7 GET /api/items 200`\n- `--key-field N` in the CLI\n\n## Constraints & Preferences\n- Never change the public API of `throttle::Limiter` (the ingest service links against it)\n- Keep `cargo test` green after every step\n- No new dependencies (`clap` was tried on a branch and rejected)\n\n## Progress\n### Done\n- [x] `KeyedLimiter` in `src/keyed.rs`: `new(rate, burst)`, `allow(key)`, `allow_at(key, now)`, `len()`; one `TokenBucket` per key\n- [x] `src/lib.rs` gained only `mod keyed;` and `pub use keyed::KeyedLimiter;`\n- [x] Fixed `burst_is_per_key`: `allow_at` took the token from a clone of the bucket and never stored it back\n- [x] 12 tests pass (label `keyed-green`)\n\n### In Progress\n- [ ] `--key-field N` in the CLI\n\n### Blocked\n- (none)\n\n## Key Decisions\n- **`KeyedLimiter` beside `Limiter`, not a change to it**: the ingest service's API must not move\n- **Entry API in `allow_at`**: `buckets.entry(key).or_insert_with(..)` updates the stored bucket; cloning it lost every take\n- **Keep the hand-written parser**: zero dependencies matter more than a generated `--help`\n\n## Next Steps\n1. Finish `--key-field N` in `src/args.rs` and `src/main.rs`\n2. Check that the output without `--key-field` is unchanged\n\n## Critical Context\n- `TokenBucket::take(now, n)` refills with `as_secs_f64` and starts full\n- Tests use `allow_at` with explicit `Instant`s",
  prefix:
    "## Original Request\nWire `KeyedLimiter` into the CLI as `--key-field N` (N-th whitespace-separated field, 1-based; lines without it share one bucket), extending the hand-written parser in `src/args.rs`, with byte-for-byte the same output when the flag is absent.\n\n## Early Progress\n- Restored `Cargo.toml`, `Cargo.lock` and `src/args.rs` from git (the `clap` change from the abandoned branch was still on disk)\n\n## Context for Suffix\n- `src/lib.rs` and `src/keyed.rs` are this branch's uncommitted work and were kept\n- Still to do in this turn: `--key-field` in `src/args.rs` and `src/main.rs`; without the flag the output must stay byte-for-byte the same",
});

// Turn 3: --stats.
user("Add `--stats`: when stdin ends, print per-key counts (passed and dropped) to stderr, the 10 keys with the most drops first. Only with `--key-field`. Memory is the other open issue: `KeyedLimiter` never forgets a client; we'll come to that after the stats.", 140);
assistant({ calls: [["read", { path: "src/keyed.rs" }]], seconds: 4 });
result(0, KEYED_RS.text);
const KEYED_STATS_EDITS = [
  { oldText: "    buckets: HashMap<String, TokenBucket>,\n}", newText: "    buckets: HashMap<String, TokenBucket>,\n    stats: HashMap<String, KeyStats>,\n}\n\n/// What happened to one key's events.\n#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]\npub struct KeyStats {\n    pub passed: u64,\n    pub dropped: u64,\n}" },
  { oldText: "        KeyedLimiter { rate, burst, buckets: HashMap::new() }", newText: "        KeyedLimiter { rate, burst, buckets: HashMap::new(), stats: HashMap::new() }" },
  {
    oldText: FIX_NEW,
    newText:
      "        let (rate, burst) = (self.rate, self.burst);\n        let ok = self.buckets.entry(key.to_string()).or_insert_with(|| TokenBucket::new(rate, burst)).take(now, 1.0);\n        let s = self.stats.entry(key.to_string()).or_default();\n        if ok { s.passed += 1 } else { s.dropped += 1 }\n        ok",
  },
  {
    oldText: "    /// Keys seen so far.",
    newText:
      "    /// Per-key counts, most drops first (ties: by key).\n    pub fn stats(&self) -> Vec<(&str, KeyStats)> {\n        let mut v: Vec<_> = self.stats.iter().map(|(k, s)| (k.as_str(), *s)).collect();\n        v.sort_by(|a, b| b.1.dropped.cmp(&a.1.dropped).then(a.0.cmp(b.0)));\n        v\n    }\n\n    /// Keys seen so far.",
  },
];
assistant({
  thinking: "Counting belongs in KeyedLimiter (it sees every decision); a separate stats map so the bucket map can later be trimmed without losing counts. Additive API only: KeyStats and stats().",
  text: "Counting in `KeyedLimiter` itself, in a map of its own so the buckets can be trimmed later without losing counts. Only additions to its API: `KeyStats` and `stats()`.",
  calls: [["edit", { path: "src/keyed.rs", edits: KEYED_STATS_EDITS }]],
  seconds: 26,
});
editResult(0, KEYED_RS, 9);
assistant({
  calls: [
    ["edit", { path: "src/args.rs", edits: [{ oldText: "[--key-field N]\";", newText: "[--key-field N [--stats]]\";" }, { oldText: "    pub key_field: Option<usize>,\n}", newText: "    pub key_field: Option<usize>,\n    /// Print per-key counts to stderr at the end (needs --key-field).\n    pub stats: bool,\n}" }, { oldText: "key_field: None };", newText: "key_field: None, stats: false };" }, { oldText: '            "--drop-log" => opts.drop_log = true,', newText: '            "--drop-log" => opts.drop_log = true,\n            "--stats" => opts.stats = true,' }] }],
    ["edit", { path: "src/main.rs", edits: [{ oldText: "    ExitCode::SUCCESS", newText: "    drop(allow);\n    if opts.stats {\n        for (key, s) in keyed.stats().into_iter().take(10) {\n            eprintln!(\"{key:>15}  passed {:>8}  dropped {:>8}\", s.passed, s.dropped);\n        }\n    }\n    ExitCode::SUCCESS" }] }],
  ],
  seconds: 21,
});
editResult(0, ARGS_RS, 3);
editResult(1, MAIN_RS, 28);
assistant({ calls: [["bash", { command: "cargo test 2>&1 | tail -n 3 && ./target/debug/throttle --rate 2 --burst 5 --key-field 2 --stats < tests/data/sample.log > /dev/null" }]], seconds: 5 });
result(
  0,
  "test result: ok. 14 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n\n   10.0.0.7  passed        5  dropped      212\n  10.0.0.31  passed        5  dropped       40\n   10.0.0.2  passed        5  dropped        9\n           passed        3  dropped        4\n   10.0.0.4  passed        5  dropped        0\n   10.0.0.9  passed        2  dropped        0",
  { seconds: 9.2 },
);
assistant({ text: "`--stats` works: at the end of stdin the 10 keys with the most drops go to stderr (10.0.0.7 is the noisy one in the sample: 212 dropped). 14 tests pass. The row with an empty key is the lines that have no second field.", seconds: 9 });

// Turn 4: a pasted report, the (no key) bucket, clippy, a commit.
const turn4 = user(
  "The ingest team ran it on yesterday's full log (41 M lines, 1.3 M distinct clients). Their output:\n\n```\n$ throttle --rate 20 --burst 100 --key-field 2 --stats < access.log.1 > sampled.log\n      10.0.0.7  passed    86400  dropped  1204331\n   172.16.4.19  passed    86400  dropped   611090\n                passed    20311  dropped   338012\n    10.0.12.44  passed    71322  dropped    92110\n   192.168.1.5  passed    64005  dropped    40001\n  100.64.0.122  passed    51877  dropped    11093\n     10.0.0.31  passed    40210  dropped     9921\n  172.16.9.201  passed    38804  dropped     7012\n    10.0.3.117  passed    21998  dropped     3301\n  100.64.1.240  passed    18772  dropped     2208\n\n$ grep VmHWM /proc/$(pgrep throttle)/status   # near the end of the run\nVmHWM:   1921432 kB\n```\n\nTwo things. The third row, the one with no name, is the lines without a client field (health checks from the load balancer); call that key `(no key)` so people can read it. And memory: 1.9 GB, because `KeyedLimiter` never forgets a client. We'll deal with the memory next; first fix the name, run clippy and commit.",
  60,
);
assistant({
  thinking: "(no key): main.rs passes \"\" for a missing field; map it to \"(no key)\" there. The library keeps taking any key. Then clippy with -D warnings, then commit everything including keyed.rs (still untracked).",
  calls: [["edit", { path: "src/main.rs", edits: [{ oldText: '.unwrap_or("")),', newText: '.unwrap_or("(no key)")),' }] }]],
  seconds: 11,
});
editResult(0, MAIN_RS, 20);
assistant({ calls: [["bash", { command: "cargo clippy --all-targets -- -D warnings 2>&1 | tail -n 12" }]], seconds: 4 });
result(
  0,
  "    Checking throttle v0.3.1 (/home/dev/project)\nerror: struct `KeyedLimiter` has a public `len` method, but no `is_empty` method\n  --> src/keyed.rs:47:5\n   |\n47 |     pub fn len(&self) -> usize {\n   |     ^^^^^^^^^^^^^^^^^^^^^^^^^^\n   |\n   = help: for further information visit https://rust-lang.github.io/rust-clippy/master/index.html#len_without_is_empty\n   = note: `-D clippy::len-without-is-empty` implied by `-D warnings`\n\nerror: could not compile `throttle` (lib) due to 1 previous error\n\nCommand exited with code 101",
  { isError: true, seconds: 5.3 },
);
assistant({
  text: "Clippy wants an `is_empty` next to the public `len`. Adding it (an addition, not a change).",
  calls: [["edit", { path: "src/keyed.rs", edits: [{ oldText: "    pub fn len(&self) -> usize {\n        self.buckets.len()\n    }", newText: "    pub fn len(&self) -> usize {\n        self.buckets.len()\n    }\n\n    pub fn is_empty(&self) -> bool {\n        self.buckets.is_empty()\n    }" }] }]],
  seconds: 8,
});
editResult(0, KEYED_RS, 47);
assistant({ calls: [["bash", { command: "cargo clippy --all-targets -- -D warnings 2>&1 | tail -n 1 && cargo test 2>&1 | tail -n 1 && git add -A && git commit -qm 'Per-key limits: KeyedLimiter, --key-field, --stats' && git log --oneline -1" }]], seconds: 4 });
result(0, "    Finished `dev` profile [unoptimized + debuginfo] target(s) in 0.91s\ntest result: ok. 14 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n3f9c2d1 Per-key limits: KeyedLimiter, --key-field, --stats", { seconds: 7.7 });
assistant({
  text: "Committed as `3f9c2d1`. Lines without the key field now count under `(no key)`; clippy is clean after adding `KeyedLimiter::is_empty`; 14 tests pass.\n\nOn memory: every key keeps its bucket (and its counts) forever, so 1.3 M clients cost about 1.9 GB. That is next.",
  seconds: 8,
});

// Pi compacts again: carries everything of the first summary.
compaction({
  expectFirstKept: turn4,
  history:
    "## Goal\nPer-client rate limits for `throttle`, a Rust CLI that rate-limits stdin lines:\n- One token bucket per key, e.g. the client IP of access-log lines like `2025-02-28T17:04:11Z 10.0.0.7 GET /api/items 200`\n- `--key-field N` in the CLI\n- `--stats`: per-key counts on stderr\n\n## Constraints & Preferences\n- Never change the public API of `throttle::Limiter` (the ingest service links against it)\n- Keep `cargo test` green after every step\n- No new dependencies (`clap` was tried on a branch and rejected)\n- `--stats` output only with `--key-field`\n\n## Progress\n### Done\n- [x] `KeyedLimiter` in `src/keyed.rs`: `new(rate, burst)`, `allow(key)`, `allow_at(key, now)`, `len()`; one `TokenBucket` per key\n- [x] `src/lib.rs` gained only `mod keyed;` and `pub use keyed::KeyedLimiter;`\n- [x] Fixed `burst_is_per_key`: `allow_at` took the token from a clone of the bucket and never stored it back\n- [x] 12 tests pass (label `keyed-green`)\n- [x] Restored `Cargo.toml`, `Cargo.lock` and `src/args.rs` from git (the `clap` change from the abandoned branch was still on disk)\n- [x] `src/args.rs`: `Opts.key_field: Option<usize>`, `--key-field` parsed with `0` rejected, `USAGE` updated\n- [x] `src/main.rs`: `Limiter` without the flag, `KeyedLimiter` keyed by the N-th field with it\n- [x] `--key-field N` in the CLI; output without it is byte-for-byte unchanged (`cmp` with `tests/data/sample.log`)\n- [x] `--stats`: `KeyStats { passed, dropped }` and `KeyedLimiter::stats()` (most drops first, in a map of its own); `main.rs` prints the top 10 to stderr; 14 tests pass\n\n### In Progress\n- [ ] Bound the memory of `KeyedLimiter` (it never forgets a client)\n\n### Blocked\n- (none)\n\n## Key Decisions\n- **`KeyedLimiter` beside `Limiter`, not a change to it**: the ingest service's API must not move\n- **Entry API in `allow_at`**: `buckets.entry(key).or_insert_with(..)` updates the stored bucket; cloning it lost every take\n- **Keep the hand-written parser**: zero dependencies matter more than a generated `--help`\n- **Counts in their own map**: buckets can be trimmed later without losing `--stats` numbers\n\n## Next Steps\n1. Bound the memory of `KeyedLimiter`\n2. Commit the per-key work\n\n## Critical Context\n- `TokenBucket::take(now, n)` refills with `as_secs_f64` and starts full\n- Tests use `allow_at` with explicit `Instant`s\n- `src/lib.rs` and `src/keyed.rs` are this branch's uncommitted work and were kept\n- Still to do in this turn: `--key-field` in `src/args.rs` and `src/main.rs`; without the flag the output must stay byte-for-byte the same\n- In `tests/data/sample.log` 10.0.0.7 is the noisy client (212 of 217 lines dropped with `--rate 2 --burst 5`)",
});

// The user raises the thinking level for the design question that comes next. (So the user's
// message that starts the abandoned branch below does not hang under the compaction itself.)
wait(40);
thinkingLevel("high", "thinking-high");

// Turn 5, first try: a sweeper thread (abandoned).
const turn5Text = "Now the memory. Long-running throttles see millions of client IPs, so `KeyedLimiter` must not keep every key forever. Evict idle keys.";
const turn5a = user(turn5Text, 150);
const KEYED_THREAD_EDITS = [
  { oldText: "use std::collections::HashMap;\nuse std::time::Instant;", newText: "use std::collections::HashMap;\nuse std::sync::{Arc, Mutex};\nuse std::time::{Duration, Instant};" },
  { oldText: "    buckets: HashMap<String, TokenBucket>,\n    stats:", newText: "    buckets: Arc<Mutex<HashMap<String, (TokenBucket, Instant)>>>,\n    stats:" },
  {
    oldText: "    pub fn new(rate: f64, burst: u32) -> Self {\n        KeyedLimiter { rate, burst, buckets: HashMap::new(), stats: HashMap::new() }\n    }",
    newText:
      "    /// `ttl`: buckets idle for longer are dropped by a background sweeper.\n    pub fn new(rate: f64, burst: u32, ttl: Duration) -> Self {\n        let buckets = Arc::new(Mutex::new(HashMap::<String, (TokenBucket, Instant)>::new()));\n        let weak = Arc::downgrade(&buckets);\n        std::thread::spawn(move || loop {\n            std::thread::sleep(ttl / 4);\n            let Some(b) = weak.upgrade() else { return };\n            let now = Instant::now();\n            b.lock().unwrap().retain(|_, (_, seen)| now.duration_since(*seen) < ttl);\n        });\n        KeyedLimiter { rate, burst, buckets, stats: HashMap::new() }\n    }",
  },
];
assistant({
  thinking: "Idle eviction: remember when each key was last seen; a background thread sweeps every ttl/4 and drops keys idle longer than ttl. The map must be shared with the thread: Arc<Mutex<..>>, weak reference so the thread ends with the limiter.",
  text: "I'll add a background sweeper: each bucket remembers when it was last used, and a thread drops the ones idle for longer than a `ttl`.",
  calls: [["edit", { path: "src/keyed.rs", edits: KEYED_THREAD_EDITS }]],
  seconds: 29,
});
const threadKeyed = file(KEYED_RS.text);
editResult(0, threadKeyed, 3);
assistant({ calls: [["bash", { command: "cargo test 2>&1 | grep -E '^(error|test result)' | head -n 5" }]], seconds: 4 });
result(0, "error[E0061]: this function takes 3 arguments but 2 arguments were supplied\nerror[E0599]: no method named `entry` found for struct `Arc<Mutex<HashMap<String, (TokenBucket, Instant)>>>` in the current scope\nerror: could not compile `throttle` (bin \"throttle\") due to 2 previous errors\n\nCommand exited with code 101", {
  isError: true,
  seconds: 6.8,
});
assistant({
  text: "`allow_at` and `main.rs` need the new shape: lock the map, and pass a `ttl` of 5 minutes.",
  calls: [
    ["edit", { path: "src/keyed.rs", edits: [{ oldText: "let ok = self.buckets.entry(key.to_string()).or_insert_with(|| TokenBucket::new(rate, burst)).take(now, 1.0);", newText: "let mut map = self.buckets.lock().unwrap();\n        let (bucket, seen) = map.entry(key.to_string()).or_insert_with(|| (TokenBucket::new(rate, burst), now));\n        *seen = now;\n        let ok = bucket.take(now, 1.0);" }] }],
    ["edit", { path: "src/main.rs", edits: [{ oldText: "KeyedLimiter::new(opts.rate, opts.burst);", newText: "KeyedLimiter::new(opts.rate, opts.burst, std::time::Duration::from_secs(300));" }] }],
  ],
  seconds: 19,
});
editResult(0, threadKeyed, 37);
editResult(1, file(MAIN_RS.text), 15);
assistant({ calls: [["bash", { command: "cargo test 2>&1 | tail -n 3" }]], seconds: 4 });
result(0, "test keyed::tests::sweeper_drops_idle_keys ... ok\n\ntest result: ok. 15 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 2.01s", { seconds: 11.3 });
assistant({ text: "Idle keys are evicted: a background thread sweeps every `ttl / 4` and drops buckets unused for `ttl` (5 minutes in the CLI). `KeyedLimiter::new` now takes the `ttl`, the map sits behind `Arc<Mutex<..>>`, and the new test sleeps 2 s to see a sweep. 15 tests pass.", seconds: 9 });
user("No. A thread and a lock on every call for a single-threaded CLI, a 2-second sleep in the tests, and you changed `KeyedLimiter::new`. Let's go back.", 55);
assistant({ text: "Understood: on this branch `src/keyed.rs` and `src/main.rs` carry the sweeper; `git checkout` restores both from `3f9c2d1`.", seconds: 4 });
const bs2 = navigateWithSummary(
  turn5a,
  "## Goal\nEvict idle keys from `KeyedLimiter` so that memory stays bounded on long runs.\n\n## Constraints & Preferences\n- Never change the public API of `throttle::Limiter`; keep `cargo test` green\n- The user rejected: a background thread, a lock on every call, sleeping tests, and a changed `KeyedLimiter::new`\n\n## Progress\n### Done\n- [x] Tried a sweeper thread: `KeyedLimiter::new(rate, burst, ttl)`, buckets in `Arc<Mutex<HashMap<String, (TokenBucket, Instant)>>>`, swept every `ttl / 4`; `main.rs` passed a `ttl` of 300 s; 15 tests passed (one sleeps 2 s)\n\n### In Progress\n- [ ] (none)\n\n### Blocked\n- Abandoned by the user: too heavy for a single-threaded CLI\n\n## Key Decisions\n- **No threads in `KeyedLimiter`**: eviction must happen inside the calls the CLI already makes\n\n## Next Steps\n1. Restore `src/keyed.rs` and `src/main.rs` from commit `3f9c2d1`\n2. Evict without a thread and without changing `KeyedLimiter::new`",
);

// Turn 5 again: lazy eviction.
user(
  `${turn5Text} But lazily: no threads, no locks. Inside \`allow_at\`, every 1024 calls, drop the buckets that have refilled to full; a full bucket is the same as a new one, so dropping it loses nothing. \`KeyedLimiter::new(rate, burst)\` keeps its signature.`,
  80,
);
assistant({
  thinking: "Files on disk still have the sweeper version from the other branch. keyed.rs is committed in 3f9c2d1 now, so git checkout restores both keyed.rs and main.rs.",
  text: "First the sweeper from the other branch has to go; both files are in `3f9c2d1`.",
  calls: [["bash", { command: "git checkout -- src/keyed.rs src/main.rs && git status --short && echo clean" }]],
  seconds: 6,
});
result(0, "clean");
const BUCKET_FULL = { oldText: "    /// How long until `n` tokens are available.", newText: "    /// True when the bucket has refilled to capacity by `now` (it then equals a new bucket).\n    pub fn is_full(&self, now: Instant) -> bool {\n        self.time_until(now, self.capacity).is_zero()\n    }\n\n    /// How long until `n` tokens are available." };
const EVICT_EDITS = [
  { oldText: "pub struct KeyedLimiter {\n    rate: f64,\n    burst: u32,", newText: "pub struct KeyedLimiter {\n    rate: f64,\n    burst: u32,\n    calls: u64," },
  { oldText: "KeyedLimiter { rate, burst, buckets: HashMap::new(), stats: HashMap::new() }", newText: "KeyedLimiter { rate, burst, calls: 0, buckets: HashMap::new(), stats: HashMap::new() }" },
  {
    oldText: "        let (rate, burst) = (self.rate, self.burst);\n        let ok",
    newText: "        self.calls += 1;\n        if self.calls % SWEEP_EVERY == 0 {\n            // A full bucket equals a new one: dropping it changes no decision.\n            self.buckets.retain(|_, b| !b.is_full(now));\n        }\n        let (rate, burst) = (self.rate, self.burst);\n        let ok",
  },
  { oldText: "/// Rate-limits events per key", newText: "/// `allow_at` drops full buckets every this many calls.\nconst SWEEP_EVERY: u64 = 1024;\n\n/// Rate-limits events per key" },
];
assistant({
  thinking: "TokenBucket needs an is_full(now) — additive. KeyedLimiter: a calls counter, and every SWEEP_EVERY calls retain the buckets that are not full. stats stay (separate map); that map still grows per key, to be dealt with separately.",
  calls: [
    ["edit", { path: "src/bucket.rs", edits: [BUCKET_FULL] }],
    ["edit", { path: "src/keyed.rs", edits: EVICT_EDITS }],
  ],
  seconds: 33,
});
editResult(0, BUCKET_RS, 44);
editResult(1, KEYED_RS, 7);
assistant({
  text: "And a test that a full bucket is dropped while a busy one stays, with explicit instants (no sleeping):",
  calls: [
    [
      "edit",
      {
        path: "src/keyed.rs",
        edits: [
          {
            oldText: "    #[test]\n    fn limiter_api_is_unchanged() {",
            newText:
              "    #[test]\n    fn full_buckets_are_dropped_busy_ones_stay() {\n        let mut lim = KeyedLimiter::new(1.0, 1);\n        let t = Instant::now();\n        assert!(lim.allow_at(\"idle\", t));\n        for i in 0..SWEEP_EVERY {\n            lim.allow_at(\"busy\", t + Duration::from_secs(5) + Duration::from_micros(i));\n        }\n        assert_eq!(lim.len(), 1, \"idle refilled to full and was dropped\");\n        assert!(!lim.allow_at(\"busy\", t + Duration::from_secs(5)));\n    }\n\n    #[test]\n    fn limiter_api_is_unchanged() {",
          },
        ],
      },
    ],
  ],
  seconds: 18,
});
editResult(0, KEYED_RS, 80);
assistant({ calls: [["bash", { command: "cargo test 2>&1 | tail -n 3 && cargo clippy --all-targets -q -- -D warnings && echo clippy clean" }]], seconds: 4 });
const evictGreen = result(0, "test keyed::tests::full_buckets_are_dropped_busy_ones_stay ... ok\n\ntest result: ok. 15 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\nclippy clean", { seconds: 12.4 });
assistant({
  text: "Lazy eviction is in, with no thread and no lock:\n\n- `TokenBucket::is_full(now)` (new, additive).\n- `KeyedLimiter::allow_at` counts calls and every 1024 (`SWEEP_EVERY`) drops the buckets that have refilled to full. A full bucket equals a new one, so no decision changes.\n- `KeyedLimiter::new(rate, burst)` is unchanged; 15 tests pass, clippy is clean.\n\nThe `--stats` counts are still kept per key; that map grows with the number of clients.",
  seconds: 10,
});

// Turn 6: a benchmark on a log like the ingest team's.
const turn6 = user(
  "Before I hand this back to the ingest team, measure it. Make a synthetic log shaped like theirs: 2 M lines, 200 k clients, a few heavy hitters (one client is about 5 % of the traffic). Compare commit `3f9c2d1` (no eviction) with the working tree: wall time and peak memory, `--rate 20 --burst 100 --key-field 2`, once with `--stats` and once without. Use `/usr/bin/time -f '%e s %M KB'`, nothing fancier, and put the numbers in a small table in your answer so I can paste it into the ticket. If the eviction costs more than 10 % of wall time, say so and we'll tune `SWEEP_EVERY`.",
  70,
);
assistant({
  thinking: "Synthetic log with awk: 2M lines, 200k clients, client 0 gets ~5% of lines. Build both versions: a worktree at 3f9c2d1 for the old one. Then four runs of /usr/bin/time.",
  calls: [
    [
      "bash",
      {
        command:
          "awk 'BEGIN { srand(7); for (i = 0; i < 2000000; i++) { c = (rand() < 0.05) ? 0 : int(rand() * 200000); printf \"2025-02-28T17:%02d:%02dZ 10.%d.%d.%d GET /api/items 200\\n\", int(i / 60000) % 60, int(i / 1000) % 60, int(c / 65536), int(c / 256) % 256, c % 256 } }' > /tmp/synthetic.log && wc -l /tmp/synthetic.log && git worktree add -q /tmp/throttle-3f9c2d1 3f9c2d1 && (cd /tmp/throttle-3f9c2d1 && cargo build -q --release) && cargo build -q --release && echo built",
      },
    ],
  ],
  seconds: 16,
});
result(0, "2000000 /tmp/synthetic.log\nbuilt", { seconds: 48.1 });
assistant({
  calls: [
    [
      "bash",
      {
        command:
          "for bin in /tmp/throttle-3f9c2d1/target/release/throttle ./target/release/throttle; do for extra in '' --stats; do echo \"$bin $extra\"; /usr/bin/time -f '%e s %M KB' $bin --rate 20 --burst 100 --key-field 2 $extra < /tmp/synthetic.log > /dev/null 2> >(tail -n 1); done; done",
      },
    ],
  ],
  seconds: 7,
});
result(
  0,
  "/tmp/throttle-3f9c2d1/target/release/throttle \n1.42 s 58212 KB\n/tmp/throttle-3f9c2d1/target/release/throttle --stats\n1.47 s 58344 KB\n./target/release/throttle \n1.49 s 31876 KB\n./target/release/throttle --stats\n1.55 s 32010 KB",
  { seconds: 6.9 },
);
assistant({
  thinking: "Eviction costs 1.49 vs 1.42 s = +4.9 %, under the 10 % bar. Peak memory 58 MB -> 32 MB; the rest is the stats map (200k keys), which is not evicted. Extrapolate? Better to just report measured numbers.",
  text: "Measured on `/tmp/synthetic.log` (2 M lines, 200 k clients, one client about 5 %), `--rate 20 --burst 100 --key-field 2`, release builds:\n\n| build | flags | wall time | peak RSS |\n|---|---|---|---|\n| `3f9c2d1` (no eviction) | | 1.42 s | 58.2 MB |\n| `3f9c2d1` (no eviction) | `--stats` | 1.47 s | 58.3 MB |\n| working tree (lazy eviction) | | 1.49 s | 31.9 MB |\n| working tree (lazy eviction) | `--stats` | 1.55 s | 32.0 MB |\n\nEviction costs about 5 % of wall time, under your 10 % bar, so `SWEEP_EVERY` can stay at 1024. Peak memory drops by 45 %; what remains is mostly the `--stats` map, which still holds every client.",
  seconds: 18,
});

// Before compacting in Arbor, the user labels the green run of lazy eviction. (Right before the
// next user message it would have moved Pi's cut: the cut moves back over non-message entries.)
label(evictGreen, "lazy-eviction");

// The user compacts in Arbor with a small model; its summary loses one decision.
compaction({
  expectFirstKept: turn6,
  arbor: { model: "claude-haiku-4-5", usage: { input: 9214, output: 1187, cacheRead: 0, cacheWrite: 0 } },
  history:
    "## Goal\nPer-client rate limits for `throttle`, a Rust CLI that rate-limits stdin lines:\n- One token bucket per key, e.g. the client IP of access-log lines like `2025-02-28T17:04:11Z 10.0.0.7 GET /api/items 200`\n- `--key-field N` in the CLI\n- `--stats`: per-key counts on stderr\n- Bounded memory on long runs\n\n## Constraints & Preferences\n- Never change the public API of `throttle::Limiter` (the ingest service links against it)\n- Keep `cargo test` green after every step\n- No new dependencies (`clap` was tried on a branch and rejected)\n- `--stats` output only with `--key-field`\n- No threads or locks in `KeyedLimiter`; `KeyedLimiter::new(rate, burst)` keeps its signature\n\n## Progress\n### Done\n- [x] `KeyedLimiter` in `src/keyed.rs`: `new(rate, burst)`, `allow(key)`, `allow_at(key, now)`, `len()`; one `TokenBucket` per key\n- [x] `src/lib.rs` gained only `mod keyed;` and `pub use keyed::KeyedLimiter;`\n- [x] Fixed `burst_is_per_key`: `allow_at` took the token from a clone of the bucket and never stored it back\n- [x] 12 tests pass (label `keyed-green`)\n- [x] Restored `Cargo.toml`, `Cargo.lock` and `src/args.rs` from git (the `clap` change from the abandoned branch was still on disk)\n- [x] `src/args.rs`: `Opts.key_field: Option<usize>`, `--key-field` parsed with `0` rejected, `USAGE` updated\n- [x] `src/main.rs`: `Limiter` without the flag, `KeyedLimiter` keyed by the N-th field with it\n- [x] `--key-field N` in the CLI; output without it is byte-for-byte unchanged (`cmp` with `tests/data/sample.log`)\n- [x] `--stats`: `KeyStats { passed, dropped }` and `KeyedLimiter::stats()` (most drops first, in a map of its own); `main.rs` prints the top 10 to stderr; 14 tests pass\n- [x] Lines without the key field count under `(no key)`; clippy clean after adding `KeyedLimiter::is_empty`; committed as `3f9c2d1`\n- [x] Bound the memory of `KeyedLimiter` (it never forgets a client)\n- [x] Lazy eviction: `TokenBucket::is_full(now)`; `allow_at` drops full buckets every `SWEEP_EVERY` = 1024 calls; 15 tests pass (label `lazy-eviction`)\n\n### In Progress\n- [ ] (none)\n\n### Blocked\n- (none)\n\n## Key Decisions\n- **`KeyedLimiter` beside `Limiter`, not a change to it**: the ingest service's API must not move\n- **Keep the hand-written parser**: zero dependencies matter more than a generated `--help`\n- **Counts in their own map**: buckets can be trimmed later without losing `--stats` numbers\n- **Evict lazily inside `allow_at`**: a sweeper thread (tried on a branch) needed a lock and a new `ttl` argument\n\n## Next Steps\n1. Decide whether the `--stats` map needs a bound too\n2. Document `--key-field` and `--stats` in `README.md`\n\n## Critical Context\n- `TokenBucket::take(now, n)` refills with `as_secs_f64` and starts full\n- Tests use `allow_at` with explicit `Instant`s\n- `src/lib.rs` and `src/keyed.rs` are this branch's uncommitted work and were kept\n- Still to do in this turn: `--key-field` in `src/args.rs` and `src/main.rs`; without the flag the output must stay byte-for-byte the same\n- In `tests/data/sample.log` 10.0.0.7 is the noisy client (212 of 217 lines dropped with `--rate 2 --burst 5`)\n- Ingest team's run: `--rate 20 --burst 100 --key-field 2`, 41 M lines, 1.3 M distinct clients, peak memory 1.9 GB; 10.0.0.7 dropped 1204331\n- The `--stats` map still holds every client",
});

// After the compaction Pi continues: README and the release.
user("Thanks, that table goes into the ticket. Document `--key-field` and `--stats` in the README, mention that idle clients are forgotten, and bump the version to 0.4.0.", 210);
assistant({
  text: "Updating the README's flag list and the version.",
  calls: [
    [
      "edit",
      {
        path: "README.md",
        edits: [
          {
            oldText: "- `--drop-log`: print dropped lines to stderr.\n",
            newText:
              "- `--drop-log`: print dropped lines to stderr.\n- `--key-field N`: one bucket per key, the N-th whitespace-separated field of each line (1-based);\n  lines without it share the key `(no key)`. Clients whose bucket has refilled are forgotten, so\n  memory follows the active clients, not all clients ever seen.\n- `--stats`: with `--key-field`, print the 10 keys with the most drops to stderr at the end.\n",
          },
        ],
      },
    ],
    ["edit", { path: "Cargo.toml", edits: [{ oldText: 'version = "0.3.1"', newText: 'version = "0.4.0"' }] }],
  ],
  seconds: 15,
});
editResult(0, README, 12);
editResult(1, CARGO_TOML, 3);
assistant({ calls: [["bash", { command: "cargo test 2>&1 | tail -n 1 && git commit -qam 'throttle 0.4.0: lazy eviction of idle keys, README' && git tag v0.4.0 && git log --oneline -2" }]], seconds: 4 });
result(0, "test result: ok. 15 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n9d41e07 throttle 0.4.0: lazy eviction of idle keys, README\n3f9c2d1 Per-key limits: KeyedLimiter, --key-field, --stats", { seconds: 8.2 });
assistant({ text: "Released: `9d41e07`, tagged `v0.4.0`. The README documents `--key-field` (with the `(no key)` bucket and the forgetting of idle clients) and `--stats`; 15 tests pass.", seconds: 6 });

// ---------------------------------------------------------------------------------------------

const text = [header, ...entries].map((e) => JSON.stringify(e)).join("\n") + "\n";
if (process.argv.includes("--check")) {
  const committed = fs.existsSync(OUT) ? fs.readFileSync(OUT, "utf8") : "";
  if (committed !== text) {
    console.error(`${path.relative(ROOT, OUT)} is not what scripts/gen-demo.mjs writes; run node scripts/gen-demo.mjs`);
    process.exit(1);
  }
  console.log(`${path.relative(ROOT, OUT)} is up to date`);
} else {
  fs.writeFileSync(OUT, text);
  const kinds = {};
  for (const e of entries) kinds[e.type === "message" ? `message:${e.message.role}` : e.type] = (kinds[`${e.type === "message" ? `message:${e.message.role}` : e.type}`] ?? 0) + 1;
  console.log(`wrote ${path.relative(ROOT, OUT)}: ${entries.length} entries, ${text.length} bytes, leaf ${leaf}; bs ${bs1} ${bs2}`);
  console.log(JSON.stringify(kinds));
}
