// The branch graph: a tall spacer holding the rows of a band around the view (row text as DOM
// text nodes, lanes on canvases of SEGMENT rows each), placed where they sit in the whole graph
// so the webview scrolls them itself. Rows come from Rust in chunks.

import { api, call } from "../ipc";
import type { GraphRow, GraphRowKind, GraphViewport, GraphWindow, Mark } from "../ipc";
import { BAND_MARGIN, CHUNK, SEGMENT, bandFor, chunksFor, laneColour, laneX, scrollToShow, visibleRange } from "./geometry";
import { markerBadges } from "../summary/pure";
import { onQualityMarks, qualityMark } from "../summary/marks";
import { cssVar, THEME_EVENT } from "../theme";
import { el } from "../dom";

export interface GraphCallbacks {
  onSelect(row: GraphRow): void;
  onActivate(row: GraphRow): void;
  /** Left arrow: go to the parent of the selected entry. */
  onParent(): void;
  /** `l`: go to the leaf. */
  onLeaf(): void;
  /** Ctrl/Cmd+click or Space: pick the node besides the selected one (Compare, Bring back). */
  onPick?(row: GraphRow): void;
}

/** A row element, with the row and signature it was drawn from and the layout (generation) that
 *  row belongs to. */
interface Live {
  row: GraphRow;
  sig: string;
  el: HTMLElement;
  gen: number;
}

export class GraphView {
  private chunks = new Map<number, GraphRow[]>();
  private pending = new Set<number>();
  private generation = 0;
  totalRows = 0;
  lanes = 1;
  rowHeight = 24;
  laneWidth = 14;
  cursor = 0;
  cutRow: number | null = null;
  private spacer: HTMLElement;
  private rowsEl: HTMLElement;
  private cutEl: HTMLElement;
  private frameRequested = false;
  private reviewSpan: Set<string> | null = null;
  private reviewKept: string | null = null;
  /** The nodes picked besides the selection (ui/src/compare/picks.ts), drawn highlighted. */
  private picked: Set<string> | null = null;
  /** The rows that have elements: the view and a margin around it. It moves only when the view
   *  comes near its edge, so most scroll frames make no elements and repaint nothing. */
  private band: { first: number; last: number } | null = null;
  /** The last frame made only the view's rows of a new band: this one makes the rest. */
  private deferred = false;
  /** The row elements drawn, by row number, with the row and signature they were made from and
   *  the layout (generation) that row belongs to. */
  private live = new Map<number, Live>();
  /** The row a row element stands for now (an element kept across a new layout answers for the
   *  new layout's row). */
  private elRow = new WeakMap<HTMLElement, GraphRow>();
  /** The lane canvases of the band, by segment, with what they were painted from. */
  private segments = new Map<number, { canvas: HTMLCanvasElement; sig: string }>();
  /** Lane canvases not in use, hidden, for the next segments. */
  private spare: HTMLCanvasElement[] = [];
  /** The summary rows loaded, by entry id, for the quality scores that arrive later. */
  private summaryRows = new Map<string, { chunk: number; row: GraphRow }>();
  /** The marker facts (drop count, retention) of the open session's summaries, by entry id: a
   *  summary's facts depend on its text and span only, which no layout changes, so the rows of a
   *  new layout (each Continue) get them at once. Asked for again per layout, they came a moment
   *  after the Continue's frame and made its summary rows and lanes anew. */
  private facts = new Map<string, Pick<GraphRow, "dropped" | "retained" | "facts">>();
  private factsOf: string | null = null;
  /** Bumped when a chunk's rows change in place (marker facts filled in): its lanes are repainted. */
  private chunkVersion = new Map<number, number>();
  /** Canvas colours, read from the theme's CSS variables (again whenever the theme changes). */
  private pal = readPalette();
  private palVersion = 0;
  /** Frame times (ms) of the last draws, for the benchmark. */
  readonly frameTimes: number[] = [];
  /** The rows are a big session's provisional graph (its newest entries, drawn while the full
   *  open reads the file): all of them are here, none is asked for, and a click or a key other
   *  than a move or a zoom does nothing, since there is no open session to answer it yet. */
  previewing = false;

