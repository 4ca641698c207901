#!/usr/bin/env node
// A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for recording session files
// with the real `pi` program (tests/pi/record/record.mjs). It streams SSE the way pi-ai's
// `openai-completions` client parses it (choices[0].delta.content / delta.tool_calls,
// finish_reason, then a final chunk with `usage`) and answers from a deterministic script:
//
//   * agent turns: the task is chosen by the last real user message (TASKS, in
//     loopback-script.mjs), the step by the number of assistant messages after it. A step is a
//     set of tool calls to Pi's built-in tools (read, bash, edit, write), which Pi really runs,
//     or a text answer;
//   * Pi's summarization requests (compaction history, compaction update, split-turn prefix,
//     branch summary; recognised by Pi's system prompt and instruction texts) get a structured
//     summary in Pi's format, built from the conversation text Pi sent (file paths, commands,
//     error lines, constraints, decisions), carrying the previous summary forward on updates.
//
// usage reports prompt_tokens = ceil(JSON length of messages + tools / 4), so Pi's context
// estimate grows with the conversation and Pi compacts at its own threshold.
//
//   node tests/pi/record/loopback-model.mjs [--port N]        prints "LOOPBACK_PORT=<port>"
//   LOOPBACK_LOG=requests.jsonl   append every request body (one JSON object a line)
//   POST /__control {"scenario": "<name>"}   select a scenario (resets its counters);
//   GET  /__stats                            counters per scenario.
//
// Deliberate defect, for Arbor's drop alarm: in scenario "print-autocompact" the history
// summary of the 3rd compaction leaves out every constraint that mentions ledger/legacy.py.

import crypto from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import { fileURLToPath } from "node:url";
import { SCENARIOS, TASKS } from "./loopback-script.mjs";

export const MODEL_ID = "scripted-13k";

// --------------------------------------------------------------------------------------------
// Helpers
// --------------------------------------------------------------------------------------------

const SUMMARIZER_SYSTEM_START = "You are a context summarization assistant.";
const TURN_PREFIX_MARK = "This is the PREFIX of a turn that was too large to keep.";
const BRANCH_MARK = "Create a structured summary of this conversation branch";
const COMPACTION_PREFIX = "The conversation history before this point was compacted into the following summary:";
const BRANCH_PREFIX = "The following is a summary of a branch that this conversation came back from:";
const TURN_CONTEXT_SEP = "\n\n---\n\n**Turn Context (split turn):**\n\n";

const sha = (s) => crypto.createHash("sha256").update(s).digest("hex");

function textOf(message) {
  if (!message) return "";
  const c = message.content;
  if (typeof c === "string") return c;
  if (Array.isArray(c)) return c.filter((p) => p && p.type === "text").map((p) => p.text).join("");
  return "";
}

function isRealUserMessage(m) {
  if (m.role !== "user") return false;
  const t = textOf(m);
  return !t.startsWith(COMPACTION_PREFIX) && !t.startsWith(BRANCH_PREFIX);
}

