//! Whole-file indexing: the engine loads the file, phase 1 takes the picker facts and phase 2
//! the entry rows, statuses and full text, from the same bytes.
use super::catalog::{write_catalog, CatalogOut};
use super::entry_rows::{EntryInsert, EntryRows, TextBatch, Touched};
use super::row::{self, hashes, hashes_of, stat, Row, Stat, HASH_SPAN};
use super::update::{Change, FileUpdate, NewEntry};
use crate::analyze::{self, Loaded, Outcome};
use crate::db::{classify_err, fnv64, write_tx};
use crate::error::LibError;
use crate::forget;
use pi_json::Value;
use rusqlite::{params, Connection, OptionalExtension};
use std::fs::File;
use std::io::Read;
use std::path::Path;

/// Phase 1 of a file loaded whole. `keep`: keep the loaded session for an immediate phase 2.
pub(crate) fn catalog_whole(path: &Path, keep: bool) -> Result<CatalogOut, LibError> {
    let mut f = row::open(path)?;
    let md = f.metadata().map_err(|e| LibError::read(path, e))?;
    let mut buf = Vec::with_capacity(md.len() as usize + 1);
    f.read_to_end(&mut buf).map_err(|e| LibError::read(path, e))?;
    let st = Stat { size: buf.len() as i64, ..stat(&md) };
    let bytes = buf.len() as u64;
    // the buffer moves into the engine: keep what the tracking hashes need
    const KEEP: usize = 64 << 10;
    let head = buf[..buf.len().min(HASH_SPAN as usize)].to_vec();
    let tail_from = buf.len().saturating_sub(KEEP);
    let tail = buf[tail_from..].to_vec();
    let l = analyze::load(buf);
    let off = l.offset as usize;
    let head_hash = fnv64(&head[..off.min(head.len())]);
    let tail_hash = if off >= tail_from + HASH_SPAN as usize || tail_from == 0 {
        fnv64(&tail[off.saturating_sub(HASH_SPAN as usize) - tail_from..off - tail_from])
    } else {
        hashes(&mut f, l.offset).map_err(|e| LibError::read(path, e))?.1
    };
    let cat = if l.valid == 1 { analyze::catalog(&l) } else { analyze::Catalog::default() };
    Ok(CatalogOut {
        st,
        bytes,
        offset: l.offset,
        head_hash,
        tail_hash,
        loaded_valid: l.valid,
        unterminated: l.unterminated,
        migrated: l.s.migrated(),
        bad_lines: l.bad_lines,
        header: l.s.header().cloned(),
        cat,
        loaded: if keep { Some(l) } else { None },
    })
}

/// Phase 2 of one file, without the database.
pub(crate) struct FullTextOut {
    rows: EntryRows,
    text: TextBatch,
    outcome: Outcome,
    /// None for a file that is not a session (its rows are empty): nothing to sum, not a 0.
    forget: Option<forget::Sum>,
    /// The session list's facts and the number of skipped lines, when they differ from what the
    /// catalog wrote: it walks lines instead of validating them
    /// ([`session_engine::chunk::scan_catalog`]), so it can take a malformed line for an entry.
    /// Such a line is then found here, and the list shows what Pi's load gives.
    recount: Option<(analyze::Catalog, i64)>,
}

/// Re-read a file for phase 2, checking that the bytes up to `offset` are those of phase 1.
/// `Ok(None)`: they changed; the next pass re-reads the file in full. `bad_lines`: the skipped
/// lines phase 1 counted (more here: it took a malformed line for an entry, and its facts are
/// made again from this load).
pub(crate) fn fulltext_file(
    path: &Path,
    offset: u64,
    head_hash: i64,
    tail_hash: i64,
    bad_lines: i64,
) -> Result<Option<FullTextOut>, LibError> {
    let mut f = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(LibError::read(path, e)),
    };
    let mut buf = Vec::with_capacity(offset as usize + 1);
    (&mut f).take(offset).read_to_end(&mut buf).map_err(|e| LibError::read(path, e))?;
    if buf.len() as u64 != offset || hashes_of(&buf, buf.len()) != (head_hash, tail_hash) {
        return Ok(None);
    }
    let l = analyze::load(buf);
    let mut out = fulltext_of(&l);
    if l.valid == 1 && l.bad_lines != bad_lines {
        out.recount = Some((analyze::catalog(&l), l.bad_lines));
    }
    Ok(Some(out))
}

pub(crate) fn fulltext_of(l: &Loaded) -> FullTextOut {
    let session = &l.s;
    let n = session.len();
    let mut facts = Vec::with_capacity(n);
    for i in 0..n {
        let f = if session.migrated() {
            analyze::entry_facts(session.kind(i), session.value(i))
        } else {
            // parsed without caching: the DOM of a big file is never kept whole
            let v = pi_json::parse_bytes(&session.raw(i)).unwrap_or(Value::Null);
            analyze::entry_facts(session.kind(i), &v)
        };
        facts.push(f);
    }
    let mut touched = Touched::default();
    for f in &mut facts {
        touched.keep_new(f);
    }
    let light: Vec<(bool, i64, Option<i64>)> = facts.iter().map(|f| (f.ctx, f.tok, f.usage)).collect();
    let outcome = analyze::outcome(session, &light);
    // in a few buffers made here, on the worker: the writer frees them
    let (mut rows, mut text) = (EntryRows::default(), TextBatch::default());
    for (i, f) in facts.iter_mut().enumerate() {
        let e = session.entry(i);
        rows.push(&e.id, e.parent_id.as_deref(), &e.type_name, &e.timestamp, (e.start, e.end), f);
        text.push(f);
    }
    let forget = (l.valid == 1).then(|| forget::sum(session, &rows));
    FullTextOut { rows, text, outcome, forget, recount: None }
}

