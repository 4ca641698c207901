//! Compare two nodes of the open session (`branch_compare`): the common ancestor and each side's
//! entries, context, summaries, files, commands, errors, last request, model and cost. Only
//! reads: planned on a snapshot of the session, off the session lock and off the main thread.

use crate::error::{AppError, IpcResult};
use crate::state::app::AppState;
use crate::view::compare::ComparisonView;
use session_engine::Session;
use std::sync::Arc;
use tauri::State;

/// The session as it is now and the two nodes' indices; the same node twice is refused.
fn nodes(state: &AppState, a: &str, b: &str) -> Result<(Arc<Session>, usize, usize), AppError> {
    if a == b {
        return Err(AppError::BadInput(format!(
            "entry {a} was picked twice, so there is nothing to compare; pick a second, different node"
        )));
    }
    state.with_open(|o| {
        let idx = |id: &str| o.session.index_of(id).ok_or_else(|| AppError::UnknownEntry(id.to_string()));
        Ok((o.session.snapshot(), idx(a)?, idx(b)?))
    })
}

/// Node `a` (side A) against node `b` (side B).
pub fn compare(state: &AppState, a: &str, b: &str) -> Result<ComparisonView, AppError> {
    let (s, ia, ib) = nodes(state, a, b)?;
    Ok(ComparisonView::of(&s, &branch_compare::compare(&s, ia, ib)))
}

/// The comparison walks both sides and builds the context at each tip (tens of milliseconds on
/// a big session): on a blocking thread, so neither the window nor a click's command waits.
#[tauri::command]
#[specta::specta]
pub async fn compare_entries(state: State<'_, AppState>, a: String, b: String) -> IpcResult<ComparisonView> {
    let (s, ia, ib) = nodes(&state, &a, &b)?;
    tauri::async_runtime::spawn_blocking(move || ComparisonView::of(&s, &branch_compare::compare(&s, ia, ib)))
        .await
        .map_err(|e| AppError::Refused(format!("the comparison stopped unexpectedly ({e})")).into())
}
