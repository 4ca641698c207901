// Test harness: the real `pi` program (Pi 0.73.1 in tests/pi/node_modules) against the scripted
// OpenAI-compatible model on 127.0.0.1 (tests/pi/record/loopback-model.mjs), with Arbor's extension
// loaded by `-e`, and Arbor's headless reviewer (`arbor-cli pi serve`, the real binary) or a fake
// Arbor in this process. Nothing leaves the machine: the model is on the loopback, the review
// socket is a Unix socket.
import { spawn, spawnSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
// Pi is started and spoken to through tests/pi/pi-driver.mjs, which the recorder uses too.
import { children, killTree, loopbackModels, PI_CLI, PI_COMMON, PI_HOME, PI_PKG, piEnv as piDriverEnv, PiRpc, readEntries, runPiProcess, sessionFiles } from "../../tests/pi/pi-driver.mjs";

export { PI_CLI, PI_HOME, PI_PKG, readEntries, sessionFiles };

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const REPO = path.resolve(HERE, "../..");
export const EXTENSION = path.join(REPO, "pi-extension/arbor.ts");
export const PI_TIMEOUT_MS = Number(process.env.PI_TIMEOUT_MS || 120000);

export function piInstalled() {
  return fs.existsSync(PI_CLI);
}

/** Pi's own modules, for checking what Pi computes from a file. */
export const piImport = (rel) => import(pathToFileURL(path.join(PI_PKG, "dist", rel)).href);

/** The arbor-cli binary: $ARBOR_CLI, else the debug build in $CARGO_TARGET_DIR or target/. */
export function arborCli() {
  const candidates = [process.env.ARBOR_CLI, path.join(process.env.CARGO_TARGET_DIR || path.join(REPO, "target"), "debug/arbor-cli")].filter(Boolean);
  return candidates.find((c) => fs.existsSync(c));
}

/** Jiti as Pi uses it (same aliases), to load arbor.ts in unit tests exactly as Pi does. */
export async function loadExtensionModule() {
  const { createJiti } = await import(pathToFileURL(path.join(PI_HOME, "node_modules/jiti/lib/jiti.mjs")).href);
  const jiti = createJiti(import.meta.url, { moduleCache: false, alias: { "@mariozechner/pi-coding-agent": path.join(PI_PKG, "dist/index.js") } });
  return jiti.import(EXTENSION);
}

// ------------------------------------------------------------------------------------------
// Scratch folders, agent dir, model
// ------------------------------------------------------------------------------------------

const cleanups = [];
export function scratch(prefix = "arbor-ext-") {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  fs.chmodSync(d, 0o700);
  cleanups.push(() => fs.rmSync(d, { recursive: true, force: true }));
  return d;
}
export function cleanupAll() {
  while (cleanups.length) {
    try {
      cleanups.pop()();
    } catch {}
  }
}

export async function startModel(logFile) {
  const { startLoopbackModel } = await import(pathToFileURL(path.join(PI_HOME, "record/loopback-model.mjs")).href);
  const m = await startLoopbackModel({ port: 0, logFile });
  return {
    ...m,
    logFile,
    requests() {
      if (!fs.existsSync(logFile)) return [];
      return fs
        .readFileSync(logFile, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l));
    },
  };
}

export const CONTEXT_WINDOW = 5000;

/** An agent dir for the loopback model; `compaction` overrides Pi's compaction settings. */
export function writeAgentDir(dir, port, { compaction = {}, branchReserve = 2000 } = {}) {
  fs.mkdirSync(dir, { recursive: true });
  const models = loopbackModels(port, { name: "Scripted loopback model", contextWindow: CONTEXT_WINDOW });
  const settings = {
    defaultProvider: "loopback",
    defaultModel: "scripted-13k",
    defaultThinkingLevel: "off",
    compaction: { enabled: true, reserveTokens: 2000, keepRecentTokens: 1000, ...compaction },
    branchSummary: { reserveTokens: branchReserve },
    retry: { enabled: false },
  };
  fs.writeFileSync(path.join(dir, "models.json"), `${JSON.stringify(models, null, 2)}\n`);
  fs.writeFileSync(path.join(dir, "settings.json"), `${JSON.stringify(settings, null, 2)}\n`);
}

