//! Arbor's session library: a SQLite index (with FTS5) over Pi session files.
//!
//! * The JSONL files are the truth; the index is a cache. Delete it and it is rebuilt. A corrupt
//!   or too-new index is moved aside and rebuilt, and [`Library::notices`] says so.
//! * Incremental: appended bytes are indexed from the stored byte offset; replaced, truncated or
//!   rewritten files are re-read in full; a torn last line waits until it is complete.
//! * Every indexed entry carries its status relative to the file's leaf: `in_context`,
//!   `compacted` or `abandoned`, by the engine's rules (see [`analyze`]).
//! * [`watch::Watcher`] follows the roots live and emits [`LibraryEvent`]s.
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
pub mod index;
pub mod query;
pub mod roots;
mod sync;
pub mod watch;

pub use db::OpenOptions;
pub use index::{Change, FileUpdate};
pub use query::{Project, SearchHit, SearchOrder, SearchQuery, SessionFilter, SessionInfo, SessionSort};
pub use watch::{LibraryEvent, Watcher};

use rusqlite::Connection;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// Errors carry a sentence that says what to do.
#[derive(Debug, Clone)]
pub enum LibError {
    /// Another instance holds the write lock longer than `busy_timeout` (F33).
    Busy(String),
    /// SQLite reports the index damaged; call [`Library::recover`] (sync does it by itself).
    Corrupt(String),
    Io {
        path: PathBuf,
        message: String,
    },
    Sqlite(String),
    /// Bad input from the caller (e.g. an empty query).
    Invalid(String),
}

impl fmt::Display for LibError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            LibError::Busy(m) => write!(f, "{m}"),
            LibError::Corrupt(m) => write!(f, "the index is damaged ({m}); it will be rebuilt from the session files"),
            LibError::Io { path, message } if path.as_os_str().is_empty() => write!(f, "{message}"),
            LibError::Io { path, message } => write!(f, "{}: {message}", path.display()),
            LibError::Sqlite(m) => write!(f, "index error: {m}; if it persists, delete the index file (it is rebuilt)"),
            LibError::Invalid(m) => write!(f, "{m}"),
        }
    }
}
impl std::error::Error for LibError {}

/// Something the user should be told (the index was replaced, …).
#[derive(Debug, Clone, serde::Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Notice {
    /// The index could not be used and was moved aside; a fresh one is being built.
    #[serde(rename_all = "camelCase")]
    IndexReplaced { reason: String, moved_to: PathBuf },
}

impl fmt::Display for Notice {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Notice::IndexReplaced { reason, moved_to } => write!(
                f,
                "The session index could not be used ({reason}). It was moved to {} and is being rebuilt from the session files; no session data was lost.",
                moved_to.display()
            ),
        }
    }
}

/// An entry added to a session by an index pass.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NewEntry {
    pub entry_id: String,
    pub parent_id: Option<String>,
    pub entry_type: String,
    /// "in_context" | "compacted" | "abandoned"
    pub status: &'static str,
}

/// Progress of [`Library::sync_roots`].
#[derive(Debug, Clone)]
pub struct Progress {
    pub done: usize,
    pub total: usize,
    pub path: PathBuf,
    /// false: phase 1 (the session catalog, what the picker lists); true: phase 2 (entries,
    /// statuses and full text of the files phase 1 read; `total` counts those files only).
    pub full_text: bool,
}

/// What one [`Library::sync_roots`] pass did.
#[derive(Debug, Clone, Default, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncReport {
    pub files: usize,
    pub new: usize,
    pub appended: usize,
    pub reindexed: usize,
    pub removed: usize,
    pub unchanged: usize,
    pub bytes_read: u64,
    /// Files that could not be read (path, message); the rest of the pass went on.
    pub errors: Vec<(PathBuf, String)>,
    /// Phase 1 (the session catalog: what Pi's picker lists), milliseconds.
    pub catalog_ms: f64,
    /// Phase 2 (entry rows, statuses, full text), milliseconds; 0 when left for later.
    pub fulltext_ms: f64,
    /// The pass was cancelled ([`Library::sync_roots_cancellable`]): what it wrote is committed,
    /// the rest is indexed by the next pass.
    pub cancelled: bool,
}

/// How [`Library::sync_roots_with`] runs.
#[derive(Debug, Clone, Copy)]
pub struct SyncOptions {
    /// Also run phase 2 (entries, statuses, full text) now. When false, it runs on the next
    /// [`Library::search`] (or [`Library::complete_fulltext`]).
    pub full_text: bool,
    /// Worker threads that read and parse files (the SQLite writer is the calling thread).
    pub threads: usize,
}

