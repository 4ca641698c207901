//! Index behaviour on real SQLite files and real session files (appended by other processes).
mod support;

use library::{Change, LibError, Library, Notice, OpenOptions, SearchQuery, SessionFilter, SessionSort};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use support::*;

fn hits(lib: &Library, q: &str) -> Vec<(String, &'static str)> {
    lib.search(&SearchQuery::new(q)).unwrap().into_iter().map(|h| (h.entry_id, h.status.name())).collect()
}

fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("sessions");
    let db = dir.path().join("data").join("index.sqlite3");
    (dir, root, db)
}

#[test]
fn statuses_follow_the_leaf_compaction_and_branches() {
    let (_d, root, db) = setup();
    let f = three_status_session(&root.join("--p--/s1.jsonl"), "sess-1", "/p");
    let mut lib = Library::open(&db).unwrap();
    let rep = lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    assert_eq!((rep.files, rep.new), (1, 1));
    assert_eq!(hits(&lib, "zanzibar"), vec![("00000001".into(), "compacted")]);
    assert_eq!(hits(&lib, "quokka"), vec![("00000005".into(), "abandoned")]);
    assert_eq!(hits(&lib, "platypus"), vec![("00000009".into(), "in_context")]);
    // the compaction summary itself is in context
    assert_eq!(hits(&lib, "\"summary of the early work\""), vec![("00000008".into(), "in_context")]);
    let s = lib.session(&f).unwrap().unwrap();
    assert_eq!(s.session_id.as_deref(), Some("sess-1"));
    assert_eq!(s.cwd.as_deref(), Some("/p"));
    assert_eq!(s.entry_count, 10);
    assert_eq!(s.message_count, 9);
    assert_eq!(s.compaction_count, 1);
    assert_eq!(s.branch_count, 2);
    assert_eq!(s.model.as_deref(), Some("prov/model-b"));
    assert_eq!(s.first_message.as_deref(), Some("the zanzibar decision: we decided to keep sqlite"));
    assert_eq!(s.leaf_id.as_deref(), Some("0000000a"));
    assert!(s.files_read.contains(&"src/0000000a.rs".to_string()));
    // context = summary, u2, a2, u3, u4, a(usage 120) -> usage 120 + nothing after it
    assert_eq!(s.tokens_at_leaf, 120);
    // a sqlite file really exists on disk, in WAL mode
    assert!(db.exists());
    let c = rusqlite::Connection::open(&db).unwrap();
    let mode: String = c.query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
    assert_eq!(mode, "wal");
    let v: i64 = c.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    assert_eq!(v, library::db::SCHEMA_VERSION);
    drop(c);
    assert!(lib.check().unwrap(), "full quick_check of a healthy index");
}

#[test]
fn fts5_is_compiled_in() {
    let c = rusqlite::Connection::open_in_memory().unwrap();
    c.execute_batch("CREATE VIRTUAL TABLE t USING fts5(x); INSERT INTO t VALUES ('hello world');").unwrap();
    let n: i64 = c.query_row("SELECT count(*) FROM t WHERE t MATCH 'hello'", [], |r| r.get(0)).unwrap();
    assert_eq!(n, 1);
}

#[test]
fn appended_bytes_are_read_from_the_offset_and_statuses_move_with_the_leaf() {
    let (_d, root, db) = setup();
    let f = root.join("s.jsonl");
    let mut g = Gen::new("sess-a", "/a");
    let last = g.chain(None, 5, "early", "m1").unwrap();
    g.write(&f);
    let mut lib = Library::open(&db).unwrap();
    lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    let size0 = std::fs::metadata(&f).unwrap().len();

    // linear append by another process: only the new bytes are read
    let u = "aaaaaaa1".to_string();
    let extra =
        line(&serde_json::json!({"type":"message","id":u,"parentId":last,"timestamp":"2025-03-01T09:30:00.000Z",
        "message":{"role":"user","content":"the wombat arrives","timestamp":1740821400000u64}}));
    append_from_other_process(&f, &extra);
    let up = lib.sync_file(&f, Some(&root)).unwrap();
    assert_eq!(up.change, Change::Appended);
    assert_eq!(up.bytes_read, extra.len() as u64);
    assert_eq!(up.new_entries.len(), 1);
    assert_eq!(up.new_entries[0].entry_id, u);
    assert_eq!(up.new_entries[0].status, "in_context");
    assert_eq!(std::fs::metadata(&f).unwrap().len(), size0 + extra.len() as u64);
    assert_eq!(hits(&lib, "wombat"), vec![(u.clone(), "in_context")]);

    // Pi navigates back to the first answer and continues: the wombat turn is now abandoned
    let first_answer = "00000002";
    let mut nav = serde_json::json!({"type":"message","id":"bbbbbbb1","parentId":first_answer,"timestamp":"2025-03-01T10:00:00.000Z",
        "message":{"role":"user","content":"a new direction with the echidna","timestamp":1740823200000u64}});
    append_from_other_process(&f, &line(&nav));
    let up = lib.sync_file(&f, Some(&root)).unwrap();
    assert_eq!(up.change, Change::Appended);
    assert_eq!(hits(&lib, "wombat"), vec![(u.clone(), "abandoned")]);
    assert_eq!(hits(&lib, "echidna"), vec![("bbbbbbb1".into(), "in_context")]);
    assert_eq!(lib.session(&f).unwrap().unwrap().branch_count, 2);

    // a compaction appended at the leaf moves "early question 0" to compacted
    nav = serde_json::json!({"type":"compaction","id":"ccccccc1","parentId":"bbbbbbb1","timestamp":"2025-03-01T10:01:00.000Z",
        "summary":"short","firstKeptEntryId":"00000002","tokensBefore":1,"fromHook":false});
    append_from_other_process(&f, &line(&nav));
    lib.sync_file(&f, Some(&root)).unwrap();
    let q0 = lib.search(&SearchQuery::new("\"early question 0\"")).unwrap();
    assert_eq!(q0.len(), 1);
    assert_eq!(q0[0].status, "compacted");
    let a0 = lib.search(&SearchQuery::new("\"early answer 0\"")).unwrap();
    assert_eq!(a0[0].status, "in_context");
}

