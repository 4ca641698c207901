#!/usr/bin/env node
// Records session files written by the real `pi` program (Pi 0.73.1 in tests/pi/node_modules)
// against a scripted model on 127.0.0.1 (loopback-model.mjs), and copies them to
// src-tauri/crates/session-engine/tests/fixtures/real-pi/. See README.md in this folder.
//
//   node tests/pi/record/record.mjs                 record only
//   SHARED=../shared node tests/pi/record/record.mjs  record, then run the oracle
//
// Env: ARBOR_RECORD_DIR (scratch root, default /tmp/arbor-pi-record; wiped at start),
//      PI_TIMEOUT_MS (per pi invocation, default 180000), RECORD_ONLY=name1,name2.
// Structure is deterministic; ids, timestamps and durations differ per run.

import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { children, killTree, loopbackModels, PI_CLI, PI_COMMON, PI_HOME, piEnv as piDriverEnv, PiRpc, readEntries, runPiProcess, sessionDir, sessionFiles } from "../pi-driver.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, "../../..");
const FIXTURES = path.join(REPO, "src-tauri/crates/session-engine/tests/fixtures/real-pi");
const WORK = path.resolve(process.env.ARBOR_RECORD_DIR || "/tmp/arbor-pi-record");
const AGENT_DIR = path.join(WORK, "agent");
const PI_TIMEOUT_MS = Number(process.env.PI_TIMEOUT_MS || 180000);
const ONLY = process.env.RECORD_ONLY ? new Set(process.env.RECORD_ONLY.split(",")) : null;

export const CONTEXT_WINDOW = 13000;
export const RESERVE_TOKENS = 2000;
export const KEEP_RECENT_TOKENS = 3500;
export const BRANCH_RESERVE_TOKENS = 4000;
const PLACEHOLDER_PORT = 9;

const log = (...a) => console.error("[record]", ...a);

// --------------------------------------------------------------------------------------------
// The scratch project
// --------------------------------------------------------------------------------------------

const ROWS = 239;

function transactionsCsv() {
  // Deterministic pseudo-random rows (LCG), not in date order; refunds in parentheses,
  // some FX amounts with three decimals, some thousands with a comma (quoted).
  let seed = 20240601;
  const rnd = (n) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return Math.floor(seed / 65536) % n;
  };
  const payees = ["Corner Bakery", "City Transit", "Northwind Grocers", "Acme Payroll", "Lumen Energy", "Blue Door Cafe", "Papyrus Books", "Harbor Pharmacy", "Metro Fitness", "Smith, Jones & Co", "Orbit Mobile", "Fresh Fields Market"];
  const cats = { "Corner Bakery": "food", "City Transit": "transport", "Northwind Grocers": "groceries", "Acme Payroll": "income", "Lumen Energy": "utilities", "Blue Door Cafe": "food", "Papyrus Books": "books", "Harbor Pharmacy": "health", "Metro Fitness": "health", "Smith, Jones & Co": "rent", "Orbit Mobile": "utilities", "Fresh Fields Market": "groceries" };
  const rows = ["date,payee,amount,category"];
  for (let i = 0; i < ROWS; i++) {
    const month = 1 + rnd(6);
    const day = 1 + rnd(28);
    const date = `2024-${String(month).padStart(2, "0")}-${String(day).padStart(2, "0")}`;
    let payee = payees[rnd(payees.length)];
    let category = cats[payee];
    let amount;
    if (i % 17 === 5) {
      if (category === "income" || category === "rent") payee = "Papyrus Books";
      category = "refund";
      amount = `(${1 + rnd(90)}.${String(rnd(100)).padStart(2, "0")})`;
    } else if (category === "income") {
      amount = `"${2 + rnd(2)},${String(rnd(1000)).padStart(3, "0")}.${String(rnd(100)).padStart(2, "0")}"`;
    } else if (category === "rent") {
      amount = `"-1,${String(150 + rnd(100)).padStart(3, "0")}.00"`;
    } else if (i % 11 === 3) {
      amount = `-${1 + rnd(40)}.${String(rnd(1000)).padStart(3, "0")}`;
    } else {
      amount = `-${1 + rnd(120)}.${String(rnd(100)).padStart(2, "0")}`;
    }
    const payeeField = payee.includes(",") ? `"${payee}"` : payee;
    rows.push(`${date},${payeeField},${amount},${category}`);
  }
  return `${rows.join("\n")}\n`;
}

