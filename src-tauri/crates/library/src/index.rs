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
use crate::analyze::{self, EntryFacts, Loaded, Outcome};
use crate::db::{classify_err, fnv64, now};
use crate::{LibError, NewEntry};
use rusqlite::{params, Connection, OptionalExtension};
use session_engine::json::Value;
use session_engine::session::Kind;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

const HASH_SPAN: u64 = 4096;
/// Most new entries listed in one [`FileUpdate`] (and watcher event); more means "reload it".
pub const MAX_EVENT_ENTRIES: usize = 1000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Change {
    /// Nothing new since the last pass.
    Unchanged,
    /// First time seen.
    New,
    /// New complete lines were appended and indexed from the stored offset.
    Appended,
    /// Replaced, truncated or rewritten: re-read in full.
    Reindexed,
    /// The file is gone; its rows were dropped.
    Removed,
}

#[derive(Debug, Clone)]
pub struct FileUpdate {
    pub change: Change,
    pub session_id: Option<String>,
    /// Entries added by this pass (in file order), with their status after the pass; at most
    /// [`MAX_EVENT_ENTRIES`] (a bigger change, e.g. a new or re-read file: reload the session).
    pub new_entries: Vec<NewEntry>,
    /// Bytes read from the file by this pass.
    pub bytes_read: u64,
    /// Why a full re-read happened (replaced, truncated, rewritten), for diagnostics.
    pub reason: Option<&'static str>,
}

#[derive(Debug, Default, Clone)]
pub(crate) struct Row {
    pub id: i64,
    dev: i64,
    ino: i64,
    size: i64,
    mtime_ns: i64,
    pub offset: i64,
    pub head_hash: i64,
    pub tail_hash: i64,
    valid: i64,
    header_id: Option<String>,
    message_count: i64,
    compaction_count: i64,
    entry_count: i64,
    bad_lines: i64,
    modified_ms: Option<i64>,
    first_message: Option<String>,
    leaf_id: Option<String>,
    ctx_usage: Option<i64>,
    ctx_trailing: i64,
    branch_count: i64,
    /// 0 = phase 2 pending, 1 = done, 2 = the file changed during phase 2: re-read in full
    pub fts_done: i64,
    open_tail: bool,
    migrated: bool,
}

pub(crate) struct Stat {
    dev: i64,
    ino: i64,
    size: i64,
    mtime_ns: i64,
}

fn stat(md: &std::fs::Metadata) -> Stat {
    #[cfg(unix)]
    let (dev, ino) = {
        use std::os::unix::fs::MetadataExt;
        (md.dev() as i64, md.ino() as i64)
    };
    #[cfg(not(unix))]
    let (dev, ino) = (0i64, 0i64);
    let mtime_ns = md.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map(|d| d.as_nanos() as i64).unwrap_or(0);
    Stat { dev, ino, size: md.len() as i64, mtime_ns }
}

pub(crate) fn io_err(path: &Path, e: std::io::Error) -> LibError {
    LibError::Io { path: path.to_path_buf(), message: format!("cannot read this session file ({e}); check its permissions") }
}

fn read_span(f: &mut File, from: u64, to: u64) -> std::io::Result<Vec<u8>> {
    let mut buf = vec![0u8; (to - from) as usize];
    f.seek(SeekFrom::Start(from))?;
    f.read_exact(&mut buf)?;
    Ok(buf)
}

fn hashes(f: &mut File, offset: u64) -> std::io::Result<(i64, i64)> {
    let head = read_span(f, 0, offset.min(HASH_SPAN))?;
    let tail = read_span(f, offset.saturating_sub(HASH_SPAN), offset)?;
    Ok((fnv64(&head), fnv64(&tail)))
}

fn hashes_of(buf: &[u8], offset: usize) -> (i64, i64) {
    (fnv64(&buf[..offset.min(HASH_SPAN as usize)]), fnv64(&buf[offset.saturating_sub(HASH_SPAN as usize)..offset]))
}

pub(crate) fn load_row(conn: &Connection, path: &str) -> rusqlite::Result<Option<Row>> {
    conn.prepare_cached(
        "SELECT id, dev, ino, size, mtime_ns, offset, head_hash, tail_hash, valid, header_id, message_count, compaction_count,
                entry_count, bad_lines, modified_ms, first_message, leaf_id, ctx_usage, ctx_trailing, branch_count, fts_done,
                open_tail, migrated
         FROM files WHERE path = ?1",
    )?
    .query_row([path], |r| {
        Ok(Row {
            id: r.get(0)?,
            dev: r.get(1)?,
            ino: r.get(2)?,
            size: r.get(3)?,
            mtime_ns: r.get(4)?,
            offset: r.get(5)?,
            head_hash: r.get(6)?,
            tail_hash: r.get(7)?,
            valid: r.get(8)?,
            header_id: r.get(9)?,
            message_count: r.get(10)?,
            compaction_count: r.get(11)?,
            entry_count: r.get(12)?,
            bad_lines: r.get(13)?,
            modified_ms: r.get(14)?,
            first_message: r.get(15)?,
            leaf_id: r.get(16)?,
            ctx_usage: r.get(17)?,
            ctx_trailing: r.get(18)?,
            branch_count: r.get(19)?,
            fts_done: r.get(20)?,
            open_tail: r.get(21)?,
            migrated: r.get(22)?,
        })
    })
    .optional()
}

/// Drop every row of a file (entries, full-text rows, file lists, and the file row itself unless
/// `keep_file_row`).
pub(crate) fn remove_file_rows(conn: &Connection, file_id: i64, keep_file_row: bool) -> rusqlite::Result<()> {
    conn.prepare_cached("DELETE FROM fts WHERE rowid IN (SELECT rowid FROM entries WHERE file_id = ?1)")?.execute([file_id])?;
    conn.prepare_cached("DELETE FROM entries WHERE file_id = ?1")?.execute([file_id])?;
    conn.prepare_cached("DELETE FROM touched WHERE file_id = ?1")?.execute([file_id])?;
    if !keep_file_row {
        conn.prepare_cached("DELETE FROM files WHERE id = ?1")?.execute([file_id])?;
    }
    Ok(())
}

/// Run `f` inside `BEGIN IMMEDIATE … COMMIT`, rolling back on error. Inside an open
/// transaction (a batch of files) it uses a savepoint, so one failing file leaves no trace.
pub(crate) fn write_tx<T>(conn: &Connection, f: impl FnOnce() -> Result<T, LibError>) -> Result<T, LibError> {
    let nested = !conn.is_autocommit();
    conn.execute_batch(if nested { "SAVEPOINT file" } else { "BEGIN IMMEDIATE" }).map_err(classify_err)?;
    match f() {
        Ok(v) => {
            conn.execute_batch(if nested { "RELEASE file" } else { "COMMIT" }).map_err(classify_err)?;
            Ok(v)
        }
        Err(e) => {
            let _ = conn.execute_batch(if nested { "ROLLBACK TO file; RELEASE file" } else { "ROLLBACK" });
            Err(e)
        }
    }
}

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

