import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

// The graph asks Rust for its rows through the generated bindings; here they answer at once.
const asked: [number, number][] = [];
vi.mock("../src/ipc/bindings", () => ({
  commands: {
    graphWindow: (start: number, end: number) => {
      asked.push([start, end]);
      const rows = Array.from({ length: end - start }, (_, i) => ({
        row: start + i,
        lane: 0,
        fromAbove: true,
        toBelow: true,
        through: [],
        forks: [],
        marks: ["active"],
        entryId: `e${start + i}`,
        kind: "user",
        title: `message ${start + i}`,
        label: null,
        foldCount: 0,
        span: 0,
      }));
      return Promise.resolve({ status: "ok", data: { start, totalRows: 100_000, lanes: 1, rows } });
    },
    summaryMarkers: () => Promise.resolve({ status: "ok", data: [] }),
  },
}));

const { GraphView } = await import("../src/graph/view");

describe("graph view", () => {
  const frames: FrameRequestCallback[] = [];
  beforeEach(() => {
    asked.length = 0;
    frames.length = 0;
    // jsdom has no canvas: the lanes are not drawn, the rows are.
    vi.spyOn(HTMLCanvasElement.prototype, "getContext").mockReturnValue(null);
    // Frames only run when the test says so.
    vi.stubGlobal("requestAnimationFrame", (f: FrameRequestCallback) => frames.push(f));
    vi.stubGlobal(
      "ResizeObserver",
      class {
        observe() {}
      },
    );
  });
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
  });

  it("after an open, asks for the leaf's rows at once, not at the next frame", () => {
    const root = document.createElement("div");
    document.body.appendChild(root);
    const g = new GraphView(root, { onSelect() {}, onActivate() {}, onParent() {}, onLeaf() {} });
    g.reset(100_000, 1);
    g.showRowNow(50_000);
    expect(g.cursor).toBe(50_000);
    // No frame has run yet: the chunk holding row 50,000 (256 rows a chunk) is already asked for.
    expect(frames.length).toBeGreaterThan(0);
    expect(asked.some(([s, e]) => s <= 50_000 && 50_000 < e)).toBe(true);
    // The frame's draw does not ask for it a second time; a plain cursor move waits for the frame.
    g.setCursor(90_000, false);
    expect(asked.some(([s, e]) => s <= 90_000 && 90_000 < e)).toBe(false);
    const n = asked.length;
    frames.splice(0).forEach((f) => f(0));
    expect(asked.slice(n).filter(([s, e]) => s <= 50_000 && 50_000 < e)).toEqual([]);
  });

  it("keeps the row elements that stay in view while scrolling, and remakes a row that changed", async () => {
    const root = document.createElement("div");
    let top = 0;
    Object.defineProperty(root, "clientHeight", { value: 240 });
    Object.defineProperty(root, "scrollTop", { get: () => top, set: (v: number) => (top = v) });
    document.body.appendChild(root);
    const g = new GraphView(root, { onSelect() {}, onActivate() {}, onParent() {}, onLeaf() {} });
    g.reset(100_000, 1);
    const frame = () => frames.splice(0).forEach((f) => f(0));
    frame();
    await new Promise((r) => setTimeout(r, 0));
    frame();
    const byId = () => new Map([...root.querySelectorAll<HTMLElement>(".g-row")].map((e) => [e.dataset.entryId, e]));
    const before = byId();
    expect(before.has("e0") && before.has("e9")).toBe(true);
    // Three rows down: the rows still in view are the same elements, in row order.
    top = 3 * 24;
    g.schedule();
    frame();
    const after = byId();
    expect(after.has("e12")).toBe(true);
    expect(after.has("e0")).toBe(false);
    for (const id of ["e3", "e5", "e9"]) expect(after.get(id)).toBe(before.get(id));
    const order = [...root.querySelectorAll<HTMLElement>(".g-row")].map((e) => Number(e.dataset.row));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    // The cursor moves without remaking rows; a row whose marker facts arrive is remade.
    g.cursor = 5;
    g.schedule();
    frame();
    expect(byId().get("e5")).toBe(before.get("e5"));
    expect(before.get("e5")!.classList.contains("cursor")).toBe(true);
    const row5 = g.rowAt(5)!;
    Object.assign(row5, { dropped: 2, retained: 3, facts: 4 });
    g.schedule();
    frame();
    expect(byId().get("e5")).not.toBe(before.get("e5"));
  });
});
