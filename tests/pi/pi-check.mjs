#!/usr/bin/env node
// Pi as the real client in Arbor's tests. Loads a session file with Pi's own code (the pinned
// @mariozechner/pi-coding-agent installed in tests/pi/node_modules by scripts/setup.sh) and
// prints, as one JSON object, what Pi computes; or lets Pi append to the file the way Pi does.
//
//   node tests/pi/pi-check.mjs load FILE [--leaf ID|null]
//   node tests/pi/pi-check.mjs append FILE --text T [--reply R]
//   node tests/pi/pi-check.mjs append-loop FILE --rounds N [--sleep-ms MAX | --every-ms N] [--tag T]
//
// append-loop: one SessionManager opens FILE once and appends N user+assistant pairs, with a
// random sleep of 0..MAX ms (default 4) before each message, as a running Pi would while another
// program (Arbor) appends to the same file (--every-ms N: exactly N ms before each message, a
// steady writer). Pi does not re-read the file: each of its entries
// parents to Pi's own in-memory leaf. Prints {ids:[{id,parentId}…]} in the order written.
//
// Exit codes: 0 ok, 2 usage, 3 Pi is not installed, 4 Pi refuses (append on a file Pi would rewrite).
// Pi never sees the real ~/.pi: PI_CODING_AGENT_DIR points at a temporary folder unless set.

import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const PI_VERSION = "0.73.1";
const HERE = path.dirname(fileURLToPath(import.meta.url));

function fail(code, msg) {
	process.stderr.write(`pi-check: ${msg}\n`);
	process.exit(code);
}

let tmpAgentDir = null;
if (!process.env.PI_CODING_AGENT_DIR) {
	tmpAgentDir = fs.mkdtempSync(path.join(os.tmpdir(), "arbor-pi-check-"));
	process.env.PI_CODING_AGENT_DIR = tmpAgentDir;
	process.on("exit", () => fs.rmSync(tmpAgentDir, { recursive: true, force: true }));
}
process.env.PI_TELEMETRY ??= "0";

// The package's "exports" map only exposes "." (which starts the whole CLI); the session and
// compaction modules are reached by file path inside the installed package.
async function loadPi() {
	const pkgDir = path.join(HERE, "node_modules/@mariozechner/pi-coding-agent");
	const pkgJson = path.join(pkgDir, "package.json");
	if (!fs.existsSync(pkgJson)) fail(3, `Pi is not installed in ${path.join(HERE, "node_modules")}; run scripts/setup.sh (it runs npm ci in tests/pi).`);
	const version = JSON.parse(fs.readFileSync(pkgJson, "utf8")).version;
	if (version !== PI_VERSION) fail(3, `Pi ${version} is installed but the tests pin ${PI_VERSION}; run scripts/setup.sh.`);
	const imp = (rel) => import(pathToFileURL(path.join(pkgDir, "dist", rel)).href);
	const [sessionManager, compaction] = await Promise.all([imp("core/session-manager.js"), imp("core/compaction/index.js")]);
	return { version, sessionManager, compaction };
}

const sha256 = (s) => crypto.createHash("sha256").update(s, "utf8").digest("hex");

/** The text a message carries, by one rule Arbor's test support repeats in Rust. */
function messageText(m) {
	switch (m?.role) {
		case "branchSummary":
		case "compactionSummary":
			return typeof m.summary === "string" ? m.summary : "";
		case "bashExecution":
			return typeof m.command === "string" ? m.command : "";
		default: {
			const c = m?.content;
			if (typeof c === "string") return c;
			if (Array.isArray(c))
				return c
					.filter((b) => b && b.type === "text" && typeof b.text === "string")
					.map((b) => b.text)
					.join("\n");
			return "";
		}
	}
}

function isEntry(v) {
	return v !== null && typeof v === "object" && !Array.isArray(v) && typeof v.id === "string" && v.type !== "session";
}

