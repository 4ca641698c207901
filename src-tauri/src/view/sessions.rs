//! The session picker: Pi's listing rules (pi-session-format.md §6.6), grouped by project.

use serde::Serialize;
use session_engine::context::user_text;
use session_engine::time::{format_iso_ms, parse_iso_ms};
use session_engine::{Kind, Session, Value};
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
    let header = s.header()?;
    let mut count = 0u32;
    let mut first = None;
    let mut modified: Option<i64> = None;
    for i in 0..s.len() {
        if s.kind(i) != Kind::Message {
            continue;
        }
        count += 1;
        let role = super::message_role(&s, i).unwrap_or("");
        if role == "user" && first.is_none() {
            first = s.message(i).map(|m| user_text(m.get("content").unwrap_or(&Value::Null)));
        }
        if role == "user" || role == "assistant" {
            // Pi takes message.timestamp; the entry's own timestamp is the same moment to within
            // the length of a reply, and reading it needs no parse of the whole entry.
            let ts = parse_iso_ms(&s.entry(i).timestamp).unwrap_or(0);
            modified = Some(modified.map_or(ts, |m| m.max(ts)));
        }
    }
    let header_ms = header.timestamp.as_deref().and_then(parse_iso_ms).unwrap_or(0);
    let mod_ms = modified.unwrap_or(header_ms);
    Some((
        SessionSummary {
            path: path.display().to_string(),
            id: header.id.clone(),
            cwd: header.cwd.clone().unwrap_or_default(),
            name: s.name().map(str::to_string),
            first_message: super::one_line(first.as_deref().unwrap_or("(no messages)"), 160),
            message_count: count,
            modified: format_iso_ms(mod_ms),
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
