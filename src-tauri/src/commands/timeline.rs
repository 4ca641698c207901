//! The context waterfall: the engine's timeline of the active path (or of the path to a node),
//! with the window and threshold the Budgets panel holds.
//!
//! Reading every entry of a 100k-entry path costs about a second, so each entry's
//! contribution (a few numbers) is kept in [`TimelineCache`] (the engine's
//! `ContributionCache` for the open file). The numbers are read on a snapshot of the session
//! ([`crate::state::app::SharedSession::snapshot`]), without the session lock, so clicks and scrolling
//! never wait for them; the UI warms the cache after a session opens ([`warm_timeline`]), and
//! later calls (another node, an append, other budgets) only do the arithmetic pass.

use crate::error::{AppError, IpcResult};
use crate::state::app::{AppState, OpenSession};
use crate::state::quality::is_current;
use crate::state::timeline::TimelineCache;
use crate::view::budgets::BudgetArgs;
use crate::view::timeline::{timeline_view, TimelineView};
use session_engine::timeline::timeline_of;
use session_engine::Session;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tauri::State;

/// How long the engine reads before it checks back (at least one step).
pub const FILL_BUDGET: Duration = Duration::from_millis(40);

/// Entries read per step (read on a few threads).
const STEP: usize = 4096;

/// The path the chart shows: the active path when `entry_id` is on it (or None), else the path
/// to `entry_id`. Returns (path, on the active path, the selected index).
fn chart_path(o: &OpenSession, entry_id: Option<&str>) -> Result<(Vec<usize>, bool, Option<usize>), AppError> {
    let session = &o.session;
    let selected = match entry_id {
        Some(id) => Some(session.index_of(id).ok_or_else(|| AppError::UnknownEntry(id.to_string()))?),
        None => None,
    };
    let active = session.path(o.leaf);
    match selected {
        Some(sel) if !active.contains(&sel) => Ok((session.path(Some(sel)), false, selected)),
        _ => Ok((active, true, selected)),
    }
}

/// What a timeline reads, taken under the session lock: a snapshot of the session, its file, the
/// chart's path (see [`chart_path`]: the path, whether it is the active one, the selected entry)
/// and Arbor's leaf.
struct Snapshot {
    session: Arc<Session>,
    file: PathBuf,
    path: Vec<usize>,
    active: bool,
    selected: Option<usize>,
    leaf: Option<usize>,
}

fn snapshot(state: &AppState, entry_id: Option<&str>) -> Result<Snapshot, AppError> {
    state.with_open(|o| {
        let (path, active, selected) = chart_path(o, entry_id)?;
        Ok(Snapshot { session: o.session.snapshot(), file: o.path.clone(), path, active, selected, leaf: o.leaf })
    })
}

/// The timeline of the chart's path (see [`chart_path`]) with the window and threshold inputs,
/// computed on a snapshot of the session (the session lock is held only to take it).
pub fn timeline(
    state: &AppState,
    cache: &TimelineCache,
    entry_id: Option<&str>,
    context_window: u32,
    reserve_tokens: u32,
    budget: Duration,
) -> Result<TimelineView, AppError> {
    timeline_in_steps(state, cache, entry_id, context_window, reserve_tokens, budget, STEP)
}

/// [`timeline`] reading `step` entries at a time (tests use small steps to cross many slices).
pub fn timeline_in_steps(
    state: &AppState,
    cache: &TimelineCache,
    entry_id: Option<&str>,
    context_window: u32,
    reserve_tokens: u32,
    budget: Duration,
    step: usize,
) -> Result<TimelineView, AppError> {
    if context_window == 0 {
        return Err(AppError::BadInput(
            "The context window must be at least 1 token; set it in the Budgets panel.".into(),
        ));
    }
    let snap = snapshot(state, entry_id)?;
    let s = &snap.session;
    let mut c = cache.of(&snap.file);
    // Each round walks the path once: the kept numbers, the missing ones read within the budget.
    loop {
        if let Some(contribs) = c.1.fill_path(s, &snap.path, budget, step) {
            let points = timeline_of(s, &snap.path, &contribs);
            return Ok(timeline_view(
                s,
                &points,
                &contribs,
                context_window,
                reserve_tokens,
                snap.active,
                snap.selected,
                snap.leaf,
            ));
        }
    }
}