  constructor(private readonly root: HTMLElement, private readonly cb: GraphCallbacks) {
    root.tabIndex = 0;
    this.spacer = el("div", "graph-spacer");
    this.rowsEl = el("div", "graph-rows");
    this.cutEl = el("div", "cut-marker");
    this.cutEl.id = "cut-marker";
    this.cutEl.hidden = true;
    this.spacer.append(this.rowsEl, this.cutEl);
    root.append(this.spacer);
    root.addEventListener("scroll", () => this.schedule());
    window.addEventListener(THEME_EVENT, () => {
      this.pal = readPalette();
      this.palVersion++;
      this.schedule();
    });
    new ResizeObserver(() => this.schedule()).observe(root);
    root.addEventListener("wheel", (e) => {
      if (e.ctrlKey) {
        e.preventDefault();
        this.zoom(e.deltaY < 0 ? 1.1 : 1 / 1.1);
      }
    }, { passive: false });
    this.enablePan();
    root.addEventListener("keydown", (e) => this.onKey(e));
    onQualityMarks((batch) => this.fillQuality(batch.map((m) => m.entryId)));
  }

  /** Quality scores that arrived (the background run, the workbench): onto the rows loaded. */
  private fillQuality(ids: string[]): void {
    let changed = false;
    for (const id of ids) {
      const at = this.summaryRows.get(id);
      const score = qualityMark(id)?.score.score ?? null;
      if (!at || score === (at.row.quality ?? null)) continue;
      at.row.quality = score;
      this.chunkVersion.set(at.chunk, (this.chunkVersion.get(at.chunk) ?? 0) + 1);
      changed = true;
    }
    if (changed) this.schedule();
  }

  /** New layout (open, navigation, fold): drop cached rows. `rows`: the new layout's rows already
   *  in hand, in whole chunks (Continue's answer, for `viewRequest`): the frame after draws them. */
  reset(totalRows: number, lanes: number, rows?: GraphWindow | null): void {
    this.generation++;
    this.previewing = false;
    this.chunks.clear();
    this.summaryRows.clear();
    this.pending.clear();
    this.chunkVersion.clear();
    this.band = null;
    this.totalRows = totalRows;
    this.lanes = Math.max(1, lanes);
    this.cursor = Math.min(this.cursor, Math.max(0, totalRows - 1));
    // Size the spacer now, so a scroll to a row right after a reset is not clamped.
    this.sizeSpacer();
    if (rows && rows.totalRows === totalRows && rows.start % CHUNK === 0) {
      for (let c = rows.start / CHUNK, k = 0; k < rows.rows.length; c++, k += CHUNK) {
        const part = rows.rows.slice(k, k + CHUNK);
        // Only whole chunks: the graph asks for a chunk it does not have, never for a part.
        if (part.length === Math.min(CHUNK, totalRows - c * CHUNK)) this.adoptChunk(c, part, this.generation);
      }
    }
    this.schedule();
  }

  /** The view as a command that lays the graph out anew (Continue) is told it, in rows: its
   *  answer then carries the rows this view draws once scrolled to the new leaf, so the frame
   *  after draws the new layout at once (without them it drew the graph empty, and the rows came
   *  with a second round trip, which waited behind the webview's painting of the click). */
  viewRequest(): GraphViewport {
    const v = this.viewport();
    return { top: v.scrollTop / v.rowHeight, height: v.height / v.rowHeight, margin: BAND_MARGIN, chunk: CHUNK };
  }

  /** The open session's file: the marker facts kept are those of one session. */
  setSession(path: string): void {
    if (path === this.factsOf) return;
    this.factsOf = path;
    this.facts.clear();
  }

  /** A big session's provisional rows (all of them, numbered from 0), with the cursor on
   *  `cursor`; the next [`reset`] (the full open's layout) replaces them. */
  showPreview(rows: GraphRow[], lanes: number, cursor: number): void {
    this.reset(rows.length, lanes);
    this.previewing = true;
    for (let c = 0; c * CHUNK < rows.length; c++) this.chunks.set(c, rows.slice(c * CHUNK, (c + 1) * CHUNK));
    this.setCursor(cursor, false);
  }

