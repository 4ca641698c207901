//! The SQLite file: open, check, migrate, and move aside when it cannot be trusted.
//!
//! The index is a cache of the JSONL files. A file that SQLite calls corrupt or "not a database",
//! that fails `quick_check`, or that carries a `user_version` newer than this build knows, is
//! renamed to `<name>.corrupt-<epoch ms>` (with its `-wal`) and a fresh index is built; the caller
//! gets a [`Notice`] to show. A newer schema is never written: this build does not know what its
//! rows mean, and the newer Arbor that made it may still be using it.
use crate::error::{LibError, Notice};
use rusqlite::{Connection, ErrorCode};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The full-text tokenizer (also the snippets' table's, so their tokens are the index's).
pub(crate) const FTS_TOKENIZE: &str = "'unicode61 remove_diacritics 2'";

/// Current schema version (`PRAGMA user_version`).
pub const SCHEMA_VERSION: i64 = 6;

#[derive(Debug, Clone)]
pub struct OpenOptions {
    /// How long a write waits for another instance's write transaction (another window or the CLI
    /// may be indexing); after that the write fails with [`LibError::Busy`].
    pub busy_timeout: Duration,
    /// Run `PRAGMA quick_check` on the small tables when opening (on by default).
    pub quick_check: bool,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions { busy_timeout: Duration::from_secs(5), quick_check: true }
    }
}

