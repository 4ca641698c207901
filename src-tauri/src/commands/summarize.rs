//! Compaction, navigation with a branch summary, and the composer, from the app: adapters over
//! `summarizer::session_ops`. Progress streams to the UI through a channel; `cancel_summary`
//! stops the run (nothing is appended). The summarizer works on the session the app holds
//! ([`OpenHost`]): it takes `AppState`'s lock for each synchronous step only (plan, build the
//! request, append and read the appended bytes back), never across an await, so the graph stays
//! usable while a model answers; the file is never read again, and afterwards the app only lays
//! the graph out.

use super::navigate::continue_from;
use crate::error::{AppError, IpcResult};
use crate::state::app::{describe_open, AppState};
use crate::state::layout::relayout;
use crate::state::notices::{catch_up, own_append};
use crate::state::state_file::ArborStateFile;
use crate::state::summarizer::{effective_base_url, Running, SummarizerState};
use crate::view::budgets::BudgetArgs;
use crate::view::keys::ModelChoice;
use crate::view::session::{Navigation, OpenedSession};
use crate::view::summarize::{
    cut_plan, cut_refusal, AutoCompactionInfo, CompactHerePreview, CompactResult, CutRefusal, NavigateResult,
    SendResult, SummaryProgress,
};
use session_engine::compaction::CompactionJob;
use session_engine::session::Extend;
use session_engine::{CompactionSettings, Session};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use summarizer::run::{Backend, RunOptions};
use summarizer::session_ops::{compact_on, compact_on_planned, continue_on, navigate_on, ContinueOptions, SessionHost};
use summarizer::ProgressFn;
use tauri::ipc::Channel;
use tauri::State;

pub(crate) fn channel_progress(ch: Channel<SummaryProgress>) -> ProgressFn {
    Arc::new(move |p| {
        let _ = ch.send(SummaryProgress::from_progress(p));
    })
}

/// The backend of the user's choice, with what the UI should say about it.
pub(crate) struct Chosen {
    pub(crate) backend: Backend,
    choice: ModelChoice,
    pub(crate) context_window: Option<u64>,
    max_output: Option<u64>,
    notices: Vec<String>,
}

pub(crate) fn chosen(st: &SummarizerState) -> Result<Chosen, AppError> {
    let choice = st.choice();
    let cat = st.catalog()?;
    let base = effective_base_url(&choice);
    let p = summarizer::setup::prepare_backend(&choice.provider, choice.model.as_deref(), base.as_deref(), &cat)?;
    Ok(Chosen {
        context_window: p.model.as_ref().map(|m| m.context_window),
        max_output: p.model.as_ref().map(|m| m.max_output),
        backend: p.backend,
        notices: p.notices,
        choice,
    })
}

pub(crate) fn run_options(
    st: &SummarizerState,
    c: &Chosen,
    instructions: Option<&str>,
    navigate: bool,
) -> Result<RunOptions, AppError> {
    let s = st.arbor_settings()?;
    let mut o = RunOptions {
        custom_instructions: instructions.map(str::trim).filter(|t| !t.is_empty()).map(str::to_string),
        model_max_output: c.max_output,
        hook: if navigate { s.hooks.before_navigate.clone() } else { s.hooks.before_compact.clone() },
        ..RunOptions::default()
    };
    if let Some(n) = s.branch_summary_max_tokens {
        o.branch_max_tokens = n;
    }
    if let Some(x) = s.record_details_extras {
        o.record_extras = x;
    }
    o.artifact_ledger = s.artifact_ledger.unwrap_or(false);
    Ok(o)
}

/// The open session's file and Arbor's leaf id (refuses read-only files up front).
fn target(state: &AppState) -> Result<(PathBuf, Option<String>), AppError> {
    state.with_open(|o| {
        if let Some(why) = o.session.read_only_reason() {
            return Err(AppError::ReadOnly(why));
        }
        Ok((o.path.clone(), o.leaf.map(|l| o.session.id(l).to_string())))
    })
}

