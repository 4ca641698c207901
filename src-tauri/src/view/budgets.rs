//! Compaction budgets in Pi's settings files (global `<agentDir>/settings.json`, project
//! `<cwd>/.pi/settings.json`). Edited in place: every other key, and key order, is kept.

use crate::error::AppError;
use serde::{Deserialize, Serialize};
use session_engine::context::CompactionSettings;
use session_engine::settings::{write_setting, PiSettings};
use session_engine::Value;
use specta::Type;
use std::path::{Path, PathBuf};

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
        CompactionSettings { enabled: b.enabled, reserve_tokens: b.reserve_tokens as f64, keep_recent_tokens: b.keep_recent_tokens as f64 }
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

pub fn settings_path(scope: SettingsScope, agent_dir: &Path, cwd: Option<&str>) -> Result<PathBuf, AppError> {
    match scope {
        SettingsScope::Global => Ok(agent_dir.join("settings.json")),
        // Only an existing project folder: saving must never create the session's cwd (the demo's
        // cwd, for one, is made up).
        SettingsScope::Project => match cwd {
            Some(c) if !c.is_empty() && Path::new(c).is_dir() => Ok(Path::new(c).join(".pi").join("settings.json")),
            Some(c) if !c.is_empty() => Err(AppError::BadInput(format!("the project folder {c} of this session does not exist here"))),
            _ => Err(AppError::BadInput("this session has no project directory (cwd) in its header".into())),
        },
    }
}

/// Effective budgets for a scope: the global file alone, or global merged with the project file
/// (the engine's `PiSettings`, Pi's deep merge).
pub fn load(scope: SettingsScope, agent_dir: &Path, cwd: Option<&str>) -> Result<BudgetSettings, AppError> {
    let path = settings_path(scope, agent_dir, cwd)?;
    let project = match scope {
        SettingsScope::Global => None,
        SettingsScope::Project => cwd.map(Path::new),
    };
    let pi = PiSettings::load(agent_dir, project);
    if let Some(err) = pi.errors.first() {
        return Err(AppError::BadInput(format!("{err}. Arbor will not overwrite a settings file it cannot parse.")));
    }
    let c = pi.compaction();
    let clamp = |x: f64| x.clamp(0.0, u32::MAX as f64) as u32;
    Ok(BudgetSettings {
        scope,
        exists: path.exists(),
        path: path.display().to_string(),
        budgets: Budgets {
            enabled: c.enabled,
            reserve_tokens: clamp(c.reserve_tokens),
            keep_recent_tokens: clamp(c.keep_recent_tokens),
            branch_reserve_tokens: clamp(pi.branch_reserve_tokens()),
        },
    })
}

/// Write the four budget keys into the scope's file in place (the engine keeps every other key
/// and their order, takes Pi's settings lock, and renames atomically).
pub fn save(scope: SettingsScope, agent_dir: &Path, cwd: Option<&str>, b: &Budgets) -> Result<BudgetSettings, AppError> {
    if b.keep_recent_tokens == 0 || b.reserve_tokens == 0 {
        return Err(AppError::BadInput("reserveTokens and keepRecentTokens must be greater than 0".into()));
    }
    let path = settings_path(scope, agent_dir, cwd)?;
    write_setting(&path, "compaction", "enabled", Value::Bool(b.enabled))?;
    write_setting(&path, "compaction", "reserveTokens", Value::Num(b.reserve_tokens as f64))?;
    write_setting(&path, "compaction", "keepRecentTokens", Value::Num(b.keep_recent_tokens as f64))?;
    write_setting(&path, "branchSummary", "reserveTokens", Value::Num(b.branch_reserve_tokens as f64))?;
    load(scope, agent_dir, cwd)
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
