//! The session library in the app, so that any of Pi's sessions is a click away: the picker reads
//! from the SQLite index, search across sessions and within one (each hit with its status), user
//! folders, and live follow (the library's watcher runs in the app; when Pi appends to the open
//! session, it is reloaded and the window is told, keeping the user's leaf and selection).
//!
//! `LibraryState` (in `state/library.rs`, with the watcher and live follow) is managed by Tauri
//! beside `AppState`. Plain functions here are the command bodies (tested without a window in
//! tests/library_cmds.rs); the `#[tauri::command]` one-liners map the error.

use crate::error::{AppError, IpcResult};
use crate::state::app::AppState;
use crate::state::library::{db_path_for, follow_tick, FollowState, LibraryState, RawHandler};
use crate::state::state_file::ArborStateFile;
use crate::view::library::{
    HitStatus, IndexStatus, LibraryHit, LibraryListing, LibraryUiEvent, ListingQuery, ProjectRow, RootRow,
    SearchRequest, SessionRow,
};
use ::library::{EntryStatus, SearchQuery, SessionFilter};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tauri::ipc::Channel;
use tauri::State;

/// The picker's data, from the index only.
pub fn listing(lib: &LibraryState, app: &AppState, q: &ListingQuery) -> Result<LibraryListing, AppError> {
    let roots = lib.root_rows()?;
    let filter = SessionFilter {
        project: q.project.clone(),
        model: q.model.clone().filter(|m| !m.is_empty()),
        modified_since_ms: q.modified_since_ms.map(|m| m as i64),
        sort: q.sort.into(),
        ascending: q.ascending,
        limit: Some(q.limit.unwrap_or(500).min(5000)),
        // Only the watched roots; sessions opened from elsewhere show under "Recent".
        roots: lib.roots()?,
        ..Default::default()
    };
    let recent_paths = ArborStateFile::load(&app.state_file()).recent;
    for p in recent_paths.iter().take(8) {
        // Sessions opened from outside the roots are indexed on demand (errors: just not listed).
        let _ = lib.ensure_indexed(Path::new(p));
    }
    lib.with_lib(|l| {
        let projects = l.projects()?;
        let sessions = l.sessions(&filter)?;
        let mut models: Vec<String> = l
            .sessions(&SessionFilter { limit: Some(5000), ..Default::default() })?
            .into_iter()
            .filter_map(|s| s.model)
            .collect();
        models.sort();
        models.dedup();
        let mut recent = Vec::new();
        for p in recent_paths.iter().take(8) {
            if let Some(s) = l.session(Path::new(p))? {
                recent.push(SessionRow::from(&s));
            }
        }
        let mut sessions: Vec<SessionRow> = sessions.iter().map(SessionRow::from).collect();
        super::forks::fill_fork_facts(l, sessions.iter_mut().chain(recent.iter_mut()))?;
        Ok(LibraryListing {
            status: lib.status(),
            roots,
            projects: projects.iter().map(ProjectRow::from).collect(),
            models,
            sessions,
            recent,
        })
    })
}

pub fn search(lib: &LibraryState, req: &SearchRequest) -> Result<Vec<LibraryHit>, AppError> {
    if req.text.trim().is_empty() {
        return Ok(Vec::new());
    }
    if let Some(p) = &req.session_path {
        lib.ensure_indexed(Path::new(p))?;
    }
    let mut q = SearchQuery::new(&req.text);
    q.session_path = req.session_path.as_ref().map(PathBuf::from);
    q.project = req.project.clone();
    q.statuses = req
        .statuses
        .iter()
        .map(|s| match s {
            HitStatus::InContext => EntryStatus::InContext,
            HitStatus::Compacted => EntryStatus::Compacted,
            HitStatus::Abandoned => EntryStatus::Abandoned,
        })
        .collect();
    q.limit = req.limit.unwrap_or(100).clamp(1, 1000);
    // The watcher completes the full text of new files; a search answers at once from what is
    // indexed (the UI says results may be incomplete until the pass ends) instead of waiting
    // for, and taking the write lock from, that work. Without a watcher, it completes it itself.
    q.complete_pending = !lib.watching();
    let hits = lib.with_lib(|l| l.search(&q))?;
    Ok(hits.iter().map(LibraryHit::from).collect())
}