pub(crate) fn plan(conn: &Connection, path: &Path) -> Result<Plan, LibError> {
    let key = path.to_string_lossy();
    let md = match std::fs::metadata(path) {
        Ok(m) if m.is_file() => Some(m),
        Ok(_) => None, // a directory or device named *.jsonl (F19): not a session
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(io_err(path, e)),
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
    let mut f = File::open(path).map_err(|e| io_err(path, e))?;
    let (h, t) = hashes(&mut f, r.offset as u64).map_err(|e| io_err(path, e))?;
    if h != r.head_hash || t != r.tail_hash {
        return Ok(Plan::Full { old: Some(r), reason: Some("rewritten (head or tail bytes differ)") });
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

/// Phase 1 of one file, without the database (runs on worker threads).
pub(crate) struct CatalogOut {
    st: Stat,
    bytes: u64,
    offset: u64,
    head_hash: i64,
    tail_hash: i64,
    loaded_valid: i64,
    unterminated: bool,
    migrated: bool,
    bad_lines: i64,
    header: Option<session_engine::session::Header>,
    cat: analyze::Catalog,
    /// Kept for an immediate phase 2 (single-file sync); dropped in a batch pass.
    pub loaded: Option<Loaded>,
}

impl CatalogOut {
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }
}

pub(crate) fn catalog_file(path: &Path, keep: bool) -> Result<CatalogOut, LibError> {
    if !keep && is_big(path) {
        if let Some(c) = catalog_stream(path)? {
            return Ok(c);
        }
    }
    let mut f = File::open(path).map_err(|e| io_err(path, e))?;
    let md = f.metadata().map_err(|e| io_err(path, e))?;
    let mut buf = Vec::with_capacity(md.len() as usize + 1);
    f.read_to_end(&mut buf).map_err(|e| io_err(path, e))?;
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
        hashes(&mut f, l.offset).map_err(|e| io_err(path, e))?.1
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

/// The id of `path`'s session row, made if there is none yet, with its entry rows dropped (the
/// file is about to be read in full).
fn fresh_file_row(conn: &Connection, path: &Path, root: Option<&str>, old: Option<&Row>) -> Result<i64, LibError> {
    let id = match old {
        Some(o) => o.id,
        // another writer (the watcher, a second window) may have added it since the plan
        None => conn
            .prepare_cached("INSERT INTO files(path, root) VALUES (?1, ?2) ON CONFLICT(path) DO UPDATE SET root = root RETURNING id")
            .and_then(|mut s| s.query_row(params![path.to_string_lossy(), root], |r| r.get(0)))
            .map_err(classify_err)?,
    };
    remove_file_rows(conn, id, true).map_err(classify_err)?;
    Ok(id)
}

/// Write phase 1 of a file: (re)create its session row; old entry rows are dropped.
pub(crate) fn write_catalog(conn: &Connection, path: &Path, root: Option<&Path>, old: Option<&Row>, c: &CatalogOut) -> Result<i64, LibError> {
    let root_s = root.map(|r| r.to_string_lossy().to_string());
    let id = fresh_file_row(conn, path, root_s.as_deref(), old)?;
    let h = c.header.as_ref();
    let created = h.and_then(|h| h.timestamp.clone());
    let created_ms = created.as_deref().and_then(session_engine::time::parse_iso_ms);
    conn.prepare_cached(
        "UPDATE files SET root = COALESCE(?2, root), dev=?3, ino=?4, size=?5, mtime_ns=?6, offset=?7, head_hash=?8, tail_hash=?9,
           valid=?10, header_id=?11, cwd=?12, created=?13, created_ms=?14, parent_session=?15, version=?16, name=?17,
           model=?18, first_message=?19, modified_ms=?20, entry_count=?21, message_count=?22, compaction_count=?23,
           branch_count=0, bad_lines=?24, leaf_id=?25, ctx_usage=NULL, ctx_trailing=0, indexed_ms=?26, fts_done=0,
           open_tail=?27, migrated=?28
         WHERE id = ?1",
    )
    .and_then(|mut s| {
        s.execute(params![
            id,
            root_s,
            c.st.dev,
            c.st.ino,
            c.st.size,
            c.st.mtime_ns,
            c.offset as i64,
            c.head_hash,
            c.tail_hash,
            c.loaded_valid,
            h.map(|h| h.id.clone()),
            h.and_then(|h| h.cwd.clone()),
            created,
            created_ms,
            h.and_then(|h| h.parent_session.clone()),
            h.and_then(|h| h.version),
            c.cat.name,
            c.cat.model,
            c.cat.first_message,
            c.cat.modified_ms.or(created_ms),
            c.cat.entry_count,
            c.cat.message_count,
            c.cat.compaction_count,
            c.bad_lines,
            c.cat.leaf_id,
            now(),
            c.unterminated,
            c.migrated,
        ])
    })
    .map_err(classify_err)?;
    Ok(id)
}

/// Phase 2 of one file, without the database.
pub(crate) struct FullTextOut {
    rows: EntryRows,
    text: TextBatch,
    outcome: Outcome,
}

/// Re-read a file for phase 2, checking that the bytes up to `offset` are those of phase 1.
/// `Ok(None)`: they changed; the next pass re-reads the file in full.
pub(crate) fn fulltext_file(path: &Path, offset: u64, head_hash: i64, tail_hash: i64) -> Result<Option<FullTextOut>, LibError> {
    let mut f = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_err(path, e)),
    };
    let mut buf = Vec::with_capacity(offset as usize + 1);
    (&mut f).take(offset).read_to_end(&mut buf).map_err(|e| io_err(path, e))?;
    if buf.len() as u64 != offset || hashes_of(&buf, buf.len()) != (head_hash, tail_hash) {
        return Ok(None);
    }
    let l = analyze::load(buf);
    Ok(Some(fulltext_of(&l)))
}

pub(crate) fn fulltext_of(l: &Loaded) -> FullTextOut {
    let s = &l.s;
    let n = s.len();
    let mut facts = Vec::with_capacity(n);
    for i in 0..n {
        let f = if s.migrated() {
            analyze::entry_facts(s.kind(i), s.value(i))
        } else {
            // parsed without caching: the DOM of a big file is never kept whole
            let v = session_engine::json::parse_bytes(s.raw(i)).unwrap_or(Value::Null);
            analyze::entry_facts(s.kind(i), &v)
        };
        facts.push(f);
    }
    let mut touched = Touched::default();
    for f in &mut facts {
        touched.keep_new(f);
    }
    let light: Vec<(bool, i64, Option<i64>)> = facts.iter().map(|f| (f.ctx, f.tok, f.usage)).collect();
    let outcome = analyze::outcome(s, &light);
    // in a few buffers made here, on the worker: the writer frees them
    let (mut rows, mut text) = (EntryRows::default(), TextBatch::default());
    for (i, f) in facts.iter_mut().enumerate() {
        let e = s.entry(i);
        rows.push(&e.id, e.parent_id.as_deref(), &e.type_name, &e.timestamp, f);
        text.push(f);
    }
    FullTextOut { rows, text, outcome }
}

/// The paths a file's tool calls read and modified, seen so far. A file's `touched` rows are its
/// first sighting of each (op, path) (`INSERT OR IGNORE` on a unique key): a read of a whole file
/// drops the repeats before the writer thread, which then inserts the same rows.
#[derive(Default)]
struct Touched(std::collections::HashSet<(bool, String)>);

impl Touched {
    fn keep_new(&mut self, f: &mut EntryFacts) {
        f.files_read.retain(|p| self.0.insert((false, p.clone())));
        f.files_modified.retain(|p| self.0.insert((true, p.clone())));
    }
}

/// Write phase 2 of a file if its row is still the one phase 2 read (`fts_done = 0`, same offset
/// and hashes): another writer (the watcher, another window) may have done it meanwhile. Call
/// inside the write transaction. Returns the first [`MAX_EVENT_ENTRIES`] entries as events.
pub(crate) fn write_fulltext_checked(conn: &Connection, file_id: i64, seen: (u64, i64, i64), out: FullTextOut) -> Result<Option<Vec<NewEntry>>, LibError> {
    let now: Option<(i64, i64, i64, i64)> = conn
        .prepare_cached("SELECT fts_done, offset, head_hash, tail_hash FROM files WHERE id = ?1")
        .and_then(|mut q| q.query_row([file_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))).optional())
        .map_err(classify_err)?;
    if now != Some((0, seen.0 as i64, seen.1, seen.2)) {
        return Ok(None);
    }
    write_fulltext(conn, file_id, out).map(Some)
}

/// Write phase 2 of a file. Returns the first [`MAX_EVENT_ENTRIES`] entries as events.
pub(crate) fn write_fulltext(conn: &Connection, file_id: i64, out: FullTextOut) -> Result<Vec<NewEntry>, LibError> {
    let mut ins_e = conn
        .prepare_cached(
            "INSERT INTO entries(file_id, seq, entry_id, parent_id, type, role, ts, first_kept, ctx, tok, usage, status)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
        )
        .map_err(classify_err)?;
    let mut ins_f = conn.prepare_cached("INSERT INTO fts(rowid, body) VALUES (?1, ?2)").map_err(classify_err)?;
    let mut ins_t = conn.prepare_cached("INSERT OR IGNORE INTO touched(file_id, op, path) VALUES (?1, ?2, ?3)").map_err(classify_err)?;
    let FullTextOut { rows, text, outcome } = out;
    let events = rows.events(&outcome.status);
    let mut touched = text.touched.iter().peekable();
    for (seq, (&(ctx, tok, usage), &status)) in rows.light.iter().zip(&outcome.status).enumerate() {
        let (id, parent, ty, fk, ts, role) = rows.row(seq);
        let rowid = ins_e.insert(params![file_id, seq as i64, id, parent, ty, role, ts, fk, ctx, tok, usage, status]).map_err(classify_err)?;
        let body = text.body(seq);
        if !body.is_empty() {
            ins_f.execute(params![rowid, body]).map_err(classify_err)?;
        }
        while let Some((_, op, p)) = touched.next_if(|t| t.0 == seq) {
            ins_t.execute(params![file_id, op, p]).map_err(classify_err)?;
        }
    }
    conn.prepare_cached("UPDATE files SET ctx_usage = ?2, ctx_trailing = ?3, branch_count = ?4, fts_done = 1 WHERE id = ?1")
        .and_then(|mut s| s.execute(params![file_id, outcome.ctx_usage, outcome.ctx_trailing, outcome.branches]))
        .map_err(classify_err)?;
    Ok(events)
}

