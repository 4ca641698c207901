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
use std::sync::OnceLock;

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

/// What [`forgetting_with`] read of each entry (its reads, commands and edits), kept across calls
/// on one session. The cost of forgetting after a compaction reads every assistant message on the
/// path above it, so the marks of all the compactions of a big session read most of the file
/// many times over: with this, each message is parsed once, for that call only, and only these
/// few strings stay (not the message's parse, which the session would otherwise keep: about the
/// size of the file). Entries appended after the memo was first used are read without it.
#[derive(Default)]
pub struct ActsMemo(OnceLock<Vec<OnceLock<Box<[Act]>>>>);

impl ActsMemo {
    fn slot(&self, session: &Session, e: usize) -> Option<&OnceLock<Box<[Act]>>> {
        self.0.get_or_init(|| (0..session.len()).map(|_| OnceLock::new()).collect()).get(e)
    }
}

fn parse_acts(session: &Session, e: usize) -> Box<[Act]> {
    let mut out = Vec::new();
    let v = session.value_transient(e);
    let Some(m) = v.get("message") else { return out.into() };
    match session.role(e) {
        Some("assistant") => {
            for b in blocks(m.get("content")) {
                let Block::ToolCall(v) = b else { continue };
                let arg = |k: &str| v.get("arguments").and_then(|a| a.str_field(k)).map(|s| s.trim().to_string());
                out.push(match v.str_field("name") {
                    Some("read") => arg("path").map_or(Act::Other, Act::Read),
                    Some("bash") => arg("command").map_or(Act::Other, Act::Run),
                    Some("write" | "edit") => Act::Edit,
                    _ => Act::Other,
                });
            }
        }
        Some("bashExecution") => {
            if let Some(c) = m.str_field("command") {
                // A command the user ran is not a tool call of the agent: it counts as a re-run
                // but not as a call before the first edit.
                out.push(Act::Run(format!("\0{}", c.trim())));
            }
        }
        _ => {}
    }
    out.into()
}

fn acts(session: &Session, memo: &ActsMemo, e: usize, f: &mut dyn FnMut(&Act)) {
    // Only these roles act: the others (tool results, most of a file's bytes) are not parsed.
    if session.kind(e) != Kind::Message || !matches!(session.role(e), Some("assistant" | "bashExecution")) {
        return;
    }
    let fresh;
    let list = match memo.slot(session, e) {
        Some(slot) => slot.get_or_init(|| parse_acts(session, e)),
        None => {
            fresh = parse_acts(session, e);
            &fresh
        }
    };
    for a in list.iter() {
        f(a);
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

fn calls_before_edit(session: &Session, memo: &ActsMemo, entries: impl Iterator<Item = usize>) -> (usize, bool) {
    let mut n = 0;
    let mut edited = false;
    for e in entries {
        acts(session, memo, e, &mut |a| match a {
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
    forgetting_with(session, idx, &ActsMemo::default())
}

/// [`forgetting`] with what earlier calls on the same session read (see [`ActsMemo`]).
pub fn forgetting_with(session: &Session, idx: usize, memo: &ActsMemo) -> Option<Forgetting> {
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
        acts(session, memo, e, &mut |a| match a {
            Act::Read(p) if !read_before.contains(p) => {
                read_before.insert(p.clone());
            }
            Act::Run(c) => {
                let c = c.trim_start_matches('\0');
                if !run_before.contains(c) {
                    run_before.insert(c.to_string());
                }
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
        acts(session, memo, e, &mut |a| match a {
            Act::Read(p) if read_before.contains(p) && seen.insert(format!("r{p}")) => reread.push(p.clone()),
            Act::Run(c) => {
                let c = c.trim_start_matches('\0');
                if run_before.contains(c) && seen.insert(format!("c{c}")) {
                    rerun.push(c.to_string());
                }
            }
            _ => {}
        });
    }
    let (calls, edited) = calls_before_edit(session, memo, win.iter().copied());
    let (base, base_edited) = calls_before_edit(session, memo, path.iter().copied());
    Some(Forgetting {
        reread_files: reread,
        rerun_commands: rerun,
        calls_before_first_edit: calls,
        edited,
        baseline_calls_before_first_edit: base_edited.then_some(base),
        window_entries: win.len(),
    })
}