  /** Where row `row` sits in the view, in pixels from its top (negative or past the height when
   *  it is out of view). */
  offsetInView(row: number): number {
    return row * this.rowHeight - this.root.scrollTop;
  }

  /** Scrolls so that row `row` sits `offset` pixels from the view's top, where another layout's
   *  row stood: the full graph replaces the provisional one without the leaf moving. */
  placeRow(row: number, offset: number): void {
    this.root.scrollTop = Math.max(0, row * this.rowHeight - offset);
    this.schedule();
  }

  zoom(factor: number): void {
    const anchorRow = this.root.scrollTop / this.rowHeight;
    this.rowHeight = Math.min(48, Math.max(12, Math.round(this.rowHeight * factor)));
    this.laneWidth = Math.min(28, Math.max(8, Math.round(this.laneWidth * factor)));
    this.band = null;
    this.sizeSpacer();
    this.root.scrollTop = anchorRow * this.rowHeight;
    this.schedule();
  }

  rowAt(row: number): GraphRow | undefined {
    return this.chunks.get(Math.floor(row / CHUNK))?.[row % CHUNK];
  }

  async ensureRow(row: number): Promise<GraphRow | undefined> {
    await this.fetchChunk(Math.floor(row / CHUNK));
    return this.rowAt(row);
  }

  /** After an open: the cursor on `row`, and its rows asked for at once rather than at the next
   *  frame's draw, so the graph's first rows are drawn a frame sooner. (Not for Continue or a
   *  click: there the window's answer, on the main thread, would hold back the selection's.) */
  showRowNow(row: number): void {
    this.setCursor(row, false);
    const { first, last } = visibleRange(this.viewport(), 2);
    for (const c of chunksFor(first, last)) void this.fetchChunk(c);
  }

  scrollToRow(row: number): void {
    this.root.scrollTop = scrollToShow(row, this.viewport());
    this.schedule();
  }

  setCursor(row: number, select = true): void {
    if (this.totalRows === 0) return;
    this.cursor = Math.max(0, Math.min(this.totalRows - 1, row));
    this.scrollToRow(this.cursor);
    if (select) {
      void this.ensureRow(this.cursor).then((r) => r && this.cb.onSelect(r));
    }
  }

  setCut(row: number | null): void {
    this.cutRow = row;
    this.schedule();
  }

  /** Marks the entries a compaction under review would summarize, and the entry it keeps from
   * (null clears both). */
  setReviewSpan(span: Set<string> | null, firstKept: string | null): void {
    this.reviewSpan = span;
    this.reviewKept = firstKept;
    for (const live of this.live.values()) this.markReview(live.el, live.row);
  }

  /** Highlights the picked nodes (null: none). */
  setPicked(ids: Set<string> | null): void {
    this.picked = ids && ids.size ? ids : null;
    for (const live of this.live.values()) live.el.classList.toggle("picked", this.picked?.has(live.row.entryId) ?? false);
  }

  private markReview(d: HTMLElement, row: GraphRow): void {
    d.classList.toggle("review-span", this.reviewSpan?.has(row.entryId) ?? false);
    d.classList.toggle("review-kept", this.reviewKept === row.entryId);
  }

  private viewport() {
    return {
      scrollTop: this.root.scrollTop,
      height: this.root.clientHeight,
      rowHeight: this.rowHeight,
      totalRows: this.totalRows,
    };
  }

  private async fetchChunk(c: number): Promise<void> {
    if (this.previewing || this.chunks.has(c) || this.pending.has(c)) return;
    this.pending.add(c);
    const gen = this.generation;
    try {
      const w = await call(api.graphWindow(c * CHUNK, Math.min(this.totalRows, (c + 1) * CHUNK)));
      if (gen !== this.generation) return;
      this.adoptChunk(c, w.rows, gen);
    } finally {
      this.pending.delete(c);
    }
  }

