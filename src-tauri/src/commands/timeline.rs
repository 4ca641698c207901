//! The context waterfall: the engine's timeline of the active path (or of the path to a node),
//! with the window and threshold the Budgets panel holds.
//!
//! Reading every entry of a 100k-entry path costs about a second, so each entry's
//! [`Contribution`] (a few numbers) is kept in [`TimelineCache`], per open file and entry index,
//! checked against the entry's id and line length. The first call fills it in slices of about
//! [`FILL_BUDGET`], letting go of the session between slices so the graph stays responsive; later
//! calls (another node selected, an append, other budgets) only do the arithmetic pass.

use crate::error::{AppError, IpcResult};
use crate::state::{AppState, OpenSession};
use crate::view::timeline::{timeline_view, TimelineView};
use session_engine::timeline::{contributions, timeline_of, Contribution};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tauri::State;

/// How long one slice of the cache fill holds the session.
pub const FILL_BUDGET: Duration = Duration::from_millis(40);

/// Entries read per step inside a slice (read on a few threads).
const STEP: usize = 4096;

#[derive(Clone, Copy)]
struct Kept {
    id_hash: u64,
    raw_len: u32,
    c: Contribution,
}

#[derive(Default)]
struct Cached {
    path: PathBuf,
    entries: Vec<Option<Kept>>,
}

/// Contributions of the open session's entries, kept between calls.
#[derive(Default)]
pub struct TimelineCache {
    inner: Mutex<Cached>,
}

impl TimelineCache {
    pub fn new() -> TimelineCache {
        TimelineCache::default()
    }
}

fn id_hash(id: &str) -> u64 {
    use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
    BuildHasherDefault::<DefaultHasher>::default().hash_one(id)
}

fn kept_for(c: &Cached, o: &OpenSession, i: usize) -> Option<Contribution> {
    let k = c.entries.get(i)?.as_ref()?;
    let s = &o.session;
    (k.raw_len as usize == s.raw(i).len() && k.id_hash == id_hash(s.id(i))).then_some(k.c)
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

/// Fills the cache for the chart's path for at most `budget` (at least one step). Returns true
/// when every entry of the path is in the cache.
fn fill_slice(state: &AppState, cache: &TimelineCache, entry_id: Option<&str>, budget: Duration, step: usize) -> Result<bool, AppError> {
    state.with_open(|o| {
        let o: &OpenSession = o;
        let t = Instant::now();
        let (path, _, _) = chart_path(o, entry_id)?;
        let mut c = cache.inner.lock().unwrap_or_else(|p| p.into_inner());
        if c.path != o.path {
            *c = Cached { path: o.path.clone(), entries: Vec::new() };
        }
        let s = &o.session;
        if c.entries.len() < s.len() {
            c.entries.resize(s.len(), None);
        }
        let missing: Vec<usize> = path.iter().copied().filter(|&i| kept_for(&c, o, i).is_none()).collect();
        for chunk in missing.chunks(step.max(1)) {
            let got = contributions(s, chunk);
            for (&i, g) in chunk.iter().zip(got) {
                c.entries[i] = Some(Kept { id_hash: id_hash(s.id(i)), raw_len: s.raw(i).len() as u32, c: g });
            }
            if t.elapsed() >= budget {
                return Ok(chunk.as_ptr_range().end == missing.as_ptr_range().end);
            }
        }
        Ok(true)
    })
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
    while !fill_slice(state, cache, entry_id, budget, step)? {
        std::thread::yield_now();
    }
    state.with_open(|o| {
        let o: &OpenSession = o;
        let (path, active, selected) = chart_path(o, entry_id)?;
        let c = cache.inner.lock().unwrap_or_else(|p| p.into_inner());
        // An append or a re-read between the fill and now: read what is missing here.
        let contribs: Vec<Contribution> =
            path.iter().map(|&i| kept_for(&c, o, i).unwrap_or_else(|| session_engine::timeline::contribution(&o.session, i))).collect();
        let points = timeline_of(&o.session, &path, &contribs);
        Ok(timeline_view(&o.session, &points, context_window, reserve_tokens, active, selected, o.leaf))
    })
}

/// The context waterfall of the active path, or of the path to `entry_id` when it is not on it.
/// Runs off the main thread; the first call on a big session reads every entry once.
#[tauri::command]
#[specta::specta]
pub async fn get_timeline(
    state: State<'_, AppState>,
    cache: State<'_, TimelineCache>,
    entry_id: Option<String>,
    context_window: u32,
    reserve_tokens: u32,
) -> IpcResult<TimelineView> {
    Ok(timeline(&state, &cache, entry_id.as_deref(), context_window, reserve_tokens, FILL_BUDGET)?)
}

/// Reads the numbers of the active path into the cache (in slices, as [`timeline`]) so the
/// Timeline tab's first draw is only the arithmetic pass. Returns how many path entries are kept.
pub fn warm(state: &AppState, cache: &TimelineCache, budget: Duration) -> Result<usize, AppError> {
    while !fill_slice(state, cache, None, budget, STEP)? {
        std::thread::yield_now();
    }
    state.with_open(|o| {
        let o: &OpenSession = o;
        let c = cache.inner.lock().unwrap_or_else(|p| p.into_inner());
        Ok(o.session.path(o.leaf).into_iter().filter(|&i| kept_for(&c, o, i).is_some()).count())
    })
}

/// Warms the waterfall's numbers for the open session in the background (the UI asks after a
/// session opens or grows); holds the session at most ~40 ms at a time.
#[tauri::command]
#[specta::specta]
pub async fn warm_timeline(state: State<'_, AppState>, cache: State<'_, TimelineCache>) -> IpcResult<u32> {
    Ok(warm(&state, &cache, FILL_BUDGET)? as u32)
}