#[test]
fn torn_last_line_is_pending_then_indexed_when_completed() {
    let (_d, root, db) = setup();
    let f = root.join("s.jsonl");
    let mut g = Gen::new("sess-t", "/t");
    let last = g.chain(None, 2, "t", "m").unwrap();
    g.write(&f);
    let mut lib = Library::open(&db).unwrap();
    lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    let mut g2 = Gen::new("x", "/t");
    g2.user(Some(&last), "the narwhal line");
    let full = line(g2.lines.last().unwrap());
    let (a, b) = full.split_at(full.len() / 2);
    append_from_other_process(&f, a);
    let up = lib.sync_file(&f, Some(&root)).unwrap();
    assert!(up.new_entries.is_empty());
    let s = lib.session(&f).unwrap().unwrap();
    assert_eq!(s.bad_lines, 0, "a torn tail is not corrupt");
    assert_eq!(s.pending_bytes, a.len() as i64);
    assert!(hits(&lib, "narwhal").is_empty());
    append_from_other_process(&f, b);
    let up = lib.sync_file(&f, Some(&root)).unwrap();
    assert_eq!(up.change, Change::Appended);
    assert_eq!(up.new_entries.len(), 1);
    assert_eq!(hits(&lib, "narwhal").len(), 1);
    assert_eq!(lib.session(&f).unwrap().unwrap().pending_bytes, 0);
}

#[test]
fn f18_truncated_replaced_and_deleted_files() {
    let (_d, root, db) = setup();
    let f = root.join("s.jsonl");
    let mut g = Gen::new("sess-r", "/r");
    g.chain(None, 4, "kiwi", "m");
    g.write(&f);
    let mut lib = Library::open(&db).unwrap();
    lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    assert_eq!(lib.session(&f).unwrap().unwrap().entry_count, 8);

    // truncated (another program cut it): full re-read
    let text = g.text();
    let keep: usize = text.match_indices('\n').nth(4).unwrap().0 + 1; // header + 4 entries
    std::fs::OpenOptions::new().write(true).open(&f).unwrap().set_len(keep as u64).unwrap();
    let up = lib.sync_file(&f, Some(&root)).unwrap();
    assert_eq!(up.change, Change::Reindexed);
    assert_eq!(up.reason, Some("truncated"));
    assert_eq!(lib.session(&f).unwrap().unwrap().entry_count, 4);
    assert_eq!(hits(&lib, "kiwi").len(), 4);

    // replaced under the same name by a different session (new inode, new header id)
    let tmp = root.join("new.tmp");
    let mut g2 = Gen::new("sess-other", "/r");
    g2.chain(None, 1, "moose", "m");
    g2.write(&tmp);
    std::fs::rename(&tmp, &f).unwrap();
    let up = lib.sync_file(&f, Some(&root)).unwrap();
    assert_eq!(up.change, Change::Reindexed);
    let s = lib.session(&f).unwrap().unwrap();
    assert_eq!(s.session_id.as_deref(), Some("sess-other"));
    assert!(hits(&lib, "kiwi").is_empty());
    assert_eq!(hits(&lib, "moose").len(), 2);

    // deleted
    std::fs::remove_file(&f).unwrap();
    let rep = lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    assert_eq!(rep.removed, 1);
    assert!(lib.session(&f).unwrap().is_none());
    assert!(hits(&lib, "moose").is_empty());
}

#[test]
fn f36_same_size_same_mtime_different_bytes_is_reparsed() {
    let (_d, root, db) = setup();
    let f = root.join("s.jsonl");
    let mut g = Gen::new("sess-m", "/m");
    g.chain(None, 3, "alpha", "m");
    g.write(&f);
    let mtime = std::fs::metadata(&f).unwrap().modified().unwrap();
    let mut lib = Library::open(&db).unwrap();
    lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    // same length, different bytes, mtime put back (edited while the app was closed)
    let text = g.text().replace("alpha", "gamma");
    std::fs::write(&f, text).unwrap();
    std::fs::File::options().write(true).open(&f).unwrap().set_modified(mtime).unwrap();
    drop(lib);
    let mut lib = Library::open(&db).unwrap();
    let rep = lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    assert_eq!(rep.reindexed, 1);
    assert!(hits(&lib, "alpha").is_empty());
    assert_eq!(hits(&lib, "gamma").len(), 6);
    // and an untouched pass reads nothing
    let rep = lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    assert_eq!((rep.unchanged, rep.bytes_read), (1, 0));
}

fn corrupt_and_reopen(db: &Path, damage: impl FnOnce(&Path)) -> Library {
    damage(db);
    Library::open(db).unwrap()
}

#[test]
fn f32_corrupt_index_is_moved_aside_and_rebuilt() {
    let (d, root, db) = setup();
    three_status_session(&root.join("s1.jsonl"), "sess-1", "/p");
    let mut lib = Library::open(&db).unwrap();
    lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    drop(lib);

    type Damage = Box<dyn FnOnce(&Path)>;
    let cases: Vec<(&str, Damage)> = vec![
        (
            "not a database",
            Box::new(|p: &Path| std::fs::write(p, b"this is not sqlite at all, just text".repeat(200)).unwrap()),
        ),
        (
            "truncated",
            Box::new(|p: &Path| {
                let _ = std::fs::remove_file(format!("{}-wal", p.display()));
                std::fs::OpenOptions::new().write(true).open(p).unwrap().set_len(1000).unwrap()
            }),
        ),
        (
            "random pages",
            Box::new(|p: &Path| {
                let _ = std::fs::remove_file(format!("{}-wal", p.display()));
                let mut b = std::fs::read(p).unwrap();
                let mut x: u32 = 12345;
                for byte in b.iter_mut().skip(4096) {
                    x = x.wrapping_mul(1664525).wrapping_add(1013904223);
                    *byte = (x >> 24) as u8;
                }
                std::fs::write(p, b).unwrap();
            }),
        ),
    ];
    for (what, damage) in cases {
        // checkpoint so that the main file holds the data before we damage it
        {
            let mut lib = Library::open(&db).unwrap();
            lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
            lib.take_notices();
            let c = rusqlite::Connection::open(&db).unwrap();
            c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)").unwrap();
        }
        let mut lib = corrupt_and_reopen(&db, damage);
        let n = lib.take_notices();
        assert_eq!(n.len(), 1, "{what}: one notice expected, got {n:?}");
        let Notice::IndexReplaced { moved_to, .. } = &n[0];
        assert!(moved_to.exists(), "{what}: the damaged file is kept aside");
        assert!(moved_to.to_string_lossy().contains(".corrupt-"));
        assert!(n[0].to_string().contains("no session data was lost"));
        lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
        assert_eq!(hits(&lib, "zanzibar"), vec![("00000001".into(), "compacted")], "{what}");
    }
    // the session file was never touched
    assert!(std::fs::read_to_string(root.join("s1.jsonl")).unwrap().contains("zanzibar"));
    drop(d);
}

