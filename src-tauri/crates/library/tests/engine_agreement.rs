//! The index's statuses and token estimate must agree with the engine (which agrees with Pi)
//! on every conformance and random-oracle session: an entry whose message the engine puts in
//! the context at the file's leaf is `in_context`; one on the path whose message is not sent is
//! `compacted`; one off the path is `abandoned`.
use library::{EntryStatus, IndexOptions, Library, SearchQuery, SessionFilter, SyncOptions};
use session_engine::context::{build_context, context_message, estimate_context};
use session_engine::session::Session;
use std::collections::HashSet;
use std::path::PathBuf;

/// Every entry row with where its full-text body is, in file and entry order: (file, seq,
/// entry id, status, (line offset, line length, body hash), has a full-text row). The index keeps
/// no copy of the text: equal places and hashes are equal texts.
type TextRow = (String, i64, String, i64, (Option<i64>, Option<i64>, Option<i64>), bool);
fn text_rows(db: &std::path::Path) -> Vec<TextRow> {
    let c = rusqlite::Connection::open(db).unwrap();
    let mut q = c
        .prepare(
            "SELECT f.path, row_number() OVER (PARTITION BY e.file_id ORDER BY e.rowid) - 1, e.entry_id, e.status,
                    e.off, e.len, e.bh, EXISTS (SELECT 1 FROM fts t WHERE t.rowid = e.rowid)
             FROM entries e JOIN files f ON f.id = e.file_id ORDER BY f.path, e.rowid",
        )
        .unwrap();
    let rows = q
        .query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, (r.get(4)?, r.get(5)?, r.get(6)?), r.get(7)?))
        })
        .unwrap();
    rows.map(Result::unwrap).collect()
}

fn fixtures() -> Vec<PathBuf> {
    let base = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../session-engine/tests/fixtures");
    let mut out = Vec::new();
    for sub in ["conformance", "random"] {
        if let Ok(rd) = std::fs::read_dir(base.join(sub)) {
            for e in rd.flatten() {
                let p = e.path();
                if p.extension().is_some_and(|x| x == "jsonl") {
                    out.push(p);
                }
            }
        }
    }
    out.sort();
    out
}

