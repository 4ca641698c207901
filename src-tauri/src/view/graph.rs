//! Engine session -> session-graph input, and layout rows -> the DTOs the canvas draws.

use crate::engine_shim::{user_text, Session};
use serde::Serialize;
use serde_json::Value;
use session_graph::{flags, layout, marks, Layout, LayoutOptions, Node, NodeKind, RowKind};
use specta::Type;
use std::collections::HashSet;

pub fn nodes(s: &Session) -> Vec<Node> {
    s.entries
        .iter()
        .enumerate()
        .map(|(i, e)| Node {
            parent: s.parent_of(i).map(|p| p as u32),
            timestamp: e.timestamp_ms,
            kind: match e.entry_type.as_str() {
                "message" => match s.role(i) {
                    Some("user") => NodeKind::User,
                    Some("assistant") => NodeKind::Assistant,
                    Some("toolResult") => NodeKind::ToolResult,
                    Some("bashExecution") => NodeKind::BashExecution,
                    _ => NodeKind::Other,
                },
                "compaction" => NodeKind::Compaction {
                    first_kept: e
                        .value
                        .get("firstKeptEntryId")
                        .and_then(Value::as_str)
                        .and_then(|k| s.index_of(k))
                        .map(|k| k as u32),
                },
                "branch_summary" => NodeKind::BranchSummary,
                "custom_message" => NodeKind::CustomMessage,
                "label" => NodeKind::Label,
                "model_change" => NodeKind::ModelChange,
                "thinking_level_change" => NodeKind::ThinkingLevelChange,
                "session_info" => NodeKind::SessionInfo,
                "custom" => NodeKind::Custom,
                _ => NodeKind::Other,
            },
            flags: if s.labels.contains_key(&e.id) { flags::LABELED } else { 0 },
        })
        .collect()
}

pub fn relayout(s: &Session, leaf: Option<usize>, expanded: &HashSet<u32>) -> Layout {
    let mut o = LayoutOptions::new();
    o.expanded = expanded.clone();
    layout(&nodes(s), leaf.map(|l| l as u32), &o)
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
    /// Marker names: active, leaf, labeled, branchSummary, compaction, firstKept, summarized,
    /// beyondHorizon, fold.
    pub marks: Vec<String>,
    /// For a node row: its entry id; for a fold row: the first folded entry (the fold's id).
    pub entry_id: String,
    /// `user`, `assistant`, `toolResult`, ..., an entry type for non-messages, or `fold`.
    pub kind: String,
    pub title: String,
    pub label: Option<String>,
    pub fold_count: u32,
    /// Compaction rows: entries it summarized on its path.
    pub span: u32,
}

const MARK_NAMES: [(u16, &str); 10] = [
    (marks::ACTIVE, "active"),
    (marks::LEAF, "leaf"),
    (marks::LABELED, "labeled"),
    (marks::BRANCH_SUMMARY, "branchSummary"),
    (marks::COMPACTION, "compaction"),
    (marks::FIRST_KEPT, "firstKept"),
    (marks::SUMMARIZED, "summarized"),
    (marks::BEYOND_HORIZON, "beyondHorizon"),
    (marks::CUT, "cut"),
    (marks::FOLD_ACTIVE, "foldActive"),
];

/// A short one-line title for an entry row.
pub fn entry_title(s: &Session, i: usize) -> (String, String) {
    let e = &s.entries[i];
    let v = &e.value;
    let str_of = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let (kind, title) = match e.entry_type.as_str() {
        "message" => {
            let m = s.message(i).cloned().unwrap_or(Value::Null);
            let role = s.role(i).unwrap_or("message").to_string();
            let title = match role.as_str() {
                "user" => user_text(&m),
                "assistant" => {
                    let blocks = m.get("content").and_then(Value::as_array).cloned().unwrap_or_default();
                    let text: Vec<String> = blocks
                        .iter()
                        .filter_map(|b| match b.get("type").and_then(Value::as_str) {
                            Some("text") => b.get("text").and_then(Value::as_str).map(str::to_string),
                            Some("toolCall") => {
                                Some(format!("⚙ {}", b.get("name").and_then(Value::as_str).unwrap_or("tool")))
                            }
                            _ => None,
                        })
                        .collect();
                    if text.is_empty() { "(thinking)".to_string() } else { text.join(" ") }
                }
                "toolResult" => format!(
                    "{} → {}",
                    m.get("toolName").and_then(Value::as_str).unwrap_or("tool"),
                    user_text(&m)
                ),
                "bashExecution" => format!("$ {}", m.get("command").and_then(Value::as_str).unwrap_or("")),
                _ => user_text(&m),
            };
            (role, title)
        }
        "compaction" => ("compaction".into(), format!("Compaction: {}", str_of("summary"))),
        "branch_summary" => ("branch_summary".into(), format!("Branch summary: {}", str_of("summary"))),
        "label" => ("label".into(), format!("label {} → {}", str_of("targetId"), str_of("label"))),
        "model_change" => ("model_change".into(), format!("model {}/{}", str_of("provider"), str_of("modelId"))),
        "thinking_level_change" => ("thinking_level_change".into(), format!("thinking {}", str_of("thinkingLevel"))),
        "session_info" => ("session_info".into(), format!("name: {}", str_of("name"))),
        "custom_message" => ("custom_message".into(), user_text(v)),
        other => (other.to_string(), other.to_string()),
    };
    (kind, super::one_line(&title, 140))
}

pub fn window(s: &Session, l: &Layout, start: u32, end: u32) -> Vec<GraphRow> {
    let rows = l.window(start as usize, end as usize);
    rows.iter()
        .enumerate()
        .map(|(k, r)| {
            let mut mark_names: Vec<String> =
                MARK_NAMES.iter().filter(|(m, _)| r.marks & m != 0).map(|(_, n)| n.to_string()).collect();
            let (entry_id, kind, title, label, fold_count) = match r.kind {
                RowKind::Node { node } => {
                    let e = &s.entries[node as usize];
                    let (kind, title) = entry_title(s, node as usize);
                    (e.id.clone(), kind, title, s.labels.get(&e.id).cloned(), 0)
                }
                RowKind::Fold { first, count, .. } => {
                    mark_names.push("fold".into());
                    (s.entries[first as usize].id.clone(), "fold".to_string(), format!("{count} entries"), None, count)
                }
            };
            GraphRow {
                row: start + k as u32,
                lane: r.lane as u32,
                from_above: r.from_above,
                to_below: r.to_below,
                through: r.through.iter().map(|x| *x as u32).collect(),
                forks: r.forks.iter().map(|x| *x as u32).collect(),
                marks: mark_names,
                entry_id,
                kind,
                title,
                label,
                fold_count,
                span: r.span,
            }
        })
        .collect()
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    pub entry_id: String,
    pub row: u32,
    pub title: String,
}

/// Case-insensitive search over each entry's raw JSON text (so tool arguments and results match).
pub fn search(s: &Session, l: &Layout, query: &str, limit: usize) -> Vec<SearchHit> {
    let q = query.to_lowercase();
    if q.trim().is_empty() {
        return Vec::new();
    }
    let mut hits = Vec::new();
    for (i, e) in s.entries.iter().enumerate() {
        if e.value.to_string().to_lowercase().contains(&q) {
            let row = l.row_of(i as u32).unwrap_or(0);
            hits.push(SearchHit { entry_id: e.id.clone(), row, title: entry_title(s, i).1 });
            if hits.len() >= limit {
                break;
            }
        }
    }
    hits.sort_by_key(|h| h.row);
    hits
}
