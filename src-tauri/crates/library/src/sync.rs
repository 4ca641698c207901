//! Passes over many files: worker threads read and parse (the engine), the calling thread is the
//! only SQLite writer. Writes are committed in batches (about 64 MB read or 2 s), each file in a
//! savepoint: a crash or kill leaves the last committed batch, and the next pass goes on from
//! there (phase-1 rows with `fts_done = 0` get their phase 2 then).
use crate::db::{classify_err, write_tx};
use crate::error::LibError;
use crate::index::{self, Change, IndexOptions, Plan};
use rusqlite::Connection;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

/// Progress of [`crate::Library::sync_roots`].
#[derive(Debug, Clone)]
pub struct Progress {
    pub done: usize,
    pub total: usize,
    pub path: PathBuf,
    /// false: phase 1 (the session catalog, what the picker lists); true: phase 2 (entries,
    /// statuses and full text of the files phase 1 read; `total` counts those files only).
    pub full_text: bool,
}

/// What one [`crate::Library::sync_roots`] pass did.
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
    /// The pass was cancelled ([`crate::Library::sync_roots_cancellable`]): what it wrote is
    /// committed, the rest is indexed by the next pass.
    pub cancelled: bool,
}

/// How [`crate::Library::sync_roots_with`] runs.
#[derive(Debug, Clone, Copy)]
pub struct SyncOptions {
    /// Also run phase 2 (entries, statuses, full text) now. When false, it runs on the next
    /// [`crate::Library::search`] (or [`crate::Library::complete_fulltext`]).
    pub full_text: bool,
    /// Worker threads that read and parse files (the SQLite writer is the calling thread).
    pub threads: usize,
}

impl Default for SyncOptions {
    fn default() -> Self {
        SyncOptions {
            full_text: true,
            threads: std::thread::available_parallelism().map(|n| n.get().min(4)).unwrap_or(2),
        }
    }
}

const BATCH_BYTES: u64 = 64 << 20;
const BATCH_SECS: f64 = 2.0;

struct Batch {
    bytes: u64,
    start: Instant,
}

impl Batch {
    fn new() -> Batch {
        Batch { bytes: 0, start: Instant::now() }
    }
    fn begin(&mut self, conn: &Connection) -> Result<(), LibError> {
        if conn.is_autocommit() {
            conn.execute_batch("BEGIN IMMEDIATE").map_err(classify_err)?;
            self.bytes = 0;
            self.start = Instant::now();
        }
        Ok(())
    }
    fn maybe_commit(&mut self, conn: &Connection, force: bool) -> Result<(), LibError> {
        if conn.is_autocommit() {
            return Ok(());
        }
        if force || self.bytes > BATCH_BYTES || self.start.elapsed().as_secs_f64() >= BATCH_SECS {
            if let Err(e) = conn.execute_batch("COMMIT").map_err(classify_err) {
                let _ = conn.execute_batch("ROLLBACK");
                return Err(e);
            }
        }
        Ok(())
    }
    fn rollback(conn: &Connection) {
        if !conn.is_autocommit() {
            let _ = conn.execute_batch("ROLLBACK");
        }
    }
}

