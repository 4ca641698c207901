//! Engine session -> session-graph input, and layout rows -> the DTOs the canvas draws.

use pi_json::Value;
use serde::{Deserialize, Serialize};
use session_engine::blocks::{blocks, Block};
use session_engine::context::user_text;
use session_engine::time::parse_iso_ms;
use session_engine::{Kind, Session};
use session_graph::{flags, marks, Layout, Node, NodeKind, RowKind};
use specta::Type;

pub fn nodes(session: &Session) -> Vec<Node> {
    nodes_in(session, 0..session.len())
}

/// The layout nodes of entries `range`.
pub fn nodes_in(session: &Session, range: std::ops::Range<usize>) -> Vec<Node> {
    range
        .map(|i| {
            let e = session.entry(i);
            Node {
                parent: session.parent_of(i).map(|p| p as u32),
                timestamp: parse_iso_ms(&e.timestamp).unwrap_or(0),
                kind: match session.kind(i) {
                    Kind::Message => match session.role(i) {
                        Some("user") => NodeKind::User,
                        Some("assistant") => NodeKind::Assistant,
                        Some("toolResult") => NodeKind::ToolResult,
                        Some("bashExecution") => NodeKind::BashExecution,
                        _ => NodeKind::Other,
                    },
                    // The span count is summary-analysis's (the workbench shows the same number).
                    Kind::Compaction => NodeKind::Compaction {
                        first_kept: session
                            .value(i)
                            .str_field("firstKeptEntryId")
                            .and_then(|k| session.index_of(k))
                            .map(|k| k as u32),
                        span: summary_analysis::span_count(session, i) as u32,
                    },
                    Kind::BranchSummary => NodeKind::BranchSummary,
                    Kind::CustomMessage => NodeKind::CustomMessage,
                    Kind::Label => NodeKind::Label,
                    Kind::ModelChange => NodeKind::ModelChange,
                    Kind::ThinkingLevelChange => NodeKind::ThinkingLevelChange,
                    Kind::SessionInfo => NodeKind::SessionInfo,
                    Kind::Custom => NodeKind::Custom,
                    Kind::Other => NodeKind::Other,
                },
                flags: if session.label_of(&e.id).is_some() { flags::LABELED } else { 0 },
            }
        })
        .collect()
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct GraphRow {
    pub row: u32,
    pub lane: u32,
    pub from_above: bool,
    pub to_below: bool,
    pub through: Vec<u32>,
    pub forks: Vec<u32>,
    pub marks: Vec<Mark>,
    /// For a node row: its entry id; for a fold row: the first folded entry (the fold's id).
    pub entry_id: String,
    pub kind: GraphRowKind,
    pub title: String,
    pub label: Option<String>,
    pub fold_count: u32,
    /// Compaction rows: how many entries it summarized (the engine's `summary::span`, the count
    /// the workbench shows); 0 for other rows.
    pub span: u32,
    /// Summary rows: items of the previous summary this one no longer carries (drop alarm).
    pub dropped: Option<u32>,
    /// Summary rows: retention score, facts of the span the summary mentions / all facts.
    pub retained: Option<u32>,
    pub facts: Option<u32>,
    /// Summary rows: the probe score (0..1), once the background run or the workbench computed it.
    pub quality: Option<f64>,
}

/// What a graph row shows: a message by its role, another entry by its type, or a fold. The
/// names are the file's own (roles camelCase, entry types snake_case); the UI styles rows by them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Type)]
pub enum GraphRowKind {
    #[serde(rename = "user")]
    User,
    #[serde(rename = "assistant")]
    Assistant,
    #[serde(rename = "toolResult")]
    ToolResult,
    #[serde(rename = "bashExecution")]
    BashExecution,
    #[serde(rename = "branchSummary")]
    BranchSummaryMessage,
    #[serde(rename = "compactionSummary")]
    CompactionSummaryMessage,
    /// A message whose role is none of the above (or missing).
    #[serde(rename = "message")]
    Message,
    #[serde(rename = "compaction")]
    Compaction,
    #[serde(rename = "branch_summary")]
    BranchSummary,
    #[serde(rename = "label")]
    Label,
    #[serde(rename = "model_change")]
    ModelChange,
    #[serde(rename = "thinking_level_change")]
    ThinkingLevelChange,
    #[serde(rename = "session_info")]
    SessionInfo,
    #[serde(rename = "custom_message")]
    CustomMessage,
    /// A `custom` entry (an extension's state), or a message with role `custom`.
    #[serde(rename = "custom")]
    Custom,
    /// An entry type this version does not know (the row's title is the type).
    #[serde(rename = "other")]
    Other,
    #[serde(rename = "fold")]
    Fold,
}

/// A graph row's markers (the UI draws each as a `m-<name>` class).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub enum Mark {
    /// On the path root..leaf.
    Active,
    /// The leaf itself.
    Leaf,
    Labeled,
    BranchSummary,
    Compaction,
    /// The `firstKeptEntryId` of some compaction.
    FirstKept,
    /// Summarized by a compaction on the active path (inside its span).
    Summarized,
    /// On the active path but before the horizon: no longer sent to the model (drawn greyed).
    BeyondHorizon,
    /// The preview's cut point.
    Cut,
    /// A fold row that contains active-path nodes.
    FoldActive,
    /// A fold row.
    Fold,
}