#[test]
fn deleted_index_is_rebuilt() {
    let (_d, root, db) = setup();
    three_status_session(&root.join("s1.jsonl"), "sess-1", "/p");
    let mut lib = Library::open(&db).unwrap();
    lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    let before = hits(&lib, "quokka");
    drop(lib);
    for ext in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{ext}", db.display()));
    }
    let mut lib = Library::open(&db).unwrap();
    assert!(lib.notices().is_empty());
    assert!(hits(&lib, "quokka").is_empty());
    lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    assert_eq!(hits(&lib, "quokka"), before);
}

#[test]
fn f34_index_from_a_newer_version_is_never_written() {
    let (_d, root, db) = setup();
    three_status_session(&root.join("s1.jsonl"), "sess-1", "/p");
    {
        std::fs::create_dir_all(db.parent().unwrap()).unwrap();
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute_batch("CREATE TABLE future(x); INSERT INTO future VALUES (42); PRAGMA user_version = 99;").unwrap();
    }
    let mut lib = Library::open(&db).unwrap();
    let n = lib.take_notices();
    assert_eq!(n.len(), 1);
    assert!(n[0].to_string().contains("newer Arbor"), "{}", n[0]);
    let Notice::IndexReplaced { moved_to, .. } = &n[0];
    // the newer file is intact (not downgraded, not written)
    let c = rusqlite::Connection::open(moved_to).unwrap();
    let v: i64 = c.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    let x: i64 = c.query_row("SELECT x FROM future", [], |r| r.get(0)).unwrap();
    assert_eq!((v, x), (99, 42));
    lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    assert_eq!(hits(&lib, "quokka").len(), 1);
}

#[test]
fn f33_locked_index_waits_then_says_busy() {
    let (_d, root, db) = setup();
    three_status_session(&root.join("s1.jsonl"), "sess-1", "/p");
    let mut lib =
        Library::open_with(&db, OpenOptions { busy_timeout: Duration::from_millis(300), quick_check: true }).unwrap();
    // another "instance" holds a write transaction
    let other = rusqlite::Connection::open(&db).unwrap();
    other.execute_batch("BEGIN IMMEDIATE; INSERT INTO meta(key, value) VALUES ('x', 'y');").unwrap();
    let t = Instant::now();
    let err = lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap_err();
    let waited = t.elapsed();
    assert!(matches!(err, LibError::Busy(_)), "{err:?}");
    assert!(err.to_string().contains("try again"));
    assert!(waited >= Duration::from_millis(250), "waited {waited:?}");
    // reads still work while the other writer holds the lock
    assert!(lib.projects().is_ok());
    other.execute_batch("COMMIT").unwrap();
    lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    assert_eq!(hits(&lib, "quokka").len(), 1);
}

#[test]
fn f31_copies_with_the_same_session_id_are_flagged() {
    let (_d, root, db) = setup();
    let a = three_status_session(&root.join("s1.jsonl"), "sess-1", "/p");
    std::fs::copy(&a, root.join("s1 (conflicted copy).jsonl")).unwrap();
    three_status_session(&root.join("s2.jsonl"), "sess-2", "/p");
    let mut lib = Library::open(&db).unwrap();
    lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    let all = lib.sessions(&SessionFilter::default()).unwrap();
    assert_eq!(all.len(), 3);
    for s in all {
        assert_eq!(s.duplicate_id, s.session_id.as_deref() == Some("sess-1"), "{:?}", s.path);
    }
}

#[test]
fn invalid_and_odd_files_do_not_stop_the_pass() {
    let (_d, root, db) = setup();
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("empty.jsonl"), b"").unwrap();
    std::fs::write(root.join("noheader.jsonl"), b"{\"type\":\"message\",\"id\":\"a\",\"parentId\":null}\n").unwrap();
    std::fs::create_dir_all(root.join("dir.jsonl")).unwrap();
    let mut g = Gen::new("sess-ok", "/ok");
    let p = g.chain(None, 1, "fine", "m");
    g.write(&root.join("ok.jsonl"));
    // garbage lines in the middle are counted, later lines still indexed
    let mut text = g.text();
    text.push_str("{not json\n[1,2]\n");
    let mut g2 = Gen::new("x", "/ok");
    g2.user(p.as_deref(), "after the garbage comes the ibis");
    text.push_str(&line(g2.lines.last().unwrap()));
    std::fs::write(root.join("ok.jsonl"), text).unwrap();
    let mut lib = Library::open(&db).unwrap();
    let rep = lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    assert_eq!(rep.files, 3);
    assert!(rep.errors.is_empty());
    let s = lib.session(&root.join("ok.jsonl")).unwrap().unwrap();
    assert_eq!(s.bad_lines, 2);
    assert_eq!(hits(&lib, "ibis").len(), 1);
    let inv = lib.session(&root.join("noheader.jsonl")).unwrap().unwrap();
    assert!(!inv.valid);
    assert_eq!(lib.sessions(&SessionFilter::default()).unwrap().len(), 1);
    // an empty file that Pi then writes (lazy first write) becomes a valid session
    let mut g3 = Gen::new("sess-late", "/ok");
    g3.chain(None, 1, "late", "m");
    append_from_other_process(&root.join("empty.jsonl"), &g3.text());
    lib.sync_file(&root.join("empty.jsonl"), Some(&root)).unwrap();
    assert!(lib.session(&root.join("empty.jsonl")).unwrap().unwrap().valid);
    assert_eq!(lib.sessions(&SessionFilter::default()).unwrap().len(), 2);
    // a rejected file stays rejected when lines are appended (Pi rejects it whole)
    append_from_other_process(&root.join("noheader.jsonl"), &g3.text());
    lib.sync_file(&root.join("noheader.jsonl"), Some(&root)).unwrap();
    assert!(!lib.session(&root.join("noheader.jsonl")).unwrap().unwrap().valid);
}