const PROJECT = {
  "README.md": `# ledger

A small personal-finance ledger. Money is always stored as **integer cents**.

## Layout

- \`ledger/core.py\`: \`Transaction\`, \`Ledger\`, \`parse_amount\`, \`format_cents\`
- \`ledger/legacy.py\`: the old fixed-width importer. Frozen: the 2019 audit signed off on it,
  and the auditors' scripts still import it. Do not modify.
- \`data/transactions.csv\`: a bank export (date, payee, amount, category) for trying things out
- \`tests/\`: unit tests (\`python3 -m unittest discover -s tests -v\`)

## Conventions

- Standard library only; the ledger runs on machines without pip.
- Amounts in CSV exports may be \`1,204.99\`, \`-3\`, \`2.675\` (FX, round half up) or
  \`(12.50)\` (accounting negative).
- Dates are ISO 8601 (\`2024-03-07\`).
`,
  "ledger/__init__.py": `"""ledger: a small personal-finance ledger (amounts in integer cents)."""
from ledger.core import Ledger, Transaction, format_cents, parse_amount

__all__ = ["Ledger", "Transaction", "format_cents", "parse_amount"]
__version__ = "0.3.0"
`,
  "ledger/core.py": `"""Core ledger types: transactions, amounts in integer cents, balances."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Iterable


@dataclass(frozen=True)
class Transaction:
    day: date
    payee: str
    amount_cents: int
    category: str = "uncategorized"


def parse_amount(text: str) -> int:
    """Parse '12.50', '-3', '1,204.99' into integer cents."""
    cleaned = text.strip().replace(",", "")
    negative = cleaned.startswith("-")
    if negative:
        cleaned = cleaned[1:]
    units, _, frac = cleaned.partition(".")
    frac = (frac + "00")[:2]
    cents = int(units or "0") * 100 + int(frac)
    return -cents if negative else cents


def format_cents(cents: int) -> str:
    sign = "-" if cents < 0 else ""
    cents = abs(cents)
    return f"{sign}{cents // 100}.{cents % 100:02d}"


@dataclass
class Ledger:
    transactions: list[Transaction] = field(default_factory=list)

    def add(self, tx: Transaction) -> None:
        self.transactions.append(tx)

    def extend(self, txs: Iterable[Transaction]) -> None:
        for tx in txs:
            self.add(tx)

    def balance(self) -> int:
        return sum(tx.amount_cents for tx in self.transactions)

    def by_category(self) -> dict[str, int]:
        totals: dict[str, int] = {}
        for tx in self.transactions:
            totals[tx.category] = totals.get(tx.category, 0) + tx.amount_cents
        return totals
`,
  "ledger/legacy.py": `"""Legacy fixed-width importer (2016-2019 bank exports).

DO NOT MODIFY. This module was reviewed in the 2019 audit and the auditors' reconciliation
scripts import it directly. It keeps amounts as float dollars on purpose: the audited
reports were produced that way and must stay byte-for-byte reproducible.

Record layout (one record per line, 64 columns):

    cols  0-9   date        YYYY-MM-DD
    cols 10-39  payee       left aligned, space padded
    cols 40-51  amount      right aligned, two decimals, leading '-' for debits
    cols 52-63  category    left aligned, space padded
"""
from __future__ import annotations

import datetime as _dt

DATE_COLS = (0, 10)
PAYEE_COLS = (10, 40)
AMOUNT_COLS = (40, 52)
CATEGORY_COLS = (52, 64)

KNOWN_CATEGORIES = (
    "books",
    "food",
    "groceries",
    "health",
    "income",
    "refund",
    "rent",
    "transport",
    "utilities",
)


class LegacyRecordError(ValueError):
    """A line that does not follow the fixed-width layout."""


def _field(line, cols):
    start, end = cols
    return line[start:end].strip()


def parse_amount(text):
    """Old parser: float dollars. Kept for the audited reports."""
    text = text.strip().replace(",", "")
    if not text:
        raise LegacyRecordError("empty amount")
    return float(text)


def format_amount(dollars):
    """Right-align to the 12-column amount field with two decimals."""
    return ("%.2f" % dollars).rjust(AMOUNT_COLS[1] - AMOUNT_COLS[0])


def parse_record(line):
    if len(line.rstrip("\\n")) < CATEGORY_COLS[0]:
        raise LegacyRecordError("short record: %r" % line)
    day = _dt.datetime.strptime(_field(line, DATE_COLS), "%Y-%m-%d").date()
    payee = _field(line, PAYEE_COLS)
    amount = parse_amount(_field(line, AMOUNT_COLS))
    category = _field(line, CATEGORY_COLS) or "uncategorized"
    if category not in KNOWN_CATEGORIES:
        category = "uncategorized"
    return {"date": day, "payee": payee, "amount": amount, "category": category}


def format_record(record):
    return "%s%s%s%s" % (
        record["date"].isoformat().ljust(10),
        record["payee"][:30].ljust(30),
        format_amount(record["amount"]),
        record["category"][:12].ljust(12),
    )


def read_file(path):
    records = []
    with open(path, encoding="latin-1") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip() or line.startswith("#"):
                continue
            try:
                records.append(parse_record(line))
            except LegacyRecordError as exc:
                raise LegacyRecordError("%s:%d: %s" % (path, number, exc)) from exc
    return records


def totals_by_category(records):
    totals = {}
    for record in records:
        totals[record["category"]] = totals.get(record["category"], 0.0) + record["amount"]
    return totals


def write_file(path, records):
    with open(path, "w", encoding="latin-1") as handle:
        for record in records:
            handle.write(format_record(record) + "\\n")
`,
  "tests/__init__.py": "",
  "tests/test_core.py": `import unittest
from datetime import date

from ledger.core import Ledger, Transaction, format_cents, parse_amount


class ParseAmountTests(unittest.TestCase):
    def test_parse_amount_plain(self):
        self.assertEqual(parse_amount("12.50"), 1250)

    def test_parse_amount_thousands(self):
        self.assertEqual(parse_amount("1,204.99"), 120499)

    def test_parse_amount_negative(self):
        self.assertEqual(parse_amount("-3"), -300)

    def test_parse_amount_rounds_half_up(self):
        self.assertEqual(parse_amount("2.675"), 268)

    def test_parse_amount_parentheses(self):
        self.assertEqual(parse_amount("(12.50)"), -1250)


class LedgerTests(unittest.TestCase):
    def test_balance_and_categories(self):
        ledger = Ledger()
        ledger.add(Transaction(date(2024, 1, 2), "Corner Bakery", -450, "food"))
        ledger.add(Transaction(date(2024, 1, 3), "Acme Payroll", 250000, "income"))
        self.assertEqual(ledger.balance(), 249550)
        self.assertEqual(ledger.by_category(), {"food": -450, "income": 250000})

    def test_format_cents(self):
        self.assertEqual(format_cents(-5), "-0.05")
        self.assertEqual(format_cents(120499), "1204.99")


if __name__ == "__main__":
    unittest.main()
`,
  "data/transactions.csv": transactionsCsv(),
};

