//! Compaction budgets in Pi's settings files (global `<agentDir>/settings.json`, project
//! `<cwd>/.pi/settings.json`). Edited in place: every other key, and key order, is kept.

use crate::error::AppError;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
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
        SettingsScope::Project => match cwd {
            Some(c) if !c.is_empty() => Ok(Path::new(c).join(".pi").join("settings.json")),
            _ => Err(AppError::BadInput("this session has no project directory (cwd) in its header".into())),
        },
    }
}

fn read_object(path: &Path) -> Result<Option<Map<String, Value>>, AppError> {
    match std::fs::read(path) {
        Ok(bytes) => match serde_json::from_slice::<Value>(&bytes) {
            Ok(Value::Object(m)) => Ok(Some(m)),
            Ok(_) => Err(AppError::BadInput(format!("{} does not hold a JSON object", path.display()))),
            Err(source) => Err(AppError::BadSettings { path: path.display().to_string(), source }),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(AppError::Io { what: format!("reading {}", path.display()), source }),
    }
}

fn apply(b: &mut Budgets, m: &Map<String, Value>) {
    let num = |v: Option<&Value>| v.and_then(Value::as_u64).map(|n| n.min(u32::MAX as u64) as u32);
    if let Some(Value::Object(c)) = m.get("compaction") {
        if let Some(e) = c.get("enabled").and_then(Value::as_bool) {
            b.enabled = e;
        }
        if let Some(n) = num(c.get("reserveTokens")) {
            b.reserve_tokens = n;
        }
        if let Some(n) = num(c.get("keepRecentTokens")) {
            b.keep_recent_tokens = n;
        }
    }
    if let Some(Value::Object(c)) = m.get("branchSummary") {
        if let Some(n) = num(c.get("reserveTokens")) {
            b.branch_reserve_tokens = n;
        }
    }
}

pub fn load(scope: SettingsScope, agent_dir: &Path, cwd: Option<&str>) -> Result<BudgetSettings, AppError> {
    let mut b = Budgets::default();
    let global = settings_path(SettingsScope::Global, agent_dir, cwd)?;
    if let Some(m) = read_object(&global)? {
        apply(&mut b, &m);
    }
    let path = settings_path(scope, agent_dir, cwd)?;
    if scope == SettingsScope::Project {
        if let Some(m) = read_object(&path)? {
            apply(&mut b, &m);
        }
    }
    Ok(BudgetSettings { scope, exists: path.exists(), path: path.display().to_string(), budgets: b })
}

/// Write the four budget keys into the scope's file, keeping every other key and the order.
pub fn save(scope: SettingsScope, agent_dir: &Path, cwd: Option<&str>, b: &Budgets) -> Result<BudgetSettings, AppError> {
    if b.keep_recent_tokens == 0 || b.reserve_tokens == 0 {
        return Err(AppError::BadInput("reserveTokens and keepRecentTokens must be greater than 0".into()));
    }
    let path = settings_path(scope, agent_dir, cwd)?;
    let mut root = read_object(&path)?.unwrap_or_default();
    let section = |root: &mut Map<String, Value>, key: &str| -> Map<String, Value> {
        match root.get(key) {
            Some(Value::Object(m)) => m.clone(),
            _ => Map::new(),
        }
    };
    let mut c = section(&mut root, "compaction");
    c.insert("enabled".into(), b.enabled.into());
    c.insert("reserveTokens".into(), b.reserve_tokens.into());
    c.insert("keepRecentTokens".into(), b.keep_recent_tokens.into());
    root.insert("compaction".into(), Value::Object(c));
    let mut bs = section(&mut root, "branchSummary");
    bs.insert("reserveTokens".into(), b.branch_reserve_tokens.into());
    root.insert("branchSummary".into(), Value::Object(bs));
    let io = |source| AppError::Io { what: format!("writing {}", path.display()), source };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    // Pi writes JSON.stringify(settings, null, 2); serde_json's pretty printer matches it.
    let body = serde_json::to_string_pretty(&Value::Object(root)).map_err(|e| AppError::BadInput(e.to_string()))?;
    let tmp = path.with_extension("json.arbor-tmp");
    std::fs::write(&tmp, body).map_err(io)?;
    std::fs::rename(&tmp, &path).map_err(io)?;
    load(scope, agent_dir, cwd)
}
