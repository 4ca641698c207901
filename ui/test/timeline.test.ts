import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { WaterfallChart } from "../src/timeline/chart";
import { aheadFits, clipped, columnOf, dataTop, decodeTimeline, downsample, encodeTimeline, formatCost, formatCount, initialScale, niceCeil, pointAt, scaleFor, stepHover, xOf, yOf } from "../src/timeline/pure";

const HEAD = {
  kindLegend: [
    ["u", "user"],
    ["a", "assistant"],
    ["c", "compaction"],
  ] as [string, string][],
  compactions: [],
  totalCost: null,
  contextWindow: 200_000,
  reserveTokens: 16_384,
  threshold: 183_616,
  scaleMax: 200_000,
  absurdPoints: 0,
  activePath: true,
  selectedPos: null,
  leafId: null,
  buildMs: 1.5,
};

/** A get_timeline answer for these numbers (ids e0, e1, …; no costs), decoded. */
function timeline(tokens: number[], usage: number[]) {
  const ids = tokens.map((_, i) => `e${i}`);
  return decodeTimeline(encodeTimeline(HEAD, { ids, kinds: "u".repeat(tokens.length), tokens, usage, cost: tokens.map(() => NaN) }));
}

/** The series of such an answer. */
function answer(tokens: number[], usage: number[]) {
  return timeline(tokens, usage).series;
}

