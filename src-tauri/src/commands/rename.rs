//! Renaming the open session from the app: Pi's `session_info` entry (the name Pi shows), appended
//! the way the app appends a label and `arbor-cli rename` appends a name: under the session lock,
//! planned on the bytes Arbor has read (refused when another program appended since), synced, and
//! read back as only the appended bytes.

use super::navigate::append_at_leaf;
use crate::error::{AppError, IpcResult};
use crate::state::app::AppState;
use crate::view::session::OpenedSession;
use session_engine::{entries, time};
use tauri::State;

/// Append a `session_info` entry named `name` (trimmed, as Pi stores it) as a child of Arbor's
/// leaf, which it then becomes (in Pi too: it is the file's last entry). `id` fixes the new
/// entry's id (tests); otherwise a fresh one is drawn.
pub fn rename(state: &AppState, name: &str, now_ms: i64, id: Option<&str>) -> Result<OpenedSession, AppError> {
    let name = name.trim();
    if name.is_empty() {
        return Err(AppError::BadInput(
            "the name is empty, so the session was not renamed; type a name, or press Escape to keep the old one"
                .into(),
        ));
    }
    append_at_leaf(
        state,
        id,
        |_| Ok(()),
        |id, parent| entries::session_info(id, parent, &time::format_iso_ms(now_ms), name),
    )
}

#[tauri::command]
#[specta::specta]
pub fn rename_session(state: State<'_, AppState>, name: String) -> IpcResult<OpenedSession> {
    Ok(rename(&state, &name, time::now_ms(), None)?)
}
