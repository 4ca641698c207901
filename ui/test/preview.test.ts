import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { stubGraphDom } from "./graph-dom";
import type { GraphRow, SessionPreview } from "../src/ipc";

// The graph asks Rust for rows only outside a preview; here every ask is recorded.
const asked: [number, number][] = [];
vi.mock("../src/ipc/bindings", () => ({
  commands: {
    graphWindow: (start: number, end: number) => {
      asked.push([start, end]);
      return Promise.resolve({ status: "ok", data: { start, totalRows: 0, lanes: 1, rows: [] } });
    },
    summaryMarkers: () => Promise.resolve({ status: "ok", data: [] }),
  },
}));

const { GraphView } = await import("../src/graph/view");
const { enterPreview, previewBanner, PREVIEW_BLOCKED, PREVIEW_WAIT } = await import("../src/session/preview");

const row = (i: number, over: Partial<GraphRow> = {}): GraphRow => ({
  row: i,
  lane: 0,
  fromAbove: i > 0,
  toBelow: true,
  through: [],
  forks: [],
  marks: ["active"],
  entryId: `e${i}`,
  kind: "user",
  title: `message ${i}`,
  label: null,
  foldCount: 0,
  span: 0,
  dropped: null,
  retained: null,
  facts: null,
  quality: null,
  ...over,
});

const preview = (n: number): SessionPreview => ({
  path: "/s/big.jsonl",
  name: null,
  fileKib: 2_561_523,
  tailKib: 8 * 1024,
  entryCount: 3_214,
  rows: [row(0, { entryId: "", kind: "other", title: "Earlier entries: still being read", fromAbove: false }), ...Array.from({ length: n - 1 }, (_, i) => row(i + 1))],
  lanes: 2,
  leafId: `e${n - 1}`,
  leafRow: n - 1,
});

describe("a big session's preview", () => {
  const frames: FrameRequestCallback[] = [];
  const frame = () => frames.splice(0).forEach((f) => f(0));
  beforeEach(() => {
    asked.length = 0;
    frames.length = 0;
    document.body.innerHTML = `<div id="notice" hidden></div><button id="btn-continue" disabled>Continue</button>
      <button id="btn-compact" title="Compact the session at the leaf now">Compact…</button><input id="search" />
      <button id="btn-zoom-in">+</button>`;
    stubGraphDom(frames);
  });
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
  });

  it("draws its rows with the cursor on the leaf, asks Rust for none, and ignores clicks and selecting keys", () => {
    const root = document.createElement("div");
    Object.defineProperty(root, "clientHeight", { value: 240 });
    document.body.appendChild(root);
    const selected: string[] = [];
    const g = new GraphView(root, { onSelect: (r) => selected.push(r.entryId), onActivate() {}, onParent: () => selected.push("parent"), onLeaf: () => selected.push("leaf") });
    g.showPreview(preview(40).rows, 2, 39);
    frame();
    expect(g.previewing).toBe(true);
    expect(g.totalRows).toBe(40);
    expect(g.cursor).toBe(39);
    const rows = [...root.querySelectorAll<HTMLElement>(".g-row")];
    // The rows around the leaf are drawn from the preview itself: no window was asked for.
    expect(rows.some((r) => r.dataset.entryId === "e39")).toBe(true);
    expect(asked).toEqual([]);
    rows.find((r) => r.dataset.entryId === "e39")!.click();
    for (const key of ["Enter", "ArrowLeft", "l", " "]) root.dispatchEvent(new KeyboardEvent("keydown", { key }));
    expect(selected).toEqual([]);
    // A move still moves the cursor.
    root.dispatchEvent(new KeyboardEvent("keydown", { key: "ArrowUp" }));
    expect(g.cursor).toBe(38);
    // The full open's layout replaces it: rows are asked for again, clicks select.
    g.reset(1000, 1);
    expect(g.previewing).toBe(false);
    frame();
    expect(asked.length).toBeGreaterThan(0);
  });

  it("keeps the leaf where the preview drew it when the whole graph replaces it", () => {
    const root = document.createElement("div");
    let top = 0;
    Object.defineProperty(root, "clientHeight", { value: 240 });
    Object.defineProperty(root, "scrollTop", { get: () => top, set: (v: number) => (top = v) });
    document.body.appendChild(root);
    const g = new GraphView(root, { onSelect() {}, onActivate() {}, onParent() {}, onLeaf() {} });
    g.showPreview(preview(300).rows, 2, 299);
    const offset = g.offsetInView(299);
    expect(offset).toBeGreaterThanOrEqual(0);
    expect(offset).toBeLessThan(240);
    g.reset(36_746, 3);
    g.placeRow(36_700, offset);
    expect(g.offsetInView(36_700)).toBe(offset);
  });

  it("disables what needs the whole session, says why, and puts everything back", () => {
    const end = enterPreview(preview(10));
    const b = (id: string) => document.getElementById(id) as HTMLButtonElement;
    expect(PREVIEW_BLOCKED).toEqual(expect.arrayContaining(["btn-continue", "btn-compact", "search", "btn-sessions"]));
    for (const id of ["btn-continue", "btn-compact", "search"]) {
      expect(b(id).disabled).toBe(true);
      expect(b(id).title).toBe(PREVIEW_WAIT);
    }
    expect(b("btn-zoom-in").disabled).toBe(false);
    const notice = document.getElementById("notice")!;
    expect(notice.hidden).toBe(false);
    expect(notice.textContent).toContain("Reading the whole session (2,501 MiB)…");
    expect(notice.textContent).toContain("newest 3,214 entries (the last 8 MiB)");
    end();
    expect(b("btn-continue").disabled).toBe(true); // it was disabled before
    expect(b("btn-continue").hasAttribute("title")).toBe(false);
    expect(b("btn-compact").disabled).toBe(false);
    expect(b("btn-compact").title).toBe("Compact the session at the leaf now");
    expect(b("search").disabled).toBe(false);
    expect(notice.hidden).toBe(true);
    expect(document.body.dataset.preview).toBeUndefined();
  });

  it("says how much is read in the banner", () => {
    expect(previewBanner(preview(5))).toBe(
      "Reading the whole session (2,501 MiB)… Shown meanwhile: its newest 3,214 entries (the last 8 MiB), read-only; Continue, navigation, compaction and search wait for the rest.",
    );
  });
});