/// The app's open session as the summarizer's [`SessionHost`]: each step takes `AppState`'s lock
/// for itself only, and is refused once another session was opened (nothing more is written).
pub struct OpenHost<'a> {
    state: &'a AppState,
    path: PathBuf,
}

impl<'a> OpenHost<'a> {
    pub fn new(state: &'a AppState, path: PathBuf) -> OpenHost<'a> {
        OpenHost { state, path }
    }
}

impl SessionHost for OpenHost<'_> {
    fn path(&self) -> &Path {
        &self.path
    }

    fn with<T>(&self, f: impl FnOnce(&mut Session) -> summarizer::Result<T>) -> summarizer::Result<T> {
        let swapped = || {
            summarizer::Error::Session(format!(
                "another session was opened while this ran, so nothing more was written to {}",
                self.path.display()
            ))
        };
        let mut notices = Vec::new();
        let r = self.state.with_open(|o| {
            if o.path != self.path {
                return Ok(None);
            }
            // What another writer appended is read here first, so that a summary among it is
            // notified; whatever the step then reads and appends is this window's own.
            if let Ok(Extend::Added(_)) = o.session.extend_from_file(&o.path) {
                notices = catch_up(o, &self.state.state_file());
            }
            // Indices stay valid while the file only grows; when the step had to read the file
            // again (rewritten meanwhile), Arbor's leaf is found again by id and the graph redone.
            let n = o.session.len();
            let last = n.checked_sub(1).map(|i| o.session.id(i).to_string());
            let leaf = o.leaf.map(|l| o.session.id(l).to_string());
            let r = f(&mut o.session);
            let session = &o.session;
            if session.len() < n || last.is_some_and(|id| session.id(n - 1) != id) {
                o.leaf = leaf.and_then(|id| session.index_of(&id)).or(session.file_leaf());
                o.markers = Default::default();
                o.quality = Default::default();
                o.nodes.clear();
                o.layout = relayout(&o.session, o.leaf, &o.folding, &mut o.nodes);
            }
            own_append(o);
            Ok(Some(r))
        });
        self.state.deliver_notices(notices);
        match r {
            Ok(Some(r)) => r,
            _ => Err(swapped()),
        }
    }
}

/// After an operation on the held session, which already holds what it appended: moves Arbor's
/// leaf to `leaf_id` (None: the file's leaf), lays the graph out again and remembers the leaf
/// when it differs from Pi's. Reads nothing from the file. Leaves another open session alone.
fn settle(state: &AppState, path: &Path, leaf_id: Option<&str>) -> Result<OpenedSession, AppError> {
    let (dto, leaf_key, leaf_moved) = state.with_open(|o| {
        if o.path != path {
            return Err(AppError::Refused(
                "another session was opened meanwhile; the result was written to the first one".into(),
            ));
        }
        let session = &o.session;
        let leaf = match leaf_id {
            Some(id) => session.index_of(id).or(session.file_leaf()),
            None => session.file_leaf(),
        };
        let moved = leaf != session.file_leaf();
        let leaf_key = leaf.map(|l| session.id(l).to_string());
        o.leaf = leaf;
        o.layout = relayout(&o.session, o.leaf, &o.folding, &mut o.nodes);
        Ok((describe_open(o), leaf_key, moved))
    })?;
    let key = path.display().to_string();
    let mut st = ArborStateFile::load(&state.state_file());
    match leaf_key {
        Some(id) if leaf_moved => {
            st.leaves.insert(key, id);
        }
        _ => {
            st.leaves.remove(&key);
        }
    }
    st.save(&state.state_file())?;
    Ok(dto)
}

fn describe_choice(c: &ModelChoice) -> String {
    if c.provider == "offline" {
        "offline summarizer".into()
    } else {
        format!("{} {}", c.provider, c.model.as_deref().unwrap_or("?"))
    }
}

/// Compacts at Arbor's leaf with optional instructions and appends the compaction entry.
pub async fn compact(
    state: &AppState,
    st: &SummarizerState,
    budgets: &BudgetArgs,
    instructions: Option<&str>,
    progress: Option<ProgressFn>,
) -> Result<CompactResult, AppError> {
    compact_planned(state, st, budgets, instructions, progress, None).await
}

