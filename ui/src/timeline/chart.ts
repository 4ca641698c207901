// The context waterfall, drawn on a canvas (no charting library: the graph already draws on a
// canvas with the theme's variables, the CSP stays strict, and 100k points need per-column
// min/max downsampling that a generic library would redo on every hover).
//
// The base chart (estimate area and line, reported usage dots, compaction drops, threshold and
// window lines, or their markers on the top edge when the scale is fitted below them) is drawn
// once per data, scale, size or theme change. Hover moves a DOM cursor line and a tooltip only:
// O(1) per event (the point under x is arithmetic, the points being evenly spaced along the
// path), no redraw.

import { cssVar, THEME_EVENT } from "../theme";
import { clipped, dataTop, downsample, formatCost, formatCount, initialScale, pointAt, scaleFor, stepHover, xOf, yOf } from "./pure";
import type { Columns, Scale, Series, Timeline } from "./pure";

const HEIGHT = 240;
const PAD = { left: 4, right: 4, top: 12, bottom: 6 };

/** A compaction after which the agent re-read files or re-ran commands (the Timeline's marks). */
export interface ForgettingMark {
  pos: number;
  entryId: string;
  cost: number;
  tip: string;
}

export interface ChartDeps {
  /** Select the entry on the graph (reveal + select). */
  select: (entryId: string) => void;
}

interface Drawn {
  width: number;
  est: Columns;
  use: Columns;
}

export class WaterfallChart {
  readonly root: HTMLDivElement;
  private canvas: HTMLCanvasElement;
  private cursor: HTMLDivElement;
  private selMark: HTMLDivElement;
  private tip: HTMLDivElement;
  /** The forgetting marks, in a strip under the chart (outside it: the chart's pointer handling
   *  reads offsets on its canvas only). */
  readonly forgetStrip: HTMLDivElement;
  private forgetting: ForgettingMark[] = [];
  private forgettingAt = new Map<number, ForgettingMark>();
  private view: Timeline | null = null;
  private series: Series | null = null;
  private drawn: Drawn | null = null;
  private hover = -1;
  /** The data's largest drawable value (see dataTop), found once per data. */
  private top = 0;
  /** The user's choice: scale the y axis to the data (true) or the window (false); null until
   * they choose, when the data decides (initialScale). */
  fit: boolean | null = null;
  /** Time of the last hover's synchronous work (ms), for the benchmark. */
  lastHoverMs = 0;
  lastDrawMs = 0;

  constructor(private deps: ChartDeps) {
    this.root = document.createElement("div");
    this.root.className = "wf-chart";
    this.root.tabIndex = 0;
    this.root.setAttribute("role", "img");
    this.root.setAttribute("aria-label", "Context along the path: arrows move, Enter selects the entry on the graph");
    this.canvas = document.createElement("canvas");
    this.canvas.className = "wf-canvas";
    this.cursor = document.createElement("div");
    this.cursor.className = "wf-cursor";
    this.cursor.hidden = true;
    this.selMark = document.createElement("div");
    this.selMark.className = "wf-selected";
    this.selMark.hidden = true;
    this.tip = document.createElement("div");
    this.tip.className = "wf-tip";
    this.tip.hidden = true;
    this.root.append(this.canvas, this.selMark, this.cursor, this.tip);
    this.forgetStrip = document.createElement("div");
    this.forgetStrip.className = "wf-forget";
    this.forgetStrip.id = "wf-forget";
    // The overlays take no pointer events, so offsetX is always the canvas's.
    this.root.addEventListener("mousemove", (e) => this.hoverAtX(e.offsetX - PAD.left));
    this.root.addEventListener("mouseleave", () => this.setHover(-1));
    this.root.addEventListener("click", (e) => {
      const i = this.indexAtX(e.offsetX - PAD.left);
      if (i >= 0) {
        this.setHover(i);
        this.choose(i);
      }
    });
    this.root.addEventListener("keydown", (e) => this.key(e));
    window.addEventListener(THEME_EVENT, () => this.draw());
    new ResizeObserver(() => {
      if (this.view && this.plotWidth() !== this.drawn?.width) this.draw();
    }).observe(this.root);
  }

  private plotWidth(): number {
    return Math.max(10, Math.floor(this.root.clientWidth) - PAD.left - PAD.right);
  }

  private plotHeight(): number {
    return HEIGHT - PAD.top - PAD.bottom;
  }

  setData(v: Timeline): void {
    this.view = v;
    this.series = v.series;
    this.top = dataTop(v.series, v.scaleMax ?? v.contextWindow);
    this.hover = -1;
    this.draw();
    this.markSelected(v.selectedPos);
  }