/// Reads the numbers of the active path into the cache (in slices, as [`timeline`]) so the
/// Timeline tab's first draw is only the arithmetic pass. Returns how many path entries are kept.
pub fn warm(state: &AppState, cache: &TimelineCache, budget: Duration) -> Result<usize, AppError> {
    warm_in_steps(state, cache, budget, STEP)
}

/// [`warm`] reading `step` entries at a time. Each slice reads on a snapshot of its own, taken
/// while the session it started on is still the open one: at a million entries the warm-up lasts
/// longer than a reopen, and one snapshot held through it kept a whole 2.6 GB session alive
/// beside the next one. When that session was let go (another file, or the same one opened again),
/// it stops.
pub fn warm_in_steps(
    state: &AppState,
    cache: &TimelineCache,
    budget: Duration,
    step: usize,
) -> Result<usize, AppError> {
    let snap = snapshot(state, None)?;
    let started_on = state.with_open(|o| Ok(o.quality.clone()))?;
    let (file, path) = (snap.file, snap.path);
    let mut session = snap.session;
    let mut c = cache.of(&file);
    while !c.1.fill(&session, &path, budget, step) {
        drop(session);
        let next = state.with_open(|o| {
            Ok((is_current(&o.quality, &started_on) && !started_on.is_retired()).then(|| o.session.snapshot()))
        });
        session = match next {
            Ok(Some(s)) => s,
            _ => {
                return Err(AppError::Refused(
                    "the session was opened again while the waterfall's numbers were read; they are read when the Timeline tab opens"
                        .into(),
                ))
            }
        };
    }
    Ok(c.1.kept(&session, &path))
}

/// The answer of [`get_timeline`]: [`TimelineView::to_bytes`], sent as raw bytes (an ArrayBuffer
/// in the UI) instead of JSON.
pub struct TimelineBytes(pub Vec<u8>);

impl specta::Type for TimelineBytes {
    fn definition(_: &mut specta::Types) -> specta::datatype::DataType {
        specta::datatype::DataType::Reference(specta_typescript::define("ArrayBuffer"))
    }
}

impl tauri::ipc::IpcResponse for TimelineBytes {
    fn body(self) -> tauri::Result<tauri::ipc::InvokeResponseBody> {
        Ok(tauri::ipc::InvokeResponseBody::Raw(self.0))
    }
}

/// The context waterfall of the active path, or of the path to `entry_id` when it is not on it,
/// as bytes ([`TimelineView::to_bytes`]), drawn against the window and the reserve of `budgets`
/// (the Budgets panel's). Runs off the main thread; the first call on a big session reads every
/// entry once.
#[tauri::command]
#[specta::specta]
pub async fn get_timeline(
    state: State<'_, AppState>,
    cache: State<'_, TimelineCache>,
    entry_id: Option<String>,
    budgets: BudgetArgs,
) -> IpcResult<TimelineBytes> {
    let t = Instant::now();
    let mut v = timeline(
        &state,
        &cache,
        entry_id.as_deref(),
        budgets.context_window,
        budgets.budgets.reserve_tokens,
        FILL_BUDGET,
    )?;
    v.head.build_ms = t.elapsed().as_secs_f64() * 1000.0;
    Ok(TimelineBytes(v.to_bytes()))
}

/// Warms the waterfall's numbers for the open session in the background (the UI asks after a
/// session opens or grows); reads on a snapshot, without the session lock, on a thread of low
/// priority (the reading threads it starts inherit it), so the graph's first paint and clicks
/// are not slowed by it on a machine with few cores.
#[tauri::command]
#[specta::specta]
pub async fn warm_timeline(app: tauri::AppHandle) -> IpcResult<u32> {
    use tauri::Manager;
    let kept = crate::state::background::run_in_background(move || {
        warm(&app.state::<AppState>(), &app.state::<TimelineCache>(), FILL_BUDGET)
    })
    .await;
    match kept {
        Some(kept) => Ok(kept? as u32),
        None => Err(AppError::Refused(
            "reading the waterfall's numbers stopped unexpectedly; open the Timeline tab to read them again".into(),
        )
        .into()),
    }
}