/// "Compact up to here": compacts at Arbor's leaf as [`compact`] does, keeping from the entry
/// `keep_from` instead of where the keep-recent budget would cut. An entry that is not a valid
/// cut point of the active path is refused before any model or key is touched (the refusal
/// names the nearest valid ones); nothing is written then.
pub async fn compact_here(
    state: &AppState,
    st: &SummarizerState,
    budgets: &BudgetArgs,
    keep_from: &str,
    instructions: Option<&str>,
    progress: Option<ProgressFn>,
) -> Result<CompactResult, AppError> {
    let settings = budgets.settings();
    state.with_open(|o| keep_from_plan(&o.session, o.leaf, &settings, keep_from).map(|_| ()))?;
    compact_planned(state, st, budgets, instructions, progress, Some(keep_from)).await
}

/// Pi's plan at `leaf` (its refusals, read-only sessions), with the cut moved to `keep_from`
/// when that is a valid cut point (`pi_review::cut`), as `arbor-cli compact --keep-from` plans.
fn keep_from_plan(
    session: &Session,
    leaf: Option<usize>,
    settings: &CompactionSettings,
    keep_from: &str,
) -> Result<CompactionJob, AppError> {
    if let Some(why) = session.read_only_reason() {
        return Err(AppError::ReadOnly(why));
    }
    Ok(pi_review::cut::plan_compaction_keep_from(session, leaf, settings, keep_from)?)
}

/// The preview of "Compact up to here" at Arbor's leaf: what the summary would stand for, what
/// stays, the context after; or why the entry cannot be kept from. Planned on a snapshot, without
/// the session lock; no model is asked and nothing is written.
pub fn preview_here(state: &AppState, budgets: &BudgetArgs, keep_from: &str) -> Result<CompactHerePreview, AppError> {
    let (s, leaf) = state.with_open(|o| Ok((o.session.snapshot(), o.leaf)))?;
    let leaf_id = leaf.map(|l| s.id(l).to_string());
    let (plan, refusal) = match keep_from_plan(&s, leaf, &budgets.settings(), keep_from) {
        Ok(job) => (Some(cut_plan(&s, &job)), None),
        Err(AppError::Cut(pi_review::cut::KeepFromError::Invalid(c))) => (None, Some(cut_refusal(&s, &c))),
        Err(e) => (None, Some(CutRefusal { message: e.to_string(), nearest: Vec::new() })),
    };
    Ok(CompactHerePreview { entry_id: keep_from.to_string(), leaf_id, plan, refusal })
}

/// One compaction at Arbor's leaf: Pi's cut, or the one kept from `keep_from`.
async fn compact_planned(
    state: &AppState,
    st: &SummarizerState,
    budgets: &BudgetArgs,
    instructions: Option<&str>,
    progress: Option<ProgressFn>,
    keep_from: Option<&str>,
) -> Result<CompactResult, AppError> {
    let (path, leaf) = target(state)?;
    let c = chosen(st)?;
    let opts = run_options(st, &c, instructions, false)?;
    let (_running, cancel) = Running::start(st)?;
    let host = OpenHost::new(state, path.clone());
    let (settings, leaf) = (budgets.settings(), leaf.as_deref());
    let done = match keep_from {
        None => compact_on(&host, leaf, &settings, &c.backend, &opts, &cancel, progress.as_ref()).await?,
        Some(keep) => {
            // Planned again under the session lock on what the file holds then (Pi may have
            // appended since the check above), and once more before the append.
            let planner = |s: &Session, leaf: Option<&str>, settings: &CompactionSettings| {
                let leaf = match leaf {
                    Some(id) => Some(s.index_of(id).ok_or_else(|| {
                        summarizer::Error::Session(format!("the leaf {id} is no longer in the session"))
                    })?),
                    None => None,
                };
                keep_from_plan(s, leaf, settings, keep).map_err(|e| summarizer::Error::Session(e.to_string()))
            };
            compact_on_planned(&host, leaf, &settings, &planner, &c.backend, &opts, &cancel, progress.as_ref()).await?
        }
    };
    let session = settle(state, &path, Some(&done.entry_id))?;
    Ok(CompactResult {
        session,
        entry_id: done.entry_id,
        summary: done.outcome.summary,
        tokens_before: done.outcome.tokens_before as u32,
        tokens_after: done.outcome.tokens_after as u32,
        offline: matches!(c.backend, Backend::Offline),
        from_hook: done.outcome.from_hook,
        summarizer: describe_choice(&c.choice),
        notices: c.notices,
    })
}

