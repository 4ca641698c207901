//! The library's state in the app: the reader `Library` (the SQLite index), its `Watcher` (the
//! one steady writer) and the thread that handles the watcher's events: index status and
//! notices, the UI's event sinks, and live follow of the open session (when Pi appends to it, it
//! is re-read and the window is told, keeping the user's leaf and folds, and a summary it wrote is
//! notified through `state::notices`). The commands over it
//! are in `commands/library.rs`.

use super::app::{describe_open, AppState};
use super::layout::relayout;
use super::lock;
use super::notices;
use crate::error::AppError;
use crate::view::library::{IndexStatus, LibraryUiEvent, RootRow};
use crate::view::session::OpenedSession;
use ::library::{LibError, Library, LibraryEvent, SessionFilter, Watcher};
use session_engine::session::Extend;
use session_engine::Session;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Receives UI events; returns false when the receiver is gone (it is then dropped).
pub type EventSink = Arc<dyn Fn(LibraryUiEvent) -> bool + Send + Sync>;
/// Receives the watcher's raw events (in the app: `handle_event` with both states).
pub type RawHandler = Arc<dyn Fn(LibraryEvent) + Send + Sync>;

pub struct LibraryState {
    pub db_path: PathBuf,
    /// Pi's session roots (`<agent dir>/sessions`, `$PI_CODING_AGENT_SESSION_DIR`, `sessionDir`).
    pub pi_roots: Vec<PathBuf>,
    lib: Mutex<Option<Library>>,
    open_error: Mutex<Option<String>>,
    watcher: Mutex<Option<Watcher>>,
    handler: Mutex<Option<RawHandler>>,
    status: Mutex<IndexStatus>,
    sinks: Mutex<Vec<EventSink>>,
}

/// The index file: `$ARBOR_INDEX_DB`, else `<Arbor's data dir>/index.sqlite3`.
pub fn db_path_for(data_dir: &Path) -> PathBuf {
    match std::env::var_os("ARBOR_INDEX_DB") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => data_dir.join("index.sqlite3"),
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    a == b || matches!((std::fs::canonicalize(a), std::fs::canonicalize(b)), (Ok(x), Ok(y)) if x == y)
}

impl LibraryState {
    /// Open (or create) the index. A damaged or too-new index is moved aside and rebuilt; the
    /// notice is kept in the status for the UI. An index that cannot be opened at all leaves the
    /// library off (the status says why); the rest of the app works.
    pub fn open(db_path: PathBuf, pi_roots: Vec<PathBuf>) -> LibraryState {
        let mut status = IndexStatus { db_path: db_path.display().to_string(), ..Default::default() };
        let (lib, open_error) = match Library::open(&db_path) {
            Ok(mut l) => {
                status.notices.extend(l.take_notices().iter().map(|n| n.to_string()));
                (Some(l), None)
            }
            Err(e) => {
                let msg = format!("The session index at {} cannot be opened ({e}); the picker and search are off. Check the folder's permissions, or delete the file (it is rebuilt).", db_path.display());
                status.notices.push(msg.clone());
                status.synced = true;
                (None, Some(msg))
            }
        };
        LibraryState {
            db_path,
            pi_roots,
            lib: Mutex::new(lib),
            open_error: Mutex::new(open_error),
            watcher: Mutex::new(None),
            handler: Mutex::new(None),
            status: Mutex::new(status),
            sinks: Mutex::new(Vec::new()),
        }
    }

    pub fn with_lib<T>(&self, f: impl FnOnce(&mut Library) -> Result<T, LibError>) -> Result<T, AppError> {
        let mut g = lock(&self.lib);
        match g.as_mut() {
            Some(l) => f(l).map_err(AppError::from),
            None => Err(AppError::Refused(
                lock(&self.open_error).clone().unwrap_or_else(|| "the session index is not open".into()),
            )),
        }
    }

    /// Whether the watcher runs (it completes new files' full text; searches need not).
    pub fn watching(&self) -> bool {
        lock(&self.watcher).is_some()
    }

    pub fn status(&self) -> IndexStatus {
        lock(&self.status).clone()
    }

    /// Pi's roots that exist, then the user's folders.
    pub fn roots(&self) -> Result<Vec<PathBuf>, AppError> {
        let mut v: Vec<PathBuf> = self.pi_roots.iter().filter(|p| p.is_dir()).cloned().collect();
        for r in self.with_lib(|l| l.user_roots())? {
            if !v.iter().any(|x| same_file(x, &r)) {
                v.push(r);
            }
        }
        Ok(v)
    }

    pub fn root_rows(&self) -> Result<Vec<RootRow>, AppError> {
        let mut out: Vec<RootRow> = self
            .pi_roots
            .iter()
            .map(|p| RootRow { path: p.display().to_string(), user: false, exists: p.is_dir() })
            .collect();
        for r in self.with_lib(|l| l.user_roots())? {
            out.push(RootRow { path: r.display().to_string(), user: true, exists: r.is_dir() });
        }
        Ok(out)
    }

