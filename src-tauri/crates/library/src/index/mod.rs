//! Bringing files' rows up to date: new, appended, replaced, truncated, rewritten, removed.
//!
//! A file is tracked by (dev, inode, size, mtime, header id, byte offset indexed up to, hash of the
//! first and last 4 KiB before that offset). Indexing has two phases:
//! * **catalog** (phase 1): the engine loads the file and the session row gets Pi's picker facts
//!   (`fts_done = 0`);
//! * **full text** (phase 2): the engine loads the same bytes again (up to the phase-1 offset,
//!   after checking they did not change) and the entry rows, statuses, full-text rows, context
//!   estimate and file lists are written (`fts_done = 1`).
//!
//! Appended bytes of a file whose phase 2 is done are scanned by `session_engine::chunk` from the
//! stored offset; anything else that changed (new inode, smaller than the offset, head or tail
//! bytes differ, a grown unterminated last line) is re-read in full. A torn, unparseable last
//! line is pending: it is indexed once complete.
//!
//! The files, each using only those listed before it:
//! * `update`: what a pass reports ([`Change`], [`FileUpdate`], [`NewEntry`]);
//!   `options`: [`IndexOptions`];
//! * `row`: a file's tracking row, its stat and hashes;
//! * `changes`: change detection (what a pass must do with a file);
//! * `entry_rows`, `facts`, `catalog`: phase 2's row buffers, the session facts taken entry by
//!   entry, phase 1's output and its writing;
//! * `whole`: whole-file indexing; `streamed`: big files, read in windows; `append`: appends;
//! * this file: the entry points, which choose between them.
mod append;
mod catalog;
mod changes;
mod entry_rows;
mod facts;
mod options;
mod row;
mod streamed;
#[cfg(test)]
mod tests;
mod update;
mod whole;

pub use options::IndexOptions;
pub use update::{Change, FileUpdate, NewEntry, MAX_EVENT_ENTRIES};

pub(crate) use append::append;
pub(crate) use catalog::{write_catalog, CatalogOut};
pub(crate) use changes::{plan, Plan};
pub(crate) use row::{pending_fulltext, remove_file_rows, Row};
pub(crate) use whole::{fulltext_file, write_fulltext_checked};

use crate::db::{classify_err, write_tx, write_tx_some};
use crate::error::LibError;
use rusqlite::Connection;
use std::path::Path;

/// Bring one file up to date, both phases (the watcher, single-file callers).
pub(crate) fn sync_file(
    conn: &Connection,
    path: &Path,
    root: Option<&Path>,
    opts: &IndexOptions,
) -> Result<FileUpdate, LibError> {
    match plan(conn, path)? {
        Plan::Nothing => Ok(FileUpdate::unchanged(None)),
        Plan::Unchanged(id) => Ok(FileUpdate::unchanged(id)),
        Plan::Removed(r) => {
            write_tx(conn, || remove_file_rows(conn, r.id, false).map_err(classify_err))?;
            Ok(FileUpdate {
                change: Change::Removed,
                session_id: r.header_id,
                new_entries: vec![],
                bytes_read: 0,
                reason: None,
            })
        }
        Plan::FullTextOnly(r) if opts.is_big(path) => {
            let mut u = full(conn, path, root, Some(r), None, opts)?;
            u.change = Change::New;
            Ok(u)
        }
        Plan::FullTextOnly(r) => {
            let out = fulltext_file(path, r.offset as u64, r.head_hash, r.tail_hash, r.bad_lines)?;
            match out {
                Some(out) => {
                    let ev = write_tx(conn, || {
                        write_fulltext_checked(conn, r.id, (r.offset as u64, r.head_hash, r.tail_hash), out)
                    })?;
                    let change = if ev.is_some() { Change::New } else { Change::Unchanged };
                    Ok(FileUpdate {
                        change,
                        session_id: r.header_id,
                        new_entries: ev.unwrap_or_default(),
                        bytes_read: r.offset as u64,
                        reason: None,
                    })
                }
                None => {
                    // changed since phase 1: re-read in full
                    full(conn, path, root, Some(r), Some(changes::REWRITTEN), opts)
                }
            }
        }
        Plan::Full { old, reason } => full(conn, path, root, old, reason, opts),
        Plan::Append(r, st) => write_tx(conn, || append(conn, path, r, st)),
    }
}

/// Both phases of a file, read in full: streamed when it is big (unless it needs the whole-file
/// loader), else loaded whole.
pub(crate) fn full(
    conn: &Connection,
    path: &Path,
    root: Option<&Path>,
    old: Option<Row>,
    reason: Option<&'static str>,
    opts: &IndexOptions,
) -> Result<FileUpdate, LibError> {
    if opts.is_big(path) {
        // when the file needs the whole-file loader, what the streamed read wrote is rolled back
        if let Some(u) = write_tx_some(conn, || streamed::stream_full(conn, path, root, old.as_ref(), reason, opts))? {
            return Ok(u);
        }
    }
    whole::full(conn, path, root, old, reason)
}

/// Phase 1 of one file, without the database (runs on worker threads): every file through the
/// engine's chunk scanner (the loader's line rules without building a session: about half the
/// CPU of the whole load, which phase 1 does not need), unless it needs the whole-file loader
/// (a legacy version, a BOM before the header, a line over 256 MB).
pub(crate) fn catalog_file(path: &Path, opts: &IndexOptions) -> Result<CatalogOut, LibError> {
    if let Some(c) = streamed::catalog_stream(path, opts)? {
        return Ok(c);
    }
    whole::catalog_whole(path, false)
}

/// Phase 2 of a big file whose row is still the one phase 1 wrote (`fts_done = 0`): both phases
/// again, streamed (the file is re-read in full, so a change since phase 1 is simply indexed).
/// `Ok(false)`: another writer did it meanwhile.
pub(crate) fn fulltext_big(
    conn: &Connection,
    file_id: i64,
    path: &Path,
    opts: &IndexOptions,
) -> Result<bool, LibError> {
    match row::load_row(conn, &path.to_string_lossy()).map_err(classify_err)? {
        Some(r) if r.id == file_id && r.fts_done == 0 => {
            full(conn, path, None, Some(r), None, opts)?;
            Ok(true)
        }
        _ => Ok(false),
    }
}
