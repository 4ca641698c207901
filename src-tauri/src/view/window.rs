//! The context window of the session's model at a node, as the Budgets tab shows it.
use serde::Serialize;
use specta::Type;

/// Where a context window comes from.
#[derive(Debug, Clone, Copy, Serialize, Type, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum WindowSource {
    /// The user's own number for that model (Arbor's state file).
    Override,
    /// Pi's model table.
    Table,
    /// Pi's `models.json` (a custom model, or a `modelOverrides` window).
    PiModels,
    /// An unknown model: 200k.
    Default,
}

impl WindowSource {
    pub fn as_str(self) -> &'static str {
        match self {
            WindowSource::Override => "override",
            WindowSource::Table => "table",
            WindowSource::PiModels => "piModels",
            WindowSource::Default => "default",
        }
    }
}

impl PartialEq<&str> for WindowSource {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

#[derive(Debug, Clone, Serialize, Type, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ContextWindowView {
    pub tokens: u32,
    pub source: WindowSource,
    /// "claude-sonnet-4-5 · 200k from Pi's model table", "… set by you", "…: unknown model, 200k default".
    pub label: String,
    /// The session's model at that node, as its entries name it.
    pub provider: Option<String>,
    pub model: Option<String>,
    /// Pi's table's window for it (also when overridden), and its display name.
    pub table_tokens: Option<u32>,
    pub table_name: Option<String>,
    /// Why Pi's `models.json` is ignored (by Pi too), when it is: a sentence that says what to fix.
    pub warning: Option<String>,
}
