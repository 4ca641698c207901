//! Renaming the open session from the app: Pi's `session_info` entry (the name Pi shows), appended
//! the way the app appends a label and `arbor-cli rename` appends a name: under the session lock,
//! planned on the bytes Arbor has read (refused when another program appended since), synced, and
//! read back as only the appended bytes.

use super::sessions::{describe_open, OpenedSession};
use crate::error::{AppError, IpcResult};
use crate::state::{AppState, ArborStateFile};
use crate::view::graph;
use session_engine::store::{append_entry_planned, SessionLock};
use session_engine::{entries, time};
use tauri::State;

/// Append a `session_info` entry named `name` (trimmed, as Pi stores it) as a child of Arbor's
/// leaf, which it then becomes (in Pi too: it is the file's last entry). `id` fixes the new
/// entry's id (tests); otherwise a fresh one is drawn.
pub fn rename(state: &AppState, name: &str, now_ms: i64, id: Option<&str>) -> Result<OpenedSession, AppError> {
    let name = name.trim();
    if name.is_empty() {
        return Err(AppError::BadInput("the name is empty, so the session was not renamed; type a name, or press Escape to keep the old one".into()));
    }
    let (key, dto) = state.with_open(|o| {
        let s = &o.session;
        if let Some(why) = s.read_only_reason() {
            return Err(AppError::ReadOnly(why));
        }
        let id = match id {
            Some(id) if s.index_of(id).is_none() => id.to_string(),
            _ => session_engine::ids::new_entry_id(|c| s.index_of(c).is_some()),
        };
        let parent = o.leaf.map(|l| s.id(l));
        let entry = entries::session_info(&id, parent, &time::format_iso_ms(now_ms), name);
        let _lock = SessionLock::try_acquire(&o.path)?;
        // Planned on the bytes Arbor has read: if Pi appended meanwhile, nothing is written.
        append_entry_planned(&o.path, &entry, true, s.file_len())?;
        // Only the new bytes are read; the entry is the new leaf in Pi and in Arbor.
        o.read_appended()?;
        o.leaf = o.session.file_leaf();
        o.layout = graph::relayout(&o.session, o.leaf, &o.folding);
        Ok((o.path.display().to_string(), describe_open(o)))
    })?;
    // The append made Pi's leaf Arbor's: forget any remembered position.
    let mut st = ArborStateFile::load(&state.state_file());
    st.leaves.remove(&key);
    st.save(&state.state_file())?;
    Ok(dto)
}

#[tauri::command]
#[specta::specta]
pub fn rename_session(state: State<'_, AppState>, name: String) -> IpcResult<OpenedSession> {
    Ok(rename(&state, &name, time::now_ms(), None)?)
}
