//! The context waterfall (issue 12 §1): the engine's timeline of a path, sent as a struct of
//! arrays (one array per field, one element per path entry) so 100k points cross IPC as a few
//! flat JSON arrays instead of 100k objects.
//!
//! The numbers are the engine's, exact: a negative usage stays negative. Only what JSON cannot
//! carry changes: a `NaN` or infinite estimate (Pi adds a string usage and gets `NaN`) is `null`,
//! and the drawing scale (`scale_max`) is chosen here so one absurd number (a 10M-token message
//! in a 200k window) cannot flatten the rest of the chart.

use serde::Serialize;
use session_engine::session::Kind;
use session_engine::timeline::Point;
use session_engine::Session;
use specta::Type;

/// One code per point in [`TimelineView::kinds`].
pub const KIND_CODES: &[(char, &str)] = &[
    ('u', "user"),
    ('a', "assistant"),
    ('t', "toolResult"),
    ('e', "bashExecution"),
    ('m', "custom message"),
    ('c', "compaction"),
    ('b', "branch summary"),
    ('o', "other entry"),
];

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct TimelineView {
    /// Entry ids along the path, root first.
    pub ids: Vec<String>,
    /// One character per point; the legend is `kind_legend`.
    pub kinds: String,
    /// `[code, name]` pairs for `kinds`.
    pub kind_legend: Vec<(String, String)>,
    /// Pi's estimate with that entry as the leaf; null where Pi's number is not finite.
    pub context_tokens: Vec<Option<f64>>,
    /// The usage an assistant message reports and Pi counts; null elsewhere (or not finite).
    pub usage_tokens: Vec<Option<f64>>,
    /// `usage.cost.total` where the message carries it.
    pub cost: Vec<Option<f64>>,
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
    /// Points whose numbers Pi would not produce for a sane session: not finite, negative, or
    /// above 4× the window.
    pub absurd_points: u32,
    /// The path is Arbor's active path (root to leaf); otherwise the path to `entry_id`.
    pub active_path: bool,
    /// Position of the entry the path was asked for (the selected node), if on the path.
    pub selected_pos: Option<u32>,
    pub leaf_id: Option<String>,
}

fn kind_code(s: &Session, i: usize) -> char {
    match s.kind(i) {
        Kind::Message => match super::message_role(s, i) {
            Some("user") => 'u',
            Some("assistant") => 'a',
            Some("toolResult") => 't',
            Some("bashExecution") => 'e',
            _ => 'o',
        },
        Kind::CustomMessage => 'm',
        Kind::Compaction => 'c',
        Kind::BranchSummary => 'b',
        _ => 'o',
    }
}

fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

/// The view of `points` (the timeline of `path`, same order).
pub fn timeline_view(
    s: &Session,
    points: &[Point],
    context_window: u32,
    reserve_tokens: u32,
    active_path: bool,
    selected: Option<usize>,
    leaf: Option<usize>,
) -> TimelineView {
    let n = points.len();
    let mut ids = Vec::with_capacity(n);
    let mut kinds = String::with_capacity(n);
    let mut context_tokens = Vec::with_capacity(n);
    let mut usage_tokens = Vec::with_capacity(n);
    let mut cost = Vec::with_capacity(n);
    let mut compactions = Vec::new();
    let mut total_cost: Option<f64> = None;
    let window = f64::from(context_window);
    let cap = window * 4.0;
    let mut top = 0.0f64;
    let mut absurd = 0u32;
    let mut selected_pos = None;
    for (pos, p) in points.iter().enumerate() {
        ids.push(s.id(p.entry).to_string());
        kinds.push(kind_code(s, p.entry));
        let t = finite(p.context_tokens);
        let u = p.usage_tokens.and_then(finite);
        let c = p.cost.and_then(finite);
        for v in [Some(p.context_tokens), p.usage_tokens].into_iter().flatten() {
            if !v.is_finite() || v < 0.0 || v > cap {
                absurd += 1;
            } else {
                top = top.max(v);
            }
        }
        if let Some(c) = c {
            total_cost = Some(total_cost.unwrap_or(0.0) + c);
        }
        context_tokens.push(t);
        usage_tokens.push(u);
        cost.push(c);
        if p.compaction {
            compactions.push(pos as u32);
        }
        if Some(p.entry) == selected {
            selected_pos = Some(pos as u32);
        }
    }
    TimelineView {
        ids,
        kinds,
        kind_legend: KIND_CODES.iter().map(|(c, n)| (c.to_string(), (*n).to_string())).collect(),
        context_tokens,
        usage_tokens,
        cost,
        compactions,
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
