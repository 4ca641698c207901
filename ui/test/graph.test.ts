import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

// The graph asks Rust for its rows through the generated bindings; here they answer at once.
const asked: [number, number][] = [];
vi.mock("../src/ipc/bindings", () => ({
  commands: {
    graphWindow: (start: number, end: number) => {
      asked.push([start, end]);
      return Promise.resolve({ status: "ok", data: { start, totalRows: 100_000, lanes: 1, rows: [] } });
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

  it("asks for the rows of a scrolled-to row at once, not at the next frame", () => {
    const root = document.createElement("div");
    document.body.appendChild(root);
    const g = new GraphView(root, { onSelect() {}, onActivate() {}, onParent() {}, onLeaf() {} });
    g.reset(100_000, 1);
    g.setCursor(50_000, false);
    // No frame has run yet: the chunk holding row 50,000 (256 rows a chunk) is already asked for.
    expect(frames.length).toBeGreaterThan(0);
    expect(asked.some(([s, e]) => s <= 50_000 && 50_000 < e)).toBe(true);
    // The frame's draw does not ask for it a second time.
    const n = asked.length;
    frames.splice(0).forEach((f) => f(0));
    expect(asked.slice(n).filter(([s, e]) => s <= 50_000 && 50_000 < e)).toEqual([]);
  });
});
