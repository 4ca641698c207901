//! Forks across files: the open session's parent as its header's `parentSession` names it, with
//! the parent's path up to where the fork left it (`session_engine::fork`), and the picker's
//! "forked from" and fork counts (the library's `fork_counts`). A parent that is gone, names the
//! fork itself or is not a session is said in a sentence, never an error: the fork opens as it is.

use crate::error::{AppError, IpcResult};
use crate::state::app::AppState;
use crate::view::forks::{ForkView, ParentRow};
use crate::view::graph::entry_title;
use crate::view::library::SessionRow;
use ::library::{LibError, Library};
use session_engine::fork::{ancestry, fork_point, parent_of, ParentStatus};
use session_engine::Session;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tauri::State;

/// How far up the chain of parents the view names (a parent's parent, …).
const ANCESTRY_MAX: usize = 8;

/// The fork `session` (read from `file`) against its parent: None when its header names none.
pub fn fork_view_of(file: &Path, session: &Session) -> Option<ForkView> {
    let p = parent_of(file, session)?;
    let name_of = |path: &Path| path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    let parent = (p.status == ParentStatus::Resolves).then(|| Session::open(&p.path).ok()).flatten();
    let parent_name = parent.as_ref().and_then(|s| s.name().map(str::to_string));
    let shown = parent_name.clone().unwrap_or_else(|| name_of(&p.path));
    let point = parent.as_ref().and_then(|ps| fork_point(session, ps));
    let (mut rows, mut earlier) = (Vec::new(), 0);
    if let (Some(ps), Some(fp)) = (&parent, point) {
        let path = ps.path(Some(fp));
        earlier = path.len().saturating_sub(ForkView::MAX_ROWS);
        rows = path[earlier..]
            .iter()
            .map(|&i| {
                let (kind, title) = entry_title(ps, i);
                ParentRow {
                    entry_id: ps.id(i).to_string(),
                    kind,
                    title,
                    timestamp: ps.entry(i).timestamp.to_string(),
                    in_fork: session.index_of(ps.id(i)).is_some(),
                }
            })
            .collect();
    }
    let chain = ancestry(file, ANCESTRY_MAX);
    Some(ForkView {
        parent_session: p.parent_session.clone(),
        parent_path: p.path.display().to_string(),
        status: p.status.clone().into(),
        sentence: p.status.explain(&shown),
        parent_name,
        fork_point_id: point.and_then(|fp| parent.as_ref().map(|ps| ps.id(fp).to_string())),
        rows,
        earlier: earlier as u32,
        ancestry: chain.iter().skip(1).map(|a| format!("which was {}", a.status.explain(&name_of(&a.path)))).collect(),
    })
}

fn open_file(state: &AppState) -> Result<(PathBuf, Arc<Session>), AppError> {
    state.with_open(|o| Ok((o.path.clone(), o.session.snapshot())))
}

/// The open session's parent, or None when it is no fork.
pub fn fork_parent_of_open(state: &AppState) -> Result<Option<ForkView>, AppError> {
    let (path, s) = open_file(state)?;
    Ok(fork_view_of(&path, &s))
}

/// The picker's fork facts on `rows`: how many indexed sessions name each as their parent, and
/// for a fork its parent's name (from the index) and whether the file is still there.
pub fn fill_fork_facts<'a>(l: &Library, rows: impl Iterator<Item = &'a mut SessionRow>) -> Result<(), LibError> {
    let counts = l.fork_counts()?;
    for r in rows {
        r.fork_count = counts.get(Path::new(&r.path)).copied().unwrap_or(0);
        if let Some(f) = &mut r.forked_from {
            let parent = PathBuf::from(&f.path);
            f.exists = parent.is_file();
            f.name =
                l.session(&parent)?.and_then(|s| s.name.or(s.first_message)).map(|n| crate::view::one_line(&n, 80));
        }
    }
    Ok(())
}

/// Opening the parent file (and finding the fork point in it) reads a second session: on a
/// blocking thread.
#[tauri::command]
#[specta::specta]
pub async fn fork_parent(state: State<'_, AppState>) -> IpcResult<Option<ForkView>> {
    let (path, s) = open_file(&state)?;
    tauri::async_runtime::spawn_blocking(move || fork_view_of(&path, &s))
        .await
        .map_err(|e| AppError::Refused(format!("reading the fork's parent stopped unexpectedly ({e})")).into())
}