  get data(): Timeline | null {
    return this.view;
  }

  /** The y scale drawn: the user's choice, or the one the data opens at. */
  scale(): Scale {
    const v = this.view;
    const [win, thr] = v ? [v.contextWindow, v.threshold] : [0, 0];
    return this.fit === null ? initialScale(this.top, win, thr) : scaleFor(this.top, win, thr, this.fit);
  }

  /** The compactions with a cost of forgetting: a mark each under the chart (its tooltip says
   *  what was re-read and re-run; a click selects the compaction), and lines in the hover's tip. */
  setForgetting(marks: ForgettingMark[]): void {
    this.forgetting = marks;
    this.forgettingAt = new Map(marks.map((m) => [m.pos, m]));
    this.placeForgetting();
  }

  private placeForgetting(): void {
    const s = this.series;
    const strip = this.forgetStrip;
    strip.replaceChildren();
    strip.dataset.marks = String(this.forgetting.length);
    if (!s || !this.drawn) return;
    for (const m of this.forgetting) {
      const d = document.createElement("div");
      d.className = "wf-fmark";
      d.dataset.entryId = m.entryId;
      d.textContent = `↻${m.cost}`;
      d.title = m.tip;
      d.style.left = `${PAD.left + xOf(m.pos, s.n, this.drawn.width)}px`;
      d.addEventListener("click", () => this.deps.select(m.entryId));
      strip.appendChild(d);
    }
  }

  /** Path position of an entry id on the chart, or -1. */
  indexOf(id: string): number {
    return this.series ? this.series.ids.indexOf(id) : -1;
  }

  /** Marks a path position as the selected entry (no redraw). */
  markSelected(pos: number | null): void {
    const v = this.view;
    const s = this.series;
    if (!v || !s || pos === null || pos < 0 || pos >= s.n) {
      this.selMark.hidden = true;
      this.root.dataset.selectedId = "";
      return;
    }
    this.selMark.hidden = false;
    this.selMark.style.transform = `translateX(${PAD.left + xOf(pos, s.n, this.plotWidth())}px)`;
    this.root.dataset.selectedId = s.ids.at(pos);
  }

