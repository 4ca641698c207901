/**
 * Arbor's Pi extension: before Pi writes a compaction or a branch summary, ask Arbor.
 *
 * On `session_before_compact` it makes Pi's own draft with Pi's exported `compact()` (Pi's model,
 * credentials, prompt and thinking level, Pi's abort signal passed through), sends it to Arbor over
 * a private Unix socket, and returns what Arbor answers: accept, an edited summary, another cut
 * (drafted again for the new span), cancel, or "let Pi decide". `session_before_tree` does the same
 * for branch summaries. The protocol is written down in docs/PI-REVIEW-PROTOCOL.md of the Arbor
 * repository.
 *
 * Arbor not running (no socket, connection refused): Pi goes on at once, exactly as without this
 * extension. Arbor silent past the time limit, a malformed or oversized answer, an error answer, or
 * Pi aborting: Pi goes on with its own draft and one line says why (ctx.ui.notify with a UI, else
 * stderr).
 *
 * This file is installed verbatim by `arbor-cli pi install-extension`. A load error in any extension
 * stops Pi from starting, so it imports nothing Pi does not ship: only @mariozechner/pi-coding-agent
 * and Node built-ins.
 *
 * Environment: ARBOR_REVIEW_SOCKET (socket path), ARBOR_REVIEW_TIMEOUT_MS (the longest wait for an
 * answer), ARBOR_REVIEW_DISABLE=1 (never ask), ARBOR_REVIEW_TRACE=FILE (one JSON line of timings per
 * review, for measurements).
 */
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { compact, findTurnStartIndex, generateBranchSummary, getAgentDir, SettingsManager, VERSION } from "@mariozechner/pi-coding-agent";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";

/** This extension's version; `arbor-cli pi status` reads it from the installed file. */
export const ARBOR_EXTENSION_VERSION = "0.1.0";
/**
 * The Pi release this extension is written and tested against. `arbor-cli pi install-extension`
 * reads it here and warns when the user's Pi is of another line (0.73.x counts as this one).
 */
export const TESTED_PI_VERSION = "0.73.1";
/** The review protocol this extension speaks (docs/PI-REVIEW-PROTOCOL.md). */
export const PROTOCOL_VERSION = 1;
/** The longest line either side may send, newline excluded. */
export const MAX_LINE_BYTES = 4 * 1024 * 1024;
/** How long the server may take to greet after the connection is accepted. */
export const HELLO_TIMEOUT_MS = 2000;
/** Added to the server's announced review time limit before this side gives up. */
export const ANSWER_GRACE_MS = 2000;
/** The server's limit when its greeting does not name one (Arbor's default review time). */
export const DEFAULT_REVIEW_MS = 5 * 60 * 1000;
/** A first review plus at most two moved cuts. */
export const MAX_ROUNDS = 3;

type Env = Record<string, string | undefined>;

/** Where Arbor listens: $ARBOR_REVIEW_SOCKET, else $XDG_RUNTIME_DIR/arbor/review.sock, else /tmp/arbor-<uid>/review.sock. */
export function socketPath(env: Env = process.env, uid: number | undefined = process.getuid?.()): string | undefined {
  if (env.ARBOR_REVIEW_SOCKET) return env.ARBOR_REVIEW_SOCKET;
  const runtime = env.XDG_RUNTIME_DIR;
  if (runtime && path.isAbsolute(runtime)) return path.join(runtime, "arbor", "review.sock");
  if (uid === undefined) return undefined;
  return path.join("/tmp", `arbor-${uid}`, "review.sock");
}

