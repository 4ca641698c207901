//! Search snippets come from the session files (the full-text table keeps no copy of the text):
//! the same snippet as when the index kept the text, as long as the file holds that text at the
//! entry's place; a hit without a snippet, and the file read again, when it does not.
mod support;

use library::{Library, SearchQuery};
use std::path::{Path, PathBuf};
use support::*;

fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("sessions");
    let db = dir.path().join("data").join("index.sqlite3");
    (dir, root, db)
}

/// (entry id, snippet) of a search.
fn snippets(lib: &Library, q: &str, complete_pending: bool) -> Vec<(String, Option<String>)> {
    let mut sq = SearchQuery::new(q);
    sq.complete_pending = complete_pending;
    let mut v: Vec<_> = lib.search(&sq).unwrap().into_iter().map(|h| (h.entry_id, h.snippet)).collect();
    v.sort();
    v
}

fn fts_done(db: &Path, f: &Path) -> i64 {
    let c = rusqlite::Connection::open(db).unwrap();
    c.query_row("SELECT fts_done FROM files WHERE path = ?1", [f.to_string_lossy()], |r| r.get(0)).unwrap()
}

/// What the index gave when its full-text table kept the text: SQLite's `snippet()` on an FTS5
/// table holding the entry's text (the engine's value of the entry, through the same extraction
/// as phase 2), with the index's tokenizer.
fn snippet_kept(session_file: &Path, entry_id: &str, q: &str) -> String {
    let s = session_engine::session::Session::open(session_file).unwrap();
    let i = s.index_of(entry_id).unwrap();
    let body = library::analyze::entry_facts(s.kind(i), s.value(i)).body;
    let c = rusqlite::Connection::open_in_memory().unwrap();
    c.execute_batch("CREATE VIRTUAL TABLE k USING fts5(body, tokenize = 'unicode61 remove_diacritics 2')").unwrap();
    c.execute("INSERT INTO k(rowid, body) VALUES (1, ?1)", [&body]).unwrap();
    c.query_row(
        "SELECT snippet(k, 0, '«', '»', '…', 16) FROM k WHERE k MATCH ?1",
        [library::query::fts_query(q).unwrap()],
        |r| r.get(0),
    )
    .unwrap()
}

/// A long session, so that snippets are cut out of long texts (with `…` at their edges).
fn long_session(path: &Path) -> Gen {
    let mut g = Gen::new("sess-long", "/l");
    let mut parent = None;
    for i in 0..12 {
        let filler = (0..60).map(|k| format!("word{k}")).collect::<Vec<_>>().join(" ");
        let u = g.user(parent.as_deref(), &format!("{filler} the wombat number {i} {filler}"));
        let a = g.assistant(Some(&u), &format!("about the wombat: {filler} we kept sqlite {i}"), "m");
        parent = Some(a);
    }
    g.write(path);
    g
}

#[test]
fn snippets_of_unchanged_files_are_those_the_index_gave_when_it_kept_the_text() {
    let (_d, root, db) = setup();
    let f = root.join("--l--/long.jsonl");
    long_session(&f);
    let f2 = three_status_session(&root.join("--p--/s1.jsonl"), "sess-1", "/p");
    let mut lib = Library::open(&db).unwrap();
    lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    let mut compared = 0;
    for q in ["wombat", "\"kept sqlite\"", "word7 wombat", "zanzibar", "platypus", "question", "sqlite"] {
        let hits = lib.search(&SearchQuery::new(q)).unwrap();
        assert!(!hits.is_empty(), "{q}");
        for h in hits {
            let snippet = h.snippet.unwrap_or_else(|| panic!("{q}: no snippet for {}", h.entry_id));
            assert!(snippet.contains('«'), "{q}: {snippet}");
            let file = if h.session_path == f { &f } else { &f2 };
            assert_eq!(snippet, snippet_kept(file, &h.entry_id, q), "{q}");
            compared += 1;
        }
    }
    assert!(compared > 30, "{compared}");
}