describe("waterfall downsampling", () => {
  it("keeps every column's min and max over 100k points, first and last to join columns", () => {
    const n = 100_000;
    const v = new Float64Array(n);
    for (let i = 0; i < n; i++) v[i] = i % 100; // a saw: each column (250 points) spans two teeth
    v[54_321] = 5_000_000; // one spike must survive downsampling
    const c = downsample(v, 400);
    expect(c.count).toBe(400);
    const spikeCol = columnOf(54_321, n, 400);
    expect(c.max[spikeCol]).toBe(5_000_000);
    let maxOverall = 0;
    for (let k = 0; k < c.count; k++) {
      expect(c.min[k]).toBe(0);
      if (k !== spikeCol) expect(c.max[k]).toBe(99);
      maxOverall = Math.max(maxOverall, c.max[k]);
    }
    expect(maxOverall).toBe(5_000_000);
    expect(c.first[0]).toBe(0);
    expect(c.last[c.count - 1]).toBe(v[n - 1]);
  });

  it("spreads a few points over the width, leaving empty columns NaN, and skips NaN values", () => {
    const v = new Float64Array([10, NaN, 30]);
    const c = downsample(v, 100);
    expect(c.max[0]).toBe(10);
    expect(c.max[66]).toBe(30);
    expect(Number.isNaN(c.max[50])).toBe(true); // the NaN point's column draws nothing
    expect(Number.isNaN(c.max[10])).toBe(true);
  });

  it("decodes the command's bytes: the head, f64 columns viewed in place, sparse usage and cost, ids on demand", () => {
    const ids = ["root", "ünï", "e\nwith newline", "x".repeat(40)];
    const bytes = encodeTimeline(
      { ...HEAD, compactions: [2], totalCost: -3, selectedPos: 1, leafId: "x".repeat(40) },
      { ids, kinds: "uaca", tokens: [1, NaN, -5, 2e300], usage: [NaN, 3, NaN, Infinity], cost: [NaN, -3, NaN, NaN] },
    );
    const v = decodeTimeline(bytes);
    expect(v.count).toBe(4);
    expect(v.compactions).toEqual([2]);
    expect(v.totalCost).toBe(-3);
    expect(v.selectedPos).toBe(1);
    expect(v.buildMs).toBe(1.5);
    const s = v.series;
    expect(s.n).toBe(4);
    expect([0, 1, 2, 3].map((i) => s.ids.at(i))).toEqual(ids);
    expect(s.ids.at(4)).toBe("");
    expect(s.ids.indexOf("ünï")).toBe(1);
    expect(s.ids.indexOf("e\nwith newline")).toBe(2);
    expect(s.ids.indexOf("e")).toBe(-1);
    expect(String.fromCharCode(...s.kinds)).toBe("uaca");
    expect(Array.from(s.tokens)).toEqual([1, NaN, -5, 2e300]);
    expect(s.tokens.buffer).toBe(bytes); // viewed in place, not copied
    expect(Array.from(s.usage)).toEqual([NaN, 3, NaN, NaN]); // Infinity: not a number
    expect(Array.from(s.cost)).toEqual([NaN, -3, NaN, NaN]);
    // The same bytes as numbers (Tauri's JSON fallback) or a view decode the same.
    expect(Array.from(decodeTimeline(Array.from(new Uint8Array(bytes))).series.tokens)).toEqual([1, NaN, -5, 2e300]);
    expect(decodeTimeline(new Uint8Array(bytes)).series.ids.at(3)).toBe("x".repeat(40));
    expect(answer([], []).n).toBe(0);
    // A truncated answer or another layout is refused, not misread.
    expect(() => decodeTimeline(bytes.slice(0, bytes.byteLength - 1))).toThrow();
    const other = bytes.slice(0);
    new DataView(other).setUint32(0, 99, true);
    expect(() => decodeTimeline(other)).toThrow(/layout 99/);
  });

  it("decodes Pi's hex ids sent as u32s and costs sent at the usages' positions", () => {
    const ids = ["a82022df", "00000000", "ffffffff", "0badf00d"];
    const bytes = encodeTimeline(HEAD, { ids, kinds: "uaua", tokens: [1, 2, 3, 4], usage: [NaN, 2, NaN, 4], cost: [NaN, 0.5, NaN, 0.25] });
    const flags = new DataView(bytes).getUint32(24, true);
    expect(flags).toBe(3); // hex ids, costs at the usages
    const s = decodeTimeline(bytes).series;
    expect([0, 1, 2, 3].map((i) => s.ids.at(i))).toEqual(ids);
    expect(s.ids.indexOf("0badf00d")).toBe(3);
    expect(s.ids.indexOf("0BADF00D")).toBe(-1);
    expect(s.ids.indexOf("badf00d")).toBe(-1);
    expect(Array.from(s.cost)).toEqual([NaN, 0.5, NaN, 0.25]);
    expect(Array.from(s.usage)).toEqual([NaN, 2, NaN, 4]);
    // One id that is not 8 lowercase hex digits: every id travels as bytes.
    const mixed = encodeTimeline(HEAD, { ids: ["a82022df", "A82022DF"], kinds: "uu", tokens: [1, 2], usage: [NaN, NaN], cost: [NaN, NaN] });
    expect(new DataView(mixed).getUint32(24, true) & 1).toBe(0);
    expect(decodeTimeline(mixed).series.ids.at(1)).toBe("A82022DF");
  });
});

