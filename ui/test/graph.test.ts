import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { stubGraphDom } from "./graph-dom";

// The graph asks Rust for its rows through the generated bindings; here they answer at once.
const asked: [number, number][] = [];
/** The layout the graph is given: entry `e<n>` at row n + shift, and its markers. */
const layout = { shift: 0, marks: (_n: number): string[] => ["active"], kind: (_n: number): string => "user" };
/** The entries the summary markers were asked for, one list a call; `markerFacts` answers them. */
const markerAsks: string[][] = [];
let markerFacts = false;
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
        marks: layout.marks(start + i - layout.shift),
        entryId: `e${start + i - layout.shift}`,
        kind: layout.kind(start + i - layout.shift),
        title: `message ${start + i - layout.shift}`,
        dropped: null,
        retained: null,
        facts: null,
        label: null,
        foldCount: 0,
        span: 0,
      }));
      return Promise.resolve({ status: "ok", data: { start, totalRows: 100_000, lanes: 1, rows } });
    },
    summaryMarkers: (ids: string[]) => {
      markerAsks.push(ids);
      const data = markerFacts ? ids.map((entryId) => ({ entryId, dropped: 1, retained: 2, facts: 3 })) : [];
      return Promise.resolve({ status: "ok", data });
    },
  },
}));

const { GraphView } = await import("../src/graph/view");
const { commands } = await import("../src/ipc/bindings");
/** Rows [start, end) of a layout of `totalRows` rows as Continue's answer carries them. */
async function answerRows(start: number, end: number, totalRows: number) {
  const w = await (commands.graphWindow(start, end) as unknown as Promise<{ data: { start: number; lanes: number; rows: never[] } }>);
  return { ...w.data, totalRows };
}
const { BAND_AHEAD, BAND_BEHIND, BAND_MARGIN, BAND_SLACK, bandFor, visibleRange } = await import("../src/graph/geometry");

