//! The summary workbench (issue 11): compaction and branch summaries as sections, the diff
//! between two summaries, the span a summary stands for, the drop alarm and retention probe,
//! and edits/reverts as new, append-only `compaction` entries.
//!
//! * [`parse`] / [`print`]: a lossless, linear parser. `print(&parse(t)) == t` for every input.
//! * [`diff`]: section-aware diff with moved and reworded items (the `similar` crate aligns
//!   items and diffs words).
//! * [`span`] / [`span_messages`]: what a summary summarized (Pi §11.2 for compactions; an
//!   inferred rule for branch summaries, see [`span`]).
//! * [`check`] / [`retention`]: what the previous summary carried that this one lost, and
//!   which facts of the span the summary mentions.
//! * [`edit_entry`] / [`revert_entry`] / [`history`]: the edit chain. How an edit marks itself
//!   is documented in [`edit`]. An edit or revert is judged as its chain's origin (span,
//!   previous compaction, retention, drop alarm; see [`edit_origin`]); [`diff_base`] is what a
//!   summary is compared with by default (an edit: its original).
//!
//! Everything here is pure: no file is opened. The file-level write is
//! `summarizer::summary_ops::append_summary_entry`.

pub mod check;
pub mod diff;
pub mod edit;
pub mod parse;
pub mod span;
pub(crate) mod words;

pub use check::{check, diff_base, previous_compaction, retention, Check, Dropped, Fact, FactKind, Retention};
pub use diff::{diff, similar_items, Moved, Reworded, SectionDiff, SummaryDiff, WordChange, WordOp};
pub use edit::{author, edit_entry, edit_origin, edit_refusal, governing_compaction, history, revert_entry, Author, AuthorKind, EditKind, Version};
pub use parse::{parse, print, replace_section, role_of, Item, Marker, Section, SectionRole, Summary, TURN_CONTEXT_MARKER};
pub use span::{span, span_count, span_messages, Span};

use crate::json::Value;
use crate::session::{Kind, Session};

/// The `summary` text of a compaction or branch-summary entry ("" when absent or not a string).
pub fn summary_text(s: &Session, idx: usize) -> &str {
    s.value(idx).str_field("summary").unwrap_or("")
}

/// Whether the entry is a summary (compaction or branch summary).
pub fn is_summary(s: &Session, idx: usize) -> bool {
    matches!(s.kind(idx), Kind::Compaction | Kind::BranchSummary)
}

/// The entry's file lists: `details.readFiles` / `details.modifiedFiles` when present (arrays),
/// else the ones in the text's appendix.
pub fn file_lists(s: &Session, idx: usize) -> (Vec<String>, Vec<String>) {
    let v = s.value(idx);
    let from_details = |key: &str| -> Option<Vec<String>> {
        v.get("details")?
            .get(key)?
            .as_array()
            .map(|a| a.iter().map(|f| f.as_str().map(str::to_string).unwrap_or_else(|| crate::context::js_to_string(f))).collect())
    };
    match (from_details("readFiles"), from_details("modifiedFiles")) {
        (None, None) => {
            let p = parse(summary_text(s, idx));
            (p.read_files, p.modified_files)
        }
        (r, m) => (r.unwrap_or_default(), m.unwrap_or_default()),
    }
}

pub(crate) fn details_str<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get("details").and_then(|d| d.str_field(key))
}