/// "Continue from here" with a choice: no summary, summarize the branch left, or summarize with
/// instructions. If summarizing fails, nothing is written and the leaf does not move.
pub async fn navigate(
    state: &AppState,
    st: &SummarizerState,
    target_id: &str,
    summarize: bool,
    instructions: Option<&str>,
    budgets: &BudgetArgs,
    progress: Option<ProgressFn>,
) -> Result<NavigateResult, AppError> {
    if !summarize {
        let navigation = continue_from(state, target_id)?;
        return Ok(NavigateResult { navigation, summary_entry_id: None, summary: None, offline: false });
    }
    let (path, leaf) = target(state)?;
    let c = chosen(st)?;
    let opts = RunOptions { replace_instructions: false, ..run_options(st, &c, instructions, true)? };
    let window = c.context_window.map(|w| w as f64).unwrap_or(budgets.context_window as f64);
    let budget = session_engine::branch::branch_budget(window, budgets.budgets.branch_reserve_tokens as f64).max(0.0);
    let (_running, cancel) = Running::start(st)?;
    let host = OpenHost::new(state, path.clone());
    let done = navigate_on(
        &host,
        leaf.as_deref(),
        target_id,
        true,
        budget,
        None,
        &c.backend,
        &opts,
        &cancel,
        progress.as_ref(),
    )
    .await?;
    let session = settle(state, &path, done.new_leaf_id.as_deref())?;
    let summary_entry_id = if done.summary.is_some() { done.written.first().map(|(id, _)| id.clone()) } else { None };
    let note = match &summary_entry_id {
        Some(id) => format!("The branch you left was summarized ({}) into entry {id}; Pi continues from there too.", describe_choice(&c.choice)),
        None if done.no_op => "This already is the leaf; nothing changed.".into(),
        None => "There was nothing to summarize on the branch you left; Arbor remembers this position. Pi keeps its old position until something is appended."
            .into(),
    };
    Ok(NavigateResult {
        navigation: Navigation { session, composer_text: done.editor_text, note },
        summary_entry_id,
        summary: done.summary.map(|s| s.summary),
        offline: matches!(c.backend, Backend::Offline),
    })
}

/// The composer: sends `text` at Arbor's leaf to the chosen model and appends the reply (with
/// Pi's automatic compaction before sending, on overflow, and after the reply).
pub async fn send(
    state: &AppState,
    st: &SummarizerState,
    text: &str,
    budgets: &BudgetArgs,
    progress: Option<ProgressFn>,
) -> Result<SendResult, AppError> {
    let (path, leaf) = target(state)?;
    let c = chosen(st)?;
    let Backend::Model(client) = &c.backend else {
        return Err(AppError::Refused(
            "the offline summarizer can summarize but not answer: choose a model provider and store its key in the Model panel to send messages".into(),
        ));
    };
    // Compactions use the same model through a clone of the chat client (the HTTP client is
    // shared; no second key lookup or certificate load).
    let compaction = Backend::Model(client.clone());
    let context_window = c.context_window.unwrap_or(budgets.context_window as u64);
    let max_tokens = c.max_output.unwrap_or(4096).clamp(256, 8192) as u32;
    let opts = ContinueOptions {
        settings: budgets.settings(),
        context_window,
        max_tokens,
        run: run_options(st, &c, None, false)?,
    };
    let (_running, cancel) = Running::start(st)?;
    let host = OpenHost::new(state, path.clone());
    let done = continue_on(&host, leaf.as_deref(), text, client, &compaction, &opts, &cancel, progress.as_ref()).await;
    let done = match done {
        Ok(d) => d,
        Err(e) => {
            // The user message may have been appended before the failure (as in Pi): the held
            // session has it already; show it (unless another session is open now).
            let _ = settle(state, &path, None);
            return Err(e.into());
        }
    };
    let session = settle(state, &path, None)?;
    Ok(SendResult {
        session,
        user_entry_id: done.user_entry_id,
        assistant_entry_id: done.assistant_entry_id,
        reply: done.reply,
        input_tokens: done.usage.input as u32,
        output_tokens: done.usage.output as u32,
        compactions: done
            .compactions
            .iter()
            .map(|a| AutoCompactionInfo {
                reason: a.reason.into(),
                entry_id: a.done.entry_id.clone(),
                tokens_before: a.done.outcome.tokens_before as u32,
            })
            .collect(),
        context_window: context_window.min(u32::MAX as u64) as u32,
    })
}