/// Write phase 2 of a file if its row is still the one phase 2 read (`fts_done = 0`, same offset
/// and hashes): another writer (the watcher, another window) may have done it meanwhile. Call
/// inside the write transaction. Returns the first [`super::MAX_EVENT_ENTRIES`] entries as events.
pub(crate) fn write_fulltext_checked(
    conn: &Connection,
    file_id: i64,
    seen: (u64, i64, i64),
    out: FullTextOut,
) -> Result<Option<Vec<NewEntry>>, LibError> {
    let now: Option<(i64, i64, i64, i64)> = conn
        .prepare_cached("SELECT fts_done, offset, head_hash, tail_hash FROM files WHERE id = ?1")
        .and_then(|mut q| q.query_row([file_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))).optional())
        .map_err(classify_err)?;
    if now != Some((0, seen.0 as i64, seen.1, seen.2)) {
        return Ok(None);
    }
    write_fulltext(conn, file_id, out).map(Some)
}

/// Write phase 2 of a file. Returns the first [`super::MAX_EVENT_ENTRIES`] entries as events.
pub(crate) fn write_fulltext(conn: &Connection, file_id: i64, out: FullTextOut) -> Result<Vec<NewEntry>, LibError> {
    let mut ins_e = EntryInsert::new(conn)?;
    let mut ins_f = conn.prepare_cached("INSERT INTO fts(rowid, body) VALUES (?1, ?2)").map_err(classify_err)?;
    let mut ins_t = conn
        .prepare_cached("INSERT OR IGNORE INTO touched(file_id, op, path) VALUES (?1, ?2, ?3)")
        .map_err(classify_err)?;
    let FullTextOut { rows, text, outcome, forget, recount } = out;
    let events = rows.events(&outcome.status);
    let mut touched = text.touched.iter().peekable();
    for (seq, &status) in outcome.status.iter().enumerate() {
        let rowid = ins_e.insert(None, file_id, &rows.stored(seq, status))?;
        let body = text.body(seq);
        if !body.is_empty() {
            ins_f.execute(params![rowid, body]).map_err(classify_err)?;
        }
        while let Some((_, op, p)) = touched.next_if(|t| t.0 == seq) {
            ins_t.execute(params![file_id, op, p]).map_err(classify_err)?;
        }
    }
    conn.prepare_cached(
        "UPDATE files SET ctx_usage = ?2, ctx_trailing = ?3, branch_count = ?4, fts_done = 1,
           forget_cost = ?5, forget_compactions = ?6, forget_open = ?7 WHERE id = ?1",
    )
    .and_then(|mut s| {
        s.execute(params![
            file_id,
            outcome.ctx_usage,
            outcome.ctx_trailing,
            outcome.branches,
            forget.as_ref().map(|f| f.cost),
            forget.as_ref().map(|f| f.compactions),
            forget.and_then(|f| forget::open_blob(&f.open))
        ])
    })
    .map_err(classify_err)?;
    if let Some((c, bad)) = recount {
        conn.prepare_cached(
            "UPDATE files SET bad_lines=?2, entry_count=?3, message_count=?4, compaction_count=?5,
               modified_ms=COALESCE(?6, created_ms), first_message=?7, leaf_id=?8, name=?9, model=?10 WHERE id = ?1",
        )
        .and_then(|mut s| {
            s.execute(params![
                file_id,
                bad,
                c.entry_count,
                c.message_count,
                c.compaction_count,
                c.modified_ms,
                c.first_message,
                c.leaf_id,
                c.name,
                c.model
            ])
        })
        .map_err(classify_err)?;
    }
    Ok(events)
}

/// Both phases of a file loaded whole, in one transaction.
pub(crate) fn full(
    conn: &Connection,
    path: &Path,
    root: Option<&Path>,
    old: Option<Row>,
    reason: Option<&'static str>,
) -> Result<FileUpdate, LibError> {
    let mut c = catalog_whole(path, true)?;
    let loaded = c.loaded.take();
    let ft = loaded.as_ref().filter(|l| l.valid == 1).map(fulltext_of);
    write_tx(conn, || {
        let id = write_catalog(conn, path, root, old.as_ref(), &c)?;
        let ev = match ft {
            Some(ft) => write_fulltext(conn, id, ft)?,
            None => {
                conn.execute("UPDATE files SET fts_done = 1 WHERE id = ?1", [id]).map_err(classify_err)?;
                vec![]
            }
        };
        Ok(FileUpdate {
            change: if old.is_none() { Change::New } else { Change::Reindexed },
            session_id: c.header.as_ref().map(|h| h.id.clone()),
            new_entries: ev,
            bytes_read: c.bytes,
            reason,
        })
    })
}
