//! A summary that is not in the file yet: Pi's draft while Pi waits for Arbor's review.
//!
//! The workbench judges a summary entry by where it sits (its path, its previous compaction,
//! its span). A draft has no entry, so its place is given instead:
//! * a compaction draft by Pi's leaf and the first kept entry: the span runs on the path root →
//!   leaf from the previous compaction's first kept entry (or the root) up to the new first
//!   kept entry, compactions left out, as [`crate::span()`] reads a written compaction; the drop
//!   alarm compares the draft with that previous compaction;
//! * a branch-summary draft by the leaf being left and the target: the span is what Pi's
//!   navigation collects (`collect_branch_entries`); a branch summary replaces no summary, so it
//!   has no drop alarm, only its retention.
//!
//! Once Pi writes the draft, [`crate::check()`] on the new entry gives the same answer.
use crate::chain::summary_text;
use crate::check::{dropped_items, moved_items, retention_over, Check};
use crate::parse::parse;
use session_engine::branch;
use session_engine::session::{Kind, Session};

/// Where a compaction draft's span lies on the path root → leaf.
#[derive(Debug, Clone, PartialEq)]
pub struct DraftSpan {
    /// The entries summarized, in path order.
    pub entries: Vec<usize>,
    /// The previous compaction on the path, if any.
    pub previous: Option<usize>,
}

/// The span of a compaction at `leaf` whose first kept entry is `first_kept_id`. An error (one
/// sentence) when the leaf or the entry is not in the session, or the entry is not on the path.
pub fn compaction_span(session: &Session, leaf: usize, first_kept_id: &str) -> Result<DraftSpan, String> {
    if leaf >= session.len() {
        return Err(format!("there is no entry number {leaf} in this session"));
    }
    let path = session.path(Some(leaf));
    let previous_at = path.iter().rposition(|&i| session.kind(i) == Kind::Compaction);
    let start = match previous_at {
        None => 0,
        Some(p) => {
            let kept = session.value(path[p]).str_field("firstKeptEntryId");
            path.iter().position(|&i| Some(session.id(i)) == kept).unwrap_or(p + 1)
        }
    };
    let end = path
        .iter()
        .position(|&i| session.id(i) == first_kept_id)
        .ok_or_else(|| format!("the first kept entry {first_kept_id} is not on the path to {}", session.id(leaf)))?;
    let entries = if start < end {
        path[start..end].iter().copied().filter(|&i| session.kind(i) != Kind::Compaction).collect()
    } else {
        Vec::new()
    };
    Ok(DraftSpan { entries, previous: previous_at.map(|p| path[p]) })
}

/// The drop alarm and retention of a compaction draft (`entry_id` is empty: there is no entry).
pub fn check_compaction_draft(
    session: &Session,
    leaf: usize,
    first_kept_id: &str,
    text: &str,
) -> Result<(DraftSpan, Check), String> {
    let span = compaction_span(session, leaf, first_kept_id)?;
    let new = parse(text);
    let (dropped, moved) = match span.previous {
        Some(p) => {
            let old = parse(summary_text(session, p));
            (dropped_items(&old, &new), moved_items(&old, &new))
        }
        None => (Vec::new(), Vec::new()),
    };
    let check = Check {
        entry_id: String::new(),
        previous_entry_id: span.previous.map(|p| session.id(p).to_string()),
        dropped,
        moved,
        retention: retention_over(session, &span.entries, span.previous, text),
    };
    Ok((span, check))
}

/// The retention of a branch-summary draft: the branch from `old_leaf` that navigating to
/// `target` leaves behind.
pub fn check_branch_draft(session: &Session, old_leaf: usize, target: usize, text: &str) -> (Vec<usize>, Check) {
    let entries = branch::collect_branch_entries(session, Some(old_leaf), target).entries;
    let check = Check {
        entry_id: String::new(),
        previous_entry_id: None,
        dropped: Vec::new(),
        moved: Vec::new(),
        retention: retention_over(session, &entries, None, text),
    };
    (entries, check)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::check;

    /// A session the real Pi agent wrote, with three automatic compactions (split turns).
    fn recorded() -> Session {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../session-engine/tests/fixtures/real-pi/print-autocompact.jsonl");
        Session::open(&path).expect("the recorded session is a fixture of the engine")
    }

    /// A written compaction and the same summary as a draft at the same place agree.
    #[test]
    fn a_draft_is_judged_as_the_entry_it_becomes() {
        let session = recorded();
        let compactions: Vec<usize> = (0..session.len()).filter(|&i| session.kind(i) == Kind::Compaction).collect();
        assert!(compactions.len() >= 2, "the recording has several compactions");
        for &c in &compactions {
            let leaf = session.parent_of(c).expect("a compaction has a parent");
            let kept = session.value(c).str_field("firstKeptEntryId").unwrap().to_string();
            let written = check(&session, c);
            let (span, draft) = check_compaction_draft(&session, leaf, &kept, summary_text(&session, c)).unwrap();
            assert_eq!(draft.dropped, written.dropped, "drop alarm of {}", session.id(c));
            assert_eq!(draft.moved, written.moved);
            assert_eq!(draft.retention, written.retention);
            assert_eq!(draft.previous_entry_id, written.previous_entry_id);
            let ids: Vec<&str> = span.entries.iter().map(|&i| session.id(i)).collect();
            assert_eq!(ids, crate::span(&session, c).entry_ids.iter().map(String::as_str).collect::<Vec<_>>());
        }
        // The last compaction's alarm is not empty (the recording lost one constraint), so the
        // comparison above compared something.
        let last = *compactions.last().unwrap();
        assert!(!check(&session, last).dropped.is_empty());
    }

    #[test]
    fn a_cut_off_the_path_is_named() {
        let session = recorded();
        let err = compaction_span(&session, 3, "no-such-id").unwrap_err();
        assert!(err.contains("no-such-id") && err.contains("not on the path"), "{err}");
    }
}