#[test]
fn projects_sessions_filters_and_search_scopes() {
    let (_d, root, db) = setup();
    for (i, cwd, model) in [(1, "/proj/a", "gpt"), (2, "/proj/a", "claude"), (3, "/proj/b", "gpt")] {
        let mut g = Gen::new(&format!("sess-{i}"), cwd);
        let mut p = None;
        for _ in 0..i {
            p = g.chain(p, 1, "shared", model);
        }
        g.name(p.as_deref().unwrap(), &format!("  session number {i} "));
        g.write(&root.join(format!("s{i}.jsonl")));
    }
    let mut lib = Library::open(&db).unwrap();
    lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    let pr = lib.projects().unwrap();
    assert_eq!(pr.len(), 2);
    assert_eq!(pr.iter().find(|p| p.cwd == "/proj/a").unwrap().session_count, 2);
    let a = lib.sessions(&SessionFilter { project: Some("/proj/a".into()), ..Default::default() }).unwrap();
    assert_eq!(a.len(), 2);
    let by_msgs = lib.sessions(&SessionFilter { sort: SessionSort::Messages, ..Default::default() }).unwrap();
    assert_eq!(by_msgs.iter().map(|s| s.message_count).collect::<Vec<_>>(), vec![6, 4, 2]);
    assert_eq!(by_msgs[0].name.as_deref(), Some("session number 3"));
    let gpt = lib.sessions(&SessionFilter { model: Some("gpt".into()), ..Default::default() }).unwrap();
    assert_eq!(gpt.len(), 2);
    let newest = by_msgs[0].modified_ms.unwrap();
    let recent = lib.sessions(&SessionFilter { modified_since_ms: Some(newest), ..Default::default() }).unwrap();
    assert!(recent.iter().all(|s| s.modified_ms.unwrap() >= newest) && !recent.is_empty());
    let mut q = SearchQuery::new("shared tokenizer");
    assert_eq!(lib.search(&q).unwrap().len(), 6);
    q.project = Some("/proj/b".into());
    assert_eq!(lib.search(&q).unwrap().len(), 3);
    q.project = None;
    q.session_path = Some(root.join("s2.jsonl"));
    let h = lib.search(&q).unwrap();
    assert_eq!(h.len(), 2);
    let snippet = h[0].snippet.as_deref().unwrap();
    assert!(snippet.contains("«tokenizer»"), "{snippet}");
    assert!(matches!(lib.search(&SearchQuery::new("  ")), Err(LibError::Invalid(_))));
    // FTS syntax in user text is plain text, not an error
    assert!(lib.search(&SearchQuery::new("NEAR( OR * -")).is_ok());
}

#[test]
fn five_hundred_sessions() {
    let (_d, root, db) = setup();
    let t = Instant::now();
    for i in 0..500 {
        let mut g = Gen::new(&format!("sess-{i:04}"), &format!("/proj/{}", i % 7));
        g.chain(None, 5 + i % 10, &format!("topic{}", i % 13), if i % 2 == 0 { "m-even" } else { "m-odd" });
        g.write(&root.join(format!("--proj-{}--", i % 7)).join(format!("s{i:04}.jsonl")));
    }
    let gen = t.elapsed();
    let t = Instant::now();
    let mut lib = Library::open(&db).unwrap();
    let mut last = 0;
    let rep = lib.sync_roots(std::slice::from_ref(&root), &mut |p| last = p.done).unwrap();
    let first = t.elapsed();
    assert_eq!((rep.files, rep.new, last), (500, 500, 500));
    assert_eq!(lib.projects().unwrap().len(), 7);
    assert_eq!(lib.sessions(&SessionFilter::default()).unwrap().len(), 500);
    let mut q = SearchQuery::new("topic7");
    q.limit = 10_000;
    let n7 = (0..500).filter(|i| i % 13 == 7).map(|i| 2 * (5 + i % 10)).sum::<usize>();
    assert_eq!(lib.search(&q).unwrap().len(), n7);
    let t = Instant::now();
    let rep = lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    let second = t.elapsed();
    assert_eq!((rep.unchanged, rep.bytes_read), (500, 0));
    eprintln!("500 sessions: generate {gen:?}, first index {first:?}, up-to-date pass {second:?}");
    assert!(first < Duration::from_secs(15));
}

/// The next event of `rx` that `pred` accepts, skipping the others; panics after 15 s.
fn wait(
    rx: &std::sync::mpsc::Receiver<library::LibraryEvent>,
    pred: &dyn Fn(&library::LibraryEvent) -> bool,
) -> library::LibraryEvent {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let ev = rx.recv_timeout(left).expect("no event within 15 s");
        if pred(&ev) {
            return ev;
        }
    }
}