function load(pi, file, leaf) {
	const SM = pi.sessionManager;
	const raw = fs.readFileSync(file, "utf8");
	// Pi's own line rules (loadEntriesFromFile): trim, split on \n, skip blank and unparsable lines.
	const lines = raw.trim().split("\n");
	let nonEmptyLines = 0;
	const malformedLines = [];
	lines.forEach((line, i) => {
		if (!line.trim()) return;
		nonEmptyLines++;
		try {
			JSON.parse(line);
		} catch {
			malformedLines.push(i + 1);
		}
	});
	const parsed = SM.loadEntriesFromFile(file);
	const headerAccepted = parsed.length > 0;
	// inMemory: Pi never writes here, even for a file it would rewrite (no header, old version).
	const sm = SM.SessionManager.inMemory("/");
	sm.setSessionFile(file);
	const entries = headerAccepted ? sm.getEntries() : [];
	// A non-empty line that did not become the header or an entry Pi indexes by a string id:
	// unparsable lines, repeated headers, values that are not entry objects.
	const skippedLines = headerAccepted ? nonEmptyLines - 1 - entries.filter(isEntry).length : nonEmptyLines;
	if (leaf === "null") sm.resetLeaf();
	else if (leaf !== undefined) sm.branch(leaf);
	const ctx = headerAccepted ? sm.buildSessionContext() : { messages: [], thinkingLevel: "off", model: null };
	const labels = {};
	for (const e of entries) {
		const l = sm.getLabel(e.id);
		if (l !== undefined) labels[e.id] = l;
	}
	const header = headerAccepted ? sm.getHeader() : null;
	return {
		pi: pi.version,
		headerAccepted,
		version: header ? (header.version ?? null) : null,
		sessionId: header ? header.id : null,
		nonEmptyLines,
		entries: entries.length,
		skippedLines,
		malformedLines,
		leafId: headerAccepted ? sm.getLeafId() : null,
		name: sm.getSessionName() ?? null,
		labels,
		context: {
			messages: ctx.messages.map((m) => ({ role: m.role, text: messageText(m), sha256: sha256(JSON.stringify(m)) })),
			tokens: pi.compaction.estimateContextTokens(ctx.messages),
			thinkingLevel: ctx.thinkingLevel,
			model: ctx.model ?? null,
		},
	};
}

async function append(pi, file, text, reply) {
	const SM = pi.sessionManager;
	const parsed = SM.loadEntriesFromFile(file);
	const header = parsed[0];
	// Pi would replace a header-less file and rewrite an older version; the tests never want that.
	if (parsed.length === 0) fail(4, `${file}: Pi does not accept this file's header (it would replace the file); not appending.`);
	if (header.version !== SM.CURRENT_SESSION_VERSION) fail(4, `${file}: version ${header.version} file; Pi would rewrite it to migrate; not appending.`);
	// Before the first assistant message Pi holds entries in memory and later rewrites them all.
	if (!parsed.some((e) => e && e.type === "message" && e.message?.role === "assistant"))
		fail(4, `${file}: no assistant message yet; Pi would hold the append in memory, not write it.`);
	const sm = SM.SessionManager.open(file, path.dirname(file));
	const before = sm.getLeafId();
	const ids = [];
	// The shape Pi's AgentSession gives a typed prompt.
	ids.push(sm.appendMessage({ role: "user", content: [{ type: "text", text }], timestamp: Date.now() }));
	if (reply !== undefined) {
		const faux = await import(pathToFileURL(path.join(HERE, "node_modules/@mariozechner/pi-ai/dist/providers/faux.js")).href);
		ids.push(sm.appendMessage(faux.fauxAssistantMessage(reply)));
	}
	return { pi: pi.version, parentId: before, ids, leafId: sm.getLeafId() };
}

// fork: Pi's `/fork` (createBranchedSession) of FILE at --leaf ID; child: Pi's
// newSession({parentSession: FILE}) with one user message and a reply (Pi writes a new session
// file only once it has an assistant message). Both write into FILE's folder and print {file}.
async function fork(pi, file, leaf) {
	const sm = pi.sessionManager.SessionManager.open(file, path.dirname(file));
	const out = sm.createBranchedSession(leaf ?? sm.getLeafId());
	return { pi: pi.version, file: out, leafId: sm.getLeafId() };
}

async function child(pi, file, text) {
	const SM = pi.sessionManager;
	const sm = SM.SessionManager.create(path.dirname(file), path.dirname(file));
	sm.newSession({ parentSession: file });
	const faux = await import(pathToFileURL(path.join(HERE, "node_modules/@mariozechner/pi-ai/dist/providers/faux.js")).href);
	sm.appendMessage({ role: "user", content: [{ type: "text", text: text ?? "child" }], timestamp: Date.now() });
	sm.appendMessage(faux.fauxAssistantMessage("ok"));
	return { pi: pi.version, file: sm.getSessionFile(), leafId: sm.getLeafId() };
}

