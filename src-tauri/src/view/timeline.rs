//! The context waterfall (how the context grew along a path): the engine's timeline of a path,
//! sent as one binary answer (an ArrayBuffer in the UI, no JSON and no base64 for the columns): a
//! small JSON head with the budgets, the legend and the compactions, then the numbers as
//! little-endian `f64` arrays the UI views in place (`ui/src/timeline/pure.ts`), the ids' bytes
//! with their ends and one kind code per point. Layout: [`TimelineView::to_bytes`].
//!
//! The numbers are the engine's, exact: a negative usage stays negative, Pi's `NaN` (a string
//! usage) stays `NaN` in the arrays (JSON never sees it). The drawing scale (`scale_max`) is
//! chosen here so one absurd number (a 10M-token message in a 200k window) cannot flatten the
//! rest of the chart.

use serde::Serialize;
use session_engine::timeline::{encode, Contribution, Encoded, Point, KIND_CODES};
use session_engine::Session;

/// The chart's data: the columns ([`Encoded`]) and the small fields ([`TimelineHead`]).
#[derive(Debug, Clone)]
pub struct TimelineView {
    pub columns: Encoded,
    pub head: TimelineHead,
}

/// The small fields of the answer, sent as JSON at the start of the bytes.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TimelineHead {
    /// Points on the path, root first.
    pub count: u32,
    /// `[code, name]` pairs for the kind codes.
    pub kind_legend: Vec<(String, String)>,
    /// Path positions of the compactions (the drops).
    pub compactions: Vec<u32>,
    /// Sum of the costs on the path; null when no message carries one.
    pub total_cost: Option<f64>,
    pub context_window: u32,
    pub reserve_tokens: u32,
    /// contextWindow − reserveTokens (0 when the reserve is larger), as in the context view.
    pub threshold: u32,
    /// The top of the drawing scale: at least the window, at most 4× it, else the largest
    /// finite non-negative value. Values above it are drawn clipped (and say so on hover).
    pub scale_max: f64,
    /// Numbers Pi would not produce for a sane session: not finite, negative, or above 4× the
    /// window.
    pub absurd_points: u32,
    /// The path is Arbor's active path (root to leaf); otherwise the path to `entry_id`.
    pub active_path: bool,
    /// Position of the entry the path was asked for (the selected node), if on the path.
    pub selected_pos: Option<u32>,
    pub leaf_id: Option<String>,
    /// How long the command took to build the answer (ms), for the benchmark.
    pub build_ms: f64,
}

/// Bytes before the JSON head: version, head length, points, usages, costs, id bytes, flags (u32
/// each), one reserved u32.
pub const HEADER_BYTES: usize = 32;
/// The layout's version (the first u32).
pub const BYTES_VERSION: u32 = 2;
/// Flag: every id is 8 lowercase hex digits (Pi's ids), sent as one u32 each (its value) instead
/// of bytes and ends.
pub const FLAG_HEX_IDS: u32 = 1;
/// Flag: the costs sit at the usages' positions (the cost positions are not sent).
pub const FLAG_COST_AT_USAGE: u32 = 2;