#[test]
fn watcher_follows_appends_written_by_another_process() {
    use library::watch::WatchOptions;
    use library::LibraryEvent;
    let (_d, root, db) = setup();
    let f = root.join("--w--").join("live.jsonl");
    let mut g = Gen::new("sess-live", "/w");
    let last = g.chain(None, 2, "live", "m").unwrap();
    g.write(&f);
    let (w, rx) = library::Watcher::start(&db, vec![root.clone()], WatchOptions::default()).unwrap();
    let ev = wait(&rx, &|e| matches!(e, LibraryEvent::Indexing { .. }));
    assert!(matches!(ev, LibraryEvent::Indexing { done: 0, total: 1, full_text: false }), "{ev:?}");
    // phase 2 reports its own progress before the pass ends
    let ev = wait(&rx, &|e| matches!(e, LibraryEvent::Indexing { full_text: true, .. } | LibraryEvent::Synced { .. }));
    assert!(matches!(ev, LibraryEvent::Indexing { done: 0, total: 1, full_text: true }), "{ev:?}");
    let ev = wait(&rx, &|e| matches!(e, LibraryEvent::Indexing { full_text: true, .. } | LibraryEvent::Synced { .. }));
    assert!(matches!(ev, LibraryEvent::Indexing { done: 1, total: 1, full_text: true }), "{ev:?}");
    let ev = wait(&rx, &|e| matches!(e, LibraryEvent::Synced { .. }));
    let LibraryEvent::Synced { report } = ev else { unreachable!() };
    assert_eq!(report.new, 1);
    let second = w.subscribe();

    // a second process appends two entries, in two writes, while the watcher runs
    let l1 = line(
        &serde_json::json!({"type":"message","id":"eeeeeee1","parentId":last,"timestamp":"2025-03-01T11:00:00.000Z",
        "message":{"role":"user","content":"live follow of the axolotl","timestamp":1740826800000u64}}),
    );
    let l2 = line(
        &serde_json::json!({"type":"label","id":"eeeeeee2","parentId":"eeeeeee1","timestamp":"2025-03-01T11:00:01.000Z",
        "targetId":"eeeeeee1","label":"bookmark"}),
    );
    append_from_other_process(&f, &l1);
    let mut got: Vec<String> = Vec::new();
    while got.is_empty() {
        if let LibraryEvent::SessionChanged { path, new_entries, change, session_id } =
            wait(&rx, &|e| matches!(e, LibraryEvent::SessionChanged { .. }))
        {
            assert_eq!(path, f);
            assert_eq!(change, Change::Appended);
            assert_eq!(session_id.as_deref(), Some("sess-live"));
            got.extend(new_entries.into_iter().map(|e| e.entry_id));
        }
    }
    append_from_other_process(&f, &l2);
    while got.len() < 2 {
        if let LibraryEvent::SessionChanged { new_entries, .. } =
            wait(&rx, &|e| matches!(e, LibraryEvent::SessionChanged { .. }))
        {
            got.extend(new_entries.into_iter().map(|e| e.entry_id));
        }
    }
    assert_eq!(got, vec!["eeeeeee1".to_string(), "eeeeeee2".to_string()]);
    // the other subscriber saw the same
    let ev = wait(&second, &|e| matches!(e, LibraryEvent::SessionChanged { .. }));
    assert!(matches!(ev, LibraryEvent::SessionChanged { .. }));
    // and the index answers from another connection (the app's)
    let lib = Library::open(&db).unwrap();
    assert_eq!(hits(&lib, "axolotl"), vec![("eeeeeee1".into(), "in_context")]);

    // a new session file appears; then it is deleted
    let f2 = root.join("--w--").join("new.jsonl");
    let mut g2 = Gen::new("sess-new", "/w");
    g2.chain(None, 1, "fresh", "m");
    append_from_other_process(&f2, &g2.text());
    let ev = wait(&rx, &|e| matches!(e, LibraryEvent::SessionChanged { path, .. } if *path == f2));
    let LibraryEvent::SessionChanged { new_entries, .. } = ev else { unreachable!() };
    assert!(!new_entries.is_empty());
    std::fs::remove_file(&f2).unwrap();
    wait(&rx, &|e| matches!(e, LibraryEvent::SessionRemoved { path } if *path == f2));
    w.stop();
}

#[test]
fn watcher_follows_a_root_that_appears_after_start() {
    // Pi has not run on this machine yet: its sessions folder does not exist when Arbor starts.
    use library::watch::WatchOptions;
    use library::LibraryEvent;
    let (_d, base, db) = setup();
    let root = base.join("later").join("sessions");
    // the periodic rescan is far away: only the root retry can find the new folder
    let opts = WatchOptions { rescan_every: Duration::from_secs(3600), ..WatchOptions::default() };
    let (w, rx) = library::Watcher::start(&db, vec![root.clone()], opts).unwrap();
    let ev = wait(&rx, &|e| matches!(e, LibraryEvent::Synced { .. } | LibraryEvent::Error { .. }));
    let LibraryEvent::Synced { report } = ev else { panic!("a missing root is not an error: {ev:?}") };
    assert_eq!(report.files, 0);

    // Pi runs for the first time: the folder and a session appear
    let f = root.join("--w--").join("first.jsonl");
    let mut g = Gen::new("sess-later", "/w");
    let last = g.chain(None, 2, "the okapi arrives", "m").unwrap();
    g.write(&f);
    // (the retry's pass finds it, or, when the folder was seen before the file was written, the
    // OS watcher it just set up reports the new file)
    let ev = wait(&rx, &|e| matches!(e, LibraryEvent::Synced { .. } | LibraryEvent::SessionChanged { .. }));
    match ev {
        LibraryEvent::Synced { report } => assert_eq!((report.files, report.new), (1, 1), "{report:?}"),
        LibraryEvent::SessionChanged { path, change, .. } => assert_eq!((path, change), (f.clone(), Change::New)),
        _ => unreachable!(),
    }
    let lib = Library::open(&db).unwrap();
    assert_eq!(lib.sessions(&SessionFilter::default()).unwrap().len(), 1);

    // and the folder is now followed live: an append shows up as a change of that file
    let l = line(
        &serde_json::json!({"type":"message","id":"ffffff01","parentId":last,"timestamp":"2025-03-01T11:00:00.000Z",
        "message":{"role":"user","content":"the okapi stays","timestamp":1740826800000u64}}),
    );
    append_from_other_process(&f, &l);
    let ev = wait(&rx, &|e| matches!(e, LibraryEvent::SessionChanged { .. }));
    let LibraryEvent::SessionChanged { path, change, new_entries, .. } = ev else { unreachable!() };
    assert_eq!((path, change), (f.clone(), Change::Appended));
    assert_eq!(new_entries.iter().map(|e| e.entry_id.as_str()).collect::<Vec<_>>(), vec!["ffffff01"]);
    w.stop();
}

