//! The span a summary stands for.
//!
//! **Compaction** (exact, Pi §11.2): on the path root → the compaction's parent, the entries in
//! `[boundaryStart, position of firstKeptEntryId)`, where `boundaryStart` is 0 without an
//! earlier compaction on that path, else the position of the earlier compaction's
//! `firstKeptEntryId` (or the entry after it when that id is not on the path). Compaction
//! entries themselves are left out (their text reaches the new summary as the previous
//! summary, not as messages). When `firstKeptEntryId` is missing or not on that path, the span
//! runs to the compaction's parent, `exact` is false and `note` says why.
//!
//! **Edit or revert** of a compaction (`details.editKind`, see [`edit_origin`]):
//! the span of its chain's origin, the summary whose text it replaces.
//!
//! **Branch summary** (inferred; `exact` is false): Pi does not record which leaf was left. The
//! rule: the old leaf is the **latest entry in file order before the branch summary that is not
//! on the path root → the summary's parent** (navigation appends the summary right after the
//! last entry of the branch it leaves; an entry on the summary's own path cannot be the branch
//! that was left). The span is then, as in Pi §13.1, the entries from that old leaf up to (not
//! including) the common ancestor with the summary's parent, oldest first. With no such entry
//! the span is empty and `note` says so.

use crate::chain::{edit_origin, previous_compaction, summary_text};
use pi_json::Value;
use serde::Serialize;
use session_engine::branch;
use session_engine::compaction;
use session_engine::session::{Kind, Session};

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Span {
    /// The entries the summary stands for, in path order.
    pub entry_ids: Vec<String>,
    pub first_id: Option<String>,
    pub last_id: Option<String>,
    /// False for branch summaries (inferred) and for compactions whose firstKeptEntryId is
    /// missing or not on their path.
    pub exact: bool,
    /// Why the span is not exact, as one sentence (None when exact).
    pub note: Option<String>,
}

impl Span {
    fn of(session: &Session, idx: &[usize], exact: bool, note: Option<String>) -> Span {
        let entry_ids: Vec<String> = idx.iter().map(|&i| session.id(i).to_string()).collect();
        Span { first_id: entry_ids.first().cloned(), last_id: entry_ids.last().cloned(), entry_ids, exact, note }
    }
}

/// The span's entries (indices, path order), whether exact, and a note.
pub(crate) fn span_indices(session: &Session, idx: usize) -> (Vec<usize>, bool, Option<String>) {
    if idx >= session.len() {
        return (Vec::new(), false, Some(format!("there is no entry number {idx} in this session")));
    }
    match session.kind(idx) {
        // An edit or revert stands for its original's span (see `chain::edit_origin`).
        Kind::Compaction => compaction_span(session, edit_origin(session, idx).unwrap_or(idx)),
        Kind::BranchSummary => branch_span(session, idx),
        _ => (
            Vec::new(),
            false,
            Some(format!(
                "entry {} is a {}, not a summary; pick a compaction or branch summary",
                session.id(idx),
                session.entry(idx).type_name
            )),
        ),
    }
}

fn compaction_span(session: &Session, idx: usize) -> (Vec<usize>, bool, Option<String>) {
    // Usually only the tail of the path matters (back to the previous compaction's kept
    // entries): walk up that far first, and take the whole path only when that is not enough.
    let (tail, complete) = path_tail(session, idx);
    if let Some(r) = span_on(session, idx, &tail, complete) {
        return r;
    }
    let mut path = session.path(Some(idx));
    if path.last() == Some(&idx) {
        path.pop();
    }
    span_on(session, idx, &path, true).expect("a complete path always gives an answer")
}

/// The path root → idx's parent, cut just above where the span can start: the previous
/// compaction and its firstKeptEntryId. `complete` = it reaches the root.
fn path_tail(session: &Session, idx: usize) -> (Vec<usize>, bool) {
    let mut up: Vec<usize> = Vec::new();
    let mut cur = session.parent_of(idx);
    let mut prev_fk: Option<Option<&str>> = None;
    while let Some(c) = cur {
        if up.len() > session.len() {
            break; // a cycle (the loader reports it; the session is read-only)
        }
        up.push(c);
        match prev_fk {
            None if session.kind(c) == Kind::Compaction => {
                let fk = session.value(c).str_field("firstKeptEntryId");
                prev_fk = Some(fk);
                if fk.is_none() || up.iter().any(|&u| Some(session.id(u)) == fk) {
                    up.reverse();
                    return (up, false);
                }
            }
            Some(fk) if Some(session.id(c)) == fk => {
                up.reverse();
                return (up, false);
            }
            _ => {}
        }
        cur = session.parent_of(c);
    }
    up.reverse();
    (up, true)
}

