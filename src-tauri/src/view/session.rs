//! The open session as the UI shows it (title bar, status line, read-only banner).
use serde::Serialize;
use specta::Type;

/// What the UI knows of the open session after every command that changes it.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct OpenedSession {
    pub path: String,
    pub name: Option<String>,
    pub cwd: Option<String>,
    pub is_demo: bool,
    pub entry_count: u32,
    pub total_rows: u32,
    pub lanes: u32,
    pub leaf_id: Option<String>,
    pub leaf_row: Option<u32>,
    /// Pi's leaf (the last line of the file).
    pub file_leaf_id: Option<String>,
    /// True when Arbor's leaf differs from Pi's: Pi keeps the old position until an append.
    pub leaf_moved: bool,
    pub diagnostics: Vec<String>,
    /// Why the file opens read-only (legacy or newer format, cycles); `None` when writable.
    pub read_only: Option<String>,
}

/// A file to open, from a second launch of `arbor FILE`.
#[derive(Debug, Clone, Serialize, Type, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct LaunchRequest {
    pub path: String,
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct Navigation {
    pub session: OpenedSession,
    /// Pi's rule: navigating to a user message puts its text back into the composer.
    pub composer_text: Option<String>,
    pub note: String,
}

/// "Continue from here" in one round trip: the moved leaf, the new leaf's selection (as a click
/// on it gives; `None` when the session has no leaf), the budget preview at the new leaf, and
/// the new layout's rows the graph's view will draw there.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct Continued {
    pub navigation: Navigation,
    pub selection: Option<crate::view::detail::Selection>,
    pub preview: crate::view::budgets::CompactionPreview,
    /// Whole chunks of rows (`GraphViewport::chunk`) around the new leaf, as `graph_window` gives
    /// them; `None` without a leaf or a view.
    pub rows: Option<crate::view::graph::GraphWindow>,
}