export function setCompaction(agentDir, compaction) {
  const f = path.join(agentDir, "settings.json");
  const s = JSON.parse(fs.readFileSync(f, "utf8"));
  s.compaction = { ...s.compaction, ...compaction };
  fs.writeFileSync(f, `${JSON.stringify(s, null, 2)}\n`);
}

/** Words enough for `tokens` of Pi's estimate (4 characters a token). */
export function filler(tokens, seed = "note") {
  const words = [];
  let n = 0;
  for (let i = 0; n < tokens * 4; i++) {
    const w = `${seed}${i % 97}`;
    words.push(w);
    n += w.length + 1;
  }
  return words.join(" ");
}

// ------------------------------------------------------------------------------------------
// Pi
// ------------------------------------------------------------------------------------------

export function piEnv(agentDir, extra = {}) {
  const env = piDriverEnv(agentDir);
  delete env.ARBOR_REVIEW_SOCKET;
  delete env.ARBOR_REVIEW_TIMEOUT_MS;
  delete env.ARBOR_REVIEW_TRACE;
  return { ...env, ...extra };
}

/** Ends every pi and arbor-cli process the tests started. */
export function killAll() {
  for (const c of children) killTree(c, "SIGKILL");
}

/** One print-mode pi run; resolves with {code, stdout, stderr, ms}. */
export function runPi(args, { cwd, env, extension = true, discover = false, timeoutMs = PI_TIMEOUT_MS } = {}) {
  const common = discover ? PI_COMMON.filter((a) => a !== "--no-extensions") : PI_COMMON;
  return runPiProcess([...common, ...(extension ? ["-e", EXTENSION] : []), ...args], { cwd, env, timeoutMs, killSignal: "SIGKILL", args });
}

/** A pi --mode rpc process (JSONL on stdin/stdout, as docs/rpc.md says). */
export class RpcPi extends PiRpc {
  constructor(args, { cwd, env, extension = true, extra = [] }) {
    const argv = [...PI_COMMON, ...(extension ? ["-e", EXTENSION] : []), ...extra.flatMap((e) => ["-e", e]), "--mode", "rpc", ...args];
    super(argv, { cwd, env, timeoutMs: PI_TIMEOUT_MS, idPrefix: "t", pollMs: 100, killSignal: "SIGKILL" });
  }
  notifications() {
    return this.events.filter((e) => e.type === "extension_ui_request" && e.method === "notify").map((e) => e.message);
  }
}

export function sessionFile(agentDir, cwd) {
  const files = sessionFiles(agentDir, cwd);
  if (files.length !== 1) throw new Error(`expected one session file for ${cwd}, found ${files.length}`);
  return files[0];
}

export const compactions = (file) => readEntries(file).filter((e) => e.type === "compaction");

// ------------------------------------------------------------------------------------------
// Arbor
// ------------------------------------------------------------------------------------------

/** A private folder and a socket path in it, as Arbor makes them. */
export function socketIn(dir) {
  const d = path.join(dir, "arbor");
  fs.mkdirSync(d, { recursive: true, mode: 0o700 });
  fs.chmodSync(d, 0o700);
  return path.join(d, "review.sock");
}

