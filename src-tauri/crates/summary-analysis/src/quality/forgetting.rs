//! The cost of forgetting: what the agent did again after a compaction because the summary did
//! not carry it.
//!
//! For a compaction, the window is the path below it up to the next compaction (or the end):
//! the session's leaf when the compaction is on the leaf's path, else the newest child at each
//! step. "Before the cut" is the path root → the compaction's first kept entry (everything the
//! model now knows only through summaries). Counted in the window:
//! * `rereadFiles`: distinct paths given to `read` that had been given to `read` before the cut;
//! * `rerunCommands`: distinct bash commands (trimmed) that had been run before the cut, as tool
//!   calls or `bashExecution` messages;
//! * `callsBeforeFirstEdit`: tool calls before the first `write` or `edit` (all the window's
//!   calls when there is none; `edited` says which), and the same count from the root of the
//!   path as the session's own baseline.
use crate::chain::edit_origin;
use rustc_hash::FxHashSet;
use serde::Serialize;
use session_engine::blocks::{blocks, Block};
use session_engine::session::{Kind, Session};

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Forgetting {
    pub reread_files: Vec<String>,
    pub rerun_commands: Vec<String>,
    pub calls_before_first_edit: usize,
    /// Whether the window has an edit or write at all.
    pub edited: bool,
    pub baseline_calls_before_first_edit: Option<usize>,
    /// The window: the first and last entry after the compaction.
    pub window_entries: usize,
}

impl Forgetting {
    /// One number for lists and marks: files re-read plus commands re-run.
    pub fn cost(&self) -> usize {
        self.reread_files.len() + self.rerun_commands.len()
    }
}

enum Act {
    Read(String),
    Run(String),
    Edit,
    Other,
}

fn acts(session: &Session, e: usize, f: &mut dyn FnMut(Act)) {
    if session.kind(e) != Kind::Message {
        return;
    }
    let Some(m) = session.message(e) else { return };
    match session.role(e) {
        Some("assistant") => {
            for b in blocks(m.get("content")) {
                let Block::ToolCall(v) = b else { continue };
                let arg = |k: &str| v.get("arguments").and_then(|a| a.str_field(k)).map(|s| s.trim().to_string());
                match v.str_field("name") {
                    Some("read") => f(arg("path").map_or(Act::Other, Act::Read)),
                    Some("bash") => f(arg("command").map_or(Act::Other, Act::Run)),
                    Some("write" | "edit") => f(Act::Edit),
                    _ => f(Act::Other),
                }
            }
        }
        Some("bashExecution") => {
            if let Some(c) = m.str_field("command") {
                // A command the user ran is not a tool call of the agent: it counts as a re-run
                // but not as a call before the first edit.
                f(Act::Run(format!("\0{}", c.trim())));
            }
        }
        _ => {}
    }
}

/// The window below `idx`: the leaf's path when `idx` is on it, else the newest child each step.
fn window(session: &Session, idx: usize) -> Vec<usize> {
    let leaf_path = session.path(session.file_leaf());
    if let Some(p) = leaf_path.iter().position(|&i| i == idx) {
        return leaf_path[p + 1..].to_vec();
    }
    let mut out = Vec::new();
    let mut cur = idx;
    while let Some(&c) = session.children(cur).iter().max() {
        let c = c as usize;
        if out.len() > session.len() {
            break;
        }
        out.push(c);
        cur = c;
    }
    out
}

fn calls_before_edit(session: &Session, entries: impl Iterator<Item = usize>) -> (usize, bool) {
    let mut n = 0;
    let mut edited = false;
    for e in entries {
        acts(session, e, &mut |a| match a {
            Act::Edit => edited = true,
            Act::Run(c) if c.starts_with('\0') => {}
            _ if !edited => n += 1,
            _ => {}
        });
        if edited {
            break;
        }
    }
    (n, edited)
}

/// The cost of forgetting after the compaction at `idx` (None for anything else). An edit or
/// revert is judged as its original's window would be: it cuts at the same first kept entry.
pub fn forgetting(session: &Session, idx: usize) -> Option<Forgetting> {
    if idx >= session.len() || session.kind(idx) != Kind::Compaction {
        return None;
    }
    let origin = edit_origin(session, idx).unwrap_or(idx);
    let path = session.path(Some(idx));
    let kept = session.value(origin).str_field("firstKeptEntryId");
    let cut = kept.and_then(|k| path.iter().position(|&i| session.id(i) == k)).unwrap_or(path.len().saturating_sub(1));
    let mut read_before = FxHashSet::default();
    let mut run_before = FxHashSet::default();
    for &e in &path[..cut] {
        acts(session, e, &mut |a| match a {
            Act::Read(p) => {
                read_before.insert(p);
            }
            Act::Run(c) => {
                run_before.insert(c.trim_start_matches('\0').to_string());
            }
            _ => {}
        });
    }
    let below = window(session, idx);
    let end = below.iter().position(|&i| session.kind(i) == Kind::Compaction).unwrap_or(below.len());
    let win = &below[..end];
    let mut reread = Vec::new();
    let mut rerun = Vec::new();
    let mut seen = FxHashSet::default();
    for &e in win {
        acts(session, e, &mut |a| match a {
            Act::Read(p) if read_before.contains(&p) && seen.insert(format!("r{p}")) => reread.push(p),
            Act::Run(c) => {
                let c = c.trim_start_matches('\0').to_string();
                if run_before.contains(&c) && seen.insert(format!("c{c}")) {
                    rerun.push(c);
                }
            }
            _ => {}
        });
    }
    let (calls, edited) = calls_before_edit(session, win.iter().copied());
    let (base, base_edited) = calls_before_edit(session, path.iter().copied());
    Some(Forgetting {
        reread_files: reread,
        rerun_commands: rerun,
        calls_before_first_edit: calls,
        edited,
        baseline_calls_before_first_edit: base_edited.then_some(base),
        window_entries: win.len(),
    })
}
