// Review benchmark in the real webview (docs/PERFORMANCE.md; not part of the test run): from the
// moment Pi's request is written to Arbor's socket to the review dialog painted, on the big
// session. The request is what Arbor's extension sends (protocol 1), about the open session's
// leaf with a cut near it; Pi's own draft call is not part of it (the extension makes the draft
// before it asks).
//
//   node scripts/gen-sessions.mjs --entries 100000 --seed 42 --out $DIR/agent/sessions/--p--/s100k.jsonl
//   ARBOR_BIN=<release arbor> ARBOR_BENCH_AGENT_DIR=$DIR/agent node tests/e2e/bench-review.mjs
//
// Target: 300 ms. Each round is answered with Accept (clicked), so the next request finds the
// dialog closed.

import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { benchStats, runBench, sleep } from "./driver.mjs";

const ROUNDS = Number(process.env.ARBOR_BENCH_ROUNDS || 8);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "arbor-bench-review-"));
fs.chmodSync(dir, 0o700);
const SOCK = path.join(dir, "review.sock");
// The app reads its socket from the environment tauri-driver passes on.
process.env.ARBOR_REVIEW_SOCKET = SOCK;

/** The file's leaf (its last entry, or the generator's record of it), and the third user
 * message above it on its path (a cut point Pi could choose). */
function leafAndCut(file) {
  const fd = fs.openSync(file, "r");
  const size = fs.fstatSync(fd).size;
  const len = Math.min(size, 8 << 20);
  const buf = Buffer.alloc(len);
  fs.readSync(fd, buf, 0, len, size - len);
  fs.closeSync(fd);
  const entries = buf
    .toString("utf8")
    .split("\n")
    .slice(1)
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));
  const meta = `${file}.meta.json`;
  const leaf = fs.existsSync(meta) ? JSON.parse(fs.readFileSync(meta, "utf8")).leafId : entries.at(-1).id;
  const byId = new Map(entries.map((e) => [e.id, e]));
  let users = 0;
  for (let e = byId.get(leaf); e; e = byId.get(e.parentId)) {
    if (e.type === "compaction") break;
    if (e.type === "message" && e.message?.role === "user" && ++users === 3) return { leaf, cut: e.id };
  }
  throw new Error("no third user message above the leaf after the last compaction");
}

const DRAFT = [
  "## Goal",
  "Keep the ledger exporter correct.",
  "",
  "## Constraints & Preferences",
  "- Integer cents only.",
  "",
  "## Progress",
  "### Done",
  "- [x] Parsed the CSV.",
  "",
  "## Key Decisions",
  "- **Decimal**: avoid floats.",
  "",
  "## Next Steps",
  "1. Write the tests.",
  "",
  "## Critical Context",
  "- None.",
].join("\n");

function ask(file, leaf, cut, n) {
  return new Promise((resolve, reject) => {
    const c = net.createConnection(SOCK);
    let buf = "";
    let sentAt = 0;
    c.setEncoding("utf8");
    c.on("data", (d) => {
      buf += d;
      const lines = buf.split("\n");
      buf = lines.pop();
      for (const l of lines) {
        const m = JSON.parse(l);
        if (m.type === "hello") {
          const req = {
            type: "review", protocol: 1, requestId: `bench-${n}`, round: 1, kind: "compaction",
            extension: { version: "bench" }, pi: { version: "0.73.1" },
            session: { file, id: "bench", cwd: "/p", leafId: leaf }, model: { provider: "loopback", id: "bench" },
            waitMs: 60000,
            compaction: { firstKeptEntryId: cut, tokensBefore: 150000, isSplitTurn: false, messagesToSummarize: 10, turnPrefixMessages: 0, branchEntries: 100, hasPreviousSummary: true },
            draft: { summary: DRAFT, firstKeptEntryId: cut, tokensBefore: 150000 },
          };
          sentAt = Date.now();
          c.write(`${JSON.stringify(req)}\n`);
          resolve({ sentAt, done: new Promise((r) => c.on("close", r)) });
        }
      }
    });
    c.on("error", reject);
  });
}

runBench("review", async (s, sessionPath) => {
  await s.waitFor("the review socket", () => fs.existsSync(SOCK), 30_000);
  const { leaf, cut } = leafAndCut(sessionPath);
  const painted = [];
  const computed = [];
  const rounds = [];
  for (let n = 0; n < ROUNDS; n++) {
    await s.exec(`window.__arborReviewPainted = undefined`);
    const { sentAt, done } = await ask(sessionPath, leaf, cut, n);
    const p = await s.waitFor("the dialog painted", () => s.exec(`return window.__arborReviewPainted ?? null`), 60_000);
    painted.push(p.at - sentAt);
    computed.push(p.computeMs);
    rounds.push({ eventMs: p.askedAt - sentAt, viewMs: p.viewAt - p.askedAt, renderMs: p.renderedAt - p.viewAt, paintMs: p.at - p.renderedAt, computeMs: +p.computeMs.toFixed(2), redrawn: p.reopened });
    await s.exec(`document.getElementById("review-accept").click()`);
    await done;
    await sleep(300);
  }
  fs.rmSync(dir, { recursive: true, force: true });
  return { rounds, requestToPaintedMs: benchStats(painted, { all: true }), viewComputeMs: benchStats(computed, { all: true }) };
});
