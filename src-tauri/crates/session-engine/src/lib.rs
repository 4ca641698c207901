//! Pi-compatible session engine: the session file's format and loading, the tree, the context
//! the model sees with its token estimates, compaction and branch planning, Pi's settings files,
//! the append-only store, and the timeline (the context over time, entry by entry).
//!
//! The seam: this crate knows nothing of Tauri, specta, HTTP, SQLite or async. Planning is pure
//! and synchronous; `store` is the only module that writes session files. It reads JSON through
//! `pi-json` and depends on no other crate of Arbor's; the crates built on it (`summary-analysis`,
//! `session-export`, `summarizer`, `library`, the CLI and the app) are never its dependencies.
//!
//! Start at [`Session`]: `Session::open(path)` loads a file tolerantly (diagnostics for every
//! skipped line), [`Session::path`] gives the active path, [`context::build_context`] what the
//! model sees, [`compaction::prepare_compaction`] what a compaction would do, and
//! [`branch::collect_branch_entries`] what a navigation would summarize.

pub mod blocks;
pub mod branch;
pub mod chunk;
pub mod compaction;
pub mod context;
pub mod entries;
pub mod fork;
pub mod ids;
pub mod recall;
pub mod report;
pub mod session;
pub mod settings;
pub mod store;
pub mod tail;
#[cfg(test)]
mod testing;
pub mod time;
pub mod timeline;

pub use context::{build_context, CompactionSettings, Context};
pub use session::{Diagnostic, DiagnosticKind, Entry, Kind, OpenError, ReadOnly, Session};