  /** Chunk `c`'s rows of layout `gen` (the current one) arrived: kept, drawn at the next frame. */
  private adoptChunk(c: number, rows: GraphRow[], gen: number): void {
    for (const r of rows) {
      if (r.kind !== "compaction" && r.kind !== "branch_summary") continue;
      this.summaryRows.set(r.entryId, { chunk: c, row: r });
      if ((r.facts ?? null) === null) Object.assign(r, this.facts.get(r.entryId));
      else this.facts.set(r.entryId, { dropped: r.dropped, retained: r.retained, facts: r.facts });
      // A score that arrived while the window was on its way.
      if (r.quality === null) r.quality = qualityMark(r.entryId)?.score.score ?? null;
    }
    this.chunks.set(c, rows);
    this.schedule();
    void this.fillMarkers(rows, gen);
  }

  /** Summary markers the window left without a drop count / retention score (too many to
   *  compute at once): ask for them off the main thread, then redraw. */
  private async fillMarkers(rows: GraphRow[], gen: number): Promise<void> {
    let missing = rows.filter((r) => (r.kind === "compaction" || r.kind === "branch_summary") && (r.facts ?? null) === null);
    try {
      // Each call computes for a bounded time; a pause between calls lets other commands in.
      while (missing.length && gen === this.generation) {
        const facts = await call(api.summaryMarkers(missing.map((r) => r.entryId)));
        if (gen !== this.generation || !facts.length) return;
        const byId = new Map(facts.map((f) => [f.entryId, f]));
        for (const r of missing) {
          const f = byId.get(r.entryId);
          if (!f) continue;
          const got = { dropped: f.dropped, retained: f.retained, facts: f.facts };
          Object.assign(r, got);
          if (this.factsOf !== null) this.facts.set(r.entryId, got);
        }
        missing = missing.filter((r) => !byId.has(r.entryId));
        const chunk = Math.floor(rows[0].row / CHUNK);
        this.chunkVersion.set(chunk, (this.chunkVersion.get(chunk) ?? 0) + 1);
        this.schedule();
        if (missing.length) await new Promise((r) => setTimeout(r, 30));
      }
    } catch {
      /* markers are a convenience; the rows are drawn without them */
    }
  }

  schedule(): void {
    if (this.frameRequested) return;
    this.frameRequested = true;
    requestAnimationFrame(() => {
      this.frameRequested = false;
      const t0 = performance.now();
      this.draw();
      this.frameTimes.push(performance.now() - t0);
      if (this.frameTimes.length > 2000) this.frameTimes.splice(0, 1000);
    });
  }

  /** The spacer as tall as the whole graph (set only when that changed). */
  private sizeSpacer(): void {
    const height = `${this.totalRows * this.rowHeight}px`;
    if (this.spacer.style.height !== height) this.spacer.style.height = height;
  }

