//! Summary quality, offline: the workbench's quality panel of one summary (score by kind, probes,
//! citations, unsupported items, growth, the cost of forgetting), and the marks of every summary
//! (score, cost of forgetting) that the graph's markers and the Timeline show, computed in the
//! background after a session opens. Adapters over `summary_analysis::quality`.
//!
//! Everything here runs on a snapshot of the session, without its lock: the panel costs ~17 ms
//! on the largest compaction of the 100k-entry session, and the marks of all its 378 summaries
//! seconds, so neither may hold a click or the graph's painting.

use super::summary::summary_idx;
use crate::error::{AppError, IpcResult};
use crate::state::app::AppState;
use crate::state::quality::{is_current, MarkSink, Next, QualityCache, Work};
use crate::state::summarizer::{effective_base_url, Running, SummarizerState};
use crate::view::quality::{
    forgetting_of, judged_view, score_of, summary_quality_view, JudgeProgressView, JudgedView, QualityMarkView,
    QualityWarm, SummaryQualityView,
};
use crate::view::summary::is_summary;
use session_engine::{Kind, Session};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tauri::ipc::Channel;
use tauri::State;

/// How long a background slice computes marks on one snapshot before it lets it go (at least one
/// summary): a write meanwhile copies the session only while a snapshot is alive, and the marks
/// reach the UI in batches of this length.
pub const SLICE: Duration = Duration::from_millis(50);

/// The quality panel of summary `entry_id`.
pub fn quality(state: &AppState, entry_id: &str) -> Result<SummaryQualityView, AppError> {
    let (s, idx, cache) =
        state.with_open(|o| Ok((o.session.snapshot(), summary_idx(o, entry_id)?, o.quality.clone())))?;
    Ok(quality_in(&s, idx, &cache))
}

/// [`quality`] on a snapshot. What it computed is the summary's mark too: the graph's marker gets
/// it at once, before the background run reaches it.
pub fn quality_in(s: &Session, idx: usize, cache: &QualityCache) -> SummaryQualityView {
    let v = summary_quality_view(s, idx, &cache.acts);
    let version = s.file_len();
    let forgetting = (s.kind(idx) == Kind::Compaction).then(|| (version, v.forgetting.clone()));
    cache.store(&v.entry_id, Some(v.score.clone()), forgetting);
    cache.send(cache.mark(s, idx, version).into_iter().collect());
    v
}

/// Computes the marks of every summary of the open session that are not cached at its current
/// file version (every score first, then every cost of forgetting; each newest first), in slices
/// of `slice`, sending each slice's marks to `sink` (a compaction's mark twice: with its score,
/// then with its forgetting). When a
/// run is already going, this request joins it (the run reads the session again before it ends,
/// and sends to `sink` from now on) and returns at once. Either way `sink` first gets every mark
/// already cached at this version, so a listener that came late (a reloaded page) misses none.
/// The run stops when another file is opened or the open one is read again (its cache is
/// replaced).
pub fn warm(state: &AppState, sink: MarkSink, slice: Duration) -> Result<QualityWarm, AppError> {
    let t0 = Instant::now();
    let (s, cache) = state.with_open(|o| Ok((o.session.snapshot(), o.quality.clone())))?;
    let version = s.file_len();
    let cached: Vec<QualityMarkView> =
        (0..s.len()).filter(|&i| is_summary(&s, i)).filter_map(|i| cache.mark(&s, i, version)).collect();
    drop(s);
    if !cached.is_empty() {
        sink(cached);
    }
    let elapsed = |t: Instant| t.elapsed().as_secs_f64() * 1000.0;
    let Some(mut run) = cache.request(sink) else {
        return Ok(QualityWarm { joined: true, scored: 0, forgetting: 0, summaries: 0, elapsed_ms: elapsed(t0) });
    };
    let (mut scored, mut forgetting, mut summaries) = (0, 0, 0);
    loop {
        // Read before the snapshot: a request counted after it may have a newer version.
        let seen = cache.requests();
        let Ok(Some(s)) = state
            .with_open(|o| Ok((is_current(&o.quality, &cache) && !cache.is_retired()).then(|| o.session.snapshot())))
        else {
            break;
        };
        let work = match cache.next(&mut run, &s, seen) {
            Next::Compute(todo) => todo,
            Next::Again => continue,
            Next::Done => {
                summaries = (0..s.len()).filter(|&i| is_summary(&s, i)).count();
                break;
            }
        };
        let t = Instant::now();
        let version = s.file_len();
        let mut marks = Vec::new();
        for w in work {
            if (!marks.is_empty() && t.elapsed() >= slice) || cache.is_retired() {
                break;
            }
            let idx = match w {
                Work::Score(idx) => {
                    cache.store(s.id(idx), Some(score_of(&s, idx)), None);
                    scored += 1;
                    idx
                }
                Work::Forgetting(idx) => {
                    cache.store(s.id(idx), None, Some((version, forgetting_of(&s, idx, &cache.acts))));
                    forgetting += 1;
                    idx
                }
            };
            marks.extend(cache.mark(&s, idx, version));
        }
        cache.send(marks);
    }
    Ok(QualityWarm { joined: false, scored, forgetting, summaries: summaries as u32, elapsed_ms: elapsed(t0) })
}

