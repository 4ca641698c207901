//! The context window of the session's model at a node: the user's override for that model
//! (remembered in Arbor's state file) > Pi's `models.json` in its agent folder > Pi's model table
//! (`summarizer::pi_models`) > 200k, with a sentence saying which. The model is the one Pi would use from that node: the last
//! `model_change` or assistant message on its path (the engine's `build_context`).

use crate::error::{AppError, IpcResult};
use crate::state::app::AppState;
use crate::state::state_file::ArborStateFile;
use crate::view::window::{ContextWindowView, WindowSource};
use session_engine::context::{build_context, Context};
use summarizer::pi_models;
use summarizer::pi_models_json::PiModelsJson;
use tauri::State;

fn clamp(n: u64) -> u32 {
    n.min(u32::MAX as u64) as u32
}

/// Provider and model id in effect in a context.
pub fn model_of(ctx: &Context) -> (Option<String>, Option<String>) {
    match &ctx.model {
        Some(m) => (m.provider.as_str().map(str::to_string), m.model_id.as_str().map(str::to_string)),
        None => (None, None),
    }
}

/// Provider and model id of the session at `entry_id` (default: Arbor's leaf).
fn model_at(state: &AppState, entry_id: Option<&str>) -> Result<(Option<String>, Option<String>), AppError> {
    state.with_open(|o| {
        let leaf = match entry_id {
            Some(id) => Some(o.session.index_of(id).ok_or_else(|| AppError::UnknownEntry(id.to_string()))?),
            None => o.leaf,
        };
        Ok(model_of(&build_context(&o.session, leaf)))
    })
}

/// The window for the session's model at `entry_id`.
pub fn context_window(state: &AppState, entry_id: Option<&str>) -> Result<ContextWindowView, AppError> {
    let (provider, model) = model_at(state, entry_id)?;
    Ok(window_view(
        provider.as_deref(),
        model.as_deref(),
        &ArborStateFile::load(&state.state_file()),
        &state.pi_models_json(),
    ))
}

/// The window for a provider and model, with the user's overrides in `st` and Pi's `models.json`.
pub fn window_view(
    provider: Option<&str>,
    model: Option<&str>,
    st: &ArborStateFile,
    pi: &PiModelsJson,
) -> ContextWindowView {
    let r = pi_models::resolve(provider, model, &st.context_windows, pi);
    ContextWindowView {
        tokens: clamp(r.tokens),
        source: match r.source {
            pi_models::WindowSource::Override => WindowSource::Override,
            pi_models::WindowSource::Table => WindowSource::Table,
            pi_models::WindowSource::PiModels => WindowSource::PiModels,
            pi_models::WindowSource::Default => WindowSource::Default,
        },
        warning: r.models_json_error.clone(),
        label: r.label(),
        provider: r.provider,
        model: r.model,
        table_tokens: r.table_tokens.map(clamp),
        table_name: r.table_name,
    }
}

/// Remember `tokens` as the window of the session's model at `entry_id` (None: forget the
/// override, so the table or the default applies again).
pub fn set_context_window(
    state: &AppState,
    entry_id: Option<&str>,
    tokens: Option<u32>,
) -> Result<ContextWindowView, AppError> {
    if let Some(n) = tokens {
        if !(1000..=100_000_000).contains(&n) {
            return Err(AppError::BadInput(format!(
                "a context window of {n} tokens is not plausible: give a number between 1000 and 100000000"
            )));
        }
    }
    let (provider, model) = model_at(state, entry_id)?;
    let key = pi_models::override_key(provider.as_deref(), model.as_deref());
    let path = state.state_file();
    let mut st = ArborStateFile::load(&path);
    match tokens {
        Some(n) => st.context_windows.insert(key, n as u64),
        None => st.context_windows.remove(&key),
    };
    st.save(&path)?;
    context_window(state, entry_id)
}

/// Set (or with `tokens: null` clear) the user's context window for the session's model at
/// `entry_id`.
#[tauri::command]
#[specta::specta]
pub fn set_context_window_override(
    state: State<'_, AppState>,
    entry_id: Option<String>,
    tokens: Option<u32>,
) -> IpcResult<ContextWindowView> {
    Ok(set_context_window(&state, entry_id.as_deref(), tokens)?)
}