/** Why a review ended without a usable answer (each becomes one line for the person). */
export class ReviewStop extends Error {
  code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

/**
 * The socket's folder must be a directory of this user that no one else can write to or list;
 * otherwise someone else could stand in for Arbor. Returns a reason to skip, "absent", or "".
 */
export function checkSocketFolder(sock: string, uid: number | undefined = process.getuid?.()): string {
  const dir = path.dirname(sock);
  let st: fs.Stats;
  try {
    st = fs.lstatSync(dir);
  } catch {
    return "absent";
  }
  if (!st.isDirectory()) return `${dir} is not a directory`;
  if (uid !== undefined && st.uid !== uid) return `${dir} belongs to uid ${st.uid}, not to you (uid ${uid})`;
  if ((st.mode & 0o077) !== 0) return `${dir} is open to other users (mode ${(st.mode & 0o777).toString(8)}; Arbor makes it 700)`;
  return "";
}

/** Newline-delimited JSON over one socket, with a size limit, time limits and Pi's abort signal. */
export class LineConn {
  socket: net.Socket;
  private chunks: Buffer[] = [];
  private pending = 0;
  private lines: string[] = [];
  private failure: ReviewStop | undefined;
  private wake: (() => void) | undefined;

  constructor(socket: net.Socket) {
    this.socket = socket;
    socket.on("data", (d: Buffer) => this.onData(d));
    socket.on("end", () => this.fail(new ReviewStop("closed", "Arbor closed the connection without answering")));
    socket.on("close", () => this.fail(new ReviewStop("closed", "Arbor closed the connection without answering")));
    socket.on("error", (e: Error) => this.fail(new ReviewStop("closed", `the connection to Arbor failed (${e.message})`)));
  }

  private onData(d: Buffer) {
    let start = 0;
    for (;;) {
      const nl = d.indexOf(10, start);
      if (nl < 0) break;
      this.chunks.push(d.subarray(start, nl));
      this.pending += nl - start;
      if (this.pending > MAX_LINE_BYTES) return this.oversized();
      this.lines.push(Buffer.concat(this.chunks).toString("utf8"));
      this.chunks = [];
      this.pending = 0;
      start = nl + 1;
    }
    if (start < d.length) {
      this.chunks.push(d.subarray(start));
      this.pending += d.length - start;
      if (this.pending > MAX_LINE_BYTES) return this.oversized();
    }
    this.poke();
  }

  private oversized() {
    this.chunks = [];
    this.pending = 0;
    this.fail(new ReviewStop("oversized", `Arbor's answer is larger than ${MAX_LINE_BYTES} bytes`));
    this.socket.destroy();
  }

  private fail(e: ReviewStop) {
    if (!this.failure) this.failure = e;
    this.poke();
  }

  private poke() {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  send(message: unknown) {
    const line = JSON.stringify(message);
    if (Buffer.byteLength(line) > MAX_LINE_BYTES) throw new ReviewStop("too-large", `the review request is larger than ${MAX_LINE_BYTES} bytes`);
    this.socket.write(`${line}\n`);
  }

  /** The next line as parsed JSON (an object), or a ReviewStop. */
  next(timeoutMs: number, signal: AbortSignal | undefined, what: string): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const done = (f: () => void) => {
        if (timer) clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        this.wake = undefined;
        f();
      };
      const onAbort = () => done(() => reject(new ReviewStop("aborted", `Pi cancelled while Arbor was reviewing the ${what}`)));
      const check = () => {
        if (this.lines.length > 0) {
          const line = this.lines.shift() as string;
          let value: unknown;
          try {
            value = JSON.parse(line);
          } catch {
            return done(() => reject(new ReviewStop("malformed", "Arbor's answer is not JSON")));
          }
          if (!value || typeof value !== "object" || Array.isArray(value)) return done(() => reject(new ReviewStop("malformed", "Arbor's answer is not a JSON object")));
          return done(() => resolve(value as Record<string, unknown>));
        }
        if (this.failure) {
          const f = this.failure;
          return done(() => reject(f));
        }
        this.wake = check;
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener("abort", onAbort, { once: true });
      timer = setTimeout(() => done(() => reject(new ReviewStop("timeout", `Arbor did not answer within ${formatMs(timeoutMs)}`))), timeoutMs);
      check();
    });
  }

  close() {
    this.socket.destroy();
  }
}