function writeProject(dir) {
  fs.rmSync(dir, { recursive: true, force: true });
  for (const [rel, content] of Object.entries(PROJECT)) {
    const file = path.join(dir, rel);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, content);
  }
}

// --------------------------------------------------------------------------------------------
// Processes
// --------------------------------------------------------------------------------------------

function piEnv() {
  // The scripted model's bash commands use python3 from PATH.
  return piDriverEnv(AGENT_DIR, { PYTHONDONTWRITEBYTECODE: "1" });
}

/** Runs one print-mode pi invocation; resolves with {code, stdout, stderr}, rejects unless it exits 0. */
async function runPi(args, cwd) {
  const r = await runPiProcess([...PI_COMMON, ...args], { cwd, env: piEnv(), timeoutMs: PI_TIMEOUT_MS, killSignal: "SIGTERM", args });
  if (r.code !== 0) throw new Error(`pi exited with ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r;
}

/** A pi --mode rpc process with a small JSONL client (LF framing, as docs/rpc.md asks). */
class RpcPi extends PiRpc {
  constructor(args, cwd) {
    super([...PI_COMMON, "--mode", "rpc", ...args], { cwd, env: piEnv(), timeoutMs: PI_TIMEOUT_MS, idPrefix: "rec", pollMs: 150, killSignal: "SIGTERM" });
  }
}

async function startModel(logFile) {
  const child = spawn(process.execPath, [path.join(HERE, "loopback-model.mjs")], { env: { ...process.env, LOOPBACK_LOG: logFile }, stdio: ["ignore", "pipe", "inherit"] });
  children.add(child);
  const port = await new Promise((resolve, reject) => {
    let out = "";
    const t = setTimeout(() => reject(new Error("loopback model did not start")), 15000);
    child.stdout.on("data", (d) => {
      out += d;
      const m = /LOOPBACK_PORT=(\d+)/.exec(out);
      if (m) {
        clearTimeout(t);
        resolve(Number(m[1]));
      }
    });
    child.on("exit", (code) => reject(new Error(`loopback model exited with ${code}`)));
  });
  const url = `http://127.0.0.1:${port}`;
  return {
    port,
    async scenario(name) {
      const r = await fetch(`${url}/__control`, { method: "POST", body: JSON.stringify({ scenario: name }) });
      if (!r.ok) throw new Error("control failed");
    },
    async stats() {
      return (await fetch(`${url}/__stats`)).json();
    },
    async stop() {
      child.kill("SIGTERM");
      await new Promise((r) => (child.exitCode !== null ? r() : child.on("exit", r)));
      children.delete(child);
    },
  };
}

// --------------------------------------------------------------------------------------------
// Agent dir
// --------------------------------------------------------------------------------------------

function modelsJson(port) {
  return loopbackModels(port, { name: "Scripted loopback model (13k window)", contextWindow: CONTEXT_WINDOW });
}

const SETTINGS = {
  defaultProvider: "loopback",
  defaultModel: "scripted-13k",
  defaultThinkingLevel: "off",
  compaction: { enabled: true, reserveTokens: RESERVE_TOKENS, keepRecentTokens: KEEP_RECENT_TOKENS },
  branchSummary: { reserveTokens: BRANCH_RESERVE_TOKENS },
  retry: { enabled: false },
};

function writeAgentDir(port) {
  fs.mkdirSync(AGENT_DIR, { recursive: true });
  fs.writeFileSync(path.join(AGENT_DIR, "models.json"), `${JSON.stringify(modelsJson(port), null, 2)}\n`);
  fs.writeFileSync(path.join(AGENT_DIR, "settings.json"), `${JSON.stringify(SETTINGS, null, 2)}\n`);
}

function sessionFileFor(cwd) {
  const files = sessionFiles(AGENT_DIR, cwd);
  if (files.length !== 1) throw new Error(`expected one session file in ${sessionDir(AGENT_DIR, cwd)}, found ${files.length}`);
  return files[0];
}

// --------------------------------------------------------------------------------------------
// Recordings
// --------------------------------------------------------------------------------------------

const PROMPTS = {
  orient: `Get me oriented in the \`ledger\` package in this repo: read the README and the code, run the test suite and a type check, and tell me what state it's in.

Constraints for this whole job:
- Never touch \`ledger/legacy.py\`; it is frozen for the auditors.
- Use only the standard library (no new dependencies, no pip installs).
- Keep money as integer cents end to end, never floats.`,
  csvImport: "Add CSV import: a new module `ledger/csv_import.py` with `load_transactions(path)` that turns `data/transactions.csv` into `Transaction` objects via `parse_amount`. Check how `ledger/legacy.py` parsed the old export for the column conventions. Print every loaded transaction once it works so I can eyeball them.",
  fixParse: "Fix `parse_amount` in `ledger/core.py` properly: round half up to the cent and accept accounting negatives like `(12.50)`. Then remove the `_normalize_amount` workaround from `ledger/csv_import.py`, add importer tests in `tests/test_csv_import.py`, and show me the loaded transactions again (the first 200 are enough).",
  report: "Add a monthly report: `ledger/report.py`, runnable as `python3 -m ledger.report data/transactions.csv`, printing totals per month and per category with `format_cents`. Run it, check the usage error path, and run the tests.",
  mLook: "Read `ledger/core.py` and `tests/test_core.py`, run the tests, and tell me what fails.",
  mFix: "Fix the rounding bug in `parse_amount` (round half up to the cent, and accept `(12.50)` as a negative). Don't touch `ledger/legacy.py`.",
  mData: "How many refunds are in `data/transactions.csv`, and from which payees?",
  mLegacy: "Show me how `ledger/legacy.py` formats amounts compared to `format_cents`.",
  mReadme: 'Add a short "CSV import" section to `README.md` about `load_transactions`.',
  mImport: "Write `ledger/csv_import.py` with `load_transactions(path)` and try it on `data/transactions.csv`; print every transaction.",
  bStatus: "Run the tests and tell me what fails in `ledger/core.py`.",
  bFloat: "Try making `parse_amount` return float dollars instead of integer cents, and see what breaks.",
  bDecimal: "Undo the float experiment in `ledger/core.py`: keep integer cents and fix the rounding with `decimal` instead (round half up, and accept `(12.50)`).",
  bTest: "Add a test that `format_cents` handles large negative amounts, and run the tests.",
};

const RECORDINGS = {
  async "print-autocompact"(cwd) {
    await runPi(["-p", PROMPTS.orient], cwd);
    await runPi(["-p", "--continue", PROMPTS.csvImport], cwd);
    await runPi(["-p", "--continue", PROMPTS.fixParse], cwd);
    await runPi(["-p", "--continue", PROMPTS.report], cwd);
    return { oracle: {} };
  },
  async "rpc-manual"(cwd) {
    const pi = new RpcPi([], cwd);
    try {
      await pi.prompt(PROMPTS.mLook);
      await pi.prompt(PROMPTS.mFix);
      await pi.prompt(PROMPTS.mData);
      await pi.prompt(PROMPTS.mLegacy);
      await pi.send({ type: "compact", customInstructions: "Keep every file path and command" }, PI_TIMEOUT_MS);
      await pi.prompt(PROMPTS.mImport);
      await pi.prompt(PROMPTS.mReadme);
    } finally {
      await pi.close();
    }
    return { oracle: {} };
  },
  async "rpc-branch"(cwd) {
    const pi = new RpcPi(["-e", path.join(HERE, "navigate-ext.ts")], cwd);
    let target;
    let oldLeaf;
    try {
      await pi.prompt(PROMPTS.bStatus);
      const st = await pi.prompt(PROMPTS.bFloat);
      const entries = readEntries(st.sessionFile);
      const floatUser = entries.find((e) => e.type === "message" && e.message.role === "user" && JSON.stringify(e.message.content).includes("float dollars"));
      target = floatUser.parentId; // the answer that ended the first prompt
      oldLeaf = entries[entries.length - 1].id;
      await pi.command(`/arbor-nav ${target} float-experiment`);
      await pi.prompt(PROMPTS.bDecimal);
      await pi.prompt(PROMPTS.bTest);
    } finally {
      await pi.close();
    }
    // The oracle also simulates navigating back to the abandoned branch's tip.
    return { oracle: { target: oldLeaf }, navTarget: target, abandonedLeaf: oldLeaf };
  },
};

// --------------------------------------------------------------------------------------------
// Checks and oracle
// --------------------------------------------------------------------------------------------

const TURN_SEP = "\n\n---\n\n**Turn Context (split turn):**\n\n";

function splitSummary(summary) {
  let t = summary;
  const app = t.search(/\n\n<(read-files|modified-files)>/);
  if (app >= 0) t = t.slice(0, app);
  const i = t.indexOf(TURN_SEP);
  return { main: i >= 0 ? t.slice(0, i) : t, turn: i >= 0 ? t.slice(i + TURN_SEP.length) : null };
}

function sectionItems(main, heading) {
  const lines = main.split("\n");
  const start = lines.findIndex((l) => l.trim() === heading);
  if (start < 0) return [];
  const level = heading.startsWith("### ") ? /^#{2,3} / : /^## /;
  const items = [];
  for (const l of lines.slice(start + 1)) {
    if (level.test(l)) break;
    const item = l.trim().replace(/^(- \[[ x]\] |- |\d+\. )/, "");
    if (item && item !== "(none)") items.push(item);
  }
  return items;
}

/** Does the update summary `next` carry the main sections of `prev`, without copying prev's turn part? */
function carryCheck(prev, next) {
  const p = splitSummary(prev);
  const n = splitSummary(next);
  const missing = [];
  for (const [label, head] of [
    ["Goal", "## Goal"],
    ["Constraints", "## Constraints & Preferences"],
    ["Done", "### Done"],
    ["Key Decisions", "## Key Decisions"],
    ["Critical Context", "## Critical Context"],
  ]) {
    for (const item of sectionItems(p.main, head)) if (!n.main.includes(item)) missing.push(`${label}: ${item}`);
  }
  const mainLines = new Set(n.main.split("\n").map((l) => l.trim()));
  const copiedTurnLines = p.turn ? p.turn.split("\n").map((l) => l.trim()).filter((l) => l && !l.startsWith("#") && mainLines.has(l)) : [];
  return { missing, copiedTurnLines, turnHeadingsInMain: /^## (Original Request|Early Progress|Context for Suffix)$/m.test(n.main) };
}

function describeFile(file) {
  const entries = readEntries(file);
  const types = {};
  for (const e of entries) {
    const k = e.type === "message" ? `message:${e.message.role}` : e.type;
    types[k] = (types[k] || 0) + 1;
  }
  const compactions = entries
    .filter((e) => e.type === "compaction")
    .map((e) => ({ id: e.id, firstKeptEntryId: e.firstKeptEntryId, tokensBefore: e.tokensBefore, splitTurn: e.summary.includes("**Turn Context (split turn):**"), fromHook: e.fromHook }));
  const branchSummaries = entries.filter((e) => e.type === "branch_summary").map((e) => ({ id: e.id, parentId: e.parentId, fromId: e.fromId, fromHook: e.fromHook }));
  const all = entries.filter((e) => e.type === "compaction");
  const carry = all.slice(1).map((e, i) => ({ from: all[i].id, to: e.id, ...carryCheck(all[i].summary, e.summary) }));
  return { entries: entries.length, types, compactions, branchSummaries, carry };
}

function runOracle(name, file, extra) {
  const shared = process.env.SHARED;
  if (!shared) {
    const stale = path.join(FIXTURES, `${name}.expected.json`);
    const had = fs.existsSync(stale);
    fs.rmSync(stale, { force: true });
    log(`SHARED is not set: skipping the oracle for ${name}${had ? ` (removed the stale ${name}.expected.json)` : ""}; set SHARED to the shared kit with oracle/ to write it`);
    return Promise.resolve(null);
  }
  const oracle = path.resolve(shared, "oracle/oracle.mjs");
  if (!fs.existsSync(oracle)) throw new Error(`no oracle at ${oracle}`);
  const out = path.join(FIXTURES, `${name}${extra.variant ? `.${extra.variant}` : ""}.expected.json`);
  const args = [oracle, file, "--context-window", String(CONTEXT_WINDOW), "--reserve-tokens", String(RESERVE_TOKENS), "--keep-recent-tokens", String(KEEP_RECENT_TOKENS), "--branch-reserve-tokens", String(BRANCH_RESERVE_TOKENS)];
  if (extra.target) args.push("--target", extra.target);
  if (extra.leaf) args.push("--leaf", extra.leaf);
  args.push("--out", out);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env: { ...process.env, PI_ORACLE_HOME: process.env.PI_ORACLE_HOME || PI_HOME, PI_CODING_AGENT_DIR: path.join(WORK, "oracle-agent") }, stdio: ["ignore", "inherit", "pipe"] });
    let err = "";
    child.stderr.on("data", (d) => (err += d));
    const t = setTimeout(() => killTree(child, "SIGTERM"), PI_TIMEOUT_MS);
    child.on("exit", (code) => {
      clearTimeout(t);
      if (err.trim()) log(`oracle ${name}: ${err.trim()}`);
      if (code !== 0) reject(new Error(`oracle failed for ${name} (${code})`));
      else resolve(out);
    });
  });
}

