//! The summary workbench, where the user checks what a summary kept: inspect a summary by
//! section, diff two summaries, edit or revert the governing compaction (appended as a new entry),
//! re-summarize a span without writing. Adapters over `summary_analysis` (pure) and
//! `summarizer::summary_ops` (the append).
//!
//! Edits are appended while the app's session lock is held, checked against the open session's
//! length (another writer → refused, nothing written), then read back with `extend_from_file`:
//! the session is not reopened.

use super::summarize::channel_progress;
use crate::error::{AppError, IpcResult};
use crate::state::app::{describe_open, AppState, OpenSession};
use crate::state::layout::relayout;
use crate::state::markers::MarkerCache;
use crate::state::state_file::ArborStateFile;
use crate::state::summarizer::{effective_base_url, env_base_url, Running, SummarizerState};
use crate::view::review::LedgerView;
use crate::view::summarize::SummaryProgress;
use crate::view::summary::{
    diff_view, is_summary, retention_view, sections_of, summary_view, summary_view_checked, MarkerFactsView,
    ResummaryView, SummaryDiffView, SummaryView, SummaryWrite,
};
use session_engine::session::Extend;
use session_engine::{time, Session};
use summarizer::resummarize::{plan_resummarize, resummarize as run_resummarize};
use summarizer::run::Backend;
use summarizer::ProgressFn;
use summary_analysis as sm;
use tauri::ipc::Channel;
use tauri::State;

pub(crate) fn summary_idx(o: &OpenSession, entry_id: &str) -> Result<usize, AppError> {
    let i = o.session.index_of(entry_id).ok_or_else(|| AppError::UnknownEntry(entry_id.to_string()))?;
    if !is_summary(&o.session, i) {
        return Err(AppError::BadInput(format!(
            "entry {entry_id} is not a summary; select a compaction or branch summary"
        )));
    }
    Ok(i)
}

/// The workbench view of one summary entry, at Arbor's leaf.
pub fn view(state: &AppState, entry_id: &str) -> Result<SummaryView, AppError> {
    Ok(view_job(state, entry_id)?())
}

/// A summary's view, to be made from a snapshot without the session lock (about 9 ms at 100k
/// entries, most of it the check, which `MarkerCache` keeps for the summaries shown last); what
/// it is made from is taken under the lock here.
fn view_job(state: &AppState, entry_id: &str) -> Result<impl FnOnce() -> SummaryView + Send + 'static, AppError> {
    let t0 = std::time::Instant::now();
    let (s, i, leaf, markers) =
        state.with_open(|o| Ok((o.session.snapshot(), summary_idx(o, entry_id)?, o.leaf, o.markers.clone())))?;
    Ok(move || summary_view_checked(&s, i, leaf, markers.check(&s, i), t0))
}

/// Section-aware diff of two summary entries (`from` → `to`).
pub fn diff(state: &AppState, from_id: &str, to_id: &str) -> Result<SummaryDiffView, AppError> {
    state.with_open(|o| {
        let a = summary_idx(o, from_id)?;
        let b = summary_idx(o, to_id)?;
        let text = |i: usize| o.session.value(i).str_field("summary").unwrap_or("").to_string();
        Ok(diff_view(Some(from_id.to_string()), Some(to_id.to_string()), &text(a), &text(b)))
    })
}

type BuildEntry<'a> = dyn FnOnce(&Session, usize, Option<usize>, &str, &str) -> Result<pi_json::Value, String> + 'a;

