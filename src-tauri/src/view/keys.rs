//! What the Model and Settings panels show and send: the keyring's state, the model choice, the
//! catalog and the hooks (the commands that read and write them are in `commands/keys.rs`, the
//! files in `state/summarizer.rs`).

use serde::{Deserialize, Serialize};
use specta::Type;

#[derive(Debug, Clone, Serialize, Type, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct KeyringStatus {
    pub ok: bool,
    pub backend: String,
    pub message: String,
}

/// The "keyring unavailable" notice: shown once, compact; the details stay in the Model tab.
#[derive(Debug, Clone, Serialize, Type, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct KeyringNotice {
    pub status: KeyringStatus,
    /// Show the notice: the keyring is unavailable and the user has not dismissed it yet.
    pub show: bool,
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct KeyState {
    pub provider: String,
    /// A key is stored in the OS keyring (its text never leaves Rust).
    pub stored: bool,
    /// Why the keyring could not be asked, if it could not.
    pub problem: Option<String>,
}

/// Who summarizes and answers: `offline` (the default, no key) or a model provider.
#[derive(Debug, Clone, Serialize, Deserialize, Type, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ModelChoice {
    /// "offline" | "openai" | "anthropic" | "gemini".
    pub provider: String,
    pub model: Option<String>,
    /// None: the catalog's, else `ARBOR_<PROVIDER>_BASE_URL`, else the provider's default.
    pub base_url: Option<String>,
}

impl Default for ModelChoice {
    fn default() -> Self {
        ModelChoice { provider: "offline".into(), model: None, base_url: None }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct CatalogModel {
    pub provider: String,
    pub id: String,
    pub context_window: u32,
    pub max_output: u32,
    #[serde(default)]
    pub user_added: bool,
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct SummarizerConfig {
    pub choice: ModelChoice,
    /// The base URL requests go to (after env and catalog defaults); None = provider default.
    pub effective_base_url: Option<String>,
    pub models: Vec<CatalogModel>,
    /// The chosen model's context window when the catalog knows it.
    pub context_window: Option<u32>,
    pub keys: Vec<KeyState>,
    pub offline: bool,
}

/// The hooks, as the settings view edits them: a command line (split on whitespace) each.
#[derive(Debug, Clone, Serialize, Deserialize, Type, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct HooksView {
    pub before_compact: Option<String>,
    pub before_navigate: Option<String>,
    pub timeout_ms: u32,
    /// Branch-summary output limit (Pi's fixed 2048 when None).
    pub branch_summary_max_tokens: Option<u32>,
    /// Add the artifact ledger to the compactions and branch summaries Arbor writes.
    pub artifact_ledger: bool,
    /// Where they are saved (None: no home folder, so they cannot be saved).
    pub path: Option<String>,
}
