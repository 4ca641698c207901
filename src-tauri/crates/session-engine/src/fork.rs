//! Forks across files. Pi writes `parentSession` (the parent's file path) in the header of a
//! session made by `/fork` (`createBranchedSession`: the path root → an entry, copied with its
//! ids), by `forkFrom` (the whole source, copied) and by `newSession({parentSession})` (nothing
//! copied). This module resolves that pointer and finds where the fork left its parent:
//! * the **fork point** is the fork's deepest entry (on its path to the leaf) whose id is also
//!   in the parent: where the copied history ends;
//! * with no shared id (`newSession`), the parent's entry on its leaf's path last written at or
//!   before the fork's header timestamp.
//!
//! A missing parent file, a pointer to the fork itself, or a parent that is not a Pi session is
//! named, never an error: the fork opens as it is.
use crate::session::Session;
use std::path::{Path, PathBuf};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParentStatus {
    /// The parent file opens as a Pi session.
    Resolves,
    Missing,
    /// The pointer names the fork's own file.
    SelfReference,
    /// The file exists but Pi would not accept it as a session.
    NotASession,
}

impl ParentStatus {
    pub fn as_str(&self) -> &'static str {
        match self {
            ParentStatus::Resolves => "resolves",
            ParentStatus::Missing => "missing",
            ParentStatus::SelfReference => "self-reference",
            ParentStatus::NotASession => "not-a-session",
        }
    }
    /// One sentence for the UI and the CLI.
    pub fn explain(&self, parent: &str) -> String {
        match self {
            ParentStatus::Resolves => format!("forked from {parent}"),
            ParentStatus::Missing => format!("forked from {parent}, which is no longer there (moved or deleted)"),
            ParentStatus::SelfReference => "its parentSession names this file itself, so it has no other parent".into(),
            ParentStatus::NotASession => format!("forked from {parent}, which is not a Pi session file any more"),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct ForkParent {
    /// As written in the header.
    pub parent_session: String,
    /// Resolved against the fork's folder when relative.
    pub path: PathBuf,
    pub status: ParentStatus,
}

/// The file a `parentSession` value written in `file`'s header names: `~` expanded, a relative
/// path taken from the fork's folder. The library counts forks by it without opening sessions.
pub fn parent_path(file: &Path, parent_session: &str) -> PathBuf {
    let p = crate::store::expand_tilde(parent_session);
    if p.is_absolute() {
        p
    } else {
        file.parent().unwrap_or(Path::new(".")).join(p)
    }
}

/// The fork's parent as its header names it (None without `parentSession`). `file` is where
/// `session` was read from.
pub fn parent_of(file: &Path, session: &Session) -> Option<ForkParent> {
    let raw = session.header()?.parent_session.clone()?;
    let path = parent_path(file, &raw);
    let status = if crate::store::same_file(&path, file) {
        ParentStatus::SelfReference
    } else if !path.is_file() {
        ParentStatus::Missing
    } else {
        match Session::open(&path) {
            Ok(s) if s.header_accepted() => ParentStatus::Resolves,
            _ => ParentStatus::NotASession,
        }
    };
    Some(ForkParent { parent_session: raw, path, status })
}

/// Where the fork left the parent: an entry index in `parent` (see the module docs).
pub fn fork_point(fork: &Session, parent: &Session) -> Option<usize> {
    for i in fork.path(fork.file_leaf()).into_iter().rev() {
        if let Some(p) = parent.index_of(fork.id(i)) {
            return Some(p);
        }
    }
    let ts = fork.header()?.timestamp.as_deref().and_then(crate::time::parse_iso_ms)?;
    parent
        .path(parent.file_leaf())
        .into_iter()
        .rev()
        .find(|&i| crate::time::parse_iso_ms(&parent.entry(i).timestamp).is_some_and(|t| t <= ts))
}

/// The chain of parents, nearest first, stopping at a missing or repeated file (at most `max`).
pub fn ancestry(file: &Path, max: usize) -> Vec<ForkParent> {
    let mut out: Vec<ForkParent> = Vec::new();
    let mut cur = file.to_path_buf();
    let mut seen = vec![cur.clone()];
    while out.len() < max {
        let Ok(s) = Session::open(&cur) else { break };
        let Some(p) = parent_of(&cur, &s) else { break };
        let next = p.path.clone();
        let stop = p.status != ParentStatus::Resolves || seen.iter().any(|x| crate::store::same_file(x, &next));
        out.push(p);
        if stop {
            break;
        }
        seen.push(next.clone());
        cur = next;
    }
    out
}
