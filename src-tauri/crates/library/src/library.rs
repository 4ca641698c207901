//! [`Library`]: one connection to the index, and the operations on it that write (syncing files
//! and roots, the user's folders, recovery). Reading is in [`crate::query`].
use crate::db::{self, write_tx, OpenOptions};
use crate::error::{LibError, Notice};
use crate::index::{self, Change, FileUpdate, IndexOptions};
use crate::roots;
use crate::sync::{self, Progress, SyncOptions, SyncReport};
use rusqlite::Connection;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// One open index: its SQLite connection, how it was opened, how it reads files, and the notices
/// gathered since it was opened.
pub struct Library {
    pub(crate) conn: Connection,
    db_path: PathBuf,
    opts: OpenOptions,
    index: IndexOptions,
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
        Ok(Library { conn, db_path: db_path.to_path_buf(), opts, index: IndexOptions::default(), notices })
    }

    pub fn open_default() -> Result<Library, LibError> {
        let p = default_db_path()
            .ok_or_else(|| LibError::Invalid("no app-data folder on this system; pass an index path (--db)".into()))?;
        Self::open(&p)
    }

    pub fn db_path(&self) -> &Path {
        &self.db_path
    }

    /// How files are read from now on (the defaults until set).
    pub fn set_index_options(&mut self, index: IndexOptions) {
        self.index = index;
    }

    pub fn index_options(&self) -> IndexOptions {
        self.index
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
        let res: Result<String, LibError> =
            self.conn.query_row("PRAGMA quick_check(1)", [], |r| r.get(0)).map_err(db::classify_err);
        match res {
            Ok(s) if s == "ok" => Ok(true),
            Ok(s) => {
                self.recover(&format!("quick_check failed: {s}"))?;
                Ok(false)
            }
            Err(e) => match e.damage() {
                Some(m) => {
                    self.recover(&m)?;
                    Ok(false)
                }
                None => Err(e),
            },
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
            Err(e) => match e.damage() {
                Some(m) => {
                    self.recover(&m)?;
                    f(&self.conn)
                }
                None => Err(e),
            },
            r => r,
        }
    }

    /// Bring one file up to date. `root` is recorded so that removed files can be found later.
    pub fn sync_file(&mut self, path: &Path, root: Option<&Path>) -> Result<FileUpdate, LibError> {
        let opts = self.index;
        self.retry_corrupt(|c| index::sync_file(c, path, root, &opts))
    }

    /// Bring every `*.jsonl` under `roots` up to date (both phases), and drop rows of files that
    /// vanished. A file that cannot be read is reported in `errors`; the pass goes on.
    pub fn sync_roots(
        &mut self,
        roots: &[PathBuf],
        progress: &mut dyn FnMut(Progress),
    ) -> Result<SyncReport, LibError> {
        self.sync_roots_with(roots, SyncOptions::default(), progress)
    }

    pub fn sync_roots_with(
        &mut self,
        roots: &[PathBuf],
        opts: SyncOptions,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<SyncReport, LibError> {
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
            Err(e) => match e.damage() {
                Some(m) => {
                    self.recover(&m)?;
                    self.sync_roots_once(roots, opts, cancel, progress)
                }
                None => Err(e),
            },
            r => r,
        }
    }

    /// Files whose indexed text a search could not find again at its place (rewritten, replaced
    /// or gone since they were indexed): each is marked to be read again in full by the next pass
    /// (`fts_done = 2`, which change detection turns into a full re-read, or a removal when the
    /// file is gone), and with `now` read again right away. The mark does not wait for another
    /// writer (the app's watcher): a busy index is left as it is, that writer follows the files.
    pub(crate) fn reindex_changed(&self, files: &[(i64, PathBuf)], now: bool) -> Result<(), LibError> {
        if files.is_empty() {
            return Ok(());
        }
        self.conn.busy_timeout(std::time::Duration::ZERO).map_err(db::classify_err)?;
        let marked = files.iter().try_for_each(|(id, _)| {
            self.conn
                .execute("UPDATE files SET fts_done = 2 WHERE id = ?1 AND fts_done = 1", [id])
                .map(|_| ())
                .map_err(db::classify_err)
        });
        self.conn.busy_timeout(self.opts.busy_timeout).map_err(db::classify_err)?;
        match marked {
            Ok(()) => {}
            Err(LibError::Busy(_)) => return Ok(()),
            Err(e) => return Err(e),
        }
        if now {
            for (_, path) in files {
                match index::sync_file(&self.conn, path, None, &self.index) {
                    Ok(_) | Err(LibError::Busy(_)) => {}
                    Err(e) if e.file_problem().is_some() => {}
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(())
    }

    /// Run phase 2 for every file whose catalog row is newer than its entry rows.
    pub fn complete_fulltext(&self) -> Result<usize, LibError> {
        sync::fulltext_pass(&self.conn, SyncOptions::default().threads, &self.index, None, &mut |_| {})
    }

    /// How many session files still wait for phase 2 (their search results are missing).
    pub fn pending_fulltext_count(&self) -> Result<usize, LibError> {
        self.conn
            .query_row("SELECT count(*) FROM files WHERE fts_done = 0", [], |r| r.get::<_, i64>(0))
            .map(|n| n as usize)
            .map_err(db::classify_err)
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
        let mut rep = sync::catalog_pass(&self.conn, &files, opts.threads, &self.index, cancel, progress)?;
        if rep.cancelled {
            return Ok(rep);
        }
        if opts.full_text {
            let t = std::time::Instant::now();
            sync::fulltext_pass(&self.conn, opts.threads, &self.index, cancel, progress)?;
            rep.fulltext_ms = t.elapsed().as_secs_f64() * 1e3;
            if cancelled() && self.pending_fulltext_count()? > 0 {
                rep.cancelled = true;
                return Ok(rep);
            }
        }
        // files recorded under these roots that are gone
        let known: std::collections::HashSet<String> =
            files.iter().map(|(p, _)| p.to_string_lossy().to_string()).collect();
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
            return Err(LibError::Invalid(format!(
                "{} is not a folder; choose a folder that holds .jsonl session files",
                path.display()
            )));
        }
        let p = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let c = &self.conn;
        write_tx(c, || {
            c.execute(
                "INSERT OR IGNORE INTO user_roots(path, added_ms) VALUES (?1, ?2)",
                rusqlite::params![p.to_string_lossy(), db::now()],
            )
            .map(|_| ())
            .map_err(db::classify_err)
        })
    }

    pub fn remove_user_root(&mut self, path: &Path) -> Result<(), LibError> {
        let c = &self.conn;
        write_tx(c, || {
            c.execute("DELETE FROM user_roots WHERE path = ?1", [path.to_string_lossy()])
                .map(|_| ())
                .map_err(db::classify_err)
        })
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