/// Builds the entry with `build` on the open session, appends it, extends the session from the
/// file, moves the leaf to it and relayouts. Nothing is written when any step before the append fails.
fn append_version(
    state: &AppState,
    entry_id: &str,
    now_ms: i64,
    id: Option<&str>,
    build: Box<BuildEntry<'_>>,
) -> Result<SummaryWrite, AppError> {
    let (write, key) = state.with_open(|o| {
        let idx = summary_idx(o, entry_id)?;
        if let Some(why) = o.session.read_only_reason() {
            return Err(AppError::ReadOnly(why));
        }
        let session = &o.session;
        let new_id = match id {
            Some(id) if session.index_of(id).is_none() => id.to_string(),
            _ => session_engine::ids::new_entry_id(|c| session.index_of(c).is_some()),
        };
        let entry = build(session, idx, o.leaf, &new_id, &time::format_iso_ms(now_ms)).map_err(AppError::Refused)?;
        let done = summarizer::summary_ops::append_summary_entry(&o.path, session, &entry)?;
        match o.session.extend_from_file(&o.path)? {
            Extend::Added(_) => {}
            // The file did not end in a newline (the append added one first): read it again.
            Extend::Reload => {
                o.session = Session::open(&o.path)?.into();
                o.markers = Default::default();
                o.quality = Default::default();
                o.nodes.clear();
            }
        }
        // This window's own entry (the append is refused when the file grew since): no notice.
        crate::state::notices::own_append(o);
        let new_idx =
            o.session.index_of(&done.entry_id).ok_or_else(|| AppError::UnknownEntry(done.entry_id.clone()))?;
        o.leaf = Some(new_idx);
        o.layout = relayout(&o.session, o.leaf, &o.folding, &mut o.nodes);
        let write = SummaryWrite {
            session: describe_open(o),
            entry_id: done.entry_id.clone(),
            edited_from: entry_id.to_string(),
            view: summary_view(&o.session, new_idx, o.leaf),
            synced: done.synced,
        };
        Ok((write, o.path.display().to_string()))
    })?;
    // The appended entry is Pi's leaf too: forget any position Arbor remembered.
    let mut st = ArborStateFile::load(&state.state_file());
    if st.leaves.remove(&key).is_some() {
        st.save(&state.state_file())?;
    }
    Ok(write)
}

/// Appends `text` as an edit of compaction `entry_id` (which must govern the context at the leaf).
pub fn save_edit(
    state: &AppState,
    entry_id: &str,
    text: &str,
    now_ms: i64,
    id: Option<&str>,
) -> Result<SummaryWrite, AppError> {
    save_edit_ledger(state, entry_id, text, false, now_ms, id)
}

/// [`save_edit`], with the artifact ledger added to `text` when `ledger` (judged, like the
/// workbench's checks, over the span of the chain's origin, on the session the entry is built on).
pub fn save_edit_ledger(
    state: &AppState,
    entry_id: &str,
    text: &str,
    ledger: bool,
    now_ms: i64,
    id: Option<&str>,
) -> Result<SummaryWrite, AppError> {
    if text.trim().is_empty() {
        return Err(AppError::BadInput(
            "the edited summary is empty; write the summary text or cancel the edit".into(),
        ));
    }
    append_version(
        state,
        entry_id,
        now_ms,
        id,
        Box::new(move |s, idx, leaf, id, ts| {
            if ledger {
                sm::edit_entry(s, idx, leaf, &sm::with_ledger(s, idx, text), id, ts)
            } else {
                sm::edit_entry(s, idx, leaf, text, id, ts)
            }
        }),
    )
}

/// What "Add artifact ledger" would add to `text` as the summary `entry_id`: its lines, the text
/// with them, the tokens they cost and the probe scores by kind without and with them.
pub fn ledger_preview(state: &AppState, entry_id: &str, text: &str) -> Result<LedgerView, AppError> {
    let (s, i) = state.with_open(|o| Ok((o.session.snapshot(), summary_idx(o, entry_id)?)))?;
    Ok(LedgerView::of_entry(&s, i, text))
}

/// Appends a revert of edited compaction `entry_id` to its original text.
pub fn revert(state: &AppState, entry_id: &str, now_ms: i64, id: Option<&str>) -> Result<SummaryWrite, AppError> {
    append_version(state, entry_id, now_ms, id, Box::new(sm::revert_entry))
}