/// Bring one file up to date, both phases (the watcher, single-file callers).
pub(crate) fn sync_file(conn: &Connection, path: &Path, root: Option<&Path>) -> Result<FileUpdate, LibError> {
    match plan(conn, path)? {
        Plan::Nothing => Ok(FileUpdate { change: Change::Unchanged, session_id: None, new_entries: vec![], bytes_read: 0, reason: None }),
        Plan::Unchanged(id) => Ok(FileUpdate { change: Change::Unchanged, session_id: id, new_entries: vec![], bytes_read: 0, reason: None }),
        Plan::Removed(r) => {
            write_tx(conn, || remove_file_rows(conn, r.id, false).map_err(classify_err))?;
            Ok(FileUpdate { change: Change::Removed, session_id: r.header_id, new_entries: vec![], bytes_read: 0, reason: None })
        }
        Plan::FullTextOnly(r) if is_big(path) => {
            let mut u = full(conn, path, root, Some(r), None)?;
            u.change = Change::New;
            Ok(u)
        }
        Plan::FullTextOnly(r) => {
            let out = fulltext_file(path, r.offset as u64, r.head_hash, r.tail_hash)?;
            match out {
                Some(out) => {
                    let ev = write_tx(conn, || write_fulltext_checked(conn, r.id, (r.offset as u64, r.head_hash, r.tail_hash), out))?;
                    let change = if ev.is_some() { Change::New } else { Change::Unchanged };
                    Ok(FileUpdate { change, session_id: r.header_id, new_entries: ev.unwrap_or_default(), bytes_read: r.offset as u64, reason: None })
                }
                None => {
                    // changed since phase 1: re-read in full
                    full(conn, path, root, Some(r), Some("rewritten (head or tail bytes differ)"))
                }
            }
        }
        Plan::Full { old, reason } => full(conn, path, root, old, reason),
        Plan::Append(r, st) => write_tx(conn, || append(conn, path, r, st)),
    }
}

/// Files from this size on are read in windows (both phases at once) instead of being loaded
/// whole: memory stays bounded by the window, not the file.
pub(crate) const STREAM_MIN: u64 = 32 << 20;
static STREAM_FROM: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(STREAM_MIN);

/// Size from which files are streamed (default 32 MB). For tests that check the streamed path
/// against the whole-file loader; process-wide.
#[doc(hidden)]
pub fn set_stream_min(bytes: u64) {
    STREAM_FROM.store(bytes, std::sync::atomic::Ordering::Relaxed);
}

pub(crate) fn is_big(path: &Path) -> bool {
    std::fs::metadata(path).map(|m| m.len() >= STREAM_FROM.load(std::sync::atomic::Ordering::Relaxed)).unwrap_or(false)
}
static WINDOW: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(8 << 20);

/// Read size of a streamed read (default 8 MB). For tests of window boundaries; process-wide.
#[doc(hidden)]
pub fn set_stream_window(bytes: usize) {
    WINDOW.store(bytes.max(1), std::sync::atomic::Ordering::Relaxed);
}

const FALLBACK: &str = "use the whole-file loader";

/// Phase 2 of a big file whose row is still the one phase 1 wrote (`fts_done = 0`): both phases
/// again, streamed (the file is re-read in full, so a change since phase 1 is simply indexed).
/// `Ok(false)`: another writer did it meanwhile.
pub(crate) fn fulltext_big(conn: &Connection, file_id: i64, path: &Path) -> Result<bool, LibError> {
    match load_row(conn, &path.to_string_lossy()).map_err(classify_err)? {
        Some(r) if r.id == file_id && r.fts_done == 0 => {
            full(conn, path, None, Some(r), None)?;
            Ok(true)
        }
        _ => Ok(false),
    }
}

