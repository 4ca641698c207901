//! The edit chain and the facts of a summary entry that every part of the analysis reads: its
//! text, its file lists, the original an edit stands for ([`edit_origin`]) and the compaction
//! before it ([`previous_compaction`]). Span, check and edit all build on these, so they live
//! here, below all three, and no two files of the crate import each other.

use crate::parse::parse;
use pi_json::Value;
use session_engine::context::js_to_string;
use session_engine::session::{Kind, Session};

/// The `summary` text of a compaction or branch-summary entry ("" when absent or not a string).
pub fn summary_text(session: &Session, idx: usize) -> &str {
    session.value(idx).str_field("summary").unwrap_or("")
}

/// Whether the entry is a summary (compaction or branch summary).
pub fn is_summary(session: &Session, idx: usize) -> bool {
    matches!(session.kind(idx), Kind::Compaction | Kind::BranchSummary)
}

/// The entry's file lists: `details.readFiles` / `details.modifiedFiles` when present (arrays),
/// else the ones in the text's appendix.
pub fn file_lists(session: &Session, idx: usize) -> (Vec<String>, Vec<String>) {
    let v = session.value(idx);
    let from_details = |key: &str| -> Option<Vec<String>> {
        v.get("details")?
            .get(key)?
            .as_array()
            .map(|a| a.iter().map(|f| f.as_str().map(str::to_string).unwrap_or_else(|| js_to_string(f))).collect())
    };
    match (from_details("readFiles"), from_details("modifiedFiles")) {
        (None, None) => {
            let p = parse(summary_text(session, idx));
            (p.read_files, p.modified_files)
        }
        (r, m) => (r.unwrap_or_default(), m.unwrap_or_default()),
    }
}

pub(crate) fn details_str<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get("details").and_then(|d| d.str_field(key))
}

/// The original summary an edit or revert stands for, when `idx` is one: a compaction whose
/// `details.editKind` is set and whose `details.editOrigin` names another compaction on its own
/// path (an ancestor). None for an original, a branch summary, or an edit whose origin is missing
/// or not on its path (such an entry is judged as written).
///
/// **Edits are judged as their origin** (one rule, used by [`span`](crate::span()),
/// [`previous_compaction`], [`retention`](crate::retention) and
/// [`check`](crate::check())): an edit is appended at the leaf, after its original, with the same
/// `firstKeptEntryId`, so read literally its span would be empty and its "previous compaction"
/// would be its own original. It replaces the original's text, so it stands for the original's
/// span, and what it must carry is what the original had to carry: the summary the original
/// replaced. Its drop alarm therefore lists what the edit lost compared with the origin's
/// predecessor (an edit that restores a dropped item clears the alarm; an edit that deletes an
/// item the predecessor had raises it), never what it changed compared with its own original,
/// which is what the default diff shows instead ([`diff_base`](crate::diff_base)).
pub fn edit_origin(session: &Session, idx: usize) -> Option<usize> {
    if idx >= session.len() || session.kind(idx) != Kind::Compaction {
        return None;
    }
    let v = session.value(idx);
    details_str(v, "editKind")?;
    let o = session.index_of(details_str(v, "editOrigin")?)?;
    if o == idx || session.kind(o) != Kind::Compaction {
        return None;
    }
    // The origin must be an ancestor (edits are appended below it); walk up, bounded for cycles.
    let mut cur = session.parent_of(idx);
    let mut steps = 0;
    while let Some(c) = cur {
        if c == o {
            return Some(o);
        }
        steps += 1;
        if steps > session.len() {
            return None;
        }
        cur = session.parent_of(c);
    }
    None
}

/// The compaction before `idx` on the path root → idx (None for the first). For an edit or
/// revert, the compaction before its origin: the summary the original replaced (see
/// [`edit_origin`]), not the original itself.
pub fn previous_compaction(session: &Session, idx: usize) -> Option<usize> {
    if idx >= session.len() {
        return None;
    }
    let idx = edit_origin(session, idx).unwrap_or(idx);
    // Walk up from the parent: no need to collect the whole path.
    let mut cur = session.parent_of(idx);
    let mut steps = 0;
    while let Some(c) = cur {
        if c == idx || steps > session.len() {
            return None; // a cycle
        }
        if session.kind(c) == Kind::Compaction {
            return Some(c);
        }
        steps += 1;
        cur = session.parent_of(c);
    }
    None
}
