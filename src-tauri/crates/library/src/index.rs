//! Bringing one file's rows up to date: new, appended, replaced, truncated, rewritten, removed.
//!
//! A file is tracked by (dev, inode, size, mtime, header id, byte offset indexed up to, hash of the
//! first and last 4 KiB before that offset). Appended bytes are read from the stored offset only.
//! Anything else that changed (new inode, smaller than the offset, head or tail bytes differ) is
//! re-read in full. Only complete `\n`-terminated lines are indexed: a torn or still-being-written
//! last line is left pending and picked up when it is completed.
use crate::db::{classify_err, fnv64, now};
use crate::parse::{self, Line};
use crate::status::{self, Node};
use crate::{LibError, NewEntry};
use rusqlite::{params, Connection, OptionalExtension};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

const HASH_SPAN: u64 = 4096;
/// Most new entries listed in one [`FileUpdate`] (and watcher event); more means "reload it".
pub const MAX_EVENT_ENTRIES: usize = 1000;
const CHUNK: usize = 1 << 20;
/// Longest line indexed; longer ones are skipped and counted as bad (F16).
pub const MAX_LINE: usize = 32 << 20;

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
struct Row {
    id: i64,
    dev: i64,
    ino: i64,
    size: i64,
    mtime_ns: i64,
    offset: i64,
    head_hash: i64,
    tail_hash: i64,
    /// 0 = no JSON object seen yet, 1 = valid header first, 2 = rejected (first object not a header)
    valid: i64,
    header_id: Option<String>,
    name: Option<String>,
    model: Option<String>,
    first_message: Option<String>,
    modified_ms: Option<i64>,
    entry_count: i64,
    message_count: i64,
    compaction_count: i64,
    branch_count: i64,
    bad_lines: i64,
    files_read: Vec<String>,
    files_modified: Vec<String>,
    leaf_id: Option<String>,
    ctx_usage: Option<i64>,
    ctx_trailing: i64,
    // header facts (full read only)
    cwd: Option<String>,
    created: Option<String>,
    parent_session: Option<String>,
    version: Option<f64>,
    seen_object: bool,
}

struct Stat {
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
    let mtime_ns = md
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0);
    Stat { dev, ino, size: md.len() as i64, mtime_ns }
}

fn io_err(path: &Path, e: std::io::Error) -> LibError {
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

fn load_row(conn: &Connection, path: &str) -> rusqlite::Result<Option<Row>> {
    conn.prepare_cached(
        "SELECT id, dev, ino, size, mtime_ns, offset, head_hash, tail_hash, valid, header_id, name, model, first_message,
                modified_ms, entry_count, message_count, compaction_count, branch_count, bad_lines, leaf_id, ctx_usage,
                ctx_trailing, cwd, created, parent_session, version
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
            name: r.get(10)?,
            model: r.get(11)?,
            first_message: r.get(12)?,
            modified_ms: r.get(13)?,
            entry_count: r.get(14)?,
            message_count: r.get(15)?,
            compaction_count: r.get(16)?,
            branch_count: r.get(17)?,
            bad_lines: r.get(18)?,
            // only the paths found by this pass; stored ones live in `touched`
            files_read: Vec::new(),
            files_modified: Vec::new(),
            leaf_id: r.get(19)?,
            ctx_usage: r.get(20)?,
            ctx_trailing: r.get(21)?,
            cwd: r.get(22)?,
            created: r.get(23)?,
            parent_session: r.get(24)?,
            version: r.get(25)?,
            seen_object: false,
        })
    })
    .optional()
    .map(|o| o.map(|mut r| {
        r.seen_object = r.valid != 0;
        r
    }))
}

/// Drop every row of a file (entries, full-text rows, the file row).
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

/// Paths of this pass (duplicates are dropped by the `touched` table's UNIQUE constraint).
fn push_unique(v: &mut Vec<String>, items: Vec<String>) {
    for i in items {
        if v.last() != Some(&i) {
            v.push(i);
        }
    }
}