/// Run `work` on `threads` workers over `jobs`, handing each result to `sink` on this thread
/// in job order (so rows get the same rowids whatever the timing: a resumed build equals a fresh
/// one). Workers run at most `WINDOW` jobs ahead of the sink. A sink error stops the workers.
/// `cancel` set: no job is started or handed to the sink after the one being written, and the
/// call returns `Ok` (the caller sees the flag). Results read ahead are dropped.
fn parallel<J: Sync, R: Send>(
    jobs: &[J],
    threads: usize,
    cancel: Option<&AtomicBool>,
    work: impl Fn(&J) -> R + Sync,
    mut sink: impl FnMut(usize, R) -> Result<(), LibError>,
) -> Result<(), LibError> {
    let cancelled = || cancel.is_some_and(|c| c.load(Ordering::Relaxed));
    const WINDOW: usize = 16;
    if jobs.is_empty() {
        return Ok(());
    }
    let next = AtomicUsize::new(0);
    let emitted = AtomicUsize::new(0);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let threads = threads.clamp(1, jobs.len());
    std::thread::scope(|sc| {
        let (tx, rx) = std::sync::mpsc::channel::<(usize, R)>();
        for _ in 0..threads {
            let tx = tx.clone();
            let (next, emitted, stop, work) = (&next, &emitted, &stop, &work);
            sc.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= jobs.len() {
                    break;
                }
                while i >= emitted.load(Ordering::Acquire) + WINDOW && !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(std::time::Duration::from_micros(200));
                }
                if stop.load(Ordering::Relaxed) || cancelled() || tx.send((i, work(&jobs[i]))).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        let mut held: std::collections::BTreeMap<usize, R> = std::collections::BTreeMap::new();
        let mut want = 0usize;
        for (i, r) in rx.iter() {
            held.insert(i, r);
            while let Some(r) = held.remove(&want) {
                if cancelled() {
                    stop.store(true, Ordering::Relaxed);
                    next.store(usize::MAX / 2, Ordering::Relaxed);
                    return Ok(());
                }
                if let Err(e) = sink(want, r) {
                    stop.store(true, Ordering::Relaxed);
                    next.store(usize::MAX / 2, Ordering::Relaxed);
                    return Err(e);
                }
                want += 1;
                emitted.store(want, Ordering::Release);
            }
        }
        Ok(())
    })
}

