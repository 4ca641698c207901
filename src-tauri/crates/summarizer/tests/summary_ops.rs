//! `summary_ops::append_summary_entry`: the file-level write of summary edits. It appends one
//! synced line under the session lock, and refuses (writing nothing) when the file grew since
//! the session was loaded, when another Arbor process holds the lock, or when the session is
//! read-only.
use session_engine::session::Extend;
use session_engine::store::SessionLock;
use session_engine::Session;
use std::path::{Path, PathBuf};
use summarizer::summary_ops::append_summary_entry;

fn copy(dir: &Path, name: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("../session-engine/tests/fixtures/conformance/{name}.jsonl"));
    let f = dir.join(format!("{name}.jsonl"));
    std::fs::copy(src, &f).unwrap();
    f
}

fn edit_of(session: &Session, id: &str) -> pi_json::Value {
    let c = session.index_of("f546dee3").unwrap();
    summary_analysis::edit_entry(session, c, session.file_leaf(), "## Goal\nEdited.\n", id, "2030-01-01T00:00:00.000Z")
        .unwrap()
}

#[test]
fn appends_one_synced_line_that_the_open_session_reads() {
    let dir = tempfile::tempdir().unwrap();
    let f = copy(dir.path(), "compaction-repeated");
    let mut session = Session::open(&f).unwrap();
    let before = std::fs::read(&f).unwrap();
    let e = edit_of(&session, "edit0001");
    let done = append_summary_entry(&f, &session, &e).unwrap();
    assert_eq!(done.entry_id, "edit0001");
    assert!(done.synced);
    let after = std::fs::read(&f).unwrap();
    assert_eq!(&after[..before.len()], &before[..], "nothing earlier changed");
    assert_eq!(&after[before.len()..], format!("{}\n", done.line).as_bytes());
    assert_eq!(session.extend_from_file(&f).unwrap(), Extend::Added(1));
    let i = session.index_of("edit0001").unwrap();
    assert_eq!(summary_analysis::governing_compaction(&session, session.file_leaf()), Some(i));
    assert_eq!(summary_analysis::history(&session, i).len(), 2);
    assert!(!SessionLock::lock_path(&f).exists() || SessionLock::try_acquire(&f).is_ok(), "the lock is released");
}

#[test]
fn refuses_when_the_file_grew_the_lock_is_held_or_the_session_is_read_only() {
    let dir = tempfile::tempdir().unwrap();
    let f = copy(dir.path(), "compaction-repeated");
    let session = Session::open(&f).unwrap();
    let e = edit_of(&session, "edit0002");
    // Another program appends after the load.
    let other = "{\"type\":\"custom\",\"id\":\"zz000001\",\"parentId\":\"c9d4d100\",\"timestamp\":\"2030-01-01T00:00:00.000Z\"}\n";
    let mut grown = std::fs::read(&f).unwrap();
    grown.extend_from_slice(other.as_bytes());
    std::fs::write(&f, &grown).unwrap();
    let err = append_summary_entry(&f, &session, &e).unwrap_err().to_string();
    assert!(err.ends_with("changed while you were editing (another program appended to it); nothing was written. Reload and try again."), "{err}");
    assert_eq!(std::fs::read(&f).unwrap(), grown);
    // Another Arbor process holds the lock.
    let session = Session::open(&f).unwrap();
    let lock = SessionLock::try_acquire(&f).unwrap();
    let err = append_summary_entry(&f, &session, &edit_of(&session, "edit0003")).unwrap_err().to_string();
    assert!(err.contains("another Arbor window or process is writing this session"), "{err}");
    assert_eq!(std::fs::read(&f).unwrap(), grown);
    drop(lock);
    // Read-only (a v1 file), even with a well-formed entry.
    let legacy = copy(dir.path(), "load-v1-legacy");
    let ls = Session::open(&legacy).unwrap();
    let bytes = std::fs::read(&legacy).unwrap();
    let err = append_summary_entry(&legacy, &ls, &e).unwrap_err().to_string();
    assert!(err.contains("read-only, so nothing was written"), "{err}");
    assert_eq!(std::fs::read(&legacy).unwrap(), bytes);
}
