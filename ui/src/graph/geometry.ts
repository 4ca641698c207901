// Pure geometry of the graph view: which rows are visible, where lanes are, which chunks to fetch.

export interface Viewport {
  scrollTop: number;
  height: number;
  rowHeight: number;
  totalRows: number;
}

/** Rows [first, last) that intersect the viewport, plus `overscan` rows on each side. */
export function visibleRange(v: Viewport, overscan = 4): { first: number; last: number } {
  if (v.totalRows <= 0 || v.rowHeight <= 0) return { first: 0, last: 0 };
  const first = Math.max(0, Math.floor(v.scrollTop / v.rowHeight) - overscan);
  const last = Math.min(v.totalRows, Math.ceil((v.scrollTop + v.height) / v.rowHeight) + overscan);
  return { first, last: Math.max(first, last) };
}

export const CHUNK = 256;

/** Rows a lane canvas covers (a quarter of a chunk: at the largest zoom and a device pixel
 *  ratio of 2, 64 rows stay under the 16,384-pixel canvas limit). */
export const SEGMENT = 64;

/** Rows given elements beyond the view on each side when the band is placed anew (an open, a
 *  jump, a graph that got shorter). */
export const BAND_MARGIN = 48;
/** How near (in rows) the view may come to the band's edge before the band moves. */
export const BAND_SLACK = 12;
/** When a scroll brings the view near the band's edge, the band moves on: this many rows ahead of
 *  the view in the scroll's direction, `BAND_BEHIND` behind it. A band move costs a long frame
 *  in WebKitGTK whatever the number of rows it makes (measured: 10 rows a move took 72-84 ms a
 *  frame, 36 rows 83-93 ms), so it goes far ahead: every 60 rows instead of a centred band's 36. */
export const BAND_AHEAD = 72;
export const BAND_BEHIND = 24;

/** The rows that get elements for visible rows `vis`: `band` again while the view stays inside it
 *  and at least `BAND_SLACK` rows from an edge it can move past (so scroll frames make no
 *  elements); moved on in the scroll's direction when the view comes nearer one edge; else the
 *  view with `BAND_MARGIN` rows on each side. */
export function bandFor(
  vis: { first: number; last: number },
  band: { first: number; last: number } | null,
  v: Viewport,
): { first: number; last: number } {
  const total = Math.max(0, v.totalRows);
  const around = (behind: number, ahead: number) => ({ first: Math.max(0, vis.first - behind), last: Math.min(total, vis.last + ahead) });
  if (band && band.last <= total) {
    const nearTop = band.first > 0 && vis.first - band.first < BAND_SLACK;
    const nearBottom = band.last < total && band.last - vis.last < BAND_SLACK;
    if (!nearTop && !nearBottom && vis.first >= band.first && vis.last <= band.last) return band;
    // still overlapping: a scroll, whose direction is the edge it came near
    if (vis.first < band.last && vis.last > band.first && nearTop !== nearBottom) {
      return nearBottom ? around(BAND_BEHIND, BAND_AHEAD) : around(BAND_AHEAD, BAND_BEHIND);
    }
  }
  return around(BAND_MARGIN, BAND_MARGIN);
}

/** Chunk indices covering rows [first, last). */
export function chunksFor(first: number, last: number): number[] {
  if (last <= first) return [];
  const out: number[] = [];
  for (let c = Math.floor(first / CHUNK); c <= Math.floor((last - 1) / CHUNK); c++) out.push(c);
  return out;
}

export function laneX(lane: number, laneWidth: number): number {
  return laneWidth * lane + laneWidth / 2 + 4;
}

const LANE_COLOURS = ["#7fb4e6", "#9ad07a", "#e3b25a", "#d884c8", "#6fd0c4", "#e07b6a", "#b0a4f0"];
export function laneColour(lane: number): string {
  return LANE_COLOURS[lane % LANE_COLOURS.length];
}

/** Scroll position that brings `row` into view (centred when it is outside). */
export function scrollToShow(row: number, v: Viewport): number {
  const top = row * v.rowHeight;
  if (top >= v.scrollTop && top + v.rowHeight <= v.scrollTop + v.height) return v.scrollTop;
  return Math.max(0, top - v.height / 2 + v.rowHeight / 2);
}