const bt = (s) => "`" + s + "`";
const shortCmd = (c) => (c.length > 72 ? `${c.slice(0, 69)}...` : c);
const uniq = (arr) => {
  const seen = new Set();
  const out = [];
  for (const x of arr) {
    const k = norm(x);
    if (!k || seen.has(k)) continue;
    seen.add(k);
    out.push(x);
  }
  return out;
};
function norm(s) {
  return String(s)
    .toLowerCase()
    .replace(/[`*_]/g, "")
    .replace(/^\[[ x]\]\s*/, "")
    .replace(/[^a-z0-9./()'"=:<>-]+/g, " ")
    .trim();
}

// --------------------------------------------------------------------------------------------
// Reading Pi's serialized conversation (serializeConversation in core/compaction/utils.js)
// --------------------------------------------------------------------------------------------

function parseConversation(text) {
  const parts = text.split(/\n\n(?=\[(?:User|Assistant|Assistant thinking|Assistant tool calls|Tool result)\]: )/);
  const records = [];
  for (const p of parts) {
    const m = /^\[(User|Assistant|Assistant thinking|Assistant tool calls|Tool result)\]: ([\s\S]*)$/.exec(p);
    if (!m) {
      if (records.length) records[records.length - 1].text += `\n\n${p}`;
      continue;
    }
    const kind = { User: "user", Assistant: "assistant", "Assistant thinking": "thinking", "Assistant tool calls": "calls", "Tool result": "result" }[m[1]];
    records.push({ kind, text: m[2] });
  }
  // Pair tool calls with their results, in order.
  const events = [];
  const pending = [];
  for (const r of records) {
    if (r.kind === "calls") {
      for (const call of parseToolCalls(r.text)) {
        const ev = { kind: "tool", ...call, result: null };
        events.push(ev);
        pending.push(ev);
      }
    } else if (r.kind === "result") {
      const ev = pending.shift();
      if (ev) ev.result = r.text;
    } else {
      events.push(r);
    }
  }
  return events;
}

/** Parses `name(k=<json>, k2=<json>); name2(...)`. */
function parseToolCalls(text) {
  const calls = [];
  let i = 0;
  const s = text;
  const skipWs = () => {
    while (i < s.length && /\s|;/.test(s[i])) i++;
  };
  const scanValue = () => {
    const start = i;
    if (s[i] === '"') {
      i++;
      while (i < s.length && s[i] !== '"') i += s[i] === "\\" ? 2 : 1;
      i++;
    } else if (s[i] === "{" || s[i] === "[") {
      let depth = 0;
      while (i < s.length) {
        const ch = s[i];
        if (ch === '"') {
          i++;
          while (i < s.length && s[i] !== '"') i += s[i] === "\\" ? 2 : 1;
        } else if (ch === "{" || ch === "[") depth++;
        else if (ch === "}" || ch === "]") {
          depth--;
          if (depth === 0) {
            i++;
            break;
          }
        }
        i++;
      }
    } else {
      while (i < s.length && s[i] !== "," && s[i] !== ")") i++;
    }
    const raw = s.slice(start, i);
    try {
      return JSON.parse(raw);
    } catch {
      return raw;
    }
  };
  while (i < s.length) {
    skipWs();
    const nm = /^[A-Za-z_][\w-]*/.exec(s.slice(i));
    if (!nm) break;
    i += nm[0].length;
    if (s[i] !== "(") break;
    i++;
    const args = {};
    while (i < s.length && s[i] !== ")") {
      const km = /^(\w+)=/.exec(s.slice(i));
      if (!km) break;
      i += km[0].length;
      args[km[1]] = scanValue();
      if (s.startsWith(", ", i)) i += 2;
    }
    i++; // ')'
    calls.push({ name: nm[0], args });
  }
  return calls;
}

// --------------------------------------------------------------------------------------------
// Facts from a conversation
// --------------------------------------------------------------------------------------------

const CONSTRAINT_RE = /\b(never|only|must|always|do not|don't|no new|without touching|not touch)\b/i;

function sentences(text) {
  return text
    .split(/\n+/)
    .flatMap((line) => line.replace(/^\s*[-*]\s+/, "").split(/(?<=[.!?])\s+(?=[A-Z`])/))
    .map((s) => s.trim())
    .filter(Boolean);
}

function goalOf(userText) {
  const first = sentences(userText)[0] || userText.trim();
  return first.replace(/:$/, "");
}

function constraintsOf(userText) {
  return sentences(userText)
    .slice(1)
    .filter((s) => CONSTRAINT_RE.test(s) && !/:$/.test(s));
}

function definedNames(code) {
  return [...String(code).matchAll(/^\s*(?:def|class) (\w+)/gm)].map((m) => m[1]);
}

function unittestFailures(out) {
  const fails = [];
  const re = /^(FAIL|ERROR): (\w+) \(([^)]*)\)\n-+\n([\s\S]*?)(?=\n={10,}|\n-{10,}\nRan |\n*(?![\s\S]))/gm;
  for (const m of out.matchAll(re)) {
    const lines = m[4].split("\n").map((l) => l.trim()).filter(Boolean);
    const last = [...lines].reverse().find((l) => /^[A-Z]\w*(Error|Exception)\b/.test(l)) || lines[lines.length - 1] || "";
    fails.push({ test: m[2], error: last });
  }
  return fails;
}

