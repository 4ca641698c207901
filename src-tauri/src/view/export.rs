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
    /// Secrets redacted from the file (0 when the user kept them).
    pub redacted: u32,
}

/// One secret the export would redact: which entry, which of its strings, where in it.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct SecretItem {
    pub entry_id: String,
    /// What the entry is: a message's role (`user`, `toolResult`, …) or the entry's type.
    pub entry_kind: String,
    /// The string's path in the entry's JSON: `message.content[0].text`, `summary`, …
    pub field: String,
    /// The rule: `aws-access-key`, `jwt`, `private-key`, …
    pub kind: String,
    /// UTF-16 code units into that string.
    pub start: u32,
    pub end: u32,
}

/// The secrets an export of a scope would redact, before anything is written. The UI gets the
/// first [`SECRETS_LISTED`] and the count.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct ExportSecrets {
    pub items: Vec<SecretItem>,
    pub total: u32,
}

/// How many findings the export dialog receives (it shows fewer; the count is exact).
pub const SECRETS_LISTED: usize = 200;