// ---- commands -----------------------------------------------------------------------------

/// The quality panel of one summary entry, computed off the main thread at background priority:
/// it fills in after the workbench, and a Continue clicked meanwhile (whose own work and the
/// webview's painting of it the user waits for) comes first on a machine with two cores.
#[tauri::command]
#[specta::specta]
pub async fn get_summary_quality(state: State<'_, AppState>, entry_id: String) -> IpcResult<SummaryQualityView> {
    let (s, idx, cache) =
        state.with_open(|o| Ok((o.session.snapshot(), summary_idx(o, &entry_id)?, o.quality.clone())))?;
    crate::state::background::run_in_background(move || quality_in(&s, idx, &cache)).await.ok_or_else(|| {
        AppError::Refused("judging the summary stopped unexpectedly; select it again to retry".into()).into()
    })
}

/// Judge mode: the model chosen in the Model tab answers each probe of summary `entry_id` from
/// the summary alone, and a second call grades the answer against the expected one
/// (`summarizer::judge`, at most 8 probes of each kind, the most recent). Its score is the
/// judge's, named with its model, and never replaces the offline one. Cancellable with
/// `cancel_summary`; nothing is written.
pub async fn judge(
    state: &AppState,
    st: &SummarizerState,
    entry_id: &str,
    progress: Option<summarizer::judge::JudgeProgressFn>,
) -> Result<JudgedView, AppError> {
    let t0 = Instant::now();
    let (text, probes) = state.with_open(|o| {
        let i = summary_idx(o, entry_id)?;
        let text = summary_analysis::summary_text(&o.session, i).to_string();
        let probes = summary_analysis::quality::score(&o.session, i, &text).probes;
        Ok((text, probes))
    })?;
    let choice = st.choice();
    let model = match (choice.provider.as_str(), choice.model.as_deref()) {
        ("offline", _) | (_, None) => {
            return Err(AppError::BadInput(
                "judge mode asks a model: choose a provider and a model in the Model tab (the offline summarizer cannot judge)"
                    .into(),
            ))
        }
        (_, Some(m)) => m.to_string(),
    };
    let cat = st.catalog()?;
    let base = effective_base_url(&choice);
    let prepared = summarizer::setup::prepare_judge(&format!("{}/{model}", choice.provider), base.as_deref(), &cat)?;
    let (_running, cancel) = Running::start(st)?;
    let opts = summarizer::judge::JudgeOptions::default();
    let judged = summarizer::judge::judge(&prepared.client, &text, &probes, &opts, &cancel, progress.as_ref()).await?;
    Ok(judged_view(&judged, t0.elapsed().as_secs_f64() * 1000.0))
}

/// Judge mode on summary `entry_id` with the Model tab's model; progress on `on_progress`.
#[tauri::command]
#[specta::specta]
pub async fn judge_summary(
    state: State<'_, AppState>,
    st: State<'_, SummarizerState>,
    entry_id: String,
    on_progress: Channel<JudgeProgressView>,
) -> IpcResult<JudgedView> {
    let progress: summarizer::judge::JudgeProgressFn = Arc::new(move |p| {
        if let summarizer::judge::JudgeProgress::Probes { done, total } = p {
            let _ = on_progress.send(JudgeProgressView { done: done as u32, total: total as u32 });
        }
    });
    Ok(judge(&state, &st, &entry_id, Some(progress)).await?)
}

/// Computes the marks of every summary of the open session in the background (the UI asks after
/// a session opens or grows, once its graph is drawn), sending them to `on_marks` slice by slice.
#[tauri::command]
#[specta::specta]
pub async fn warm_summary_quality(
    app: tauri::AppHandle,
    on_marks: Channel<Vec<QualityMarkView>>,
) -> IpcResult<QualityWarm> {
    use tauri::Manager;
    let sink: MarkSink = Arc::new(move |marks| on_marks.send(marks).is_ok());
    let done = crate::state::background::run_in_background(move || warm(&app.state::<AppState>(), sink, SLICE)).await;
    match done {
        Some(r) => Ok(r?),
        None => Err(AppError::Refused(
            "judging the session's summaries stopped unexpectedly; open the session again to retry".into(),
        )
        .into()),
    }
}