pub(crate) fn full(conn: &Connection, path: &Path, root: Option<&Path>, old: Option<Row>, reason: Option<&'static str>) -> Result<FileUpdate, LibError> {
    if is_big(path) {
        // a fallback rolls back what the streamed read wrote
        match write_tx(conn, || stream_full(conn, path, root, old.as_ref(), reason)?.ok_or_else(|| LibError::Invalid(FALLBACK.into()))) {
            Ok(u) => return Ok(u),
            Err(LibError::Invalid(m)) if m == FALLBACK => {}
            Err(e) => return Err(e),
        }
    }
    let mut c = catalog_file(path, true)?;
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

/// What a streamed read of a file found besides its entries.
struct StreamRead {
    /// The session facts gathered by the sink, `bad_lines` and `offset`.
    r: Row,
    header: Option<session_engine::session::Header>,
    valid: i64,
    unterminated: bool,
}

/// Takes each window's entries: (the facts gathered so far, the window, its entries).
type WindowSink<'a> = dyn FnMut(&mut Row, &[u8], &[session_engine::chunk::ChunkEntry]) -> Result<(), LibError> + 'a;

/// Read a file in windows through the engine's chunk scanner (the loader's rules: the first JSON
/// line decides, skipped lines are counted, a torn tail is pending) and hand each window's
/// entries to `sink`. `Ok(None)`: the file needs the whole-file loader (a legacy version,
/// JavaScript whitespace such as a BOM before the header, or one line longer than
/// [`MAX_PENDING_LINE`]).
fn stream_windows(path: &Path, f: &mut File, id: i64, sink: &mut WindowSink<'_>) -> Result<Option<StreamRead>, LibError> {
    stream_range(path, f, id, (0, u64::MAX), false, sink)
}

/// [`stream_windows`] over the bytes `from..to` of the file (`from` at a line start, `to` after a
/// `\n` or `u64::MAX` for the end of the file). `after_header`: the range follows the header
/// line (its entries count, `header` stays `None`).
fn stream_range(
    path: &Path,
    f: &mut File,
    id: i64,
    (from, to): (u64, u64),
    after_header: bool,
    sink: &mut WindowSink<'_>,
) -> Result<Option<StreamRead>, LibError> {
    use session_engine::DiagnosticKind as D;
    let mut r = Row { id, ..Default::default() };
    let mut header: Option<session_engine::session::Header> = None;
    let mut valid = if after_header { 1i64 } else { 0 };
    let window = WINDOW.load(std::sync::atomic::Ordering::Relaxed);
    // `buf[..filled]` holds the bytes read and not yet consumed. The buffer keeps its length
    // (zeroed once, when it grows): zeroing each window again cost 4 % of a cold listing's CPU.
    let mut buf: Vec<u8> = Vec::new();
    let mut filled = 0usize;
    let mut base = from; // file offset of buf[0]
    let mut read_to = from;
    let mut eof = false;
    let mut unterminated = false;
    f.seek(SeekFrom::Start(from)).map_err(|e| io_err(path, e))?;
    // The first read is a 32nd of the window (256 KB of the default 8 MB) and each next one
    // doubles up to the window: phase 2's writer, waiting on this reader, gets its first entries
    // sooner (on the 264 MB bench session it waited 100-140 ms for the reader, 60-80 ms since).
    let mut step = (window / 32).max(1);
    while !eof {
        let want = step.min(to.saturating_sub(read_to).try_into().unwrap_or(usize::MAX));
        step = (step * 2).min(window);
        if buf.len() < filled + want {
            buf.resize(filled + want, 0);
        }
        let n = read_full(f, &mut buf[filled..filled + want]).map_err(|e| io_err(path, e))?;
        filled += n;
        read_to += n as u64;
        eof = n < want || read_to >= to;
        let scan = session_engine::chunk::scan(&buf[..filled], eof);
        let mut entries: &[session_engine::chunk::ChunkEntry] = &scan.entries;
        if valid == 0 {
            if base == 0 && buf[..filled].first().is_some_and(|&b| b >= 0x80) {
                return Ok(None);
            }
            // the first line that is JSON decides (the loader's rule)
            let first_entry = scan.entries.first().map(|e| e.start);
            let first_skip = scan.skipped.iter().filter(|(_, k)| matches!(k, D::InvalidEntry | D::ExtraHeader)).map(|x| x.0).next();
            let first = match (first_entry, first_skip) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            if first.is_none() {
                r.bad_lines += scan.skipped.len() as i64; // no JSON line yet: all malformed
            }
            if let Some(at) = first {
                let end = memchr::memchr(b'\n', &buf[at..filled]).map(|o| at + o).unwrap_or(filled);
                let v = session_engine::json::parse_bytes(&String::from_utf8_lossy(&buf[at..end]).into_owned().into_bytes()).unwrap_or(Value::Null);
                if v.str_field("type") == Some("session") && v.str_field("id").is_some() {
                    let version = v.num_field("version");
                    if version.unwrap_or(1.0) < session_engine::session::CURRENT_VERSION as f64 {
                        return Ok(None);
                    }
                    header = Some(session_engine::session::Header {
                        id: v.str_field("id").unwrap_or_default().to_string(),
                        version,
                        timestamp: v.str_field("timestamp").map(str::to_string),
                        cwd: v.str_field("cwd").map(str::to_string),
                        parent_session: v.str_field("parentSession").map(str::to_string),
                    });
                    valid = 1;
                    entries = &scan.entries[scan.entries.iter().take_while(|e| e.start < at).count()..];
                } else {
                    // rejected, as the loader counts it: the lines skipped before it, and it
                    valid = 2;
                    r.bad_lines = scan.skipped.iter().filter(|(o, k)| *o < at && matches!(k, D::Malformed | D::NulBytes)).count() as i64 + 1;
                }
            }
        }
        if valid == 1 {
            r.bad_lines += scan.skipped.iter().filter(|(_, k)| !matches!(k, D::ExtraHeader)).count() as i64;
            if !entries.is_empty() {
                sink(&mut r, &buf[..filled], entries)?;
            }
        }
        unterminated = scan.unterminated;
        let consumed = if valid == 2 { filled } else { scan.consumed };
        base += consumed as u64;
        buf.copy_within(consumed..filled, 0);
        filled -= consumed;
        if !eof && filled > MAX_PENDING_LINE {
            return Ok(None); // one line longer than the window budget: load the file whole
        }
    }
    r.offset = base as i64;
    Ok(Some(StreamRead { r, header, valid, unterminated }))
}

/// What the writer inserts as a streamed file's window comes: per entry, in file order, its
/// full-text body and the paths its tool calls read and modified. The bodies share one buffer:
/// the writer frees nothing per entry (freeing the reading thread's allocations one by one on
/// the writer, while the reader allocates, took 0.3 s of the writer's 2 s on the 264 MB bench
/// session), and the batch goes back to the reader to be refilled.
#[derive(Default)]
struct TextBatch {
    text: String,
    /// Per entry, where its body ends in `text`.
    ends: Vec<usize>,
    /// (entry index in this batch, 0 read / 1 modified, path), in entry order.
    touched: Vec<(usize, i64, String)>,
}

impl TextBatch {
    fn clear(&mut self) {
        self.text.clear();
        self.ends.clear();
        self.touched.clear();
    }

    /// Entry `i`'s body.
    fn body(&self, i: usize) -> &str {
        &self.text[if i == 0 { 0 } else { self.ends[i - 1] }..self.ends[i]]
    }

    fn push(&mut self, f: &mut EntryFacts) {
        let i = self.ends.len();
        self.text.push_str(&std::mem::take(&mut f.body)); // freed as it is copied
        self.ends.push(self.text.len());
        for (op, list) in [(0, &mut f.files_read), (1, &mut f.files_modified)] {
            self.touched.extend(list.drain(..).map(|p| (i, op, p)));
        }
    }
}

/// The entry rows of a streamed file (everything but the text), kept by the reading thread; their
/// statuses need the whole tree. Their strings share one buffer (a few allocations for the
/// whole file, not six per entry: the writer frees them).
#[derive(Default)]
struct EntryRows {
    /// The strings of every row, back to back.
    text: String,
    /// Per entry: where its id, parentId, type, firstKeptEntryId, timestamp and role end in
    /// `text`, and which of them are present (bit k for part k).
    ends: Vec<([usize; 6], u8)>,
    /// (in the context, token estimate, usage)
    light: Vec<(bool, i64, Option<i64>)>,
}

/// One entry row of [`EntryRows`]: id, parentId, type, firstKeptEntryId, timestamp, role.
type EntryRowRef<'a> = (&'a str, Option<&'a str>, &'a str, Option<&'a str>, &'a str, Option<&'a str>);

impl EntryRows {
    fn push(&mut self, id: &str, parent: Option<&str>, ty: &str, ts: &str, f: &EntryFacts) {
        let (mut ends, mut present) = ([0usize; 6], 0u8);
        let parts = [Some(id), parent, Some(ty), f.first_kept.as_deref(), Some(ts), f.role.as_deref()];
        for (k, part) in parts.into_iter().enumerate() {
            if let Some(p) = part {
                self.text.push_str(p);
                present |= 1 << k;
            }
            ends[k] = self.text.len();
        }
        self.ends.push((ends, present));
        self.light.push((f.ctx, f.tok, f.usage));
    }

    fn len(&self) -> usize {
        self.ends.len()
    }

    fn row(&self, i: usize) -> EntryRowRef<'_> {
        let (e, present) = &self.ends[i];
        let start = if i == 0 { 0 } else { self.ends[i - 1].0[5] };
        let part = |k: usize| &self.text[if k == 0 { start } else { e[k - 1] }..e[k]];
        let opt = |k: usize| Some(part(k)).filter(|_| present & (1 << k) != 0);
        (part(0), opt(1), part(2), opt(3), part(4), opt(5))
    }

    /// The first [`MAX_EVENT_ENTRIES`] entries as events, with their statuses.
    fn events(&self, status: &[i64]) -> Vec<NewEntry> {
        (0..self.len().min(MAX_EVENT_ENTRIES))
            .map(|i| {
                let (id, parent, ty, _, _, _) = self.row(i);
                NewEntry {
                    entry_id: id.to_string(),
                    parent_id: parent.map(str::to_string),
                    entry_type: ty.to_string(),
                    status: analyze::status_name(status[i]),
                }
            })
            .collect()
    }

    /// Statuses, estimate and branches, from the skeleton session the engine loads.
    fn outcome(&self, file_id: i64) -> Result<Outcome, LibError> {
        let s = analyze::skeleton((0..self.len()).map(|i| {
            let (id, parent, ty, fk, _, _) = self.row(i);
            (id, parent, ty, fk)
        }));
        if s.len() != self.len() {
            return Err(LibError::Sqlite(format!(
                "the entries of file {file_id} do not load back ({} of {}); delete the index to rebuild it",
                s.len(),
                self.len()
            )));
        }
        Ok(analyze::outcome(&s, &self.light))
    }
}

/// The writer's side of a streamed full read. Full-text rows are inserted as the windows come
/// (bodies are not kept), with the rowids their entry rows will have; the entry rows come from
/// the reading thread at the end, with their statuses: no status updates, no reading rows back.
struct StreamRows<'c> {
    conn: &'c Connection,
    file_id: i64,
    first_rowid: i64,
    n: i64,
}

impl<'c> StreamRows<'c> {
    fn new(conn: &'c Connection, file_id: i64) -> Result<Self, LibError> {
        // inside the write transaction: nobody else inserts meanwhile
        let first_rowid: i64 = conn
            .query_row(
                "SELECT max(COALESCE((SELECT max(rowid) FROM entries), 0), COALESCE((SELECT rowid FROM fts ORDER BY rowid DESC LIMIT 1), 0)) + 1",
                [],
                |r| r.get(0),
            )
            .map_err(classify_err)?;
        Ok(StreamRows { conn, file_id, first_rowid, n: 0 })
    }

