//! Phase 1's output for one file (Pi's picker facts and the tracking info), and writing it: the
//! file's session row is (re)made and its old entry rows dropped.
use super::row::{remove_file_rows, Row, Stat};
use crate::analyze::{self, Loaded};
use crate::db::{classify_err, now};
use crate::error::LibError;
use rusqlite::{params, params_from_iter, Connection, OptionalExtension, ToSql};
use std::path::Path;

/// Phase 1 of one file, without the database (made on worker threads).
pub(crate) struct CatalogOut {
    pub st: Stat,
    pub bytes: u64,
    pub offset: u64,
    pub head_hash: i64,
    pub tail_hash: i64,
    pub loaded_valid: i64,
    pub unterminated: bool,
    pub migrated: bool,
    pub bad_lines: i64,
    pub header: Option<session_engine::session::Header>,
    pub cat: analyze::Catalog,
    /// Kept for an immediate phase 2 (single-file sync); dropped in a batch pass.
    pub loaded: Option<Loaded>,
}

impl CatalogOut {
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }
}

/// The id of `path`'s session row, made if there is none yet, with its entry rows dropped (the
/// file is about to be read in full).
pub(crate) fn fresh_file_row(
    conn: &Connection,
    path: &Path,
    root: Option<&str>,
    old: Option<&Row>,
) -> Result<i64, LibError> {
    let id = match old {
        Some(o) => o.id,
        None => {
            let new: Option<i64> = conn
                .prepare_cached(
                    "INSERT INTO files(path, root) VALUES (?1, ?2) ON CONFLICT(path) DO NOTHING RETURNING id",
                )
                .and_then(|mut s| s.query_row(params![path.to_string_lossy(), root], |r| r.get(0)).optional())
                .map_err(classify_err)?;
            // a new row has no entry rows to drop (three statements fewer per file of a cold pass)
            if let Some(id) = new {
                return Ok(id);
            }
            // another writer (the watcher, a second window) added it since the plan
            conn.prepare_cached("SELECT id FROM files WHERE path = ?1")
                .and_then(|mut s| s.query_row([path.to_string_lossy()], |r| r.get(0)))
                .map_err(classify_err)?
        }
    };
    remove_file_rows(conn, id, true).map_err(classify_err)?;
    Ok(id)
}

/// Write phase 1 of a file: (re)create its session row; old entry rows are dropped.
pub(crate) fn write_catalog(
    conn: &Connection,
    path: &Path,
    root: Option<&Path>,
    old: Option<&Row>,
    c: &CatalogOut,
) -> Result<i64, LibError> {
    let root_s = root.map(|r| r.to_string_lossy().to_string());
    let h = c.header.as_ref();
    let created = h.and_then(|h| h.timestamp.clone());
    let created_ms = created.as_deref().and_then(session_engine::time::parse_iso_ms);
    let (header_id, cwd, parent) =
        (h.map(|h| h.id.clone()), h.and_then(|h| h.cwd.clone()), h.and_then(|h| h.parent_session.clone()));
    let (version, modified, indexed) = (h.and_then(|h| h.version), c.cat.modified_ms.or(created_ms), now());
    let offset = c.offset as i64;
    // ?2 onwards, the same for a new row and an update
    let rest: [&dyn ToSql; 27] = [
        &root_s,
        &c.st.dev,
        &c.st.ino,
        &c.st.size,
        &c.st.mtime_ns,
        &offset,
        &c.head_hash,
        &c.tail_hash,
        &c.loaded_valid,
        &header_id,
        &cwd,
        &created,
        &created_ms,
        &parent,
        &version,
        &c.cat.name,
        &c.cat.model,
        &c.cat.first_message,
        &modified,
        &c.cat.entry_count,
        &c.cat.message_count,
        &c.cat.compaction_count,
        &c.bad_lines,
        &c.cat.leaf_id,
        &indexed,
        &c.unterminated,
        &c.migrated,
    ];
    if old.is_none() {
        // A new file (most of a cold pass): its whole row in one statement, not an insert and
        // an update. The other columns' defaults are what the update below writes.
        let path_s = path.to_string_lossy();
        let new: Option<i64> = conn
            .prepare_cached(
                "INSERT INTO files(path, root, dev, ino, size, mtime_ns, offset, head_hash, tail_hash, valid, header_id, cwd,
                   created, created_ms, parent_session, version, name, model, first_message, modified_ms, entry_count,
                   message_count, compaction_count, bad_lines, leaf_id, indexed_ms, open_tail, migrated)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22,
                   ?23, ?24, ?25, ?26, ?27, ?28)
                 ON CONFLICT(path) DO NOTHING RETURNING id",
            )
            .and_then(|mut s| s.query_row(params_from_iter(std::iter::once(&path_s as &dyn ToSql).chain(rest)), |r| r.get(0)).optional())
            .map_err(classify_err)?;
        if let Some(id) = new {
            return Ok(id);
        }
        // another writer (the watcher, a second window) added it since the plan: update it
    }
    let id = fresh_file_row(conn, path, root_s.as_deref(), old)?;
    conn.prepare_cached(
        "UPDATE files SET root = COALESCE(?2, root), dev=?3, ino=?4, size=?5, mtime_ns=?6, offset=?7, head_hash=?8, tail_hash=?9,
           valid=?10, header_id=?11, cwd=?12, created=?13, created_ms=?14, parent_session=?15, version=?16, name=?17,
           model=?18, first_message=?19, modified_ms=?20, entry_count=?21, message_count=?22, compaction_count=?23,
           branch_count=0, bad_lines=?24, leaf_id=?25, ctx_usage=NULL, ctx_trailing=0, indexed_ms=?26, fts_done=0,
           open_tail=?27, migrated=?28, forget_cost=NULL, forget_compactions=NULL, forget_open=NULL
         WHERE id = ?1",
    )
    .and_then(|mut s| s.execute(params_from_iter(std::iter::once(&id as &dyn ToSql).chain(rest))))
    .map_err(classify_err)?;
    Ok(id)
}
