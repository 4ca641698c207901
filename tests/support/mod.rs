//! What several app test suites share: a temp dir with Arbor's state over it (agent and data dirs
//! inside) and a folder for the session files a test writes.
use arbor_app::state::AppState;
use std::path::PathBuf;

pub struct Env {
    pub _tmp: tempfile::TempDir,
    pub state: AppState,
    pub dir: PathBuf,
}

pub fn env() -> Env {
    let tmp = tempfile::tempdir().unwrap();
    let state = AppState::new(tmp.path().join("agent"), tmp.path().join("data"));
    let dir = tmp.path().join("sessions");
    std::fs::create_dir_all(&dir).unwrap();
    Env { _tmp: tmp, state, dir }
}