/** One-line outcome of a bash command, from its tool result. */
function bashOutcome(command, out) {
  out = out || "";
  const exit = /Command exited with code (\d+)/.exec(out);
  if (/command not found/.test(out)) return { text: "command not found", error: out.split("\n").find((l) => /command not found/.test(l))?.trim(), blocked: true };
  const ran = /^Ran (\d+) tests? in/m.exec(out);
  if (ran) {
    const fails = unittestFailures(out);
    const status = /^(OK|FAILED \([^)]*\))/m.exec(out)?.[1] || (exit ? `exit code ${exit[1]}` : "done");
    if (status === "OK") return { text: `${ran[1]} tests OK` };
    const detail = fails.map((f) => `${bt(f.test)}: ${bt(f.error)}`).join("; ");
    return { text: `${status}, ${ran[1]} tests${detail ? ` (${detail})` : ""}`, errors: fails.map((f) => `${f.test}: ${f.error}`) };
  }
  if (/Traceback \(most recent call last\)/.test(out)) {
    const err = out.split("\n").map((l) => l.trim()).filter((l) => /^[A-Z]\w*(Error|Exception)\b/.test(l)).pop();
    return { text: `failed with ${bt(err || "an exception")}`, errors: err ? [err] : [] };
  }
  const usage = /^usage: .*/m.exec(out);
  const lines = out.replace(/\n*Command exited with code \d+\s*$/, "").split("\n").filter((l) => l.trim());
  if (exit) return { text: `exit code ${exit[1]}${usage ? ` (${bt(usage[0])})` : lines.length ? ` (${bt(lines[lines.length - 1].trim())})` : ""}` };
  if (!lines.length || out.trim() === "(no output)") return { text: "no output" };
  const head = lines[0].trim();
  return { text: `${lines.length} line${lines.length === 1 ? "" : "s"} of output, first: ${bt(head.length > 70 ? `${head.slice(0, 67)}...` : head)}` };
}

function analyze(events) {
  const facts = {
    goals: [],
    constraints: [],
    done: [],
    blocked: [],
    decisions: [],
    next: [],
    critical: [],
    files: new Set(),
    commands: [],
    lastAssistantText: "",
    lastTool: null,
    users: [],
  };
  let readRun = [];
  const flushReads = () => {
    if (readRun.length) facts.done.push(`Read ${readRun.map(bt).join(", ")}`);
    readRun = [];
  };
  for (const ev of events) {
    if (ev.kind === "user") {
      flushReads();
      facts.users.push(ev.text);
      facts.goals.push(goalOf(ev.text));
      facts.constraints.push(...constraintsOf(ev.text));
      continue;
    }
    if (ev.kind === "assistant") {
      flushReads();
      facts.lastAssistantText = ev.text;
      for (const m of ev.text.matchAll(/^- \*\*(.+?)\*\*: (.+)$/gm)) facts.decisions.push(`**${m[1]}**: ${m[2]}`);
      const next = [...ev.text.matchAll(/^Next: (.+)$/gm)].map((m) => m[1].charAt(0).toUpperCase() + m[1].slice(1));
      facts.next = next; // the latest answer decides what is next
      continue;
    }
    if (ev.kind !== "tool") continue;
    facts.lastTool = ev;
    const { name, args } = ev;
    const result = ev.result || "";
    const failed = /^(Could not find|Error|ENOENT)/.test(result) || /Command exited with code/.test(result);
    if (typeof args.path === "string") facts.files.add(args.path);
    if (name === "read") {
      readRun.push(args.path);
      continue;
    }
    flushReads();
    if (name === "write") {
      const names = definedNames(args.content);
      facts.done.push(`Wrote ${bt(args.path)}${names.length ? ` (${names.map((n) => bt(n)).join(", ")})` : ""}`);
    } else if (name === "edit") {
      const edits = Array.isArray(args.edits) ? args.edits : [];
      const touched = uniq(edits.flatMap((e) => definedNames(`${e.oldText}\n${e.newText}`)));
      const what = touched.length ? ` (${touched.map(bt).join(", ")})` : edits.some((e) => /import/.test(e.newText)) ? " (imports)" : "";
      if (/^Could not find/.test(result)) facts.done.push(`Tried to edit ${bt(args.path)} but the edit did not apply: ${result.split("\n")[0]}`);
      else facts.done.push(`Edited ${bt(args.path)}${what}: ${edits.length} replacement${edits.length === 1 ? "" : "s"}`);
    } else if (name === "bash") {
      const o = bashOutcome(args.command, result);
      facts.commands.push(args.command);
      facts.done.push(`Ran ${bt(shortCmd(args.command))} → ${o.text}`);
      if (o.blocked) facts.blocked.push(`${bt(args.command)} → ${o.error || "command not found"}`);
      for (const e of o.errors || []) {
        if (facts.critical.some((c) => c.endsWith(bt(e)))) continue;
        facts.critical.push(`${bt(shortCmd(args.command))}: ${bt(e)}`);
      }
    } else {
      facts.done.push(`Called ${name}${failed ? " (failed)" : ""}`);
    }
  }
  flushReads();
  return facts;
}

