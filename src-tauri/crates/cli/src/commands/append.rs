//! The shape every one-entry append of `arbor-cli` shares (`label`, `rename`): take the session
//! lock, read the file, refuse a read-only session, build the entry on the file's leaf (Pi's
//! parent for such entries), and append it with the store's planned-length append, synced; when
//! the file grew meanwhile, read what was appended and plan again (bounded). The id is returned only after the line is durably
//! in the file, so exit 0 means acknowledged.
use pi_json::Value;
use session_engine::session::Extend;
use session_engine::store::{append_entry_planned, replanned, SessionLock, StoreError, REPLAN_ATTEMPTS};
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
/// the write in the error sentences ("the label", "the name"). A label or a name means the same
/// whatever the leaf, so when another program (Pi) appended meanwhile, the entry is planned
/// again on the grown file and retried (`store::replanned`), and refused only after that.
pub fn append_on_leaf(
    file: &Path,
    what: &str,
    build: impl Fn(NewEntry) -> Result<Value, String>,
) -> Result<String, String> {
    // The sidecar lock first: another Arbor writer waits its turn instead of racing on the leaf.
    let _lock = SessionLock::try_acquire(file).map_err(|e| e.to_string())?;
    let mut session = super::open_session(file)?;
    if let Some(why) = session.read_only_reason() {
        return Err(format!("{}: this session is read-only, so nothing was written: {why}", file.display()));
    }
    let changed = || {
        format!(
            "{} changed while {what} was being written (another program kept appending to it, {} tries); nothing was written. Run it again.",
            file.display(),
            REPLAN_ATTEMPTS
        )
    };
    // A builder's refusal (an unknown entry) is final; only a moved file is retried.
    let mut refused: Option<String> = None;
    let session_cell = std::cell::RefCell::new(&mut session);
    let attempt = || -> Result<String, StoreError> {
        let session = session_cell.borrow();
        let parent = session.file_leaf().map(|i| session.id(i).to_string());
        let id = ids::new_entry_id(|id| session.index_of(id).is_some());
        let entry = match build(NewEntry {
            session: &session,
            id: &id,
            parent: parent.as_deref(),
            timestamp: &time::now_iso(),
        }) {
            Ok(e) => e,
            Err(e) => {
                refused = Some(e);
                return Ok(String::new());
            }
        };
        // The store checks the length on its own descriptor right before the write: Pi may have
        // appended since we read the leaf, and then our parent would hide Pi's entry.
        append_entry_planned(file, &entry, true, session.file_len())?;
        Ok(id)
    };
    let refresh = || -> Result<(), StoreError> {
        let mut session = session_cell.borrow_mut();
        match session.extend_from_file(file) {
            Ok(Extend::Added(_)) => Ok(()),
            Ok(Extend::Reload) => {
                **session = Session::open(file).map_err(|e| StoreError::Io {
                    path: file.display().to_string(),
                    source: std::io::Error::other(e.to_string()),
                })?;
                Ok(())
            }
            Err(e) => {
                Err(StoreError::Io { path: file.display().to_string(), source: std::io::Error::other(e.to_string()) })
            }
        }
    };
    let result = replanned(attempt, refresh);
    if let Some(e) = refused {
        return Err(e);
    }
    match result {
        Ok((id, _)) => Ok(id),
        Err(StoreError::Changed { .. }) => Err(changed()),
        Err(e) => Err(e.to_string()),
    }
}

/// Prints the new id: bare, or `{"entryId": …}` with `--json`.
pub fn print_entry_id(id: &str, as_json: bool) {
    if as_json {
        println!("{{\"entryId\":{}}}", pi_json::quote(id));
    } else {
        println!("{id}");
    }
}
