//! What the export dialog sends and gets back (`commands/export.rs`).
use serde::{Deserialize, Serialize};
use specta::Type;

/// What to export: the whole tree, the branch to a node, or what the model sees at a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub enum ExportScope {
    Session,
    Branch,
    Context,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub enum ExportFormat {
    Markdown,
    Html,
}

/// Bytes of the session read so far, of `total` (numbers, so a 264 MB file fits in JS).
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct ExportProgress {
    pub done: f64,
    pub total: f64,
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct ExportDone {
    pub path: String,
    pub entries: u32,
    pub branches: u32,
    /// Bytes written.
    pub bytes: f64,
    pub ms: f64,
}
