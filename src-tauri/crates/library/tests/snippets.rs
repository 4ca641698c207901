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
