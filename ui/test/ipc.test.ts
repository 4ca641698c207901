import { afterEach, describe, expect, it } from "vitest";
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { api, call, CommandError } from "../src/ipc";
import fs from "node:fs";
import path from "node:path";

afterEach(() => clearMocks());

describe("the IPC door", () => {
  it("unwraps ok results from the generated bindings", async () => {
    mockIPC((cmd, args) => {
      if (cmd === "graph_window") return { start: (args as { start: number }).start, totalRows: 1, lanes: 1, rows: [] };
      throw new Error(`unexpected ${cmd}`);
    });
    const w = await call(api.graphWindow(0, 10));
    expect(w.totalRows).toBe(1);
  });

  it("turns a tagged error into a CommandError the UI can branch on", async () => {
    mockIPC(() => {
      throw { kind: "notFound", message: "no session is open", hint: "Open a session first." };
    });
    const err = await call(api.currentSession()).catch((e) => e);
    expect(err).toBeInstanceOf(CommandError);
    expect(err.ipc.kind).toBe("notFound");
    expect(err.ipc.hint).toBe("Open a session first.");
  });

  it("only src/ipc/index.ts imports the bindings, and nothing uses innerHTML", () => {
    const src = path.resolve(__dirname, "../src");
    const files: string[] = [];
    const walk = (d: string): void => fs.readdirSync(d, { withFileTypes: true }).forEach((e: fs.Dirent) => (e.isDirectory() ? walk(path.join(d, e.name)) : files.push(path.join(d, e.name))));
    walk(src);
    // The scan below holds every assertion: it must have found the sources.
    expect(files.filter((f) => f.endsWith(".ts")).length).toBeGreaterThan(10);
    for (const f of files.filter((f) => f.endsWith(".ts") && !f.endsWith("bindings.ts"))) {
      const text = fs.readFileSync(f, "utf8");
      expect(/innerHTML|outerHTML|insertAdjacentHTML|document\.write/.test(text), f).toBe(false);
      if (!f.endsWith(path.join("ipc", "index.ts"))) expect(text.includes("ipc/bindings"), f).toBe(false);
    }
  });
});