  /** Draws the base chart; records the point, column and drop counts for tests. */
  draw(): void {
    const v = this.view;
    const s = this.series;
    if (!v || !s) return;
    const t0 = performance.now();
    const width = this.plotWidth();
    // Reading the width lays the page out (the tab was just shown): timed apart from drawing.
    const tLayout = performance.now();
    const height = this.plotHeight();
    const dpr = window.devicePixelRatio || 1;
    const cssW = width + PAD.left + PAD.right;
    this.canvas.style.width = `${cssW}px`;
    this.canvas.style.height = `${HEIGHT}px`;
    // A new size reallocates the canvas; the same size keeps it (cleared below).
    const [pixelW, pixelH] = [Math.round(cssW * dpr), Math.round(HEIGHT * dpr)];
    if (this.canvas.width !== pixelW) this.canvas.width = pixelW;
    if (this.canvas.height !== pixelH) this.canvas.height = pixelH;
    const ctx = this.canvas.getContext("2d");
    if (!ctx) return;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.globalAlpha = 1;
    ctx.setLineDash([]);
    ctx.clearRect(0, 0, cssW, HEIGHT);
    ctx.translate(PAD.left, PAD.top);
    const col = {
      line: cssVar("--line", "#2c3946"),
      accent: cssVar("--accent", "#7fb4e6"),
      green: cssVar("--green", "#9ad07a"),
      amber: cssVar("--amber", "#e3b25a"),
      red: cssVar("--red", "#ea8b7c"),
      muted: cssVar("--muted", "#98a6b4"),
    };
    const scale = this.scale();
    const max = scale.yMax;
    const y = (t: number) => yOf(t, max, height);
    const tStyle = performance.now();
    const est = downsample(s.tokens, width);
    const use = downsample(s.usage, width);
    const tDown = performance.now();
    const n = s.n;

    // Window and threshold: a line each, or, above a fitted scale, a label with an arrow pinned
    // to the top edge (right-aligned, where the lines' labels sit), so the budgets stay in view
    // without flattening the data. A fitted top is labelled at the left: no line marks it.
    ctx.font = "10px system-ui, sans-serif";
    const hline = (t: number, colour: string, dash: number[], label: string) => {
      const yy = Math.round(y(t)) + 0.5;
      ctx.strokeStyle = colour;
      ctx.setLineDash(dash);
      ctx.lineWidth = 1;
      ctx.beginPath();
      ctx.moveTo(0, yy);
      ctx.lineTo(width, yy);
      ctx.stroke();
      ctx.setLineDash([]);
      ctx.fillStyle = colour;
      ctx.textAlign = "right";
      ctx.fillText(label, width - 2, Math.max(9, yy - 3));
    };
    // When each part of the drawing ended (for the benchmark: data-phases).
    const marks: number[] = [performance.now()];
    const above: [string, string][] = [];
    const windowLabel = `window ${formatCount(v.contextWindow)}`;
    const thresholdLabel = `threshold ${formatCount(v.threshold)}`;
    if (scale.offScale.window) above.push([`${windowLabel} ↑`, col.muted]);
    else hline(v.contextWindow, col.muted, [], windowLabel);
    if (scale.offScale.threshold) above.push([`${thresholdLabel} ↑`, col.red]);
    else hline(v.threshold, col.red, [4, 3], thresholdLabel);
    ctx.textAlign = "right";
    let right = width - 2;
    for (const [label, colour] of above) {
      ctx.fillStyle = colour;
      ctx.fillText(label, right, 9);
      right -= ctx.measureText(label).width + 10;
    }
    if (scale.fitted) {
      ctx.fillStyle = col.muted;
      ctx.textAlign = "left";
      ctx.fillText(`${formatCount(max)} tokens`, 2, 9);
    }

    marks.push(performance.now());
    // Estimate: area under the column maxima, then the min..max band and joins as a line.
    ctx.globalAlpha = 0.18;
    ctx.fillStyle = col.accent;
    ctx.beginPath();
    ctx.moveTo(0, height);
    let open = false;
    for (let c = 0; c < est.count; c++) {
      if (Number.isNaN(est.max[c])) continue;
      ctx.lineTo(c + 0.5, y(est.max[c]));
      open = true;
    }
    if (open) {
      ctx.lineTo(width, height);
      ctx.closePath();
      ctx.fill();
    }
    ctx.globalAlpha = 1;
    ctx.strokeStyle = col.accent;
    ctx.lineWidth = 1;
    ctx.beginPath();
    let prev = NaN;
    let columns = 0;
    for (let c = 0; c < est.count; c++) {
      if (Number.isNaN(est.min[c])) continue;
      const x = c + 0.5;
      if (Number.isNaN(prev)) ctx.moveTo(x, y(est.first[c]));
      else ctx.lineTo(x, y(est.first[c]));
      ctx.moveTo(x, y(est.min[c]));
      ctx.lineTo(x, y(est.max[c]) - (est.min[c] === est.max[c] ? 0.5 : 0));
      ctx.moveTo(x, y(est.last[c]));
      prev = est.last[c];
      columns++;
    }
    ctx.stroke();

    marks.push(performance.now());
    // Points above the scale: a red tick on the top edge.
    ctx.fillStyle = col.red;
    for (let c = 0; c < est.count; c++) if (est.max[c] > max) ctx.fillRect(c, -4, 1, 4);

    marks.push(performance.now());
    // Reported usage: dots at the column's min and max.
    ctx.fillStyle = col.green;
    let dots = 0;
    for (let c = 0; c < use.count; c++) {
      if (Number.isNaN(use.min[c])) continue;
      ctx.fillRect(c - 1, y(use.max[c]) - 1, 3, 3);
      if (use.min[c] !== use.max[c]) ctx.fillRect(c - 1, y(use.min[c]) - 1, 3, 3);
      dots++;
    }

    marks.push(performance.now());
    // Compactions: an amber drop marker at each (several may share a column), as two paths
    // (the dashed drops, the triangles): one stroke and one fill for all of them.
    ctx.strokeStyle = col.amber;
    ctx.fillStyle = col.amber;
    let drops = 0;
    let lastX = -1;
    const lines = new Path2D();
    const heads = new Path2D();
    for (const p of v.compactions) {
      const x = Math.floor(xOf(p, n, width)) + 0.5;
      drops++;
      if (x === lastX) continue;
      lastX = x;
      const before = p > 0 ? s.tokens[p - 1] : NaN;
      const after = s.tokens[p];
      const y0 = Number.isNaN(before) ? 0 : y(before);
      const y1 = Number.isNaN(after) ? height : y(after);
      lines.moveTo(x, Math.min(y0, y1));
      lines.lineTo(x, Math.max(y0, y1));
      heads.moveTo(x - 3, y1 - 5);
      heads.lineTo(x + 3, y1 - 5);
      heads.lineTo(x, y1);
      heads.closePath();
    }
    ctx.setLineDash([2, 2]);
    ctx.stroke(lines);
    ctx.setLineDash([]);
    ctx.fill(heads);
    marks.push(performance.now());
    this.drawn = { width, est, use };
    this.placeForgetting();
    this.lastDrawMs = performance.now() - t0;
    const d = this.root.dataset;
    d.points = String(n);
    d.columns = String(columns);
    d.usageColumns = String(dots);
    d.drops = String(drops);
    d.drawMs = this.lastDrawMs.toFixed(2);
    d.layoutMs = (tLayout - t0).toFixed(2);
    d.styleMs = (tStyle - tLayout).toFixed(2);
    d.downsampleMs = (tDown - tStyle).toFixed(2);
    d.plotWidth = String(width);
    d.scaleTop = String(max);
    d.scaleFitted = String(scale.fitted);
    d.offScale = (["window", "threshold"] as const).filter((k) => scale.offScale[k]).join(" ");
    this.markSelected(v.selectedPos);
    if (this.hover >= 0) this.setHover(this.hover);
    marks.push(performance.now());
    d.phases = marks.slice(1).map((t, k) => (t - marks[k]).toFixed(1)).join("/") + ` (hlines/estimate/ticks/usage/drops/tail) w=${width}`;
  }