/// Phase 1 over `files` (path, root): plan each file; append what grew; catalog new and changed
/// files on worker threads. `cancel` is checked between files: when set, what was written is
/// committed and the pass returns with `cancelled` (the next pass picks up the rest).
pub(crate) fn catalog_pass(
    conn: &Connection,
    files: &[(PathBuf, PathBuf)],
    threads: usize,
    opts: &IndexOptions,
    cancel: Option<&AtomicBool>,
    progress: &mut dyn FnMut(Progress),
) -> Result<SyncReport, LibError> {
    let cancelled = || cancel.is_some_and(|c| c.load(Ordering::Relaxed));
    let t0 = Instant::now();
    let total = files.len();
    let mut rep = SyncReport { files: total, ..Default::default() };
    let mut full: Vec<(usize, Option<index::Row>, Option<&'static str>)> = Vec::new();
    let mut batch = Batch::new();
    let mut done = 0usize;
    progress(Progress { done: 0, total, path: PathBuf::new(), full_text: false });
    let r = (|| {
        for (i, (p, _)) in files.iter().enumerate() {
            if cancelled() {
                rep.cancelled = true;
                return batch.maybe_commit(conn, true);
            }
            let plan = match index::plan(conn, p) {
                Ok(x) => x,
                Err(e) => match e.file_problem() {
                    Some(problem) => {
                        rep.errors.push(problem);
                        continue;
                    }
                    None => return Err(e),
                },
            };
            match plan {
                Plan::Full { old, reason } => {
                    // read on the workers below (a big file streamed: bounded memory); its full
                    // text in phase 2
                    full.push((i, old, reason));
                    continue;
                }
                Plan::Unchanged(_) | Plan::Nothing | Plan::FullTextOnly(_) => rep.unchanged += 1,
                Plan::Removed(row) => {
                    batch.begin(conn)?;
                    write_tx(conn, || index::remove_file_rows(conn, row.id, false).map_err(classify_err))?;
                    rep.removed += 1;
                }
                Plan::Append(row, st) => {
                    batch.begin(conn)?;
                    match write_tx(conn, || index::append(conn, p, row, st)) {
                        Ok(u) => {
                            rep.bytes_read += u.bytes_read;
                            batch.bytes += u.bytes_read;
                            if u.change == Change::Appended {
                                rep.appended += 1;
                            } else {
                                rep.unchanged += 1;
                            }
                        }
                        Err(e) => match e.file_problem() {
                            Some(problem) => rep.errors.push(problem),
                            None => return Err(e),
                        },
                    }
                }
            }
            done += 1;
            progress(Progress { done, total, path: p.clone(), full_text: false });
            batch.maybe_commit(conn, false)?;
        }
        parallel(
            &full,
            threads,
            cancel,
            |(i, _, _)| index::catalog_file(&files[*i].0, opts),
            |k, res| {
                let (i, old, _reason) = &full[k];
                let (p, root) = &files[*i];
                done += 1;
                progress(Progress { done, total, path: p.clone(), full_text: false });
                match res {
                    Ok(c) => {
                        batch.begin(conn)?;
                        write_tx(conn, || index::write_catalog(conn, p, Some(root), old.as_ref(), &c))?;
                        rep.bytes_read += c.bytes();
                        batch.bytes += c.bytes();
                        if old.is_none() {
                            rep.new += 1;
                        } else {
                            rep.reindexed += 1;
                        }
                        batch.maybe_commit(conn, false)
                    }
                    Err(e) => match e.file_problem() {
                        Some(problem) => {
                            rep.errors.push(problem);
                            Ok(())
                        }
                        None => Err(e),
                    },
                }
            },
        )?;
        rep.cancelled |= cancelled() && done < total;
        batch.maybe_commit(conn, true)
    })();
    if r.is_err() {
        Batch::rollback(conn);
    }
    r?;
    if rep.cancelled {
        rep.catalog_ms = t0.elapsed().as_secs_f64() * 1e3;
        return Ok(rep);
    }
    progress(Progress { done: total, total, path: PathBuf::new(), full_text: false });
    rep.catalog_ms = t0.elapsed().as_secs_f64() * 1e3;
    Ok(rep)
}

/// Phase 2 for every file with `fts_done = 0`. Returns the number of files completed. `cancel`
/// is checked between files; what was written is committed, the rest stays `fts_done = 0`.
pub(crate) fn fulltext_pass(
    conn: &Connection,
    threads: usize,
    opts: &IndexOptions,
    cancel: Option<&AtomicBool>,
    progress: &mut dyn FnMut(Progress),
) -> Result<usize, LibError> {
    let pending = index::pending_fulltext(conn)?;
    let total = pending.len();
    if total > 0 {
        progress(Progress { done: 0, total, path: PathBuf::new(), full_text: true });
    }
    let mut batch = Batch::new();
    let mut n = 0;
    let r = parallel(
        &pending,
        threads,
        cancel,
        // a big file is streamed on this thread (bounded memory), not loaded by a worker
        |(_, path, offset, hh, th, bad)| {
            if opts.is_big(path) {
                None
            } else {
                Some(index::fulltext_file(path, *offset, *hh, *th, *bad))
            }
        },
        |k, res| {
            let (id, path, offset, hh, th, _) = &pending[k];
            progress(Progress { done: k + 1, total, path: path.clone(), full_text: true });
            batch.begin(conn)?;
            // changed since phase 1, or unreadable: the next pass re-reads it in full
            let reread_later = || {
                conn.execute("UPDATE files SET fts_done = 2 WHERE id = ?1 AND fts_done = 0", [id])
                    .map(|_| ())
                    .map_err(classify_err)
            };
            let Some(res) = res else {
                match index::fulltext_big(conn, *id, path, opts) {
                    Ok(done) => n += done as usize,
                    Err(e) if e.file_problem().is_some() => reread_later()?,
                    Err(e) => return Err(e),
                }
                batch.bytes += *offset;
                return batch.maybe_commit(conn, false);
            };
            match res {
                Ok(Some(out)) => {
                    // No savepoint per file here (unlike phase 1): FTS5 flushes its pending terms
                    // to a new segment at every savepoint, and 500 small segments cost more
                    // merging than the text itself. An error aborts the whole batch anyway.
                    index::write_fulltext_checked(conn, *id, (*offset, *hh, *th), out)?;
                    batch.bytes += *offset;
                    n += 1;
                }
                Ok(None) => reread_later()?,
                Err(e) if e.file_problem().is_some() => reread_later()?,
                Err(e) => return Err(e),
            }
            batch.maybe_commit(conn, false)
        },
    )
    .and_then(|_| batch.maybe_commit(conn, true));
    if r.is_err() {
        Batch::rollback(conn);
    }
    r.map(|_| n)
}
