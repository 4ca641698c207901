//! Live follow: a file watcher (notify) keeps the index current while Pi writes, and tells
//! subscribers which sessions changed and which entries they gained.
//!
//! The watcher thread owns its own SQLite connection (WAL lets the app read meanwhile). Events
//! for the same file that arrive within `debounce` are folded into one index pass. A periodic
//! rescan (`rescan_every`) catches anything the OS did not report (network folders, overflow).
use crate::db::OpenOptions;
use crate::error::{LibError, Notice};
use crate::index::{Change, IndexOptions, NewEntry};
use crate::library::Library;
use crate::sync::SyncReport;
use notify::{RecursiveMode, Watcher as _};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, serde::Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum LibraryEvent {
    /// The first full pass over the roots is running (sent every 25 files): phase 1 (the
    /// session catalog), then phase 2 (`full_text`: entries, statuses, full text).
    #[serde(rename_all = "camelCase")]
    Indexing { done: usize, total: usize, full_text: bool },
    /// The first full pass over the roots finished.
    Synced { report: SyncReport },
    /// A full pass was cancelled ([`Watcher::cancel_pass`]): what it indexed stays, and no full
    /// pass runs (single files Pi writes to are still followed) until [`Watcher::resume`] or the
    /// next start.
    Cancelled { report: SyncReport },
    /// A session file gained entries, appeared, or was re-read in full (`change`).
    #[serde(rename_all = "camelCase")]
    SessionChanged { path: PathBuf, session_id: Option<String>, change: Change, new_entries: Vec<NewEntry> },
    /// A session file disappeared; its rows are gone from the index.
    #[serde(rename_all = "camelCase")]
    SessionRemoved { path: PathBuf },
    /// Tell the user (e.g. the index was replaced).
    Notice { notice: Notice },
    /// Something failed; the watcher goes on.
    Error { path: Option<PathBuf>, message: String },
}

#[derive(Debug, Clone)]
pub struct WatchOptions {
    pub debounce: Duration,
    pub rescan_every: Duration,
    pub open: OpenOptions,
    /// How the watcher's passes read files.
    pub index: IndexOptions,
}

impl Default for WatchOptions {
    fn default() -> Self {
        WatchOptions {
            debounce: Duration::from_millis(25),
            rescan_every: Duration::from_secs(30),
            open: OpenOptions::default(),
            index: IndexOptions::default(),
        }
    }
}

enum Msg {
    Paths(Vec<PathBuf>),
    Resume,
    Stop,
}

type Subs = Arc<Mutex<Vec<Sender<LibraryEvent>>>>;

/// The OS watcher, shared with the watcher thread (it starts following roots that appear later).
type Fs = Arc<Mutex<Option<notify::RecommendedWatcher>>>;

/// How often roots that do not exist yet (or could not be watched) are tried again.
const ROOT_RETRY: Duration = Duration::from_secs(2);

pub struct Watcher {
    subs: Subs,
    tx: Sender<Msg>,
    thread: Option<JoinHandle<()>>,
    fs: Fs,
    /// Set by [`Watcher::cancel_pass`]: the running full pass stops between files, and no new
    /// one starts until [`Watcher::resume`].
    paused: Arc<AtomicBool>,
    pass: Pass,
}

/// Whether a full pass is running, and whether the first one ran (or was cancelled before it
/// began). A cancel and the end of a pass take this lock, so a cancel that arrives as a pass
/// ends either stops it (a `Cancelled` event) or is dropped: it never holds later passes with
/// no `Cancelled` event, which would leave the picker with nothing to resume.
#[derive(Default)]
struct PassState {
    running: bool,
    first_ran: bool,
    /// Set by [`Watcher::resume`] until the watcher thread takes its `Resume`: the rescan timer
    /// could otherwise run a quiet pass in between, which would index the rest with no progress
    /// events and leave the resumed pass, the one with progress, nothing to do.
    resuming: bool,
}

type Pass = Arc<Mutex<PassState>>;

fn pass_state(p: &Pass) -> std::sync::MutexGuard<'_, PassState> {
    p.lock().unwrap_or_else(|e| e.into_inner())
}