describe("waterfall hit-testing", () => {
  it("finds the point under x in O(1), the inverse of xOf", () => {
    const n = 77_481;
    const w = 440;
    for (const i of [0, 1, 176, 38_000, n - 2, n - 1]) {
      const x = xOf(i, n, w);
      const j = pointAt(x, n, w);
      expect(j).toBe(i);
    }
    expect(pointAt(-50, n, w)).toBe(0);
    expect(pointAt(10_000, n, w)).toBe(n - 1);
    expect(pointAt(5, 0, w)).toBe(-1);
    expect(pointAt(123, 1, w)).toBe(0);
  });

  it("with few points, snaps to the nearest", () => {
    // 3 points over 90 px: each owns 30 px, drawn at 15, 45, 75.
    expect(xOf(1, 3, 90)).toBe(45);
    expect(pointAt(29, 3, 90)).toBe(0);
    expect(pointAt(31, 3, 90)).toBe(1);
    expect(pointAt(89, 3, 90)).toBe(2);
  });

  it("moves the hover with the keys: one entry, one column with Shift, the ends", () => {
    expect(stepHover(10, "ArrowRight", false, 100, 50)).toBe(11);
    expect(stepHover(10, "ArrowLeft", false, 100, 50)).toBe(9);
    expect(stepHover(10, "ArrowRight", true, 100_000, 400)).toBe(260);
    expect(stepHover(0, "ArrowLeft", false, 100, 50)).toBe(0);
    expect(stepHover(99, "ArrowRight", false, 100, 50)).toBe(99);
    expect(stepHover(-1, "ArrowRight", false, 100, 50)).toBe(0);
    expect(stepHover(-1, "ArrowLeft", false, 100, 50)).toBe(99);
    expect(stepHover(5, "End", false, 100, 50)).toBe(99);
    expect(stepHover(5, "Home", false, 100, 50)).toBe(0);
    expect(stepHover(5, "a", false, 100, 50)).toBeNull();
    expect(stepHover(5, "ArrowRight", false, 0, 50)).toBeNull();
  });
});

describe("waterfall scale", () => {
  it("clamps absurd numbers to the plot's edges and says which", () => {
    expect(yOf(0, 1000, 200)).toBe(200);
    expect(yOf(500, 1000, 200)).toBe(100);
    expect(yOf(10_000_000, 1000, 200)).toBe(0);
    expect(yOf(-500, 1000, 200)).toBe(200);
    expect(yOf(5, 0, 200)).toBe(0); // a zero scale falls back to 1 token
    expect(clipped(10_000_000, 1000)).toBe("above");
    expect(clipped(-1, 1000)).toBe("below");
    expect(clipped(10, 1000)).toBeNull();
  });

  it("formats counts and costs plainly", () => {
    expect(formatCount(123456.4)).toBe("123,456");
    expect(formatCount(-501)).toBe("-501");
    expect(formatCount(2e300)).toBe("2.000e+300");
    expect(formatCount(NaN)).toContain("not a number");
    expect(formatCost(0.012345)).toBe("$0.01235");
    expect(formatCost(-3)).toBe("-$3");
    expect(formatCost(0.00000001)).toBe("<$0.0001");
    expect(formatCost(1234.5)).toBe("$1234.50");
  });
});

