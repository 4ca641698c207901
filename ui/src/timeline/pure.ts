// The context waterfall's arithmetic, kept free of the DOM (unit-tested in test/timeline.test.ts):
// where each point sits, which point a pixel column or x means, the per-column min/max
// downsampling used for drawing (the numbers themselves are never downsampled), and the y scale
// that keeps absurd numbers from flattening the chart.

/** The points' ids and numbers as typed arrays; NaN where there is none (or Pi's is not finite). */
export interface Series {
  n: number;
  ids: string[];
  tokens: Float64Array;
  usage: Float64Array;
  cost: Float64Array;
}

/** Little-endian f64s from base64 (how get_timeline sends its numbers); non-finite become NaN.
 * The bytes are viewed as a Float64Array directly on little-endian machines (every platform the
 * webview runs on); a DataView read per number made this a third of the first draw at 100k. */
export function f64sFromBase64(b64: string): Float64Array {
  const bin = atob(b64);
  const n = bin.length >> 3;
  const bytes = new Uint8Array(n * 8);
  for (let i = 0; i < bytes.length; i++) bytes[i] = bin.charCodeAt(i);
  let out: Float64Array;
  if (LITTLE_ENDIAN) out = new Float64Array(bytes.buffer);
  else {
    const view = new DataView(bytes.buffer);
    out = new Float64Array(n);
    for (let i = 0; i < n; i++) out[i] = view.getFloat64(i * 8, true);
  }
  for (let i = 0; i < n; i++) if (!Number.isFinite(out[i])) out[i] = NaN;
  return out;
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** A sparse column (values at path positions) as one number per point, NaN elsewhere. */
function sparse(n: number, vals: string, at: string): Float64Array {
  const out = new Float64Array(n).fill(NaN);
  const v = f64sFromBase64(vals);
  const p = f64sFromBase64(at);
  if (v.length !== p.length) throw new Error("the timeline's sparse column has values without positions");
  for (let k = 0; k < v.length; k++) {
    const i = p[k];
    if (i >= 0 && i < n) out[i] = v[k];
  }
  return out;
}

/** The series of a get_timeline answer (`count` points; ids joined by newlines; the usage and
 * the cost sparse, with their positions). */
export function toSeries(v: { count: number; ids: string; contextTokens: string; usageTokens: string; usageAt: string; cost: string; costAt: string }): Series {
  const n = v.count;
  const ids = n === 0 ? [] : v.ids.split("\n");
  const tokens = f64sFromBase64(v.contextTokens);
  const usage = sparse(n, v.usageTokens, v.usageAt);
  const cost = sparse(n, v.cost, v.costAt);
  if (ids.length !== n || tokens.length !== n) throw new Error("the timeline's columns disagree on the number of points");
  return { n, ids, tokens, usage, cost };
}

/** Base64 of little-endian f64s (the inverse of f64sFromBase64; tests build answers with it). */
export function f64sToBase64(xs: number[]): string {
  const view = new DataView(new ArrayBuffer(xs.length * 8));
  xs.forEach((x, i) => view.setFloat64(i * 8, x, true));
  let bin = "";
  const bytes = new Uint8Array(view.buffer);
  for (let i = 0; i < bytes.length; i++) bin += String.fromCharCode(bytes[i]);
  return btoa(bin);
}

/** x (in CSS px from the plot's left edge) of point `i` of `n` over a plot `width` wide: the
 * points share the width evenly, each at the middle of its share. */
export function xOf(i: number, n: number, width: number): number {
  if (n <= 0) return 0;
  return ((i + 0.5) * width) / n;
}

/** The pixel column (0..count-1) point `i` of `n` is drawn in. */
export function columnOf(i: number, n: number, count: number): number {
  return Math.min(count - 1, Math.floor((i * count) / n));
}

/** The point under `x`: O(1), the points sharing the width evenly (the inverse of xOf). */
export function pointAt(x: number, n: number, width: number): number {
  if (n <= 0) return -1;
  if (width <= 0) return 0;
  const i = Math.floor((x * n) / width);
  return Math.min(n - 1, Math.max(0, i));
}

/** Per pixel column: the min and max of the values drawn there, and the first and last value
 * (to join neighbouring columns). NaN where a column holds no finite value. */
export interface Columns {
  count: number;
  min: Float64Array;
  max: Float64Array;
  first: Float64Array;
  last: Float64Array;
}

/** Min/max downsampling of `values` into `width` pixel columns (one pass, O(n)). Each point
 * goes to the column of its x, so a column may hold many points (big paths) or none (small). */
export function downsample(values: Float64Array, width: number): Columns {
  const count = Math.max(1, Math.floor(width));
  const min = new Float64Array(count).fill(NaN);
  const max = new Float64Array(count).fill(NaN);
  const first = new Float64Array(count).fill(NaN);
  const last = new Float64Array(count).fill(NaN);
  const n = values.length;
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (Number.isNaN(v)) continue;
    const c = columnOf(i, n, count);
    if (Number.isNaN(min[c])) {
      min[c] = v;
      max[c] = v;
      first[c] = v;
    } else {
      if (v < min[c]) min[c] = v;
      if (v > max[c]) max[c] = v;
    }
    last[c] = v;
  }
  return { count, min, max, first, last };
}

