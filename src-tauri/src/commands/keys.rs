//! Summarizer setup in the app: API keys in the OS keyring (set / delete / has; never read back),
//! the keyring self-test, the provider + model choice over the model catalog, and the
//! before-compact / before-navigate hooks of Arbor's settings.

use crate::error::{AppError, IpcResult};
use crate::state::app::AppState;
use crate::state::state_file::ArborStateFile;
use crate::state::summarizer::{effective_base_url, SummarizerState};
use crate::view::keys::{CatalogModel, HooksView, KeyState, KeyringNotice, ModelChoice, SummarizerConfig};
use summarizer::hooks::HookCommand;
use tauri::State;

pub const PROVIDERS: [&str; 3] = ["openai", "anthropic", "gemini"];

/// The keyring status and whether its notice is still to be shown (Arbor's state file
/// remembers a dismissal).
pub fn keyring_notice(st: &SummarizerState, app: &AppState) -> KeyringNotice {
    let status = st.keyring_status();
    let dismissed = ArborStateFile::load(&app.state_file()).keyring_notice_dismissed;
    KeyringNotice { show: !status.ok && !dismissed, status }
}

/// Remember that the user dismissed the notice; it is not shown again.
pub fn dismiss_notice(st: &SummarizerState, app: &AppState) -> Result<KeyringNotice, AppError> {
    let path = app.state_file();
    let mut f = ArborStateFile::load(&path);
    f.keyring_notice_dismissed = true;
    f.save(&path)?;
    Ok(keyring_notice(st, app))
}

fn check_provider(provider: &str) -> Result<(), AppError> {
    if PROVIDERS.contains(&provider) {
        Ok(())
    } else {
        Err(AppError::BadInput(format!("unknown provider `{provider}`: use openai, anthropic or gemini")))
    }
}

pub fn key_state(provider: &str) -> KeyState {
    match summarizer::keys::has_key(provider) {
        Ok(stored) => KeyState { provider: provider.to_string(), stored, problem: None },
        Err(e) => KeyState { provider: provider.to_string(), stored: false, problem: Some(e.to_string()) },
    }
}

pub fn key_states() -> Vec<KeyState> {
    PROVIDERS.iter().map(|p| key_state(p)).collect()
}

pub fn set_key(provider: &str, key: &str) -> Result<KeyState, AppError> {
    check_provider(provider)?;
    summarizer::keys::set_key(provider, key)?;
    Ok(key_state(provider))
}

pub fn delete_key(provider: &str) -> Result<KeyState, AppError> {
    check_provider(provider)?;
    summarizer::keys::delete_key(provider)?;
    Ok(key_state(provider))
}

pub fn config(st: &SummarizerState) -> Result<SummarizerConfig, AppError> {
    let choice = st.choice();
    let cat = st.catalog()?;
    let found = choice.model.as_deref().and_then(|m| cat.find(&choice.provider, m));
    let effective_base_url = effective_base_url(&choice).or_else(|| found.and_then(|m| m.base_url.clone()));
    Ok(SummarizerConfig {
        offline: choice.provider == "offline",
        context_window: found.map(|m| m.context_window.min(u32::MAX as u64) as u32),
        effective_base_url,
        models: cat
            .models
            .iter()
            .map(|m| CatalogModel {
                provider: m.provider.clone(),
                id: m.id.clone(),
                context_window: m.context_window.min(u32::MAX as u64) as u32,
                max_output: m.max_output.min(u32::MAX as u64) as u32,
                user_added: m.user_added,
            })
            .collect(),
        keys: key_states(),
        choice,
    })
}

pub fn save_choice(st: &SummarizerState, choice: &ModelChoice) -> Result<SummarizerConfig, AppError> {
    let p = choice.provider.as_str();
    if p != "offline" {
        check_provider(p)?;
        if choice.model.as_deref().is_none_or(|m| m.trim().is_empty()) {
            return Err(AppError::BadInput(format!("choose a model for {p} (or the offline summarizer)")));
        }
    }
    let clean = ModelChoice {
        provider: choice.provider.clone(),
        model: if p == "offline" { None } else { choice.model.as_ref().map(|m| m.trim().to_string()) },
        base_url: choice.base_url.as_ref().map(|b| b.trim().to_string()).filter(|b| !b.is_empty()),
    };
    st.save_choice(&clean)?;
    config(st)
}