fn emit(subs: &Subs, ev: LibraryEvent) {
    let mut s = subs.lock().unwrap_or_else(|p| p.into_inner());
    s.retain(|tx| tx.send(ev.clone()).is_ok());
}

impl Watcher {
    /// Start following `roots`, indexing into the index at `db_path`. The first receiver gets
    /// everything from the initial pass on; more can be made with [`Watcher::subscribe`].
    pub fn start(
        db_path: &Path,
        roots: Vec<PathBuf>,
        opts: WatchOptions,
    ) -> Result<(Watcher, Receiver<LibraryEvent>), LibError> {
        let mut lib = Library::open_with(db_path, opts.open.clone())?;
        lib.set_index_options(opts.index);
        let subs: Subs = Arc::new(Mutex::new(Vec::new()));
        let (first_tx, first_rx) = mpsc::channel();
        subs.lock().unwrap().push(first_tx);
        let (tx, rx) = mpsc::channel::<Msg>();
        let fs_tx = tx.clone();
        let mut fs = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
            if let Ok(ev) = res {
                // Reads (the index pass's own included) change nothing: only writes, creations,
                // renames and removals are passed on.
                if matches!(ev.kind, notify::EventKind::Access(_)) {
                    return;
                }
                let paths: Vec<PathBuf> =
                    ev.paths.into_iter().filter(|p| p.extension().is_some_and(|e| e == "jsonl")).collect();
                if !paths.is_empty() {
                    let _ = fs_tx.send(Msg::Paths(paths));
                }
            }
        })
        .map_err(LibError::Watch)?;
        // A root that does not exist yet (Pi not run on this machine so far, an unmounted folder)
        // is not an error: it is looked for every ROOT_RETRY and followed once it appears.
        let mut unwatched = Vec::new();
        for r in &roots {
            if !r.is_dir() {
                unwatched.push(r.clone());
            } else if let Err(e) = fs.watch(r, RecursiveMode::Recursive) {
                // (not retried: an exhausted inotify limit would fail again every time)
                emit(
                    &subs,
                    LibraryEvent::Error {
                        path: Some(r.clone()),
                        message: format!(
                            "cannot watch this folder ({e}); it is rescanned every {:?}",
                            opts.rescan_every
                        ),
                    },
                );
            }
        }
        let fs: Fs = Arc::new(Mutex::new(Some(fs)));
        let paused = Arc::new(AtomicBool::new(false));
        let pass = Pass::default();
        let (subs2, fs2, paused2, pass2) = (subs.clone(), fs.clone(), paused.clone(), pass.clone());
        let thread = std::thread::Builder::new()
            .name("arbor-library-watch".into())
            .spawn(move || run(lib, roots, unwatched, fs2, rx, subs2, opts, paused2, pass2))
            .map_err(LibError::WatchThread)?;
        Ok((Watcher { subs, tx, thread: Some(thread), fs, paused, pass }, first_rx))
    }

    /// Cancel the running full pass (it stops between files, keeps what it indexed and sends
    /// [`LibraryEvent::Cancelled`]) and hold further full passes until [`Watcher::resume`].
    /// Before the first pass began, it is cancelled as it starts. Once the first pass ran, a
    /// cancel while no full pass runs (it finished as the user clicked) does nothing: there is
    /// nothing to stop, and no `Cancelled` event would tell the user that passes are held.
    pub fn cancel_pass(&self) {
        let st = pass_state(&self.pass);
        if st.first_ran && !st.running {
            return;
        }
        self.paused.store(true, Ordering::SeqCst);
    }

    /// Index the rest: a full pass with progress events, as at start.
    pub fn resume(&self) {
        pass_state(&self.pass).resuming = true;
        self.paused.store(false, Ordering::SeqCst);
        let _ = self.tx.send(Msg::Resume);
    }

    /// Full passes are held after a cancel.
    pub fn is_paused(&self) -> bool {
        self.paused.load(Ordering::SeqCst)
    }

    /// Another receiver of the events from now on.
    pub fn subscribe(&self) -> Receiver<LibraryEvent> {
        let (tx, rx) = mpsc::channel();
        self.subs.lock().unwrap_or_else(|p| p.into_inner()).push(tx);
        rx
    }

    /// Ask for an index pass over these files now (e.g. after Arbor itself appended).
    pub fn poke(&self, paths: Vec<PathBuf>) {
        let _ = self.tx.send(Msg::Paths(paths));
    }

    /// Stop watching and wait for the thread.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        *self.fs.lock().unwrap_or_else(|p| p.into_inner()) = None;
        let _ = self.tx.send(Msg::Stop);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn root_of<'a>(roots: &'a [PathBuf], p: &Path) -> Option<&'a Path> {
    roots.iter().filter(|r| p.starts_with(r)).max_by_key(|r| r.as_os_str().len()).map(|r| r.as_path())
}

