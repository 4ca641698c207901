#!/usr/bin/env node
// Seeded generator of realistic Pi (pi-coding-agent 0.73.x, session format v3) session files.
//
// It writes the same JSONL format Pi's SessionManager writes (header line, then entries with
// id/parentId forming a tree), without depending on Pi, so it is deterministic for a given seed
// and usable from any project. Content mimics a coding-agent session:
//   - turns: user prompt -> N rounds of (assistant [thinking+text+toolCall(s)] -> toolResult(s))
//     -> final assistant text; usage/cost fields as Pi records them;
//   - tools read / bash / edit / write with realistic arguments and results: read results are
//     capped at 50 KB like Pi's read tool (with details.truncation), bash output tail-truncated
//     at 50 KB, write arguments up to 200 KB, rare image reads (base64 50-200 KB);
//   - branches: every ~--branch-every turns the user navigates back 1-12 turns (leaf = parent of
//     a user message, as AgentSession.navigateTree does) and half of the time a branch_summary
//     entry is appended (SessionManager.branchWithSummary); the abandoned branch stays in the file;
//   - compactions: when the estimated context (chars/4, like Pi's estimateTokens) exceeds
//     contextWindow - reserveTokens, a compaction entry is appended whose firstKeptEntryId keeps
//     ~keepRecentTokens, cut at a user/assistant message (never a tool result), like findCutPoint;
//   - a session_info name, model/thinking-level changes, labels and extension custom entries.
//
// Usage:
//   node scripts/gen-sessions.mjs --entries 10000 --seed 1 --out /path/s10k.jsonl
//       writes one session (about 2 KB per entry on average) and /path/s10k.jsonl.meta.json
//       (leaf id, abandoned branch leaves, compaction count, sizes) for benchmarks.
//   node scripts/gen-sessions.mjs --many 500 --min-entries 20 --max-entries 200 --seed 7 --dir /path/sessions
//       writes 500 small sessions into a directory (for session list / picker benchmarks).
// Options: --branch-every 25 (turns), --context-window 200000, --reserve 16384, --keep 20000,
//          --cwd /home/dev/project
//
// Node >= 18, no dependencies. The benchmarks' sessions (docs/PERFORMANCE.md) are seed 42 for
// 1k/10k/100k entries and seed 7 for the 500 small ones.
import fs from "node:fs";
import path from "node:path";

// ---------------------------------------------------------------- args
function parseArgs(argv) {
  const o = {};
  for (let i = 2; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith("--")) throw new Error(`bad arg ${a}`);
    const k = a.slice(2);
    const v = argv[i + 1] && !argv[i + 1].startsWith("--") ? argv[++i] : "true";
    o[k] = v;
  }
  return o;
}

// ---------------------------------------------------------------- PRNG (mulberry32 + helpers)
function makeRng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const r = {
    next,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)), // inclusive
    chance: (p) => next() < p,
    pick: (arr) => arr[Math.floor(next() * arr.length)],
    // log-normal with given median and sigma, clamped
    logn: (median, sigma, lo, hi) => {
      const u1 = Math.max(next(), 1e-12);
      const u2 = next();
      const z = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
      const v = Math.round(median * Math.exp(sigma * z));
      return Math.min(hi, Math.max(lo, v));
    },
    hex: (n) => {
      let s = "";
      while (s.length < n) s += Math.floor(next() * 0x100000000).toString(16).padStart(8, "0");
      return s.slice(0, n);
    },
  };
  return r;
}

