import { describe, expect, it } from "vitest";
import fs from "node:fs";
import path from "node:path";
import { selectedId, session, setSelectedId, setSession, subscribe } from "../src/store";
import type { OpenedSession } from "../src/ipc";

const src = path.resolve(__dirname, "../src");
const files: string[] = [];
const walk = (d: string): void =>
  fs.readdirSync(d, { withFileTypes: true }).forEach((e: fs.Dirent) => (e.isDirectory() ? walk(path.join(d, e.name)) : e.name.endsWith(".ts") && files.push(path.join(d, e.name))));
walk(src);
const rel = (f: string) => path.relative(src, f).split(path.sep).join("/");
const text = new Map(files.map((f) => [rel(f), fs.readFileSync(f, "utf8")]));

/** The UI modules a module imports (relative imports only, `import type` included). */
function importsOf(file: string): string[] {
  const out: string[] = [];
  for (const m of text.get(file)!.matchAll(/^(?:import|export)\b[^;]*?\bfrom\s+"(\.[^"]+)"/gms)) {
    const base = path.posix.normalize(path.posix.join(path.posix.dirname(file), m[1]));
    const hit = [`${base}.ts`, `${base}/index.ts`].find((c) => text.has(c));
    if (hit) out.push(hit);
  }
  return out;
}

describe("the UI's structure", () => {
  it("found the sources", () => {
    expect(text.size).toBeGreaterThan(30);
    expect(importsOf("main.ts")).toContain("session/lifecycle.ts");
  });

  it("has no import cycle between UI modules", () => {
    const state = new Map<string, "open" | "done">();
    const cycles: string[] = [];
    const visit = (f: string, trail: string[]): void => {
      if (state.get(f) === "done") return;
      if (state.get(f) === "open") {
        cycles.push([...trail.slice(trail.indexOf(f)), f].join(" → "));
        return;
      }
      state.set(f, "open");
      for (const g of importsOf(f)) visit(g, [...trail, f]);
      state.set(f, "done");
    };
    for (const f of text.keys()) visit(f, []);
    expect(cycles).toEqual([]);
  });

  it("keeps every file under 1,000 lines but the generated bindings", () => {
    for (const [f, t] of text) if (f !== "ipc/bindings.ts") expect(t.split("\n").length, f).toBeLessThanOrEqual(1000);
  });

  it("gives each binding type one name, aliased in ipc/index.ts only", () => {
    const bindings = text.get("ipc/bindings.ts")!;
    const door = text.get("ipc/index.ts")!;
    const pairs = [...bindings.matchAll(/^export type (\w+)_Serialize\b/gm)].map((m) => m[1]);
    expect(pairs.length).toBeGreaterThan(0);
    for (const n of pairs) expect(door.includes(`export type ${n} = ${n}_Serialize;`), n).toBe(true);
    for (const [f, t] of text) if (f !== "ipc/index.ts") expect(/_(?:Serialize|Deserialize) as\b/.test(t), f).toBe(false);
  });

  it("has one copy of the DOM helpers (ui/src/dom.ts)", () => {
    for (const [f, t] of text) {
      if (f === "dom.ts") continue;
      expect(/\bfunction el\s*[<(]|\bconst \$ = /.test(t), f).toBe(false);
    }
  });
});

describe("the store", () => {
  it("holds the session and the selection and tells its listeners of each change", () => {
    const seen: string[] = [];
    const stop = subscribe(() => seen.push(`${session()?.path ?? "-"}|${selectedId() ?? "-"}`));
    setSession({ path: "/a.jsonl" } as OpenedSession);
    setSelectedId("e1");
    stop();
    setSelectedId("e2");
    expect(seen).toEqual(["/a.jsonl|-", "/a.jsonl|e1"]);
    expect(selectedId()).toBe("e2");
    setSession(null);
    setSelectedId(null);
  });
});