  private draw(): void {
    const v = this.viewport();
    const gutter = this.lanes * this.laneWidth + 12;
    const rh = this.rowHeight;
    this.sizeSpacer();
    const vis = visibleRange(v, 0);
    this.band = bandFor(vis, this.band, v);
    const { first, last } = this.band;
    for (const c of chunksFor(first, last)) void this.fetchChunk(c);
    // After a jump or a new layout the view's own rows have no elements yet (a scroll's band move
    // comes before that) and most of the band has none: this frame makes those of the view and a
    // few rows around it, so it paints as soon as it would have with no band, and the next frame
    // makes the rest.
    let [make0, make1] = [first, last];
    // After a new layout (Continue, a fold), the elements of the layout before are taken out, by
    // entry, to be kept for the same entry wherever the new layout puts it, when its rows are in
    // hand (Continue brings them); the others go. (None is left standing for rows still on their
    // way: the old leaf's row would be taken for the new layout's.)
    const reclaim = new Map<string, Live>();
    for (const [r, live] of this.live) {
      if (live.gen === this.generation) continue;
      this.live.delete(r);
      // (A fold row can carry the entry id of a row beside it: one element per entry is kept.)
      reclaim.get(live.row.entryId)?.el.remove();
      reclaim.set(live.row.entryId, live);
    }
    const unmade = (r: number) => {
      const row = this.rowAt(r);
      return !!row && !this.live.has(r) && !reclaim.has(row.entryId);
    };
    let missing = 0;
    let viewMissing = false;
    for (let r = vis.first; r < vis.last && !viewMissing; r++) viewMissing = unmade(r);
    for (let r = first; viewMissing && r < last && missing <= JUMP_ROWS; r++) if (unmade(r)) missing++;
    if (missing > JUMP_ROWS && !this.deferred) {
      [make0, make1] = [Math.max(first, vis.first - 4), Math.min(last, vis.last + 4)];
      this.schedule();
    }
    this.deferred = make1 - make0 < last - first;
    // Row elements stay while their row stays in the band and unchanged: they sit at their place
    // in the whole graph, which the webview scrolls itself. Only a band move or a changed row
    // makes elements (their text is what costs, painted in software under WebKitGTK).
    const shown = new Set<number>();
    let prev: HTMLElement | null = null;
    for (let r = first; r < last; r++) {
      const row = this.rowAt(r);
      if (!row) continue;
      let live = this.live.get(r);
      const sig = rowSignature(row, gutter, rh);
      const kept = live ? undefined : reclaim.get(row.entryId);
      // The same entry drawn the same way in the new layout (most rows after a Continue), after
      // the elements placed so far (the rows keep their order): its element stays, moved to the
      // entry's row if that changed, and only its marker classes follow the row (the active
      // path's colour). Remaking every row of the band made the webview lay out and paint the
      // whole graph pane twice, empty and then full.
      if (kept && kept.sig === sig && (!prev || prev.compareDocumentPosition(kept.el) & Node.DOCUMENT_POSITION_FOLLOWING)) {
        reclaim.delete(row.entryId);
        live = { row, sig, el: kept.el, gen: this.generation };
        if (kept.row.row !== r) {
          live.el.style.top = `${r * rh}px`;
          live.el.dataset.row = String(r);
        }
        this.elRow.set(live.el, row);
        for (const m of ALL_MARKS) live.el.classList.toggle(`m-${m}`, row.marks.includes(m));
        this.live.set(r, live);
      }
      if ((r < make0 || r >= make1) && (!live || live.row !== row)) continue;
      if (!live || live.row !== row || live.sig !== sig) {
        const d = this.rowElement(row, r * rh, gutter);
        if (live) live.el.remove();
        if (prev) prev.after(d);
        else this.rowsEl.prepend(d);
        live = { row, sig, el: d, gen: this.generation };
        this.live.set(r, live);
      }
      live.el.classList.toggle("cursor", row.row === this.cursor);
      if (this.reviewSpan) this.markReview(live.el, row);
      live.el.classList.toggle("picked", this.picked?.has(row.entryId) ?? false);
      prev = live.el;
      shown.add(r);
    }
    for (const live of reclaim.values()) live.el.remove();
    for (const [r, live] of this.live) {
      if (!shown.has(r)) {
        live.el.remove();
        this.live.delete(r);
      }
    }
    this.drawLanes(first, last, make0, make1, gutter);
    if (this.cutRow !== null && this.totalRows > 0) {
      this.cutEl.hidden = false;
      this.cutEl.dataset.row = String(this.cutRow);
      this.cutEl.style.top = `${this.cutRow * rh - 1}px`;
    } else {
      this.cutEl.hidden = true;
      delete this.cutEl.dataset.row;
    }
  }

