//! Budgets: Pi's compaction settings, and the live cut-point preview (no LLM).

use crate::error::{AppError, IpcResult};
use crate::state::app::{AppState, OpenSession};
use crate::state::budgets;
use crate::state::layout::relayout_revealing;
use crate::view::budgets::{BudgetArgs, BudgetSettings, Budgets, CompactionPreview, SettingsScope};
use session_engine::compaction::{first_kept_position, prepare_compaction, CompactionPreparation, Refusal};
use session_engine::context::{context_message, estimate_tokens, CompactionSettings};
use session_engine::Session;
use tauri::State;

fn cwd(state: &AppState) -> Option<String> {
    state.with_open(|o| Ok(o.session.header().and_then(|h| h.cwd.clone()))).ok().flatten()
}

pub fn load(state: &AppState, scope: SettingsScope) -> Result<BudgetSettings, AppError> {
    budgets::load(scope, &state.agent_dir, cwd(state).as_deref())
}

pub fn save(state: &AppState, scope: SettingsScope, b: &Budgets) -> Result<BudgetSettings, AppError> {
    budgets::save(scope, &state.agent_dir, cwd(state).as_deref(), b)
}

/// The cut must land on a row of its own: unfolds the run that hides entry `first_kept` (and
/// lays the graph out again). True when it did.
pub fn unfold_cut(o: &mut OpenSession, first_kept: u32) -> bool {
    let Some(row) = o.layout.row_of(first_kept) else { return false };
    if !matches!(o.layout.rows()[row as usize].kind, session_graph::RowKind::Fold { .. }) {
        return false;
    }
    o.layout = relayout_revealing(&o.session, o.leaf, &mut o.folding, &mut o.nodes, Some(first_kept as usize));
    true
}

/// The keep-recent budget of the Budgets panel's first preview (the global settings, the panel's
/// default scope; `None` when they cannot be read). Read before taking the session lock.
pub fn default_keep_recent(agent_dir: &std::path::Path) -> Option<f64> {
    budgets::load(SettingsScope::Global, agent_dir, None).ok().map(|b| b.budgets.keep_recent_tokens as f64)
}

/// The entry the Budgets panel's first preview will cut at with `leaf` as the leaf, given
/// [`default_keep_recent`]. An open and a leaf move lay the graph out with it revealed, so the
/// preview that follows finds its row and does not lay the graph out a second time (which also
/// made the graph ask for its rows again).
pub fn default_cut(session: &Session, leaf: Option<usize>, keep_recent: Option<f64>) -> Option<usize> {
    let path = session.path(leaf);
    first_kept_position(session, &path, keep_recent?).map(|p| path[p])
}

pub fn preview(
    state: &AppState,
    keep_recent_tokens: u32,
    reserve_tokens: u32,
    context_window: u32,
    enabled: bool,
) -> Result<CompactionPreview, AppError> {
    // The cut is planned on a snapshot, without the session lock (a click's selection, asked at
    // the same time, goes on meanwhile); rows are looked up under the lock afterwards.
    let (s, leaf) = state.with_open(|o| Ok((o.session.snapshot(), o.leaf)))?;
    let plan = plan_preview(&s, leaf, keep_recent_tokens, reserve_tokens, context_window, enabled);
    state.with_open(|o| Ok(plan.finish(o)))
}

/// A preview's planning, done on a snapshot of the session without its lock: the cut Pi would
/// make with `leaf` as the leaf, and the tokens it keeps. [`PlannedPreview::finish`] then finds
/// the cut's row in the open session's layout.
pub struct PlannedPreview {
    prepared: Result<CompactionPreparation, Refusal>,
    /// The first kept entry and the tokens from it to the leaf.
    kept: Option<(u32, f64)>,
    threshold: u32,
    enabled: bool,
}

pub fn plan_preview(
    session: &Session,
    leaf: Option<usize>,
    keep_recent_tokens: u32,
    reserve_tokens: u32,
    context_window: u32,
    enabled: bool,
) -> PlannedPreview {
    let settings = CompactionSettings {
        enabled,
        reserve_tokens: reserve_tokens as f64,
        keep_recent_tokens: keep_recent_tokens as f64,
    };
    let path = session.path(leaf);
    let prepared = prepare_compaction(session, &path, &settings);
    let kept = prepared.as_ref().ok().map(|p| {
        (
            path[p.first_kept_position] as u32,
            path[p.first_kept_position..]
                .iter()
                .filter_map(|i| context_message(session, *i))
                .map(|m| estimate_tokens(&m))
                .sum::<f64>(),
        )
    });
    PlannedPreview { prepared, kept, threshold: context_window.saturating_sub(reserve_tokens), enabled }
}

impl PlannedPreview {
    /// The preview with the cut's row in `o`'s layout (unfolding the run that hides it).
    pub fn finish(self, o: &mut OpenSession) -> CompactionPreview {
        let PlannedPreview { prepared, kept, threshold, enabled } = self;
        let first_kept_row = kept.and_then(|(first_kept, _)| {
            unfold_cut(o, first_kept);
            o.layout.row_of(first_kept)
        });
        let total_rows = o.layout.len() as u32;
        match prepared {
            Ok(p) => CompactionPreview {
                refusal: None,
                first_kept_row,
                first_kept_id: Some(p.first_kept_entry_id.clone()),
                is_split_turn: p.is_split_turn,
                tokens_before: p.tokens_before as u32,
                tokens_to_summarize: p.tokens_summarized() as u32,
                // The kept part is re-emitted after the new compaction entry (§11.5).
                tokens_kept: kept.map(|(_, t)| t).unwrap_or(0.0) as u32,
                threshold,
                over_threshold: enabled && p.tokens_before > threshold as f64,
                total_rows,
            },
            Err(refusal) => CompactionPreview {
                refusal: Some(refusal.message().to_string()),
                first_kept_id: None,
                first_kept_row: None,
                is_split_turn: false,
                tokens_before: 0,
                tokens_to_summarize: 0,
                tokens_kept: 0,
                threshold,
                over_threshold: false,
                total_rows,
            },
        }
    }
}

#[tauri::command]
#[specta::specta]
pub fn get_budgets(state: State<'_, AppState>, scope: SettingsScope) -> IpcResult<BudgetSettings> {
    Ok(load(&state, scope)?)
}

#[tauri::command]
#[specta::specta]
pub fn save_budgets(state: State<'_, AppState>, scope: SettingsScope, budgets: Budgets) -> IpcResult<BudgetSettings> {
    Ok(save(&state, scope, &budgets)?)
}

/// Off the main thread: it runs at the same time as a click's `select_entry`.
#[tauri::command]
#[specta::specta]
pub async fn preview_compaction(state: State<'_, AppState>, budgets: BudgetArgs) -> IpcResult<CompactionPreview> {
    let b = &budgets.budgets;
    Ok(preview(&state, b.keep_recent_tokens, b.reserve_tokens, budgets.context_window, b.enabled)?)
}