function formatMs(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 100) / 10} s` : `${ms} ms`;
}

/** Connects to Arbor's socket; `undefined` at once when Arbor is not there (no socket, refused). */
export function connect(sock: string, signal?: AbortSignal): Promise<net.Socket | undefined> {
  return new Promise((resolve) => {
    const s = net.createConnection({ path: sock });
    let settled = false;
    const finish = (v: net.Socket | undefined) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      s.removeAllListeners("connect");
      s.removeAllListeners("error");
      if (!v) s.destroy();
      resolve(v);
    };
    // A Unix socket connects or fails at once; the timer only guards against a stuck kernel queue.
    const timer = setTimeout(() => finish(undefined), HELLO_TIMEOUT_MS);
    s.once("connect", () => finish(s));
    s.once("error", () => finish(undefined));
    if (signal?.aborted) finish(undefined);
  });
}

/** The greeting: protocol check and the server's time limit. Throws a ReviewStop. */
export function readHello(hello: Record<string, unknown>): { timeoutMs: number; policy: string; server: string } {
  if (hello.type === "error") throw new ReviewStop(String(hello.code ?? "error"), `Arbor refused: ${String(hello.message ?? "no reason given")}`);
  if (hello.type !== "hello" || hello.arbor !== "review") throw new ReviewStop("malformed", "the program on Arbor's socket does not speak Arbor's review protocol");
  if (hello.protocol !== PROTOCOL_VERSION)
    throw new ReviewStop(
      "protocol",
      `Arbor speaks review protocol ${String(hello.protocol)} and this extension speaks ${PROTOCOL_VERSION}: run \`arbor-cli pi install-extension\` with the Arbor you use to update it`,
    );
  const t = hello.timeoutMs;
  return {
    timeoutMs: typeof t === "number" && Number.isFinite(t) && t > 0 ? t : DEFAULT_REVIEW_MS,
    policy: typeof hello.policy === "string" ? hello.policy : "review",
    server: typeof hello.server === "string" ? hello.server : "Arbor",
  };
}

export type Decision =
  | { decision: "accept" }
  | { decision: "edit"; summary: string }
  | { decision: "move_cut"; firstKeptEntryId: string }
  | { decision: "cancel" }
  | { decision: "pi_decides" };

/** Checks an answer line; a ReviewStop for anything that is not a well-formed decision. */
export function readAnswer(a: Record<string, unknown>, requestId: string, kind: "compaction" | "branch_summary", round = 1): Decision & { note?: string } {
  if (a.type === "error") throw new ReviewStop(String(a.code ?? "error"), `Arbor refused the request: ${String(a.message ?? "no reason given")}`);
  if (a.type !== "answer" || a.protocol !== PROTOCOL_VERSION) throw new ReviewStop("malformed", "Arbor's answer is not a protocol 1 answer");
  if (a.requestId !== requestId || (a.round !== undefined && a.round !== round)) throw new ReviewStop("malformed", "Arbor answered another request");
  const note = typeof a.note === "string" ? a.note : undefined;
  switch (a.decision) {
    case "accept":
    case "cancel":
    case "pi_decides":
      return { decision: a.decision, note };
    case "edit":
      if (typeof a.summary !== "string" || a.summary.trim() === "") throw new ReviewStop("malformed", "Arbor's edited summary is empty or not text");
      return { decision: "edit", summary: a.summary, note };
    case "move_cut":
      if (kind !== "compaction") throw new ReviewStop("malformed", "Arbor asked to move the cut of a branch summary, which has none");
      if (typeof a.firstKeptEntryId !== "string" || a.firstKeptEntryId === "") throw new ReviewStop("malformed", "Arbor's new cut names no entry");
      return { decision: "move_cut", firstKeptEntryId: a.firstKeptEntryId, note };
    default:
      throw new ReviewStop("malformed", `Arbor's answer has an unknown decision (${JSON.stringify(a.decision)})`);
  }
}

// -------------------------------------------------------------------------------------------
// A preparation for another cut (Pi exports compact() but not prepareCompaction()).
// -------------------------------------------------------------------------------------------

