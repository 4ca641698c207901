//! Forks across files as the window shows them: the open session's parent (as its header names
//! it, resolved by `session_engine::fork`) with the parent's path up to the fork point, and in
//! the picker which session a fork came from and how many forks a session has.

use super::graph::GraphRowKind;
use serde::Serialize;
use specta::Type;

wire_enum!(
    /// Whether the header's `parentSession` leads to a session (the engine's `ParentStatus`).
    ParentStatus from session_engine::fork::ParentStatus { Resolves, Missing, SelfReference, NotASession }
);

/// An entry of the parent's path, drawn dimmed above the fork's own entries.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct ParentRow {
    pub entry_id: String,
    pub kind: GraphRowKind,
    pub title: String,
    pub timestamp: String,
    /// The fork holds the same entry (Pi's `/fork` copies the path with its ids).
    pub in_fork: bool,
}

/// The open session's parent. `rows` are the parent's path from its root to the fork point (the
/// last row), at most the last [`ForkView::MAX_ROWS`]; `earlier` counts those left out.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct ForkView {
    /// As the header writes it.
    pub parent_session: String,
    /// Resolved (a relative path is the fork's folder's).
    pub parent_path: String,
    pub status: ParentStatus,
    /// The engine's sentence: "forked from X", "…, which is no longer there (moved or deleted)".
    pub sentence: String,
    /// The parent's name (its `session_info`), when it resolves and has one.
    pub parent_name: Option<String>,
    pub fork_point_id: Option<String>,
    pub rows: Vec<ParentRow>,
    pub earlier: u32,
    /// Further up: the parent's own parent and so on, one sentence each, nearest first.
    pub ancestry: Vec<String>,
}

impl ForkView {
    pub const MAX_ROWS: usize = 200;
}

/// A fork's parent, on its picker card.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct ForkedFrom {
    /// The parent file (resolved from the header's `parentSession`).
    pub path: String,
    /// Its name or first message, from the index (None when it is not indexed).
    pub name: Option<String>,
    /// The file is there.
    pub exists: bool,
}