// --------------------------------------------------------------------------------------------
// Structured summaries (Pi's format)
// --------------------------------------------------------------------------------------------

const EMPTY = () => ({ goal: [], constraints: [], done: [], inProgress: [], blocked: [], decisions: [], next: [], critical: [] });

/** Parses a previous summary: main sections, and the turn-context part (kept separately). */
function parseSummary(summary) {
  let text = summary;
  const app = text.search(/\n\n<(read-files|modified-files)>/);
  if (app >= 0) text = text.slice(0, app);
  let turn = null;
  const t = text.indexOf(TURN_CONTEXT_SEP);
  if (t >= 0) {
    turn = text.slice(t + TURN_CONTEXT_SEP.length);
    text = text.slice(0, t);
  }
  const s = EMPTY();
  let cur = null;
  const map = {
    "## Goal": "goal",
    "## Constraints & Preferences": "constraints",
    "### Done": "done",
    "### In Progress": "inProgress",
    "### Blocked": "blocked",
    "## Key Decisions": "decisions",
    "## Next Steps": "next",
    "## Critical Context": "critical",
  };
  for (const line of text.split("\n")) {
    const h = line.trim();
    if (h in map) {
      cur = map[h];
      continue;
    }
    if (/^#/.test(h)) {
      cur = null;
      continue;
    }
    if (!cur || !h) continue;
    const item = h.replace(/^(- \[[ x]\] |- |\d+\. )/, "").trim();
    if (!item || /^\(none\)$/.test(item)) continue;
    s[cur].push(item);
  }
  const turnParts = { request: "", early: [], context: [] };
  if (turn) {
    let sec = null;
    for (const line of turn.split("\n")) {
      const h = line.trim();
      if (h === "## Original Request") sec = "request";
      else if (h === "## Early Progress") sec = "early";
      else if (h === "## Context for Suffix") sec = "context";
      else if (h && sec === "request") turnParts.request += (turnParts.request ? " " : "") + h;
      else if (h && sec) turnParts[sec].push(h.replace(/^- /, ""));
    }
  }
  return { sections: s, turn: turn ? turnParts : null };
}

function renderSummary(s, { critical = true } = {}) {
  const bullets = (arr, prefix = "- ", none = "(none)") => (arr.length ? arr.map((x) => `${prefix}${x}`).join("\n") : `- ${none}`);
  const out = [
    "## Goal",
    bullets(s.goal),
    "",
    "## Constraints & Preferences",
    bullets(s.constraints),
    "",
    "## Progress",
    "### Done",
    bullets(s.done, "- [x] "),
    "",
    "### In Progress",
    bullets(s.inProgress, "- [ ] "),
    "",
    "### Blocked",
    bullets(s.blocked),
    "",
    "## Key Decisions",
    bullets(s.decisions),
    "",
    "## Next Steps",
    s.next.length ? s.next.map((x, i) => `${i + 1}. ${x}`).join("\n") : "1. Wait for the user's next request",
  ];
  if (critical) out.push("", "## Critical Context", bullets(s.critical));
  return out.join("\n");
}

function withFocus(s, facts, focus) {
  if (focus && /file path|command/i.test(focus)) {
    const files = [...facts.files];
    if (files.length) s.critical.push(`Files touched: ${files.map(bt).join(", ")}`);
    for (const c of uniq(facts.commands)) s.critical.push(`Command: ${bt(c)}`);
  }
  return s;
}