#[test]
fn statuses_and_tokens_agree_with_the_engine() {
    let files = fixtures();
    assert!(files.len() > 20, "fixtures not found: {}", files.len());
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("s");
    std::fs::create_dir_all(&root).unwrap();
    for f in &files {
        std::fs::copy(f, root.join(f.file_name().unwrap())).unwrap();
    }
    let mut lib = Library::open(&dir.path().join("i.sqlite3")).unwrap();
    lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    let mut compared = 0;
    let mut skipped = Vec::new();
    let mut failures = Vec::new();
    for f in &files {
        let p = root.join(f.file_name().unwrap());
        let session = Session::open(&p).unwrap();
        if session.migrated() || session.header().is_none() || !session.header_accepted() {
            // legacy files get fresh ids on load (Pi rewrites them); rejected files have no tree
            skipped.push(f.file_name().unwrap().to_string_lossy().to_string());
            continue;
        }
        let ours = lib.entry_statuses(&p).unwrap();
        if ours.len() != session.len() {
            failures.push(format!("{}: {} entries indexed, engine has {}", p.display(), ours.len(), session.len()));
            continue;
        }
        let leaf = session.file_leaf();
        let path: HashSet<usize> = session.path(leaf).into_iter().collect();
        let ctx = build_context(&session, leaf);
        let in_ctx: HashSet<usize> = ctx.messages.iter().map(|m| m.entry).chain(ctx.compaction).collect();
        for (idx, (our_id, our_status)) in ours.iter().enumerate() {
            assert_eq!(our_id, session.id(idx));
            let yields = context_message(&session, idx).is_some()
                || session.kind(idx) == session_engine::session::Kind::Compaction;
            let want = if !path.contains(&idx) {
                EntryStatus::Abandoned
            } else if in_ctx.contains(&idx) {
                EntryStatus::InContext
            } else if yields {
                EntryStatus::Compacted
            } else {
                continue; // on the path, sends nothing (label, model change...): either is fine
            };
            if *our_status != want {
                failures.push(format!(
                    "{}: entry {} ({}) is {} here, engine says {want}",
                    p.display(),
                    session.id(idx),
                    idx,
                    our_status
                ));
            }
        }
        let est = estimate_context(&ctx.agent_messages());
        let info = lib.session(&p).unwrap().unwrap();
        if (info.tokens_at_leaf as f64 - est.tokens).abs() > 0.5 {
            failures.push(format!(
                "{}: tokens at leaf {} here, engine {}",
                p.display(),
                info.tokens_at_leaf,
                est.tokens
            ));
        }
        compared += 1;
    }
    eprintln!("compared {compared} sessions; skipped {skipped:?}");
    assert!(failures.is_empty(), "{} disagreements:\n{}", failures.len(), failures.join("\n"));
    assert!(compared > 20);
    assert!(lib.sessions(&SessionFilter::default()).unwrap().len() >= compared);

    // The streamed path (big files: windows through the engine's chunk scanner, statuses from a
    // skeleton session) gives the same rows as the whole-file loader, file by file.
    // every file streamed, with many window boundaries and lines longer than a window
    let stream_all = IndexOptions { stream_from: 0, window: 1000 };
    let mut streamed = Library::open(&dir.path().join("streamed.sqlite3")).unwrap();
    streamed.set_index_options(stream_all);
    streamed.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    // phase 1 alone, streamed: the catalog of a big file is read without its full text
    let catalog_only = SyncOptions { full_text: false, ..Default::default() };
    let mut cat_streamed = Library::open(&dir.path().join("cat-streamed.sqlite3")).unwrap();
    cat_streamed.set_index_options(stream_all);
    cat_streamed.sync_roots_with(std::slice::from_ref(&root), catalog_only, &mut |_| {}).unwrap();
    let pending_streamed = cat_streamed.pending_fulltext_count().unwrap();
    cat_streamed.complete_fulltext().unwrap(); // phase 2, streamed
    let mut cat_whole = Library::open(&dir.path().join("cat-whole.sqlite3")).unwrap();
    cat_whole.sync_roots_with(std::slice::from_ref(&root), catalog_only, &mut |_| {}).unwrap();
    assert_eq!(
        pending_streamed,
        cat_whole.pending_fulltext_count().unwrap(),
        "streamed catalogs leave the same files to phase 2"
    );
    assert!(pending_streamed > 20, "{pending_streamed}");
    let all = SessionFilter { include_invalid: true, ..Default::default() };
    let listed = cat_whole.sessions(&all).unwrap();
    assert!(listed.len() > 20);
    assert_eq!(listed, {
        let mut lib2 = Library::open(&dir.path().join("cat-streamed-2.sqlite3")).unwrap();
        lib2.set_index_options(stream_all);
        lib2.sync_roots_with(
            std::slice::from_ref(&root),
            SyncOptions { full_text: false, ..Default::default() },
            &mut |_| {},
        )
        .unwrap();
        lib2.sessions(&all).unwrap()
    });
    // phase 1 of files phase 2 loads whole walks their lines instead of validating them: the same
    // list across many windows and in two halves (the corpus's damaged lines do not balance)
    let mut walked = Library::open(&dir.path().join("cat-walked.sqlite3")).unwrap();
    walked.set_index_options(IndexOptions { stream_from: u64::MAX, window: 1000 });
    walked.sync_roots_with(std::slice::from_ref(&root), catalog_only, &mut |_| {}).unwrap();
    assert_eq!(walked.sessions(&all).unwrap(), listed);
    // A pass's phase 1 reads every file through the chunk scanner (one window for most); one
    // file synced alone is loaded whole by the engine: the picker's facts agree, file by file.
    let mut single = Library::open(&dir.path().join("single.sqlite3")).unwrap();
    for f in &files {
        single.sync_file(&root.join(f.file_name().unwrap()), Some(&root)).unwrap();
    }
    let catalog_facts = |s: &library::SessionInfo| {
        (
            s.path.clone(),
            s.session_id.clone(),
            s.cwd.clone(),
            s.name.clone(),
            s.created.clone(),
            s.modified_ms,
            (s.entry_count, s.message_count, s.compaction_count),
            s.model.clone(),
            s.first_message.clone(),
            s.leaf_id.clone(),
            (s.size, s.pending_bytes, s.bad_lines, s.valid),
        )
    };
    let whole_loaded: Vec<_> = single.sessions(&all).unwrap().iter().map(catalog_facts).collect();
    assert_eq!(whole_loaded.len(), listed.len());
    assert_eq!(listed.iter().map(catalog_facts).collect::<Vec<_>>(), whole_loaded);
    // the entry and full-text rows: whole-file phase 2, streamed both phases, streamed phase 2
    // after a streamed catalog; the same rows, bodies and search hits
    let whole_rows = text_rows(&dir.path().join("i.sqlite3"));
    assert!(whole_rows.iter().filter(|r| r.5 && r.4 .2.is_some()).count() > 500, "{}", whole_rows.len());
    for other in ["streamed.sqlite3", "cat-streamed.sqlite3"] {
        let rows = text_rows(&dir.path().join(other));
        assert_eq!(rows.len(), whole_rows.len(), "{other}");
        for (a, b) in whole_rows.iter().zip(&rows) {
            assert_eq!(a, b, "{other}");
        }
    }
    // every full-text row's text is found again in its unchanged file (the index keeps no copy)
    let texts = lib.indexed_texts().unwrap();
    assert_eq!(texts.len(), whole_rows.iter().filter(|r| r.5).count());
    assert!(texts.iter().all(|t| t.1.is_some()), "a text not found again in its file");
    let (mut shown, mut legacy_shown) = (0, 0);
    // common words, then every entry with text of the two legacy files (migrated in memory)
    let legacy = ["load-v1-legacy.jsonl", "load-v2-hookmessage.jsonl"].map(|n| Some(root.join(n)));
    let queries = ["the", "error", "file", "\"summary\""].map(|q| (q, None)).into_iter();
    for (q, within) in queries.chain(legacy.map(|p| ("a* OR b* OR c* OR m* OR r* OR s* OR t*", p))) {
        let query = SearchQuery { session_path: within.clone(), raw: within.is_some(), ..SearchQuery::new(q) };
        let a: Vec<_> = lib.search(&query).unwrap().into_iter().collect();
        // the type, role and timestamp of every hit are the engine's (the last two read again
        // from the entry's line, legacy files' from the engine's load of them)
        for h in &a {
            let s = Session::open(&h.session_path).unwrap();
            let i = s.index_of(&h.entry_id).unwrap_or_else(|| panic!("{q}: {} not in the engine's load", h.entry_id));
            let e = s.entry(i);
            let role = library::analyze::entry_facts(s.kind(i), s.value(i)).role;
            assert!(h.snippet.is_some(), "{q}: {h:?}");
            assert_eq!(
                (h.entry_type.as_str(), h.role.as_deref(), h.timestamp.as_deref()),
                (&*e.type_name, role.as_deref(), Some(&*e.timestamp)),
                "{q}: {}",
                h.session_path.display()
            );
            shown += 1;
            legacy_shown += s.migrated() as usize;
        }
        for other in [&streamed, &cat_streamed] {
            let b: Vec<_> = other.search(&query).unwrap();
            assert_eq!(a, b, "{q}");
        }
    }
    assert!(shown > 200 && legacy_shown > 10, "hits compared: {shown}, in legacy files: {legacy_shown}");
    let mut differ = Vec::new();
    for f in &files {
        let p = root.join(f.file_name().unwrap());
        let a = lib.session(&p).unwrap();
        let b = streamed.session(&p).unwrap();
        let strip = |s: Option<library::SessionInfo>| {
            s.map(|mut s| {
                s.path = PathBuf::new();
                s
            })
        };
        if strip(a) != strip(b) {
            differ.push(format!(
                "{}: session facts differ:\n  whole  {:?}\n  stream {:?}",
                p.display(),
                lib.session(&p).unwrap(),
                streamed.session(&p).unwrap()
            ));
        }
        let (sa, sb) = (lib.entry_statuses(&p).unwrap(), streamed.entry_statuses(&p).unwrap());
        if sa != sb {
            differ.push(format!("{}: statuses differ", p.display()));
        }
    }
    assert!(differ.is_empty(), "{} files differ:\n{}", differ.len(), differ.join("\n"));
}