type AnyEntry = Record<string, any>;

/** Pi's findValidCutPoints, for one entry. */
export function isValidCutPoint(entry: AnyEntry): boolean {
  if (entry.type === "branch_summary" || entry.type === "custom_message") return true;
  if (entry.type !== "message") return false;
  const role = entry.message?.role;
  return role === "bashExecution" || role === "custom" || role === "branchSummary" || role === "compactionSummary" || role === "user" || role === "assistant";
}

/** Pi's getMessageFromEntryForCompaction. */
function compactionMessage(entry: AnyEntry): AnyEntry | undefined {
  const ts = (t: string) => new Date(t).getTime();
  if (entry.type === "message") return entry.message;
  if (entry.type === "custom_message")
    return { role: "custom", customType: entry.customType, content: entry.content, display: entry.display, details: entry.details, timestamp: ts(entry.timestamp) };
  if (entry.type === "branch_summary") return { role: "branchSummary", summary: entry.summary, fromId: entry.fromId, timestamp: ts(entry.timestamp) };
  return undefined;
}

/** Pi's extractFileOpsFromMessage. */
function addFileOps(message: AnyEntry, ops: { read: Set<string>; written: Set<string>; edited: Set<string> }) {
  if (message.role !== "assistant" || !Array.isArray(message.content)) return;
  for (const block of message.content) {
    if (!block || typeof block !== "object" || block.type !== "toolCall" || !("arguments" in block) || !("name" in block)) continue;
    const args = block.arguments;
    if (!args || typeof args.path !== "string" || !args.path) continue;
    if (block.name === "read") ops.read.add(args.path);
    else if (block.name === "write") ops.written.add(args.path);
    else if (block.name === "edit") ops.edited.add(args.path);
  }
}

function describe(entry: AnyEntry): string {
  if (entry.type === "message") return entry.message?.role === "toolResult" ? "tool result" : `${entry.message?.role ?? "unknown"} message`;
  return `${entry.type} entry`;
}

/** Where the span to summarize starts: the previous compaction's kept entry (Pi's boundaryStart). */
function boundaryStart(entries: AnyEntry[]): number {
  for (let i = entries.length - 1; i >= 0; i--) {
    if (entries[i].type === "compaction") {
      const k = entries.findIndex((e) => e.id === entries[i].firstKeptEntryId);
      return k >= 0 ? k : i + 1;
    }
  }
  return 0;
}

/** The valid cut points of `entries` (the branch being compacted), as indices. */
export function validCuts(entries: AnyEntry[]): number[] {
  const start = boundaryStart(entries);
  const out: number[] = [];
  let seenMessage = false;
  for (let i = start; i < entries.length; i++) {
    if (seenMessage && isValidCutPoint(entries[i])) out.push(i);
    if (entries[i].type !== "compaction" && compactionMessage(entries[i])) seenMessage = true;
  }
  return out;
}

/**
 * Pi's prepareCompaction with the cut at `firstKeptEntryId` instead of where keepRecentTokens puts
 * it: the same span start, split-turn rule, messages and file operations. Pi does not check a
 * returned firstKeptEntryId, so this does: the entry must be on the branch, a valid cut point (not
 * a tool result), not before the previous compaction's kept entry, with something before it to
 * summarize. Throws a ReviewStop naming the nearest valid cut points otherwise.
 */