impl Mark {
    pub fn name(self) -> &'static str {
        match self {
            Mark::Active => "active",
            Mark::Leaf => "leaf",
            Mark::Labeled => "labeled",
            Mark::BranchSummary => "branchSummary",
            Mark::Compaction => "compaction",
            Mark::FirstKept => "firstKept",
            Mark::Summarized => "summarized",
            Mark::BeyondHorizon => "beyondHorizon",
            Mark::Cut => "cut",
            Mark::FoldActive => "foldActive",
            Mark::Fold => "fold",
        }
    }
}

/// Tests and callers compare marks with their wire names.
impl PartialEq<str> for Mark {
    fn eq(&self, other: &str) -> bool {
        self.name() == other
    }
}

const MARK_NAMES: [(u16, Mark); 10] = [
    (marks::ACTIVE, Mark::Active),
    (marks::LEAF, Mark::Leaf),
    (marks::LABELED, Mark::Labeled),
    (marks::BRANCH_SUMMARY, Mark::BranchSummary),
    (marks::COMPACTION, Mark::Compaction),
    (marks::FIRST_KEPT, Mark::FirstKept),
    (marks::SUMMARIZED, Mark::Summarized),
    (marks::BEYOND_HORIZON, Mark::BeyondHorizon),
    (marks::CUT, Mark::Cut),
    (marks::FOLD_ACTIVE, Mark::FoldActive),
];

/// A layout row's marker bits as the UI names them.
pub fn marks_of(bits: u16) -> Vec<Mark> {
    MARK_NAMES.iter().filter(|(m, _)| bits & m != 0).map(|&(_, n)| n).collect()
}

fn content_text(v: Option<&Value>) -> String {
    user_text(v.unwrap_or(&Value::Null))
}

/// A short one-line title for an entry row: (kind, title).
pub fn entry_title(session: &Session, i: usize) -> (GraphRowKind, String) {
    use GraphRowKind as K;
    let v = session.value(i);
    let str_of = |k: &str| v.str_field(k).unwrap_or("").to_string();
    let (kind, title) = match session.kind(i) {
        Kind::Message => {
            let m = session.message(i).unwrap_or(&Value::Null);
            match session.role(i) {
                Some("assistant") => {
                    let parts: Vec<String> = blocks(m.get("content"))
                        .filter_map(|b| match b {
                            Block::Text(_) => b.text().map(str::to_string),
                            Block::ToolCall(_) => Some(format!("⚙ {}", b.tool_name().unwrap_or("tool"))),
                            _ => None,
                        })
                        .collect();
                    (K::Assistant, if parts.is_empty() { "(thinking)".to_string() } else { parts.join(" ") })
                }
                Some("toolResult") => (
                    K::ToolResult,
                    format!("{} → {}", m.str_field("toolName").unwrap_or("tool"), content_text(m.get("content"))),
                ),
                Some("bashExecution") => (K::BashExecution, format!("$ {}", m.str_field("command").unwrap_or(""))),
                role => {
                    let kind = match role {
                        Some("user") => K::User,
                        Some("custom") => K::Custom,
                        Some("branchSummary") => K::BranchSummaryMessage,
                        Some("compactionSummary") => K::CompactionSummaryMessage,
                        _ => K::Message,
                    };
                    (kind, content_text(m.get("content")))
                }
            }
        }
        Kind::Compaction => (K::Compaction, format!("Compaction: {}", str_of("summary"))),
        Kind::BranchSummary => (K::BranchSummary, format!("Branch summary: {}", str_of("summary"))),
        Kind::Label => (K::Label, format!("label {} → {}", str_of("targetId"), str_of("label"))),
        Kind::ModelChange => (K::ModelChange, format!("model {}/{}", str_of("provider"), str_of("modelId"))),
        Kind::ThinkingLevelChange => (K::ThinkingLevelChange, format!("thinking {}", str_of("thinkingLevel"))),
        Kind::SessionInfo => (K::SessionInfo, format!("name: {}", str_of("name"))),
        Kind::CustomMessage => (K::CustomMessage, content_text(v.get("content"))),
        Kind::Custom => (K::Custom, session.entry(i).type_name.to_string()),
        Kind::Other => (K::Other, session.entry(i).type_name.to_string()),
    };
    (kind, super::one_line(&title, 140))
}