#[test]
fn a_file_appended_to_keeps_its_snippets() {
    let (_d, root, db) = setup();
    let f = root.join("s.jsonl");
    let mut g = Gen::new("sess-a", "/a");
    let leaf = g.chain(None, 3, "heron", "m");
    g.write(&f);
    let mut lib = Library::open(&db).unwrap();
    lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    let before = snippets(&lib, "heron", true);
    assert_eq!(before.len(), 6);
    assert!(before.iter().all(|h| h.1.is_some()));
    // Pi appends (not yet indexed): the earlier lines did not move
    g.user(leaf.as_deref(), "one more heron question");
    append_from_other_process(&f, &line(g.lines.last().unwrap()));
    assert_eq!(snippets(&lib, "heron", false), before, "appended, not indexed: the same snippets");
    assert_eq!(fts_done(&db, &f), 1, "nothing to re-read");
    // indexed: the new entry is found with its snippet, the old ones unchanged
    lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    let after = snippets(&lib, "heron", true);
    assert_eq!(after.len(), 7);
    assert!(after.iter().all(|h| h.1.is_some()), "{after:?}");
    assert!(before.iter().all(|b| after.contains(b)));
}

#[test]
fn a_file_changed_at_an_entry_gives_no_snippet_and_is_read_again() {
    let (_d, root, db) = setup();
    let f = root.join("s.jsonl");
    let mut g = Gen::new("sess-c", "/c");
    g.chain(None, 3, "osprey", "m");
    g.write(&f);
    let mut lib = Library::open(&db).unwrap();
    lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    assert!(snippets(&lib, "osprey", true).iter().all(|h| h.1.is_some()));
    // rewritten in place by another program: same size, the words at the entries changed
    let text = g.text().replace("osprey question 1", "falcon question 1");
    std::fs::write(&f, text).unwrap();
    // a search that must not write (the app's): the hit from the index, no snippet, and the
    // file marked to be read again in full by the next pass
    let hits = snippets(&lib, "osprey", false);
    assert_eq!(hits.len(), 6);
    let changed: Vec<_> = hits.iter().filter(|h| h.1.is_none()).collect();
    assert_eq!(changed.len(), 1, "{hits:?}");
    assert_eq!(fts_done(&db, &f), 2);
    let rep = lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    assert_eq!(rep.reindexed, 1);
    assert_eq!(fts_done(&db, &f), 1);
    let hits = snippets(&lib, "osprey", true);
    assert_eq!(hits.len(), 5);
    assert!(hits.iter().all(|h| h.1.is_some()));
    let falcon = snippets(&lib, "falcon", true);
    assert_eq!(falcon.len(), 1);
    assert!(falcon[0].1.as_deref().unwrap().contains("«falcon»"));

    // changed again; a search that may write reads it again before it returns
    let text = std::fs::read_to_string(&f).unwrap().replace("falcon question 1", "condor question 1");
    std::fs::write(&f, text).unwrap();
    assert_eq!(snippets(&lib, "falcon", true), vec![(falcon[0].0.clone(), None)]);
    assert_eq!(fts_done(&db, &f), 1, "read again already");
    assert!(snippets(&lib, "falcon", true).is_empty());
    assert_eq!(snippets(&lib, "condor", true).len(), 1);
}

#[test]
fn a_deleted_file_gives_hits_without_snippets_then_its_rows_are_dropped() {
    let (_d, root, db) = setup();
    let f = root.join("s.jsonl");
    let mut g = Gen::new("sess-d", "/d");
    g.chain(None, 2, "ibis", "m");
    g.write(&f);
    let keep = root.join("k.jsonl");
    let mut g2 = Gen::new("sess-k", "/d");
    g2.chain(None, 1, "ibis", "m");
    g2.write(&keep);
    let mut lib = Library::open(&db).unwrap();
    lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    assert_eq!(snippets(&lib, "ibis", true).len(), 6);
    std::fs::remove_file(&f).unwrap();
    // what the index knew, without snippets for the deleted file (the other file's stay)
    let hits = lib.search(&SearchQuery::new("ibis")).unwrap();
    assert_eq!(hits.len(), 6);
    for h in &hits {
        assert_eq!(h.snippet.is_none(), h.session_path == f, "{h:?}");
    }
    // that search had the file looked at again: its rows are gone
    assert!(lib.session(&f).unwrap().is_none());
    let hits = snippets(&lib, "ibis", true);
    assert_eq!(hits.len(), 2);
    assert!(hits.iter().all(|h| h.1.is_some()));
}

#[test]
fn the_index_holds_no_copy_of_the_text() {
    let (_d, root, db) = setup();
    let f = root.join("s.jsonl");
    let mut g = Gen::new("sess-n", "/n");
    g.chain(None, 2, "pangolin", "m");
    g.write(&f);
    let mut lib = Library::open(&db).unwrap();
    lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    assert_eq!(snippets(&lib, "pangolin", true).len(), 4);
    drop(lib);
    let bytes = std::fs::read(&db).unwrap();
    let wal = std::fs::read(format!("{}-wal", db.display())).unwrap_or_default();
    for b in [&bytes, &wal] {
        assert!(!b.windows(b"we changed the tokenizer".len()).any(|w| w == b"we changed the tokenizer"));
    }
}

