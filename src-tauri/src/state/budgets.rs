//! Compaction budgets in Pi's settings files (global `<agentDir>/settings.json`, project
//! `<cwd>/.pi/settings.json`). Edited in place: every other key, and key order, is kept.

use crate::error::AppError;
use crate::view::budgets::{BudgetSettings, Budgets, SettingsScope};
use pi_json::Value;
use session_engine::settings::{write_setting, PiSettings};
use std::path::{Path, PathBuf};

pub fn settings_path(scope: SettingsScope, agent_dir: &Path, cwd: Option<&str>) -> Result<PathBuf, AppError> {
    match scope {
        SettingsScope::Global => Ok(agent_dir.join("settings.json")),
        // Only an existing project folder: saving must never create the session's cwd (the demo's
        // cwd, for one, is made up).
        SettingsScope::Project => match cwd {
            Some(c) if !c.is_empty() && Path::new(c).is_dir() => Ok(Path::new(c).join(".pi").join("settings.json")),
            Some(c) if !c.is_empty() => {
                Err(AppError::BadInput(format!("the project folder {c} of this session does not exist here")))
            }
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
pub fn save(
    scope: SettingsScope,
    agent_dir: &Path,
    cwd: Option<&str>,
    b: &Budgets,
) -> Result<BudgetSettings, AppError> {
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