/// Adds a model of the user's own (e.g. a local server's) to the catalog.
pub fn add_model(st: &SummarizerState, m: &CatalogModel) -> Result<SummarizerConfig, AppError> {
    let mut cat = st.catalog()?;
    cat.add_user_model(summarizer::catalog::ModelInfo {
        provider: m.provider.clone(),
        id: m.id.trim().to_string(),
        context_window: m.context_window as u64,
        max_output: m.max_output as u64,
        base_url: None,
        user_added: true,
    })?;
    cat.save_user(&st.models_file())?;
    config(st)
}

fn hook_line(h: &Option<HookCommand>) -> Option<String> {
    h.as_ref().map(|h| h.command.join(" "))
}

pub fn hooks(st: &SummarizerState) -> Result<HooksView, AppError> {
    let s = st.arbor_settings()?;
    let timeout =
        s.hooks.before_compact.as_ref().or(s.hooks.before_navigate.as_ref()).map(|h| h.timeout_ms).unwrap_or(30_000);
    Ok(HooksView {
        before_compact: hook_line(&s.hooks.before_compact),
        before_navigate: hook_line(&s.hooks.before_navigate),
        timeout_ms: timeout.min(u32::MAX as u64) as u32,
        branch_summary_max_tokens: s.branch_summary_max_tokens.map(|n| n.min(u32::MAX as u64) as u32),
        artifact_ledger: s.artifact_ledger.unwrap_or(false),
        path: st.settings_path.as_ref().map(|p| p.display().to_string()),
    })
}

pub fn save_hooks(st: &SummarizerState, v: &HooksView) -> Result<HooksView, AppError> {
    let path = st
        .settings_path
        .clone()
        .ok_or_else(|| AppError::Refused("no home folder, so Arbor has nowhere to save its settings".into()))?;
    let mut s = st.arbor_settings()?;
    let timeout_ms = if v.timeout_ms == 0 { 30_000 } else { v.timeout_ms as u64 };
    let cmd = |line: &Option<String>| {
        line.as_deref()
            .map(|l| l.split_whitespace().map(str::to_string).collect::<Vec<_>>())
            .filter(|c| !c.is_empty())
            .map(|command| HookCommand { command, timeout_ms })
    };
    s.hooks.before_compact = cmd(&v.before_compact);
    s.hooks.before_navigate = cmd(&v.before_navigate);
    s.branch_summary_max_tokens = v.branch_summary_max_tokens.filter(|n| *n > 0).map(u64::from);
    s.artifact_ledger = Some(v.artifact_ledger);
    s.save(&path)?;
    hooks(st)
}

// ---- commands -----------------------------------------------------------------------------

/// The keyring status with whether its one-time notice is still to be shown.
#[tauri::command]
#[specta::specta]
pub async fn get_keyring_notice(st: State<'_, SummarizerState>, app: State<'_, AppState>) -> IpcResult<KeyringNotice> {
    Ok(keyring_notice(&st, &app))
}

/// The user closed the keyring notice: never show it again (remembered in Arbor's state).
#[tauri::command]
#[specta::specta]
pub async fn dismiss_keyring_notice(
    st: State<'_, SummarizerState>,
    app: State<'_, AppState>,
) -> IpcResult<KeyringNotice> {
    Ok(dismiss_notice(&st, &app)?)
}

/// Stores the key in the OS keyring. The key is never sent back to the UI.
#[tauri::command]
#[specta::specta]
pub async fn set_api_key(provider: String, key: String) -> IpcResult<KeyState> {
    Ok(set_key(&provider, &key)?)
}

#[tauri::command]
#[specta::specta]
pub async fn delete_api_key(provider: String) -> IpcResult<KeyState> {
    Ok(delete_key(&provider)?)
}

#[tauri::command]
#[specta::specta]
pub async fn get_summarizer_config(st: State<'_, SummarizerState>) -> IpcResult<SummarizerConfig> {
    Ok(config(&st)?)
}

#[tauri::command]
#[specta::specta]
pub async fn save_model_choice(st: State<'_, SummarizerState>, choice: ModelChoice) -> IpcResult<SummarizerConfig> {
    Ok(save_choice(&st, &choice)?)
}

#[tauri::command]
#[specta::specta]
pub async fn add_user_model(st: State<'_, SummarizerState>, model: CatalogModel) -> IpcResult<SummarizerConfig> {
    Ok(add_model(&st, &model)?)
}

#[tauri::command]
#[specta::specta]
pub async fn get_hooks(st: State<'_, SummarizerState>) -> IpcResult<HooksView> {
    Ok(hooks(&st)?)
}

#[tauri::command]
#[specta::specta]
pub async fn save_hook_settings(st: State<'_, SummarizerState>, hooks: HooksView) -> IpcResult<HooksView> {
    Ok(save_hooks(&st, &hooks)?)
}