/// (entry id, type, role, timestamp, has a snippet) of a search that does not write.
type Shown = (String, String, Option<String>, Option<String>, bool);
fn shown(lib: &Library, q: &str) -> Vec<Shown> {
    let sq = SearchQuery { complete_pending: false, ..SearchQuery::new(q) };
    let mut v: Vec<_> = lib
        .search(&sq)
        .unwrap()
        .into_iter()
        .map(|h| (h.entry_id, h.entry_type, h.role, h.timestamp, h.snippet.is_some()))
        .collect();
    v.sort();
    v
}

#[test]
fn a_hit_reads_its_role_and_time_from_its_line_and_shows_none_once_the_line_changed() {
    let (_d, root, db) = setup();
    let f = root.join("s.jsonl");
    let mut g = Gen::new("sess-t", "/t");
    let leaf = g.chain(None, 2, "tapir", "m").unwrap();
    g.compaction(&leaf, "00000003", "the tapir summary");
    g.write(&f);
    let mut lib = Library::open(&db).unwrap();
    lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    let ts = |id: &str| g.lines.iter().find(|l| l["id"] == id).unwrap()["timestamp"].as_str().map(str::to_string);
    let some = |s: &str| Some(s.to_string());
    let want: Vec<Shown> = vec![
        ("00000001".into(), "message".into(), some("user"), ts("00000001"), true),
        ("00000002".into(), "message".into(), some("assistant"), ts("00000002"), true),
        ("00000003".into(), "message".into(), some("user"), ts("00000003"), true),
        ("00000004".into(), "message".into(), some("assistant"), ts("00000004"), true),
        ("00000005".into(), "compaction".into(), None, ts("00000005"), true),
    ];
    assert_eq!(shown(&lib, "tapir"), want);
    // another program rewrites one entry's time in place (same size, same text): its hit keeps
    // what the index holds (id, type) and shows neither a role nor a time it cannot vouch for
    let old = ts("00000003").unwrap();
    let new = old.replace("09:00:03", "09:59:03");
    assert_ne!(old, new);
    let text = std::fs::read_to_string(&f).unwrap().replacen(&old, &new, 1);
    std::fs::write(&f, text).unwrap();
    let mut changed = want.clone();
    changed[2] = ("00000003".into(), "message".into(), None, None, false);
    assert_eq!(shown(&lib, "tapir"), changed);
    assert_eq!(fts_done(&db, &f), 2, "marked to be read again");
    // read again: the new time
    lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    let mut again = want.clone();
    again[2].3 = Some(new);
    assert_eq!(shown(&lib, "tapir"), again);
}

#[test]
fn an_index_of_schema_5_is_rebuilt_with_roles_and_times_read_from_the_files() {
    let (_d, root, db) = setup();
    let f = root.join("s.jsonl");
    let mut g = Gen::new("sess-v", "/v");
    g.chain(None, 1, "vicuna", "m");
    g.write(&f);
    let mut lib = Library::open(&db).unwrap();
    lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    drop(lib);
    // schema 5's entry rows: with their sequence, role and time, and a hash of the text alone
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch(
            "ALTER TABLE entries ADD COLUMN seq INTEGER; ALTER TABLE entries ADD COLUMN role TEXT;
             ALTER TABLE entries ADD COLUMN ts TEXT; UPDATE entries SET bh = bh + 1; PRAGMA user_version = 5;",
        )
        .unwrap();
    let mut lib = Library::open(&db).unwrap();
    assert!(lib.notices().is_empty(), "an older index is a cache to refill, not damage");
    assert_eq!(lib.session(&f).unwrap(), None, "its rows are gone");
    let c = rusqlite::Connection::open(&db).unwrap();
    let cols: Vec<String> = c
        .prepare("SELECT name FROM pragma_table_info('entries')")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(!cols.iter().any(|c| ["seq", "role", "ts"].contains(&c.as_str())), "{cols:?}");
    lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    let hits = shown(&lib, "vicuna");
    assert_eq!(hits.len(), 2);
    assert!(hits.iter().all(|h| h.2.is_some() && h.3.is_some() && h.4), "{hits:?}");
}