/** y of a token count on a plot `height` high whose top is `scaleMax` tokens: negative numbers
 * sit on the baseline and numbers above the scale on the top edge (`clipped` says which). */
export function yOf(v: number, scaleMax: number, height: number): number {
  const s = scaleMax > 0 && Number.isFinite(scaleMax) ? scaleMax : 1;
  const f = Math.min(1, Math.max(0, v / s));
  return height - f * height;
}

export function clipped(v: number, scaleMax: number): "above" | "below" | null {
  if (v > scaleMax) return "above";
  if (v < 0) return "below";
  return null;
}

/** The next hover position for a key (null: not a chart key). Arrows move one entry; with
 * Shift one pixel column's worth of entries; Home/End the ends. */
export function stepHover(pos: number, key: string, shift: boolean, n: number, width: number): number | null {
  if (n <= 0) return null;
  const col = Math.max(1, Math.round(n / Math.max(1, width)));
  const start = pos < 0 ? (key === "ArrowLeft" ? n : -1) : pos;
  let next: number;
  switch (key) {
    case "ArrowLeft":
      next = start - (shift ? col : 1);
      break;
    case "ArrowRight":
      next = start + (shift ? col : 1);
      break;
    case "Home":
      next = 0;
      break;
    case "End":
      next = n - 1;
      break;
    default:
      return null;
  }
  return Math.min(n - 1, Math.max(0, next));
}

/** "$0.0123": costs are small; four significant figures, no exponent. */
export function formatCost(c: number): string {
  if (!Number.isFinite(c)) return "–";
  const a = Math.abs(c);
  if (a === 0) return "$0";
  if (a < 0.0001) return `${c < 0 ? "-" : ""}<$0.0001`;
  if (a >= 100) return `${c < 0 ? "-" : ""}$${a.toFixed(2)}`;
  return `${c < 0 ? "-" : ""}$${a.toPrecision(4).replace(/\.?0+$/, "")}`;
}

/** A token count exactly, grouped ("12,345"); huge or absurd numbers in exponent form. */
export function formatCount(v: number): string {
  if (!Number.isFinite(v)) return "not a number (Pi's estimate is NaN here)";
  if (Math.abs(v) >= 1e15) return v.toExponential(3);
  return Math.round(v).toLocaleString("en-US");
}

/** The top of the y scale. `fit`: the data's largest drawable value (non-negative, not above
 * `scaleMax`) plus 10%, so a session far below its window still shows its shape; otherwise the
 * command's `scaleMax` (at least the window). */
export function scaleTop(s: Series, scaleMax: number, fit: boolean): number {
  const cap = scaleMax > 0 && Number.isFinite(scaleMax) ? scaleMax : 1;
  if (!fit) return cap;
  let top = 0;
  for (const a of [s.tokens, s.usage]) {
    for (let i = 0; i < a.length; i++) {
      const v = a[i];
      if (v > top && v <= cap) top = v;
    }
  }
  return top > 0 ? Math.min(cap, top * 1.1) : cap;
}
