//! Arbor's session library: a SQLite index (with FTS5) over Pi session files, kept current as Pi
//! writes them. The app and the CLI list, filter and search sessions through it.
//!
//! It depends on the session engine (`session-engine`, with its JSON reader `pi-json`), SQLite
//! (`rusqlite`) and the file watcher (`notify`), the `secrets` rules (search snippets are
//! redacted), plus small helpers (`dirs`, `serde`, `memchr`, `thiserror`). It must never depend on Tauri or the app: every format rule is the engine's, and
//! the CLI uses this crate without a window.
//!
//! * The JSONL files are the truth; the index is a cache. Delete it and it is rebuilt. A corrupt
//!   or too-new index is moved aside and rebuilt, and [`Library::notices`] says so.
//! * Incremental: appended bytes are indexed from the stored byte offset; replaced, truncated or
//!   rewritten files are re-read in full; a torn last line waits until it is complete.
//! * Every indexed entry carries its [`EntryStatus`] relative to the file's leaf: `in_context`,
//!   `compacted` or `abandoned`, by the engine's rules (see [`analyze`]).
//! * [`watch::Watcher`] follows the roots live and emits [`LibraryEvent`]s.
//!
//! The modules, each using only those listed before it: `status` ([`EntryStatus`]), `error`
//! ([`LibError`], [`Notice`]), [`roots`] (where sessions are), [`analyze`] (the facts the engine
//! gives), [`forget`] (the cost of forgetting summed per session), [`db`] (the SQLite file),
//! [`index`] (bringing one file's rows up to date), `sync` (passes over many files), `library`
//! ([`Library`]), `snippet` (search snippets without secrets), [`query`] (reading the index),
//! `forks` (which sessions name another as their parent), [`watch`] (live follow). This file
//! only declares and re-exports them.
//!
//! Typical use (app):
//! ```no_run
//! let mut lib = library::Library::open_default().unwrap();
//! for n in lib.notices() { eprintln!("{n}"); }
//! let roots = lib.all_roots().unwrap();
//! lib.sync_roots(&roots, &mut |_| {}).unwrap();
//! let hits = lib.search(&library::SearchQuery::new("we decided")).unwrap();
//! ```
pub mod analyze;
pub mod db;
mod error;
pub mod forget;
mod forks;
pub mod index;
mod library;
pub mod query;
pub mod roots;
mod snippet;
mod status;
mod sync;
pub mod watch;

pub use db::OpenOptions;
pub use error::{LibError, Notice};
pub use index::{Change, FileUpdate, IndexOptions, NewEntry};
pub use library::{default_db_path, Library};
pub use query::{Project, SearchHit, SearchOrder, SearchQuery, SessionFilter, SessionInfo, SessionSort};
pub use status::EntryStatus;
pub use sync::{Progress, SyncOptions, SyncReport};
pub use watch::{LibraryEvent, Watcher};
