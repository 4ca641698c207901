//! The context window of the session's model at a node: the user's override for that model
//! (remembered in Arbor's state file) > Pi's model table (`summarizer::pi_models`) > 200k, with a
//! sentence saying which. The model is the one Pi would use from that node: the last
//! `model_change` or assistant message on its path (the engine's `build_context`).

use crate::error::{AppError, IpcResult};
use crate::state::{AppState, ArborStateFile};
use serde::Serialize;
use session_engine::context::build_context;
use specta::Type;
use summarizer::pi_models::{self, WindowSource};
use tauri::State;

#[derive(Debug, Clone, Serialize, Type, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ContextWindowView {
    pub tokens: u32,
    /// "override" | "table" | "default".
    pub source: String,
    /// "claude-sonnet-4-5 · 200k from Pi's model table", "… set by you", "…: unknown model, 200k default".
    pub label: String,
    /// The session's model at that node, as its entries name it.
    pub provider: Option<String>,
    pub model: Option<String>,
    /// Pi's table's window for it (also when overridden), and its display name.
    pub table_tokens: Option<u32>,
    pub table_name: Option<String>,
}

fn clamp(n: u64) -> u32 {
    n.min(u32::MAX as u64) as u32
}

/// Provider and model id of the session at `entry_id` (default: Arbor's leaf).
fn model_at(state: &AppState, entry_id: Option<&str>) -> Result<(Option<String>, Option<String>), AppError> {
    state.with_open(|o| {
        let leaf = match entry_id {
            Some(id) => Some(o.session.index_of(id).ok_or_else(|| AppError::UnknownEntry(id.to_string()))?),
            None => o.leaf,
        };
        let m = build_context(&o.session, leaf).model;
        Ok(match m {
            Some(m) => (m.provider.as_str().map(str::to_string), m.model_id.as_str().map(str::to_string)),
            None => (None, None),
        })
    })
}

/// The window for the session's model at `entry_id`.
pub fn context_window(state: &AppState, entry_id: Option<&str>) -> Result<ContextWindowView, AppError> {
    let (provider, model) = model_at(state, entry_id)?;
    let st = ArborStateFile::load(&state.state_file());
    let r = pi_models::resolve(provider.as_deref(), model.as_deref(), &st.context_windows);
    Ok(ContextWindowView {
        tokens: clamp(r.tokens),
        source: match r.source {
            WindowSource::Override => "override",
            WindowSource::Table => "table",
            WindowSource::Default => "default",
        }
        .into(),
        label: r.label(),
        provider: r.provider,
        model: r.model,
        table_tokens: r.table_tokens.map(clamp),
        table_name: r.table_name,
    })
}

/// Remember `tokens` as the window of the session's model at `entry_id` (None: forget the
/// override, so the table or the default applies again).
pub fn set_context_window(state: &AppState, entry_id: Option<&str>, tokens: Option<u32>) -> Result<ContextWindowView, AppError> {
    if let Some(n) = tokens {
        if !(1000..=100_000_000).contains(&n) {
            return Err(AppError::BadInput(format!("a context window of {n} tokens is not plausible: give a number between 1000 and 100000000")));
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

/// The context window of the session's model at `entry_id` (default: the leaf), and where the
/// number comes from.
#[tauri::command]
#[specta::specta]
pub fn get_context_window(state: State<'_, AppState>, entry_id: Option<String>) -> IpcResult<ContextWindowView> {
    Ok(context_window(&state, entry_id.as_deref())?)
}

/// Set (or with `tokens: null` clear) the user's context window for the session's model at
/// `entry_id`.
#[tauri::command]
#[specta::specta]
pub fn set_context_window_override(state: State<'_, AppState>, entry_id: Option<String>, tokens: Option<u32>) -> IpcResult<ContextWindowView> {
    Ok(set_context_window(&state, entry_id.as_deref(), tokens)?)
}
