//! A session file's row in `files` as the indexer tracks it (dev, inode, size, mtime, the byte
//! offset indexed up to, the hashes of the bytes before it), and reading those bytes back.
use crate::db::{classify_err, fnv64_pair};
use crate::error::LibError;
use rusqlite::{Connection, OptionalExtension};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// Bytes hashed at each end of the indexed part of a file.
pub(crate) const HASH_SPAN: u64 = 4096;

#[derive(Debug, Default, Clone)]
pub(crate) struct Row {
    pub id: i64,
    pub dev: i64,
    pub ino: i64,
    pub size: i64,
    pub mtime_ns: i64,
    pub offset: i64,
    pub head_hash: i64,
    pub tail_hash: i64,
    pub valid: i64,
    pub header_id: Option<String>,
    pub message_count: i64,
    pub compaction_count: i64,
    pub entry_count: i64,
    pub bad_lines: i64,
    pub modified_ms: Option<i64>,
    pub first_message: Option<String>,
    pub leaf_id: Option<String>,
    pub ctx_usage: Option<i64>,
    pub ctx_trailing: i64,
    pub branch_count: i64,
    /// 0 = phase 2 pending, 1 = done, 2 = the file changed during phase 2: re-read in full
    pub fts_done: i64,
    pub open_tail: bool,
    pub migrated: bool,
    /// The cost of forgetting and the compactions it sums over (None: phase 2 pending).
    pub forget_cost: Option<i64>,
    pub forget_compactions: Option<i64>,
}

pub(crate) struct Stat {
    pub dev: i64,
    pub ino: i64,
    pub size: i64,
    pub mtime_ns: i64,
}

pub(crate) fn stat(md: &std::fs::Metadata) -> Stat {
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

fn read_span(f: &mut File, from: u64, to: u64) -> std::io::Result<Vec<u8>> {
    let mut buf = vec![0u8; (to - from) as usize];
    f.seek(SeekFrom::Start(from))?;
    f.read_exact(&mut buf)?;
    Ok(buf)
}

/// The hashes of the first and last [`HASH_SPAN`] bytes before `offset`.
pub(crate) fn hashes(f: &mut File, offset: u64) -> std::io::Result<(i64, i64)> {
    let head = read_span(f, 0, offset.min(HASH_SPAN))?;
    let tail = read_span(f, offset.saturating_sub(HASH_SPAN), offset)?;
    Ok(fnv64_pair(&head, &tail))
}

/// [`hashes`] of bytes in memory.
pub(crate) fn hashes_of(buf: &[u8], offset: usize) -> (i64, i64) {
    fnv64_pair(&buf[..offset.min(HASH_SPAN as usize)], &buf[offset.saturating_sub(HASH_SPAN as usize)..offset])
}

/// Read until `out` is full or the file ends; the number of bytes read.
pub(crate) fn read_full(f: &mut File, out: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < out.len() {
        match f.read(&mut out[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

pub(crate) fn load_row(conn: &Connection, path: &str) -> rusqlite::Result<Option<Row>> {
    conn.prepare_cached(
        "SELECT id, dev, ino, size, mtime_ns, offset, head_hash, tail_hash, valid, header_id, message_count, compaction_count,
                entry_count, bad_lines, modified_ms, first_message, leaf_id, ctx_usage, ctx_trailing, branch_count, fts_done,
                open_tail, migrated, forget_cost, forget_compactions
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
            forget_cost: r.get(23)?,
            forget_compactions: r.get(24)?,
        })
    })
    .optional()
}

/// Drop every row of a file (entries, full-text rows, the ids appends check, file lists, and the
/// file row itself unless `keep_file_row`).
pub(crate) fn remove_file_rows(conn: &Connection, file_id: i64, keep_file_row: bool) -> rusqlite::Result<()> {
    conn.prepare_cached("DELETE FROM fts WHERE rowid IN (SELECT rowid FROM entries WHERE file_id = ?1)")?
        .execute([file_id])?;
    conn.prepare_cached("DELETE FROM entries WHERE file_id = ?1")?.execute([file_id])?;
    conn.prepare_cached("DELETE FROM entry_ids WHERE file_id = ?1")?.execute([file_id])?;
    conn.prepare_cached("DELETE FROM touched WHERE file_id = ?1")?.execute([file_id])?;
    if !keep_file_row {
        conn.prepare_cached("DELETE FROM files WHERE id = ?1")?.execute([file_id])?;
    }
    Ok(())
}

/// A file whose phase 2 is pending: (file id, path, offset, head hash, tail hash).
pub(crate) type Pending = (i64, PathBuf, u64, i64, i64, i64);

/// Every file with phase 2 pending, in id order.
pub(crate) fn pending_fulltext(conn: &Connection) -> Result<Vec<Pending>, LibError> {
    let mut q = conn
        .prepare_cached(
            "SELECT id, path, offset, head_hash, tail_hash, bad_lines FROM files WHERE fts_done = 0 ORDER BY id",
        )
        .map_err(classify_err)?;
    let rows = q
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                PathBuf::from(r.get::<_, String>(1)?),
                r.get::<_, i64>(2)? as u64,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
            ))
        })
        .map_err(classify_err)?;
    rows.collect::<Result<_, _>>().map_err(classify_err)
}

/// Open a session file for reading.
pub(crate) fn open(path: &Path) -> Result<File, LibError> {
    File::open(path).map_err(|e| LibError::read(path, e))
}