describe("graph view", () => {
  const frames: FrameRequestCallback[] = [];
  beforeEach(() => {
    asked.length = 0;
    frames.length = 0;
    layout.shift = 0;
    layout.marks = () => ["active"];
    layout.kind = () => "user";
    markerAsks.length = 0;
    markerFacts = false;
    stubGraphDom(frames);
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
    // A frame, the rows it asked for, and the frame that draws them.
    const settle = async () => {
      frame();
      await new Promise((r) => setTimeout(r, 0));
      frame();
    };
    const scrollTo = (row: number) => {
      top = row * 24;
      g.schedule();
      return settle();
    };
    await settle();
    const byId = () => new Map([...root.querySelectorAll<HTMLElement>(".g-row")].map((e) => [e.dataset.entryId, e]));
    const before = byId();
    // The view (10 rows) and 48 rows below it have elements; nothing further.
    expect(before.has("e0") && before.has("e57")).toBe(true);
    expect(before.has("e58")).toBe(false);
    const segments = () => [...root.querySelectorAll<HTMLElement>(".graph-canvas:not([hidden])")].map((c) => Number(c.dataset.segment)).sort((a, b) => a - b);
    expect(segments()).toEqual([0]);
    const firstCanvas = root.querySelector(".graph-canvas");
    // Three rows down: still inside the band, so the frame makes no element at all.
    top = 3 * 24;
    g.schedule();
    frame();
    const after = byId();
    expect(after.size).toBe(before.size);
    for (const [id, e] of after) expect(e).toBe(before.get(id));
    // Near the band's edge (fewer than 12 rows to go) the band moves on, 72 rows ahead of the view
    // and 24 behind it, in that one frame (the view's rows had theirs): rows still in it keep
    // their elements, the new ones get theirs, and the lanes get the next segment's canvas.
    top = 40 * 24;
    g.schedule();
    frame();
    expect(frames.length).toBe(0); // no second frame: the move was made whole
    const moved = byId();
    expect(moved.has("e121") && moved.has("e16")).toBe(true);
    expect(moved.has("e122") || moved.has("e15") || moved.has("e0")).toBe(false);
    for (const id of ["e16", "e30", "e57"]) expect(moved.get(id)).toBe(before.get(id));
    expect(segments()).toEqual([0, 1]);
    // A jump: the frame its rows arrive in makes only the view's rows and 4 on each side (and
    // their lanes); the next frame makes the rest of the band. The old rows and canvases are gone.
    await scrollTo(1000);
    const first = byId();
    expect([...first.keys()].sort()).toEqual(Array.from({ length: 18 }, (_, i) => `e${996 + i}`).sort());
    expect(segments()).toEqual([15]);
    expect(frames.length).toBe(1);
    frame();
    const far = byId();
    expect(far.has("e0")).toBe(false);
    expect(far.has("e952") && far.has("e1057") && !far.has("e1058")).toBe(true);
    for (const id of ["e996", "e1013"]) expect(far.get(id)).toBe(first.get(id));
    expect(segments()).toEqual([14, 15, 16]);
    // Canvases are reused, not made anew for each segment (a new one is a new compositing layer).
    expect(firstCanvas && root.contains(firstCanvas)).toBe(true);
    expect(root.querySelectorAll(".graph-canvas").length).toBeLessThanOrEqual(5);
    const order = [...root.querySelectorAll<HTMLElement>(".g-row")].map((e) => Number(e.dataset.row));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    await scrollTo(3);
    const back = byId();
    const e5 = back.get("e5")!;
    // The cursor moves without remaking rows; a row whose marker facts arrive is remade.
    g.cursor = 5;
    g.schedule();
    frame();
    expect(byId().get("e5")).toBe(e5);
    expect(e5.classList.contains("cursor")).toBe(true);
    const row5 = g.rowAt(5)!;
    Object.assign(row5, { dropped: 2, retained: 3, facts: 4 });
    g.schedule();
    frame();
    expect(byId().get("e5")).not.toBe(e5);
  });

  it("after a new layout (Continue) keeps the elements of the entries drawn the same, moved to their rows", async () => {
    const root = document.createElement("div");
    Object.defineProperty(root, "clientHeight", { value: 240 });
    document.body.appendChild(root);
    const g = new GraphView(root, { onSelect() {}, onActivate() {}, onParent() {}, onLeaf() {} });
    g.reset(100_000, 1);
    const frame = () => frames.splice(0).forEach((f) => f(0));
    frame();
    await new Promise((r) => setTimeout(r, 0));
    frame();
    const byId = () => new Map([...root.querySelectorAll<HTMLElement>(".g-row")].map((e) => [e.dataset.entryId, e]));
    const before = byId();
    expect(before.size).toBe(58);
    // The new layout: every entry one row further down (a fold above it opened), the leaf moved
    // to e3 (its badge), and the entries after it off the active path.
    layout.shift = 1;
    layout.marks = (n) => (n === 3 ? ["active", "leaf"] : n < 3 ? ["active"] : []);
    // Continue brings the new layout's rows at the leaf (row 4, in the view of rows 0..10, so
    // Rust sends the chunk of rows 0..10 and the margin): the frame after draws it whole.
    expect(g.viewRequest()).toEqual({ top: 0, height: 10, margin: BAND_MARGIN, chunk: 256 });
    g.reset(100_001, 1, await answerRows(0, 256, 100_001));
    frame();
    const after = byId();
    // e0..e56 are drawn at their new rows with the same elements; e3 (a badge now) is made anew.
    for (const n of [0, 2, 4, 30, 56]) {
      const e = after.get(`e${n}`)!;
      expect(e).toBe(before.get(`e${n}`));
      expect(e.dataset.row).toBe(String(n + 1));
      expect(e.style.top).toBe(`${(n + 1) * 24}px`);
      expect(e.classList.contains("m-active")).toBe(n < 3);
    }
    expect(after.get("e3")).not.toBe(before.get("e3"));
    expect(after.get("e3")!.querySelector(".b-leaf")).not.toBeNull();
    expect(after.get("e3")!.dataset.row).toBe("4");
    // No element is left over from the layout before, and the rows stay in order, with the new
    // first row's entry (e-1 here) made before them.
    const rows = [...root.querySelectorAll<HTMLElement>(".g-row")];
    expect(rows.map((e) => e.dataset.entryId)).toEqual(Array.from({ length: 58 }, (_, i) => `e${i - 1}`));
    // A click on a kept element selects the row of the new layout.
    let picked: { row: number; entryId: string } | null = null;
    (g as unknown as { cb: { onSelect: (r: { row: number; entryId: string }) => void } }).cb.onSelect = (r) => (picked = r);
    after.get("e10")!.click();
    expect(picked).toMatchObject({ row: 11, entryId: "e10" });
    // A new layout without its rows in hand (a fold, an append): its frame leaves no row of the
    // layout before standing (the old leaf's would be taken for the new layout's).
    layout.shift = 2;
    g.reset(100_002, 1);
    frame();
    expect(byId().size).toBe(0);
  });

  it("gives a new layout's summary rows the marker facts known for them, and keeps their elements", async () => {
    const root = document.createElement("div");
    Object.defineProperty(root, "clientHeight", { value: 240 });
    document.body.appendChild(root);
    const g = new GraphView(root, { onSelect() {}, onActivate() {}, onParent() {}, onLeaf() {} });
    layout.kind = (n) => (n === 5 ? "compaction" : "user");
    markerFacts = true;
    g.setSession("/s/a.jsonl");
    g.reset(100_000, 1);
    const frame = () => frames.splice(0).forEach((f) => f(0));
    const settle = async () => {
      frame();
      for (let i = 0; i < 3; i++) await new Promise((r) => setTimeout(r, 0));
      frame();
    };
    await settle();
    // The window left the compaction's facts out: they were asked for, and its row redrawn with them.
    expect(markerAsks).toEqual([["e5"]]);
    expect(g.rowAt(5)).toMatchObject({ dropped: 1, retained: 2, facts: 3 });
    const e5 = root.querySelector<HTMLElement>('.g-row[data-entry-id="e5"]')!;
    // A new layout (Continue) whose rows come without them: the row has them before its first
    // draw, nothing is asked again, and the entry keeps its element.
    layout.shift = 1;
    g.reset(100_001, 1, await answerRows(0, 256, 100_001));
    expect(g.rowAt(6)).toMatchObject({ entryId: "e5", dropped: 1, retained: 2, facts: 3 });
    await settle();
    expect(markerAsks).toEqual([["e5"]]);
    expect(root.querySelector('.g-row[data-entry-id="e5"]')).toBe(e5);
    expect(e5.dataset.row).toBe("6");
    // Another session's rows with the same entry id are not given them.
    g.setSession("/s/b.jsonl");
    g.reset(100_001, 1, await answerRows(0, 256, 100_001));
    expect(g.rowAt(6)).toMatchObject({ entryId: "e5", facts: null });
    await settle();
    expect(markerAsks).toEqual([["e5"], ["e5"]]);
  });

  it("takes only whole chunks of the rows a new layout came with, and asks for the rest", async () => {
    const root = document.createElement("div");
    Object.defineProperty(root, "clientHeight", { value: 240 });
    document.body.appendChild(root);
    const g = new GraphView(root, { onSelect() {}, onActivate() {}, onParent() {}, onLeaf() {} });
    // Part of chunk 0: the graph cannot draw from it, so it asks for the chunk.
    g.reset(100_000, 1, await answerRows(0, 100, 100_000));
    asked.length = 0;
    frames.splice(0).forEach((f) => f(0));
    expect(asked).toEqual([[0, 256]]);
    // Rows of another layout (another row count) are not taken either.
    g.reset(100_000, 1, await answerRows(0, 256, 99_999));
    asked.length = 0;
    frames.splice(0).forEach((f) => f(0));
    expect(asked).toEqual([[0, 256]]);
    // The whole chunk is drawn without asking.
    g.reset(100_000, 1, await answerRows(0, 256, 100_000));
    asked.length = 0;
    frames.splice(0).forEach((f) => f(0));
    expect(asked).toEqual([]);
    expect(root.querySelectorAll(".g-row").length).toBeGreaterThan(10);
  });

  it("draws a new layout whose rows came with it (Continue) in the frame after, keeping the elements of entries that moved far", async () => {
    const root = document.createElement("div");
    let top = 0;
    Object.defineProperty(root, "clientHeight", { value: 240 });
    Object.defineProperty(root, "scrollTop", { get: () => top, set: (v: number) => (top = v) });
    document.body.appendChild(root);
    const g = new GraphView(root, { onSelect() {}, onActivate() {}, onParent() {}, onLeaf() {} });
    g.reset(100_000, 1);
    const frame = () => frames.splice(0).forEach((f) => f(0));
    top = 1000 * 24;
    frame();
    await new Promise((r) => setTimeout(r, 0));
    frame();
    frame();
    const byId = () => new Map([...root.querySelectorAll<HTMLElement>(".g-row")].map((e) => [e.dataset.entryId, e]));
    const before = byId();
    expect(before.has("e1000")).toBe(true);
    // The new layout puts every entry 600 rows further down (a long fold above opened); its
    // rows at the leaf (e1000, now row 1600) come with Continue's answer: the view (rows
    // 1000..1010) centres row 1600, so rows 1595..1606 and the margin, in chunk 6.
    layout.shift = 600;
    expect(g.viewRequest()).toMatchObject({ top: 1000, height: 10 });
    const rows = await answerRows(1536, 1792, 100_600);
    const n = asked.length;
    g.reset(100_600, 1, rows);
    g.setCursor(1600, false);
    frame();
    // One frame: no row asked for again, the view's entries drawn at their new rows with the
    // same elements, and none left over from the layout before.
    expect(asked.length).toBe(n);
    const after = byId();
    for (const id of ["e996", "e1000", "e1003"]) {
      expect(after.get(id)).toBe(before.get(id));
      expect(after.get(id)!.dataset.row).toBe(String(Number(id.slice(1)) + 600));
    }
    const order = [...root.querySelectorAll<HTMLElement>(".g-row")].map((e) => Number(e.dataset.row));
    expect(order.every((r) => r >= 1500 && r < 1700)).toBe(true);
    expect(order).toEqual([...order].sort((a, b) => a - b));
  });
});

