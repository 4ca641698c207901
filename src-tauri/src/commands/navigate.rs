//! "Continue from here", labels and the context view of any node.

use super::budgets::{default_cut, default_keep_recent, plan_preview};
use super::graph as graph_cmd;
use crate::error::{AppError, IpcResult};
use crate::state::app::{describe_open, AppState, OpenSession};
use crate::state::layout::{relayout, relayout_revealing};
use crate::state::state_file::ArborStateFile;
use crate::view::budgets::BudgetArgs;
use crate::view::context::{context_view, ContextView};
use crate::view::detail::Selection;
use crate::view::graph::GraphViewport;
use crate::view::session::{Continued, Navigation, OpenedSession};
use session_engine::branch::navigation_target;
use session_engine::store::{append_entry_planned, SessionLock};
use session_engine::{entries, time, Session};
use tauri::State;

/// Move Arbor's leaf to `entry_id` by Pi's rule and remember it in Arbor's state file. The graph
/// is laid out with the cut of the Budgets panel's default keep-recent budget revealed.
pub fn continue_from(state: &AppState, entry_id: &str) -> Result<Navigation, AppError> {
    let keep_recent = default_keep_recent(&state.agent_dir);
    Ok(move_leaf(state, entry_id, keep_recent, |_, _, _| (), |_, ()| ())?.0)
}

/// "Continue from here" as the UI asks for it: the leaf moved (the graph laid out once, with
/// the cut of `budgets` revealed), the new leaf's selection, the budget preview and the new
/// layout's rows that `view` (the graph's, when given) will draw at the new leaf, in one round
/// trip. The selection's context and the preview's cut are built on another thread while the
/// graph is laid out.
pub fn continue_here(
    state: &AppState,
    entry_id: &str,
    budgets: &BudgetArgs,
    view: Option<&GraphViewport>,
) -> Result<Continued, AppError> {
    let b = &budgets.budgets;
    let pi = state.pi_models_json();
    let (navigation, (selection, preview, rows)) = move_leaf(
        state,
        entry_id,
        Some(b.keep_recent_tokens as f64),
        |s, leaf, st| {
            let context = leaf.map(|l| (l, graph_cmd::context_at(s, l, st, &pi, b.reserve_tokens, b.enabled)));
            (context, plan_preview(s, leaf, b.keep_recent_tokens, b.reserve_tokens, budgets.context_window, b.enabled))
        },
        |o, (context, plan)| {
            let selection =
                context.map(|(l, (window, context))| Selection { detail: graph_cmd::detail_of(o, l), window, context });
            let preview = plan.finish(o);
            // After the preview's layout (its cut may unfold a run), which is the one shown.
            let rows = view.and_then(|v| graph_cmd::rows_at_leaf(o, v));
            (selection, preview, rows)
        },
    )?;
    Ok(Continued { navigation, selection, preview, rows })
}

/// Moves the leaf to `entry_id` by Pi's rule and lays the graph out once, with the cut for
/// `keep_recent` revealed (the preview that follows finds its row), and remembers the new leaf in
/// Arbor's state file. Meanwhile `beside` runs on another thread with a snapshot of the session,
/// the new leaf and that state file as read before the move (the user's window overrides);
/// `then` gets its result and the new layout, under the session lock.
fn move_leaf<T: Send, U>(
    state: &AppState,
    entry_id: &str,
    keep_recent: Option<f64>,
    beside: impl FnOnce(&Session, Option<usize>, &ArborStateFile) -> T + Send,
    then: impl FnOnce(&mut OpenSession, T) -> U,
) -> Result<(Navigation, U), AppError> {
    let mut st = ArborStateFile::load(&state.state_file());
    let (dto, composer_text, key, leaf_id, out) = state.with_open(|o| {
        let target = o.session.index_of(entry_id).ok_or_else(|| AppError::UnknownEntry(entry_id.to_string()))?;
        let nav = navigation_target(&o.session, target);
        o.leaf = nav.new_leaf;
        let (s, leaf) = (o.session.snapshot(), o.leaf);
        let side = std::thread::scope(|scope| {
            let side = scope.spawn(|| beside(&s, leaf, &st));
            let cut = default_cut(&o.session, leaf, keep_recent);
            o.layout = relayout_revealing(&o.session, leaf, &mut o.folding, &mut o.nodes, cut);
            side.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        });
        let out = then(o, side);
        let leaf_id = leaf.map(|l| o.session.id(l).to_string());
        Ok((describe_open(o), nav.editor_text, o.path.display().to_string(), leaf_id, out))
    })?;
    match leaf_id {
        Some(id) if Some(&id) != dto.file_leaf_id.as_ref() => {
            st.leaves.insert(key, id);
        }
        _ => {
            st.leaves.remove(&key);
        }
    }
    st.save(&state.state_file())?;
    let note = if dto.leaf_moved {
        "Arbor remembers this position. Pi keeps its old position until something is appended here (a message, a label, a summary).".to_string()
    } else {
        "This is Pi's current position too.".to_string()
    };
    Ok((Navigation { session: dto, composer_text, note }, out))
}