#[test]
fn f16_a_huge_line_is_an_entry_as_pi_loads_it_with_its_text_capped() {
    // The engine's rule (Pi's): a valid JSON line is an entry whatever its size. The index keeps
    // at most 8 KB of its text, and the lines after it still count.
    let (_d, root, db) = setup();
    let f = root.join("big.jsonl");
    let mut g = Gen::new("sess-big", "/b");
    let last = g.chain(None, 1, "small", "m").unwrap();
    g.write(&f);
    let blob = "A".repeat(40 << 20);
    let big = format!("{{\"type\":\"message\",\"id\":\"b1000000\",\"parentId\":\"{last}\",\"timestamp\":\"2025-03-01T12:00:00.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"{blob}\"}}}}\n");
    append_from_other_process(&f, &big);
    let after = line(
        &serde_json::json!({"type":"message","id":"b2000000","parentId":last,"timestamp":"2025-03-01T12:00:01.000Z",
        "message":{"role":"user","content":"the line after the blob mentions a pelican","timestamp":1740830401000u64}}),
    );
    append_from_other_process(&f, &after);
    let mut lib = Library::open(&db).unwrap();
    lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    let s = lib.session(&f).unwrap().unwrap();
    assert_eq!((s.bad_lines, s.pending_bytes, s.entry_count), (0, 0, 4));
    assert_eq!(hits(&lib, "pelican"), vec![("b2000000".into(), "in_context")]);
    let statuses = lib.entry_statuses(&f).unwrap();
    assert!(statuses.contains(&("b1000000".to_string(), library::EntryStatus::Abandoned)), "{statuses:?}");
    let longest = lib.indexed_texts().unwrap().iter().map(|t| t.1.as_ref().unwrap().len()).max().unwrap();
    assert!(longest <= 8192, "{longest}");
}

#[test]
fn f02_a_complete_last_line_without_newline_is_an_entry_and_a_later_append_rereads() {
    let (_d, root, db) = setup();
    let f = root.join("s.jsonl");
    let mut g = Gen::new("sess-u", "/u");
    let last = g.chain(None, 1, "u", "m").unwrap();
    g.write(&f);
    let l1 = line(
        &serde_json::json!({"type":"message","id":"c0000001","parentId":last,"timestamp":"2025-03-01T12:00:00.000Z",
        "message":{"role":"user","content":"an unterminated line about the gecko","timestamp":1740830400000u64}}),
    );
    append_from_other_process(&f, l1.trim_end_matches('\n'));
    let mut lib = Library::open(&db).unwrap();
    lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    // as the engine loads it: an entry, not pending
    assert_eq!(hits(&lib, "gecko"), vec![("c0000001".into(), "in_context")]);
    let s = lib.session(&f).unwrap().unwrap();
    assert_eq!((s.pending_bytes, s.entry_count), (0, 3));
    // a writer that adds the newline and then another entry: the file is re-read, and agrees
    // with the engine
    let l2 = line(
        &serde_json::json!({"type":"message","id":"c0000002","parentId":"c0000001","timestamp":"2025-03-01T12:00:01.000Z",
        "message":{"role":"user","content":"and then the iguana","timestamp":1740830401000u64}}),
    );
    append_from_other_process(&f, &format!("\n{l2}"));
    let up = lib.sync_file(&f, Some(&root)).unwrap();
    assert_eq!(up.change, Change::Reindexed);
    assert_eq!(hits(&lib, "iguana"), vec![("c0000002".into(), "in_context")]);
    let engine = session_engine::Session::open(&f).unwrap();
    assert_eq!(lib.session(&f).unwrap().unwrap().entry_count, engine.len() as i64);
    // a torn (unparseable) tail is still pending
    let torn = "{\"type\":\"message\",\"id\":\"c00";
    append_from_other_process(&f, torn);
    lib.sync_file(&f, Some(&root)).unwrap();
    let s = lib.session(&f).unwrap().unwrap();
    assert_eq!((s.pending_bytes, s.bad_lines, s.entry_count), (torn.len() as i64, 0, 4));
}

#[test]
fn version_1_files_are_migrated_by_the_engine() {
    let (_d, root, db) = setup();
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../session-engine/tests/fixtures/conformance/load-v1-legacy.jsonl");
    let f = root.join("old.jsonl");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::copy(&src, &f).unwrap();
    let mut lib = Library::open(&db).unwrap();
    lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    let s = lib.session(&f).unwrap().unwrap();
    assert!(s.valid);
    assert_eq!(s.compaction_count, 1);
    assert_eq!(s.model.as_deref(), Some("anthropic/claude-sonnet-4-5"));
    // firstKeptEntryIndex 8 became the id of that entry: what came before is compacted
    let status_of = |q: &str| lib.search(&SearchQuery::new(q)).unwrap().iter().map(|h| h.status).collect::<Vec<_>>();
    assert_eq!(status_of("\"Frame worker render retry\""), vec!["compacted"]);
    assert_eq!(status_of("\"Layout replace widget worker\""), vec!["in_context"]);
    assert_eq!(status_of("\"Buffer payload budget timeout\""), vec!["in_context"]);
    // ids are stable between passes (the index and a reload agree)
    let ids1: Vec<String> = lib.entry_statuses(&f).unwrap().into_iter().map(|x| x.0).collect();
    drop(lib);
    std::fs::remove_file(&db).unwrap();
    let mut lib = Library::open(&db).unwrap();
    lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    let ids2: Vec<String> = lib.entry_statuses(&f).unwrap().into_iter().map(|x| x.0).collect();
    assert_eq!(ids1, ids2);
    assert!(!ids1.is_empty());
}

