//! Pi-compatible session engine: format, tree, context, token estimates, compaction and
//! branch planning, settings and the append-only store. No Tauri, no HTTP, no SQLite, no async.
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
pub mod export;
pub mod ids;
pub mod json;
pub mod report;
pub mod session;
pub mod settings;
pub mod store;
pub mod summary;
#[cfg(test)]
mod testing;
pub mod time;
pub mod timeline;

pub use context::{build_context, CompactionSettings, Context};
pub use json::Value;
pub use session::{Diagnostic, DiagnosticKind, Entry, Kind, OpenError, ReadOnly, Session};
