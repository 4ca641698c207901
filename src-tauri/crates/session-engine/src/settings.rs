//! Pi's settings files (§14): global `<agentDir>/settings.json` and project
//! `<cwd>/.pi/settings.json`, deep-merged one level. Writes change one key in place and keep
//! every other key, with 2-space indentation as Pi writes them.

use crate::context::CompactionSettings;
use pi_json::{to_pretty, Map, Value};
use std::path::{Path, PathBuf};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Global,
    Project,
}

#[derive(Clone, Debug)]
pub struct PiSettings {
    pub global: Value,
    pub project: Value,
    /// Parse errors per scope (a file that fails to parse counts as `{}`).
    pub errors: Vec<String>,
}

pub fn global_path(agent_dir: &Path) -> PathBuf {
    agent_dir.join("settings.json")
}
pub fn project_path(cwd: &Path) -> PathBuf {
    cwd.join(".pi").join("settings.json")
}

fn read_obj(path: &Path, errors: &mut Vec<String>) -> Value {
    match std::fs::read(path) {
        Ok(b) => match pi_json::parse_bytes(&b) {
            Ok(v @ Value::Obj(_)) => v,
            Ok(_) => {
                errors.push(format!("{}: not a JSON object; ignored", path.display()));
                Value::Obj(Map::new())
            }
            Err(e) => {
                errors.push(format!(
                    "{}: invalid JSON ({e}); ignored. Fix the file to use these settings.",
                    path.display()
                ));
                Value::Obj(Map::new())
            }
        },
        Err(_) => Value::Obj(Map::new()),
    }
}

/// `deepMerge(global, project)`: one level deep for plain objects on both sides.
pub fn deep_merge(base: &Value, over: &Value) -> Value {
    let mut out = base.as_object().cloned().unwrap_or_default();
    if let Some(o) = over.as_object() {
        for (k, v) in o.iter() {
            match (out.get(k), v) {
                (Some(Value::Obj(a)), Value::Obj(b)) => {
                    let mut merged = a.clone();
                    for (kk, vv) in b.iter() {
                        merged.insert(kk, vv.clone());
                    }
                    out.insert(k, Value::Obj(merged));
                }
                _ => out.insert(k, v.clone()),
            }
        }
    }
    Value::Obj(out)
}

impl PiSettings {
    pub fn load(agent_dir: &Path, cwd: Option<&Path>) -> PiSettings {
        let mut errors = Vec::new();
        let global = read_obj(&global_path(agent_dir), &mut errors);
        let project = match cwd {
            Some(c) => read_obj(&project_path(c), &mut errors),
            None => Value::Obj(Map::new()),
        };
        PiSettings { global, project, errors }
    }

    pub fn effective(&self) -> Value {
        deep_merge(&self.global, &self.project)
    }

    fn num(&self, section: &str, key: &str, default: f64) -> f64 {
        self.effective().get(section).and_then(|s| s.num_field(key)).unwrap_or(default)
    }

    pub fn compaction(&self) -> CompactionSettings {
        let eff = self.effective();
        let enabled = eff.get("compaction").and_then(|c| c.get("enabled")).and_then(Value::as_bool).unwrap_or(true);
        CompactionSettings {
            enabled,
            reserve_tokens: self.num("compaction", "reserveTokens", 16384.0),
            keep_recent_tokens: self.num("compaction", "keepRecentTokens", 20000.0),
        }
    }

    pub fn branch_reserve_tokens(&self) -> f64 {
        self.num("branchSummary", "reserveTokens", 16384.0)
    }

    pub fn session_dir(&self) -> Option<String> {
        self.effective().str_field("sessionDir").map(str::to_string)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error("{path}: invalid JSON ({msg}). Arbor will not overwrite it; fix or remove the file first.")]
    Invalid { path: String, msg: String },
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("{path}: Pi is writing its settings right now (lock held); try again in a moment.")]
    Locked { path: String },
}

/// Sets `section.key = value` in a settings file, keeping every other key and their order.
/// Uses Pi's lock convention (a `<file>.lock` directory, as `proper-lockfile` makes) and an
/// atomic rename.
pub fn write_setting(path: &Path, section: &str, key: &str, value: Value) -> Result<(), SettingsError> {
    let p = path.display().to_string();
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| SettingsError::Io { path: p.clone(), source: e })?;
    }
    let mut lock = path.as_os_str().to_owned();
    lock.push(".lock");
    let lock = PathBuf::from(lock);
    let mut acquired = false;
    for _ in 0..50 {
        if std::fs::create_dir(&lock).is_ok() {
            acquired = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    if !acquired {
        return Err(SettingsError::Locked { path: p });
    }
    let result = (|| {
        let mut root = match std::fs::read(path) {
            Ok(b) if b.iter().all(u8::is_ascii_whitespace) => Value::Obj(Map::new()),
            Ok(b) => match pi_json::parse_bytes(&b) {
                Ok(v @ Value::Obj(_)) => v,
                Ok(_) => return Err(SettingsError::Invalid { path: p.clone(), msg: "not an object".into() }),
                Err(e) => return Err(SettingsError::Invalid { path: p.clone(), msg: e.to_string() }),
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Value::Obj(Map::new()),
            Err(e) => return Err(SettingsError::Io { path: p.clone(), source: e }),
        };
        if let Value::Obj(m) = &mut root {
            let mut sec = match m.get(section) {
                Some(Value::Obj(s)) => s.clone(),
                _ => Map::new(),
            };
            sec.insert(key, value);
            m.insert(section, Value::Obj(sec));
        }
        let tmp = path.with_extension("json.arbor-tmp");
        std::fs::write(&tmp, to_pretty(&root)).map_err(|e| SettingsError::Io { path: p.clone(), source: e })?;
        std::fs::rename(&tmp, path).map_err(|e| SettingsError::Io { path: p.clone(), source: e })
    })();
    let _ = std::fs::remove_dir(&lock);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_keeps_other_keys_and_merge_is_one_level() {
        let dir = tempfile::tempdir().unwrap();
        let g = dir.path().join("settings.json");
        std::fs::write(&g, "{\"theme\":\"dark\",\"compaction\":{\"enabled\":false,\"x\":1}}").unwrap();
        write_setting(&g, "compaction", "keepRecentTokens", Value::Num(12345.0)).unwrap();
        let text = std::fs::read_to_string(&g).unwrap();
        assert_eq!(text, "{\n  \"theme\": \"dark\",\n  \"compaction\": {\n    \"enabled\": false,\n    \"x\": 1,\n    \"keepRecentTokens\": 12345\n  }\n}");
        let proj = dir.path().join("proj");
        std::fs::create_dir_all(proj.join(".pi")).unwrap();
        std::fs::write(project_path(&proj), "{\"compaction\":{\"reserveTokens\":1000}}").unwrap();
        let s = PiSettings::load(dir.path(), Some(&proj));
        let c = s.compaction();
        assert!(!c.enabled);
        assert_eq!(c.reserve_tokens, 1000.0);
        assert_eq!(c.keep_recent_tokens, 12345.0);
    }
}