describe("waterfall fit", () => {
  const WINDOW = 200_000;
  const THRESHOLD = 183_616;

  it("finds the data's top, ignoring negative, absurd and missing numbers", () => {
    const s = answer([100, 9000, -5, 1e9, NaN], [NaN, 8000, NaN, NaN, NaN]);
    expect(dataTop(s, WINDOW)).toBe(9000);
    expect(dataTop(answer([100], [9500]), WINDOW)).toBe(9500); // reported usage counts too
    expect(dataTop(answer([NaN, -1], [NaN, NaN]), WINDOW)).toBe(0);
    expect(dataTop(answer([0.5, 3], [NaN, NaN]), 0)).toBe(0.5); // a zero cap falls back to 1 token
  });

  it("rounds a fitted top up to two significant figures, in whole tokens", () => {
    expect(niceCeil(11_500)).toBe(12_000);
    expect(niceCeil(10_350)).toBe(11_000);
    expect(niceCeil(12_000)).toBe(12_000);
    expect(niceCeil(20_000 * 1.15)).toBe(23_000); // 1.15's binary error does not add a step
    expect(niceCeil(99)).toBe(99);
    expect(niceCeil(101)).toBe(110);
    expect(niceCeil(123_456)).toBe(130_000);
    expect(niceCeil(3.45)).toBe(4);
    expect(niceCeil(0.3)).toBe(1);
    for (const x of [0, -5, NaN, Infinity]) expect(niceCeil(x)).toBe(1);
  });

  it("opens a session using 5% of its window fitted to its data, both budget lines above the scale", () => {
    const sc = initialScale(10_000, WINDOW, THRESHOLD);
    expect(sc.fitted).toBe(true);
    expect(sc.yMax).toBe(12_000); // 10,000 × 1.15, rounded up
    expect(sc.yMax).toBeGreaterThan(10_000);
    expect(sc.offScale).toEqual({ window: true, threshold: true });
  });

  it("opens a session using 30% of its window at the window's scale", () => {
    const sc = initialScale(60_000, WINDOW, THRESHOLD);
    expect(sc).toEqual({ yMax: WINDOW, fitted: false, offScale: { window: false, threshold: false } });
    // A quarter exactly is not under a quarter.
    expect(initialScale(50_000, WINDOW, THRESHOLD).fitted).toBe(false);
    expect(initialScale(49_999, WINDOW, THRESHOLD).fitted).toBe(true);
  });

  it("opens a session above its threshold at the window's scale, even under a quarter of the window", () => {
    expect(initialScale(190_000, WINDOW, THRESHOLD)).toEqual({ yMax: WINDOW, fitted: false, offScale: { window: false, threshold: false } });
    // A reserve that leaves a small threshold: 30k is under a quarter but above 20k.
    expect(initialScale(30_000, WINDOW, 20_000)).toEqual({ yMax: WINDOW, fitted: false, offScale: { window: false, threshold: false } });
    // At the threshold exactly it still fits, and the threshold line is on the scale.
    const at = initialScale(20_000, WINDOW, 20_000);
    expect(at.fitted).toBe(true);
    expect(at.offScale).toEqual({ window: true, threshold: false });
    // Data above the window (the command's scaleMax is then the data's top): that top, as today.
    expect(initialScale(300_000, WINDOW, THRESHOLD).yMax).toBe(300_000);
  });

  it("never divides by zero: no data, no window, no threshold, numbers that are not", () => {
    expect(initialScale(0, WINDOW, THRESHOLD)).toEqual({ yMax: WINDOW, fitted: false, offScale: { window: false, threshold: false } });
    expect(initialScale(0, 0, 0)).toEqual({ yMax: 1, fitted: false, offScale: { window: false, threshold: false } });
    expect(initialScale(5_000, 0, 0)).toEqual({ yMax: 5_000, fitted: false, offScale: { window: false, threshold: false } });
    expect(initialScale(5_000, WINDOW, 0).fitted).toBe(false); // reserve ≥ window: every token is above the threshold
    for (const [m, w, t] of [
      [NaN, WINDOW, THRESHOLD],
      [5_000, NaN, THRESHOLD],
      [Infinity, WINDOW, THRESHOLD],
      [-5, -1, -1],
    ]) {
      const sc = initialScale(m, w, t);
      expect(sc.fitted).toBe(false);
      expect(Number.isFinite(sc.yMax) && sc.yMax >= 1).toBe(true);
      expect(yOf(100, sc.yMax, 200)).not.toBeNaN();
    }
  });

  it("follows the user's choice either way, a fit never wider than the window's scale", () => {
    // Under a quarter, shown at the window's scale on request.
    expect(scaleFor(10_000, WINDOW, THRESHOLD, false)).toEqual({ yMax: WINDOW, fitted: false, offScale: { window: false, threshold: false } });
    // 30%, fitted on request: the threshold and window above it.
    expect(scaleFor(60_000, WINDOW, THRESHOLD, true)).toEqual({ yMax: 69_000, fitted: true, offScale: { window: true, threshold: true } });
    // Near the window, a fit is capped at the window's scale.
    expect(scaleFor(190_000, WINDOW, THRESHOLD, true).yMax).toBe(WINDOW);
    // Nothing to fit: the window's scale.
    expect(scaleFor(0, WINDOW, THRESHOLD, true)).toEqual({ yMax: WINDOW, fitted: false, offScale: { window: false, threshold: false } });
  });
});

