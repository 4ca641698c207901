//! Where Pi keeps sessions (pi-session-format.md §1.1) and how we find `*.jsonl` under a root.
use std::path::{Path, PathBuf};

fn home() -> Option<PathBuf> {
    dirs::home_dir()
}

/// `~` and `~/…` expansion, as Pi does for its env vars and settings.
pub fn expand_tilde(s: &str) -> PathBuf {
    if s == "~" {
        return home().unwrap_or_else(|| PathBuf::from(s));
    }
    if let Some(rest) = s.strip_prefix("~/") {
        if let Some(h) = home() {
            return h.join(rest);
        }
    }
    PathBuf::from(s)
}

/// Pi's agent dir: `$PI_CODING_AGENT_DIR`, else `~/.pi/agent`.
pub fn agent_dir() -> Option<PathBuf> {
    match std::env::var("PI_CODING_AGENT_DIR") {
        Ok(v) if !v.is_empty() => Some(expand_tilde(&v)),
        _ => home().map(|h| h.join(".pi").join("agent")),
    }
}

/// Pi's session roots: `<agentDir>/sessions`, `$PI_CODING_AGENT_SESSION_DIR`, and `sessionDir`
/// from `<agentDir>/settings.json`. Missing folders are kept out; duplicates removed.
pub fn pi_roots() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Some(agent) = agent_dir() else { return out };
    out.push(agent.join("sessions"));
    if let Ok(v) = std::env::var("PI_CODING_AGENT_SESSION_DIR") {
        if !v.is_empty() {
            out.push(expand_tilde(&v));
        }
    }
    // Read as Pi reads it (`JSON.parse`, the engine's settings reader); a file that does not
    // parse counts as `{}`.
    if let Some(sd) = session_engine::settings::PiSettings::load(&agent, None).session_dir() {
        if !sd.is_empty() {
            out.push(expand_tilde(&sd));
        }
    }
    let mut seen = Vec::new();
    out.retain(|p| {
        let key = std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
        if seen.contains(&key) {
            false
        } else {
            seen.push(key);
            true
        }
    });
    out
}

/// Every regular `*.jsonl` file under `root` (recursive; symlinked folders are not followed,
/// so a link loop cannot trap the scan; FIFOs, devices and folders named `*.jsonl` are skipped).
pub fn scan(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else { continue };
        for ent in rd.flatten() {
            let Ok(ft) = ent.file_type() else { continue };
            let p = ent.path();
            if ft.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "jsonl") {
                let is_file = if ft.is_symlink() {
                    std::fs::metadata(&p).map(|m| m.is_file()).unwrap_or(false)
                } else {
                    ft.is_file()
                };
                if is_file {
                    out.push(p);
                }
            }
        }
    }
    out.sort();
    out
}
