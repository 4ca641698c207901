#!/usr/bin/env node
// Phase 1 of the index against Pi's own SessionManager.list on the same folder: every session's
// id, cwd, name, created, modified and message count must be equal, and the first message the
// same text (Arbor keeps its first 500 bytes).
//   PI_DIR=... node pi-list-agrees.mjs DIR OURS.json      (OURS.json: `bench dump DB`)
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
const [dir, oursFile] = process.argv.slice(2);
const PKG = path.join(process.env.PI_DIR, "node_modules/@mariozechner/pi-coding-agent/dist");
const SM = await import(pathToFileURL(path.join(PKG, "core/session-manager.js")).href);
const pi = await SM.SessionManager.list("/", dir);
const ours = new Map(JSON.parse(fs.readFileSync(oursFile, "utf8")).map((s) => [s.path, s]));
let bad = 0;
for (const s of pi) {
  const o = ours.get(s.path);
  const want = { id: s.id, cwd: s.cwd, name: s.name ?? null, created: s.created.getTime(), modified: s.modified.getTime(), messageCount: s.messageCount };
  const got = o && { id: o.id, cwd: o.cwd, name: o.name, created: o.created, modified: o.modified, messageCount: o.messageCount };
  const first = s.firstMessage === "(no messages)" ? "" : s.firstMessage;
  const oursFirst = (o && o.firstMessage) || "";
  const firstOk = first.startsWith(oursFirst) && Buffer.byteLength(oursFirst) >= Math.min(Buffer.byteLength(first), 497);
  if (!o || JSON.stringify(want) !== JSON.stringify(got) || !firstOk) {
    bad++;
    if (bad <= 5) console.log("differs:", s.path, JSON.stringify(want), JSON.stringify(got), firstOk);
  }
}
console.log(`${pi.length} sessions in Pi's list, ${ours.size} in the index, ${bad} differ`);
process.exit(bad || pi.length !== ours.size ? 1 : 0);
