//! What an index pass tells its caller about one file: the [`Change`], and the entries it added.
use crate::status::EntryStatus;

/// Most new entries listed in one [`FileUpdate`] (and watcher event); more means "reload it".
pub const MAX_EVENT_ENTRIES: usize = 1000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Change {
    /// Nothing new since the last pass.
    Unchanged,
    /// First time seen.
    New,
    /// New complete lines were appended and indexed from the stored offset.
    Appended,
    /// Replaced, truncated or rewritten: re-read in full.
    Reindexed,
    /// The file is gone; its rows were dropped.
    Removed,
}

#[derive(Debug, Clone)]
pub struct FileUpdate {
    pub change: Change,
    pub session_id: Option<String>,
    /// Entries added by this pass (in file order), with their status after the pass; at most
    /// [`MAX_EVENT_ENTRIES`] (a bigger change, e.g. a new or re-read file: reload the session).
    pub new_entries: Vec<NewEntry>,
    /// Bytes read from the file by this pass.
    pub bytes_read: u64,
    /// Why a full re-read happened (replaced, truncated, rewritten), for diagnostics.
    pub reason: Option<&'static str>,
}

impl FileUpdate {
    /// Nothing was indexed.
    pub(crate) fn unchanged(session_id: Option<String>) -> FileUpdate {
        FileUpdate { change: Change::Unchanged, session_id, new_entries: vec![], bytes_read: 0, reason: None }
    }
}

/// An entry added to a session by an index pass.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NewEntry {
    pub entry_id: String,
    pub parent_id: Option<String>,
    pub entry_type: String,
    /// The entry's status after the pass.
    pub status: EntryStatus,
}

impl NewEntry {
    pub(crate) fn new(entry_id: &str, parent_id: Option<&str>, entry_type: &str, status: EntryStatus) -> NewEntry {
        NewEntry {
            entry_id: entry_id.to_string(),
            parent_id: parent_id.map(str::to_string),
            entry_type: entry_type.to_string(),
            status,
        }
    }
}