  private indexAtX(x: number): number {
    const v = this.view;
    if (!v || !this.drawn) return -1;
    return pointAt(Math.max(0, x), v.count, this.drawn.width);
  }

  /** Hover at plot x (CSS px). Public for the benchmark. */
  hoverAtX(x: number): void {
    this.setHover(this.indexAtX(x));
  }

  private setHover(i: number): void {
    const t0 = performance.now();
    const v = this.view;
    const s = this.series;
    this.hover = i;
    if (!v || !s || i < 0 || !this.drawn) {
      this.cursor.hidden = true;
      this.tip.hidden = true;
      this.root.dataset.hoverId = "";
      return;
    }
    const width = this.drawn.width;
    const x = PAD.left + xOf(i, s.n, width);
    this.cursor.hidden = false;
    this.cursor.style.transform = `translateX(${x}px)`;
    const kind = kindName(v, s.kinds[i]);
    const id = s.ids.at(i);
    const t = s.tokens[i];
    const u = s.usage[i];
    const c = s.cost[i];
    const lines = [`${kind} · ${id} · ${i + 1} of ${s.n}`, `context ${formatCount(t)} tokens${noteOf(t, v.scaleMax ?? v.contextWindow)}`];
    if (!Number.isNaN(u)) lines.push(`reported usage ${formatCount(u)}${noteOf(u, v.scaleMax ?? v.contextWindow)}`);
    if (!Number.isNaN(c)) lines.push(`cost ${formatCost(c)}`);
    if (s.kinds[i] === C_CODE && i > 0) {
      lines.push(`compaction: ${formatCount(s.tokens[i - 1])} → ${formatCount(t)}`);
      if (t >= s.tokens[i - 1]) lines.push("(Pi counts the last usage reported before it until the next reply)");
      const f = this.forgettingAt.get(i);
      if (f) lines.push(f.tip);
    }
    this.tip.textContent = lines.join("\n");
    this.tip.hidden = false;
    // Keep the tooltip inside the chart: right of the cursor, or left of it near the right edge.
    const full = width + PAD.left + PAD.right;
    const left = x > full / 2;
    this.tip.style.left = left ? "" : `${x + 8}px`;
    this.tip.style.right = left ? `${full - x + 8}px` : "";
    this.tip.style.maxWidth = `${Math.max(120, (left ? x : full - x) - 12)}px`;
    this.root.dataset.hoverId = id;
    this.root.dataset.hoverPos = String(i);
    this.lastHoverMs = performance.now() - t0;
  }

  private choose(i: number): void {
    const s = this.series;
    if (!s || i < 0 || i >= s.n) return;
    this.deps.select(s.ids.at(i));
  }

  private key(e: KeyboardEvent): void {
    const v = this.view;
    if (!v || !this.drawn) return;
    if (e.key === "Enter") {
      if (this.hover >= 0) this.choose(this.hover);
      e.preventDefault();
      return;
    }
    const start = this.hover >= 0 ? this.hover : (v.selectedPos ?? -1);
    const next = stepHover(start, e.key, e.shiftKey, v.count, this.drawn.width);
    if (next === null) return;
    e.preventDefault();
    e.stopPropagation();
    this.setHover(next);
  }
}

const C_CODE = "c".charCodeAt(0);

function kindName(v: Timeline, code: number): string {
  for (const [c, name] of v.kindLegend) if (c.charCodeAt(0) === code) return name;
  return "entry";
}

function noteOf(t: number, scaleMax: number): string {
  const c = Number.isNaN(t) ? null : clipped(t, scaleMax);
  if (c === "above") return " (above the chart's scale)";
  if (c === "below") return " (negative: drawn at 0)";
  return "";
}