/** `arbor-cli pi serve …` on `socket`; resolves once it listens. `lines` collects its log. */
export async function startServe(socket, args = [], { env = process.env } = {}) {
  const bin = arborCli();
  if (!bin) throw new Error("arbor-cli is not built: run `cargo build -p arbor-cli` (or set ARBOR_CLI)");
  const child = spawn(bin, ["pi", "serve", "--socket", socket, ...args], { env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  children.add(child);
  const lines = [];
  let stderr = "";
  let buf = "";
  const waiters = [];
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (d) => {
    buf += d;
    let nl;
    while ((nl = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (!line.trim()) continue;
      const v = JSON.parse(line);
      lines.push(v);
      for (const w of [...waiters]) w();
    }
  });
  child.stderr.on("data", (d) => (stderr += d));
  const exited = new Promise((r) => child.on("exit", (code, signal) => (children.delete(child), r({ code, signal }))));
  const waitFor = (pred, timeoutMs = 20000) =>
    new Promise((resolve, reject) => {
      const check = () => {
        const hit = lines.find(pred);
        if (hit) {
          waiters.splice(waiters.indexOf(check), 1);
          clearTimeout(t);
          resolve(hit);
        }
      };
      const t = setTimeout(() => {
        waiters.splice(waiters.indexOf(check), 1);
        reject(new Error(`arbor-cli pi serve: nothing matched within ${timeoutMs} ms\n${stderr}\n${JSON.stringify(lines)}`));
      }, timeoutMs);
      waiters.push(check);
      check();
    });
  await Promise.race([waitFor((l) => l.event === "listening"), exited.then((e) => Promise.reject(new Error(`serve exited ${JSON.stringify(e)}: ${stderr}`)))]);
  return {
    child,
    lines,
    stderr: () => stderr,
    reviews: () => lines.filter((l) => l.event === "review"),
    waitFor,
    async stop(signal = "SIGTERM") {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
    exited,
  };
}

/** A socket file whose server was killed (SIGKILL leaves the file; connecting is refused). */
export function leaveStaleSocket(socket) {
  const code = `require("net").createServer().listen(${JSON.stringify(socket)}, () => process.kill(process.pid, "SIGKILL"))`;
  spawnSync(process.execPath, ["-e", code]);
  if (!fs.existsSync(socket)) throw new Error("no stale socket was left");
}

/** A fake Arbor in this process: greets like Arbor and answers each request with `respond`. */
export function fakeArbor(socket, respond, { hello } = {}) {
  const requests = [];
  const server = net.createServer((c) => {
    c.write(`${JSON.stringify(hello ?? { type: "hello", arbor: "review", protocol: 1, server: "fake", policy: "review", timeoutMs: 60000, maxLineBytes: 4194304 })}\n`);
    let buf = "";
    c.on("data", (d) => {
      buf += d;
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        const req = JSON.parse(line);
        requests.push(req);
        Promise.resolve(respond(req, c)).then((out) => {
          if (out === undefined) return;
          c.write(typeof out === "string" ? out : `${JSON.stringify(out)}\n`);
        });
      }
    });
    c.on("error", () => {});
  });
  return new Promise((resolve) => {
    server.listen(socket, () => {
      fs.chmodSync(socket, 0o600);
      resolve({ requests, close: () => new Promise((r) => server.close(() => r())) });
    });
  });
}

export const answer = (req, decision, extra = {}) => ({ type: "answer", protocol: 1, requestId: req.requestId, round: req.round, decision, ...extra });

// ------------------------------------------------------------------------------------------
// A file Pi wrote, in Arbor and in Pi
// ------------------------------------------------------------------------------------------

const sha256 = (s) => crypto.createHash("sha256").update(s, "utf8").digest("hex");

/** What Pi computes for a file: each context message's role and digest, and the token estimate. */
export async function piView(file) {
  const SM = await piImport("core/session-manager.js");
  const compaction = await piImport("core/compaction/index.js");
  const sm = SM.SessionManager.inMemory("/");
  sm.setSessionFile(file);
  const ctx = sm.buildSessionContext();
  return {
    messages: ctx.messages.map((m) => ({ role: m.role, sha256: sha256(JSON.stringify(m)) })),
    tokens: compaction.estimateContextTokens(ctx.messages).tokens,
    leafId: sm.getLeafId(),
  };
}

/** What Arbor's engine computes for the file (`arbor-cli inspect`: Session::open, build_context). */
export function arborView(file) {
  const r = spawnSync(arborCli(), ["inspect", file], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`arbor-cli inspect ${file}: ${r.stderr}`);
  const report = JSON.parse(r.stdout);
  return {
    diagnostics: report.load.diagnostics,
    messages: report.context.messages.map((m) => ({ role: m.role, sha256: m.sha256 })),
    tokens: report.tokens.estimate.tokens,
    leafId: report.leafId,
  };
}