/// The span on `path` (root-first, ending at idx's parent; a tail of it when not `complete`).
/// None when the tail is too short to tell (idx's firstKeptEntryId lies above it).
fn span_on(
    session: &Session,
    idx: usize,
    path: &[usize],
    complete: bool,
) -> Option<(Vec<usize>, bool, Option<String>)> {
    let prev = path.iter().rposition(|&i| session.kind(i) == Kind::Compaction);
    let start = match prev {
        None => 0,
        Some(p) => {
            let fk = session.value(path[p]).str_field("firstKeptEntryId");
            path.iter().position(|&i| Some(session.id(i)) == fk).unwrap_or(p + 1)
        }
    };
    let fk = session.value(idx).str_field("firstKeptEntryId");
    let (end, exact, note) = match fk {
        None => (path.len(), false, Some(format!("compaction {} has no firstKeptEntryId, so the span is shown up to its parent", session.id(idx)))),
        Some(fk) => match path.iter().position(|&i| session.id(i) == fk) {
            Some(e) => (e, true, None),
            None if !complete => return None,
            None => (
                path.len(),
                false,
                Some(format!(
                    "compaction {}'s firstKeptEntryId {fk} is not on its path (missing or on another branch), so the span is shown up to its parent",
                    session.id(idx)
                )),
            ),
        },
    };
    let entries: Vec<usize> = if start < end {
        path[start..end].iter().copied().filter(|&i| session.kind(i) != Kind::Compaction).collect()
    } else {
        Vec::new()
    };
    Some((entries, exact, note))
}

fn branch_span(session: &Session, idx: usize) -> (Vec<usize>, bool, Option<String>) {
    let parent = session.parent_of(idx);
    let mut on_path = vec![false; session.len()];
    for i in session.path(parent) {
        on_path[i] = true;
    }
    on_path[idx] = true;
    let old_leaf = (0..idx).rev().find(|&i| !on_path[i] && session.kind(i) != Kind::Label);
    let Some(old) = old_leaf else {
        return (
            Vec::new(),
            false,
            Some(format!(
                "no entry before branch summary {} lies off its path, so the branch it left cannot be found",
                session.id(idx)
            )),
        );
    };
    let entries = match parent {
        Some(p) => branch::collect_branch_entries(session, Some(old), p).entries,
        None => session.path(Some(old)),
    };
    (
        entries,
        false,
        Some(format!(
            "inferred: the branch that ended at {} (the latest entry before the summary that is not on its path)",
            session.id(old)
        )),
    )
}

/// The span of the summary at `idx` (see the module docs). Never panics; a non-summary entry
/// gives an empty span with a note.
pub fn span(session: &Session, idx: usize) -> Span {
    let (entries, exact, note) = span_indices(session, idx);
    Span::of(session, &entries, exact, note)
}

/// How many entries the summary at `idx` stands for: `span(s, idx).entry_ids.len()` without
/// building the ids (the graph's compaction badge counts with it).
pub fn span_count(session: &Session, idx: usize) -> usize {
    span_indices(session, idx).0.len()
}

/// The agent messages of the span (for re-summarizing: the compaction mapping of Pi §11.5 for
/// a compaction, the branch mapping of §13.2 for a branch summary) and the previous summary
/// text (the earlier compaction on the path; for an edit, its origin's), if any.
pub fn span_messages(session: &Session, idx: usize) -> (Vec<Value>, Option<String>) {
    if idx >= session.len() {
        return (Vec::new(), None);
    }
    let (entries, _, _) = span_indices(session, idx);
    let branch = session.kind(idx) == Kind::BranchSummary;
    let messages = entries
        .iter()
        .filter_map(|&i| {
            if branch {
                branch::branch_message(session, i)
            } else {
                compaction::compaction_message(session, i)
            }
        })
        .collect();
    let previous =
        if branch { None } else { previous_compaction(session, idx).map(|p| summary_text(session, p).to_string()) };
    (messages, previous)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tail walk gives the same span as the whole path, on every compaction of the corpus.
    #[test]
    fn tail_walk_equals_whole_path() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../session-engine/tests/fixtures/conformance");
        let mut n = 0;
        for f in std::fs::read_dir(dir).unwrap() {
            let p = f.unwrap().path();
            if p.extension().is_none_or(|e| e != "jsonl") {
                continue;
            }
            let session = Session::open(&p).unwrap();
            for idx in session.compactions().collect::<Vec<_>>() {
                let mut path = session.path(Some(idx));
                path.pop();
                assert_eq!(
                    compaction_span(&session, idx),
                    span_on(&session, idx, &path, true).unwrap(),
                    "{} {}",
                    p.display(),
                    session.id(idx)
                );
                n += 1;
            }
        }
        assert!(n >= 25, "{n} compactions");
    }
}