/// Bring one file's rows up to date.
pub(crate) fn sync_file(conn: &Connection, path: &Path, root: Option<&Path>) -> Result<FileUpdate, LibError> {
    let key = path.to_string_lossy().to_string();
    let md = match std::fs::metadata(path) {
        Ok(m) if m.is_file() => Some(m),
        Ok(_) => None, // a directory or device named *.jsonl (F19): not a session
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(io_err(path, e)),
    };
    let row = load_row(conn, &key).map_err(classify_err)?;
    let Some(md) = md else {
        if let Some(row) = row {
            write_tx(conn, || remove_file_rows(conn, row.id, false).map_err(classify_err))?;
            return Ok(FileUpdate { change: Change::Removed, session_id: row.header_id, new_entries: vec![], bytes_read: 0, reason: None });
        }
        return Ok(FileUpdate { change: Change::Unchanged, session_id: None, new_entries: vec![], bytes_read: 0, reason: None });
    };
    let st = stat(&md);
    let mut f = File::open(path).map_err(|e| io_err(path, e))?;

    // Decide: unchanged, append, or full.
    let mut full_reason: Option<&'static str> = None;
    if let Some(r) = &row {
        if r.dev != st.dev || r.ino != st.ino {
            full_reason = Some("replaced (new inode)");
        } else if st.size < r.offset {
            full_reason = Some("truncated");
        } else {
            let (h, t) = hashes(&mut f, r.offset as u64).map_err(|e| io_err(path, e))?;
            if h != r.head_hash || t != r.tail_hash {
                full_reason = Some("rewritten (head or tail bytes differ)");
            } else if st.size == r.size && st.mtime_ns == r.mtime_ns {
                return Ok(FileUpdate { change: Change::Unchanged, session_id: r.header_id.clone(), new_entries: vec![], bytes_read: 0, reason: None });
            }
        }
    }

    let full = row.is_none() || full_reason.is_some();
    let root_s = root.map(|r| r.to_string_lossy().to_string());
    write_tx(conn, || {
        let mut r = match (&row, full) {
            (Some(old), true) => {
                remove_file_rows(conn, old.id, true).map_err(classify_err)?;
                Row { id: old.id, ..Default::default() }
            }
            (Some(old), false) => old.clone(),
            (None, _) => {
                conn.prepare_cached("INSERT INTO files(path, root) VALUES (?1, ?2)")
                    .and_then(|mut s| s.execute(params![key, root_s]))
                    .map_err(classify_err)?;
                Row { id: conn.last_insert_rowid(), ..Default::default() }
            }
        };
        if full {
            r.offset = 0;
        }
        let start = r.offset as u64;
        let old_leaf = r.leaf_id.clone();
        let mut new_nodes: Vec<(i64, Node, Option<NewEntry>)> = Vec::new();
        let consumed = ingest(conn, &mut f, start, &mut r, &mut new_nodes).map_err(|e| match e {
            IngestErr::Io(e) => io_err(path, e),
            IngestErr::Db(e) => classify_err(e),
            IngestErr::Stopped => LibError::Sqlite("indexing stopped".into()),
        })?;
        r.offset = consumed as i64;

        // Statuses.
        let fast = !full
            && !new_nodes.is_empty()
            && new_nodes.iter().all(|(_, n, _)| !n.is_compaction)
            && chain_from(&old_leaf, &new_nodes)
            && !has_duplicate_ids(conn, r.id, &new_nodes).map_err(classify_err)?;
        if new_nodes.is_empty() {
            // nothing new (a pending torn tail grew, or only bad lines)
        } else if fast {
            for (_, n, _) in &new_nodes {
                if n.ctx {
                    if let Some(u) = n.usage {
                        r.ctx_usage = Some(u);
                        r.ctx_trailing = 0;
                    } else {
                        r.ctx_trailing += n.tok;
                    }
                }
            }
        } else {
            recompute(conn, &mut r, if full { Some(&new_nodes) } else { None }).map_err(classify_err)?;
        }
        if let Some((_, n, _)) = new_nodes.last() {
            r.leaf_id = Some(n.id.clone());
        }
        if !new_nodes.is_empty() && !fast {
            // statuses of the new entries may have changed by the recompute
            let mut q = conn.prepare_cached("SELECT status FROM entries WHERE rowid = ?1").map_err(classify_err)?;
            for (rowid, _, ne) in new_nodes.iter_mut().filter(|x| x.2.is_some()) {
                let Some(ne) = ne else { continue };
                ne.status = status::status_name(q.query_row([*rowid], |x| x.get(0)).map_err(classify_err)?);
            }
        }

        {
            let mut ins = conn
                .prepare_cached("INSERT OR IGNORE INTO touched(file_id, op, path) VALUES (?1, ?2, ?3)")
                .map_err(classify_err)?;
            for (op, list) in [(0, &r.files_read), (1, &r.files_modified)] {
                for p in list {
                    ins.execute(params![r.id, op, p]).map_err(classify_err)?;
                }
            }
        }
        let (h, t) = hashes(&mut f, r.offset as u64).map_err(|e| io_err(path, e))?;
        let created_ms = r.created.as_deref().and_then(parse::iso_to_ms);
        conn.prepare_cached(
            "UPDATE files SET root = COALESCE(?2, root), dev=?3, ino=?4, size=?5, mtime_ns=?6, offset=?7, head_hash=?8, tail_hash=?9,
               valid=?10, header_id=?11, cwd=?12, created=?13, created_ms=?14, parent_session=?15, version=?16, name=?17,
               model=?18, first_message=?19, modified_ms=?20, entry_count=?21, message_count=?22, compaction_count=?23,
               branch_count=?24, bad_lines=?25, files_read=?26, files_modified=?27, leaf_id=?28, ctx_usage=?29,
               ctx_trailing=?30, indexed_ms=?31
             WHERE id = ?1",
        )
        .and_then(|mut s| {
            s.execute(params![
                r.id,
                root_s,
                st.dev,
                st.ino,
                st.size,
                st.mtime_ns,
                r.offset,
                h,
                t,
                r.valid,
                r.header_id,
                r.cwd,
                r.created,
                created_ms,
                r.parent_session,
                r.version,
                r.name,
                r.model,
                r.first_message,
                r.modified_ms.or(created_ms),
                r.entry_count,
                r.message_count,
                r.compaction_count,
                r.branch_count,
                r.bad_lines,
                "[]",
                "[]",
                r.leaf_id,
                r.ctx_usage,
                r.ctx_trailing,
                now(),
            ])
        })
        .map_err(classify_err)?;
        let change = if row.is_none() {
            Change::New
        } else if full {
            Change::Reindexed
        } else if new_nodes.is_empty() {
            Change::Unchanged
        } else {
            Change::Appended
        };
        Ok(FileUpdate {
            change,
            session_id: r.header_id.clone(),
            new_entries: new_nodes.into_iter().filter_map(|(_, _, ne)| ne).collect(),
            bytes_read: consumed - start,
            reason: full_reason,
        })
    })
}

