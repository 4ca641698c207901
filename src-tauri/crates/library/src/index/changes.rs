//! Change detection: what a pass must do with one file, from its stat, its row, and the hashes of
//! the bytes the row says were indexed.
use super::row::{self, hashes, load_row, stat, Row, Stat};
use crate::db::classify_err;
use crate::error::LibError;
use rusqlite::Connection;
use std::path::Path;

/// What a pass must do with one file.
pub(crate) enum Plan {
    Unchanged(Option<String>),
    /// Phase 2 still pending; the file itself did not change.
    FullTextOnly(Row),
    Append(Row, Stat),
    Full {
        old: Option<Row>,
        reason: Option<&'static str>,
    },
    Removed(Row),
    /// Not a file and never indexed.
    Nothing,
}

/// Why a file whose head or tail bytes differ is re-read in full.
pub(crate) const REWRITTEN: &str = "rewritten (head or tail bytes differ)";

pub(crate) fn plan(conn: &Connection, path: &Path) -> Result<Plan, LibError> {
    let key = path.to_string_lossy();
    let md = match std::fs::metadata(path) {
        Ok(m) if m.is_file() => Some(m),
        Ok(_) => None, // a directory, FIFO or device named *.jsonl: not a session (reading a FIFO would block)
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(LibError::read(path, e)),
    };
    let row = load_row(conn, &key).map_err(classify_err)?;
    let Some(md) = md else {
        return Ok(match row {
            Some(r) => Plan::Removed(r),
            None => Plan::Nothing,
        });
    };
    let st = stat(&md);
    let Some(r) = row else { return Ok(Plan::Full { old: None, reason: None }) };
    if r.dev != st.dev || r.ino != st.ino {
        return Ok(Plan::Full { old: Some(r), reason: Some("replaced (new inode)") });
    }
    if st.size < r.offset {
        return Ok(Plan::Full { old: Some(r), reason: Some("truncated") });
    }
    let mut f = row::open(path)?;
    let (h, t) = hashes(&mut f, r.offset as u64).map_err(|e| LibError::read(path, e))?;
    if h != r.head_hash || t != r.tail_hash {
        return Ok(Plan::Full { old: Some(r), reason: Some(REWRITTEN) });
    }
    if r.fts_done == 2 {
        return Ok(Plan::Full { old: Some(r), reason: Some("changed while it was being indexed") });
    }
    if st.size == r.size && st.mtime_ns == r.mtime_ns {
        return Ok(if r.fts_done == 1 { Plan::Unchanged(r.header_id.clone()) } else { Plan::FullTextOnly(r) });
    }
    // Grew (or only the mtime moved). Appends go through the chunk scanner only when the file's
    // rows are complete and it is an accepted v3 file whose last line was terminated.
    if r.fts_done != 1 || r.valid != 1 || r.open_tail || r.migrated {
        if r.valid == 2 {
            // Pi rejects the whole file; nothing to index, remember the new size
            return Ok(Plan::Append(r, st));
        }
        return Ok(Plan::Full { old: Some(r), reason: None });
    }
    Ok(Plan::Append(r, st))
}