/// Re-summarizes the span of `entry_id` with `provider`/`model` (None: the model chosen in the
/// Model panel) and optional instructions. Cancellable with `cancel_summary`.
pub async fn resummarize(
    state: &AppState,
    st: &SummarizerState,
    entry_id: &str,
    provider: Option<&str>,
    model: Option<&str>,
    instructions: Option<&str>,
    progress: Option<ProgressFn>,
) -> Result<ResummaryView, AppError> {
    let t0 = std::time::Instant::now();
    let (job, existing) = state.with_open(|o| {
        let i = summary_idx(o, entry_id)?;
        Ok((plan_resummarize(&o.session, i)?, o.session.value(i).str_field("summary").unwrap_or("").to_string()))
    })?;
    let choice = st.choice();
    let provider = provider.map(str::trim).filter(|p| !p.is_empty());
    let (provider, model, base) = match provider {
        Some(p) if p != choice.provider => (p.to_string(), model.map(str::to_string), env_base_url(p)),
        _ => (
            choice.provider.clone(),
            model.map(str::to_string).filter(|m| !m.trim().is_empty()).or(choice.model.clone()),
            effective_base_url(&choice),
        ),
    };
    let cat = st.catalog()?;
    let prepared = summarizer::setup::prepare_backend(&provider, model.as_deref(), base.as_deref(), &cat)?;
    let max_out = prepared.model.as_ref().map(|m| m.max_output).unwrap_or(4096);
    let max_tokens = if job.branch {
        summarizer::prompts::DEFAULT_BRANCH_MAX_TOKENS.min(max_out)
    } else {
        summarizer::prompts::history_max_tokens(16384).min(max_out)
    };
    let describe = match &prepared.backend {
        Backend::Offline => "offline summarizer".to_string(),
        Backend::Model(c) => format!("{} {}", c.config().wire.name(), c.config().model),
    };
    let (_running, cancel) = Running::start(st)?;
    let out = run_resummarize(&job, &prepared.backend, instructions, max_tokens, &cancel, progress.as_ref()).await?;
    let (session, i) = state.with_open(|o| Ok((o.session.snapshot(), summary_idx(o, entry_id)?)))?;
    // Both texts are judged over the span the summary stands for (the engine judges an edit as
    // its original): retention and the probe score, ~10 ms each on a big span, on a snapshot
    // and off the async runtime's threads.
    let entry_id = entry_id.to_string();
    let notices = prepared.notices.clone();
    tauri::async_runtime::spawn_blocking(move || {
        let session = &*session;
        ResummaryView {
            sections: sections_of(&sm::parse(&out.text)),
            diff: diff_view(Some(entry_id.clone()), None, &existing, &out.text),
            retention_existing: retention_view(&sm::retention(session, i, &existing)),
            retention_new: retention_view(&sm::retention(session, i, &out.text)),
            quality_existing: (&sm::score(session, i, &existing)).into(),
            quality_new: (&sm::score(session, i, &out.text)).into(),
            entry_id,
            text: out.text,
            summarizer: describe,
            offline: out.offline,
            elapsed_ms: t0.elapsed().as_secs_f64() * 1000.0,
            notices,
        }
    })
    .await
    .map_err(|_| AppError::Refused("comparing the two summaries stopped unexpectedly; generate again".into()))
}

/// How long one `summary_markers` call may spend computing marker facts that are not cached yet
/// (each costs a check: ~15 ms on a large compaction of the 100k-entry session; computed on a
/// snapshot, without the session lock). A graph window (on the main thread) only adds the cached
/// ones: the graph asks `summary_markers` for the rest after drawing.
pub const MARKER_BUDGET: std::time::Duration = std::time::Duration::from_millis(40);

/// Drop-alarm counts and retention scores of summary entries (the graph asks for the markers a
/// window left without them). Unknown ids and non-summaries are skipped. They are computed on a
/// snapshot of the session, without its lock (a check costs ~15 ms on a big compaction of the
/// 100k-entry session, and clicks must not wait for it), and stop once `budget` is spent (after at
/// least one entry); the caller asks again for the ids not answered.
pub fn markers(
    state: &AppState,
    entry_ids: &[String],
    budget: std::time::Duration,
) -> Result<Vec<MarkerFactsView>, AppError> {
    let (s, cache) = state.with_open(|o| Ok((o.session.snapshot(), o.markers.clone())))?;
    Ok(markers_in(&s, &cache, entry_ids, budget))
}