// ---------------------------------------------------------------- text pools (built once per seed)
const WORDS = (
  "the a to of and in is it that for on with as this be are by not or from at which an have will can " +
  "function return const let value type error file test module config session entry parent tree leaf " +
  "branch context message token compaction summary render update state build parse index cache buffer " +
  "stream handler request response client server path string number object array map set promise async " +
  "await import export default class interface struct impl trait enum match option result vec box arc " +
  "mutex channel thread worker queue retry timeout limit offset length count total size bytes lines"
).split(" ");
const IDENTS = (
  "sessionManager entries byId leafId parentId buildSessionContext appendMessage loadEntries readFile " +
  "writeFile JSON parse stringify handleRequest config options state result error logger render update " +
  "tokenCount estimateTokens findCutPoint prepareCompaction serialize deserialize items node children " +
  "path cwd args opts ctx tx rx buf len idx cursor offset reader writer encoder decoder registry"
).split(" ");
const UNICODE_BITS = ["é", "ü", "→", "—", "✓", "…", "日本語", "🚀", "ß", "≥"];
const EXTS = ["ts", "ts", "ts", "tsx", "js", "rs", "rs", "py", "md", "json", "toml", "css"];
const DIRS = ["src", "src/core", "src/utils", "src/components", "packages/core/src", "lib", "tests", "docs", "crates/engine/src"];
const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

function buildPools(rng) {
  const code = [];
  for (let i = 0; i < 6000; i++) {
    const ind = "  ".repeat(rng.int(0, 4));
    const a = rng.pick(IDENTS), b = rng.pick(IDENTS), c = rng.pick(IDENTS), w = rng.pick(WORDS);
    let line;
    switch (rng.int(0, 11)) {
      case 0: line = `${ind}const ${a} = await ${b}.${c}(${rng.pick(IDENTS)}, "${w}");`; break;
      case 1: line = `${ind}if (!${a} || ${a}.length === 0) return ${b};`; break;
      case 2: line = `${ind}// ${w} ${rng.pick(WORDS)} ${rng.pick(WORDS)} ${rng.pick(WORDS)} ${rng.chance(0.08) ? rng.pick(UNICODE_BITS) : ""}`; break;
      case 3: line = `${ind}for (const ${a} of ${b}) {`; break;
      case 4: line = `${ind}}`; break;
      case 5: line = `${ind}export function ${a}(${b}: string, ${c}?: number): ${rng.pick(["void", "string", "Promise<void>", "boolean"])} {`; break;
      case 6: line = `${ind}throw new Error(\`${w} ${a} failed: \${${b}}\`);`; break;
      case 7: line = `${ind}let ${a} = ${b}.get(${c}) ?? "${rng.pick(WORDS)}\\t${rng.pick(WORDS)}";`; break;
      case 8: line = `${ind}${a}.push({ type: "${w}", id: ${b}.id, parentId: ${c} });`; break;
      case 9: line = `${ind}fn ${a}(&self, ${b}: &str) -> Result<${rng.pick(["()", "String", "Vec<u8>", "usize"])}, Error> {`; break;
      case 10: line = `${ind}return ${a}.map((x) => x.${b}).filter(Boolean).join("\\n");`; break;
      default: line = ""; break;
    }
    code.push(line);
  }
  const prose = [];
  for (let i = 0; i < 3000; i++) {
    const n = rng.int(6, 22);
    const ws = [];
    for (let j = 0; j < n; j++) ws.push(rng.chance(0.12) ? "`" + rng.pick(IDENTS) + "`" : rng.pick(WORDS));
    if (rng.chance(0.03)) ws.push(rng.pick(UNICODE_BITS));
    let s = ws.join(" ");
    s = s[0].toUpperCase() + s.slice(1) + rng.pick([".", ".", ".", "?", ":"]);
    prose.push(s);
  }
  let b64 = "";
  const parts = [];
  for (let i = 0; i < 1 << 19; i++) parts.push(BASE64[Math.floor(rng.next() * 64)]);
  b64 = parts.join("");
  return { code, prose, b64 };
}

