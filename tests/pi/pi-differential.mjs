#!/usr/bin/env node
// Differential testing against Pi's loader, many files per process (Node and Pi start-up cost
// about a second; the load itself is milliseconds). Reads one file path per line on stdin and
// prints, per file, one JSON line with what Pi 0.73.1 computes for it: the load section the
// conformance corpus's oracle writes (nonEmptyLines, malformedLines, headerAccepted,
// versionInFile, migrated, entryCount, fileLeafId, sessionName, labels, roots in getTree order,
// one per occurrence) and the context at the file's leaf (each message's role and the sha256 of
// its JSON.stringify, estimateContextTokens, thinkingLevel, model). A file Pi throws on gives
// {file, error}; a file Pi does not finish within --timeout-ms (default 5000; Pi loops forever
// on a parentId cycle) gives {file, timeout: true}. Pi runs in a worker thread, which is
// replaced after a timeout. Used by session-engine/examples/differential.rs.
//
//   printf '%s\n' a.jsonl b.jsonl | node tests/pi/pi-differential.mjs [--timeout-ms MS]
//
// Pi never sees the real ~/.pi: PI_CODING_AGENT_DIR points at a temporary folder unless set, and
// the SessionManager is in-memory, so Pi never rewrites a file it would migrate or replace.

import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Worker, isMainThread, parentPort } from "node:worker_threads";

const PI_VERSION = "0.73.1";
const HERE = path.dirname(fileURLToPath(import.meta.url));

if (!process.env.PI_CODING_AGENT_DIR) {
	const d = fs.mkdtempSync(path.join(os.tmpdir(), "arbor-pi-diff-"));
	process.env.PI_CODING_AGENT_DIR = d;
	process.on("exit", () => fs.rmSync(d, { recursive: true, force: true }));
}
process.env.PI_TELEMETRY ??= "0";

const pkgDir = path.join(HERE, "node_modules/@mariozechner/pi-coding-agent");
if (!fs.existsSync(path.join(pkgDir, "package.json"))) {
	process.stderr.write(`pi-differential: Pi is not installed in ${path.join(HERE, "node_modules")}; run scripts/setup.sh.\n`);
	process.exit(3);
}
const version = JSON.parse(fs.readFileSync(path.join(pkgDir, "package.json"), "utf8")).version;
if (version !== PI_VERSION) {
	process.stderr.write(`pi-differential: Pi ${version} is installed but the tests pin ${PI_VERSION}; run scripts/setup.sh.\n`);
	process.exit(3);
}
const imp = (rel) => import(pathToFileURL(path.join(pkgDir, "dist", rel)).href);
const [SM, compaction] = await Promise.all([imp("core/session-manager.js"), imp("core/compaction/index.js")]);
const sha256 = (s) => crypto.createHash("sha256").update(s, "utf8").digest("hex");

function describe(file) {
	const raw = fs.readFileSync(file, "utf8");
	const lines = raw.trim().split("\n");
	let nonEmptyLines = 0;
	const malformedLines = [];
	let firstParsed = null;
	lines.forEach((line, i) => {
		if (!line.trim()) return;
		nonEmptyLines++;
		try {
			const v = JSON.parse(line);
			if (firstParsed === null) firstParsed = v;
		} catch {
			malformedLines.push(i + 1);
		}
	});
	const headerAccepted = SM.loadEntriesFromFile(file).length > 0;
	const versionInFile = firstParsed && firstParsed.type === "session" ? (firstParsed.version ?? null) : null;
	const migrated = headerAccepted && (versionInFile === null || versionInFile < SM.CURRENT_SESSION_VERSION);
	const sm = SM.SessionManager.inMemory("/");
	sm.setSessionFile(file);
	const entries = sm.getEntries();
	const labels = {};
	for (const e of entries) {
		const l = sm.getLabel(e.id);
		if (l !== undefined) labels[e.id] = l;
	}
	const roots = sm.getTree().map((n) => n.entry.id);
	const ctx = sm.buildSessionContext();
	return {
		file,
		load: {
			nonEmptyLines,
			malformedLines,
			headerAccepted,
			versionInFile,
			migrated,
			entryCount: entries.length,
			fileLeafId: headerAccepted ? (sm.getLeafId() ?? null) : null,
			sessionName: sm.getSessionName() ?? null,
			labels,
			roots,
		},
		context: {
			messages: ctx.messages.map((m) => ({ role: m.role ?? null, sha256: sha256(JSON.stringify(m)) })),
			tokens: compaction.estimateContextTokens(ctx.messages),
			thinkingLevel: ctx.thinkingLevel,
			model: ctx.model ?? null,
		},
	};
}

if (!isMainThread) {
	parentPort.on("message", (file) => {
		let out;
		try {
			out = JSON.stringify(describe(file));
		} catch (e) {
			out = JSON.stringify({ file, error: String(e && e.message ? e.message : e).slice(0, 300) });
		}
		parentPort.postMessage(out);
	});
} else {
	const ti = process.argv.indexOf("--timeout-ms");
	const timeoutMs = ti > 0 ? Number(process.argv[ti + 1]) : 5000;
	let worker = null;
	const ask = (file) =>
		new Promise((resolve) => {
			if (!worker) worker = new Worker(fileURLToPath(import.meta.url), { env: process.env });
			const w = worker;
			const timer = setTimeout(() => {
				w.removeAllListeners("message");
				w.terminate();
				worker = null;
				resolve(JSON.stringify({ file, timeout: true }));
			}, timeoutMs);
			w.once("message", (out) => {
				clearTimeout(timer);
				resolve(out);
			});
			w.postMessage(file);
		});
	const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
	for await (const file of rl) {
		if (!file) continue;
		const out = await ask(file);
		if (!process.stdout.write(`${out}\n`)) await new Promise((r) => process.stdout.once("drain", r));
	}
	if (worker) await worker.terminate();
}