  /** The lane canvases of the segments that rows [make0, make1) touch: each painted once for
   *  what it shows (its rows, their marker facts, zoom, lanes, theme). Those of the band's other
   *  rows stay as they are; the others are removed. */
  private drawLanes(first: number, last: number, make0: number, make1: number, gutter: number): void {
    const rh = this.rowHeight;
    const dpr = window.devicePixelRatio || 1;
    // Canvases of segments that left the band are kept and reused (moved and repainted): a new
    // canvas is a new composited layer for the webview, which took a frame of its own.
    for (const [seg, s] of this.segments) {
      if ((seg + 1) * SEGMENT <= first || seg * SEGMENT >= last || !this.chunks.has(Math.floor((seg * SEGMENT) / CHUNK))) {
        this.segments.delete(seg);
        s.canvas.hidden = true;
        delete s.canvas.dataset.segment;
        this.spare.push(s.canvas);
      }
    }
    for (let seg = Math.floor(make0 / SEGMENT); seg * SEGMENT < make1; seg++) {
      const start = seg * SEGMENT;
      const end = Math.min(this.totalRows, start + SEGMENT);
      const chunk = Math.floor(start / CHUNK);
      if (!this.chunks.has(chunk)) continue; // nothing to paint yet
      const sig = `${this.generation}|${this.chunkVersion.get(chunk) ?? 0}|${gutter}|${rh}|${end}|${dpr}|${this.palVersion}`;
      let s = this.segments.get(seg);
      if (s && s.sig === sig) continue;
      if (!s) {
        let canvas = this.spare.pop();
        if (!canvas) {
          canvas = document.createElement("canvas");
          canvas.className = "graph-canvas";
          this.spacer.prepend(canvas);
        }
        canvas.hidden = false;
        canvas.dataset.segment = String(seg);
        s = { canvas, sig: "" };
        this.segments.set(seg, s);
      }
      s.sig = sig;
      const c = s.canvas;
      const [w, h] = [Math.round(gutter * dpr), Math.round((end - start) * rh * dpr)];
      if (c.width !== w || c.height !== h) {
        c.width = w;
        c.height = h;
        c.style.width = `${gutter}px`;
        c.style.height = `${(end - start) * rh}px`;
      }
      c.style.top = `${start * rh}px`;
      const ctx = c.getContext("2d");
      if (!ctx) continue;
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      ctx.clearRect(0, 0, gutter, (end - start) * rh);
      for (let r = start; r < end; r++) {
        const row = this.rowAt(r);
        if (row) this.paintRow(ctx, row, (r - start) * rh);
      }
    }
    for (const c of this.spare.splice(SPARE_CANVASES)) c.remove();
  }

  private lane(i: number): string {
    return this.pal.lanes[i % this.pal.lanes.length];
  }

  private paintRow(ctx: CanvasRenderingContext2D, row: GraphRow, y: number): void {
    const rh = this.rowHeight;
    const lw = this.laneWidth;
    const mid = y + rh / 2;
    const has = (m: Mark) => row.marks.includes(m);
    ctx.lineWidth = 2;
    for (const t of row.through) {
      ctx.strokeStyle = this.lane(t);
      ctx.beginPath();
      ctx.moveTo(laneX(t, lw), y);
      ctx.lineTo(laneX(t, lw), y + rh);
      ctx.stroke();
    }
    const x = laneX(row.lane, lw);
    ctx.strokeStyle = this.lane(row.lane);
    ctx.globalAlpha = has("beyondHorizon") ? 0.35 : 1;
    if (row.fromAbove) {
      ctx.beginPath();
      ctx.moveTo(x, y);
      ctx.lineTo(x, mid);
      ctx.stroke();
    }
    if (row.toBelow) {
      ctx.beginPath();
      ctx.moveTo(x, mid);
      ctx.lineTo(x, y + rh);
      ctx.stroke();
    }
    for (const f of row.forks) {
      ctx.strokeStyle = this.lane(f);
      ctx.beginPath();
      ctx.moveTo(x, mid);
      ctx.bezierCurveTo(x, y + rh, laneX(f, lw), mid, laneX(f, lw), y + rh);
      ctx.stroke();
    }
    // The node glyph.
    const r = Math.max(3, rh / 5);
    ctx.fillStyle = has("active") ? this.lane(row.lane) : this.pal.node;
    ctx.strokeStyle = this.lane(row.lane);
    ctx.beginPath();
    if (row.kind === "fold") {
      ctx.setLineDash([2, 2]);
      ctx.moveTo(x, y + 2);
      ctx.lineTo(x, y + rh - 2);
      ctx.stroke();
      ctx.setLineDash([]);
    } else if (has("compaction")) {
      ctx.rect(x - r, mid - r, 2 * r, 2 * r);
      ctx.fill();
      ctx.stroke();
    } else if (has("branchSummary")) {
      ctx.moveTo(x, mid - r - 1);
      ctx.lineTo(x + r + 1, mid);
      ctx.lineTo(x, mid + r + 1);
      ctx.lineTo(x - r - 1, mid);
      ctx.closePath();
      ctx.fill();
      ctx.stroke();
    } else {
      ctx.arc(x, mid, has("leaf") ? r + 2 : r, 0, Math.PI * 2);
      ctx.fill();
      ctx.stroke();
    }
    if (row.dropped) {
      // Drop alarm: a red ring around the summary marker.
      ctx.strokeStyle = this.pal.red;
      ctx.beginPath();
      ctx.arc(x, mid, r + 3, 0, Math.PI * 2);
      ctx.stroke();
    }
    if (has("leaf")) {
      ctx.strokeStyle = this.pal.strong;
      ctx.beginPath();
      ctx.arc(x, mid, r + 4, 0, Math.PI * 2);
      ctx.stroke();
    }
    ctx.globalAlpha = 1;
  }

