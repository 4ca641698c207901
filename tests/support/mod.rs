//! What the app test suites (and the app's benchmarks in `examples/app_bench.rs`) share: [`Env`],
//! one temp dir with Arbor's state over it, and [`provider`], a loopback model provider.
//!
//! Variations of the fixture are constructors and methods of the one `Env`: [`env`] opens nothing,
//! [`Env::with_demo`] opens a copy of the bundled demo session.
#![allow(dead_code)] // each test binary uses a different part

pub mod provider;

use arbor_app::commands::sessions;
use arbor_app::state::app::AppState;
use arbor_app::state::summarizer::SummarizerState;
use std::path::PathBuf;
use std::sync::Arc;

/// The file name [`Env::with_demo`] gives its copy of the demo.
pub const DEMO_FILE_NAME: &str = "2025-03-01T09-00-00-000Z_demo.jsonl";

/// A temp dir holding Pi's agent dir, Arbor's data dir and a folder for the session files a test
/// writes, with the app's state and the summarizer's over them.
pub struct Env {
    pub tmp: tempfile::TempDir,
    /// Pi's agent dir, `<tmp>/agent` (not created: a test writes what it needs there).
    pub agent: PathBuf,
    /// Arbor's data dir, `<tmp>/data` (not created: the app creates it when it writes).
    pub data: PathBuf,
    /// A folder for session files, `<tmp>/sessions` (created).
    pub dir: PathBuf,
    /// The app's state over `agent` and `data` (shared, as the app shares it with the library's
    /// watcher).
    pub state: Arc<AppState>,
    /// The summarizer's state over `data`, with Arbor's settings file at `<tmp>/arbor-settings.json`.
    pub st: SummarizerState,
    /// Where [`Env::with_demo`] copies the demo session: `<dir>/2025-03-01T09-00-00-000Z_demo.jsonl`.
    pub file: PathBuf,
}

/// A fresh temp dir with no session open.
pub fn env() -> Env {
    let tmp = tempfile::tempdir().unwrap();
    let agent = tmp.path().join("agent");
    let data = tmp.path().join("data");
    let dir = tmp.path().join("sessions");
    std::fs::create_dir_all(&dir).unwrap();
    let state = Arc::new(AppState::new(agent.clone(), data.clone()));
    let st = SummarizerState::new(data.clone(), Some(tmp.path().join("arbor-settings.json")));
    let file = dir.join(DEMO_FILE_NAME);
    Env { tmp, agent, data, dir, state, st, file }
}

impl Env {
    /// The app's state as a later start of the app has it: fresh, over the same agent and data
    /// dirs, with no session open.
    pub fn restart(&self) -> AppState {
        AppState::new(self.agent.clone(), self.data.clone())
    }

    /// A fresh temp dir with a copy of the bundled demo session at [`Env::file`], open.
    pub fn with_demo() -> Env {
        let e = env();
        std::fs::write(&e.file, sessions::DEMO_SESSION).unwrap();
        sessions::open(&e.state, &e.file, false).unwrap();
        e
    }
}
