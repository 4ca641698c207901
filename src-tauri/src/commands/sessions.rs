//! Session picker, opening files and the bundled demo.

use super::budgets::{default_cut, default_keep_recent};
use crate::error::{AppError, IpcResult};
use crate::state::app::{describe_open, AppState, OpenSession};
use crate::state::layout::{relayout_revealing, Folding, NodeCache};
use crate::state::lock;
use crate::state::state_file::ArborStateFile;
use crate::view::session::OpenedSession;
use session_engine::Session;
use std::path::Path;
use tauri::State;

/// A rich generated Pi session (branches, three compactions, branch summaries, a label) that
/// opens when the user has no Pi sessions yet.
pub const DEMO_SESSION: &[u8] = include_bytes!("../../demo/demo-session.jsonl");

pub fn describe(state: &AppState) -> Result<OpenedSession, AppError> {
    state.with_open(|o| Ok(describe_open(o)))
}

/// Open `path`, restoring the leaf Arbor remembered for it (if that entry still exists).
///
/// The session open before is let go first: a session is held whole, and at a million entries
/// that is 2.6 GB, which a reopen held twice while the new copy was read (a main process of
/// 9.4 GB). If the new file cannot be opened, the previous session is read again, at the entry
/// it showed, so a failed open still leaves it open as before.
pub fn open(state: &AppState, path: &Path, is_demo: bool) -> Result<OpenedSession, AppError> {
    let previous = lock(&state.open).take().map(|o| {
        // Its background run of quality marks stops at its next summary instead of its next
        // slice, and lets the old session go with it.
        o.quality.retire();
        Previous { path: o.path.clone(), is_demo: o.is_demo, leaf: o.leaf.map(|l| o.session.id(l).to_string()) }
    });
    let opened = read_open(state, path, is_demo, None);
    let open = match opened {
        Ok(open) => open,
        Err(e) => {
            if let Some(p) = previous {
                if let Ok(o) = read_open(state, &p.path, p.is_demo, p.leaf.as_deref()) {
                    let mut g = lock(&state.open);
                    if g.is_none() {
                        *g = Some(o);
                    }
                }
            }
            return Err(e);
        }
    };
    let dto = describe_open(&open);
    *lock(&state.open) = Some(open);
    if !is_demo {
        let key = path.display().to_string();
        let mut st = ArborStateFile::load(&state.state_file());
        st.touch_recent(&key);
        st.save(&state.state_file())?;
    }
    Ok(dto)
}

/// What is kept of the session an open replaces, to open it again if the new one fails.
struct Previous {
    path: std::path::PathBuf,
    is_demo: bool,
    leaf: Option<String>,
}

/// Reads `path` and lays it out at `leaf` (an entry id), else at the leaf Arbor remembered for
/// it, else at the file's leaf.
fn read_open(state: &AppState, path: &Path, is_demo: bool, leaf: Option<&str>) -> Result<OpenSession, AppError> {
    let session = Session::open(path)?;
    if session.header().is_none() {
        return Err(AppError::BadInput(format!("{} is not a Pi session (no session header line)", path.display())));
    }
    let key = path.display().to_string();
    let st = ArborStateFile::load(&state.state_file());
    let remembered = leaf.or(st.leaves.get(&key).map(String::as_str));
    let leaf = remembered.and_then(|id| session.index_of(id)).or(session.file_leaf());
    let mut folding = Folding::default();
    let mut nodes = NodeCache::default();
    let cut = default_cut(&session, leaf, default_keep_recent(&state.agent_dir));
    let layout = relayout_revealing(&session, leaf, &mut folding, &mut nodes, cut);
    let noticed = session.len();
    Ok(OpenSession {
        noticed,
        path: path.to_path_buf(),
        session: session.into(),
        leaf,
        layout,
        nodes,
        folding,
        is_demo,
        markers: Default::default(),
        quality: Default::default(),
    })
}

/// Copy the embedded demo into Arbor's data dir (once; labels are appended to the copy) and open it.
pub fn open_demo(state: &AppState) -> Result<OpenedSession, AppError> {
    let path = state.demo_copy(DEMO_SESSION)?;
    open(state, &path, true)
}

#[tauri::command]
#[specta::specta]
pub fn open_session(state: State<'_, AppState>, path: String) -> IpcResult<OpenedSession> {
    Ok(open(&state, Path::new(&path), false)?)
}

#[tauri::command]
#[specta::specta]
pub fn open_demo_session(state: State<'_, AppState>) -> IpcResult<OpenedSession> {
    Ok(open_demo(&state)?)
}

#[tauri::command]
#[specta::specta]
pub fn current_session(state: State<'_, AppState>) -> IpcResult<OpenedSession> {
    Ok(describe(&state)?)
}

/// The path "Save as v3 copy" writes for `original`: beside it, `<stem>-v3.jsonl`.
pub fn v3_copy_path(original: &Path) -> std::path::PathBuf {
    let stem = original.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "session".into());
    original.with_file_name(format!("{stem}-v3.jsonl"))
}

/// "Save as v3 copy": migrate the open version 1/2 session the way Pi does (the engine's
/// `migrated_lines`, the same as `arbor-cli migrate`), write it to a NEW file beside the original
/// (`create_session_file`: atomic, refuses an existing path), then open the copy. The original is
/// only read.
pub fn save_v3_copy_of_open(state: &AppState) -> Result<OpenedSession, AppError> {
    let original = state.with_open(|o| Ok(o.path.clone()))?;
    let out = v3_copy_path(&original);
    if out.exists() {
        return Err(AppError::Refused(format!(
            "{} already exists, so no copy was written; open that file, or move it away and try again",
            out.display()
        )));
    }
    let session = Session::open(&original)?;
    let Some(lines) = session.migrated_lines() else {
        return Err(AppError::Refused(match session.version_in_file() {
            Some(3.0) => format!(
                "{} is already a version 3 session, so there is nothing to migrate and nothing was written",
                original.display()
            ),
            _ => format!("{} cannot be migrated by this Arbor, so nothing was written", original.display()),
        }));
    };
    session_engine::store::create_session_file(&out, &lines)?;
    open(state, &out, false)
}

#[tauri::command]
#[specta::specta]
pub fn save_v3_copy(state: State<'_, AppState>) -> IpcResult<OpenedSession> {
    Ok(save_v3_copy_of_open(&state)?)
}

/// Native file dialog, opened from Rust so the webview needs no dialog permission.
#[tauri::command]
#[specta::specta]
pub async fn pick_session_file(app: tauri::AppHandle) -> IpcResult<Option<String>> {
    use tauri_plugin_dialog::DialogExt;
    let picked = app.dialog().file().add_filter("Pi session", &["jsonl"]).blocking_pick_file();
    Ok(picked.and_then(|p| p.into_path().ok()).map(|p| p.display().to_string()))
}

/// F47 canary: nothing in the UI calls this. If session content ever ran as script and reached
/// IPC, this marker file would appear and the end-to-end test would fail.
#[tauri::command]
#[specta::specta]
pub fn canary(state: State<'_, AppState>) -> IpcResult<()> {
    Ok(state.mark_canary_invoked()?)
}