fn chain_from(old_leaf: &Option<String>, new_nodes: &[(i64, Node, Option<NewEntry>)]) -> bool {
    let mut prev = old_leaf.clone();
    for (_, n, _) in new_nodes {
        if n.parent_id != prev {
            return false;
        }
        prev = Some(n.id.clone());
    }
    true
}

fn has_duplicate_ids(conn: &Connection, file_id: i64, new_nodes: &[(i64, Node, Option<NewEntry>)]) -> rusqlite::Result<bool> {
    let mut q = conn.prepare_cached("SELECT count(*) FROM entries WHERE file_id = ?1 AND entry_id = ?2")?;
    for (_, n, _) in new_nodes {
        let c: i64 = q.query_row(params![file_id, n.id], |r| r.get(0))?;
        if c > 1 {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Recompute every status of a file from its entry rows (or from `fresh` after a full read),
/// writing only the statuses that changed.
fn recompute(conn: &Connection, r: &mut Row, fresh: Option<&Vec<(i64, Node, Option<NewEntry>)>>) -> rusqlite::Result<()> {
    let (rowids, nodes, old): (Vec<i64>, Vec<Node>, Vec<i64>) = match fresh {
        Some(v) => (v.iter().map(|x| x.0).collect(), v.iter().map(|x| x.1.clone()).collect(), vec![status::IN_CONTEXT; v.len()]),
        None => {
            let mut q = conn.prepare_cached(
                "SELECT rowid, entry_id, parent_id, type = 'compaction', first_kept, ctx, tok, usage, status FROM entries WHERE file_id = ?1 ORDER BY rowid",
            )?;
            let mut ids = Vec::new();
            let mut nodes = Vec::new();
            let mut old = Vec::new();
            let rows = q.query_map([r.id], |x| {
                Ok((
                    x.get::<_, i64>(0)?,
                    Node {
                        id: x.get(1)?,
                        parent_id: x.get(2)?,
                        is_compaction: x.get(3)?,
                        first_kept: x.get(4)?,
                        ctx: x.get(5)?,
                        tok: x.get(6)?,
                        usage: x.get(7)?,
                    },
                    x.get::<_, i64>(8)?,
                ))
            })?;
            for row in rows {
                let (a, b, c) = row?;
                ids.push(a);
                nodes.push(b);
                old.push(c);
            }
            (ids, nodes, old)
        }
    };
    let o = status::classify(&nodes);
    let mut up = conn.prepare_cached("UPDATE entries SET status = ?2 WHERE rowid = ?1")?;
    for i in 0..nodes.len() {
        if o.status[i] != old[i] {
            up.execute(params![rowids[i], o.status[i]])?;
        }
    }
    r.ctx_usage = o.ctx_usage;
    r.ctx_trailing = o.ctx_trailing;
    r.branch_count = o.branches;
    Ok(())
}

enum IngestErr {
    Io(std::io::Error),
    Db(rusqlite::Error),
    /// The writer stopped (after a database error); never escapes `ingest`.
    Stopped,
}

/// Read complete lines from `start` to the end of the file and parse them, handing each parsed
/// line to `sink` in file order. Returns the offset just after the last complete line (or before
/// an unfinished oversized line).
fn read_lines(f: &mut File, start: u64, sink: &mut dyn FnMut(Line) -> Result<(), IngestErr>) -> Result<u64, IngestErr> {
    f.seek(SeekFrom::Start(start)).map_err(IngestErr::Io)?;
    let mut buf: Vec<u8> = Vec::with_capacity(CHUNK);
    let mut base = start; // file offset of buf[0]
    let mut eof = false;
    // An oversized line (F16: e.g. a 100 MB base64 blob) is skipped and counted, never buffered whole.
    let mut skipping_from: Option<u64> = None;
    while !eof {
        let len = buf.len();
        let want = CHUNK.max(len / 2);
        buf.resize(len + want, 0);
        let n = f.read(&mut buf[len..]).map_err(IngestErr::Io)?;
        buf.truncate(len + n);
        if n == 0 {
            eof = true;
        }
        if skipping_from.is_some() {
            match memchr::memchr(b'\n', &buf) {
                None => {
                    base += buf.len() as u64;
                    buf.clear();
                    continue;
                }
                Some(i) => {
                    sink(Line::Bad("line too long"))?;
                    skipping_from = None;
                    base += (i + 1) as u64;
                    buf.drain(..=i);
                }
            }
        }
        let Some(last_nl) = memchr::memrchr(b'\n', &buf) else {
            if buf.len() > MAX_LINE {
                skipping_from = Some(base);
                base += buf.len() as u64;
                buf.clear();
            }
            continue;
        };
        for line in buf[..=last_nl].split(|&b| b == b'\n') {
            if line.is_empty() {
                continue;
            }
            sink(if line.len() > MAX_LINE { Line::Bad("line too long") } else { parse::parse_line(line) })?;
        }
        base += (last_nl + 1) as u64;
        buf.drain(..=last_nl);
    }
    Ok(skipping_from.unwrap_or(base))
}

/// Parse on a second thread while this one writes to SQLite (for more than a few MB).
const PIPELINE_MIN: u64 = 4 << 20;

/// Index complete lines from `start`: entry rows, full-text rows, facts in `r`.
fn ingest(conn: &Connection, f: &mut File, start: u64, r: &mut Row, out: &mut Vec<(i64, Node, Option<NewEntry>)>) -> Result<u64, IngestErr> {
    let mut ins_e = conn
        .prepare_cached(
            "INSERT INTO entries(file_id, seq, entry_id, parent_id, type, role, ts, first_kept, ctx, tok, usage, status)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, 0)",
        )
        .map_err(IngestErr::Db)?;
    let mut ins_f = conn.prepare_cached("INSERT INTO fts(rowid, body) VALUES (?1, ?2)").map_err(IngestErr::Db)?;
    let size = f.metadata().map_err(IngestErr::Io)?.len();
    if size.saturating_sub(start) < PIPELINE_MIN {
        return read_lines(f, start, &mut |l| handle_line(l, r, &mut ins_e, &mut ins_f, out).map_err(IngestErr::Db));
    }
    std::thread::scope(|sc| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<Line>>(2);
        let reader = sc.spawn(move || {
            let mut batch = Vec::with_capacity(256);
            let res = read_lines(f, start, &mut |l| {
                batch.push(l);
                if batch.len() >= 256 {
                    tx.send(std::mem::replace(&mut batch, Vec::with_capacity(256))).map_err(|_| IngestErr::Stopped)?;
                }
                Ok(())
            });
            if !batch.is_empty() {
                let _ = tx.send(batch);
            }
            res
        });
        let mut db_err = None;
        for batch in rx {
            for l in batch {
                if let Err(e) = handle_line(l, r, &mut ins_e, &mut ins_f, out) {
                    db_err = Some(e);
                    break;
                }
            }
            if db_err.is_some() {
                break; // dropping rx stops the reader
            }
        }
        let res = reader.join().unwrap_or(Err(IngestErr::Stopped));
        match db_err {
            Some(e) => Err(IngestErr::Db(e)),
            None => res,
        }
    })
}

fn handle_line(
    parsed: Line,
    r: &mut Row,
    ins_e: &mut rusqlite::CachedStatement,
    ins_f: &mut rusqlite::CachedStatement,
    out: &mut Vec<(i64, Node, Option<NewEntry>)>,
) -> rusqlite::Result<()> {
    match parsed {
        Line::Blank => {}
        Line::Bad(_) => r.bad_lines += 1,
        Line::Header(h) => {
            if !r.seen_object {
                r.seen_object = true;
                r.valid = 1;
                r.header_id = Some(h.id);
                r.cwd = h.cwd;
                r.created = h.timestamp;
                r.version = h.version;
                r.parent_session = h.parent_session;
            }
            // later headers (Pi's duplicate flush) are ignored as entries
        }
        Line::Entry(e) => {
            if !r.seen_object {
                // first parsed object is not a header: Pi rejects the whole file (§6.1)
                r.seen_object = true;
                r.valid = 2;
            }
            if r.valid != 1 {
                return Ok(());
            }
            let e = *e;
            let seq = r.entry_count;
            r.entry_count += 1;
            if e.ty == "message" {
                r.message_count += 1;
            }
            if e.ty == "compaction" {
                r.compaction_count += 1;
            }
            if let Some(n) = e.name {
                r.name = if n.is_empty() { None } else { Some(n) };
            }
            if e.model.is_some() {
                r.model = e.model;
            }
            if r.first_message.is_none() {
                if let Some(t) = e.first_user_text {
                    r.first_message = Some(t);
                }
            }
            if let Some(m) = e.modified_ms {
                r.modified_ms = Some(r.modified_ms.map_or(m, |x| x.max(m)));
            }
            push_unique(&mut r.files_read, e.files_read);
            push_unique(&mut r.files_modified, e.files_modified);
            let rowid = ins_e.insert(params![r.id, seq, e.id, e.parent_id, e.ty, e.role, e.timestamp, e.first_kept, e.ctx, e.tok, e.usage])?;
            if !e.body.is_empty() {
                ins_f.execute(params![rowid, e.body])?;
            }
            // events carry at most MAX_EVENT_ENTRIES new entries (a bigger change means: reload)
            let ne = (out.len() < MAX_EVENT_ENTRIES)
                .then(|| NewEntry { entry_id: e.id.clone(), parent_id: e.parent_id.clone(), entry_type: e.ty.clone(), status: "in_context" });
            out.push((
                rowid,
                Node { id: e.id, parent_id: e.parent_id, is_compaction: e.ty == "compaction", first_kept: e.first_kept, ctx: e.ctx, tok: e.tok, usage: e.usage },
                ne,
            ));
        }
    }
    Ok(())
}