async function appendLoop(pi, file, rounds, sleepMs, tag, everyMs) {
	const SM = pi.sessionManager;
	const parsed = SM.loadEntriesFromFile(file);
	if (parsed.length === 0) fail(4, `${file}: Pi does not accept this file's header (it would replace the file); not appending.`);
	if (parsed[0].version !== SM.CURRENT_SESSION_VERSION) fail(4, `${file}: version ${parsed[0].version} file; Pi would rewrite it to migrate; not appending.`);
	if (!parsed.some((e) => e && e.type === "message" && e.message?.role === "assistant"))
		fail(4, `${file}: no assistant message yet; Pi would hold the append in memory, not write it.`);
	const faux = await import(pathToFileURL(path.join(HERE, "node_modules/@mariozechner/pi-ai/dist/providers/faux.js")).href);
	const sm = SM.SessionManager.open(file, path.dirname(file));
	const startLeaf = sm.getLeafId();
	const written = [];
	const nap = () => new Promise((r) => setTimeout(r, everyMs !== undefined ? everyMs : Math.random() * sleepMs));
	for (let i = 0; i < rounds; i++) {
		await nap();
		let parentId = sm.getLeafId();
		let id = sm.appendMessage({ role: "user", content: [{ type: "text", text: `${tag} user ${i}` }], timestamp: Date.now() });
		written.push({ id, parentId });
		await nap();
		parentId = sm.getLeafId();
		id = sm.appendMessage(faux.fauxAssistantMessage(`${tag} reply ${i}`));
		written.push({ id, parentId });
	}
	return { pi: pi.version, startLeaf, ids: written, leafId: sm.getLeafId() };
}

function parseArgs(argv) {
	const [mode, file, ...rest] = argv;
	const usage =
		"usage: pi-check.mjs load FILE [--leaf ID|null] | append FILE --text T [--reply R] | append-loop FILE --rounds N [--sleep-ms MAX | --every-ms N] [--tag T] | fork FILE [--leaf ID] | child FILE [--text T]";
	if (!["load", "append", "append-loop", "fork", "child"].includes(mode) || !file) fail(2, usage);
	const o = { mode, file, sleepMs: 4, tag: "pi" };
	for (let i = 0; i < rest.length; i++) {
		const k = rest[i];
		const v = rest[i + 1];
		if (v === undefined) fail(2, `${k} expects a value; ${usage}`);
		if (k === "--leaf") o.leaf = v;
		else if (k === "--text") o.text = v;
		else if (k === "--reply") o.reply = v;
		else if (k === "--rounds" && mode === "append-loop") o.rounds = Number(v);
		else if (k === "--sleep-ms" && mode === "append-loop") o.sleepMs = Number(v);
		else if (k === "--every-ms" && mode === "append-loop") o.everyMs = Number(v);
		else if (k === "--tag" && mode === "append-loop") o.tag = v;
		else fail(2, `unknown option ${k}; ${usage}`);
		i++;
	}
	if (mode === "append" && o.text === undefined) fail(2, `append needs --text; ${usage}`);
	if (mode === "append-loop" && !(Number.isInteger(o.rounds) && o.rounds > 0)) fail(2, `append-loop needs --rounds N (a positive integer); ${usage}`);
	if (mode === "append-loop" && !(o.sleepMs >= 0)) fail(2, `--sleep-ms expects a number of milliseconds; ${usage}`);
	return o;
}

const args = parseArgs(process.argv.slice(2));
if (!fs.existsSync(args.file)) fail(2, `${args.file}: no such file`);
const pi = await loadPi();
let out;
try {
	if (args.mode === "load") out = load(pi, args.file, args.leaf);
	else if (args.mode === "append") out = await append(pi, args.file, args.text, args.reply);
	else if (args.mode === "fork") out = await fork(pi, args.file, args.leaf);
	else if (args.mode === "child") out = await child(pi, args.file, args.text);
	else out = await appendLoop(pi, args.file, args.rounds, args.sleepMs, args.tag, args.everyMs);
} catch (e) {
	fail(1, e && e.stack ? e.stack : String(e));
}
process.stdout.write(`${JSON.stringify(out)}\n`, () => process.exit(0));