impl Default for SyncOptions {
    fn default() -> Self {
        SyncOptions { full_text: true, threads: std::thread::available_parallelism().map(|n| n.get().min(4)).unwrap_or(2) }
    }
}

pub struct Library {
    pub(crate) conn: Connection,
    db_path: PathBuf,
    opts: OpenOptions,
    notices: Vec<Notice>,
}

/// Arbor's default index file: `<data dir>/arbor/index.sqlite3` (`$ARBOR_INDEX_DB` overrides).
pub fn default_db_path() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("ARBOR_INDEX_DB") {
        if !p.is_empty() {
            return Some(PathBuf::from(p));
        }
    }
    dirs::data_dir().map(|d| d.join("arbor").join("index.sqlite3"))
}

impl Library {
    pub fn open(db_path: &Path) -> Result<Library, LibError> {
        Self::open_with(db_path, OpenOptions::default())
    }

    pub fn open_with(db_path: &Path, opts: OpenOptions) -> Result<Library, LibError> {
        let mut notices = Vec::new();
        let conn = db::open(db_path, &opts, &mut notices)?;
        Ok(Library { conn, db_path: db_path.to_path_buf(), opts, notices })
    }

    pub fn open_default() -> Result<Library, LibError> {
        let p = default_db_path().ok_or_else(|| LibError::Invalid("no app-data folder on this system; pass an index path (--db)".into()))?;
        Self::open(&p)
    }

    pub fn db_path(&self) -> &Path {
        &self.db_path
    }

    /// Notices gathered since open (e.g. the index was replaced). Show them to the user.
    pub fn notices(&self) -> &[Notice] {
        &self.notices
    }

    pub fn take_notices(&mut self) -> Vec<Notice> {
        std::mem::take(&mut self.notices)
    }

