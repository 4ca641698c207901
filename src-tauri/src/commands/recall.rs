//! Bring back into context: entries the model no longer sees (compacted away, or on a branch that
//! was left) appended as one Pi `custom_message` at Arbor's leaf (`session_engine::recall`). The
//! preview says what the message costs and whether the context would then be past the
//! compaction threshold; the write takes the session lock and is planned on the bytes Arbor has
//! read. A recall means something only at the leaf it was planned on, so when Pi appended
//! meanwhile nothing is written (unlike a label, it is not planned again on the grown file).

use crate::error::{AppError, IpcResult};
use crate::state::app::{describe_open, AppState};
use crate::state::layout::relayout;
use crate::state::state_file::ArborStateFile;
use crate::view::budgets::BudgetArgs;
use crate::view::recall::{RecallDone, RecallPreview};
use crate::view::token_count;
use session_engine::recall::{plan_recall, recall_entry, RecallPlan, DEFAULT_MAX_CHARS};
use session_engine::store::{append_entry_planned, SessionLock};
use session_engine::{ids, time, Session};
use tauri::Manager;

/// The engine's plan at `leaf` against the Budgets panel's window and reserve. This is the one
/// place where the app hands entry text to the recall planner: what is brought back goes to a
/// model provider, so secrets in it (keys a tool printed) are redacted, as in an export, unless
/// the person chose to keep them after seeing the list.
fn plan(
    session: &Session,
    leaf: Option<usize>,
    idx: &[usize],
    max_chars: u32,
    keep_secrets: bool,
    budgets: &BudgetArgs,
) -> Result<RecallPlan, String> {
    let window = budgets.context_window as f64;
    let redact = |t: &str| {
        let (text, found) = secrets::redact_unless(t, keep_secrets);
        (text, found.iter().map(|f| (f.kind.to_string(), f.start, f.end)).collect())
    };
    plan_recall(session, leaf, idx, max_chars as usize, &budgets.settings(), window, &redact)
}

fn max_chars_of(max_chars: Option<u32>) -> Result<u32, AppError> {
    match max_chars {
        None => Ok(DEFAULT_MAX_CHARS as u32),
        Some(n) if (1..=10_000_000).contains(&n) => Ok(n),
        Some(n) => Err(AppError::BadInput(format!(
            "{n} characters per entry is not a usable cut: give a number between 1 and 10000000"
        ))),
    }
}

fn indices(session: &Session, ids: &[String]) -> Result<Vec<usize>, AppError> {
    ids.iter().map(|id| session.index_of(id).ok_or_else(|| AppError::UnknownEntry(id.clone()))).collect()
}

/// What bringing `ids` back at Arbor's leaf would append and cost, or the engine's sentence
/// saying why it cannot (already in context, no text, a read-only file): a refusal is part of
/// the preview, not an error. Planned on a snapshot, without the session lock.
pub fn preview(
    state: &AppState,
    ids: &[String],
    max_chars: Option<u32>,
    keep_secrets: bool,
    budgets: &BudgetArgs,
) -> Result<RecallPreview, AppError> {
    let max = max_chars_of(max_chars)?;
    let (s, leaf) = state.with_open(|o| Ok((o.session.snapshot(), o.leaf)))?;
    let idx = indices(&s, ids)?;
    let leaf_id = leaf.map(|l| s.id(l).to_string());
    Ok(match plan(&s, leaf, &idx, max, keep_secrets, budgets) {
        Ok(p) => RecallPreview::planned(ids.to_vec(), leaf_id, max, keep_secrets, &p),
        Err(why) => RecallPreview::refused(ids.to_vec(), leaf_id, max, why),
    })
}

/// Appends the recall of `ids` as a child of Arbor's leaf, which it then becomes (in Pi too: it
/// is the file's last line). `id` fixes the new entry's id (tests); `now_ms` its timestamp;
/// `keep_secrets` is the preview's explicit choice to bring secrets back as they are.
/// Refused, with nothing written: the engine's refusals, a read-only file, another program's
/// append since Arbor read the file.
pub fn bring_back(
    state: &AppState,
    ids: &[String],
    max_chars: Option<u32>,
    keep_secrets: bool,
    budgets: &BudgetArgs,
    now_ms: i64,
    id: Option<&str>,
) -> Result<RecallDone, AppError> {
    let max = max_chars_of(max_chars)?;
    let (key, done) = state.with_open(|o| {
        if let Some(why) = o.session.read_only_reason() {
            return Err(AppError::ReadOnly(why));
        }
        let idx = indices(&o.session, ids)?;
        let _lock = SessionLock::try_acquire(&o.path)?;
        let p = plan(&o.session, o.leaf, &idx, max, keep_secrets, budgets)
            .map_err(|why| AppError::Refused(format!("{why}; nothing was written")))?;
        let session = &o.session;
        let new_id = match id {
            Some(id) if session.index_of(id).is_none() => id.to_string(),
            _ => ids::new_entry_id(|c| session.index_of(c).is_some()),
        };
        let entry = recall_entry(&p, &new_id, o.leaf.map(|l| session.id(l)), &time::format_iso_ms(now_ms));
        append_entry_planned(&o.path, &entry, true, session.file_len())?;
        o.read_appended()?;
        o.leaf = o.session.file_leaf();
        o.layout = relayout(&o.session, o.leaf, &o.folding, &mut o.nodes);
        let done = RecallDone {
            session: describe_open(o),
            entry_id: new_id,
            tokens: token_count(p.tokens),
            context_tokens_after: token_count(p.context_tokens_after),
            threshold: token_count(p.threshold),
            crosses_threshold: p.crosses_threshold,
        };
        Ok((o.path.display().to_string(), done))
    })?;
    // Arbor's leaf is the file's again: no remembered position.
    let mut st = ArborStateFile::load(&state.state_file());
    st.leaves.remove(&key);
    st.save(&state.state_file())?;
    Ok(done)
}

/// The preview of Bring back… (`budgets` are the Budgets panel's; `max_chars` None: the
/// engine's default cut; `keep_secrets`: the secrets found are listed but not redacted). Building the context at the leaf takes a while on a big session: on a
/// blocking thread.
#[tauri::command]
#[specta::specta]
pub async fn preview_recall(
    app: tauri::AppHandle,
    entry_ids: Vec<String>,
    max_chars: Option<u32>,
    keep_secrets: bool,
    budgets: BudgetArgs,
) -> IpcResult<RecallPreview> {
    tauri::async_runtime::spawn_blocking(move || {
        preview(&app.state::<AppState>(), &entry_ids, max_chars, keep_secrets, &budgets)
    })
    .await
    .map_err(|e| AppError::Refused(format!("the preview stopped unexpectedly ({e})")))?
    .map_err(Into::into)
}

/// Bring back: appends the message and returns the session with it as the leaf.
#[tauri::command]
#[specta::specta]
pub async fn bring_back_entries(
    app: tauri::AppHandle,
    entry_ids: Vec<String>,
    max_chars: Option<u32>,
    keep_secrets: bool,
    budgets: BudgetArgs,
) -> IpcResult<RecallDone> {
    tauri::async_runtime::spawn_blocking(move || {
        bring_back(&app.state::<AppState>(), &entry_ids, max_chars, keep_secrets, &budgets, time::now_ms(), None)
    })
    .await
    .map_err(|e| {
        AppError::Refused(format!("bringing back stopped unexpectedly ({e}); check the file before trying again"))
    })?
    .map_err(Into::into)
}