    /// Start (or restart, after the roots changed) the watcher: its first pass indexes every
    /// root with progress events, then it follows appends. Events go to `handler`.
    pub fn start_watcher(&self, handler: RawHandler) -> Result<(), AppError> {
        *lock(&self.handler) = Some(handler.clone());
        if lock(&self.lib).is_none() {
            return Ok(());
        }
        if let Some(old) = lock(&self.watcher).take() {
            old.stop();
        }
        // Pi's roots that do not exist yet too: the watcher follows them once they appear (Pi run
        // for the first time while Arbor is open).
        let mut roots = self.roots()?;
        roots.extend(self.pi_roots.iter().filter(|p| !p.is_dir()).cloned());
        {
            let mut st = lock(&self.status);
            st.synced = false;
            st.cancelled = false;
            st.full_text_left = 0;
            st.done = 0;
            st.total = 0;
        }
        // The watcher's threads (its index passes, the full text of a new 2.6 GB session) are
        // started from a thread at background priority, which they inherit: on two cores, a first
        // pass at normal priority took a core from the open of the same big file for as long as
        // the open lasted. Live follow of the open session stays at normal priority: it is
        // handled on the events thread below, started from this one.
        let started = std::thread::scope(|sc| {
            sc.spawn(|| {
                super::background::background_priority();
                Watcher::start(&self.db_path, roots, ::library::watch::WatchOptions::default())
            })
            .join()
        });
        let started =
            started.map_err(|_| AppError::Refused("starting the library watcher stopped unexpectedly".into()))?;
        match started {
            Ok((w, rx)) => {
                std::thread::Builder::new()
                    .name("arbor-library-events".into())
                    .spawn(move || {
                        // While a big open session is being reloaded, more appends may arrive:
                        // handle what queued up as one change per file.
                        while let Ok(ev) = rx.recv() {
                            let mut batch = vec![ev];
                            batch.extend(rx.try_iter());
                            for ev in coalesce(batch) {
                                handler(ev);
                            }
                        }
                    })
                    .map_err(|e| AppError::Refused(format!("cannot start the library event thread ({e})")))?;
                *lock(&self.watcher) = Some(w);
                Ok(())
            }
            Err(e) => {
                let mut st = lock(&self.status);
                st.synced = true;
                st.errors.push(format!("live follow is off: {e}"));
                Err(AppError::from(e))
            }
        }
    }

    pub(crate) fn restart_watcher(&self) -> Result<(), AppError> {
        let h = lock(&self.handler).clone();
        match h {
            Some(h) => self.start_watcher(h),
            None => Ok(()),
        }
    }

    /// Stop following (tests; the app stops it on exit by dropping the state).
    pub fn stop_watcher(&self) {
        if let Some(w) = lock(&self.watcher).take() {
            w.stop();
        }
    }

    /// Is `p` under one of the watched roots (the file watcher follows it)?
    pub fn under_roots(&self, p: &Path) -> bool {
        let roots = self.roots().unwrap_or_default();
        let canon = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        roots.iter().any(|r| p.starts_with(r) || std::fs::canonicalize(r).is_ok_and(|r| canon.starts_with(r)))
    }

    /// Make sure a session file is in the index (one opened from outside the roots, so that search
    /// within it and the recent list work). Cheap when it is already there.
    pub fn ensure_indexed(&self, path: &Path) -> Result<(), AppError> {
        self.with_lib(|l| {
            if l.session(path)?.is_none() && path.is_file() {
                l.sync_file(path, None)?;
            }
            Ok(())
        })
    }

    /// Sessions in the index, and how many of them still wait for their full text.
    fn indexed_counts(&self) -> (u32, u32) {
        self.with_lib(|l| {
            let n = l.sessions(&SessionFilter { limit: Some(1_000_000), ..Default::default() })?.len();
            Ok((n as u32, l.pending_fulltext_count()? as u32))
        })
        .unwrap_or((0, 0))
    }

    /// Cancel the running index pass: it stops between files and keeps what it indexed; no full
    /// pass runs until [`LibraryState::resume_indexing`] or the next start. The status (and a
    /// `Cancelled` event, when the pass stops) says so.
    pub fn cancel_indexing(&self) -> Result<IndexStatus, AppError> {
        match lock(&self.watcher).as_ref() {
            Some(w) => w.cancel_pass(),
            None => return Err(AppError::Refused("no index pass is running".into())),
        }
        Ok(self.status())
    }

