//! The context waterfall: the engine's timeline of the active path (or of the path to a node),
//! with the window and threshold the Budgets panel holds.
//!
//! Reading every entry of a 100k-entry path costs about a second, so each entry's
//! contribution (a few numbers) is kept in [`TimelineCache`] (the engine's
//! [`ContributionCache`] for the open file). The first call fills it in slices of about
//! [`FILL_BUDGET`], letting go of the session between slices so the graph stays responsive; the
//! UI warms it after a session opens ([`warm_timeline`]), and later calls (another node, an
//! append, other budgets) only do the arithmetic pass.

use crate::error::{AppError, IpcResult};
use crate::state::{AppState, OpenSession};
use crate::view::timeline::{timeline_view, TimelineView};
use session_engine::timeline::{timeline_of, ContributionCache};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tauri::State;

/// How long one slice of the cache fill holds the session.
pub const FILL_BUDGET: Duration = Duration::from_millis(40);

/// Entries read per step inside a slice (read on a few threads).
const STEP: usize = 4096;

/// The contributions of the open file's entries, kept between calls.
#[derive(Default)]
pub struct TimelineCache {
    inner: Mutex<(PathBuf, ContributionCache)>,
}

impl TimelineCache {
    pub fn new() -> TimelineCache {
        TimelineCache::default()
    }
}

/// The path the chart shows: the active path when `entry_id` is on it (or None), else the path
/// to `entry_id`. Returns (path, on the active path, the selected index).
fn chart_path(o: &OpenSession, entry_id: Option<&str>) -> Result<(Vec<usize>, bool, Option<usize>), AppError> {
    let s = &o.session;
    let selected = match entry_id {
        Some(id) => Some(s.index_of(id).ok_or_else(|| AppError::UnknownEntry(id.to_string()))?),
        None => None,
    };
    let active = s.path(o.leaf);
    match selected {
        Some(sel) if !active.contains(&sel) => Ok((s.path(Some(sel)), false, selected)),
        _ => Ok((active, true, selected)),
    }
}

/// Runs `f` on the open session and the cache of its file (emptied when another file is open).
fn with_cache<T>(state: &AppState, cache: &TimelineCache, f: impl FnOnce(&OpenSession, &mut ContributionCache) -> Result<T, AppError>) -> Result<T, AppError> {
    state.with_open(|o| {
        let mut c = cache.inner.lock().unwrap_or_else(|p| p.into_inner());
        if c.0 != o.path {
            *c = (o.path.clone(), ContributionCache::new());
        }
        f(o, &mut c.1)
    })
}

/// Fills the cache for the chart's path, a slice of `budget` at a time.
fn fill(state: &AppState, cache: &TimelineCache, entry_id: Option<&str>, budget: Duration, step: usize) -> Result<(), AppError> {
    while !with_cache(state, cache, |o, c| {
        let (path, _, _) = chart_path(o, entry_id)?;
        Ok(c.fill(&o.session, &path, budget, step))
    })? {
        std::thread::yield_now();
    }
    Ok(())
}

/// The timeline of the chart's path (see [`chart_path`]) with the window and threshold inputs.
/// Fills the cache first in slices of `budget`, letting go of the session between them.
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
        return Err(AppError::BadInput("The context window must be at least 1 token; set it in the Budgets panel.".into()));
    }
    // Each slice walks the path once: the kept numbers, the missing ones read within the budget;
    // once none is missing the points are computed under the same hold of the session.
    loop {
        let view = with_cache(state, cache, |o, c| {
            let (path, active, selected) = chart_path(o, entry_id)?;
            let Some(contribs) = c.fill_path(&o.session, &path, budget, step) else { return Ok(None) };
            let points = timeline_of(&o.session, &path, &contribs);
            Ok(Some(timeline_view(&o.session, &points, &contribs, context_window, reserve_tokens, active, selected, o.leaf)))
        })?;
        match view {
            Some(v) => return Ok(v),
            None => std::thread::yield_now(),
        }
    }
}

/// Reads the numbers of the active path into the cache (in slices, as [`timeline`]) so the
/// Timeline tab's first draw is only the arithmetic pass. Returns how many path entries are kept.
pub fn warm(state: &AppState, cache: &TimelineCache, budget: Duration) -> Result<usize, AppError> {
    fill(state, cache, None, budget, STEP)?;
    with_cache(state, cache, |o, c| Ok(c.kept(&o.session, &o.session.path(o.leaf))))
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
/// as bytes ([`TimelineView::to_bytes`]). Runs off the main thread; the first call on a big
/// session reads every entry once.
#[tauri::command]
#[specta::specta]
pub async fn get_timeline(
    state: State<'_, AppState>,
    cache: State<'_, TimelineCache>,
    entry_id: Option<String>,
    context_window: u32,
    reserve_tokens: u32,
) -> IpcResult<TimelineBytes> {
    let t = Instant::now();
    let mut v = timeline(&state, &cache, entry_id.as_deref(), context_window, reserve_tokens, FILL_BUDGET)?;
    v.head.build_ms = t.elapsed().as_secs_f64() * 1000.0;
    Ok(TimelineBytes(v.to_bytes()))
}

/// Warms the waterfall's numbers for the open session in the background (the UI asks after a
/// session opens or grows); holds the session at most ~40 ms at a time.
#[tauri::command]
#[specta::specta]
pub async fn warm_timeline(state: State<'_, AppState>, cache: State<'_, TimelineCache>) -> IpcResult<u32> {
    Ok(warm(&state, &cache, FILL_BUDGET)? as u32)
}