/// The cost of forgetting the index sums per session is `summary_analysis`'s, compaction by
/// compaction, on every session of the corpus (legacy, cyclic and duplicate-id files included),
/// whole and streamed.
#[test]
fn the_cost_of_forgetting_agrees_with_summary_analysis() {
    let files = fixtures();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("s");
    std::fs::create_dir_all(&root).unwrap();
    for f in &files {
        std::fs::copy(f, root.join(f.file_name().unwrap())).unwrap();
    }
    let mut whole = Library::open(&dir.path().join("w.sqlite3")).unwrap();
    whole.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    let mut streamed = Library::open(&dir.path().join("s.sqlite3")).unwrap();
    streamed.set_index_options(IndexOptions { stream_from: 0, window: 1000 });
    streamed.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    let (mut with_compactions, mut costly, mut failures) = (0, 0, Vec::new());
    for f in &files {
        let p = root.join(f.file_name().unwrap());
        let session = Session::open(&p).unwrap();
        if session.header().is_none() || !session.header_accepted() {
            continue;
        }
        let mut want = (0i64, 0i64);
        for i in 0..session.len() {
            if let Some(x) = summary_analysis::forgetting(&session, i) {
                want = (want.0 + x.cost() as i64, want.1 + 1);
            }
        }
        with_compactions += (want.1 > 0) as usize;
        costly += (want.0 > 0) as usize;
        for (which, lib) in [("whole", &whole), ("streamed", &streamed)] {
            let info = lib.session(&p).unwrap().unwrap();
            if (info.forgetting_cost, info.forgetting_compactions) != (Some(want.0), Some(want.1)) {
                failures.push(format!(
                    "{} ({which}): {:?} over {:?} compactions here, summary-analysis {want:?}",
                    p.display(),
                    info.forgetting_cost,
                    info.forgetting_compactions
                ));
            }
        }
    }
    eprintln!("{with_compactions} sessions with compactions, {costly} with a cost");
    assert!(failures.is_empty(), "{} disagreements:\n{}", failures.len(), failures.join("\n"));
    assert!(with_compactions > 10, "{with_compactions}");
}