/** Light rewording of a previous turn-prefix progress item when it is folded into Done. */
function reword(item) {
  return item
    .replace(/^Read /, "Looked at ")
    .replace(/^Ran (`[^`]*`) → /, "$1 gave: ")
    .replace(/^Wrote /, "Created ")
    .replace(/^Edited /, "Changed ");
}

/** Appends `from`'s goal, constraints, done, blocked, decisions and critical items to `s`. */
function carryOver(s, from) {
  s.goal.push(...from.goal);
  s.constraints.push(...from.constraints);
  s.done.push(...from.done);
  s.blocked.push(...from.blocked);
  s.decisions.push(...from.decisions);
  s.critical.push(...from.critical);
}

/** A previous split turn's prefix is now history: fold it into the main sections (its request
 * becomes a goal, its early progress becomes done) instead of copying it. */
function foldTurnPrefix(s, turn) {
  if (!turn) return;
  if (turn.request) {
    s.goal.push(goalOf(turn.request));
    s.constraints.push(...constraintsOf(turn.request));
  }
  s.done.push(...turn.early.filter((x) => !/^\(none/.test(x)).map(reword));
  s.critical.push(...turn.context.filter((x) => x.startsWith("Error seen: ")).map((x) => x.slice("Error seen: ".length)));
}

function historySummary(conversationText, previousSummary, focus, dropPattern) {
  const facts = analyze(parseConversation(conversationText));
  const s = EMPTY();
  if (previousSummary && previousSummary.trim() !== "No prior history.") {
    const prev = parseSummary(previousSummary);
    carryOver(s, prev.sections);
    foldTurnPrefix(s, prev.turn);
    // Items that were in progress before and now show up as done are dropped from in-progress.
  } else if (previousSummary) {
    // "No prior history." + turn context: the turn context still carries the original request.
    foldTurnPrefix(s, parseSummary(previousSummary).turn);
  }
  carryOver(s, { ...facts, goal: facts.goals });
  s.next = facts.next.length ? [...facts.next] : [];
  s.inProgress = s.next.length ? [s.next[0]] : [];
  for (const k of Object.keys(s)) s[k] = uniq(s[k]);
  withFocus(s, facts, focus);
  if (dropPattern) {
    s.constraints = s.constraints.filter((c) => !dropPattern.test(c));
    s.critical = s.critical.filter((c) => !dropPattern.test(c) || !/never|frozen|touch/i.test(c));
  }
  if (s.goal.length === 0) s.goal.push("Continue the coding session in this repository");
  return renderSummary(s);
}

function turnPrefixSummary(conversationText) {
  const events = parseConversation(conversationText);
  const facts = analyze(events);
  const request = facts.users[0] || "(not shown)";
  const lines = ["## Original Request", request.trim(), "", "## Early Progress"];
  lines.push(...(facts.done.length ? facts.done.map((d) => `- ${d}`) : ["- (none yet)"]));
  for (const d of facts.decisions) lines.push(`- ${d}`);
  lines.push("", "## Context for Suffix");
  const ctx = [];
  const modified = facts.done.filter((d) => /^(Wrote|Edited) /.test(d)).map((d) => /`([^`]+)`/.exec(d)?.[1]).filter(Boolean);
  if (modified.length) ctx.push(`Files changed so far in this turn: ${uniq(modified).map(bt).join(", ")}`);
  for (const c of facts.critical) ctx.push(`Error seen: ${c}`);
  if (facts.lastTool) {
    const t = facts.lastTool;
    const label = t.name === "bash" ? `${bt(shortCmd(t.args.command))}` : `${t.name} ${bt(t.args.path || "")}`;
    ctx.push(`Last step before the kept part: ${label}`);
  }
  if (facts.blocked.length) ctx.push(`Unavailable: ${facts.blocked.join("; ")}`);
  lines.push(...(ctx.length ? ctx.map((c) => `- ${c}`) : ["- (none)"]));
  return lines.join("\n");
}

function branchSummary(conversationText, focus) {
  const facts = analyze(parseConversation(conversationText));
  const s = EMPTY();
  s.goal = uniq(facts.goals);
  s.constraints = uniq(facts.constraints);
  // Branch entries carry tool calls but no tool results: report what was attempted.
  s.done = uniq(facts.done.map((d) => d.replace(/ → no output$/, "")));
  s.decisions = uniq(facts.decisions);
  s.next = facts.next.length ? facts.next : ["Decide whether to reapply any of this branch's changes on the current branch"];
  s.inProgress = [];
  withFocus(s, facts, focus);
  return renderSummary(s, { critical: false });
}

// --------------------------------------------------------------------------------------------
// Request handling
// --------------------------------------------------------------------------------------------

function makeState() {
  return { scenario: "default", counters: {}, lastAgentPrefix: "" };
}

function counters(state) {
  state.counters[state.scenario] ??= { agent: 0, history: 0, update: 0, turnPrefix: 0, branch: 0 };
  return state.counters[state.scenario];
}

/** Decide the answer for one chat-completions request body. */
export function answer(body, state = makeState()) {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const system = messages.find((m) => m.role === "system" || m.role === "developer");
  const c = counters(state);
  if (textOf(system).startsWith(SUMMARIZER_SYSTEM_START)) {
    const prompt = textOf(messages.filter((m) => m.role === "user").pop());
    const conv = /<conversation>\n([\s\S]*?)\n<\/conversation>/.exec(prompt)?.[1] ?? "";
    const prev = /<previous-summary>\n([\s\S]*?)\n<\/previous-summary>/.exec(prompt)?.[1];
    const focus = /\n\nAdditional focus: ([\s\S]*)$/.exec(prompt)?.[1];
    if (prompt.includes(TURN_PREFIX_MARK)) {
      c.turnPrefix++;
      return { kind: "turn-prefix", text: turnPrefixSummary(conv) };
    }
    if (prompt.includes(BRANCH_MARK) || prompt.includes("conversation branch")) {
      c.branch++;
      return { kind: "branch", text: branchSummary(conv, focus) };
    }
    c.history++;
    if (prev !== undefined) c.update++;
    const sc = SCENARIOS[state.scenario];
    const drop = sc && sc.dropConstraintAtHistorySummary === c.history ? sc.dropPattern : null;
    return { kind: prev !== undefined ? "update" : "history", text: historySummary(conv, prev, focus, drop), dropped: !!drop };
  }

  c.agent++;
  let lastUser = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (isRealUserMessage(messages[i])) {
      lastUser = i;
      break;
    }
  }
  const userText = lastUser >= 0 ? textOf(messages[lastUser]) : "";
  const step = messages.slice(lastUser + 1).filter((m) => m.role === "assistant").length;
  const task = TASKS.find((t) => t.match.test(userText.trim()));
  if (!task) return { kind: "agent", task: null, step, text: `I have no scripted answer for this request: "${userText.slice(0, 80)}".` };
  const s = task.steps[Math.min(step, task.steps.length - 1)];
  if (step >= task.steps.length) return { kind: "agent", task: task.name, step, text: "Done." };
  if (s.calls) return { kind: "agent", task: task.name, step, toolCalls: s.calls.map(([name, args]) => ({ name, args })) };
  const results = messages.slice(lastUser + 1).filter((m) => m.role === "tool").map(textOf);
  const ctx = {
    results,
    /** First match of `re` in this turn's tool results (earliest first), or `fallback`. */
    find: (re, fallback = "") => {
      for (let i = 0; i < results.length; i++) {
        const m = re.exec(results[i]);
        if (m) return m[0];
      }
      return fallback;
    },
  };
  return { kind: "agent", task: task.name, step, text: typeof s.text === "function" ? s.text(ctx) : s.text };
}

function usageFor(body, reply, state, isAgent) {
  const promptText = JSON.stringify(body.messages ?? []) + JSON.stringify(body.tools ?? []);
  const prompt = Math.ceil(promptText.length / 4);
  const outText = (reply.text ?? "") + (reply.toolCalls ?? []).map((t) => t.name + JSON.stringify(t.args)).join("");
  const completion = Math.max(1, Math.ceil(outText.length / 4));
  // Prompt caching the way OpenAI reports it: the shared prefix with the previous agent request,
  // in 128-token blocks, once it reaches 1024 tokens.
  let cached = 0;
  if (isAgent) {
    const prev = state.lastAgentPrefix;
    let n = 0;
    const max = Math.min(prev.length, promptText.length);
    while (n < max && prev.charCodeAt(n) === promptText.charCodeAt(n)) n++;
    const tok = Math.floor(n / 4);
    cached = tok >= 1024 ? Math.floor(tok / 128) * 128 : 0;
    state.lastAgentPrefix = promptText;
  }
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: Math.min(cached, prompt) },
  };
}

