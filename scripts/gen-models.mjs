#!/usr/bin/env node
// Extracts Pi's published model table ({provider, id, name, contextWindow, maxTokens}) from the
// installed @mariozechner/pi-ai (tests/pi/node_modules) into
// src-tauri/crates/summarizer/pi-models.json, which the app embeds (include_str!): it works
// offline and no test reads tests/pi at run time. Run again after updating Pi:
//   node scripts/gen-models.mjs [path/to/pi-ai/dist/models.generated.js]
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const pkgDir = path.join(root, "tests/pi/node_modules/@mariozechner/pi-ai");
const src = process.argv[2] ?? path.join(pkgDir, "dist/models.generated.js");
const out = path.join(root, "src-tauri/crates/summarizer/pi-models.json");

const { MODELS } = await import(pathToFileURL(src).href);
let version = null;
try {
  version = JSON.parse(fs.readFileSync(path.join(pkgDir, "package.json"), "utf8")).version;
} catch {
  /* a models file given by path: no version */
}
const rows = [];
for (const provider of Object.keys(MODELS).sort()) {
  for (const key of Object.keys(MODELS[provider]).sort()) {
    const m = MODELS[provider][key];
    if (!Number.isFinite(m.contextWindow) || m.contextWindow <= 0) continue;
    rows.push({ provider: m.provider ?? provider, id: m.id ?? key, name: m.name ?? key, contextWindow: m.contextWindow, maxTokens: m.maxTokens ?? 0 });
  }
}
// One model per line, so an update shows as a readable diff.
const body = rows.map((r) => "    " + JSON.stringify(r)).join(",\n");
fs.writeFileSync(out, `{\n  "source": "@mariozechner/pi-ai${version ? ` ${version}` : ""} models.generated.js",\n  "models": [\n${body}\n  ]\n}\n`);
console.log(`${rows.length} models from ${Object.keys(MODELS).length} providers -> ${path.relative(root, out)}`);
