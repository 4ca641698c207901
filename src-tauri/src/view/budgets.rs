//! Compaction budgets as the Budgets panel shows and sends them, and the cut-point preview (the
//! settings files they live in are read and written by `state::budgets`).

use serde::{Deserialize, Serialize};
use session_engine::context::CompactionSettings;
use specta::Type;

#[derive(Debug, Clone, Copy, Serialize, Deserialize, Type, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum SettingsScope {
    Global,
    Project,
}

#[derive(Debug, Clone, Serialize, Deserialize, Type, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Budgets {
    pub enabled: bool,
    pub reserve_tokens: u32,
    pub keep_recent_tokens: u32,
    pub branch_reserve_tokens: u32,
}

impl Default for Budgets {
    /// Pi's defaults.
    fn default() -> Self {
        Budgets { enabled: true, reserve_tokens: 16384, keep_recent_tokens: 20000, branch_reserve_tokens: 16384 }
    }
}

/// Pi's budgets as the UI shows them (the budgets form: the same `Budgets` the settings commands
/// read and write), plus the model window it uses.
#[derive(Debug, Clone, Deserialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct BudgetArgs {
    #[serde(flatten)]
    pub budgets: Budgets,
    /// Used when the catalog does not know the chosen model's window.
    pub context_window: u32,
}

impl BudgetArgs {
    pub fn settings(&self) -> CompactionSettings {
        let b = &self.budgets;
        CompactionSettings {
            enabled: b.enabled,
            reserve_tokens: b.reserve_tokens as f64,
            keep_recent_tokens: b.keep_recent_tokens as f64,
        }
    }
}
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct BudgetSettings {
    pub scope: SettingsScope,
    /// The file this scope reads and writes.
    pub path: String,
    pub exists: bool,
    /// Effective values (defaults < global < project).
    pub budgets: Budgets,
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct CompactionPreview {
    /// Why Pi would refuse (e.g. already compacted); the other fields are then zero.
    pub refusal: Option<String>,
    pub first_kept_id: Option<String>,
    pub first_kept_row: Option<u32>,
    pub is_split_turn: bool,
    pub tokens_before: u32,
    pub tokens_to_summarize: u32,
    pub tokens_kept: u32,
    pub threshold: u32,
    pub over_threshold: bool,
    /// Rows of the layout after the preview (a cut inside a folded run unfolds it).
    pub total_rows: u32,
}