/// Start following those of `unwatched` (roots missing so far) that exist now. Returns true when
/// one appeared; one that appeared but cannot be watched is reported and left to the rescan.
fn watch_new_roots(fs: &Fs, unwatched: &mut Vec<PathBuf>, subs: &Subs, rescan_every: Duration) -> bool {
    let mut g = fs.lock().unwrap_or_else(|p| p.into_inner());
    let Some(w) = g.as_mut() else { return false };
    let (appeared, missing): (Vec<PathBuf>, Vec<PathBuf>) =
        std::mem::take(unwatched).into_iter().partition(|r| r.is_dir());
    *unwatched = missing;
    for r in &appeared {
        if let Err(e) = w.watch(r, RecursiveMode::Recursive) {
            emit(
                subs,
                LibraryEvent::Error {
                    path: Some(r.clone()),
                    message: format!("cannot watch this folder ({e}); it is rescanned every {rescan_every:?}"),
                },
            );
        }
    }
    !appeared.is_empty()
}

#[allow(clippy::too_many_arguments)]
fn run(
    mut lib: Library,
    roots: Vec<PathBuf>,
    mut unwatched: Vec<PathBuf>,
    fs: Fs,
    rx: Receiver<Msg>,
    subs: Subs,
    opts: WatchOptions,
    paused: Arc<AtomicBool>,
    pass: Pass,
) {
    for n in lib.take_notices() {
        emit(&subs, LibraryEvent::Notice { notice: n });
    }
    let tracked_pass = |lib: &mut Library, subs: &Subs, report_progress: bool| {
        pass_state(&pass).running = true;
        let res = lib.sync_roots_cancellable(&roots, crate::sync::SyncOptions::default(), Some(&paused), &mut |p| {
            if report_progress && (p.done % 25 == 0 || p.done == p.total) {
                emit(subs, LibraryEvent::Indexing { done: p.done, total: p.total, full_text: p.full_text });
            }
        });
        let mut st = pass_state(&pass);
        st.running = false;
        st.first_ran = true;
        // a cancel that came after the pass's last look at the flag stopped nothing: the pass
        // reports `Synced` (or its error), so it must not hold the next passes either
        if !res.as_ref().is_ok_and(|r| r.cancelled) {
            paused.store(false, Ordering::SeqCst);
        }
        drop(st);
        res
    };
    let full_pass =
        |lib: &mut Library, subs: &Subs, report_progress: bool| match tracked_pass(lib, subs, report_progress) {
            Ok(r) => {
                for (p, m) in &r.errors {
                    emit(subs, LibraryEvent::Error { path: Some(p.clone()), message: m.clone() });
                }
                Some(r)
            }
            Err(e) => {
                emit(subs, LibraryEvent::Error { path: None, message: e.to_string() });
                None
            }
        };
    let loud_pass = |lib: &mut Library, subs: &Subs| {
        if let Some(report) = full_pass(lib, subs, true) {
            emit(
                subs,
                if report.cancelled { LibraryEvent::Cancelled { report } } else { LibraryEvent::Synced { report } },
            );
        }
    };
    let cancelled_first = {
        let mut st = pass_state(&pass);
        st.first_ran = paused.load(Ordering::SeqCst);
        st.first_ran
    };
    if cancelled_first {
        // cancelled before the first pass began: say so, so the UI stops waiting for it
        emit(&subs, LibraryEvent::Cancelled { report: SyncReport { cancelled: true, ..Default::default() } });
    } else {
        loud_pass(&mut lib, &subs);
    }
    // A pass that found something (the OS missed it, or a root appeared) says so, so that the
    // picker refreshes; a pass that found nothing stays quiet. None runs while paused.
    let quiet_pass = |lib: &mut Library, subs: &Subs| {
        // `resume` sets `resuming` before it clears `paused`, so reading them in this order never
        // sees a resume half done.
        if paused.load(Ordering::SeqCst) || pass_state(&pass).resuming {
            return;
        }
        if let Some(r) = full_pass(lib, subs, false) {
            if r.cancelled {
                emit(subs, LibraryEvent::Cancelled { report: r });
            } else if r.new + r.appended + r.reindexed + r.removed > 0 {
                emit(subs, LibraryEvent::Synced { report: r });
            }
        }
    };
    let mut last_rescan = Instant::now();
    let mut last_retry = Instant::now();
    loop {
        let mut wait = opts.rescan_every.saturating_sub(last_rescan.elapsed());
        if !unwatched.is_empty() {
            wait = wait.min(ROOT_RETRY.saturating_sub(last_retry.elapsed()));
        }
        let mut pending: BTreeSet<PathBuf> = BTreeSet::new();
        match rx.recv_timeout(wait) {
            Ok(Msg::Stop) | Err(RecvTimeoutError::Disconnected) => return,
            Ok(Msg::Resume) => {
                pass_state(&pass).resuming = false;
                if !paused.load(Ordering::SeqCst) {
                    loud_pass(&mut lib, &subs);
                    last_rescan = Instant::now();
                }
                continue;
            }
            Ok(Msg::Paths(ps)) => pending.extend(ps),
            Err(RecvTimeoutError::Timeout) => {
                let mut pass = last_rescan.elapsed() >= opts.rescan_every;
                if !unwatched.is_empty() && last_retry.elapsed() >= ROOT_RETRY {
                    last_retry = Instant::now();
                    // a root appeared: follow it, and index what it already holds
                    pass |= watch_new_roots(&fs, &mut unwatched, &subs, opts.rescan_every);
                }
                if pass {
                    quiet_pass(&mut lib, &subs);
                    last_rescan = Instant::now();
                }
                continue;
            }
        }
        // fold a burst of events into one pass
        let mut resume_after = false;
        let until = Instant::now() + opts.debounce;
        loop {
            match rx.recv_timeout(until.saturating_duration_since(Instant::now())) {
                Ok(Msg::Paths(ps)) => pending.extend(ps),
                // handled after this burst: the files first, then the pass
                Ok(Msg::Resume) => resume_after = true,
                Ok(Msg::Stop) | Err(RecvTimeoutError::Disconnected) => return,
                Err(RecvTimeoutError::Timeout) => break,
            }
        }
        for p in pending {
            let root = root_of(&roots, &p).map(Path::to_path_buf);
            match lib.sync_file(&p, root.as_deref()) {
                Ok(u) => match u.change {
                    Change::Unchanged => {}
                    Change::Removed => emit(&subs, LibraryEvent::SessionRemoved { path: p }),
                    c => emit(
                        &subs,
                        LibraryEvent::SessionChanged {
                            path: p,
                            session_id: u.session_id,
                            change: c,
                            new_entries: u.new_entries,
                        },
                    ),
                },
                Err(e) => emit(&subs, LibraryEvent::Error { path: Some(p), message: e.to_string() }),
            }
        }
        for n in lib.take_notices() {
            emit(&subs, LibraryEvent::Notice { notice: n });
        }
        if resume_after {
            pass_state(&pass).resuming = false;
            if !paused.load(Ordering::SeqCst) {
                loud_pass(&mut lib, &subs);
                last_rescan = Instant::now();
            }
        }
    }
}