  private rowElement(row: GraphRow, y: number, gutter: number): HTMLElement {
    const d = el("div", "g-row");
    d.style.top = `${y}px`;
    d.style.height = `${this.rowHeight}px`;
    d.style.lineHeight = `${this.rowHeight}px`;
    d.style.paddingLeft = `${gutter}px`;
    d.dataset.row = String(row.row);
    d.dataset.entryId = row.entryId;
    d.dataset.kind = row.kind;
    for (const m of row.marks) d.classList.add(`m-${m}`);
    const kind = el("span", `g-kind k-${row.kind}`);
    kind.textContent = row.kind === "fold" ? `⋯ ${row.foldCount} folded` : SHORT_KIND[row.kind];
    d.appendChild(kind);
    if (row.label) {
      const l = el("span", "g-label");
      l.textContent = row.label;
      d.appendChild(l);
    }
    for (const [m, text] of MARK_BADGES) {
      if (row.marks.includes(m)) {
        const b = el("span", `g-badge b-${m}`);
        b.textContent = m === "compaction" && row.span > 0 ? `${text} · ${row.span} summarized` : text;
        d.appendChild(b);
      }
    }
    for (const b of markerBadges(row, qualityMark(row.entryId)?.score)) {
      const e = el("span", `g-badge ${b.cls}`);
      e.textContent = b.text;
      if (b.title) e.title = b.title;
      d.appendChild(e);
    }
    const t = el("span", "g-title");
    t.textContent = row.kind === "fold" ? "click or Enter to expand" : row.title;
    d.appendChild(t);
    this.elRow.set(d, row);
    d.addEventListener("click", (e) => {
      if (this.previewing) return;
      const row = this.elRow.get(d)!;
      this.cursor = row.row;
      this.root.focus({ preventScroll: true });
      if ((e.ctrlKey || e.metaKey) && row.kind !== "fold" && this.cb.onPick) this.cb.onPick(row);
      else if (row.kind === "fold") this.cb.onActivate(row);
      else this.cb.onSelect(row);
      this.schedule();
    });
    return d;
  }

  private onKey(e: KeyboardEvent): void {
    const page = Math.max(1, Math.floor(this.root.clientHeight / this.rowHeight) - 1);
    const moves: Record<string, number> = { ArrowDown: 1, ArrowUp: -1, PageDown: page, PageUp: -page };
    if (e.key in moves) {
      e.preventDefault();
      this.setCursor(this.cursor + moves[e.key], false);
    } else if (e.key === "Home" || e.key === "End") {
      e.preventDefault();
      this.setCursor(e.key === "Home" ? 0 : this.totalRows - 1, false);
    } else if (this.previewing && (e.key === "Enter" || e.key === " " || e.key === "ArrowLeft" || e.key === "l")) {
      // Selecting, picking, the parent and the leaf need the open session.
      e.preventDefault();
    } else if (e.key === "Enter") {
      e.preventDefault();
      void this.ensureRow(this.cursor).then((r) => {
        if (!r) return;
        if (r.kind === "fold") this.cb.onActivate(r);
        else this.cb.onSelect(r);
      });
    } else if (e.key === " ") {
      e.preventDefault();
      void this.ensureRow(this.cursor).then((r) => r && r.kind !== "fold" && this.cb.onPick?.(r));
    } else if (e.key === "ArrowLeft") {
      e.preventDefault();
      this.cb.onParent();
    } else if (e.key === "l") {
      this.cb.onLeaf();
    } else if (e.key === "+" || e.key === "=") {
      this.zoom(1.15);
    } else if (e.key === "-") {
      this.zoom(1 / 1.15);
    }
  }