/// v6 (v3: the engine's rules, two-phase indexing: `fts_done`, `open_tail`, `migrated`; v4: the
/// cost of forgetting, `forget_*` per session and each entry's `acts` and `edit_origin`; v5: the
/// full-text table keeps no copy of the text (`content=''`): an entry's line is found again by
/// `off` and `len`, and `bh` (a hash of the indexed text) says whether it still gives that text;
/// v6: narrower entry rows, which were most of the full-text pass's cost above bare FTS5. A row
/// keeps what a query filters or sorts by and what a status recompute needs without reading the
/// file (ids, type, firstKeptEntryId, estimate, status, acts); a hit's role and timestamp are
/// read again from its line with its text, and `bh` covers them too. `type` has no declared type:
/// a type the engine knows is stored as its number ([`type_sql`]), any other as its name. No
/// `seq`: a legacy file's entry is found in the engine's load by its line's offset. The entries
/// are indexed by file only: an index by id took a random-order insert per row, a twentieth of
/// the pass; the ids an append checks for duplicates are in `entry_ids`, filled at a file's
/// first append.)
const SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS user_roots(path TEXT PRIMARY KEY, added_ms INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS files(
  id INTEGER PRIMARY KEY,
  path TEXT NOT NULL UNIQUE,
  root TEXT,
  dev INTEGER NOT NULL DEFAULT 0,
  ino INTEGER NOT NULL DEFAULT 0,
  size INTEGER NOT NULL DEFAULT 0,
  mtime_ns INTEGER NOT NULL DEFAULT 0,
  offset INTEGER NOT NULL DEFAULT 0,
  head_hash INTEGER NOT NULL DEFAULT 0,
  tail_hash INTEGER NOT NULL DEFAULT 0,
  valid INTEGER NOT NULL DEFAULT 0,
  header_id TEXT,
  cwd TEXT,
  created TEXT,
  created_ms INTEGER,
  parent_session TEXT,
  version REAL,
  name TEXT,
  model TEXT,
  first_message TEXT,
  modified_ms INTEGER,
  entry_count INTEGER NOT NULL DEFAULT 0,
  message_count INTEGER NOT NULL DEFAULT 0,
  compaction_count INTEGER NOT NULL DEFAULT 0,
  branch_count INTEGER NOT NULL DEFAULT 0,
  bad_lines INTEGER NOT NULL DEFAULT 0,
  files_read TEXT NOT NULL DEFAULT '[]',
  files_modified TEXT NOT NULL DEFAULT '[]',
  leaf_id TEXT,
  ctx_usage INTEGER,
  ctx_trailing INTEGER NOT NULL DEFAULT 0,
  indexed_ms INTEGER,
  fts_done INTEGER NOT NULL DEFAULT 0,
  open_tail INTEGER NOT NULL DEFAULT 0,
  migrated INTEGER NOT NULL DEFAULT 0,
  forget_cost INTEGER,
  forget_compactions INTEGER,
  forget_open BLOB
);
CREATE INDEX IF NOT EXISTS files_cwd ON files(cwd);
CREATE INDEX IF NOT EXISTS files_header ON files(header_id);
CREATE TABLE IF NOT EXISTS entries(
  rowid INTEGER PRIMARY KEY,
  file_id INTEGER NOT NULL,
  entry_id TEXT NOT NULL,
  parent_id TEXT,
  type NOT NULL,
  first_kept TEXT,
  ctx INTEGER NOT NULL,
  tok INTEGER NOT NULL,
  usage INTEGER,
  status INTEGER NOT NULL DEFAULT 0,
  acts BLOB,
  edit_origin TEXT,
  off INTEGER,
  len INTEGER,
  bh INTEGER
);
CREATE INDEX IF NOT EXISTS entries_file ON entries(file_id);
CREATE TABLE IF NOT EXISTS entry_ids(
  file_id INTEGER NOT NULL,
  entry_id TEXT NOT NULL,
  PRIMARY KEY(file_id, entry_id)
) WITHOUT ROWID;
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(body, content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2');
"#;

/// Paths read / modified by a session's tool calls, one row each, so an append adds only its
/// new paths (the JSON columns `files_read`/`files_modified` of v1 are left empty).
const SCHEMA_TOUCHED: &str = r#"
CREATE TABLE IF NOT EXISTS touched(
  id INTEGER PRIMARY KEY,
  file_id INTEGER NOT NULL,
  op INTEGER NOT NULL,
  path TEXT NOT NULL,
  UNIQUE(file_id, op, path)
);
"#;

/// The entry types the engine knows (`session_engine::session::Kind`), by the number the
/// entries table stores for each.
const KNOWN_TYPES: [&str; 9] = [
    "message",
    "thinking_level_change",
    "model_change",
    "compaction",
    "branch_summary",
    "custom",
    "custom_message",
    "label",
    "session_info",
];

/// An entry's `type` as the entries table stores it: a type the engine knows as its number (one
/// byte, or none, in the row instead of up to 21), any other type as its name, so that no name is
/// lost.
pub(crate) fn type_sql(t: &str) -> rusqlite::types::ToSqlOutput<'_> {
    use rusqlite::types::{ToSqlOutput, Value, ValueRef};
    match KNOWN_TYPES.iter().position(|k| *k == t) {
        Some(n) => ToSqlOutput::Owned(Value::Integer(n as i64)),
        None => ToSqlOutput::Borrowed(ValueRef::Text(t.as_bytes())),
    }
}

/// The type name a stored `type` ([`type_sql`]) stands for.
pub(crate) fn type_of_sql(v: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<String> {
    use rusqlite::types::{FromSqlError, ValueRef};
    match v {
        ValueRef::Integer(n) => usize::try_from(n)
            .ok()
            .and_then(|n| KNOWN_TYPES.get(n))
            .map(|t| t.to_string())
            .ok_or(FromSqlError::OutOfRange(n)),
        ValueRef::Text(t) => Ok(String::from_utf8_lossy(t).into_owned()),
        _ => Err(FromSqlError::InvalidType),
    }
}

pub(crate) fn classify_err(e: rusqlite::Error) -> LibError {
    if let rusqlite::Error::SqliteFailure(f, _) = &e {
        match f.code {
            ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase => return LibError::SqliteCorrupt(e),
            ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => {
                return LibError::Busy(
                    "the index is busy: another Arbor instance is writing it; try again in a moment".into(),
                )
            }
            // A full disk, a file-size limit (EFBIG comes back as an I/O write error) or a write
            // that failed: the index is not damaged (the transaction rolls back), it needs space.
            // Not `Sqlite`, which would move the index aside as if it were corrupt.
            ErrorCode::DiskFull => return LibError::DiskFull(e),
            ErrorCode::SystemIoFailure if is_write_ioerr(f.extended_code) => return LibError::DiskFull(e),
            _ => {}
        }
    }
    LibError::Sqlite(e)
}

/// SQLITE_IOERR_WRITE, _FSYNC, _TRUNCATE, _SHMSIZE, _DIR_FSYNC: writing failed.
fn is_write_ioerr(extended: std::ffi::c_int) -> bool {
    matches!(extended, 778 | 1034 | 1546 | 4874 | 5130)
}

enum OpenFail {
    Bad(String),
    Other(LibError),
}

fn try_open(path: &Path, opts: &OpenOptions) -> Result<Connection, OpenFail> {
    let conn = Connection::open(path).map_err(|e| OpenFail::Other(classify_err(e)))?;
    let bad = |e: rusqlite::Error| match classify_err(e) {
        LibError::SqliteCorrupt(e) => OpenFail::Bad(e.to_string()),
        other => OpenFail::Other(other),
    };
    conn.busy_timeout(opts.busy_timeout).map_err(bad)?;
    let v: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(bad)?;
    if v > SCHEMA_VERSION {
        return Err(OpenFail::Bad(format!(
            "the index was written by a newer Arbor (schema {v}, this build knows {SCHEMA_VERSION})"
        )));
    }
    // A new index is made without waiting for the disk (six fsyncs, 3 to 25 ms of a cold list
    // on a busy machine): until its first checkpoint syncs it, a power cut can only leave a file
    // that the next open finds damaged and builds again, as it would a cache.
    if v == 0 {
        conn.execute_batch("PRAGMA synchronous=OFF").map_err(bad)?;
    }
    let _: String = conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0)).map_err(bad)?;
    if opts.quick_check && v > 0 {
        // Only the small tables: a whole-file quick_check also runs FTS5's integrity check,
        // which re-tokenizes every row (about 1 s per 100 MB of index). Damage elsewhere shows
        // up as SQLITE_CORRUPT on use; sync then rebuilds, and [`crate::Library::check`] runs
        // the full check on demand.
        for t in ["files", "user_roots", "meta"] {
            let res: String = conn.query_row(&format!("PRAGMA quick_check({t})"), [], |r| r.get(0)).map_err(bad)?;
            if res != "ok" {
                return Err(OpenFail::Bad(format!("quick_check failed: {res}")));
            }
        }
    }
    if v < SCHEMA_VERSION {
        migrate(&conn, v).map_err(bad)?;
    }
    conn.execute_batch("PRAGMA synchronous=NORMAL; PRAGMA temp_store=MEMORY; PRAGMA cache_size=-16000;")
        .map_err(bad)?;
    // The schema may be damaged without quick_check noticing (or it was off): touch every table.
    conn.query_row("SELECT (SELECT count(*) FROM files LIMIT 1) + (SELECT count(*) FROM user_roots)", [], |r| {
        r.get::<_, i64>(0)
    })
    .map_err(|e| match classify_err(e) {
        LibError::Sqlite(e) | LibError::SqliteCorrupt(e) => OpenFail::Bad(e.to_string()),
        other => OpenFail::Other(other),
    })?;
    Ok(conn)
}