    fn add(&mut self, batch: &TextBatch) -> Result<(), LibError> {
        let mut ins_f = self.conn.prepare_cached("INSERT INTO fts(rowid, body) VALUES (?1, ?2)").map_err(classify_err)?;
        let mut ins_t = self.conn.prepare_cached("INSERT OR IGNORE INTO touched(file_id, op, path) VALUES (?1, ?2, ?3)").map_err(classify_err)?;
        let mut touched = batch.touched.iter().peekable();
        for i in 0..batch.ends.len() {
            let body = batch.body(i);
            if !body.is_empty() {
                ins_f.execute(params![self.first_rowid + self.n, body]).map_err(classify_err)?;
            }
            while let Some((_, op, p)) = touched.next_if(|t| t.0 == i) {
                ins_t.execute(params![self.file_id, op, p]).map_err(classify_err)?;
            }
            self.n += 1;
        }
        Ok(())
    }

    /// The entry rows, with the rowids their full-text rows got.
    fn finish(self, rows: EntryRows, o: &Outcome) -> Result<(), LibError> {
        let mut ins_e = self
            .conn
            .prepare_cached(
                "INSERT INTO entries(rowid, file_id, seq, entry_id, parent_id, type, role, ts, first_kept, ctx, tok, usage, status)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
            )
            .map_err(classify_err)?;
        for (seq, &(ctx, tok, usage)) in rows.light.iter().enumerate() {
            let (id, parent, ty, fk, ts, role) = rows.row(seq);
            ins_e
                .execute(params![self.first_rowid + seq as i64, self.file_id, seq as i64, id, parent, ty, role, ts, fk, ctx, tok, usage, o.status[seq]])
                .map_err(classify_err)?;
        }
        Ok(())
    }
}

/// Both phases of a big file, read in windows through the engine's chunk scanner: a thread
/// reads, scans and parses (the entries' facts and full-text bodies) while this one writes. `Ok(None)`: the file needs the whole-file loader;
/// the caller loads it whole (and rolls back what was written).
fn stream_full(conn: &Connection, path: &Path, root: Option<&Path>, old: Option<&Row>, reason: Option<&'static str>) -> Result<Option<FileUpdate>, LibError> {
    let mut f = File::open(path).map_err(|e| io_err(path, e))?;
    let st = stat(&f.metadata().map_err(|e| io_err(path, e))?);
    let root_s = root.map(|r| r.to_string_lossy().to_string());
    let id = fresh_file_row(conn, path, root_s.as_deref(), old)?;
    let mut events = Vec::new();
    let read = {
        let mut rows = StreamRows::new(conn, id)?;
        let (tx, rx) = std::sync::mpsc::sync_channel::<TextBatch>(2);
        // written batches go back to the reader, which refills them: no buffer is freed or
        // grown again per window
        let (back_tx, back_rx) = std::sync::mpsc::channel::<TextBatch>();
        let fr = &mut f;
        let (read, werr) = std::thread::scope(|sc| {
            let reader = sc.spawn(move || {
                let mut sf = SessionFacts::default();
                let mut entries = EntryRows::default();
                let mut touched = Touched::default();
                let read = stream_windows(path, fr, id, &mut |r, buf, es| {
                    let mut batch = back_rx.try_recv().unwrap_or_default();
                    batch.clear();
                    for e in es {
                        let v = e.value(buf);
                        session_facts(r, &mut sf, e, &v);
                        let mut f = analyze::entry_facts(e.kind, &v);
                        touched.keep_new(&mut f);
                        batch.push(&mut f);
                        entries.push(&e.id, e.parent_id.as_deref(), &e.type_name, &e.timestamp, &f);
                    }
                    r.leaf_id = es.last().map(|e| e.id.clone());
                    tx.send(batch).map_err(|_| LibError::Invalid("the index writer stopped".into()))
                });
                drop(tx); // the writer's loop ends while the statuses are computed here
                let read = read.and_then(|read| match read {
                    Some(rd) if rd.valid == 1 => {
                        let o = entries.outcome(id)?;
                        Ok(Some((rd, Some((entries, o)))))
                    }
                    other => Ok(other.map(|rd| (rd, None))),
                });
                (read, sf)
            });
            let mut werr = None;
            for batch in rx.iter() {
                if let Err(e) = rows.add(&batch) {
                    werr = Some(e);
                    break;
                }
                let _ = back_tx.send(batch);
            }
            drop(rx); // a reader blocked on a full channel gets an error and stops
            let read = reader.join().unwrap_or_else(|_| (Err(LibError::Invalid("the file reader panicked".into())), SessionFacts::default()));
            (read, werr)
        });
        if let Some(e) = werr {
            return Err(e);
        }
        let (read, sf) = read;
        let Some((mut read, entries)) = read? else { return Ok(None) };
        if let Some((entries, o)) = entries {
            // from memory: reading them back sorted the file's every row by rowid
            events = entries.events(&o.status);
            rows.finish(entries, &o)?;
            read.r.ctx_usage = o.ctx_usage;
            read.r.ctx_trailing = o.ctx_trailing;
            read.r.branch_count = o.branches;
            write_session_facts(conn, &read.r, &sf)?;
        }
        read
    };
    let StreamRead { r, header, valid, unterminated } = read;
    let base = r.offset as u64;
    let (h, t) = hashes(&mut f, r.offset as u64).map_err(|e| io_err(path, e))?;
    let hd = header.as_ref();
    let created = hd.and_then(|h| h.timestamp.clone());
    let created_ms = created.as_deref().and_then(session_engine::time::parse_iso_ms);
    conn.prepare_cached(
        "UPDATE files SET root = COALESCE(?2, root), dev=?3, ino=?4, size=?5, mtime_ns=?6, offset=?7, head_hash=?8, tail_hash=?9,
           valid=?10, header_id=?11, cwd=?12, created=?13, created_ms=?14, parent_session=?15, version=?16,
           modified_ms=COALESCE(modified_ms, ?14), bad_lines=?17, ctx_usage=?18, ctx_trailing=?19, branch_count=?20,
           indexed_ms=?21, fts_done=1, open_tail=?22, migrated=0
         WHERE id = ?1",
    )
    .and_then(|mut s| {
        s.execute(params![
            id,
            root_s,
            st.dev,
            st.ino,
            st.size.max(r.offset),
            st.mtime_ns,
            r.offset,
            h,
            t,
            valid,
            hd.map(|h| h.id.clone()),
            hd.and_then(|h| h.cwd.clone()),
            created,
            created_ms,
            hd.and_then(|h| h.parent_session.clone()),
            hd.and_then(|h| h.version),
            r.bad_lines,
            r.ctx_usage,
            r.ctx_trailing,
            r.branch_count,
            now(),
            unterminated,
        ])
    })
    .map_err(classify_err)?;
    Ok(Some(FileUpdate {
        change: if old.is_none() { Change::New } else { Change::Reindexed },
        session_id: hd.map(|h| h.id.clone()),
        new_entries: events,
        bytes_read: base,
        reason,
    }))
}

/// Phase-1 facts of a streamed file, window by window (the same facts as [`analyze::catalog`]
/// on the whole file): counts, `modified`, the first user message, the name and the last model.
/// Message lines are walked structurally ([`session_engine::json::message_head`]); a DOM is built only for
/// the first user message, `session_info` lines, and the last model-bearing entry of a window.
#[derive(Default)]
struct StreamCatalog {
    /// The last `session_info`'s name, when one was seen (`Some(None)`: cleared).
    name: Option<Option<String>>,
    model: Option<String>,
}