/** Pi's answers for each recording at its leaf, and at the entry before each compaction Pi
 * wrote (`<name>.before-<compactionId>.expected.json`): there Pi's own preparation must give the
 * cut, split turn and tokens that the running agent wrote, and Arbor must agree with both. */
async function runOracles(extras) {
  for (const [name, extra] of Object.entries(extras)) {
    const file = path.join(FIXTURES, `${name}.jsonl`);
    const out = await runOracle(name, file, extra);
    if (!out) continue;
    log(`oracle: ${path.relative(REPO, out)}`);
    for (const c of readEntries(file).filter((e) => e.type === "compaction")) {
      const v = await runOracle(name, file, { leaf: c.parentId, variant: `before-${c.id}` });
      log(`oracle: ${path.relative(REPO, v)}`);
    }
  }
}

// --------------------------------------------------------------------------------------------
// Main
// --------------------------------------------------------------------------------------------

async function main() {
  if (!fs.existsSync(PI_CLI)) throw new Error(`Pi is not installed at ${PI_CLI}; run npm ci in tests/pi`);
  const started = Date.now();
  fs.rmSync(WORK, { recursive: true, force: true });
  fs.mkdirSync(WORK, { recursive: true });
  fs.mkdirSync(path.join(WORK, "oracle-agent"), { recursive: true });
  const model = await startModel(path.join(WORK, "requests.jsonl"));
  log(`loopback model on 127.0.0.1:${model.port}; scratch ${WORK}`);
  const results = {};
  try {
    writeAgentDir(model.port);
    fs.mkdirSync(FIXTURES, { recursive: true });
    for (const [name, record] of Object.entries(RECORDINGS)) {
      if (ONLY && !ONLY.has(name)) continue;
      const cwd = path.join(WORK, name);
      writeProject(cwd);
      await model.scenario(name);
      const t0 = Date.now();
      log(`recording ${name} in ${cwd}`);
      const info = await record(cwd);
      const file = sessionFileFor(cwd);
      const dest = path.join(FIXTURES, `${name}.jsonl`);
      fs.copyFileSync(file, dest);
      results[name] = { file: dest, ...info, model: (await model.stats())[name], facts: describeFile(dest), seconds: Math.round((Date.now() - t0) / 1000) };
      log(`  ${name}: ${JSON.stringify(results[name].facts.types)} in ${results[name].seconds}s`);
    }
    const agentOut = path.join(FIXTURES, "agent");
    fs.mkdirSync(agentOut, { recursive: true });
    fs.writeFileSync(path.join(agentOut, "models.json"), `${JSON.stringify(modelsJson(PLACEHOLDER_PORT), null, 2)}\n`);
    fs.copyFileSync(path.join(AGENT_DIR, "settings.json"), path.join(agentOut, "settings.json"));
  } finally {
    await model.stop();
  }
  await runOracles(Object.fromEntries(Object.entries(results).map(([name, r]) => [name, r.oracle || {}])));
  // Structural expectations of the recordings.
  const problems = [];
  const pa = results["print-autocompact"];
  if (pa) {
    const c = pa.facts.compactions;
    if (c.length < 3) problems.push(`print-autocompact: ${c.length} compactions, want >= 3`);
    if (c.some((x) => !x.splitTurn)) problems.push("print-autocompact: a compaction is not a split turn");
  }
  for (const [name, r] of Object.entries(results)) {
    r.facts.carry.forEach((c, i) => {
      if (c.copiedTurnLines.length || c.turnHeadingsInMain) problems.push(`${name}: compaction ${c.to} copies the previous turn part`);
      const deliberate = name === "print-autocompact" && i === 1; // the 3rd compaction drops the legacy.py constraint
      if (deliberate) {
        if (c.missing.length !== 1 || !/^Constraints: .*legacy\.py/.test(c.missing[0])) problems.push(`${name}: the 3rd compaction should drop exactly the legacy.py constraint, missing: ${JSON.stringify(c.missing)}`);
      } else if (c.missing.length) problems.push(`${name}: compaction ${c.to} lost ${JSON.stringify(c.missing)}`);
    });
  }
  const rm = results["rpc-manual"];
  if (rm && rm.facts.compactions.length < 1) problems.push("rpc-manual: no compaction");
  const rb = results["rpc-branch"];
  if (rb && rb.facts.branchSummaries.length !== 1) problems.push(`rpc-branch: ${rb.facts.branchSummaries.length} branch summaries, want 1`);
  console.log(JSON.stringify({ seconds: Math.round((Date.now() - started) / 1000), results, problems }, null, 2));
  if (problems.length) {
    log(`PROBLEMS:\n  ${problems.join("\n  ")}`);
    process.exitCode = 1;
  }
}

if (process.argv.includes("--oracle-only")) {
  // Pi's answers for the committed recordings, without recording again (ids stay).
  // The navigation target of the leaf's run is the one the last run chose (in its options).
  const optionsOf = (name) => {
    const f = path.join(FIXTURES, `${name}.expected.json`);
    const o = fs.existsSync(f) ? JSON.parse(fs.readFileSync(f, "utf8")).options || {} : {};
    return o.target ? { target: o.target } : {};
  };
  runOracles(Object.fromEntries(Object.keys(RECORDINGS).map((n) => [n, optionsOf(n)]))).catch((e) => {
    console.error(e?.stack || e);
    process.exit(1);
  });
} else if (process.argv.includes("--write-project")) {
  writeProject(path.resolve(process.argv[process.argv.indexOf("--write-project") + 1]));
} else {
  const cleanup = () => {
    for (const c of children) killTree(c, "SIGTERM");
  };
  process.on("SIGINT", () => (cleanup(), process.exit(130)));
  process.on("SIGTERM", () => (cleanup(), process.exit(143)));
  main().catch((e) => {
    cleanup();
    console.error(e?.stack || e);
    process.exit(1);
  });
}
