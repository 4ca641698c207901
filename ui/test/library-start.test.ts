import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { beforeEach, describe, expect, it, vi } from "vitest";

// The library's start: its first index pass answers through the channel (here, when the test
// says so) and the listing at once, with no session (so a start that shows nothing opens the demo).
const status = { dbPath: "/tmp/index.sqlite3", synced: false, done: 0, total: 1, fullText: false, notices: [], errors: [], lastPassMs: null, files: 0, cancelled: false, fullTextLeft: 0 };
let channel: { onmessage: (m: unknown) => void } | null = null;
vi.mock("@tauri-apps/api/core", () => ({
  Channel: class {
    onmessage: (m: unknown) => void = () => {};
    constructor() {
      channel = this;
    }
  },
}));
vi.mock("../src/ipc/bindings", () => ({
  commands: {
    librarySubscribe: () => Promise.resolve({ status: "ok", data: { ...status } }),
    libraryListing: () => Promise.resolve({ status: "ok", data: { status: { ...status, synced: true }, roots: [], projects: [], models: [], sessions: [], recent: [] } }),
  },
}));

const { startLibrary } = await import("../src/library/index");
const html = readFileSync(resolve(__dirname, "../index.html"), "utf8");
const tick = () => new Promise((r) => setTimeout(r, 0));

describe("the session picker at start", () => {
  const openDemo = vi.fn(() => Promise.resolve());
  const start = () =>
    startLibrary({ openPath: () => Promise.resolve(), openDemo, jumpTo: () => Promise.resolve(), onOpenSessionChanged: () => Promise.resolve(), notify() {}, report() {} });
  beforeEach(() => {
    document.body.innerHTML = /<body[^>]*>([\s\S]*)<\/body>/.exec(html)![1];
    openDemo.mockClear();
  });

  it("stays closed after the first index pass when it was closed during it (a session opened from it)", async () => {
    const done = start();
    for (let i = 0; i < 5; i++) await tick();
    // Shown while the first pass runs.
    expect(document.getElementById("picker")!.hidden).toBe(false);
    // A session is opened from it, which closes it; then the pass ends.
    document.getElementById("picker")!.hidden = true;
    channel!.onmessage({ kind: "synced", files: 1, ms: 5 });
    await done;
    expect(document.getElementById("picker")!.hidden).toBe(true);
    expect(openDemo).not.toHaveBeenCalled();
  });

  it("goes on as before when it is still open at the pass's end (nothing to show: the demo)", async () => {
    const done = start();
    for (let i = 0; i < 5; i++) await tick();
    channel!.onmessage({ kind: "synced", files: 0, ms: 5 });
    await done;
    expect(openDemo).toHaveBeenCalledTimes(1);
  });
});
