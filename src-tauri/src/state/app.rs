//! The open session and where things live: [`AppState`] (managed by Tauri), the session with its
//! graph layout ([`OpenSession`]) and the snapshot it hands to work done without its lock.

use super::layout::{Folding, NodeCache};
use super::lock;
use super::markers::MarkerCache;
use super::quality::QualityCache;
use crate::error::AppError;
use crate::view::session::OpenedSession;
use session_engine::Session;
use session_graph::Layout;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// The open session, shared read-only with work that runs without the session lock (marker
/// facts, the waterfall's numbers): [`SharedSession::snapshot`] hands out the same `Session`, and
/// a write (through `DerefMut`) copies it only while such a snapshot is still alive.
pub struct SharedSession(Arc<Session>);

impl SharedSession {
    /// The session as it is now, for reading without the session lock.
    pub fn snapshot(&self) -> Arc<Session> {
        self.0.clone()
    }
}

impl From<Session> for SharedSession {
    fn from(session: Session) -> Self {
        SharedSession(Arc::new(session))
    }
}

impl std::ops::Deref for SharedSession {
    type Target = Session;
    fn deref(&self) -> &Session {
        &self.0
    }
}

impl std::ops::DerefMut for SharedSession {
    fn deref_mut(&mut self) -> &mut Session {
        Arc::make_mut(&mut self.0)
    }
}

pub struct OpenSession {
    /// The session file (the engine's `Session` does not keep its path).
    pub path: PathBuf,
    pub session: SharedSession,
    /// The leaf Arbor shows (Pi's file leaf unless the user navigated).
    pub leaf: Option<usize>,
    pub layout: Layout,
    /// The layout's input, kept while the entries stay the same.
    pub nodes: NodeCache,
    pub folding: Folding,
    pub is_demo: bool,
    /// Drop-alarm counts and retention scores of summary markers, per entry id (shared with
    /// `summary_markers`, which computes them without the session lock; replaced, not cleared,
    /// when the file is read again, so a late result lands in the old one).
    pub markers: Arc<MarkerCache>,
    /// The quality marks of its summaries (score, cost of forgetting), computed in the background
    /// (`commands::quality::warm`); replaced with `markers`, which stops a run on the old one.
    pub quality: Arc<QualityCache>,
    /// Entries whose notices are decided: those read at open, written by this window, or already
    /// announced as another writer's (`state::notices`).
    pub noticed: usize,
}

impl OpenSession {
    /// Reads what was just appended to the open file into the session, in time proportional to
    /// the new bytes. The file is opened again only when it is not a plain extension of what is
    /// held (rewritten meanwhile, or it did not end in a newline, so the append added one first);
    /// then entry indices may change, so the caller sets the leaf after this.
    /// Used after this window's own append (refused when the file grew since it was planned), so
    /// what it reads is Arbor's and needs no notice.
    pub fn read_appended(&mut self) -> Result<(), AppError> {
        if let session_engine::session::Extend::Added(_) = self.session.extend_from_file(&self.path)? {
            super::notices::own_append(self);
            return Ok(());
        }
        self.session = Session::open(&self.path)?.into();
        self.markers = Default::default();
        self.quality = Default::default();
        self.nodes.clear();
        super::notices::own_append(self);
        Ok(())
    }
}

pub struct AppState {
    /// Pi's agent dir (`$PI_CODING_AGENT_DIR`, else `~/.pi/agent`).
    pub agent_dir: PathBuf,
    /// Arbor's own data dir (state file, the demo copy, the canary marker).
    pub data_dir: PathBuf,
    pub open: Mutex<Option<OpenSession>>,
    /// Where notices of summaries written by others go (`state::notices`).
    pub notices: super::notices::Notices,
    /// Pi's `models.json` in `agent_dir`, read again when it changes.
    pi_models: summarizer::pi_models_json::Cached,
}

fn trace_lock(
    file: &std::ffi::OsStr,
    caller: &std::panic::Location<'_>,
    wait: std::time::Duration,
    hold: std::time::Duration,
) {
    use std::io::Write;
    if let Ok(mut f) = std::fs::OpenOptions::new().append(true).create(true).open(file) {
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
        let thread = std::thread::current();
        // When the lock was let go, in ms since the epoch: the page's `performance.timeOrigin`
        // plus its own times give the same clock.
        let at = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, ms);
        let _ = writeln!(
            f,
            "{}:{} wait {:.2} hold {:.2} thread {} at {at:.1}",
            caller.file(),
            caller.line(),
            ms(wait),
            ms(hold),
            thread.name().unwrap_or("?")
        );
    }
}