/// Appending is the same as reading whole: each session is indexed up to a line boundary, the
/// rest is appended (chunk scanner, fast path or skeleton recompute), and the rows must equal a
/// fresh index of the whole file.
#[test]
fn appends_equal_a_fresh_index() {
    let files = fixtures();
    let dir = tempfile::tempdir().unwrap();
    let (grown, whole) = (dir.path().join("grown"), dir.path().join("whole"));
    std::fs::create_dir_all(&grown).unwrap();
    std::fs::create_dir_all(&whole).unwrap();
    let mut a = Library::open(&dir.path().join("a.sqlite3")).unwrap();
    let mut splits = 0;
    for f in &files {
        let text = std::fs::read(f).unwrap();
        let name = f.file_name().unwrap();
        std::fs::write(whole.join(name), &text).unwrap();
        // cut after the header and after about half of the lines
        let nl: Vec<usize> = text.iter().enumerate().filter(|(_, &b)| b == b'\n').map(|(i, _)| i + 1).collect();
        let cut = nl.get(nl.len() / 2).copied().unwrap_or(text.len()).max(nl.first().copied().unwrap_or(0));
        std::fs::write(grown.join(name), &text[..cut]).unwrap();
        a.sync_roots(std::slice::from_ref(&grown), &mut |_| {}).unwrap();
        let mut w = std::fs::OpenOptions::new().append(true).open(grown.join(name)).unwrap();
        std::io::Write::write_all(&mut w, &text[cut..]).unwrap();
        drop(w);
        if a.sync_file(&grown.join(name), Some(&grown)).unwrap().change == library::Change::Appended {
            splits += 1;
        }
    }
    let mut b = Library::open(&dir.path().join("b.sqlite3")).unwrap();
    b.sync_roots(std::slice::from_ref(&whole), &mut |_| {}).unwrap();
    let mut differ = Vec::new();
    for f in &files {
        let name = f.file_name().unwrap();
        let strip = |s: Option<library::SessionInfo>| {
            s.map(|mut s| {
                s.path = PathBuf::new();
                s
            })
        };
        let (x, y) = (strip(a.session(&grown.join(name)).unwrap()), strip(b.session(&whole.join(name)).unwrap()));
        if x != y {
            differ.push(format!("{}: facts differ\n  appended {x:?}\n  whole    {y:?}", name.to_string_lossy()));
        }
        if a.entry_statuses(&grown.join(name)).unwrap() != b.entry_statuses(&whole.join(name)).unwrap() {
            differ.push(format!("{}: statuses differ", name.to_string_lossy()));
        }
    }
    assert!(splits > 20, "only {splits} sessions took the append path");
    assert!(differ.is_empty(), "{} differ:\n{}", differ.len(), differ.join("\n"));
}
