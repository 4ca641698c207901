// The context waterfall's arithmetic, kept free of the DOM (unit-tested in test/timeline.test.ts):
// where each point sits, which point a pixel column or x means, the per-column min/max
// downsampling used for drawing (the numbers themselves are never downsampled), and the y scale
// that keeps absurd numbers from flattening the chart and opens a session far below its window
// fitted to its data.

/** The small fields of a get_timeline answer (the JSON head of its bytes; Rust's TimelineHead). */
export interface TimelineHead {
  count: number;
  /** `[code, name]` pairs for the kind codes. */
  kindLegend: [string, string][];
  /** Path positions of the compactions. */
  compactions: number[];
  totalCost: number | null;
  contextWindow: number;
  reserveTokens: number;
  threshold: number;
  scaleMax: number;
  absurdPoints: number;
  activePath: boolean;
  selectedPos: number | null;
  leafId: string | null;
  /** How long the command took to build the answer (ms). */
  buildMs: number;
}

/** The path's entry ids, kept as the answer sends them: an id is decoded only when asked for
 * (hover, click, the selected marker), so 77k ids cost no strings on the first draw. */
export interface Ids {
  readonly length: number;
  /** The id of point `i` ("" out of range). */
  at(i: number): string;
  /** The first point whose id is `id`, or -1 (no strings made). */
  indexOf(id: string): number;
}

/** Ids as UTF-8 bytes with the end of each. */
export class ByteIds implements Ids {
  private readonly dec = new TextDecoder();
  constructor(
    private readonly bytes: Uint8Array,
    private readonly ends: Uint32Array,
  ) {}
  get length(): number {
    return this.ends.length;
  }
  at(i: number): string {
    if (i < 0 || i >= this.ends.length) return "";
    const start = i === 0 ? 0 : this.ends[i - 1];
    return this.dec.decode(this.bytes.subarray(start, this.ends[i]));
  }
  indexOf(id: string): number {
    const want = new TextEncoder().encode(id);
    const { bytes, ends } = this;
    let start = 0;
    for (let i = 0; i < ends.length; i++) {
      const end = ends[i];
      if (end - start === want.length) {
        let k = 0;
        while (k < want.length && bytes[start + k] === want[k]) k++;
        if (k === want.length) return i;
      }
      start = end;
    }
    return -1;
  }
}

const HEX_ID = /^[0-9a-f]{8}$/;

/** Ids of 8 lowercase hex digits (Pi's), each sent as its value. */
export class HexIds implements Ids {
  constructor(private readonly words: Uint32Array) {}
  get length(): number {
    return this.words.length;
  }
  at(i: number): string {
    if (i < 0 || i >= this.words.length) return "";
    return this.words[i].toString(16).padStart(8, "0");
  }
  indexOf(id: string): number {
    return HEX_ID.test(id) ? this.words.indexOf(parseInt(id, 16)) : -1;
  }
}

/** The points' ids and numbers as typed arrays; NaN where there is none (or Pi's is not finite). */
export interface Series {
  n: number;
  ids: Ids;
  /** One kind code (a character code of the legend) per point. */
  kinds: Uint8Array;
  tokens: Float64Array;
  usage: Float64Array;
  cost: Float64Array;
}