function makeContent(rng, pools) {
  const codeText = (chars) => {
    const out = [];
    let n = 0;
    let i = rng.int(0, pools.code.length - 1);
    while (n < chars) {
      const l = pools.code[i++ % pools.code.length];
      out.push(l);
      n += l.length + 1;
    }
    return out.join("\n");
  };
  const numbered = (text, startLine) =>
    text
      .split("\n")
      .map((l, k) => `${String(startLine + k).padStart(6, " ")}\t${l}`)
      .join("\n");
  const proseText = (chars) => {
    const out = [];
    let n = 0;
    while (n < chars) {
      const s = rng.pick(pools.prose);
      out.push(s);
      n += s.length + 1;
      if (rng.chance(0.15)) { out.push("\n\n"); n += 2; }
    }
    return out.join(" ").replace(/ \n\n /g, "\n\n");
  };
  const b64 = (chars) => {
    const start = rng.int(0, pools.b64.length - 1);
    let s = pools.b64.slice(start, start + chars);
    while (s.length < chars) s += pools.b64.slice(0, chars - s.length);
    return s;
  };
  const filePath = () => `${rng.pick(DIRS)}/${rng.pick(IDENTS)}${rng.chance(0.3) ? "-" + rng.pick(WORDS) : ""}.${rng.pick(EXTS)}`;
  return { codeText, numbered, proseText, b64, filePath };
}

// ---------------------------------------------------------------- session writer
class Out {
  constructor(file) {
    this.fd = fs.openSync(file, "w");
    this.buf = [];
    this.len = 0;
    this.bytes = 0;
  }
  line(obj) {
    const s = JSON.stringify(obj) + "\n";
    this.buf.push(s);
    this.len += s.length;
    if (this.len > 8 << 20) this.flush();
  }
  flush() {
    if (this.buf.length) {
      const b = Buffer.from(this.buf.join(""), "utf8");
      fs.writeSync(this.fd, b);
      this.bytes += b.length;
    }
    this.buf = [];
    this.len = 0;
  }
  close() {
    this.flush();
    fs.closeSync(this.fd);
  }
}

const tok = (chars) => Math.ceil(chars / 4);