#[test]
fn catalog_first_then_search_brings_the_full_text_up_to_date() {
    let (_d, root, db) = setup();
    three_status_session(&root.join("s1.jsonl"), "sess-1", "/p");
    let mut lib = Library::open(&db).unwrap();
    let rep = lib
        .sync_roots_with(
            std::slice::from_ref(&root),
            library::SyncOptions { full_text: false, threads: 2 },
            &mut |_| {},
        )
        .unwrap();
    assert_eq!(rep.new, 1);
    assert_eq!(rep.fulltext_ms, 0.0);
    // the picker facts are there already
    let s = lib.session(&root.join("s1.jsonl")).unwrap().unwrap();
    assert_eq!(s.first_message.as_deref(), Some("the zanzibar decision: we decided to keep sqlite"));
    assert!(lib.entry_statuses(&root.join("s1.jsonl")).unwrap().is_empty());
    assert_eq!(lib.pending_fulltext_count().unwrap(), 1);
    // a search told not to wait (the app, whose watcher does phase 2) answers from what is there
    let mut q = SearchQuery::new("zanzibar");
    q.complete_pending = false;
    assert!(lib.search(&q).unwrap().is_empty());
    assert_eq!(lib.pending_fulltext_count().unwrap(), 1);
    // the first search that may wait completes phase 2
    assert_eq!(hits(&lib, "zanzibar"), vec![("00000001".into(), "compacted")]);
    assert_eq!(lib.pending_fulltext_count().unwrap(), 0);
    assert_eq!(lib.session(&root.join("s1.jsonl")).unwrap().unwrap().tokens_at_leaf, 120);
    let rep = lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    assert_eq!((rep.unchanged, rep.bytes_read), (1, 0));
}

#[test]
fn older_schema_is_migrated_and_refilled_without_a_notice() {
    let (_d, root, db) = setup();
    three_status_session(&root.join("s1.jsonl"), "sess-1", "/p");
    let mut lib = Library::open(&db).unwrap();
    lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    drop(lib);
    rusqlite::Connection::open(&db).unwrap().execute_batch("PRAGMA user_version = 1").unwrap();
    let mut lib = Library::open(&db).unwrap();
    assert!(lib.notices().is_empty());
    let c = rusqlite::Connection::open(&db).unwrap();
    let v: i64 = c.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    assert_eq!(v, library::db::SCHEMA_VERSION);
    lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    assert_eq!(hits(&lib, "quokka").len(), 1);
}

#[test]
fn files_read_and_modified_follow_pis_rule_across_appends() {
    let (_d, root, db) = setup();
    let f = root.join("s.jsonl");
    let mut g = Gen::new("sess-f", "/f");
    let a = g.chain(None, 2, "files", "m").unwrap(); // reads src/00000002.rs and src/00000004.rs
    g.write(&f);
    let mut lib = Library::open(&db).unwrap();
    lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    let s = lib.session(&f).unwrap().unwrap();
    assert_eq!(s.files_read, vec!["src/00000002.rs".to_string(), "src/00000004.rs".to_string()]);
    assert!(s.files_modified.is_empty());
    // an appended edit of a file read earlier moves it to "modified"
    let l = line(
        &serde_json::json!({"type":"message","id":"dddddd01","parentId":a,"timestamp":"2025-03-01T12:00:00.000Z",
        "message":{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"edit","arguments":{"path":"src/00000002.rs","edits":[]}}],
        "provider":"p","model":"m","stopReason":"toolUse","timestamp":1740830400000u64}}),
    );
    append_from_other_process(&f, &l);
    lib.sync_file(&f, Some(&root)).unwrap();
    let s = lib.session(&f).unwrap().unwrap();
    assert_eq!(s.files_read, vec!["src/00000004.rs".to_string()]);
    assert_eq!(s.files_modified, vec!["src/00000002.rs".to_string()]);
}

#[test]
fn two_writers_on_one_index_do_not_duplicate_rows() {
    // the app's watcher and `arbor-cli index` at the same time, on the same files
    let (_d, root, db) = setup();
    for i in 0..40 {
        let mut g = Gen::new(&format!("sess-{i:02}"), "/two");
        g.chain(None, 6, "twin", "m");
        g.write(&root.join(format!("s{i:02}.jsonl")));
    }
    Library::open(&db).unwrap();
    let run = |catalog_only: bool| {
        let (root, db) = (root.clone(), db.clone());
        std::thread::spawn(move || {
            let mut lib = Library::open(&db).unwrap();
            let opts = library::SyncOptions { full_text: !catalog_only, threads: 2 };
            for _ in 0..3 {
                lib.sync_roots_with(std::slice::from_ref(&root), opts, &mut |_| {}).unwrap();
            }
            if catalog_only {
                lib.complete_fulltext().unwrap();
            }
        })
    };
    let (a, b) = (run(false), run(true));
    a.join().unwrap();
    b.join().unwrap();
    let lib = Library::open(&db).unwrap();
    for i in 0..40 {
        let p = root.join(format!("s{i:02}.jsonl"));
        assert_eq!(lib.entry_statuses(&p).unwrap().len(), 12, "{}", p.display());
        assert_eq!(lib.session(&p).unwrap().unwrap().entry_count, 12);
    }
    let mut q = SearchQuery::new("twin");
    q.limit = 10_000;
    assert_eq!(lib.search(&q).unwrap().len(), 40 * 12);
}

/// A search that matches near a planted key, or the key itself, shows a snippet with the key
/// redacted; the index still finds the entry (it is a cache of the session, on this machine).
#[test]
fn search_snippets_hold_no_secret() {
    let (_d, root, db) = setup();
    let (jsonl, placed) = secrets::corpus::planted_session();
    let file = root.join("--p--/planted.jsonl");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, jsonl).unwrap();
    let mut lib = Library::open(&db).unwrap();
    lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    let groq = placed.iter().find(|p| p.planted.kind == "groq-api-key").unwrap();
    for q in ["GROQ_API_KEY", groq.planted.secret.as_str()] {
        let hits = lib.search(&SearchQuery::new(q)).unwrap();
        let hit = hits.iter().find(|h| h.entry_id == groq.entry_id).unwrap_or_else(|| panic!("{q}: {hits:?}"));
        let snippet = hit.snippet.as_deref().unwrap();
        assert!(snippet.contains("[redacted: groq-api-key]"), "{q}: {snippet}");
        assert!(!snippet.contains(&groq.planted.secret[4..16]), "{q}: a part of the key shows: {snippet}");
    }
    // Every planted key, searched by its own text: no snippet shows it.
    for p in &placed {
        let q = format!("\"{}\"", p.planted.secret.lines().next().unwrap().replace('"', ""));
        for h in lib.search(&SearchQuery::new(&q)).unwrap_or_default() {
            let snippet = h.snippet.unwrap();
            assert!(!snippet.contains(&p.planted.secret), "{}: {snippet}", p.planted.kind);
        }
    }
}

