//! The session picker: Pi's listing rules (pi-session-format.md §6.6), grouped by project.

use crate::engine_shim::{parse_iso_ms, user_text, Session};
use serde::Serialize;
use specta::Type;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct SessionSummary {
    pub path: String,
    pub id: String,
    pub cwd: String,
    pub name: Option<String>,
    pub first_message: String,
    pub message_count: u32,
    /// ISO time of the newest user/assistant message (else the header time).
    pub modified: String,
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct ProjectGroup {
    pub cwd: String,
    pub sessions: Vec<SessionSummary>,
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct SessionListing {
    pub root: String,
    pub groups: Vec<ProjectGroup>,
    pub recent: Vec<SessionSummary>,
}

pub fn summarize(path: &Path) -> Option<(SessionSummary, i64)> {
    let s = Session::open(path).ok()?;
    let header = s.header.as_ref()?;
    let hs = |k: &str| header.get(k).and_then(|v| v.as_str()).unwrap_or("").to_string();
    let mut count = 0u32;
    let mut first = None;
    let mut modified: Option<(i64, String)> = None;
    for (i, e) in s.entries.iter().enumerate() {
        if e.entry_type != "message" {
            continue;
        }
        count += 1;
        let role = s.role(i).unwrap_or("");
        if role == "user" && first.is_none() {
            first = s.message(i).map(user_text);
        }
        if role == "user" || role == "assistant" {
            let ts = s.message(i).and_then(|m| m.get("timestamp")).and_then(|t| t.as_i64()).unwrap_or(e.timestamp_ms);
            if modified.as_ref().is_none_or(|(m, _)| ts > *m) {
                modified = Some((ts, crate::engine_shim::iso_from_ms(ts)));
            }
        }
    }
    let (mod_ms, mod_iso) = modified.unwrap_or_else(|| (parse_iso_ms(&hs("timestamp")).unwrap_or(0), hs("timestamp")));
    Some((
        SessionSummary {
            path: path.display().to_string(),
            id: hs("id"),
            cwd: hs("cwd"),
            name: s.name(),
            first_message: super::one_line(first.as_deref().unwrap_or("(no messages)"), 160),
            message_count: count,
            modified: mod_iso,
        },
        mod_ms,
    ))
}

fn jsonl_files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(dirs) = std::fs::read_dir(root) else { return out };
    for d in dirs.flatten() {
        let p = d.path();
        if p.is_dir() {
            if let Ok(files) = std::fs::read_dir(&p) {
                out.extend(files.flatten().map(|f| f.path()).filter(|f| f.extension().is_some_and(|e| e == "jsonl")));
            }
        } else if p.extension().is_some_and(|e| e == "jsonl") {
            out.push(p);
        }
    }
    out
}

/// Sessions under `root` grouped by cwd; groups and sessions newest first.
pub fn list_sessions(root: &Path, recent_paths: &[String]) -> SessionListing {
    let mut all: Vec<(SessionSummary, i64)> = jsonl_files(root).iter().filter_map(|p| summarize(p)).collect();
    all.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.path.cmp(&b.0.path)));
    let mut groups: Vec<ProjectGroup> = Vec::new();
    for (s, _) in all {
        match groups.iter_mut().find(|g| g.cwd == s.cwd) {
            Some(g) => g.sessions.push(s),
            None => groups.push(ProjectGroup { cwd: s.cwd.clone(), sessions: vec![s] }),
        }
    }
    let recent = recent_paths.iter().filter_map(|p| summarize(Path::new(p)).map(|s| s.0)).collect();
    SessionListing { root: root.display().to_string(), groups, recent }
}