  private enablePan(): void {
    let drag: { x: number; y: number; top: number; left: number } | null = null;
    this.root.addEventListener("pointerdown", (e) => {
      if (e.button !== 1 && !(e.button === 0 && e.shiftKey)) return;
      drag = { x: e.clientX, y: e.clientY, top: this.root.scrollTop, left: this.root.scrollLeft };
      this.root.setPointerCapture(e.pointerId);
      e.preventDefault();
    });
    this.root.addEventListener("pointermove", (e) => {
      if (!drag) return;
      this.root.scrollTop = drag.top - (e.clientY - drag.y);
      this.root.scrollLeft = drag.left - (e.clientX - drag.x);
    });
    this.root.addEventListener("pointerup", () => (drag = null));
  }
}

/** More rows of the band than this without elements, the view's among them (a jump, a new
 *  layout): the frame makes only those of the view, the next frame the rest. A scroll's band move
 *  (the view's rows already made) makes all of its rows at once. */
const JUMP_ROWS = 60;
/** Lane canvases kept for reuse beyond those of the band. */
const SPARE_CANVASES = 2;

const MARK_BADGES: [Mark, string][] = [
  ["leaf", "leaf"],
  ["compaction", "compaction"],
  ["firstKept", "first kept"],
  ["branchSummary", "branch summary"],
];

/** Every marker, each drawn as an `m-<name>` class on its row. */
const ALL_MARKS = Object.keys({
  active: 1, leaf: 1, labeled: 1, branchSummary: 1, compaction: 1, firstKept: 1, summarized: 1, beyondHorizon: 1, cut: 1, foldActive: 1, fold: 1,
} satisfies Record<Mark, 1>) as Mark[];

/** What a row element's content is made from: when it changes, the element is made anew. The
 *  markers without a badge are only classes, set on a kept element; the entry, kind and title
 *  are in it so that an element is kept across a new layout only for the same entry. */
function rowSignature(row: GraphRow, gutter: number, rowHeight: number): string {
  const badges = MARK_BADGES.filter(([m]) => row.marks.includes(m)).map(([m]) => m).join(",");
  return `${gutter}|${rowHeight}|${row.entryId}|${row.kind}|${row.title}|${badges}|${row.label ?? ""}|${row.dropped ?? ""}|${row.retained ?? ""}|${row.facts ?? ""}|${row.quality ?? ""}|${row.span}|${row.foldCount}`;
}

/** A row kind as the graph's kind column names it (a fork's parent path uses it too). */
export const SHORT_KIND: Record<GraphRowKind, string> = {
  user: "user",
  assistant: "asst",
  toolResult: "tool",
  bashExecution: "bash",
  branchSummary: "branch",
  compactionSummary: "compact",
  message: "msg",
  compaction: "compact",
  branch_summary: "branch",
  label: "label",
  model_change: "model",
  thinking_level_change: "think",
  session_info: "info",
  custom_message: "custom",
  custom: "custom",
  other: "other",
  fold: "fold",
};

interface Palette {
  lanes: string[];
  node: string;
  red: string;
  strong: string;
}

function readPalette(): Palette {
  return {
    lanes: Array.from({ length: 7 }, (_, i) => cssVar(`--lane-${i}`, laneColour(i))),
    node: cssVar("--node-bg", "#1d2733"),
    red: cssVar("--red", "#e07b6a"),
    strong: cssVar("--strong", "#ffffff"),
  };
}