export function generateSession(opts) {
  const {
    file,
    entries: targetEntries,
    seed,
    branchEvery = 25,
    contextWindow = 200000,
    reserve = 16384,
    keep = 20000,
    cwd = "/home/dev/project",
    startTime = Date.UTC(2026, 0, 5, 9, 0, 0) + (seed % 1000) * 86400000,
  } = opts;
  const rng = makeRng(seed);
  const pools = opts.pools ?? buildPools(makeRng(seed ^ 0x9e3779b9));
  const C = makeContent(rng, pools);
  const out = new Out(file);
  const ids = new Set();
  const newId = () => {
    for (;;) {
      const id = rng.hex(8);
      if (!ids.has(id)) { ids.add(id); return id; }
    }
  };
  let clock = startTime;
  const tick = (lo, hi) => { clock += rng.int(lo, hi); return clock; };
  const iso = () => new Date(clock).toISOString();

  const provider = "anthropic", api = "anthropic-messages";
  let model = "claude-sonnet-4-5";
  // Current root->leaf path: {id, kind: 'user'|'assistant'|'tool'|'other'|'compaction', tok}
  let pathArr = [];
  let leafId = null;
  let written = 0;
  let compactionIdx = -1; // index in pathArr of last compaction entry on the path
  let keptFromIdx = 0; // first kept index (for context estimate)
  let summaryTok = 0;
  const meta = { seed, file: path.basename(file), compactions: 0, branches: [], branchSummaries: 0, labels: 0 };
  const readFiles = new Set(), modFiles = new Set();

  const sessionId = (() => {
    const h = rng.hex(32);
    const ms = startTime.toString(16).padStart(12, "0");
    return `${ms.slice(0, 8)}-${ms.slice(8, 12)}-7${h.slice(0, 3)}-${"89ab"[rng.int(0, 3)]}${h.slice(3, 6)}-${h.slice(6, 18)}`;
  })();
  out.line({ type: "session", version: 3, id: sessionId, timestamp: iso(), cwd });

  const emit = (entry, kind, tokens = 0) => {
    entry.id = newId();
    entry.parentId = leafId;
    entry.timestamp = iso();
    // keep Pi's key order: type, id, parentId, timestamp, ...
    const { type, id, parentId, timestamp, ...rest } = entry;
    out.line({ type, id, parentId, timestamp, ...rest });
    pathArr.push({ id, kind, tok: tokens });
    leafId = id;
    written++;
    return id;
  };
  const ctxTokens = () => {
    let t = summaryTok;
    for (let i = keptFromIdx; i < pathArr.length; i++) if (i !== compactionIdx) t += pathArr[i].tok;
    return t;
  };
  // incremental context estimate (recomputed on branch/compaction)
  let ctx = 0;

  const usage = (output) => {
    const input = rng.int(1, 8);
    const cacheRead = Math.max(0, ctx - rng.int(500, 3000));
    const cacheWrite = Math.max(0, ctx - cacheRead - input);
    const total = input + output + cacheRead + cacheWrite;
    const cost = {
      input: +(input * 3e-6).toFixed(6),
      output: +(output * 15e-6).toFixed(6),
      cacheRead: +(cacheRead * 0.3e-6).toFixed(6),
      cacheWrite: +(cacheWrite * 3.75e-6).toFixed(6),
    };
    cost.total = +(cost.input + cost.output + cost.cacheRead + cost.cacheWrite).toFixed(6);
    return { input, output, cacheRead, cacheWrite, totalTokens: total, cost };
  };

  const userMessage = () => {
    tick(15000, 400000);
    let text = C.proseText(rng.logn(220, 0.9, 20, 4000));
    if (rng.chance(0.06)) text += "\n\n```\n" + C.codeText(rng.logn(3000, 0.8, 500, 20000)) + "\n```";
    const t = tok(text.length);
    emit({ type: "message", message: { role: "user", content: [{ type: "text", text }], timestamp: clock } }, "user", t);
    ctx += t;
  };

  const toolCallFor = (name) => {
    const id = "toolu_01" + C.b64(22).replace(/[+/]/g, "x");
    switch (name) {
      case "read": {
        const p = C.filePath();
        readFiles.add(p);
        const args = { path: p };
        if (rng.chance(0.2)) { args.offset = rng.int(1, 800); args.limit = rng.pick([50, 100, 200, 400]); }
        return { type: "toolCall", id, name, arguments: args };
      }
      case "bash": {
        const cmd = rng.pick([
          "npm test", "npm run build 2>&1 | tail -50", `rg -n "${rng.pick(IDENTS)}" src`, "git status --short",
          "git diff --stat", `cargo test -p engine ${rng.pick(IDENTS)}`, `ls -la ${rng.pick(DIRS)}`,
          `cat package.json | head -40`, "npx tsc --noEmit", `grep -rn "TODO" ${rng.pick(DIRS)}`,
        ]);
        const args = { command: cmd };
        if (rng.chance(0.15)) args.timeout = rng.pick([30, 60, 120, 300]);
        return { type: "toolCall", id, name, arguments: args };
      }
      case "edit": {
        const p = C.filePath();
        modFiles.add(p);
        const edits = [];
        const n = rng.chance(0.75) ? 1 : rng.int(2, 4);
        for (let i = 0; i < n; i++) {
          edits.push({ oldText: C.codeText(rng.logn(250, 0.8, 30, 6000)), newText: C.codeText(rng.logn(300, 0.8, 30, 8000)) });
        }
        return { type: "toolCall", id, name, arguments: { path: p, edits } };
      }
      case "write": {
        const p = C.filePath();
        modFiles.add(p);
        const size = rng.chance(0.07) ? rng.int(50000, 200000) : rng.logn(2500, 0.9, 200, 40000);
        return { type: "toolCall", id, name, arguments: { path: p, content: C.codeText(size) } };
      }
    }
  };

  const toolResultFor = (call) => {
    tick(50, 20000);
    let content, details, isError = false;
    switch (call.name) {
      case "read": {
        if (rng.chance(0.004)) {
          // image read: base64 payload
          const n = rng.int(50000, 200000);
          content = [{ type: "text", text: "Read image file [image/png]" }, { type: "image", data: C.b64(n - (n % 4)), mimeType: "image/png" }];
        } else if (rng.chance(0.02)) {
          // large file hit Pi's 50 KB read cap
          const text = C.numbered(C.codeText(49000), call.arguments.offset ?? 1);
          const lines = text.split("\n").length;
          content = [{ type: "text", text: text + `\n\n[Showing lines 1-${lines} of ${lines + rng.int(100, 4000)}. Use offset=${lines + 1} to continue.]` }];
          details = { truncation: { content: "", truncated: true, truncatedBy: "bytes", totalLines: lines + 2000, totalBytes: 150000, outputLines: lines, outputBytes: 51200, lastLinePartial: false, firstLineExceedsLimit: false, maxLines: 2000, maxBytes: 51200 } };
        } else {
          content = [{ type: "text", text: C.codeText(rng.logn(1200, 1.0, 40, 45000)) }];
        }
        if (rng.chance(0.03)) { isError = true; content = [{ type: "text", text: `ENOENT: no such file or directory, access '${call.arguments.path}'` }]; details = undefined; }
        break;
      }
      case "bash": {
        let text = rng.chance(0.02) ? C.codeText(rng.int(20000, 50000)) : C.proseText(rng.logn(500, 1.1, 0, 20000));
        if (!text) text = "(no output)";
        content = [{ type: "text", text }];
        if (rng.chance(0.1)) { isError = true; content[0].text += `\n\nCommand exited with code ${rng.int(1, 2)}`; }
        break;
      }
      case "edit": {
        const p = call.arguments.path;
        const diff = call.arguments.edits
          .map((e) => e.oldText.split("\n").map((l) => "-" + l).join("\n") + "\n" + e.newText.split("\n").map((l) => "+" + l).join("\n"))
          .join("\n...\n");
        content = [{ type: "text", text: `Successfully replaced ${call.arguments.edits.length} block(s) in ${p}.` }];
        details = { diff, firstChangedLine: rng.int(1, 900) };
        break;
      }
      case "write": {
        content = [{ type: "text", text: `Successfully wrote ${call.arguments.content.length} bytes to ${call.arguments.path}` }];
        break;
      }
    }
    const msg = { role: "toolResult", toolCallId: call.id, toolName: call.name, content };
    if (details !== undefined) msg.details = details;
    msg.isError = isError;
    msg.timestamp = clock;
    let chars = 0;
    for (const b of content) chars += b.type === "text" ? b.text.length : 4800;
    const t = tok(chars);
    emit({ type: "message", message: msg }, "tool", t);
    ctx += t;
  };

  const assistantMessage = (final) => {
    tick(1500, 40000);
    const content = [];
    let chars = 0;
    if (rng.chance(0.45)) {
      const th = C.proseText(rng.logn(350, 0.9, 40, 8000));
      content.push({ type: "thinking", thinking: th, thinkingSignature: C.b64(rng.int(300, 1400)) });
      chars += th.length;
    }
    if (final || rng.chance(0.6)) {
      const tx = C.proseText(final ? rng.logn(700, 0.9, 40, 8000) : rng.logn(160, 0.8, 10, 2000));
      content.push({ type: "text", text: tx });
      chars += tx.length;
    }
    const calls = [];
    if (!final) {
      const n = rng.chance(0.82) ? 1 : rng.int(2, 3);
      for (let i = 0; i < n; i++) {
        const r = rng.next();
        const name = r < 0.42 ? "read" : r < 0.72 ? "bash" : r < 0.92 ? "edit" : "write";
        const c = toolCallFor(name);
        calls.push(c);
        content.push(c);
        chars += c.name.length + JSON.stringify(c.arguments).length;
      }
    }
    const t = tok(chars);
    const stopReason = final ? "stop" : "toolUse";
    const msg = { role: "assistant", content, api, provider, model, usage: usage(Math.max(1, t)), stopReason, timestamp: clock };
    if (rng.chance(0.5)) msg.responseId = "msg_01" + C.b64(22).replace(/[+/]/g, "y");
    emit({ type: "message", message: msg }, "assistant", t);
    ctx += t;
    return calls;
  };

  const turn = () => {
    userMessage();
    const rounds = rng.chance(0.15) ? 0 : rng.logn(4, 0.7, 1, 25);
    for (let r = 0; r < rounds && written < targetEntries; r++) {
      const calls = assistantMessage(false);
      for (const c of calls) toolResultFor(c);
      maybeCompact();
    }
    assistantMessage(true);
    maybeCompact();
  };

  const maybeCompact = () => {
    if (ctx <= contextWindow - reserve) return;
    // walk back from the leaf accumulating estimated tokens, like findCutPoint
    let acc = 0;
    let cut = pathArr.length - 1;
    for (let i = pathArr.length - 1; i > compactionIdx; i--) {
      acc += pathArr[i].tok;
      if (acc >= keep) { cut = i; break; }
    }
    while (cut < pathArr.length - 1 && pathArr[cut].kind !== "user" && pathArr[cut].kind !== "assistant") cut++;
    const firstKeptEntryId = pathArr[cut].id;
    tick(20000, 90000);
    const summary =
      "## Goal\n" + C.proseText(rng.int(200, 600)) + "\n\n## Constraints & Preferences\n- " + C.proseText(rng.int(100, 400)) +
      "\n\n## Progress\n### Done\n- [x] " + C.proseText(rng.int(400, 1500)) + "\n\n### In Progress\n- [ ] " + C.proseText(rng.int(100, 500)) +
      "\n\n## Key Decisions\n- **" + C.proseText(rng.int(200, 800)) + "\n\n## Next Steps\n1. " + C.proseText(rng.int(100, 500)) +
      "\n\n## Critical Context\n- " + C.proseText(rng.int(200, 800)) +
      `\n\n<read-files>\n${[...readFiles].slice(0, 40).join("\n")}\n</read-files>\n\n<modified-files>\n${[...modFiles].slice(0, 40).join("\n")}\n</modified-files>`;
    const tokensBefore = ctx;
    emit(
      { type: "compaction", summary, firstKeptEntryId, tokensBefore, details: { readFiles: [...readFiles].slice(0, 200).sort(), modifiedFiles: [...modFiles].slice(0, 200).sort() } },
      "compaction",
      0,
    );
    compactionIdx = pathArr.length - 1;
    keptFromIdx = cut;
    summaryTok = tok(summary.length);
    ctx = ctxTokens();
    meta.compactions++;
  };

  const navigateBack = () => {
    // pick a user message on the current path, after the last compaction, 2..12 turns back
    const users = [];
    for (let i = pathArr.length - 1; i > Math.max(compactionIdx, 0); i--) if (pathArr[i].kind === "user") users.push(i);
    if (users.length < 2) return;
    const k = rng.int(1, Math.min(12, users.length - 1));
    const ui = users[k];
    meta.branches.push({ abandonedLeafId: leafId, targetUserEntryId: pathArr[ui].id, atEntry: written });
    // leaf = parent of the user message (navigateTree on a user message)
    pathArr = pathArr.slice(0, ui);
    leafId = pathArr.length ? pathArr[pathArr.length - 1].id : null;
    ctx = ctxTokens();
    if (rng.chance(0.5)) {
      tick(5000, 30000);
      const summary =
        "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n## Goal\n" +
        C.proseText(rng.int(150, 500)) + "\n\n## Progress\n### Done\n- [x] " + C.proseText(rng.int(200, 900)) +
        "\n\n## Next Steps\n1. " + C.proseText(rng.int(80, 300));
      const t = tok(summary.length);
      emit(
        { type: "branch_summary", fromId: leafId ?? "root", summary, details: { readFiles: [...readFiles].slice(-5), modifiedFiles: [...modFiles].slice(-3) }, fromHook: false },
        "other",
        t,
      );
      ctx += t;
      meta.branchSummaries++;
    }
  };

  // preamble like a real session
  emit({ type: "model_change", provider, modelId: model }, "other");
  emit({ type: "thinking_level_change", thinkingLevel: "medium" }, "other");
  let turns = 0;
  while (written < targetEntries) {
    turn();
    turns++;
    if (turns === 1) emit({ type: "session_info", name: C.proseText(30).slice(0, 60) }, "other");
    if (turns % branchEvery === branchEvery - 1 && written < targetEntries * 0.97) navigateBack();
    if (rng.chance(0.01)) {
      tick(1000, 5000);
      model = rng.pick(["claude-sonnet-4-5", "claude-opus-4-1", "claude-sonnet-4-5"]);
      emit({ type: "model_change", provider, modelId: model }, "other");
    }
    if (rng.chance(0.008)) emit({ type: "thinking_level_change", thinkingLevel: rng.pick(["low", "medium", "high", "off"]) }, "other");
    if (rng.chance(0.01)) {
      const target = pathArr[rng.int(0, pathArr.length - 1)].id;
      emit({ type: "label", targetId: target, label: rng.pick(["checkpoint", "good state", "before refactor", "bug repro"]) }, "other");
      meta.labels++;
    }
    if (rng.chance(0.02)) emit({ type: "custom", customType: "todo-extension", data: { items: [C.proseText(60), C.proseText(60)], version: 1 } }, "other");
  }
  out.close();
  meta.entries = written;
  meta.turns = turns;
  meta.bytes = out.bytes;
  meta.leafId = leafId;
  meta.pathLength = pathArr.length;
  meta.sessionId = sessionId;
  return meta;
}