/// [`markers`] on a given session and cache.
pub fn markers_in(
    session: &Session,
    cache: &MarkerCache,
    entry_ids: &[String],
    budget: std::time::Duration,
) -> Vec<MarkerFactsView> {
    let t0 = std::time::Instant::now();
    let mut out = Vec::new();
    for id in entry_ids {
        if !out.is_empty() && t0.elapsed() >= budget {
            break;
        }
        let Some(i) = session.index_of(id).filter(|&i| is_summary(session, i)) else { continue };
        let f = cache.facts(session, i);
        out.push(MarkerFactsView { entry_id: id.clone(), dropped: f.dropped, retained: f.mentioned, facts: f.total });
    }
    out
}

// ---- commands -----------------------------------------------------------------------------

/// Marker facts the graph window left out, computed for at most ~40 ms a call (ask again for
/// the rest) on a thread of low priority: the graph's painting and a click's command come first.
#[tauri::command]
#[specta::specta]
pub async fn summary_markers(state: State<'_, AppState>, entry_ids: Vec<String>) -> IpcResult<Vec<MarkerFactsView>> {
    let (s, cache) = state.with_open(|o| Ok((o.session.snapshot(), o.markers.clone())))?;
    crate::state::background::run_in_background(move || markers_in(&s, &cache, &entry_ids, MARKER_BUDGET))
        .await
        .ok_or_else(|| {
            AppError::Refused("checking the summary markers stopped unexpectedly; scroll the graph to ask again".into())
                .into()
        })
}

/// Sections, files, span, author, history, editability and the check of one summary entry.
/// Off the main thread: there it held back the webview's other calls, a Continue's answer among
/// them, while the view was made.
#[tauri::command]
#[specta::specta]
pub async fn get_summary_view(state: State<'_, AppState>, entry_id: String) -> IpcResult<SummaryView> {
    tauri::async_runtime::spawn_blocking(view_job(&state, &entry_id)?).await.map_err(|_| {
        AppError::Refused("showing the summary stopped unexpectedly; select it again to retry".into()).into()
    })
}

#[tauri::command]
#[specta::specta]
pub fn diff_summaries(state: State<'_, AppState>, from_id: String, to_id: String) -> IpcResult<SummaryDiffView> {
    Ok(diff(&state, &from_id, &to_id)?)
}

/// Appends the edited text as a new compaction entry at the leaf (append-only), with the
/// artifact ledger added when `ledger`.
#[tauri::command]
#[specta::specta]
pub fn save_summary_edit(
    state: State<'_, AppState>,
    entry_id: String,
    text: String,
    ledger: bool,
) -> IpcResult<SummaryWrite> {
    Ok(save_edit_ledger(&state, &entry_id, &text, ledger, time::now_ms(), None)?)
}

/// The artifact ledger `text` would get as the summary `entry_id` (nothing is written).
#[tauri::command]
#[specta::specta]
pub async fn summary_ledger_preview(
    state: State<'_, AppState>,
    entry_id: String,
    text: String,
) -> IpcResult<LedgerView> {
    Ok(ledger_preview(&state, &entry_id, &text)?)
}

/// Appends a compaction entry with the original text of an edited summary.
#[tauri::command]
#[specta::specta]
pub fn revert_summary(state: State<'_, AppState>, entry_id: String) -> IpcResult<SummaryWrite> {
    Ok(revert(&state, &entry_id, time::now_ms(), None)?)
}

/// An alternative summary of the same span (nothing is written); progress on `on_progress`.
#[tauri::command]
#[specta::specta]
pub async fn resummarize_summary(
    state: State<'_, AppState>,
    st: State<'_, SummarizerState>,
    entry_id: String,
    provider: Option<String>,
    model: Option<String>,
    instructions: Option<String>,
    on_progress: Channel<SummaryProgress>,
) -> IpcResult<ResummaryView> {
    Ok(resummarize(
        &state,
        &st,
        &entry_id,
        provider.as_deref(),
        model.as_deref(),
        instructions.as_deref(),
        Some(channel_progress(on_progress)),
    )
    .await?)
}