impl StreamCatalog {
    fn add(&mut self, r: &mut Row, buf: &[u8], entries: &[session_engine::chunk::ChunkEntry]) {
        for e in entries {
            r.entry_count += 1;
            match e.kind {
                Kind::Message => {
                    r.message_count += 1;
                    let head = session_engine::json::message_head(&e.text(buf)).or_else(|| {
                        let v = e.value(buf);
                        v.get("message").map(|m| (m.str_field("role").map(str::to_string), m.get("content").is_some(), m.num_field("timestamp")))
                    });
                    let Some((role, has_content, ts)) = head else { continue };
                    if !has_content || !matches!(role.as_deref(), Some("user" | "assistant")) {
                        continue;
                    }
                    let t = ts.or_else(|| session_engine::time::parse_iso_ms(&e.timestamp).map(|x| x as f64));
                    if let Some(t) = t.filter(|t| *t > 0.0) {
                        r.modified_ms = Some(r.modified_ms.map_or(t as i64, |x| x.max(t as i64)));
                    }
                    if r.first_message.is_none() && role.as_deref() == Some("user") {
                        let v = e.value(buf);
                        let t = v.get("message").and_then(|m| m.get("content")).map(analyze::text_content).unwrap_or_default();
                        if !t.is_empty() {
                            r.first_message = Some(analyze::cut(&t, analyze::MAX_FIRST_MESSAGE).to_string());
                        }
                    }
                }
                Kind::Compaction => r.compaction_count += 1,
                Kind::SessionInfo => {
                    let v = e.value(buf);
                    self.name = Some(v.str_field("name").map(|s| analyze::js_trim(s).to_string()).filter(|s| !s.is_empty()));
                }
                _ => {}
            }
        }
        // the last model in file order: walk this window back to its last model-bearing entry
        for e in entries.iter().rev() {
            let is_candidate = match e.kind {
                Kind::ModelChange => true,
                Kind::Message => match session_engine::json::message_head(&e.text(buf)) {
                    Some((role, _, _)) => role.as_deref() == Some("assistant"),
                    None => true,
                },
                _ => false,
            };
            if !is_candidate {
                continue;
            }
            let v = e.value(buf);
            let found = match e.kind {
                Kind::ModelChange => v.str_field("provider").zip(v.str_field("modelId")),
                _ => v.get("message").filter(|m| m.str_field("role") == Some("assistant")).and_then(|m| m.str_field("provider").zip(m.str_field("model"))),
            };
            if let Some((p, m)) = found {
                self.model = Some(format!("{p}/{m}"));
                break;
            }
        }
        r.leaf_id = entries.last().map(|e| e.id.clone()).or(r.leaf_id.take());
    }
}

/// The offset of the first line start at or after `at` (`None`: no `\n` within 1 MB of it).
fn line_start_near(f: &mut File, at: u64) -> std::io::Result<Option<u64>> {
    if at == 0 {
        return Ok(None);
    }
    // from the byte before `at`: `at` itself may be a line start
    f.seek(SeekFrom::Start(at - 1))?;
    let mut buf = vec![0u8; 1 << 20];
    let n = read_full(f, &mut buf)?;
    Ok(memchr::memchr(b'\n', &buf[..n]).map(|i| at + i as u64))
}

/// The facts of a file read in two halves, in file order: counts add up, the later half's name,
/// model, leaf, offset and tail win, the earlier half's first message and header.
fn join_halves((a, ca): (StreamRead, StreamCatalog), (b, cb): (StreamRead, StreamCatalog)) -> (StreamRead, StreamCatalog) {
    let (mut r, rb) = (a.r, b.r);
    r.entry_count += rb.entry_count;
    r.message_count += rb.message_count;
    r.compaction_count += rb.compaction_count;
    r.bad_lines += rb.bad_lines;
    r.modified_ms = match (r.modified_ms, rb.modified_ms) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, y) => x.or(y),
    };
    r.first_message = r.first_message.or(rb.first_message);
    r.leaf_id = rb.leaf_id.or(r.leaf_id);
    r.offset = rb.offset;
    let cat = StreamCatalog { name: cb.name.or(ca.name), model: cb.model.or(ca.model) };
    (StreamRead { r, header: a.header, valid: 1, unterminated: b.unterminated }, cat)
}

/// Phase 1 of a big file (without the database, on a worker thread): Pi's picker facts and the
/// tracking info from a streamed read, with memory bounded by the window. `Ok(None)`: the file
/// needs the whole-file loader.
fn catalog_stream(path: &Path) -> Result<Option<CatalogOut>, LibError> {
    let mut f = File::open(path).map_err(|e| io_err(path, e))?;
    let st = stat(&f.metadata().map_err(|e| io_err(path, e))?);
    // Two threads: the second half (from a line start near the middle) is read as lines after
    // the header, while this thread reads the first half; the halves' facts are then joined in
    // file order. A first half without an accepted header is read again whole, in one pass.
    let mid = line_start_near(&mut f, st.size as u64 / 2).map_err(|e| io_err(path, e))?;
    let halves = match mid {
        Some(mid) if st.size as u64 >= 2 * WINDOW.load(std::sync::atomic::Ordering::Relaxed) as u64 => {
            let mut f2 = File::open(path).map_err(|e| io_err(path, e))?;
            let (mut c1, mut c2) = (StreamCatalog::default(), StreamCatalog::default());
            let (first, second) = std::thread::scope(|sc| {
                let second = sc.spawn(|| {
                    stream_range(path, &mut f2, 0, (mid, u64::MAX), true, &mut |r, buf, es| {
                        c2.add(r, buf, es);
                        Ok(())
                    })
                });
                let first = stream_range(path, &mut f, 0, (0, mid), false, &mut |r, buf, es| {
                    c1.add(r, buf, es);
                    Ok(())
                });
                (first, second.join().unwrap_or_else(|_| Err(LibError::Invalid("the file reader panicked".into()))))
            });
            match (first?, second?) {
                (Some(a), Some(b)) if a.valid == 1 => Some(join_halves((a, c1), (b, c2))),
                (None, _) | (_, None) => return Ok(None),
                _ => None,
            }
        }
        _ => None,
    };
    let (read, cat) = match halves {
        Some(x) => x,
        None => {
            let mut cat = StreamCatalog::default();
            let Some(read) = stream_windows(path, &mut f, 0, &mut |r, buf, es| {
                cat.add(r, buf, es);
                Ok(())
            })?
            else {
                return Ok(None);
            };
            (read, cat)
        }
    };
    let StreamRead { r, header, valid, unterminated } = read;
    let (head_hash, tail_hash) = hashes(&mut f, r.offset as u64).map_err(|e| io_err(path, e))?;
    let bytes = st.size.max(r.offset) as u64;
    let c = if valid == 1 {
        analyze::Catalog {
            name: cat.name.flatten(),
            model: cat.model,
            first_message: r.first_message,
            modified_ms: r.modified_ms,
            entry_count: r.entry_count,
            message_count: r.message_count,
            compaction_count: r.compaction_count,
            leaf_id: r.leaf_id,
        }
    } else {
        analyze::Catalog::default()
    };
    Ok(Some(CatalogOut {
        st: Stat { size: bytes as i64, ..st },
        bytes,
        offset: r.offset as u64,
        head_hash,
        tail_hash,
        loaded_valid: valid,
        unterminated,
        migrated: false,
        bad_lines: r.bad_lines,
        header,
        cat: c,
        loaded: None,
    }))
}

/// Longest unfinished line a streamed read holds before it falls back to the whole-file loader.
pub(crate) const MAX_PENDING_LINE: usize = 256 << 20;