// ---------------------------------------------------------------- CLI
const isMain = process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname);
if (isMain) {
  const a = parseArgs(process.argv);
  const common = {
    branchEvery: +(a["branch-every"] ?? 25),
    contextWindow: +(a["context-window"] ?? 200000),
    reserve: +(a.reserve ?? 16384),
    keep: +(a.keep ?? 20000),
    cwd: a.cwd ?? "/home/dev/project",
  };
  const seed = +(a.seed ?? 1);
  if (a.many) {
    const dir = a.dir;
    if (!dir) throw new Error("--dir required with --many");
    fs.mkdirSync(dir, { recursive: true });
    const n = +a.many, lo = +(a["min-entries"] ?? 20), hi = +(a["max-entries"] ?? 200);
    const pick = makeRng(seed);
    let bytes = 0, entries = 0;
    const pools = buildPools(makeRng(seed ^ 0x9e3779b9)); // shared text pools: much faster for many files
    for (let i = 0; i < n; i++) {
      const e = pick.int(lo, hi);
      const t = Date.UTC(2026, 0, 1) + i * 3600000 * 7;
      const name = `${new Date(t).toISOString().replace(/[:.]/g, "-")}_${String(i).padStart(4, "0")}-${seed}.jsonl`;
      const m = generateSession({ ...common, file: path.join(dir, name), entries: e, seed: seed * 100003 + i, startTime: t, branchEvery: 1000, pools });
      bytes += m.bytes; entries += m.entries;
    }
    console.log(JSON.stringify({ dir, sessions: n, entries, bytes }));
  } else {
    const file = a.out;
    if (!file) throw new Error("--out required");
    const meta = generateSession({ ...common, file, entries: +(a.entries ?? 1000), seed });
    fs.writeFileSync(file + ".meta.json", JSON.stringify(meta, null, 1));
    const { branches, ...short } = meta;
    console.log(JSON.stringify({ ...short, branches: branches.length }));
  }
}
