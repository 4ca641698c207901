// Driving the real `pi` program (Pi 0.73.1, installed in tests/pi/node_modules by
// scripts/setup.sh) from Node: print-mode runs, a JSONL client for `--mode rpc`, Pi's environment
// and where it keeps a session. The recorder (record/record.mjs) and the Pi extension's tests
// (pi-extension/test/harness.mjs) both drive Pi through these.
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const PI_HOME = path.dirname(fileURLToPath(import.meta.url));
export const PI_PKG = path.join(PI_HOME, "node_modules/@mariozechner/pi-coding-agent");
export const PI_CLI = path.join(PI_PKG, "dist/cli.js");

/** Flags every run takes: offline, and nothing from the user's context files, skills, prompt
 * templates, themes or extensions. */
export const PI_COMMON = ["--offline", "--no-context-files", "--no-skills", "--no-prompt-templates", "--no-themes", "--no-extensions"];

/** Pi's environment for `agentDir`: offline, no telemetry, the loopback model never proxied. */
export function piEnv(agentDir, extra = {}) {
  return {
    ...process.env,
    PI_CODING_AGENT_DIR: agentDir,
    PI_OFFLINE: "1",
    PI_TELEMETRY: "0",
    NO_PROXY: "127.0.0.1,localhost",
    no_proxy: "127.0.0.1,localhost",
    ...extra,
  };
}

/** The child processes still running, so that a caller can end them all. */
export const children = new Set();

/** Ends `child` and its process group (Pi runs detached, as a group of its own) with `signal`. */
export function killTree(child, signal) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {}
  }
}

/** One print-mode run of `node cli.js ...argv`; resolves with {code, stdout, stderr, ms} whatever
 * the exit code, rejects after `timeoutMs` (the process group gets `killSignal`). `args` name the
 * run in the timeout's message. */
export function runPiProcess(argv, { cwd, env, timeoutMs, killSignal, args = argv }) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, [PI_CLI, ...argv], { cwd, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    children.add(child);
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => {
      killTree(child, killSignal);
      reject(new Error(`pi ${args.join(" ").slice(0, 80)}... timed out after ${timeoutMs} ms\n${stderr}`));
    }, timeoutMs);
    child.on("exit", (code) => {
      clearTimeout(timer);
      children.delete(child);
      resolve({ code, stdout, stderr, ms: performance.now() - t0 });
    });
  });
}

/** A `node cli.js ...argv` process in `--mode rpc` (argv says so), with a small JSONL client: LF
 * framing, as Pi's docs/rpc.md asks. Requests are numbered `${idPrefix}-1`, `-2`, ...; `idle`
 * polls every `pollMs`; `close` sends `killSignal` to a process that does not exit in 5 s. */
export class PiRpc {
  constructor(argv, { cwd, env, timeoutMs, idPrefix, pollMs, killSignal }) {
    this.events = [];
    this.waiters = [];
    this.nextId = 0;
    this.stderr = "";
    this.timeoutMs = timeoutMs;
    this.idPrefix = idPrefix;
    this.pollMs = pollMs;
    this.killSignal = killSignal;
    this.child = spawn(process.execPath, [PI_CLI, ...argv], { cwd, env, stdio: ["pipe", "pipe", "pipe"], detached: true });
    children.add(this.child);
    let buf = "";
    this.child.stdout.setEncoding("utf8");
    this.child.stdout.on("data", (d) => {
      buf += d;
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl).replace(/\r$/, "");
        buf = buf.slice(nl + 1);
        if (!line.trim()) continue;
        let msg;
        try {
          msg = JSON.parse(line);
        } catch {
          continue;
        }
        this.events.push(msg);
        for (const w of [...this.waiters]) w(msg);
      }
    });
    this.child.stderr.on("data", (d) => (this.stderr += d));
    this.exited = new Promise((r) => this.child.on("exit", (code) => (children.delete(this.child), r(code))));
  }
  waitFor(pred, from = 0, timeoutMs = this.timeoutMs, what = "event") {
    for (let i = from; i < this.events.length; i++) if (pred(this.events[i])) return Promise.resolve(this.events[i]);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((x) => x !== w);
        reject(new Error(`rpc: timed out waiting for ${what}\n${this.stderr}`));
      }, timeoutMs);
      const w = (msg) => {
        if (!pred(msg)) return;
        clearTimeout(timer);
        this.waiters = this.waiters.filter((x) => x !== w);
        resolve(msg);
      };
      this.waiters.push(w);
    });
  }
  /** Sends a command; resolves with the response (success or not). */
  async request(cmd, timeoutMs) {
    const id = `${this.idPrefix}-${++this.nextId}`;
    const from = this.events.length;
    this.child.stdin.write(`${JSON.stringify({ id, ...cmd })}\n`);
    return this.waitFor((m) => m.type === "response" && m.id === id, from, timeoutMs, `response to ${cmd.type}`);
  }
  /** Sends a command; resolves with its response, throws when it failed. */
  async send(cmd, timeoutMs) {
    const res = await this.request(cmd, timeoutMs);
    if (!res.success) throw new Error(`rpc ${cmd.type} failed: ${res.error}`);
    return res;
  }
  async idle() {
    for (;;) {
      const st = await this.send({ type: "get_state" });
      if (!st.data.isStreaming && !st.data.isCompacting) return st.data;
      await new Promise((r) => setTimeout(r, this.pollMs));
    }
  }
  /** A normal prompt: wait for the agent run to end, then for any automatic compaction. */
  async prompt(message) {
    const from = this.events.length;
    await this.send({ type: "prompt", message });
    await this.waitFor((m) => m.type === "agent_end", from, this.timeoutMs, "agent_end");
    return this.idle();
  }
  /** An extension command sent as a prompt: the response comes after the handler finished. */
  async command(message) {
    await this.send({ type: "prompt", message });
    return this.idle();
  }
  async close() {
    this.child.stdin.end();
    const t = setTimeout(() => killTree(this.child, this.killSignal), 5000);
    await this.exited;
    clearTimeout(t);
  }
}

/** The folder where Pi keeps the sessions it starts in `cwd`. */
export function sessionDir(agentDir, cwd) {
  return path.join(agentDir, "sessions", `--${cwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`);
}

/** The session files Pi started in `cwd`. */
export function sessionFiles(agentDir, cwd) {
  const dir = sessionDir(agentDir, cwd);
  return fs.existsSync(dir)
    ? fs
        .readdirSync(dir)
        .filter((f) => f.endsWith(".jsonl"))
        .map((f) => path.join(dir, f))
    : [];
}

/** The entries of a session file, its header first. */
export const readEntries = (file) =>
  fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));

/** models.json for the scripted loopback model on `port`. */
export function loopbackModels(port, { name, contextWindow }) {
  return {
    providers: {
      loopback: {
        baseUrl: `http://127.0.0.1:${port}/v1`,
        api: "openai-completions",
        apiKey: "loopback-not-a-secret",
        models: [
          {
            id: "scripted-13k",
            name,
            reasoning: false,
            input: ["text"],
            contextWindow,
            maxTokens: 2000,
            cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
          },
        ],
      },
    },
  };
}
