import { describe, expect, it } from "vitest";
import { formatChars, formatTokens, stackSegments } from "../src/format";
import { chunksFor, scrollToShow, visibleRange, CHUNK } from "../src/graph/geometry";

describe("format", () => {
  it.each([
    [0, "0"], [999, "999"], [1500, "1.5k"], [24000, "24k"], [200000, "200k"], [1_000_000, "1M"], [1_500_000, "1.5M"],
  ])("formatTokens(%d) = %s", (n, s) => expect(formatTokens(n)).toBe(s));
  it("formatChars", () => {
    expect(formatChars(1)).toBe("1 char");
    expect(formatChars(2048)).toBe("2.0k chars");
  });
  it("stack segments scale to the window and place the threshold", () => {
    const r = stackSegments([{ category: "user", tokens: 50 }, { category: "thinking", tokens: 0 }, { category: "summary", tokens: 50 }], 1000, 800);
    expect(r.segments.map((s) => s.key)).toEqual(["user", "summary"]);
    expect(r.segments[0].width).toBe(5);
    expect(r.thresholdPct).toBe(80);
  });
  it("an over-full context scales to its total", () => {
    const r = stackSegments([{ category: "user", tokens: 3000 }], 1000, 800);
    expect(r.segments[0].width).toBe(100);
    expect(r.thresholdPct).toBeCloseTo(26.67, 1);
  });
});

describe("graph geometry (only visible rows are drawn)", () => {
  it("visible range of a 100k-row graph is a screenful", () => {
    const r = visibleRange({ scrollTop: 24 * 50_000, height: 600, rowHeight: 24, totalRows: 100_000 }, 2);
    expect(r.first).toBe(49_998);
    expect(r.last).toBe(50_027);
  });
  it("clamps at the ends and handles empty graphs", () => {
    expect(visibleRange({ scrollTop: 0, height: 600, rowHeight: 24, totalRows: 3 })).toEqual({ first: 0, last: 3 });
    expect(visibleRange({ scrollTop: 0, height: 600, rowHeight: 24, totalRows: 0 })).toEqual({ first: 0, last: 0 });
  });
  it("chunks cover the range", () => {
    expect(chunksFor(0, 0)).toEqual([]);
    expect(chunksFor(CHUNK - 1, CHUNK + 1)).toEqual([0, 1]);
  });
  it("scrollToShow keeps visible rows and centres hidden ones", () => {
    const v = { scrollTop: 0, height: 240, rowHeight: 24, totalRows: 1000 };
    expect(scrollToShow(3, v)).toBe(0);
    expect(scrollToShow(500, v)).toBe(500 * 24 - 120 + 12);
  });
});
