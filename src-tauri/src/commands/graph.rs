//! Graph windows, folds, search and entry detail.

use super::model_window;
use crate::error::{AppError, IpcResult};
use crate::state::app::{AppState, OpenSession};
use crate::state::layout::relayout;
use crate::state::markers::annotate_rows;
use crate::state::state_file::ArborStateFile;
use crate::view::budgets::Budgets;
use crate::view::context::{context_view_of, ContextView};
use crate::view::detail::{entry_detail, EntryDetail, Selection};
use crate::view::graph::{self, GraphViewport, GraphWindow, SearchHit};
use crate::view::window::ContextWindowView;
use session_engine::context::build_context;
use session_engine::Session;
use summarizer::pi_models_json::PiModelsJson;
use tauri::State;

fn idx_of(o: &OpenSession, entry_id: &str) -> Result<usize, AppError> {
    o.session.index_of(entry_id).ok_or_else(|| AppError::UnknownEntry(entry_id.to_string()))
}

pub fn window(state: &AppState, start: u32, end: u32) -> Result<GraphWindow, AppError> {
    if end < start || end - start > 5_000 {
        return Err(AppError::BadInput(format!("window {start}..{end}: ask for at most 5000 rows at a time")));
    }
    state.with_open(|o| Ok(window_of(o, start, end)))
}

/// Rows `[start, end)` of the open session's layout, with their markers, as the graph draws them.
pub(crate) fn window_of(o: &OpenSession, start: u32, end: u32) -> GraphWindow {
    let mut rows = graph::window(&o.session, &o.layout, start, end);
    annotate_rows(&o.session, &o.markers, &o.quality, &mut rows);
    GraphWindow { start, total_rows: o.layout.len() as u32, lanes: o.layout.lanes() as u32, rows }
}

/// The rows `view` will draw of the open session's layout once scrolled to its leaf (Continue
/// sends them with its answer); `None` without a leaf or for a view the UI could not have.
pub(crate) fn rows_at_leaf(o: &OpenSession, view: &GraphViewport) -> Option<GraphWindow> {
    let row = o.layout.row_of(o.leaf? as u32)?;
    let (start, end) = view.rows_showing(row, o.layout.len() as u32)?;
    Some(window_of(o, start, end))
}

/// Expand a folded run (or fold it back); `fold_id` is the fold row's entry id.
pub fn toggle_fold(state: &AppState, fold_id: &str) -> Result<u32, AppError> {
    state.with_open(|o| {
        let i = idx_of(o, fold_id)? as u32;
        if !o.folding.expanded.remove(&i) {
            o.folding.expanded.insert(i);
        }
        o.layout = relayout(&o.session, o.leaf, &o.folding, &mut o.nodes);
        Ok(o.layout.len() as u32)
    })
}

/// Unfold every linear run (`true`) or fold them again (`false`); returns the new row count.
pub fn unfold_all(state: &AppState, unfold: bool) -> Result<u32, AppError> {
    state.with_open(|o| {
        o.folding.unfold_all = unfold;
        if !unfold {
            o.folding.expanded.clear();
        }
        o.layout = relayout(&o.session, o.leaf, &o.folding, &mut o.nodes);
        Ok(o.layout.len() as u32)
    })
}

/// The row of an entry, expanding the fold that hides it.
pub fn reveal(state: &AppState, entry_id: &str) -> Result<u32, AppError> {
    state.with_open(|o| {
        let i = idx_of(o, entry_id)? as u32;
        let row = o.layout.row_of(i).ok_or_else(|| AppError::UnknownEntry(entry_id.to_string()))?;
        if let session_graph::RowKind::Fold { first, .. } = o.layout.rows()[row as usize].kind {
            o.folding.expanded.insert(first);
            o.layout = relayout(&o.session, o.leaf, &o.folding, &mut o.nodes);
        }
        o.layout.row_of(i).ok_or_else(|| AppError::UnknownEntry(entry_id.to_string()))
    })
}

pub(crate) fn detail_of(o: &OpenSession, i: usize) -> EntryDetail {
    let path: Vec<usize> = o.layout.active_path().iter().map(|x| *x as usize).collect();
    entry_detail(&o.session, i, &path, o.leaf)
}

/// On the main thread: it is short, and the async runtime has one thread per core (two here),
/// which a click's `select_entry` and `preview_compaction` need.
#[tauri::command]
#[specta::specta]
pub fn graph_window(state: State<'_, AppState>, start: u32, end: u32) -> IpcResult<GraphWindow> {
    Ok(window(&state, start, end)?)
}

#[tauri::command]
#[specta::specta]
pub fn toggle_graph_fold(state: State<'_, AppState>, fold_id: String) -> IpcResult<u32> {
    Ok(toggle_fold(&state, &fold_id)?)
}

#[tauri::command]
#[specta::specta]
pub fn unfold_all_runs(state: State<'_, AppState>, unfold: bool) -> IpcResult<u32> {
    Ok(unfold_all(&state, unfold)?)
}

#[tauri::command]
#[specta::specta]
pub fn reveal_entry(state: State<'_, AppState>, entry_id: String) -> IpcResult<u32> {
    Ok(reveal(&state, &entry_id)?)
}

#[tauri::command]
#[specta::specta]
pub fn search_session(state: State<'_, AppState>, query: String) -> IpcResult<Vec<SearchHit>> {
    Ok(state.with_open(|o| Ok(graph::search(&o.session, &o.layout, &query, 200)))?)
}

/// Everything a click on a node updates: detail, the model's window there, the context view.
/// One hold of the session and one context build: the window comes from that context's model.
pub fn select(state: &AppState, entry_id: &str, reserve_tokens: u32, enabled: bool) -> Result<Selection, AppError> {
    let st = ArborStateFile::load(&state.state_file());
    let pi = state.pi_models_json();
    // The detail needs the layout; the context is built on a snapshot, without the session lock.
    let (s, i, detail) = state.with_open(|o| {
        let i = idx_of(o, entry_id)?;
        Ok((o.session.snapshot(), i, detail_of(o, i)))
    })?;
    let (window, context) = context_at(&s, i, &st, &pi, reserve_tokens, enabled);
    Ok(Selection { detail, window, context })
}

/// The part of a selection that needs only the session (no layout, no lock): the window of the
/// model at entry `i` (with the user's overrides in `st` and Pi's `models.json`) and the context
/// view with `i` as leaf.
pub(crate) fn context_at(
    session: &Session,
    i: usize,
    st: &ArborStateFile,
    pi: &PiModelsJson,
    reserve_tokens: u32,
    enabled: bool,
) -> (ContextWindowView, ContextView) {
    let ctx = build_context(session, Some(i));
    let (provider, model) = model_window::model_of(&ctx);
    let window = model_window::window_view(provider.as_deref(), model.as_deref(), st, pi);
    let context = context_view_of(session, Some(i), &ctx, window.tokens, reserve_tokens, enabled);
    (window, context)
}

/// A click on a node: detail, window and context view in one round trip, off the main thread.
/// The window is the model's at the node; of `budgets` (the Budgets panel's) the context view
/// uses the reserve and the auto-compaction switch.
#[tauri::command]
#[specta::specta]
pub async fn select_entry(state: State<'_, AppState>, entry_id: String, budgets: Budgets) -> IpcResult<Selection> {
    Ok(select(&state, &entry_id, budgets.reserve_tokens, budgets.enabled)?)
}
