//! What the app holds between commands: where things live, the open session with its graph
//! layout, and Arbor's own small state file (remembered leaf per session, recent sessions).

use crate::error::AppError;
pub mod library;

use crate::view::graph::Folding;
use serde::{Deserialize, Serialize};
use session_engine::Session;
use session_graph::Layout;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use std::sync::Mutex;

pub struct OpenSession {
    /// The session file (the engine's `Session` does not keep its path).
    pub path: PathBuf,
    pub session: Session,
    /// The leaf Arbor shows (Pi's file leaf unless the user navigated).
    pub leaf: Option<usize>,
    pub layout: Layout,
    /// The layout's input, kept while the entries stay the same.
    pub nodes: crate::view::graph::NodeCache,
    pub folding: Folding,
    pub is_demo: bool,
    /// Drop-alarm counts and retention scores of summary markers, per entry id.
    pub markers: crate::view::summary::MarkerCache,
}

impl OpenSession {
    /// Reads what was just appended to the open file into the session, in time proportional to
    /// the new bytes. The file is opened again only when it is not a plain extension of what is
    /// held (rewritten meanwhile, or it did not end in a newline, so the append added one first);
    /// then entry indices may change, so the caller sets the leaf after this.
    pub fn read_appended(&mut self) -> Result<(), AppError> {
        if let session_engine::session::Extend::Added(_) = self.session.extend_from_file(&self.path)? {
            return Ok(());
        }
        self.session = Session::open(&self.path)?;
        self.markers.clear();
        self.nodes.clear();
        Ok(())
    }
}

pub struct AppState {
    /// Pi's agent dir (`$PI_CODING_AGENT_DIR`, else `~/.pi/agent`).
    pub agent_dir: PathBuf,
    /// Arbor's own data dir (state file, the demo copy, the canary marker).
    pub data_dir: PathBuf,
    pub open: Mutex<Option<OpenSession>>,
}

impl AppState {
    pub fn new(agent_dir: PathBuf, data_dir: PathBuf) -> AppState {
        AppState { agent_dir, data_dir, open: Mutex::new(None) }
    }

    /// Run `f` on the open session; the lock is only poisoned if a command panicked, in which
    /// case the data is still consistent (commands mutate only after all fallible steps).
    pub fn with_open<T>(&self, f: impl FnOnce(&mut OpenSession) -> Result<T, AppError>) -> Result<T, AppError> {
        let mut guard = self.open.lock().unwrap_or_else(|p| p.into_inner());
        let open = guard.as_mut().ok_or(AppError::NoSession)?;
        f(open)
    }

    pub fn state_file(&self) -> PathBuf {
        self.data_dir.join("state.json")
    }
}

/// Pi's agent dir from the environment (`$PI_CODING_AGENT_DIR`, else `~/.pi/agent`).
pub fn agent_dir_from_env() -> PathBuf {
    session_engine::store::agent_dir()
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArborStateFile {
    /// session path -> leaf id chosen in Arbor (absent: Pi's file leaf).
    #[serde(default)]
    pub leaves: BTreeMap<String, String>,
    /// Most recent first.
    #[serde(default)]
    pub recent: Vec<String>,
    /// Context windows the user set, per model (`summarizer::pi_models::override_key`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub context_windows: BTreeMap<String, u64>,
    /// The user dismissed the "keyring unavailable" notice; it is not shown again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub keyring_notice_dismissed: bool,
}

impl ArborStateFile {
    /// A missing or unreadable state file is an empty state: it is only a convenience.
    pub fn load(path: &Path) -> ArborStateFile {
        std::fs::read(path).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default()
    }

    pub fn save(&self, path: &Path) -> Result<(), AppError> {
        let io = |source| AppError::Io { what: format!("writing {}", path.display()), source };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let tmp = path.with_extension("json.tmp");
        let body = serde_json::to_vec_pretty(self).map_err(|e| AppError::BadInput(e.to_string()))?;
        std::fs::write(&tmp, body).map_err(io)?;
        std::fs::rename(&tmp, path).map_err(io)
    }

    pub fn touch_recent(&mut self, session_path: &str) {
        self.recent.retain(|p| p != session_path);
        self.recent.insert(0, session_path.to_string());
        self.recent.truncate(12);
    }
}

/// What the UI knows of the open session.
pub fn describe_open(o: &OpenSession) -> crate::view::session::OpenedSession {
    let s = &o.session;
    crate::view::session::OpenedSession {
        path: o.path.display().to_string(),
        name: s.name().map(str::to_string),
        cwd: s.header().and_then(|h| h.cwd.clone()),
        is_demo: o.is_demo,
        entry_count: s.len() as u32,
        total_rows: o.layout.len() as u32,
        lanes: o.layout.lanes() as u32,
        leaf_id: o.leaf.map(|l| s.id(l).to_string()),
        leaf_row: o.leaf.and_then(|l| o.layout.row_of(l as u32)),
        file_leaf_id: s.file_leaf().map(|l| s.id(l).to_string()),
        leaf_moved: o.leaf != s.file_leaf(),
        diagnostics: s.diagnostics().iter().take(20).map(|d| format!("line {}: {}", d.line, d.message)).collect(),
        read_only: s.read_only_reason(),
    }
}