/** A decoded get_timeline answer. */
export interface Timeline extends TimelineHead {
  series: Series;
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const HEADER_BYTES = 32;
const VERSION = 2;
/** Every id is 8 lowercase hex digits, sent as a u32 (Rust's FLAG_HEX_IDS). */
const FLAG_HEX_IDS = 1;
/** The costs sit at the usages' positions; theirs are not sent (FLAG_COST_AT_USAGE). */
const FLAG_COST_AT_USAGE = 2;

/** `n` little-endian f64s at `offset` (a multiple of 8): viewed in place on little-endian
 * machines (every platform the webview runs on), copied otherwise. */
function f64s(buf: ArrayBuffer, offset: number, n: number): Float64Array {
  if (LITTLE_ENDIAN) return new Float64Array(buf, offset, n);
  const view = new DataView(buf, offset, n * 8);
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = view.getFloat64(i * 8, true);
  return out;
}

function u32s(buf: ArrayBuffer, offset: number, n: number): Uint32Array {
  if (LITTLE_ENDIAN && offset % 4 === 0) return new Uint32Array(buf, offset, n);
  const view = new DataView(buf, offset, n * 4);
  const out = new Uint32Array(n);
  for (let i = 0; i < n; i++) out[i] = view.getUint32(i * 4, true);
  return out;
}

/** Non-finite numbers become NaN (drawn nowhere; the tooltip says "not a number"). */
function finiteOrNaN(a: Float64Array): Float64Array {
  for (let i = 0; i < a.length; i++) if (!Number.isFinite(a[i])) a[i] = NaN;
  return a;
}

/** A sparse column (values at path positions) as one number per point, NaN elsewhere. */
function sparse(n: number, vals: Float64Array, at: Uint32Array): Float64Array {
  const out = new Float64Array(n).fill(NaN);
  for (let k = 0; k < vals.length; k++) {
    const i = at[k];
    if (i < n) out[i] = Number.isFinite(vals[k]) ? vals[k] : NaN;
  }
  return out;
}

/** Decodes get_timeline's bytes (the layout is Rust's TimelineView::to_bytes: a header of eight
 * u32s, the JSON head, the f64 columns, the u32 columns, the kind codes, the ids' bytes). */
export function decodeTimeline(answer: ArrayBuffer | ArrayBufferView | number[]): Timeline {
  // Tauri hands raw answers over as an ArrayBuffer; where it falls back to JSON, as numbers.
  const buf =
    answer instanceof ArrayBuffer
      ? answer
      : Array.isArray(answer)
        ? new Uint8Array(answer).buffer
        : new Uint8Array(answer.buffer, answer.byteOffset, answer.byteLength).slice().buffer;
  if (buf.byteLength < HEADER_BYTES) throw new Error("the timeline's answer is too short");
  const h = new DataView(buf, 0, HEADER_BYTES);
  const u = (k: number) => h.getUint32(k * 4, true);
  if (u(0) !== VERSION) throw new Error(`the timeline's answer has layout ${u(0)}, this window reads ${VERSION}: reload the window`);
  const [headLen, n, nu, nc, ni, flags] = [u(1), u(2), u(3), u(4), u(5), u(6)];
  const costAtUsage = (flags & FLAG_COST_AT_USAGE) !== 0;
  const hexIds = (flags & FLAG_HEX_IDS) !== 0;
  let at = HEADER_BYTES;
  const head = JSON.parse(new TextDecoder().decode(new Uint8Array(buf, at, headLen))) as TimelineHead;
  at += headLen;
  if (head.count !== n) throw new Error("the timeline's columns disagree on the number of points");
  if (costAtUsage && nc !== nu) throw new Error("the timeline's costs are said to sit at the usages but are not as many");
  const want = at + (n + nu + nc) * 8 + (nu + (costAtUsage ? 0 : nc) + n) * 4 + n + ni;
  if (buf.byteLength !== want) throw new Error(`the timeline's answer has ${buf.byteLength} bytes, its header says ${want}`);
  const tokens = finiteOrNaN(f64s(buf, at, n));
  at += n * 8;
  const uv = f64s(buf, at, nu);
  at += nu * 8;
  const cv = f64s(buf, at, nc);
  at += nc * 8;
  const ua = u32s(buf, at, nu);
  at += nu * 4;
  const ca = costAtUsage ? ua : u32s(buf, at, nc);
  if (!costAtUsage) at += nc * 4;
  const words = u32s(buf, at, n);
  at += n * 4;
  const kinds = new Uint8Array(buf, at, n);
  at += n;
  const ids = hexIds ? new HexIds(words) : new ByteIds(new Uint8Array(buf, at, ni), words);
  return { ...head, series: { n, ids, kinds, tokens, usage: sparse(n, uv, ua), cost: sparse(n, cv, ca) } };
}

/** The bytes of an answer (the inverse of decodeTimeline, as Rust writes them; tests build
 * answers with it). */
export function encodeTimeline(
  head: Omit<TimelineHead, "count">,
  cols: { ids: string[]; kinds: string; tokens: number[]; usage: number[]; cost: number[] },
): ArrayBuffer {
  const n = cols.tokens.length;
  const sparseOf = (xs: number[]) => {
    const at = xs.map((x, i) => (Number.isNaN(x) ? -1 : i)).filter((i) => i >= 0);
    return { vals: at.map((i) => xs[i]), at };
  };
  const us = sparseOf(cols.usage);
  const cs = sparseOf(cols.cost);
  const enc = new TextEncoder();
  const hexIds = n > 0 && cols.ids.every((id) => HEX_ID.test(id));
  const costAtUsage = cs.at.length === us.at.length && cs.at.every((p, k) => p === us.at[k]);
  const idBytes = hexIds ? [] : cols.ids.map((id) => enc.encode(id));
  let text = JSON.stringify({ count: n, ...head });
  while (text.length % 8 !== 0) text += " ";
  const headBytes = enc.encode(text);
  const ni = idBytes.reduce((a, b) => a + b.length, 0);
  const costAt = costAtUsage ? [] : cs.at;
  const size = HEADER_BYTES + headBytes.length + (n + us.at.length + cs.at.length) * 8 + (us.at.length + costAt.length + n) * 4 + n + ni;
  const buf = new ArrayBuffer(size);
  const view = new DataView(buf);
  const flags = (hexIds ? FLAG_HEX_IDS : 0) | (costAtUsage ? FLAG_COST_AT_USAGE : 0);
  [VERSION, headBytes.length, n, us.at.length, cs.at.length, ni, flags, 0].forEach((x, k) => view.setUint32(k * 4, x, true));
  const bytes = new Uint8Array(buf);
  bytes.set(headBytes, HEADER_BYTES);
  let at = HEADER_BYTES + headBytes.length;
  for (const x of [...cols.tokens, ...us.vals, ...cs.vals]) {
    view.setFloat64(at, x, true);
    at += 8;
  }
  let end = 0;
  const words = hexIds ? cols.ids.map((id) => parseInt(id, 16)) : idBytes.map((b) => (end += b.length));
  for (const x of [...us.at, ...costAt, ...words]) {
    view.setUint32(at, x, true);
    at += 4;
  }
  for (let i = 0; i < n; i++) bytes[at++] = cols.kinds.charCodeAt(i);
  for (const b of idBytes) {
    bytes.set(b, at);
    at += b.length;
  }
  return buf;
}

/** Whether an answer fetched for the key parts `was` serves `now` (file, leaf, entry count,
 * selected id, window, reserve): "same"; "selection" when only the selection differs (the answer
 * serves when it charts the active path and the new selection is on it or none); else null. */
export function aheadFits(was: readonly string[], now: readonly string[]): "same" | "selection" | null {
  if (was.length !== 6 || now.length !== 6) return null;
  if (![0, 1, 2, 4, 5].every((i) => was[i] === now[i])) return null;
  return was[3] === now[3] ? "same" : "selection";
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

/** The data's largest drawable value: the largest estimate or reported usage that is finite,
 * non-negative and not above `cap` (the command's scaleMax: what lies above it is absurd and is
 * drawn as a tick on the top edge, not scaled to). 0 when there is none. */
export function dataTop(s: Series, cap: number): number {
  const c = cap > 0 && Number.isFinite(cap) ? cap : 1;
  let top = 0;
  for (const a of [s.tokens, s.usage]) {
    for (let i = 0; i < a.length; i++) {
      const v = a[i];
      if (v > top && v <= c) top = v;
    }
  }
  return top;
}

/** A session whose data stays under this share of its window opens fitted to the data: at the
 * window's scale it would be a flat line on the floor. */
export const FIT_BELOW = 0.25;
/** Room above the data's largest value on a fitted scale (before rounding to a nice number). */
const FIT_HEADROOM = 1.15;

/** `x` rounded up to two significant figures, in whole tokens (10,350 → 11,000; 0.3 → 1), so a
 * fitted scale's top reads as a round number. */
export function niceCeil(x: number): number {
  if (!(x > 0) || !Number.isFinite(x)) return 1;
  let step = 1;
  while (step * 100 <= x) step *= 10;
  return Math.ceil(x / step) * step;
}

/** The chart's y scale: its top (tokens), whether it is fitted to the data, and which budget
 * lines lie above it (drawn as markers pinned to the top edge instead of lines). */
export interface Scale {
  yMax: number;
  fitted: boolean;
  offScale: { window: boolean; threshold: boolean };
}

/** The scale for a mode. The window's: the window, or the data's top where it is above the
 * window (the command's scaleMax). Fitted: the data's top plus 15%, rounded up to a nice number,
 * never above the window's scale; with no data, the window's. Never 0, so nothing divides by it. */
export function scaleFor(maxTokens: number, windowTokens: number, thresholdTokens: number, fit: boolean): Scale {
  const pos = (x: number) => (Number.isFinite(x) && x > 0 ? x : 0);
  const [top, win, thr] = [pos(maxTokens), pos(windowTokens), pos(thresholdTokens)];
  const whole = Math.max(1, win, top);
  const fitted = fit && top > 0;
  const yMax = fitted ? Math.min(whole, niceCeil(top * FIT_HEADROOM)) : whole;
  return { yMax, fitted, offScale: { window: win > yMax, threshold: thr > yMax } };
}

/** The scale the chart opens at: fitted to the data when its largest value is under a quarter
 * of the window and not above the compaction threshold (a session that compacts is shown
 * against its window), else the window's. No window or no data: the window's. */
export function initialScale(maxTokens: number, windowTokens: number, thresholdTokens: number): Scale {
  const fit = windowTokens > 0 && maxTokens > 0 && maxTokens < windowTokens * FIT_BELOW && maxTokens <= thresholdTokens;
  return scaleFor(maxTokens, windowTokens, thresholdTokens, fit);
}