impl AppState {
    pub fn new(agent_dir: PathBuf, data_dir: PathBuf) -> AppState {
        AppState {
            agent_dir,
            data_dir,
            open: Mutex::new(None),
            notices: Default::default(),
            pi_models: Default::default(),
        }
    }

    /// Pi's `models.json` as it is now (custom models' windows, for every window Arbor shows).
    pub fn pi_models_json(&self) -> summarizer::pi_models_json::PiModelsJson {
        self.pi_models.get(&self.agent_dir, &summarizer::pi_models::is_builtin_provider)
    }

    /// Run `f` on the open session; the lock is only poisoned if a command panicked, in which
    /// case the data is still consistent (commands mutate only after all fallible steps).
    ///
    /// `ARBOR_TRACE_LOCK=<file>` appends one line per call (caller, wait and hold in ms, thread, when):
    /// how the interaction benchmarks find what holds the session.
    #[track_caller]
    pub fn with_open<T>(&self, f: impl FnOnce(&mut OpenSession) -> Result<T, AppError>) -> Result<T, AppError> {
        let caller = std::panic::Location::caller();
        let asked = std::time::Instant::now();
        let mut guard = lock(&self.open);
        let got = std::time::Instant::now();
        let open = guard.as_mut().ok_or(AppError::NoSession)?;
        let r = f(open);
        static TRACE: std::sync::OnceLock<Option<std::ffi::OsString>> = std::sync::OnceLock::new();
        if let Some(file) = TRACE.get_or_init(|| std::env::var_os("ARBOR_TRACE_LOCK")) {
            trace_lock(file, caller, got - asked, got.elapsed());
        }
        r
    }

    pub fn state_file(&self) -> PathBuf {
        self.data_dir.join("state.json")
    }

    /// The demo session's copy in the data dir, written from `demo` the first time (labels and
    /// summaries are appended to the copy, never to the embedded bytes).
    pub fn demo_copy(&self, demo: &[u8]) -> Result<PathBuf, AppError> {
        let path = self.data_dir.join("demo").join("demo-session.jsonl");
        if !path.exists() {
            let io = |source| AppError::Io { what: format!("writing {}", path.display()), source };
            std::fs::create_dir_all(path.parent().unwrap_or(&self.data_dir)).map_err(io)?;
            std::fs::write(&path, demo).map_err(io)?;
        }
        Ok(path)
    }

    /// Leaves the marker file the end-to-end test looks for when the canary command ran.
    pub fn mark_canary_invoked(&self) -> Result<(), AppError> {
        let p = self.data_dir.join("canary-invoked");
        std::fs::create_dir_all(&self.data_dir)
            .and_then(|_| std::fs::write(&p, b"invoked"))
            .map_err(|source| AppError::Io { what: format!("writing {}", p.display()), source })
    }
}

/// Pi's agent dir from the environment (`$PI_CODING_AGENT_DIR`, else `~/.pi/agent`).
pub fn agent_dir_from_env() -> PathBuf {
    session_engine::store::agent_dir()
}

/// What the UI knows of the open session.
pub fn describe_open(o: &OpenSession) -> OpenedSession {
    let session = &o.session;
    OpenedSession {
        path: o.path.display().to_string(),
        name: session.name().map(str::to_string),
        cwd: session.header().and_then(|h| h.cwd.clone()),
        is_demo: o.is_demo,
        entry_count: session.len() as u32,
        total_rows: o.layout.len() as u32,
        lanes: o.layout.lanes() as u32,
        leaf_id: o.leaf.map(|l| session.id(l).to_string()),
        leaf_row: o.leaf.and_then(|l| o.layout.row_of(l as u32)),
        file_leaf_id: session.file_leaf().map(|l| session.id(l).to_string()),
        leaf_moved: o.leaf != session.file_leaf(),
        diagnostics: session.diagnostics().iter().take(20).map(|d| format!("line {}: {}", d.line, d.message)).collect(),
        read_only: session.read_only_reason(),
    }
}