    /// Index the rest after a cancel: a full pass with progress, as at start.
    pub fn resume_indexing(&self) -> Result<IndexStatus, AppError> {
        match lock(&self.watcher).as_ref() {
            Some(w) => w.resume(),
            None => {
                return Err(AppError::Refused(
                    "the library is not following any folder (see the errors in the picker)".into(),
                ))
            }
        }
        let mut st = lock(&self.status);
        st.synced = false;
        st.cancelled = false;
        st.full_text_left = 0;
        st.done = 0;
        st.total = 0;
        Ok(st.clone())
    }

    /// Ask the watcher to index these files now (it then reports what changed).
    pub fn poke(&self, paths: Vec<PathBuf>) {
        if let Some(w) = lock(&self.watcher).as_ref() {
            w.poke(paths);
        }
    }

    /// A new receiver of UI events; returns the status at that moment (no event is lost between).
    pub fn subscribe(&self, sink: EventSink) -> IndexStatus {
        let mut sinks = lock(&self.sinks);
        sinks.push(sink);
        self.status()
    }

    pub fn broadcast(&self, ev: LibraryUiEvent) {
        let mut sinks = lock(&self.sinks);
        sinks.retain(|s| s(ev.clone()));
    }

    /// One watcher event: update the status, reload the open session when Pi appended to it,
    /// and tell the UI.
    pub fn handle_event(&self, app: &AppState, ev: LibraryEvent) {
        let ui = match ev {
            LibraryEvent::Indexing { done, total, full_text } => {
                let mut st = lock(&self.status);
                st.done = done as u32;
                st.total = total as u32;
                st.full_text = full_text;
                LibraryUiEvent::Indexing { done: done as u32, total: total as u32, full_text }
            }
            LibraryEvent::Synced { report } => {
                let ms = report.catalog_ms + report.fulltext_ms;
                let mut st = lock(&self.status);
                st.synced = true;
                st.cancelled = false;
                st.full_text_left = 0;
                st.full_text = false;
                st.done = report.files as u32;
                st.total = report.files as u32;
                st.files = report.files as u32;
                st.last_pass_ms = Some(ms);
                LibraryUiEvent::Synced { files: report.files as u32, ms }
            }
            LibraryEvent::Cancelled { report } => {
                let (indexed, full_text_left) = self.indexed_counts();
                let mut st = lock(&self.status);
                st.synced = true;
                st.cancelled = true;
                st.full_text = false;
                st.files = indexed;
                st.full_text_left = full_text_left;
                st.last_pass_ms = None;
                LibraryUiEvent::Cancelled { files: report.files as u32, indexed, full_text_left }
            }
            LibraryEvent::SessionChanged { path, change, new_entries, .. } => {
                // A re-read file (replaced, truncated, rewritten) may have other entries at the
                // same positions: its folds start over. An append keeps them.
                let keep_folds = change == ::library::Change::Appended;
                let open = match reload_if_open(app, &path, keep_folds) {
                    Ok(o) => o,
                    Err(e) => {
                        let e = crate::error::IpcError::from(e);
                        let message = format!("{}. {}", e.message, e.hint);
                        self.broadcast(LibraryUiEvent::Error { path: Some(path.display().to_string()), message });
                        None
                    }
                };
                LibraryUiEvent::SessionChanged {
                    path: path.display().to_string(),
                    change: change.into(),
                    new_entries: new_entries.len() as u32,
                    open,
                }
            }
            LibraryEvent::SessionRemoved { path } => {
                LibraryUiEvent::SessionRemoved { path: path.display().to_string() }
            }
            LibraryEvent::Notice { notice } => {
                let message = notice.to_string();
                lock(&self.status).notices.push(message.clone());
                LibraryUiEvent::Notice { message }
            }
            LibraryEvent::Error { path, message } => {
                let mut st = lock(&self.status);
                let line = match &path {
                    Some(p) => format!("{}: {message}", p.display()),
                    None => message.clone(),
                };
                if st.errors.len() < 50 {
                    st.errors.push(line);
                }
                LibraryUiEvent::Error { path: path.map(|p| p.display().to_string()), message }
            }
        };
        self.broadcast(ui);
    }
}

/// Fold queued `SessionChanged` events of one file into one (the last position, all new entries,
/// the strongest change); everything else keeps its order.
pub fn coalesce(batch: Vec<LibraryEvent>) -> Vec<LibraryEvent> {
    use ::library::Change;
    let rank = |c: &Change| match c {
        Change::Reindexed => 3,
        Change::New => 2,
        Change::Appended => 1,
        _ => 0,
    };
    let mut out: Vec<LibraryEvent> = Vec::with_capacity(batch.len());
    for ev in batch {
        if let LibraryEvent::SessionChanged { path, change, new_entries, session_id } = ev {
            let prev =
                out.iter().rposition(|e| matches!(e, LibraryEvent::SessionChanged { path: p, .. } if *p == path));
            match prev.map(|i| out.remove(i)) {
                Some(LibraryEvent::SessionChanged { change: c0, new_entries: mut e0, .. }) => {
                    e0.extend(new_entries);
                    let change = if rank(&c0) > rank(&change) { c0 } else { change };
                    out.push(LibraryEvent::SessionChanged { path, change, new_entries: e0, session_id });
                }
                _ => out.push(LibraryEvent::SessionChanged { path, change, new_entries, session_id }),
            }
        } else {
            out.push(ev);
        }
    }
    out
}