fn read_full(f: &mut File, out: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < out.len() {
        match f.read(&mut out[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// Index the bytes appended to a file (inside the caller's transaction).
pub(crate) fn append_file(conn: &Connection, path: &Path, r: Row, st: Stat) -> Result<FileUpdate, LibError> {
    append(conn, path, r, st)
}

/// Index the complete lines appended after the stored offset (engine chunk rules).
fn append(conn: &Connection, path: &Path, mut r: Row, st: Stat) -> Result<FileUpdate, LibError> {
    // inside the write transaction: another writer may have indexed these bytes since the plan
    match load_row(conn, &path.to_string_lossy()).map_err(classify_err)? {
        Some(now) if now.id == r.id && now.offset == r.offset && now.size == r.size && now.fts_done == r.fts_done => {}
        _ => return Ok(FileUpdate { change: Change::Unchanged, session_id: r.header_id, new_entries: vec![], bytes_read: 0, reason: None }),
    }
    let mut f = File::open(path).map_err(|e| io_err(path, e))?;
    let start = r.offset as u64;
    f.seek(SeekFrom::Start(start)).map_err(|e| io_err(path, e))?;
    let mut buf = Vec::with_capacity((st.size as u64).saturating_sub(start) as usize + 1);
    f.read_to_end(&mut buf).map_err(|e| io_err(path, e))?;
    let read = buf.len() as u64;
    let size_now = start + read;
    let mut new_entries = Vec::new();
    if r.valid != 1 {
        // a rejected file stays rejected (Pi rejects it whole); just follow its size
        r.offset = size_now as i64;
    } else {
        let scan = session_engine::chunk::scan(&buf, true);
        r.bad_lines += scan.skipped.iter().filter(|(_, k)| !matches!(k, session_engine::DiagnosticKind::ExtraHeader)).count() as i64;
        r.offset = (start + scan.consumed as u64) as i64;
        r.open_tail = scan.unterminated;
        if !scan.entries.is_empty() {
            new_entries = append_entries(conn, &mut r, &buf, &scan.entries)?;
        }
    }
    let (h, t) = hashes(&mut f, r.offset as u64).map_err(|e| io_err(path, e))?;
    conn.prepare_cached(
        "UPDATE files SET size=?2, mtime_ns=?3, offset=?4, head_hash=?5, tail_hash=?6, bad_lines=?7, open_tail=?8, indexed_ms=?9
         WHERE id = ?1",
    )
    .and_then(|mut s| s.execute(params![r.id, size_now as i64, st.mtime_ns, r.offset, h, t, r.bad_lines, r.open_tail, now()]))
    .map_err(classify_err)?;
    Ok(FileUpdate {
        change: if new_entries.is_empty() { Change::Unchanged } else { Change::Appended },
        session_id: r.header_id.clone(),
        new_entries,
        bytes_read: read,
        reason: None,
    })
}

/// What a session row takes from its entries (Pi's picker rules, on each entry's full JSON):
/// counts, `modified`, the first user message; the name and the model in `sf`.
#[derive(Default)]
struct SessionFacts {
    /// The last `session_info`'s name, when one was seen (`Some(None)`: cleared).
    name: Option<Option<String>>,
    model: Option<String>,
}

fn session_facts(r: &mut Row, sf: &mut SessionFacts, e: &session_engine::chunk::ChunkEntry, v: &Value) {
    r.entry_count += 1;
    match e.kind {
        Kind::Message => {
            r.message_count += 1;
            if let Some(m) = v.get("message") {
                let role = m.str_field("role");
                if m.get("content").is_some() && matches!(role, Some("user" | "assistant")) {
                    let t = m.num_field("timestamp").or_else(|| session_engine::time::parse_iso_ms(&e.timestamp).map(|x| x as f64));
                    if let Some(t) = t.filter(|t| *t > 0.0) {
                        r.modified_ms = Some(r.modified_ms.map_or(t as i64, |x| x.max(t as i64)));
                    }
                    if r.first_message.is_none() && role == Some("user") {
                        let t = m.get("content").map(analyze::text_content).unwrap_or_default();
                        if !t.is_empty() {
                            r.first_message = Some(analyze::cut(&t, analyze::MAX_FIRST_MESSAGE).to_string());
                        }
                    }
                }
                if role == Some("assistant") {
                    if let (Some(p), Some(md)) = (m.str_field("provider"), m.str_field("model")) {
                        sf.model = Some(format!("{p}/{md}"));
                    }
                }
            }
        }
        Kind::Compaction => r.compaction_count += 1,
        Kind::SessionInfo => {
            sf.name = Some(v.str_field("name").map(|s| analyze::js_trim(s).to_string()).filter(|s| !s.is_empty()));
        }
        Kind::ModelChange => {
            if let (Some(p), Some(m)) = (v.str_field("provider"), v.str_field("modelId")) {
                sf.model = Some(format!("{p}/{m}"));
            }
        }
        _ => {}
    }
}

/// Write the session facts gathered from entries ([`session_facts`]) to the file's row.
fn write_session_facts(conn: &Connection, r: &Row, sf: &SessionFacts) -> Result<(), LibError> {
    conn.prepare_cached(
        "UPDATE files SET entry_count=?2, message_count=?3, compaction_count=?4, modified_ms=COALESCE(?5, modified_ms),
           first_message=?6, leaf_id=?7, ctx_usage=?8, ctx_trailing=?9, branch_count=?10,
           name = CASE WHEN ?11 THEN ?12 ELSE name END, model = COALESCE(?13, model)
         WHERE id = ?1",
    )
    .and_then(|mut s| {
        s.execute(params![
            r.id,
            r.entry_count,
            r.message_count,
            r.compaction_count,
            r.modified_ms,
            r.first_message,
            r.leaf_id,
            r.ctx_usage,
            r.ctx_trailing,
            r.branch_count,
            sf.name.is_some(),
            sf.name.clone().flatten(),
            sf.model,
        ])
    })
    .map_err(classify_err)?;
    Ok(())
}

/// Insert entry rows for appended chunk entries, their statuses, and update the session facts in
/// `r` and its row.
fn append_entries(conn: &Connection, r: &mut Row, buf: &[u8], entries: &[session_engine::chunk::ChunkEntry]) -> Result<Vec<NewEntry>, LibError> {
    let mut ins_e = conn
        .prepare_cached(
            "INSERT INTO entries(file_id, seq, entry_id, parent_id, type, role, ts, first_kept, ctx, tok, usage, status)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, 0)",
        )
        .map_err(classify_err)?;
    let mut ins_f = conn.prepare_cached("INSERT INTO fts(rowid, body) VALUES (?1, ?2)").map_err(classify_err)?;
    let mut ins_t = conn.prepare_cached("INSERT OR IGNORE INTO touched(file_id, op, path) VALUES (?1, ?2, ?3)").map_err(classify_err)?;
    let mut dup = conn.prepare_cached("SELECT 1 FROM entries WHERE file_id = ?1 AND entry_id = ?2 LIMIT 1").map_err(classify_err)?;
    let old_leaf = r.leaf_id.clone();
    let mut linear = true;
    let mut prev = old_leaf.clone();
    let mut rows: Vec<(i64, EntryFacts)> = Vec::new();
    let mut sf = SessionFacts::default();
    let mut seen_ids = std::collections::HashSet::new();
    for e in entries {
        let v = e.value(buf);
        let f = analyze::entry_facts(e.kind, &v);
        if linear {
            let dup_here = !seen_ids.insert(e.id.clone()) || dup.exists(params![r.id, e.id]).map_err(classify_err)?;
            if e.kind == Kind::Compaction || e.parent_id != prev || dup_here {
                linear = false;
            }
        }
        prev = Some(e.id.clone());
        session_facts(r, &mut sf, e, &v);
        let seq = r.entry_count - 1;
        let rowid =
            ins_e.insert(params![r.id, seq, e.id, e.parent_id, e.type_name, f.role, e.timestamp, f.first_kept, f.ctx, f.tok, f.usage]).map_err(classify_err)?;
        if !f.body.is_empty() {
            ins_f.execute(params![rowid, f.body]).map_err(classify_err)?;
        }
        for (op, list) in [(0, &f.files_read), (1, &f.files_modified)] {
            for p in list {
                ins_t.execute(params![r.id, op, p]).map_err(classify_err)?;
            }
        }
        rows.push((rowid, f));
    }
    r.leaf_id = entries.last().map(|e| e.id.clone());
    let mut statuses = vec![analyze::IN_CONTEXT; rows.len()];
    if linear {
        // a chain at the leaf: all in context; the estimate moves on (§9.3)
        for (_, f) in &rows {
            if f.ctx {
                match f.usage {
                    Some(u) => {
                        r.ctx_usage = Some(u);
                        r.ctx_trailing = 0;
                    }
                    None => r.ctx_trailing += f.tok,
                }
            }
        }
        let last_tip_gone = old_leaf.is_some();
        if !last_tip_gone {
            r.branch_count = 1;
        }
    } else {
        statuses = recompute(conn, r, &rows.iter().map(|x| x.0).collect::<Vec<_>>())?;
    }
    write_session_facts(conn, r, &sf)?;
    Ok(entries
        .iter()
        .zip(statuses)
        .take(MAX_EVENT_ENTRIES)
        .map(|(e, st)| NewEntry { entry_id: e.id.clone(), parent_id: e.parent_id.clone(), entry_type: e.type_name.clone(), status: analyze::status_name(st) })
        .collect())
}

/// Recompute every status of a file from its stored rows, through a skeleton session loaded by
/// the engine (no file re-read); write only the statuses that changed. Returns the statuses of
/// `new_rowids`.
fn recompute(conn: &Connection, r: &mut Row, new_rowids: &[i64]) -> Result<Vec<i64>, LibError> {
    let mut q = conn
        .prepare_cached("SELECT rowid, entry_id, parent_id, type, first_kept, ctx, tok, usage, status FROM entries WHERE file_id = ?1 ORDER BY rowid")
        .map_err(classify_err)?;
    let mut rowids = Vec::new();
    let mut skel = Vec::new();
    let mut light = Vec::new();
    let mut old = Vec::new();
    let rows = q
        .query_map([r.id], |x| {
            Ok((
                x.get::<_, i64>(0)?,
                (x.get::<_, String>(1)?, x.get::<_, Option<String>>(2)?, x.get::<_, String>(3)?, x.get::<_, Option<String>>(4)?),
                (x.get::<_, bool>(5)?, x.get::<_, i64>(6)?, x.get::<_, Option<i64>>(7)?),
                x.get::<_, i64>(8)?,
            ))
        })
        .map_err(classify_err)?;
    for row in rows {
        let (a, b, c, d) = row.map_err(classify_err)?;
        rowids.push(a);
        skel.push(b);
        light.push(c);
        old.push(d);
    }
    let s = analyze::skeleton(skel.iter().map(|(id, parent, ty, fk)| (id.as_str(), parent.as_deref(), ty.as_str(), fk.as_deref())));
    if s.len() != rowids.len() {
        return Err(LibError::Sqlite(format!(
            "the stored entries of file {} do not load back ({} of {}); delete the index to rebuild it",
            r.id,
            s.len(),
            rowids.len()
        )));
    }
    let o = analyze::outcome(&s, &light);
    let mut up = conn.prepare_cached("UPDATE entries SET status = ?2 WHERE rowid = ?1").map_err(classify_err)?;
    for i in 0..rowids.len() {
        if o.status[i] != old[i] {
            up.execute(params![rowids[i], o.status[i]]).map_err(classify_err)?;
        }
    }
    r.ctx_usage = o.ctx_usage;
    r.ctx_trailing = o.ctx_trailing;
    r.branch_count = o.branches;
    let pos: std::collections::HashMap<i64, usize> = rowids.iter().enumerate().map(|(i, &x)| (x, i)).collect();
    Ok(new_rowids.iter().map(|x| pos.get(x).map(|&i| o.status[i]).unwrap_or(analyze::IN_CONTEXT)).collect())
}

/// Files under `roots` with phase 2 pending, or all of them when `roots` is empty.
/// (file id, path, offset, head hash, tail hash)
pub(crate) type Pending = (i64, PathBuf, u64, i64, i64);

pub(crate) fn pending_fulltext(conn: &Connection) -> Result<Vec<Pending>, LibError> {
    let mut q = conn.prepare_cached("SELECT id, path, offset, head_hash, tail_hash FROM files WHERE fts_done = 0 ORDER BY id").map_err(classify_err)?;
    let rows = q
        .query_map([], |r| Ok((r.get::<_, i64>(0)?, PathBuf::from(r.get::<_, String>(1)?), r.get::<_, i64>(2)? as u64, r.get(3)?, r.get(4)?)))
        .map_err(classify_err)?;
    rows.collect::<Result<_, _>>().map_err(classify_err)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every column of every entry row, its full-text body, and the file's `touched` rows.
    type Rows = (
        Vec<(String, Option<String>, String, Option<String>, Option<String>, Option<String>, bool, i64, Option<i64>, i64, Option<String>)>,
        Vec<(i64, String)>,
    );

    fn rows(conn: &Connection) -> Rows {
        let mut q = conn
            .prepare(
                "SELECT e.entry_id, e.parent_id, e.type, e.first_kept, e.ts, e.role, e.ctx, e.tok, e.usage, e.status, t.body
                 FROM entries e LEFT JOIN fts t ON t.rowid = e.rowid ORDER BY e.rowid",
            )
            .unwrap();
        let entries = q
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?, r.get(7)?, r.get(8)?, r.get(9)?, r.get(10)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let mut q = conn.prepare("SELECT op, path FROM touched ORDER BY id").unwrap();
        let touched = q.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect();
        (entries, touched)
    }

    /// Both phase-2 writers (the whole-file one and the streamed one, over many windows whose
    /// batches are reused) store each entry's strings from the shared buffers exactly: an empty
    /// parentId, role or firstKeptEntryId stays empty (not NULL), a missing one stays NULL,
    /// multi-byte text keeps its bounds, bodies and file lists stay with their entries.
    #[test]
    fn entry_rows_keep_every_string_on_both_write_paths() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let ts = "2026-01-01T00:00:00.000Z";
        let msg = |id: &str, parent: &str, role: &str, content: &str| {
            format!(
                r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"{ts}","message":{{"role":"{role}","content":{content},"timestamp":1767225600000}}}}"#
            )
        };
        let mut lines = vec![format!(r#"{{"type":"session","version":3,"id":"s-1","timestamp":"{ts}","cwd":"/p"}}"#)];
        lines.push(msg("a1", "null", "user", r#""héllo wörld, ünïcode ✓""#));
        lines.push(msg(
            "a2",
            r#""a1""#,
            "assistant",
            r#"[{"type":"text","text":"reading"},{"type":"toolCall","id":"t1","name":"read","arguments":{"path":"src/é.rs"}},{"type":"toolCall","id":"t2","name":"edit","arguments":{"path":"src/b.rs"}}]"#,
        ));
        lines.push(msg("a3", r#""a2""#, "", r#""a message whose role is empty""#));
        lines.push(r#"{"type":"label","id":"l1","parentId":"","timestamp":"","targetId":"a1","label":"orphan label"}"#.to_string());
        lines.push(format!(
            r#"{{"type":"compaction","id":"c1","parentId":"a3","timestamp":"{ts}","summary":"summary ✓","firstKeptEntryId":"a2","tokensBefore":10}}"#
        ));
        lines.push(format!(
            r#"{{"type":"compaction","id":"c2","parentId":"c1","timestamp":"{ts}","summary":"second","firstKeptEntryId":"","tokensBefore":10}}"#
        ));
        lines.push(format!(r#"{{"type":"model_change","id":"m1","parentId":"c2","timestamp":"{ts}","provider":"p","modelId":"m"}}"#));
        for i in 0..40 {
            let parent = if i == 0 { r#""m1""#.to_string() } else { format!(r#""u{}""#, i - 1) };
            lines.push(msg(&format!("u{i}"), &parent, "user", &format!(r#""question {i} ✓ {}""#, "x".repeat(i * 7))));
        }
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();

        // what the rows must hold: the engine's entries and their facts
        let s = session_engine::session::Session::open(&path).unwrap();
        assert_eq!(s.len(), lines.len() - 1);
        let mut want = Vec::new();
        for i in 0..s.len() {
            let e = s.entry(i);
            let f = analyze::entry_facts(s.kind(i), s.value(i));
            let body = Some(f.body.clone()).filter(|b| !b.is_empty());
            want.push((
                e.id.to_string(),
                e.parent_id.as_deref().map(str::to_string),
                e.type_name.to_string(),
                f.first_kept,
                Some(e.timestamp.to_string()),
                f.role,
                f.ctx,
                f.tok,
                f.usage,
                body,
            ));
        }
        assert_eq!(want[2].5.as_deref(), Some(""), "the empty role is kept");
        assert_eq!(want[3].1.as_deref(), Some(""), "the empty parentId is kept");
        assert_eq!(want[0].1, None);
        assert_eq!(want[5].3.as_deref(), Some(""), "the empty firstKeptEntryId is kept");

        let mut got = Vec::new();
        for streamed in [false, true] {
            let conn = crate::db::open(&dir.path().join(format!("i{streamed}.sqlite3")), &crate::db::OpenOptions::default(), &mut vec![]).unwrap();
            let u = if streamed {
                set_stream_window(300); // many windows, some lines longer than one
                let u = write_tx(&conn, || stream_full(&conn, &path, None, None, None)).unwrap();
                set_stream_window(8 << 20);
                u.expect("read in windows")
            } else {
                full(&conn, &path, None, None, None).unwrap()
            };
            let (entries, touched) = rows(&conn);
            let stripped: Vec<_> =
                entries.iter().map(|r| (r.0.clone(), r.1.clone(), r.2.clone(), r.3.clone(), r.4.clone(), r.5.clone(), r.6, r.7, r.8, r.10.clone())).collect();
            assert_eq!(stripped, want, "streamed: {streamed}");
            assert_eq!(touched, vec![(0, "src/é.rs".to_string()), (1, "src/b.rs".to_string())], "streamed: {streamed}");
            // the events are the first entries with their statuses, as stored
            let stored: Vec<_> = entries.iter().map(|r| (r.0.clone(), r.1.clone(), r.2.clone(), analyze::status_name(r.9))).collect();
            let events: Vec<_> = u.new_entries.iter().map(|e| (e.entry_id.clone(), e.parent_id.clone(), e.entry_type.clone(), e.status)).collect();
            assert_eq!(events, stored, "streamed: {streamed}");
            got.push(entries);
        }
        assert_eq!(got[0], got[1], "the same statuses both ways");
        assert!(got[0].iter().any(|r| r.9 != analyze::IN_CONTEXT), "the compactions leave some entries out of the context");
    }
}