/// Append a `label` entry (as Pi does: a child of the current leaf, which then becomes the leaf).
/// `label: None` clears the label. `id` is the new entry's id when the caller fixes it (tests);
/// otherwise a fresh one is drawn.
pub fn set_label(
    state: &AppState,
    entry_id: &str,
    label: Option<&str>,
    now_ms: i64,
    id: Option<&str>,
) -> Result<OpenedSession, AppError> {
    let label = label.map(str::trim).filter(|l| !l.is_empty());
    append_at_leaf(
        state,
        id,
        |s| if s.index_of(entry_id).is_none() { Err(AppError::UnknownEntry(entry_id.to_string())) } else { Ok(()) },
        |id, parent| entries::label(id, parent, &time::format_iso_ms(now_ms), entry_id, label),
    )
}

/// Appends one entry (a label, a session name) as a child of Arbor's leaf, which it then becomes
/// in Pi and in Arbor: `check` runs first, read-only files are refused, the id is `id` when free
/// (tests) or a fresh one, and `entry(id, parent)` builds the line. The append takes the session
/// lock and is planned on the bytes Arbor has read. Such an entry means the same whatever the
/// leaf, so when another program (Pi) appended meanwhile, Arbor reads the new bytes and plans
/// again (`store::replanned`, bounded): on the grown file's leaf when Arbor's leaf was the
/// file's, else on Arbor's own. Only the new bytes are read back, and any remembered leaf is
/// forgotten.
pub(crate) fn append_at_leaf(
    state: &AppState,
    id: Option<&str>,
    check: impl FnOnce(&session_engine::Session) -> Result<(), AppError>,
    entry: impl Fn(&str, Option<&str>) -> pi_json::Value,
) -> Result<OpenedSession, AppError> {
    let (key, dto) = state.with_open(|o| {
        check(&o.session)?;
        if let Some(why) = o.session.read_only_reason() {
            return Err(AppError::ReadOnly(why));
        }
        let _lock = SessionLock::try_acquire(&o.path)?;
        let follows_file = o.leaf == o.session.file_leaf();
        let cell = std::cell::RefCell::new(&mut *o);
        let attempt = || -> Result<(), session_engine::store::StoreError> {
            let o = cell.borrow();
            let session = &o.session;
            let id = match id {
                Some(id) if session.index_of(id).is_none() => id.to_string(),
                _ => session_engine::ids::new_entry_id(|c| session.index_of(c).is_some()),
            };
            let parent = if follows_file { session.file_leaf() } else { o.leaf };
            let e = entry(&id, parent.map(|l| session.id(l)));
            append_entry_planned(&o.path, &e, true, session.file_len()).map(|_| ())
        };
        let refresh = || -> Result<(), session_engine::store::StoreError> {
            let mut o = cell.borrow_mut();
            let path = o.path.display().to_string();
            o.read_appended().map_err(|e| session_engine::store::StoreError::Io {
                path,
                source: std::io::Error::other(e.to_string()),
            })
        };
        session_engine::store::replanned(attempt, refresh)?;
        o.read_appended()?;
        o.leaf = o.session.file_leaf();
        o.layout = relayout(&o.session, o.leaf, &o.folding, &mut o.nodes);
        Ok((o.path.display().to_string(), describe_open(o)))
    })?;
    let mut st = ArborStateFile::load(&state.state_file());
    st.leaves.remove(&key);
    st.save(&state.state_file())?;
    Ok(dto)
}

pub fn context(
    state: &AppState,
    entry_id: Option<&str>,
    context_window: u32,
    reserve_tokens: u32,
    enabled: bool,
) -> Result<ContextView, AppError> {
    state.with_open(|o| {
        let leaf = match entry_id {
            Some(id) => Some(o.session.index_of(id).ok_or_else(|| AppError::UnknownEntry(id.to_string()))?),
            None => o.leaf,
        };
        Ok(context_view(&o.session, leaf, context_window, reserve_tokens, enabled))
    })
}

/// "Continue from here": the moved leaf, its selection, the budget preview (`budgets` are the
/// Budgets panel's) and the new layout's rows the graph's `view` will draw at the new leaf, in
/// one round trip. Off the main thread: as a main-thread command it waited for the webview's
/// painting of the click before it (and so did a `graph_window` call for the rows after it).
#[tauri::command]
#[specta::specta]
pub async fn continue_from_entry(
    state: State<'_, AppState>,
    entry_id: String,
    budgets: BudgetArgs,
    view: GraphViewport,
) -> IpcResult<Continued> {
    Ok(continue_here(&state, &entry_id, &budgets, Some(&view))?)
}

#[tauri::command]
#[specta::specta]
pub fn set_entry_label(
    state: State<'_, AppState>,
    entry_id: String,
    label: Option<String>,
) -> IpcResult<OpenedSession> {
    Ok(set_label(&state, &entry_id, label.as_deref(), time::now_ms(), None)?)
}

/// What the model would see if `entry_id` (default: the leaf) were the leaf, against the window,
/// reserve and auto-compaction switch of `budgets` (the Budgets panel's).
#[tauri::command]
#[specta::specta]
pub fn get_context_view(
    state: State<'_, AppState>,
    entry_id: Option<String>,
    budgets: BudgetArgs,
) -> IpcResult<ContextView> {
    let b = &budgets.budgets;
    Ok(context(&state, entry_id.as_deref(), budgets.context_window, b.reserve_tokens, b.enabled)?)
}
