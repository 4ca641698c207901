//! The context waterfall (issue 12 §1): the engine's timeline of a path, sent compactly: the ids
//! joined by newlines, one kind code per point, and the numbers as base64 little-endian `f64`
//! arrays (the usage and the cost sparse, with their positions), so 100k points cross IPC as a few strings that serde_json
//! copies at once and the UI decodes into typed arrays (`ui/src/timeline/pure.ts`).
//!
//! The numbers are the engine's, exact: a negative usage stays negative, Pi's `NaN` (a string
//! usage) stays `NaN` in the arrays (JSON never sees it). The drawing scale (`scale_max`) is
//! chosen here so one absurd number (a 10M-token message in a 200k window) cannot flatten the
//! rest of the chart.

use serde::Serialize;
use session_engine::timeline::{encode, Contribution, Point, KIND_CODES};
use session_engine::Session;
use specta::Type;

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct TimelineView {
    /// Points on the path, root first.
    pub count: u32,
    /// Entry ids along the path joined by `\n` (an id holding a newline is empty here).
    pub ids: String,
    /// One character per point; the legend is `kind_legend`.
    pub kinds: String,
    /// `[code, name]` pairs for `kinds`.
    pub kind_legend: Vec<(String, String)>,
    /// Pi's estimate with each entry as the leaf: base64 of little-endian f64s.
    pub context_tokens: String,
    /// The usage an assistant message reports and Pi counts, only where there is one: base64
    /// f64s, at the path positions in `usage_at` (base64 f64s too).
    pub usage_tokens: String,
    pub usage_at: String,
    /// `usage.cost.total` where the message carries it, at the positions in `cost_at`.
    pub cost: String,
    pub cost_at: String,
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
}

/// The view of `points` (the timeline of a path, with its contributions, same order).
#[allow(clippy::too_many_arguments)]
pub fn timeline_view(
    s: &Session,
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
    let e = encode(s, points, contribs);
    TimelineView {
        count: points.len() as u32,
        ids: e.ids,
        kinds: e.kinds,
        kind_legend: KIND_CODES.iter().map(|&(c, n)| ((c as char).to_string(), n.to_string())).collect(),
        context_tokens: e.context_tokens,
        usage_tokens: e.usage_tokens,
        usage_at: e.usage_at,
        cost: e.cost,
        cost_at: e.cost_at,
        compactions: e.compactions,
        total_cost: total_cost.filter(|c| c.is_finite()),
        context_window,
        reserve_tokens,
        threshold: context_window.saturating_sub(reserve_tokens),
        scale_max: window.max(top).max(1.0),
        absurd_points: absurd,
        active_path,
        selected_pos,
        leaf_id: leaf.map(|l| s.id(l).to_string()),
    }
}