export function preparationForCut(entries: AnyEntry[], firstKeptEntryId: string, base: AnyEntry): AnyEntry {
  const start = boundaryStart(entries);
  const cut = entries.findIndex((e) => e.id === firstKeptEntryId);
  const valid = validCuts(entries);
  const nearest = () => {
    const around = cut < 0 ? valid.slice(-3) : [...valid.filter((i) => i < cut).slice(-1), ...valid.filter((i) => i > cut).slice(0, 1)];
    return around.length ? `; nearest valid: ${around.map((i) => entries[i].id).join(", ")}` : "; this branch has no valid cut point";
  };
  if (cut < 0) throw new ReviewStop("invalid-cut", `Arbor's cut ${firstKeptEntryId} is not on the branch being compacted${nearest()}`);
  if (!valid.includes(cut)) {
    const why = cut < start ? "is before the previous compaction's kept entry" : !isValidCutPoint(entries[cut]) ? `is a ${describe(entries[cut])}, not a valid cut point` : "leaves nothing to summarize";
    throw new ReviewStop("invalid-cut", `Arbor's cut ${firstKeptEntryId} ${why}${nearest()}`);
  }
  const entry = entries[cut];
  const isUser = entry.type === "message" && entry.message?.role === "user";
  const turnStart = isUser ? -1 : findTurnStartIndex(entries as any, cut, start);
  const isSplitTurn = !isUser && turnStart !== -1;
  const historyEnd = isSplitTurn ? turnStart : cut;
  const collect = (from: number, to: number) => {
    const out: AnyEntry[] = [];
    for (let i = from; i < to; i++) {
      if (entries[i].type === "compaction") continue;
      const m = compactionMessage(entries[i]);
      if (m) out.push(m);
    }
    return out;
  };
  const messagesToSummarize = collect(start, historyEnd);
  const turnPrefixMessages = isSplitTurn ? collect(turnStart, cut) : [];
  const fileOps = { read: new Set<string>(), written: new Set<string>(), edited: new Set<string>() };
  for (let i = entries.length - 1; i >= 0; i--) {
    if (entries[i].type !== "compaction") continue;
    const prev = entries[i];
    if (!prev.fromHook && prev.details) {
      if (Array.isArray(prev.details.readFiles)) for (const f of prev.details.readFiles) fileOps.read.add(f);
      if (Array.isArray(prev.details.modifiedFiles)) for (const f of prev.details.modifiedFiles) fileOps.edited.add(f);
    }
    break;
  }
  for (const m of messagesToSummarize) addFileOps(m, fileOps);
  for (const m of turnPrefixMessages) addFileOps(m, fileOps);
  return {
    firstKeptEntryId,
    messagesToSummarize,
    turnPrefixMessages,
    isSplitTurn,
    tokensBefore: base.tokensBefore,
    previousSummary: base.previousSummary,
    fileOps,
    settings: base.settings,
  };
}

// -------------------------------------------------------------------------------------------
// The extension
// -------------------------------------------------------------------------------------------

/** What the extension uses from Pi and the process; tests replace parts of it. */
export interface Deps {
  compact: typeof compact;
  generateBranchSummary: typeof generateBranchSummary;
  branchReserveTokens: (cwd: string) => number | undefined;
  env: Env;
  piVersion: string;
  now: () => number;
}

export const defaultDeps: Deps = {
  compact,
  generateBranchSummary,
  branchReserveTokens: (cwd: string) => SettingsManager.create(cwd, getAgentDir()).getBranchSummarySettings().reserveTokens,
  env: process.env,
  piVersion: VERSION,
  now: () => performance.now(),
};

let requestCounter = 0;

/**
 * What a handler needs from Pi's context, read before its first `await`: in print mode Pi
 * disposes the session (and its extension contexts) while an automatic compaction still runs,
 * and a context read after that throws.
 */
interface Captured {
  hasUI: boolean;
  ui: ExtensionContext["ui"] | undefined;
  model: ExtensionContext["model"];
  modelRegistry: ExtensionContext["modelRegistry"];
  cwd: string;
  session: { file: string | null; id: string | null; cwd: string | null; leafId: string | null };
  thinkingLevel: string;
}

function capture(pi: ExtensionAPI, ctx: ExtensionContext): Captured {
  const sm = ctx.sessionManager;
  const get = <T>(f: () => T): T | null => {
    try {
      return f() ?? null;
    } catch {
      return null;
    }
  };
  const hasUI = ctx.hasUI;
  return {
    hasUI,
    ui: hasUI ? ctx.ui : undefined,
    model: ctx.model,
    modelRegistry: ctx.modelRegistry,
    cwd: ctx.cwd,
    session: { file: get(() => sm.getSessionFile() ?? null), id: get(() => sm.getSessionId()), cwd: get(() => sm.getCwd()), leafId: get(() => sm.getLeafId()) },
    thinkingLevel: pi.getThinkingLevel(),
  };
}