pub fn add_root(lib: &LibraryState, path: &Path) -> Result<Vec<RootRow>, AppError> {
    lib.with_lib(|l| l.add_user_root(path))?;
    lib.restart_watcher()?;
    lib.root_rows()
}

pub fn remove_root(lib: &LibraryState, path: &Path) -> Result<Vec<RootRow>, AppError> {
    lib.with_lib(|l| l.remove_user_root(path))?;
    lib.restart_watcher()?;
    lib.root_rows()
}

#[tauri::command]
#[specta::specta]
pub async fn library_listing(
    lib: State<'_, LibraryState>,
    app: State<'_, AppState>,
    query: ListingQuery,
) -> IpcResult<LibraryListing> {
    Ok(listing(&lib, &app, &query)?)
}

#[tauri::command]
#[specta::specta]
pub async fn library_search(lib: State<'_, LibraryState>, request: SearchRequest) -> IpcResult<Vec<LibraryHit>> {
    Ok(search(&lib, &request)?)
}

/// Cancel the running index pass (what it indexed stays; the rest on "Resume" or next start).
#[tauri::command]
#[specta::specta]
pub fn library_cancel_indexing(lib: State<'_, LibraryState>) -> IpcResult<IndexStatus> {
    Ok(lib.cancel_indexing()?)
}

/// Index what a cancelled pass left (a full pass with progress events).
#[tauri::command]
#[specta::specta]
pub fn library_resume_indexing(lib: State<'_, LibraryState>) -> IpcResult<IndexStatus> {
    Ok(lib.resume_indexing()?)
}

#[tauri::command]
#[specta::specta]
pub async fn library_add_root(lib: State<'_, LibraryState>, path: String) -> IpcResult<Vec<RootRow>> {
    Ok(add_root(&lib, Path::new(&path))?)
}

#[tauri::command]
#[specta::specta]
pub async fn library_remove_root(lib: State<'_, LibraryState>, path: String) -> IpcResult<Vec<RootRow>> {
    Ok(remove_root(&lib, Path::new(&path))?)
}

// The commands above are async so Tauri runs them off the main thread: a query, or restarting
// the watcher after the roots changed (which waits for a running pass), never freezes the window.

/// Native folder dialog, opened from Rust so the webview needs no dialog permission.
#[tauri::command]
#[specta::specta]
pub async fn library_pick_folder(app: tauri::AppHandle) -> IpcResult<Option<String>> {
    use tauri_plugin_dialog::DialogExt;
    let picked = app.dialog().file().blocking_pick_folder();
    Ok(picked.and_then(|p| p.into_path().ok()).map(|p| p.display().to_string()))
}

/// Live follow: the UI passes a channel and receives every library event from now on. Returns
/// the status at subscription time.
#[tauri::command]
#[specta::specta]
pub fn library_subscribe(lib: State<'_, LibraryState>, on_event: Channel<LibraryUiEvent>) -> IpcResult<IndexStatus> {
    Ok(lib.subscribe(Arc::new(move |ev| on_event.send(ev).is_ok())))
}

/// Set up the library in the app: open the index in `data_dir` (or `$ARBOR_INDEX_DB`) and start
/// the watcher over Pi's roots and the user's folders. Called from `lib.rs`'s setup.
pub fn setup(app: &tauri::App, data_dir: &Path) {
    use tauri::Manager;
    let state = LibraryState::open(db_path_for(data_dir), ::library::roots::pi_roots());
    app.manage(state);
    let handle = app.handle().clone();
    let handler: RawHandler = Arc::new(move |ev| {
        let lib = handle.state::<LibraryState>();
        let app_state = handle.state::<AppState>();
        lib.handle_event(&app_state, ev);
    });
    let lib = app.state::<LibraryState>();
    if let Err(e) = lib.start_watcher(handler) {
        eprintln!("arbor: library watcher: {}", crate::error::IpcError::from(e).message);
    }
    let handle = app.handle().clone();
    let _ = std::thread::Builder::new().name("arbor-follow-open".into()).spawn(move || {
        let mut st = FollowState::default();
        loop {
            std::thread::sleep(std::time::Duration::from_millis(1000));
            follow_tick(&handle.state::<LibraryState>(), &handle.state::<AppState>(), &mut st);
        }
    });
}
