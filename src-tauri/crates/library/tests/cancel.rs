//! Cancelling a long index pass: it stops between files, what it indexed stays (committed, in a
//! real SQLite file), and a later pass, after reopening, indexes the rest to the same result as
//! an uncancelled pass.
mod support;

use library::watch::WatchOptions;
use library::{Library, LibraryEvent, SearchQuery, SessionFilter, SyncOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use support::*;

const FILES: usize = 40;

fn sessions_in(dir: &Path, n: usize) -> PathBuf {
    let root = dir.join("sessions");
    for i in 0..n {
        let mut g = Gen::new(&format!("sess-{i:04}"), &format!("/proj/{}", i % 3));
        g.chain(None, 3, &format!("topic{i}"), "m");
        g.write(&root.join(format!("--proj-{}--", i % 3)).join(format!("s{i:04}.jsonl")));
    }
    root
}

fn count(lib: &Library) -> usize {
    lib.sessions(&SessionFilter { limit: Some(10_000), ..Default::default() }).unwrap().len()
}

fn hits(lib: &Library, q: &str) -> usize {
    let mut s = SearchQuery::new(q);
    s.limit = 10_000;
    s.complete_pending = false; // what is indexed now, not what a search would complete
    lib.search(&s).unwrap().len()
}

fn two_threads() -> SyncOptions {
    SyncOptions { full_text: true, threads: 2 }
}

#[test]
fn cancel_in_the_catalog_keeps_what_was_indexed_and_a_later_pass_completes() {
    let dir = tempfile::tempdir().unwrap();
    let root = sessions_in(dir.path(), FILES);
    let db = dir.path().join("index.sqlite3");
    let cancel = AtomicBool::new(false);
    {
        let mut lib = Library::open(&db).unwrap();
        let mut seen_phase2 = false;
        let rep = lib
            .sync_roots_cancellable(std::slice::from_ref(&root), two_threads(), Some(&cancel), &mut |p| {
                seen_phase2 |= p.full_text;
                if !p.full_text && p.done == 10 {
                    cancel.store(true, Ordering::SeqCst);
                }
            })
            .unwrap();
        assert!(rep.cancelled, "{rep:?}");
        assert!(!seen_phase2, "a cancelled catalog does not go on to the full text");
        assert_eq!(rep.new, 10, "stopped right after the file being written when cancel came");
        assert_eq!(count(&lib), 10);
    }
    // reopen: the 10 are there (committed), their full text is pending
    let mut lib = Library::open(&db).unwrap();
    assert_eq!(count(&lib), 10);
    assert_eq!(lib.pending_fulltext_count().unwrap(), 10);
    assert_eq!(hits(&lib, "tokenizer"), 0);
    // a later pass completes
    let rep = lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    assert!(!rep.cancelled);
    assert_eq!((rep.new, rep.unchanged), (FILES - 10, 10));
    assert_eq!(count(&lib), FILES);
    assert_eq!(lib.pending_fulltext_count().unwrap(), 0);
    assert_eq!(hits(&lib, "tokenizer"), FILES * 3, "every assistant answer of every file");
    assert_eq!(hits(&lib, "topic7"), 6);
}

#[test]
fn cancel_in_the_full_text_keeps_the_catalog_and_the_next_pass_finishes_the_text() {
    let dir = tempfile::tempdir().unwrap();
    let root = sessions_in(dir.path(), FILES);
    let db = dir.path().join("index.sqlite3");
    let cancel = AtomicBool::new(false);
    {
        let mut lib = Library::open(&db).unwrap();
        let rep = lib
            .sync_roots_cancellable(std::slice::from_ref(&root), two_threads(), Some(&cancel), &mut |p| {
                if p.full_text && p.done == 5 {
                    cancel.store(true, Ordering::SeqCst);
                }
            })
            .unwrap();
        assert!(rep.cancelled, "{rep:?}");
        assert_eq!(count(&lib), FILES, "the catalog was complete");
        assert_eq!(lib.pending_fulltext_count().unwrap(), FILES - 5);
    }
    let mut lib = Library::open(&db).unwrap();
    assert_eq!(hits(&lib, "tokenizer"), 5 * 3, "the 5 files whose text was written are searchable");
    let rep = lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    assert!(!rep.cancelled && rep.unchanged == FILES, "{rep:?}");
    assert_eq!(lib.pending_fulltext_count().unwrap(), 0);
    assert_eq!(hits(&lib, "tokenizer"), FILES * 3);
    // same answer as an index built without a cancel
    let fresh_db = dir.path().join("fresh.sqlite3");
    let mut fresh = Library::open(&fresh_db).unwrap();
    fresh.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    assert_eq!(hits(&fresh, "parser"), hits(&lib, "parser"));
    assert_eq!(count(&fresh), count(&lib));
}

fn wait(rx: &std::sync::mpsc::Receiver<LibraryEvent>, pred: &dyn Fn(&LibraryEvent) -> bool) -> LibraryEvent {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let ev = rx.recv_timeout(deadline.saturating_duration_since(Instant::now())).expect("no event within 30 s");
        if pred(&ev) {
            return ev;
        }
    }
}

