//! The shape every one-entry append of `arbor-cli` shares (`label`, `rename`): take the session
//! lock, read the file, refuse a read-only session, build the entry on the file's leaf (Pi's
//! parent for such entries), check the file did not move since it was read, and append it with
//! the store's planned-length append, synced. The id is returned only after the line is durably
//! in the file, so exit 0 means acknowledged.
use pi_json::Value;
use session_engine::store::{append_entry_planned, SessionLock};
use session_engine::{ids, time, Session};
use std::path::Path;

/// What the entry builder gets: the loaded session, the new entry's id, its parent (the file's
/// leaf) and the timestamp.
pub struct NewEntry<'a> {
    pub session: &'a Session,
    pub id: &'a str,
    pub parent: Option<&'a str>,
    pub timestamp: &'a str,
}

/// Appends the entry `build` makes (or its error, before anything is written). `what` names
/// the write in the error sentences ("the label", "the name").
pub fn append_on_leaf(
    file: &Path,
    what: &str,
    build: impl FnOnce(NewEntry) -> Result<Value, String>,
) -> Result<String, String> {
    // The sidecar lock first: another Arbor writer waits its turn instead of racing on the leaf.
    let _lock = SessionLock::try_acquire(file).map_err(|e| e.to_string())?;
    let session = super::open_session(file)?;
    if let Some(why) = session.read_only_reason() {
        return Err(format!("{}: this session is read-only, so nothing was written: {why}", file.display()));
    }
    let parent = session.file_leaf().map(|i| session.id(i).to_string());
    let id = ids::new_entry_id(|id| session.index_of(id).is_some());
    let entry = build(NewEntry { session: &session, id: &id, parent: parent.as_deref(), timestamp: &time::now_iso() })?;
    // Pi may have appended since we read the leaf: then our parent would hide Pi's entry.
    let len = std::fs::metadata(file).map_err(|e| format!("{}: {e}", file.display()))?.len();
    if len != session.file_len() {
        return Err(format!("{} changed while {what} was being written (another program appended to it); nothing was written. Run it again.", file.display()));
    }
    // The store checks the length again on its own descriptor right before the write, and says
    // so if another append still slipped in between.
    append_entry_planned(file, &entry, true, session.file_len()).map_err(|e| e.to_string())?;
    Ok(id)
}

/// Prints the new id: bare, or `{"entryId": …}` with `--json`.
pub fn print_entry_id(id: &str, as_json: bool) {
    if as_json {
        println!("{{\"entryId\":{}}}", pi_json::quote(id));
    } else {
        println!("{id}");
    }
}