pub fn window(session: &Session, l: &Layout, start: u32, end: u32) -> Vec<GraphRow> {
    let rows = l.window(start as usize, end as usize);
    rows.iter()
        .enumerate()
        .map(|(k, r)| {
            let mut mark_names = marks_of(r.marks);
            let (entry_id, kind, title, label, fold_count) = match r.kind {
                RowKind::Node { node } => {
                    let id = session.id(node as usize);
                    let (kind, title) = entry_title(session, node as usize);
                    (id.to_string(), kind, title, session.label_of(id).map(str::to_string), 0)
                }
                RowKind::Fold { first, count, .. } => {
                    mark_names.push(Mark::Fold);
                    (
                        session.id(first as usize).to_string(),
                        GraphRowKind::Fold,
                        format!("{count} entries"),
                        None,
                        count,
                    )
                }
            };
            graph_row(start + k as u32, r, mark_names, (entry_id, kind, title, label, fold_count))
        })
        .collect()
}

/// What a row shows of its entry, or of the entries it folds: id, kind, title, label, count.
pub(crate) type RowText = (String, GraphRowKind, String, Option<String>, u32);

/// Layout row `r` as the graph draws it at `row`, before any summary facts are filled in. The
/// open session's window and a big file's preview both draw their rows through it.
pub(crate) fn graph_row(row: u32, r: &session_graph::Row, marks: Vec<Mark>, text: RowText) -> GraphRow {
    let (entry_id, kind, title, label, fold_count) = text;
    GraphRow {
        row,
        lane: r.lane as u32,
        from_above: r.from_above,
        to_below: r.to_below,
        through: r.through.iter().map(|x| *x as u32).collect(),
        forks: r.forks.iter().map(|x| *x as u32).collect(),
        marks,
        entry_id,
        kind,
        title,
        label,
        fold_count,
        span: r.span,
        dropped: None,
        retained: None,
        facts: None,
        quality: None,
    }
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    pub entry_id: String,
    pub row: u32,
    pub title: String,
}

/// Case-insensitive search over each entry's raw line (so tool arguments and results match).
/// Simple on purpose: JSON escapes (\\n, \\u...) are matched as written in the file.
pub fn search(session: &Session, l: &Layout, query: &str, limit: usize) -> Vec<SearchHit> {
    let q = query.to_lowercase();
    if q.trim().is_empty() {
        return Vec::new();
    }
    let mut hits = Vec::new();
    for i in 0..session.len() {
        if String::from_utf8_lossy(&session.raw(i)).to_lowercase().contains(&q) {
            let row = l.row_of(i as u32).unwrap_or(0);
            hits.push(SearchHit { entry_id: session.id(i).to_string(), row, title: entry_title(session, i).1 });
            if hits.len() >= limit {
                break;
            }
        }
    }
    hits.sort_by_key(|h| h.row);
    hits
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct GraphWindow {
    pub start: u32,
    pub total_rows: u32,
    pub lanes: u32,
    pub rows: Vec<GraphRow>,
}

/// The graph's view as the UI has it when it asks for a new layout (Continue), in rows: the
/// answer then carries the rows the view will draw once scrolled to the new leaf, and the UI
/// draws the new layout without a second round trip for them.
#[derive(Debug, Clone, Copy, Deserialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct GraphViewport {
    /// Rows above the view (its scroll position over the row height; a fraction is a part row).
    pub top: f64,
    /// Rows the view is tall.
    pub height: f64,
    /// Rows drawn beyond the view on each side when the view jumps (the UI's `BAND_MARGIN`).
    pub margin: u32,
    /// Rows the UI keeps together (its `CHUNK`): the answer's rows start and end on a multiple.
    pub chunk: u32,
}

impl GraphViewport {
    /// The rows `[start, end)` the UI draws in a layout of `total` rows once it has scrolled to
    /// show `row` as its `scrollToShow` does (the view stays when the row is in it, else the row
    /// is centred, and the scroll stops at the graph's end), widened to whole chunks. `None` for
    /// a view the UI could not have (no height or chunk, more than 5,000 rows: a window's limit).
    pub fn rows_showing(&self, row: u32, total: u32) -> Option<(u32, u32)> {
        let (h, c) = (self.height, self.chunk);
        if !(h > 0.0 && h.is_finite() && self.top.is_finite()) || c == 0 || row >= total {
            return None;
        }
        let r = f64::from(row);
        let mut top = if r >= self.top && r + 1.0 <= self.top + h { self.top } else { (r - h / 2.0 + 0.5).max(0.0) };
        top = top.min((f64::from(total) - h).max(0.0));
        let first = (top.floor() as u32).saturating_sub(self.margin);
        let last = (((top + h).ceil() as u32).saturating_add(self.margin)).min(total);
        let (start, end) = ((first / c) * c, (last.div_ceil(c).saturating_mul(c)).min(total));
        (end > start && end - start <= 5_000).then_some((start, end))
    }
}