#[test]
fn the_watcher_cancels_holds_its_rescans_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let root = sessions_in(dir.path(), 150);
    let db = dir.path().join("index.sqlite3");
    let opts = WatchOptions { rescan_every: Duration::from_millis(100), ..Default::default() };
    let (w, rx) = library::Watcher::start(&db, vec![root.clone()], opts).unwrap();
    w.cancel_pass();
    assert!(w.is_paused());
    let ev = wait(&rx, &|e| matches!(e, LibraryEvent::Cancelled { .. } | LibraryEvent::Synced { .. }));
    let LibraryEvent::Cancelled { report } = ev else { panic!("the pass was not cancelled: {ev:?}") };
    assert!(report.cancelled);
    let lib = Library::open(&db).unwrap();
    let after_cancel = count(&lib);
    assert!(after_cancel < 150, "{after_cancel} sessions indexed");
    // no rescan runs while cancelled (one would every 100 ms)
    std::thread::sleep(Duration::from_millis(600));
    for ev in rx.try_iter() {
        assert!(
            !matches!(ev, LibraryEvent::Synced { .. } | LibraryEvent::Indexing { .. }),
            "a pass ran while cancelled: {ev:?}"
        );
    }
    assert_eq!(count(&lib), after_cancel);
    // resume: a pass with progress indexes the rest
    w.resume();
    assert!(!w.is_paused());
    // (a rescan falling between the resume and its pass indexed the rest silently once: the
    // pass with progress must be the one that does the work)
    let ev = wait(&rx, &|e| matches!(e, LibraryEvent::Indexing { .. } | LibraryEvent::Synced { .. }));
    assert!(matches!(ev, LibraryEvent::Indexing { .. }), "the resumed pass ended before any progress: {ev:?}");
    let ev = wait(&rx, &|e| matches!(e, LibraryEvent::Synced { .. } | LibraryEvent::Cancelled { .. }));
    let LibraryEvent::Synced { report } = ev else { panic!("{ev:?}") };
    assert_eq!(report.new, 150 - after_cancel, "{report:?}");
    assert_eq!(count(&lib), 150);
    assert_eq!(lib.pending_fulltext_count().unwrap(), 0, "after_cancel {after_cancel}, {report:?}");
    w.stop();
}

/// A Cancel that arrives after the pass finished (the user clicked as the last files were
/// written) has nothing to stop: it must not hold the later passes, since no `Cancelled` event
/// would tell the picker to offer Resume. The root that appears afterwards is only found by a
/// full pass (it was not there to be watched), so it is indexed only if passes still run.
#[test]
fn a_cancel_after_the_pass_finished_holds_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let root = sessions_in(dir.path(), 3);
    let late = dir.path().join("late");
    let db = dir.path().join("index.sqlite3");
    let opts = WatchOptions { rescan_every: Duration::from_millis(100), ..Default::default() };
    let (w, rx) = library::Watcher::start(&db, vec![root.clone(), late.clone()], opts).unwrap();
    let ev = wait(&rx, &|e| matches!(e, LibraryEvent::Cancelled { .. } | LibraryEvent::Synced { .. }));
    assert!(matches!(ev, LibraryEvent::Synced { .. }), "{ev:?}");
    w.cancel_pass();
    assert!(!w.is_paused(), "a cancel with no pass running holds the next passes");
    // the new root is made whole elsewhere and moved in, so only a pass can index its session
    let staging = dir.path().join("staging");
    let mut g = Gen::new("sess-late", "/proj/late");
    g.chain(None, 3, "latecomer", "m");
    g.write(&staging.join("--proj-late--").join("late.jsonl"));
    std::fs::rename(&staging, &late).unwrap();
    let ev = wait(&rx, &|e| matches!(e, LibraryEvent::Cancelled { .. } | LibraryEvent::Synced { .. }));
    let LibraryEvent::Synced { report } = ev else { panic!("a pass after the late cancel: {ev:?}") };
    assert_eq!(report.new, 1, "{report:?}");
    assert_eq!(count(&Library::open(&db).unwrap()), 4);
    w.stop();
}