// ---- commands -----------------------------------------------------------------------------

/// Compact now at the leaf, with optional instructions; progress streams on `on_progress`.
#[tauri::command]
#[specta::specta]
pub async fn compact_leaf(
    state: State<'_, AppState>,
    st: State<'_, SummarizerState>,
    budgets: BudgetArgs,
    instructions: Option<String>,
    on_progress: Channel<SummaryProgress>,
) -> IpcResult<CompactResult> {
    Ok(compact(&state, &st, &budgets, instructions.as_deref(), Some(channel_progress(on_progress))).await?)
}

/// "Compact up to here": what a compaction at the leaf keeping from `entry_id` would do, or why
/// it cannot (with the nearest valid cut points). Writes nothing.
#[tauri::command]
#[specta::specta]
pub async fn preview_compact_here(
    state: State<'_, AppState>,
    budgets: BudgetArgs,
    entry_id: String,
) -> IpcResult<CompactHerePreview> {
    Ok(preview_here(&state, &budgets, &entry_id)?)
}

/// "Compact up to here": compacts at the leaf keeping from `entry_id`; progress on `on_progress`.
#[tauri::command]
#[specta::specta]
pub async fn compact_up_to(
    state: State<'_, AppState>,
    st: State<'_, SummarizerState>,
    budgets: BudgetArgs,
    entry_id: String,
    instructions: Option<String>,
    on_progress: Channel<SummaryProgress>,
) -> IpcResult<CompactResult> {
    Ok(compact_here(&state, &st, &budgets, &entry_id, instructions.as_deref(), Some(channel_progress(on_progress)))
        .await?)
}

/// Continue from `target_id`, optionally summarizing the branch being left.
#[tauri::command]
#[specta::specta]
pub async fn navigate_with_summary(
    state: State<'_, AppState>,
    st: State<'_, SummarizerState>,
    target_id: String,
    summarize: bool,
    instructions: Option<String>,
    budgets: BudgetArgs,
    on_progress: Channel<SummaryProgress>,
) -> IpcResult<NavigateResult> {
    Ok(navigate(
        &state,
        &st,
        &target_id,
        summarize,
        instructions.as_deref(),
        &budgets,
        Some(channel_progress(on_progress)),
    )
    .await?)
}

/// Send a message at the leaf to the chosen model (Arbor runs no tools).
#[tauri::command]
#[specta::specta]
pub async fn send_message(
    state: State<'_, AppState>,
    st: State<'_, SummarizerState>,
    text: String,
    budgets: BudgetArgs,
    on_progress: Channel<SummaryProgress>,
) -> IpcResult<SendResult> {
    Ok(send(&state, &st, &text, &budgets, Some(channel_progress(on_progress))).await?)
}

/// Stops the running summary or message (within ~100 ms; nothing is appended). False: none ran.
#[tauri::command]
#[specta::specta]
pub async fn cancel_summary(st: State<'_, SummarizerState>) -> IpcResult<bool> {
    Ok(st.cancel_run())
}