/// Migrations run inside one `BEGIN IMMEDIATE` transaction, so that a crash in the middle leaves
/// the old version, never a half-migrated index.
fn migrate(conn: &Connection, from: i64) -> rusqlite::Result<()> {
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let r = (|| {
        if from > 0 {
            // v1/v2 rows were made by the old parser, v3 rows lack the cost of forgetting (which
            // needs every entry's acts), v4 rows lack where each entry's text is in its file
            // (the full-text table of v4 kept a copy instead), v5 rows hold a role and timestamp
            // that v6 reads from the file, and a text hash that does not cover them; the index is
            // a cache: start again
            conn.execute_batch("DROP TABLE IF EXISTS fts; DROP TABLE IF EXISTS entries; DROP TABLE IF EXISTS files; DROP TABLE IF EXISTS touched; DROP TABLE IF EXISTS entry_ids;")?;
        }
        conn.execute_batch(SCHEMA)?;
        conn.execute_batch(SCHEMA_TOUCHED)?;
        // pending full-text terms kept in memory before a flush (default 1 MB)
        conn.execute_batch("INSERT INTO fts(fts, rank) VALUES('hashsize', 16777216)")?;
        conn.execute_batch(&format!("PRAGMA user_version = {SCHEMA_VERSION}"))?;
        Ok(())
    })();
    match r {
        Ok(()) => conn.execute_batch("COMMIT"),
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

/// Rename `path` (and its `-wal`; drop its `-shm`) to `<path>.corrupt-<ms>`. Returns the new name.
pub(crate) fn move_aside(path: &Path) -> Result<PathBuf, LibError> {
    let aside = PathBuf::from(format!("{}.corrupt-{}", path.display(), now_ms()));
    std::fs::rename(path, &aside).map_err(|source| LibError::MoveAside { path: path.to_path_buf(), source })?;
    let wal = PathBuf::from(format!("{}-wal", path.display()));
    if wal.exists() {
        let _ = std::fs::rename(&wal, format!("{}-wal", aside.display()));
    }
    let _ = std::fs::remove_file(format!("{}-shm", path.display()));
    Ok(aside)
}

/// Open the index at `path`, creating, migrating or replacing it as needed.
pub(crate) fn open(path: &Path, opts: &OpenOptions, notices: &mut Vec<Notice>) -> Result<Connection, LibError> {
    if let Some(dir) = path.parent() {
        if !dir.as_os_str().is_empty() {
            std::fs::create_dir_all(dir).map_err(|source| LibError::IndexFolder { path: dir.to_path_buf(), source })?;
        }
    }
    for _ in 0..2 {
        match try_open(path, opts) {
            Ok(c) => return Ok(c),
            Err(OpenFail::Other(e)) => return Err(e),
            Err(OpenFail::Bad(reason)) => {
                let aside = move_aside(path)?;
                notices.push(Notice::IndexReplaced { reason, moved_to: aside });
            }
        }
    }
    Err(LibError::Corrupt(format!("the index at {} could not be rebuilt; delete it and retry", path.display())))
}

/// Run `f` inside `BEGIN IMMEDIATE … COMMIT`, rolling back on error. Inside an open
/// transaction (a batch of files) it uses a savepoint, so one failing file leaves no trace.
pub(crate) fn write_tx<T>(conn: &Connection, f: impl FnOnce() -> Result<T, LibError>) -> Result<T, LibError> {
    write_tx_if(conn, f, |_| true)
}

/// [`write_tx`] that also rolls back when `f` gives `Ok(None)` (nothing to keep).
pub(crate) fn write_tx_some<T>(
    conn: &Connection,
    f: impl FnOnce() -> Result<Option<T>, LibError>,
) -> Result<Option<T>, LibError> {
    write_tx_if(conn, f, Option::is_some)
}

/// [`write_tx`], committing only an `Ok` value that `keep` accepts (the others roll back).
fn write_tx_if<T>(
    conn: &Connection,
    f: impl FnOnce() -> Result<T, LibError>,
    keep: impl FnOnce(&T) -> bool,
) -> Result<T, LibError> {
    let nested = !conn.is_autocommit();
    conn.execute_batch(if nested { "SAVEPOINT file" } else { "BEGIN IMMEDIATE" }).map_err(classify_err)?;
    let roll_back = || {
        let _ = conn.execute_batch(if nested { "ROLLBACK TO file; RELEASE file" } else { "ROLLBACK" });
    };
    match f() {
        Ok(v) if keep(&v) => {
            conn.execute_batch(if nested { "RELEASE file" } else { "COMMIT" }).map_err(classify_err)?;
            Ok(v)
        }
        Ok(v) => {
            roll_back();
            Ok(v)
        }
        Err(e) => {
            roll_back();
            Err(e)
        }
    }
}

/// [`fnv64`] of two byte strings at once (a file's head and tail): the two multiply chains
/// overlap instead of running one after the other.
pub(crate) fn fnv64_pair(a: &[u8], b: &[u8]) -> (i64, i64) {
    const P: u64 = 0x100000001b3;
    let (mut ha, mut hb): (u64, u64) = (0xcbf29ce484222325, 0xcbf29ce484222325);
    let n = a.len().min(b.len());
    for (&x, &y) in a[..n].iter().zip(&b[..n]) {
        ha = (ha ^ x as u64).wrapping_mul(P);
        hb = (hb ^ y as u64).wrapping_mul(P);
    }
    for &x in &a[n..] {
        ha = (ha ^ x as u64).wrapping_mul(P);
    }
    for &y in &b[n..] {
        hb = (hb ^ y as u64).wrapping_mul(P);
    }
    (ha as i64, hb as i64)
}

/// FNV-1a 64, stable across builds (stored in the index).
pub(crate) fn fnv64(b: &[u8]) -> i64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for &x in b {
        h ^= x as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    h as i64
}

pub(crate) fn now() -> i64 {
    now_ms()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The entries table stores a known type as a number and reads it back as its name; the
    /// numbers follow the engine's kinds, and any other name (even one that looks like a number,
    /// or none) is stored as it is.
    #[test]
    fn entry_types_are_stored_as_numbers_and_read_back_as_names() {
        use session_engine::session::Kind;
        let c = Connection::open_in_memory().unwrap();
        c.execute_batch("CREATE TABLE t(type NOT NULL)").unwrap();
        let names = [
            "message",
            "thinking_level_change",
            "model_change",
            "compaction",
            "branch_summary",
            "custom",
            "custom_message",
            "label",
            "session_info",
            "some_future_type",
            "3",
            "",
        ];
        for n in names {
            c.execute("INSERT INTO t VALUES (?1)", [type_sql(n)]).unwrap();
            assert_ne!(Kind::from_type(n) == Kind::Other, KNOWN_TYPES.contains(&n), "{n}");
        }
        let mut q = c.prepare("SELECT type, typeof(type) FROM t ORDER BY rowid").unwrap();
        let back: Vec<(String, String)> =
            q.query_map([], |r| Ok((type_of_sql(r.get_ref(0)?)?, r.get(1)?))).unwrap().map(Result::unwrap).collect();
        for (i, n) in names.iter().enumerate() {
            assert_eq!(back[i].0, *n);
            assert_eq!(back[i].1, if i < 9 { "integer" } else { "text" }, "{n}");
        }
    }

    /// The head and tail hashes are stored in every index: hashing the two at once must give
    /// the values hashed one by one (else every file of an existing index reads as rewritten).
    #[test]
    fn the_paired_hash_is_the_single_one() {
        let text: Vec<u8> = (0..9000u32).map(|i| (i * 7 % 251) as u8).collect();
        for (a, b) in [(0, 4096), (4096, 4096), (100, 4096), (4096, 3), (0, 0), (17, 9000)] {
            let (x, y) = (&text[..a], &text[text.len() - b..]);
            assert_eq!(fnv64_pair(x, y), (fnv64(x), fnv64(y)), "{a} {b}");
        }
        assert_eq!(fnv64(b""), 0xcbf29ce484222325u64 as i64);
        assert_eq!(fnv64(b"a"), 0xaf63dc4c8601ec8cu64 as i64, "FNV-1a of \"a\"");
    }

    /// A new index is created without fsyncs, but every connection, the creating one included,
    /// then writes with `synchronous=NORMAL` in WAL mode: a commit can be lost in a power cut,
    /// never the file.
    #[test]
    fn a_new_index_runs_with_normal_sync() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.sqlite3");
        for fresh in [true, false] {
            let conn = open(&path, &OpenOptions::default(), &mut Vec::new()).unwrap();
            let sync: i64 = conn.query_row("PRAGMA synchronous", [], |r| r.get(0)).unwrap();
            let mode: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
            let v: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
            assert_eq!((sync, mode.as_str(), v), (1, "wal", SCHEMA_VERSION), "fresh: {fresh}");
        }
    }
}