function say(c: Captured, message: string, level: "info" | "warning" | "error" = "warning") {
  try {
    if (c.hasUI && c.ui) c.ui.notify(`Arbor: ${message}`, level);
    else process.stderr.write(`arbor: ${message}\n`);
  } catch {
    // A notice that fails (Pi disposed its UI meanwhile) goes to stderr; it never changes the result.
    try {
      process.stderr.write(`arbor: ${message}\n`);
    } catch {}
  }
}

export function createArborExtension(deps: Deps = defaultDeps) {
  return function arbor(pi: ExtensionAPI) {
    /** Opens a review: undefined when Arbor is not there or refuses (after one line saying why). */
    async function open(ctx: Captured, signal: AbortSignal | undefined, trace: Record<string, unknown>) {
      if (deps.env.ARBOR_REVIEW_DISABLE === "1") return undefined;
      const sock = socketPath(deps.env);
      if (!sock) return undefined;
      const t0 = deps.now();
      const folder = checkSocketFolder(sock);
      if (folder === "absent") {
        trace.connectMs = deps.now() - t0;
        trace.outcome = "not-running";
        return undefined;
      }
      if (folder) {
        trace.outcome = "unsafe-folder";
        say(ctx, `not asking Arbor: ${folder}`);
        return undefined;
      }
      // Arbor closed: its socket is gone. No connection attempt at all.
      if (!fs.existsSync(sock)) {
        trace.connectMs = deps.now() - t0;
        trace.outcome = "not-running";
        return undefined;
      }
      const socket = await connect(sock, signal);
      trace.connectMs = deps.now() - t0;
      if (!socket) {
        trace.outcome = "not-running";
        return undefined;
      }
      const conn = new LineConn(socket);
      try {
        const hello = readHello(await conn.next(HELLO_TIMEOUT_MS, signal, "greeting"));
        trace.helloMs = deps.now() - t0;
        const envLimit = Number(deps.env.ARBOR_REVIEW_TIMEOUT_MS);
        const limit = hello.timeoutMs + ANSWER_GRACE_MS;
        const waitMs = Number.isFinite(envLimit) && envLimit > 0 ? Math.min(envLimit, limit) : limit;
        return { conn, waitMs, hello };
      } catch (e) {
        conn.close();
        trace.outcome = e instanceof ReviewStop ? e.code : "error";
        say(ctx, `${e instanceof Error ? e.message : String(e)}; Pi goes on by itself`);
        return undefined;
      }
    }

    function writeTrace(trace: Record<string, unknown>, t0: number) {
      const file = deps.env.ARBOR_REVIEW_TRACE;
      if (!file) return;
      trace.totalMs = deps.now() - t0;
      try {
        fs.appendFileSync(file, `${JSON.stringify(trace)}\n`);
      } catch {
        // Tracing is for measurements only.
      }
    }

    pi.on("session_before_compact", async (event, piCtx) => {
      const t0 = deps.now();
      const trace: Record<string, unknown> = { event: "session_before_compact", pid: process.pid };
      let ctx: Captured;
      try {
        ctx = capture(pi, piCtx);
      } catch {
        // Pi has already disposed this session's extensions: it goes on by itself.
        return undefined;
      }
      try {
        const review = await open(ctx, event.signal, trace);
        if (!review) return undefined;
        const { conn, waitMs } = review;
        try {
          const model = ctx.model;
          if (!model) {
            trace.outcome = "no-model";
            return undefined;
          }
          const auth = await ctx.modelRegistry.getApiKeyAndHeaders(model);
          if (!auth.ok || !auth.apiKey) {
            trace.outcome = "no-auth";
            return undefined;
          }
          const draftWith = async (prep: AnyEntry) => {
            const d0 = deps.now();
            const d = await deps.compact(prep as any, model, auth.apiKey as string, auth.headers, event.customInstructions, event.signal, ctx.thinkingLevel as any);
            trace.draftMs = ((trace.draftMs as number) ?? 0) + (deps.now() - d0);
            return d;
          };
          let prep: AnyEntry = event.preparation;
          let draft: AnyEntry;
          try {
            draft = await draftWith(prep);
          } catch (e) {
            // Pi drafts again and reports its own error (or its abort).
            trace.outcome = "draft-failed";
            if (!event.signal.aborted) say(ctx, `Pi's draft failed before review (${e instanceof Error ? e.message : String(e)})`);
            return undefined;
          }
          const requestId = `${process.pid}-${Date.now().toString(36)}-${++requestCounter}`;
          const branchEntries = event.branchEntries as AnyEntry[];
          let movedFrom: string | null = null;
          for (let round = 1; round <= MAX_ROUNDS; round++) {
            const r0 = deps.now();
            let answer: Decision & { note?: string };
            try {
              conn.send({
                type: "review",
                protocol: PROTOCOL_VERSION,
                requestId,
                round,
                kind: "compaction",
                extension: { version: ARBOR_EXTENSION_VERSION },
                pi: { version: deps.piVersion },
                session: ctx.session,
                model: { provider: model.provider, id: model.id },
                waitMs,
                compaction: {
                  firstKeptEntryId: prep.firstKeptEntryId,
                  movedFrom,
                  tokensBefore: prep.tokensBefore,
                  isSplitTurn: !!prep.isSplitTurn,
                  messagesToSummarize: prep.messagesToSummarize.length,
                  turnPrefixMessages: prep.turnPrefixMessages.length,
                  branchEntries: branchEntries.length,
                  hasPreviousSummary: typeof prep.previousSummary === "string",
                  customInstructions: event.customInstructions ?? null,
                  settings: prep.settings,
                },
                draft,
              });
              answer = readAnswer(await conn.next(waitMs, event.signal, "compaction"), requestId, "compaction", round);
            } catch (e) {
              trace.outcome = e instanceof ReviewStop ? e.code : "error";
              say(ctx, `${e instanceof Error ? e.message : String(e)}; Pi's own draft is used`);
              return { compaction: draft as any };
            } finally {
              trace.reviewMs = ((trace.reviewMs as number) ?? 0) + (deps.now() - r0);
            }
            trace.outcome = answer.decision;
            trace.rounds = round;
            if (answer.note) say(ctx, answer.note, "info");
            switch (answer.decision) {
              case "accept":
                return { compaction: draft as any };
              case "edit":
                return { compaction: { ...(draft as any), summary: answer.summary } };
              case "cancel":
                return { cancel: true };
              case "pi_decides":
                return undefined;
              case "move_cut": {
                if (round === MAX_ROUNDS) {
                  say(ctx, `Arbor moved the cut more than ${MAX_ROUNDS - 1} times; Pi's draft at ${prep.firstKeptEntryId} is used`);
                  return { compaction: draft as any };
                }
                let next: AnyEntry;
                try {
                  next = preparationForCut(branchEntries, answer.firstKeptEntryId, event.preparation);
                } catch (e) {
                  trace.outcome = "invalid-cut";
                  say(ctx, `${e instanceof Error ? e.message : String(e)}; the draft at ${prep.firstKeptEntryId} is used`);
                  return { compaction: draft as any };
                }
                let redraft: AnyEntry;
                try {
                  redraft = await draftWith(next);
                } catch (e) {
                  trace.outcome = "redraft-failed";
                  if (!event.signal.aborted) say(ctx, `the draft for the cut at ${answer.firstKeptEntryId} failed (${e instanceof Error ? e.message : String(e)}); the draft at ${prep.firstKeptEntryId} is used`);
                  return { compaction: draft as any };
                }
                movedFrom = prep.firstKeptEntryId;
                prep = next;
                draft = redraft;
                break;
              }
            }
          }
          return { compaction: draft as any };
        } finally {
          conn.close();
        }
      } catch (e) {
        // Never let a fault here change Pi's behaviour: Pi drafts by itself.
        trace.outcome = "internal-error";
        trace.error = e instanceof Error ? e.message : String(e);
        say(ctx, `internal error (${trace.error}); Pi goes on by itself`, "error");
        return undefined;
      } finally {
        writeTrace(trace, t0);
      }
    });

    pi.on("session_before_tree", async (event, piCtx) => {
      const p = event.preparation;
      // Nothing to review: no summary asked for, or nothing to summarize (Pi writes none).
      if (!p.userWantsSummary || p.entriesToSummarize.length === 0) return undefined;
      const t0 = deps.now();
      const trace: Record<string, unknown> = { event: "session_before_tree", pid: process.pid };
      let ctx: Captured;
      try {
        ctx = capture(pi, piCtx);
      } catch {
        return undefined;
      }
      try {
        const review = await open(ctx, event.signal, trace);
        if (!review) return undefined;
        const { conn, waitMs } = review;
        try {
          const model = ctx.model;
          if (!model) return undefined;
          const auth = await ctx.modelRegistry.getApiKeyAndHeaders(model);
          if (!auth.ok || !auth.apiKey) return undefined;
          const d0 = deps.now();
          const result = await deps.generateBranchSummary(p.entriesToSummarize, {
            model,
            apiKey: auth.apiKey,
            headers: auth.headers,
            signal: event.signal,
            customInstructions: p.customInstructions,
            replaceInstructions: p.replaceInstructions,
            reserveTokens: deps.branchReserveTokens(ctx.cwd),
          });
          trace.draftMs = deps.now() - d0;
          if (result.aborted || result.error || typeof result.summary !== "string") {
            trace.outcome = "draft-failed";
            return undefined;
          }
          const draft = { summary: result.summary, details: { readFiles: result.readFiles || [], modifiedFiles: result.modifiedFiles || [] } };
          const requestId = `${process.pid}-${Date.now().toString(36)}-${++requestCounter}`;
          const r0 = deps.now();
          let answer: Decision & { note?: string };
          try {
            conn.send({
              type: "review",
              protocol: PROTOCOL_VERSION,
              requestId,
              round: 1,
              kind: "branch_summary",
              extension: { version: ARBOR_EXTENSION_VERSION },
              pi: { version: deps.piVersion },
              session: ctx.session,
              model: { provider: model.provider, id: model.id },
              waitMs,
              branch: {
                targetId: p.targetId,
                oldLeafId: p.oldLeafId,
                commonAncestorId: p.commonAncestorId,
                entriesToSummarize: p.entriesToSummarize.length,
                customInstructions: p.customInstructions ?? null,
                replaceInstructions: !!p.replaceInstructions,
                label: p.label ?? null,
              },
              draft,
            });
            answer = readAnswer(await conn.next(waitMs, event.signal, "branch summary"), requestId, "branch_summary");
          } catch (e) {
            trace.outcome = e instanceof ReviewStop ? e.code : "error";
            say(ctx, `${e instanceof Error ? e.message : String(e)}; Pi's own draft is used`);
            return { summary: draft };
          } finally {
            trace.reviewMs = deps.now() - r0;
          }
          trace.outcome = answer.decision;
          if (answer.note) say(ctx, answer.note, "info");
          switch (answer.decision) {
            case "accept":
              return { summary: draft };
            case "edit":
              return { summary: { ...draft, summary: answer.summary } };
            case "cancel":
              return { cancel: true };
            default:
              return undefined;
          }
        } finally {
          conn.close();
        }
      } catch (e) {
        trace.outcome = "internal-error";
        trace.error = e instanceof Error ? e.message : String(e);
        say(ctx, `internal error (${trace.error}); Pi goes on by itself`, "error");
        return undefined;
      } finally {
        writeTrace(trace, t0);
      }
    });
  };
}

export default createArborExtension();