function sseChunks(body, reply, usage) {
  const nonSystem = JSON.stringify((body.messages ?? []).filter((m) => m.role !== "system" && m.role !== "developer"));
  const id = `chatcmpl-${sha(nonSystem).slice(0, 24)}`;
  const base = { id, object: "chat.completion.chunk", created: 1767225600, model: body.model || MODEL_ID };
  const chunk = (delta, finish = null) => ({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] });
  const out = [chunk({ role: "assistant", content: "" })];
  if (reply.toolCalls) {
    reply.toolCalls.forEach((tc, index) => {
      const callId = `call_${sha(`${nonSystem}#${index}`).slice(0, 22)}`;
      const args = JSON.stringify(tc.args);
      out.push(chunk({ tool_calls: [{ index, id: callId, type: "function", function: { name: tc.name, arguments: "" } }] }));
      for (let i = 0; i < args.length; i += 200) out.push(chunk({ tool_calls: [{ index, function: { arguments: args.slice(i, i + 200) } }] }));
    });
    out.push(chunk({}, "tool_calls"));
  } else {
    const text = reply.text ?? "";
    for (let i = 0; i < text.length; i += 120) out.push(chunk({ content: text.slice(i, i + 120) }));
    out.push(chunk({}, "stop"));
  }
  out.push({ ...base, choices: [], usage });
  return out;
}