describe("the band of rows with elements", () => {
  const v = (scrollTop: number, totalRows = 100_000) => ({ scrollTop, height: 240, rowHeight: 24, totalRows });
  const vis = (top: number, total = 100_000) => visibleRange(v(top, total), 0);

  it("stays while the view is more than BAND_SLACK rows from an edge it can pass, then recentres", () => {
    let band = bandFor(vis(0), null, v(0));
    expect(band).toEqual({ first: 0, last: 10 + BAND_MARGIN });
    // The top edge is the graph's own: the view may touch it.
    expect(bandFor(vis(0), band, v(0))).toBe(band);
    for (let row = 1; row + 10 <= band.last - BAND_SLACK; row++) expect(bandFor(vis(row * 24), band, v(row * 24))).toBe(band);
    const row = band.last - BAND_SLACK - 10 + 1;
    band = bandFor(vis(row * 24), band, v(row * 24));
    // Scrolling down: the band moves on far ahead of the view and keeps a few rows behind it.
    expect(band).toEqual({ first: row - BAND_BEHIND, last: row + 10 + BAND_AHEAD });
    for (let r = row; r + 10 <= band.last - BAND_SLACK; r++) expect(bandFor(vis(r * 24), band, v(r * 24))).toBe(band);
    const down = band.last - BAND_SLACK - 10 + 1;
    band = bandFor(vis(down * 24), band, v(down * 24));
    expect(band).toEqual({ first: down - BAND_BEHIND, last: down + 10 + BAND_AHEAD });
    // Scrolling back up: near the top edge it moves the other way, far ahead above the view.
    const up = band.first + BAND_SLACK - 1;
    expect(bandFor(vis((up + 1) * 24), band, v((up + 1) * 24))).toBe(band);
    band = bandFor(vis(up * 24), band, v(up * 24));
    expect(band).toEqual({ first: up - BAND_AHEAD, last: up + 10 + BAND_BEHIND });
    // A jump outside it recentres at once; so does a graph that got shorter (a new layout).
    expect(bandFor(vis(50_000 * 24), band, v(50_000 * 24))).toEqual({ first: 50_000 - BAND_MARGIN, last: 50_010 + BAND_MARGIN });
    expect(bandFor(vis(0, 30), band, v(0, 30))).toEqual({ first: 0, last: 30 });
  });

  it("reaches the graph's last row and stays there", () => {
    const total = 1000;
    const top = (total - 10) * 24;
    const band = bandFor(vis(top, total), null, v(top, total));
    expect(band).toEqual({ first: total - 10 - BAND_MARGIN, last: total });
    expect(bandFor(vis(top, total), band, v(top, total))).toBe(band);
  });
});