/// `id` as the value of its 8 lowercase hex digits, if it is that.
fn hex_id(id: &str) -> Option<u32> {
    let b = id.as_bytes();
    (b.len() == 8 && b.iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')))
        .then(|| u32::from_str_radix(id, 16).expect("hex digits"))
}

impl TimelineView {
    /// The answer as bytes, all little-endian:
    ///
    /// | what | type |
    /// |---|---|
    /// | version, head length H, points N, usages U, costs C, id bytes I, flags, 0 | u32 × 8 |
    /// | the head as JSON ([`TimelineHead`]), padded with spaces to a multiple of 8 | H bytes |
    /// | estimate at every point | f64 × N |
    /// | usage values, cost values | f64 × U, f64 × C |
    /// | usage positions, cost positions (none with [`FLAG_COST_AT_USAGE`]) | u32 × U, u32 × C |
    /// | with [`FLAG_HEX_IDS`]: each id's value; else the end of each id | u32 × N |
    /// | kind code of each point | u8 × N |
    /// | the ids' UTF-8 bytes, concatenated (none with [`FLAG_HEX_IDS`]) | I bytes |
    ///
    /// The f64 arrays start at multiples of 8 so the UI can view them in place.
    pub fn to_bytes(&self) -> Vec<u8> {
        let c = &self.columns;
        let mut head = serde_json::to_vec(&self.head).expect("the head serializes");
        while !head.len().is_multiple_of(8) {
            head.push(b' ');
        }
        let n = c.context_tokens.len();
        let hex: Option<Vec<u32>> = (0..n).map(|i| hex_id(c.id(i))).collect();
        let cost_at_usage = c.cost_at == c.usage_at;
        let flags = if hex.is_some() { FLAG_HEX_IDS } else { 0 } | if cost_at_usage { FLAG_COST_AT_USAGE } else { 0 };
        let id_bytes: &[u8] = if hex.is_some() { &[] } else { c.ids.as_bytes() };
        let cost_at: &[u32] = if cost_at_usage { &[] } else { &c.cost_at };
        let f64s = n + c.usage_tokens.len() + c.cost.len();
        let u32s = c.usage_at.len() + cost_at.len() + n;
        let mut out = Vec::with_capacity(HEADER_BYTES + head.len() + f64s * 8 + u32s * 4 + n + id_bytes.len());
        for x in [
            BYTES_VERSION,
            head.len() as u32,
            n as u32,
            c.usage_tokens.len() as u32,
            c.cost.len() as u32,
            id_bytes.len() as u32,
            flags,
            0,
        ] {
            out.extend_from_slice(&x.to_le_bytes());
        }
        out.extend_from_slice(&head);
        for col in [&c.context_tokens, &c.usage_tokens, &c.cost] {
            for x in col.iter() {
                out.extend_from_slice(&x.to_le_bytes());
            }
        }
        for col in [&c.usage_at[..], cost_at, hex.as_deref().unwrap_or(&c.id_ends)] {
            for x in col.iter() {
                out.extend_from_slice(&x.to_le_bytes());
            }
        }
        out.extend_from_slice(&c.kinds);
        out.extend_from_slice(id_bytes);
        out
    }
}

/// The view of `points` (the timeline of a path, with its contributions, same order).
#[allow(clippy::too_many_arguments)]
pub fn timeline_view(
    session: &Session,
    points: &[Point],
    contribs: &[Contribution],
    context_window: u32,
    reserve_tokens: u32,
    active_path: bool,
    selected: Option<usize>,
    leaf: Option<usize>,
) -> TimelineView {
    let window = f64::from(context_window);
    let cap = window * 4.0;
    let mut top = 0.0f64;
    let mut absurd = 0u32;
    let mut total_cost: Option<f64> = None;
    let mut selected_pos = None;
    for (pos, p) in points.iter().enumerate() {
        for v in [Some(p.context_tokens), p.usage_tokens].into_iter().flatten() {
            if !v.is_finite() || v < 0.0 || v > cap {
                absurd += 1;
            } else if v > top {
                top = v;
            }
        }
        if let Some(c) = p.cost.filter(|c| c.is_finite()) {
            total_cost = Some(total_cost.unwrap_or(0.0) + c);
        }
        if Some(p.entry) == selected {
            selected_pos = Some(pos as u32);
        }
    }
    let columns = encode(session, points, contribs);
    let compactions = columns.compactions.clone();
    TimelineView {
        columns,
        head: TimelineHead {
            count: points.len() as u32,
            kind_legend: KIND_CODES.iter().map(|&(c, n)| ((c as char).to_string(), n.to_string())).collect(),
            compactions,
            total_cost: total_cost.filter(|c| c.is_finite()),
            context_window,
            reserve_tokens,
            threshold: context_window.saturating_sub(reserve_tokens),
            scale_max: window.max(top).max(1.0),
            absurd_points: absurd,
            active_path,
            selected_pos,
            leaf_id: leaf.map(|l| session.id(l).to_string()),
            build_ms: 0.0,
        },
    }
}