/// If `path` is the open session, read it again (Pi appended) and keep the user's view: the leaf
/// follows Pi's new leaf unless the user had moved it (then it stays on that entry), and folds
/// stay as they were when `keep_folds` (appends only add entries, so indices are stable).
pub fn reload_if_open(app: &AppState, path: &Path, keep_folds: bool) -> Result<Option<OpenedSession>, AppError> {
    let open_path = {
        let g = lock(&app.open);
        match g.as_ref() {
            // Arbor's own appends (labels, summaries) already reloaded the session: an append
            // that leaves the file at the length we hold needs nothing (and no redraw).
            Some(o) if same_file(&o.path, path) => {
                if keep_folds && std::fs::metadata(&o.path).is_ok_and(|m| m.len() == o.session.file_len()) {
                    return Ok(None);
                }
                o.path.clone()
            }
            _ => return Ok(None),
        }
    };
    // Fast path: read only the appended bytes (time follows the append, not the file size).
    // Where the user's leaf was is taken first: a failed extension leaves the session stale.
    let (followed_pi, kept_leaf) = {
        let mut g = lock(&app.open);
        let Some(o) = g.as_mut() else { return Ok(None) };
        if o.path != open_path {
            return Ok(None);
        }
        let followed_pi = o.leaf == o.session.file_leaf();
        let kept_leaf = o.leaf.map(|l| o.session.id(l).to_string());
        if let Ok(Extend::Added(n)) = o.session.extend_from_file(&open_path) {
            if n == 0 {
                return Ok(None);
            }
            // Another writer's entries (Arbor's own are read back when written): a summary
            // among them is notified, once the session lock is released.
            let notices = notices::catch_up(o, &app.state_file());
            if followed_pi {
                o.leaf = o.session.file_leaf();
            }
            if !keep_folds {
                o.folding = Default::default();
            }
            o.layout = relayout(&o.session, o.leaf, &o.folding, &mut o.nodes);
            let dto = describe_open(o);
            drop(g);
            app.deliver_notices(notices);
            return Ok(Some(dto));
        }
        (followed_pi, kept_leaf)
    };
    // Rewritten, truncated or otherwise not a plain extension: read it again.
    let fresh = Session::open(&open_path)?;
    let mut g = lock(&app.open);
    let Some(o) = g.as_mut() else { return Ok(None) };
    if o.path != open_path {
        return Ok(None);
    }
    let leaf = if followed_pi {
        fresh.file_leaf()
    } else {
        kept_leaf.and_then(|id| fresh.index_of(&id)).or(fresh.file_leaf())
    };
    o.session = fresh.into();
    // Its summaries' spans may differ: their quality is judged again (a run on the old one stops).
    o.quality = Default::default();
    // A rewritten file's entries are not appends: nothing in it is announced.
    notices::own_append(o);
    o.nodes.clear();
    o.leaf = leaf;
    if !keep_folds {
        o.folding = Default::default();
    }
    o.layout = relayout(&o.session, o.leaf, &o.folding, &mut o.nodes);
    Ok(Some(describe_open(o)))
}

/// What [`follow_tick`] saw of the open session last time.
#[derive(Debug, Default)]
pub struct FollowState {
    seen: Option<(PathBuf, u64, Option<std::time::SystemTime>)>,
}

/// Live follow for an open session outside the watched roots (opened with "Open file…"): the
/// file watcher does not see it, so the app stats it about once a second and, when it changed,
/// asks the library's watcher to index it, which then reloads it like any other. The first time
/// such a session is seen it is indexed, so search within it works.
pub fn follow_tick(lib: &LibraryState, app: &AppState, st: &mut FollowState) {
    let path = {
        let g = lock(&app.open);
        match g.as_ref() {
            Some(o) if !o.is_demo => o.path.clone(),
            _ => {
                st.seen = None;
                return;
            }
        }
    };
    let Ok(meta) = std::fs::metadata(&path) else { return };
    let now = (meta.len(), meta.modified().ok());
    match &st.seen {
        Some((p, len, mtime)) if *p == path => {
            if (*len, *mtime) != now {
                lib.poke(vec![path.clone()]);
            }
        }
        _ => {
            if lib.under_roots(&path) {
                st.seen = None;
                return;
            }
            let _ = lib.ensure_indexed(&path);
        }
    }
    st.seen = Some((path, now.0, now.1));
}