export function startLoopbackModel({ port = 0, logFile = process.env.LOOPBACK_LOG } = {}) {
  const state = makeState();
  const server = http.createServer((req, res) => {
    let raw = "";
    req.setEncoding("utf8");
    req.on("data", (d) => (raw += d));
    req.on("end", () => {
      try {
        handle(req, res, raw);
      } catch (e) {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: String(e?.stack || e) } }));
      }
    });
  });
  function handle(req, res, raw) {
    const url = req.url.split("?")[0];
    if (req.method === "POST" && url === "/__control") {
      const cmd = raw ? JSON.parse(raw) : {};
      if (cmd.scenario) {
        state.scenario = cmd.scenario;
        state.counters[cmd.scenario] = undefined;
        state.lastAgentPrefix = "";
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ scenario: state.scenario }));
      return;
    }
    if (req.method === "GET" && url === "/__stats") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(state.counters));
      return;
    }
    if (req.method === "GET" && url.endsWith("/models")) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ object: "list", data: [{ id: MODEL_ID, object: "model", owned_by: "arbor" }] }));
      return;
    }
    if (req.method !== "POST" || !url.endsWith("/chat/completions")) {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `no route ${req.method} ${url}` } }));
      return;
    }
    const body = JSON.parse(raw);
    const reply = answer(body, state);
    const usage = usageFor(body, reply, state, reply.kind === "agent");
    if (logFile) {
      fs.appendFileSync(logFile, `${JSON.stringify({ scenario: state.scenario, kind: reply.kind, task: reply.task, step: reply.step, dropped: reply.dropped, usage, body })}\n`);
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    for (const ch of sseChunks(body, reply, usage)) res.write(`data: ${JSON.stringify(ch)}\n\n`);
    res.end("data: [DONE]\n\n");
  }
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      resolve({ port: server.address().port, server, state, close: () => new Promise((r) => server.close(() => r())) });
    });
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === fs.realpathSync(process.argv[1])) {
  const i = process.argv.indexOf("--port");
  const port = i > 0 ? Number(process.argv[i + 1]) : 0;
  const { port: actual, close } = await startLoopbackModel({ port });
  process.stdout.write(`LOOPBACK_PORT=${actual}\n`);
  const stop = () => close().then(() => process.exit(0));
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}
