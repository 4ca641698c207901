//! The summary workbench's analysis: compaction and branch summaries as sections, the diff
//! between two summaries, the span a summary stands for, the drop alarm and retention probe,
//! and edits/reverts as new, append-only `compaction` entries.
//!
//! The seam: everything here is pure and synchronous. It reads a [`Session`] the engine has
//! loaded and builds entries as values; it never opens, locks or writes a file (the file-level
//! write is `summarizer::summary_ops::append_summary_entry`), and knows nothing of Tauri,
//! specta, HTTP or SQLite. It depends on `session-engine` and `pi-json` only, and the engine
//! never depends on it.
//!
//! * [`parse()`] / [`print()`]: a lossless, linear parser. `print(&parse(t)) == t` for every input.
//! * [`diff()`]: section-aware diff with moved and reworded items (the `similar` crate aligns
//!   items and diffs words).
//! * [`span()`] / [`span_messages`]: what a summary summarized (Pi §11.2 for compactions; an
//!   inferred rule for branch summaries, see [`span()`]).
//! * [`check()`] / [`retention`]: what the previous summary carried that this one lost, and
//!   which facts of the span the summary mentions.
//! * [`quality`]: the probe score, citations, growth, the cost of forgetting and the artifact
//!   ledger: is the summary good enough to keep working from.
//! * [`draft`]: the same analysis of a summary Pi has drafted and not written yet.
//! * [`edit_entry`] / [`revert_entry`] / [`history`]: the edit chain. How an edit marks itself
//!   is documented in [`edit`]. An edit or revert is judged as its chain's origin (span,
//!   previous compaction, retention, drop alarm; see [`edit_origin`]); [`diff_base`] is what a
//!   summary is compared with by default (an edit: its original).
//!
//! The files, each below the ones that use it: `parse.rs` and `words.rs` (text only), `diff.rs`
//! (over parsed summaries), `chain.rs` (a summary entry's text and file lists, the edit chain's
//! origin, the previous compaction), `span.rs`, `edit.rs`, and `check.rs` (over all of these).
//! This file only declares and re-exports them.
//!
//! [`Session`]: session_engine::Session

pub mod chain;
pub mod check;
pub mod diff;
pub mod draft;
pub mod edit;
pub mod parse;
pub mod quality;
pub mod span;
mod words;

pub use chain::{edit_origin, file_lists, is_summary, previous_compaction, summary_text};
pub use check::{check, diff_base, retention, Check, Dropped, Fact, FactKind, Retention};
pub use diff::{diff, similar_items, Moved, Reworded, SectionDiff, SummaryDiff, WordChange, WordOp};
pub use edit::{
    author, edit_entry, edit_refusal, governing_compaction, history, revert_entry, Author, AuthorKind, EditKind,
    Version,
};
pub use parse::{
    parse, print, replace_section, role_of, Item, Marker, Section, SectionRole, Summary, TURN_CONTEXT_MARKER,
};
pub use quality::{citations, forgetting, forgetting_with, quality, score, with_ledger, ActsMemo, Quality};
pub use span::{span, span_count, span_messages, Span};