    /// Full `PRAGMA quick_check` (includes FTS5's own check; about 1 s per 100 MB of index).
    /// On damage the index is moved aside and rebuilt empty (a notice says so); sync refills it.
    pub fn check(&mut self) -> Result<bool, LibError> {
        let res: Result<String, LibError> = self.conn.query_row("PRAGMA quick_check(1)", [], |r| r.get(0)).map_err(db::classify_err);
        match res {
            Ok(s) if s == "ok" => Ok(true),
            Ok(s) => {
                self.recover(&format!("quick_check failed: {s}"))?;
                Ok(false)
            }
            Err(LibError::Corrupt(m)) => {
                self.recover(&m)?;
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    /// Move a damaged index aside and start a fresh one (adds a notice).
    pub fn recover(&mut self, reason: &str) -> Result<(), LibError> {
        let old = std::mem::replace(&mut self.conn, Connection::open_in_memory().map_err(db::classify_err)?);
        drop(old);
        let aside = db::move_aside(&self.db_path)?;
        self.notices.push(Notice::IndexReplaced { reason: reason.to_string(), moved_to: aside });
        self.conn = db::open(&self.db_path, &self.opts, &mut self.notices)?;
        Ok(())
    }

    fn retry_corrupt<T>(&mut self, f: impl Fn(&Connection) -> Result<T, LibError>) -> Result<T, LibError> {
        match f(&self.conn) {
            Err(LibError::Corrupt(m)) => {
                self.recover(&m)?;
                f(&self.conn)
            }
            r => r,
        }
    }

    /// Bring one file up to date. `root` is recorded so that removed files can be found later.
    pub fn sync_file(&mut self, path: &Path, root: Option<&Path>) -> Result<FileUpdate, LibError> {
        self.retry_corrupt(|c| index::sync_file(c, path, root))
    }

    /// Bring every `*.jsonl` under `roots` up to date (both phases), and drop rows of files that
    /// vanished. A file that cannot be read is reported in `errors`; the pass goes on.
    pub fn sync_roots(&mut self, roots: &[PathBuf], progress: &mut dyn FnMut(Progress)) -> Result<SyncReport, LibError> {
        self.sync_roots_with(roots, SyncOptions::default(), progress)
    }

    pub fn sync_roots_with(&mut self, roots: &[PathBuf], opts: SyncOptions, progress: &mut dyn FnMut(Progress)) -> Result<SyncReport, LibError> {
        self.sync_roots_cancellable(roots, opts, None, progress)
    }

    /// [`Library::sync_roots_with`] that stops soon after `cancel` is set: it is checked between
    /// files (both phases). What was indexed until then is committed and stays; the report says
    /// `cancelled`, and a later pass indexes the rest (new files, and phase 2 of files that only
    /// have their catalog row). Vanished files are not looked for in a cancelled pass.
    pub fn sync_roots_cancellable(
        &mut self,
        roots: &[PathBuf],
        opts: SyncOptions,
        cancel: Option<&AtomicBool>,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<SyncReport, LibError> {
        match self.sync_roots_once(roots, opts, cancel, progress) {
            Err(LibError::Corrupt(m)) => {
                self.recover(&m)?;
                self.sync_roots_once(roots, opts, cancel, progress)
            }
            r => r,
        }
    }

    /// Run phase 2 for every file whose catalog row is newer than its entry rows.
    pub fn complete_fulltext(&self) -> Result<usize, LibError> {
        sync::fulltext_pass(&self.conn, SyncOptions::default().threads, None, &mut |_| {})
    }

    /// How many session files still wait for phase 2 (their search results are missing).
    pub fn pending_fulltext_count(&self) -> Result<usize, LibError> {
        self.conn.query_row("SELECT count(*) FROM files WHERE fts_done = 0", [], |r| r.get::<_, i64>(0)).map(|n| n as usize).map_err(db::classify_err)
    }

    fn sync_roots_once(
        &mut self,
        roots: &[PathBuf],
        opts: SyncOptions,
        cancel: Option<&AtomicBool>,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<SyncReport, LibError> {
        let cancelled = || cancel.is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed));
        let mut files: Vec<(PathBuf, PathBuf)> = Vec::new();
        for root in roots {
            for p in roots::scan(root) {
                files.push((p, root.clone()));
            }
        }
        let mut rep = sync::catalog_pass(&self.conn, &files, opts.threads, cancel, progress)?;
        if rep.cancelled {
            return Ok(rep);
        }
        if opts.full_text {
            let t = std::time::Instant::now();
            sync::fulltext_pass(&self.conn, opts.threads, cancel, progress)?;
            rep.fulltext_ms = t.elapsed().as_secs_f64() * 1e3;
            if cancelled() && self.pending_fulltext_count()? > 0 {
                rep.cancelled = true;
                return Ok(rep);
            }
        }
        // files recorded under these roots that are gone
        let known: std::collections::HashSet<String> = files.iter().map(|(p, _)| p.to_string_lossy().to_string()).collect();
        for root in roots {
            let rs = root.to_string_lossy().to_string();
            let gone: Vec<String> = {
                let mut q = self.conn.prepare("SELECT path FROM files WHERE root = ?1").map_err(db::classify_err)?;
                let rows = q.query_map([&rs], |r| r.get::<_, String>(0)).map_err(db::classify_err)?;
                rows.filter_map(Result::ok).filter(|p| !known.contains(p)).collect()
            };
            for p in gone {
                if let Ok(u) = self.sync_file(Path::new(&p), None) {
                    if u.change == Change::Removed {
                        rep.removed += 1;
                    }
                }
            }
        }
        Ok(rep)
    }

    /// Folders the user added (stored in the index).
    pub fn user_roots(&self) -> Result<Vec<PathBuf>, LibError> {
        let mut q = self.conn.prepare("SELECT path FROM user_roots ORDER BY added_ms").map_err(db::classify_err)?;
        let rows = q.query_map([], |r| r.get::<_, String>(0)).map_err(db::classify_err)?;
        Ok(rows.filter_map(Result::ok).map(PathBuf::from).collect())
    }

    pub fn add_user_root(&mut self, path: &Path) -> Result<(), LibError> {
        if !path.is_dir() {
            return Err(LibError::Invalid(format!("{} is not a folder; choose a folder that holds .jsonl session files", path.display())));
        }
        let p = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let c = &self.conn;
        index::write_tx(c, || {
            c.execute("INSERT OR IGNORE INTO user_roots(path, added_ms) VALUES (?1, ?2)", rusqlite::params![p.to_string_lossy(), db::now()])
                .map(|_| ())
                .map_err(db::classify_err)
        })
    }

    pub fn remove_user_root(&mut self, path: &Path) -> Result<(), LibError> {
        let c = &self.conn;
        index::write_tx(c, || c.execute("DELETE FROM user_roots WHERE path = ?1", [path.to_string_lossy()]).map(|_| ()).map_err(db::classify_err))
    }

    /// Pi's roots (that exist) plus the user's folders.
    pub fn all_roots(&self) -> Result<Vec<PathBuf>, LibError> {
        let mut v: Vec<PathBuf> = roots::pi_roots().into_iter().filter(|p| p.is_dir()).collect();
        for r in self.user_roots()? {
            if !v.contains(&r) {
                v.push(r);
            }
        }
        Ok(v)
    }
}