describe("waterfall answer fetched ahead", () => {
  const key = ["/s/a.jsonl", "leaf1", "100", "e5", "200000", "16384"];
  it("serves the same key, or another selection, never another file, leaf, length or budget", () => {
    expect(aheadFits(key, [...key])).toBe("same");
    expect(aheadFits(key, [...key.slice(0, 3), "e7", ...key.slice(4)])).toBe("selection");
    expect(aheadFits(key, [...key.slice(0, 3), "", ...key.slice(4)])).toBe("selection");
    for (const i of [0, 1, 2, 4, 5]) {
      const other = [...key];
      other[i] = other[i] + "x";
      expect(aheadFits(key, other)).toBeNull();
    }
    expect(aheadFits([], key)).toBeNull();
    expect(aheadFits(key, [])).toBeNull();
  });
});

describe("waterfall chart scale", () => {
  /** What the chart drew: its texts, and the y of every horizontal line (the budget lines). */
  let texts: string[] = [];
  let hlines: number[] = [];
  beforeEach(() => {
    texts = [];
    hlines = [];
    // jsdom has no canvas: a 2D context that records the texts and the horizontal lines.
    let from: [number, number] = [0, 0];
    const ctx = new Proxy({} as Record<string, unknown>, {
      get(t, k: string) {
        if (k in t) return t[k];
        if (k === "fillText") return (text: string) => texts.push(text);
        if (k === "measureText") return (text: string) => ({ width: text.length * 5 });
        if (k === "moveTo") return (x: number, y: number) => (from = [x, y]);
        if (k === "lineTo")
          return (x: number, y: number) => {
            if (y === from[1] && x - from[0] > 100) hlines.push(y);
            from = [x, y];
          };
        return () => {};
      },
      set(t, k: string, v) {
        t[k] = v;
        return true;
      },
    });
    vi.spyOn(HTMLCanvasElement.prototype, "getContext").mockReturnValue(ctx as unknown as CanvasRenderingContext2D);
    vi.stubGlobal(
      "ResizeObserver",
      class {
        observe() {}
      },
    );
    vi.stubGlobal(
      "Path2D",
      class {
        moveTo() {}
        lineTo() {}
        closePath() {}
      },
    );
  });
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
  });

  function chartOf(tokens: number[]) {
    const c = new WaterfallChart({ select() {} });
    Object.defineProperty(c.root, "clientWidth", { value: 408 });
    c.setData(timeline(tokens, tokens.map(() => NaN)));
    return c;
  }

  it("opens a session using 5% of its window fitted, the window and threshold pinned to the top as markers", () => {
    const c = chartOf([2_000, 6_000, 10_000, 4_000]);
    const d = c.root.dataset;
    expect(d.scaleTop).toBe("12000");
    expect(d.scaleFitted).toBe("true");
    expect(d.offScale).toBe("window threshold");
    expect(texts).toContain("window 200,000 ↑");
    expect(texts).toContain("threshold 183,616 ↑");
    expect(texts).toContain("12,000 tokens");
    expect(hlines).toEqual([]); // no budget line drawn off the chart
    // Shown at the window's scale on request: the lines are back, the markers gone.
    c.fit = false;
    texts.length = 0;
    c.draw();
    expect(d.scaleTop).toBe("200000");
    expect(d.scaleFitted).toBe("false");
    expect(d.offScale).toBe("");
    expect(texts).toEqual(expect.arrayContaining(["window 200,000", "threshold 183,616"]));
    expect(texts.some((t) => t.includes("↑"))).toBe(false);
    expect(hlines.length).toBe(2);
  });

  it("opens a session using 30% of its window at the window's scale, and fits it on request", () => {
    const c = chartOf([20_000, 60_000, 40_000]);
    const d = c.root.dataset;
    expect(d.scaleTop).toBe("200000");
    expect(d.scaleFitted).toBe("false");
    expect(hlines.length).toBe(2);
    c.fit = true;
    c.draw();
    expect(d.scaleTop).toBe("69000");
    expect(d.offScale).toBe("window threshold");
  });
});