/// The session list walks lines instead of validating them, so it can take a malformed line
/// whose brackets and quotes balance for an entry; the full-text pass loads the file as Pi does,
/// finds the lines and corrects what the list shows (the damaged-line count, the counts, the
/// first message, the name, the model and the leaf) to what a whole-file load gives.
#[test]
fn a_broken_line_found_only_by_the_full_text_pass_corrects_the_list() {
    let (_d, root, db) = setup();
    let path = root.join("broken.jsonl");
    let mut g = Gen::new("sess-broken", "/p");
    // valid JSON but for a bad literal at its end
    let broken = |v: &serde_json::Value| {
        let mut l = line(v);
        l.insert_str(l.len() - 2, ",\"n\":tru");
        l
    };
    let mut text = line(&g.lines[0]);
    g.user(None, "the walrus came first");
    text.push_str(&broken(g.lines.last().unwrap()));
    let from = g.lines.len();
    let last = g.chain(None, 2, "ok", "model-a").unwrap();
    for l in &g.lines[from..] {
        text.push_str(&line(l));
    }
    g.name(&last, "a broken name");
    text.push_str(&broken(g.lines.last().unwrap()));
    g.assistant(Some(&last), "the walrus answer", "model-broken");
    text.push_str(&broken(g.lines.last().unwrap()));
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(&path, &text).unwrap();

    let mut lib = Library::open(&db).unwrap();
    let opts = library::SyncOptions { full_text: false, ..Default::default() };
    lib.sync_roots_with(std::slice::from_ref(&root), opts, &mut |_| {}).unwrap();
    let listed = lib.session(&path).unwrap().unwrap();
    assert_eq!((listed.entry_count, listed.bad_lines), (7, 0), "the list took the broken lines for entries");
    lib.complete_fulltext().unwrap();
    let s = lib.session(&path).unwrap().unwrap();

    let whole_db = db.with_file_name("whole.sqlite3");
    let mut whole = Library::open(&whole_db).unwrap();
    whole.sync_file(&path, Some(&root)).unwrap();
    let w = whole.session(&path).unwrap().unwrap();
    assert_eq!((w.bad_lines, w.entry_count, w.message_count), (3, 4, 4));
    assert_eq!(w.first_message.as_deref(), Some("ok question 0 about the parser"));
    assert_eq!(
        (w.name.as_deref(), w.model.as_deref(), w.leaf_id.as_deref()),
        (None, Some("prov/model-a"), Some(&*last))
    );
    let facts = |s: &library::SessionInfo| {
        (
            s.bad_lines,
            s.entry_count,
            s.message_count,
            s.compaction_count,
            s.first_message.clone(),
            s.name.clone(),
            s.model.clone(),
            s.leaf_id.clone(),
            s.modified_ms,
            s.branch_count,
            s.tokens_at_leaf,
        )
    };
    assert_eq!(facts(&s), facts(&w));
    assert!(hits(&lib, "walrus").is_empty(), "a broken line is not indexed");
    assert_eq!(hits(&lib, "tokenizer").len(), 2);
}

/// An appended entry whose id an earlier entry already has changes the tree (the engine's rule
/// for a repeated id), so the statuses are recomputed, not just extended: found at a file's first
/// append (its ids are copied for the check then) and at a later one, and the ids go with the
/// file's rows when it is read again in full.
#[test]
fn an_appended_repeated_id_is_found_at_the_first_append_and_later_ones() {
    let (_d, root, db) = setup();
    let f = root.join("s.jsonl");
    let mut g = Gen::new("sess-r", "/r");
    let leaf = g.chain(None, 3, "kiwi", "m").unwrap();
    g.write(&f);
    let mut lib = Library::open(&db).unwrap();
    lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    let ids = |n: &str| -> i64 {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.query_row("SELECT count(*) FROM entry_ids WHERE entry_id LIKE ?1", [n], |r| r.get(0)).unwrap()
    };
    assert_eq!(ids("%"), 0, "no append yet: no ids copied");
    // the statuses and facts of a fresh index of the same bytes (the whole file loaded by the engine)
    let fresh = |k: usize| {
        let mut other = Library::open(&root.parent().unwrap().join(format!("fresh{k}.sqlite3"))).unwrap();
        other.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
        let s = other.session(&f).unwrap().unwrap();
        (other.entry_statuses(&f).unwrap(), s.tokens_at_leaf, s.branch_count)
    };
    let ours = |lib: &Library| {
        let s = lib.session(&f).unwrap().unwrap();
        (lib.entry_statuses(&f).unwrap(), s.tokens_at_leaf, s.branch_count)
    };
    let msg = |id: &str, parent: &str, text: &str| {
        format!(
            r#"{{"type":"message","id":"{id}","parentId":"{parent}","timestamp":"2025-03-01T10:00:00.000Z","message":{{"role":"user","content":"{text}","timestamp":1740823200000}}}}"#
        ) + "\n"
    };
    // a linear append first: the file's ids are copied, the statuses just extended
    append_from_other_process(&f, &msg("0000aaaa", &leaf, "kiwi one more"));
    lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    assert_eq!(ids("%"), 7);
    assert_eq!(ours(&lib), fresh(1));
    // then the id of the first user message again, at the leaf
    append_from_other_process(&f, &msg("00000001", "0000aaaa", "kiwi repeated id"));
    lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    let (statuses, ..) = ours(&lib);
    assert!(statuses.iter().any(|s| s.1 != library::EntryStatus::InContext), "{statuses:?}");
    assert_eq!(ours(&lib), fresh(2));
    assert_eq!(ids("00000001"), 1, "a repeated id is kept once");
    // rewritten: read again in full, its copied ids dropped with its rows
    std::fs::write(&f, g.text()).unwrap();
    lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    assert_eq!(ids("%"), 0);
    assert_eq!(ours(&lib), fresh(3));
}
