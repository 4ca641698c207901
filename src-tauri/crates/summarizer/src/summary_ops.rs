//! The file-level write of the summary workbench: append an edited or reverted compaction
//! entry (built by `summary_analysis::{edit_entry, revert_entry}`) to a session file.
//!
//! Under the session lock, the file must still have the length the caller's `Session` was
//! loaded with; otherwise another program appended in the meantime and the entry (whose
//! `parentId` and `tokensBefore` came from the old state) is not written. The file is never
//! opened to be parsed here; the caller extends its session with `Session::extend_from_file`.

use crate::error::{Error, Result};
use pi_json::Value;
use session_engine::store::{append_entry_planned, SessionLock, StoreError};
use session_engine::Session;
use std::path::Path;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditDone {
    pub entry_id: String,
    /// The appended JSON line (without `\n`).
    pub line: String,
    pub synced: bool,
}

/// Takes the session lock, checks the file length still equals `session.file_len()`, refuses
/// read-only sessions, and appends `entry` as one line with `sync_data`.
pub fn append_summary_entry(path: &Path, session: &Session, entry: &Value) -> Result<EditDone> {
    if let Some(why) = session.read_only_reason() {
        return Err(Error::Session(format!("this session is read-only, so nothing was written: {why}")));
    }
    let _lock = SessionLock::try_acquire(path).map_err(|e| Error::Session(e.to_string()))?;
    let changed = || {
        Error::Session(format!(
            "{} changed while you were editing (another program appended to it); nothing was written. Reload and try again.",
            path.display()
        ))
    };
    let len = std::fs::metadata(path)
        .map_err(|e| Error::Session(format!("{}: {e}; nothing was written.", path.display())))?
        .len();
    if len != session.file_len() {
        return Err(changed());
    }
    let entry_id = entry.str_field("id").unwrap_or("").to_string();
    let line = session_engine::entries::line(entry);
    // Planned on the loaded length: checked again on the writing descriptor right before the write.
    let appended = match append_entry_planned(path, entry, true, session.file_len()) {
        Ok(a) => a,
        Err(StoreError::Changed { .. }) => return Err(changed()),
        Err(e) => return Err(Error::Session(e.to_string())),
    };
    Ok(EditDone { entry_id, line, synced: appended.synced })
}
