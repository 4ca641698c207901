//! The summary workbench's commands without a window, on copies of sessions built for
//! the purpose: the bundled demo (whose last two compactions were written to show a drop alarm
//! and a move), the v1 legacy fixture, and a file another writer appends to meanwhile.

use arbor_app::commands::{graph, navigate, sessions, summary};
use arbor_app::error::{ErrorKind, IpcError};
use arbor_app::view::graph::GraphRowKind;
use arbor_app::view::summary::{FactKind, ItemMarker, SectionRole, SummaryKind, VersionKind};
use session_engine::{build_context, Session};
use std::path::{Path, PathBuf};

/// The demo's compactions (scripts/gen-demo.mjs): C1 splits a turn; C2 carries everything of C1;
/// C3 (written by Arbor with claude-haiku-4-5, the governing one at the demo's leaf) drops C2's
/// decision "Entry API in `allow_at`" and moves "Bound the memory of `KeyedLimiter`" from In
/// Progress to Done.
const C1: &str = "e85c1832";
const C2: &str = "fbd4e3dc";
const C3: &str = "57a13fd6";
const DEMO_LEAF: &str = "7fd26320";
/// C2's Key Decision that C3 lost, as C2 words it.
const LOST: &str = "- **Entry API in `allow_at`**: `buckets.entry(key).or_insert_with(..)` updates the stored bucket; cloning it lost every take";
/// The first user message of the branch abandoned after C2 (a sweeper thread).
const ABANDONED_USER: &str = "f31d1508";

mod support;
use support::{env, Env};

fn open_demo_copy(e: &Env) -> PathBuf {
    let p = e.dir.join("2025-03-01T09-00-00-000Z_demo.jsonl");
    std::fs::write(&p, sessions::DEMO_SESSION).unwrap();
    let opened = sessions::open(&e.state, &p, false).unwrap();
    assert_eq!(opened.leaf_id.as_deref(), Some(DEMO_LEAF));
    p
}

fn ipc<T: std::fmt::Debug>(r: Result<T, arbor_app::error::AppError>) -> IpcError {
    r.unwrap_err().into()
}

/// The context messages after the summary at `leaf`, as JSON text (entry-independent).
fn context_after_summary(session: &Session, leaf: &str) -> (String, Vec<String>) {
    let ctx = build_context(session, session.index_of(leaf));
    let first = pi_json::to_string(&ctx.messages[0].message);
    let rest = ctx.messages[1..].iter().map(|m| pi_json::to_string(&m.message)).collect();
    (first, rest)
}

#[test]
fn view_shows_sections_files_span_author_alarm_and_retention() {
    let e = env();
    open_demo_copy(&e);
    let v = summary::view(&e.state, C3).unwrap();
    assert_eq!(v.kind, SummaryKind::Compaction);
    let names: Vec<&str> = v.sections.iter().map(|s| s.name.as_str()).collect();
    for want in [
        "Goal",
        "Constraints & Preferences",
        "Progress › Done",
        "Progress › In Progress",
        "Key Decisions",
        "Next Steps",
        "Critical Context",
    ] {
        assert!(names.contains(&want), "section {want} in {names:?}");
    }
    let done = v.sections.iter().find(|s| s.name == "Progress › Done").unwrap();
    assert_eq!(done.role, SectionRole::Done);
    assert_eq!(done.items.len(), 12);
    assert!(done.items.iter().all(|i| i.marker == ItemMarker::Checkbox && i.checked == Some(true)));
    let in_progress = v.sections.iter().find(|s| s.name == "Progress › In Progress").unwrap();
    assert_eq!(in_progress.items[0].checked, Some(false));
    assert_eq!(v.modified_files, vec!["src/args.rs", "src/bucket.rs", "src/keyed.rs", "src/lib.rs", "src/main.rs"]);
    assert!(v.read_files.is_empty(), "every file read was modified too: {:?}", v.read_files);
    assert_eq!(v.tokens_before, Some(8719.0));
    assert!(v.first_kept_found);
    assert_eq!(v.author, "model");
    assert_eq!(v.author_detail, "anthropic claude-haiku-4-5");
    assert!(v.span.count > 0 && v.span.exact, "{:?}", v.span);
    assert!(v.editable, "C3 governs the context at the demo's leaf: {:?}", v.edit_refusal);
    assert_eq!(v.governing_entry_id.as_deref(), Some(C3));
    assert_eq!(v.history.len(), 1);
    assert_eq!(v.history[0].kind, VersionKind::Original);
    // The drop alarm: C2's decision is gone; the memory item moved to Done.
    assert_eq!(v.check.previous_entry_id.as_deref(), Some(C2));
    assert_eq!(v.check.dropped.len(), 1, "{:?}", v.check.dropped);
    assert!(v.check.dropped[0].text.contains("Entry API in `allow_at`"), "{:?}", v.check.dropped);
    assert!(
        v.check
            .moved
            .iter()
            .any(|m| m.text.contains("Bound the memory") && m.from.contains("In Progress") && m.to.contains("Done")),
        "{:?}",
        v.check.moved
    );
    // Retention: some facts of the span are mentioned, not all (e.g. the clippy command is not).
    let r = &v.check.retention;
    assert!(r.total > 0 && r.mentioned > 0 && r.mentioned < r.total, "{}/{}", r.mentioned, r.total);
    assert!(
        r.facts.iter().any(|f| f.kind == FactKind::Path && f.text == "src/keyed.rs" && f.mentioned),
        "{:?}",
        r.facts
    );
    assert!(r.facts.iter().all(|f| !f.source_entry_id.is_empty()));

    // C2 carries its predecessor: no alarm; it is not the governing compaction, so it cannot be edited.
    let v4 = summary::view(&e.state, C2).unwrap();
    assert!(v4.check.dropped.is_empty(), "{:?}", v4.check.dropped);
    assert!(!v4.editable);
    assert!(v4.edit_refusal.as_deref().is_some_and(|r| !r.is_empty()));
    // Pi records no author: the session's model just before the compaction is named, inferred.
    assert_eq!(v4.author, "pi");
    assert_eq!(v4.author_detail, "anthropic/claude-sonnet-4-5");
    // A split-turn compaction: its turn-prefix sections are flagged, the others are not.
    let split = summary::view(&e.state, C1).unwrap();
    assert!(split.turn_prefix.is_some());
    let prefix: Vec<&str> = split.sections.iter().filter(|s| s.turn_prefix).map(|s| s.name.as_str()).collect();
    assert!(prefix.len() >= 3 && prefix.iter().all(|n| n.starts_with("Turn Context")), "{prefix:?}");
    assert!(split.sections.iter().any(|s| !s.turn_prefix && s.name == "Key Decisions"));
    assert!(v.sections.iter().all(|s| !s.turn_prefix));
    // A non-summary entry is refused with a sentence.
    assert_eq!(ipc(summary::view(&e.state, DEMO_LEAF)).kind, ErrorKind::Invalid);
}

/// Selecting a summary and continuing from it asks for its view twice, at two leaves: the check
/// (most of the view's cost) is made once and kept, with the graph marker's facts, while what
/// depends on the leaf is made anew.
#[test]
fn a_summary_view_keeps_its_check_for_the_next_view_and_the_graph_marker() {
    let e = env();
    open_demo_copy(&e);
    let facts =
        |id: &str| e.state.with_open(|o| Ok(o.markers.cached(&o.session, o.session.index_of(id).unwrap()))).unwrap();
    assert_eq!(facts(C1), None, "nothing checked before the first view");
    let at_leaf = summary::view(&e.state, C1).unwrap();
    assert!(!at_leaf.editable, "C1 does not govern the demo's leaf");
    let f = facts(C1).expect("the view's check gave the graph marker its facts");
    assert_eq!(
        (f.dropped, f.mentioned, f.total),
        (at_leaf.check.dropped.len() as u32, at_leaf.check.retention.mentioned, at_leaf.check.retention.total)
    );
    navigate::continue_from(&e.state, C1).unwrap();
    let at_c1 = summary::view(&e.state, C1).unwrap();
    assert!(at_c1.editable, "at its own leaf C1 governs the context: {:?}", at_c1.edit_refusal);
    assert_eq!(at_c1.governing_entry_id.as_deref(), Some(C1));
    assert_eq!(serde_json::to_value(&at_c1.check).unwrap(), serde_json::to_value(&at_leaf.check).unwrap());
    // Views of other summaries in between push it out only after a few.
    for id in [C2, C3, C1, C2, C3] {
        let v = summary::view(&e.state, id).unwrap();
        assert_eq!(v.check.entry_id, id);
    }
}

#[test]
fn graph_rows_carry_the_drop_count_and_retention_score() {
    let e = env();
    let path = open_demo_copy(&e);
    let session = Session::open(&path).unwrap();
    let total = sessions::describe(&e.state).unwrap().total_rows;
    // A window (main thread) adds cached marker facts only; the graph asks summary_markers for the rest.
    let first = graph::window(&e.state, 0, total).unwrap();
    let missing: Vec<String> = first
        .rows
        .iter()
        .filter(|r| (r.kind == GraphRowKind::Compaction || r.kind == GraphRowKind::BranchSummary) && r.facts.is_none())
        .map(|r| r.entry_id.clone())
        .collect();
    assert!(missing.len() >= 3, "no facts are computed by a window: {} missing", missing.len());
    summary::markers(&e.state, &missing, std::time::Duration::from_secs(60)).unwrap();
    let w = graph::window(&e.state, 0, total).unwrap();
    assert!(
        w.rows
            .iter()
            .filter(|r| r.kind == GraphRowKind::Compaction || r.kind == GraphRowKind::BranchSummary)
            .all(|r| r.facts.is_some()),
        "all cached now"
    );
    let row = |id: &str| w.rows.iter().find(|r| r.entry_id == id).unwrap_or_else(|| panic!("row of {id}"));
    let r5 = row(C3);
    assert_eq!(r5.dropped, Some(1));
    assert!(r5.facts.unwrap() > 0 && r5.retained.unwrap() < r5.facts.unwrap());
    assert_eq!(row(C2).dropped, Some(0));
    // The score on the marker is the one the inspect view shows.
    let v = summary::view(&e.state, C3).unwrap();
    assert_eq!((r5.retained, r5.facts), (Some(v.check.retention.mentioned), Some(v.check.retention.total)));
    // The late fill (for markers a window had no time for) gives the same facts; non-summaries are skipped.
    let late = summary::markers(
        &e.state,
        &[C3.to_string(), DEMO_LEAF.to_string(), "nope".to_string()],
        std::time::Duration::from_secs(5),
    )
    .unwrap();
    assert_eq!(late.len(), 1);
    assert_eq!(
        (Some(late[0].dropped), Some(late[0].retained), Some(late[0].facts)),
        (r5.dropped, r5.retained, r5.facts)
    );
    // Rows of other kinds carry none.
    assert!(w.rows.iter().filter(|r| r.kind == GraphRowKind::User).all(|r| r.dropped.is_none() && r.facts.is_none()));
    assert!(session.len() > 100);
}

/// Marker facts and the waterfall's numbers are read on a snapshot of the session, without its
/// lock: a write while a snapshot is alive goes to a copy (the snapshot keeps what it saw), and a
/// write with no snapshot alive changes the session in place (no copy of the file's bytes).
#[test]
fn snapshots_keep_what_they_saw_and_writes_copy_only_while_one_is_alive() {
    let e = env();
    open_demo_copy(&e);
    let total = sessions::describe(&e.state).unwrap().total_rows;
    let ids: Vec<String> = graph::window(&e.state, 0, total)
        .unwrap()
        .rows
        .iter()
        .filter(|r| r.kind == GraphRowKind::Compaction || r.kind == GraphRowKind::BranchSummary)
        .map(|r| r.entry_id.clone())
        .collect();
    assert!(ids.len() >= 3);
    let snap = e.state.with_open(|o| Ok(o.session.snapshot())).unwrap();
    let before = snap.len();
    let leaf = e.state.with_open(|o| Ok(o.session.id(o.leaf.unwrap()).to_string())).unwrap();
    navigate::set_label(&e.state, &leaf, Some("while a snapshot is read"), 1_740_000_000_000, None).unwrap();
    let (held, same) =
        e.state.with_open(|o| Ok((o.session.len(), std::sync::Arc::ptr_eq(&o.session.snapshot(), &snap)))).unwrap();
    assert_eq!((snap.len(), held), (before, before + 1), "the snapshot keeps its entries; the session has the label");
    assert!(!same, "the write went to a copy");
    // Facts from the old snapshot are the facts of the session now (an append changes no span).
    let cache = arbor_app::state::markers::MarkerCache::default();
    let old = summary::markers_in(&snap, &cache, &ids, std::time::Duration::from_secs(60));
    let now = summary::markers(&e.state, &ids, std::time::Duration::from_secs(60)).unwrap();
    assert_eq!(old.len(), ids.len());
    assert_eq!(format!("{old:?}"), format!("{now:?}"));
    // No snapshot alive: the next write changes the session in place.
    drop(snap);
    let at = e.state.with_open(|o| Ok(std::sync::Arc::as_ptr(&o.session.snapshot()))).unwrap();
    navigate::set_label(&e.state, &leaf, None, 1_740_000_001_000, None).unwrap();
    let after = e.state.with_open(|o| Ok(o.session.snapshot())).unwrap();
    assert_eq!(after.len(), before + 2);
    assert_eq!(std::sync::Arc::as_ptr(&after), at, "written in place, not copied");
}

/// The graph's "N summarized" badge and the workbench's span are one number: the engine's span
/// (the graph used to count the previous compaction entry too: one more than the span).
#[test]
fn graph_span_counts_are_the_engines_span() {
    let e = env();
    let path = open_demo_copy(&e);
    let session = Session::open(&path).unwrap();
    let total = sessions::describe(&e.state).unwrap().total_rows;
    let w = graph::window(&e.state, 0, total).unwrap();
    let compactions: Vec<_> = w.rows.iter().filter(|r| r.kind == GraphRowKind::Compaction).collect();
    assert_eq!(compactions.len(), session.compactions().count(), "every compaction has a row");
    for r in &compactions {
        let v = summary::view(&e.state, &r.entry_id).unwrap();
        let engine = summary_analysis::span(&session, session.index_of(&r.entry_id).unwrap());
        assert_eq!(
            (r.span, v.span.count),
            (engine.entry_ids.len() as u32, engine.entry_ids.len() as u32),
            "compaction {}",
            r.entry_id
        );
    }
    assert_eq!(compactions.iter().find(|r| r.entry_id == C3).unwrap().span, 23);
    // A compaction off the active path has its span too (the graph used to show none): continue
    // on the abandoned sweeper branch, which leaves C3 off the path.
    navigate::continue_from(&e.state, ABANDONED_USER).unwrap();
    let w = graph::window(&e.state, 0, sessions::describe(&e.state).unwrap().total_rows).unwrap();
    let r3 = w.rows.iter().find(|r| r.entry_id == C3).expect("C3 has a row");
    assert!(!r3.marks.iter().any(|m| m == "active"), "C3 is off the active path now: {:?}", r3.marks);
    assert_eq!(r3.span, 23, "and keeps its span");
}

/// The Diff button's default: an edit's original, a compaction's previous compaction, a branch
/// summary's previous summary on its path; none (button disabled, the note says why) otherwise.
#[test]
fn diff_defaults_to_the_previous_summary_and_says_when_there_is_none() {
    let e = env();
    let path = open_demo_copy(&e);
    let session = Session::open(&path).unwrap();
    let v5 = summary::view(&e.state, C3).unwrap();
    assert_eq!(v5.diff_base_id.as_deref(), Some(C2));
    assert!(
        v5.diff_base_note.contains("compaction before it") && v5.diff_base_note.contains(C2),
        "{}",
        v5.diff_base_note
    );
    // The first compaction on the demo's main path: nothing before it.
    let vf = summary::view(&e.state, C1).unwrap();
    assert_eq!((vf.check.previous_entry_id.as_deref(), vf.diff_base_id.as_deref()), (None, None));
    assert!(
        vf.diff_base_note.starts_with("Nothing to compare with: this is the first compaction"),
        "{}",
        vf.diff_base_note
    );
    // Every branch summary: never itself; the nearest summary above it on its path, else none.
    let mut with_base = 0;
    let mut without = 0;
    for i in (0..session.len()).filter(|&i| session.kind(i) == session_engine::Kind::BranchSummary) {
        let id = session.id(i);
        let v = summary::view(&e.state, id).unwrap();
        let want = session.path(session.parent_of(i)).into_iter().rev().find(|&j| {
            matches!(session.kind(j), session_engine::Kind::Compaction | session_engine::Kind::BranchSummary)
        });
        assert_eq!(v.diff_base_id.as_deref(), want.map(|j| session.id(j)), "branch summary {id}");
        assert_ne!(v.diff_base_id.as_deref(), Some(id), "a branch summary is never compared with itself");
        match want {
            Some(j) => {
                with_base += 1;
                assert!(
                    v.diff_base_note.contains(session.id(j))
                        && v.diff_base_note.contains("summary before it on its path"),
                    "{}",
                    v.diff_base_note
                );
                // The default diff runs.
                summary::diff(&e.state, session.id(j), id).unwrap();
            }
            None => {
                without += 1;
                assert!(
                    v.diff_base_note.starts_with("Nothing to compare with")
                        && v.diff_base_note.contains("branch summary"),
                    "{}",
                    v.diff_base_note
                );
            }
        }
    }
    assert!(with_base >= 1 && without >= 1, "the demo has both kinds ({with_base} with, {without} without)");
    // An edit: its original.
    let new_text = v5.text.replacen("\n\n## Next Steps", &format!("\n{LOST}\n\n## Next Steps"), 1);
    let w = summary::save_edit(&e.state, C3, &new_text, 1_740_822_000_000, Some("ed170001")).unwrap();
    assert_eq!(w.view.diff_base_id.as_deref(), Some(C3));
    assert!(w.view.diff_base_note.contains("original"), "{}", w.view.diff_base_note);
}

/// Error facts are the lines that carry the error: the demo's failed clippy run gives its
/// `error:` lines, not the `Checking` banner above them.
#[test]
fn demo_error_facts_are_the_error_lines() {
    let e = env();
    open_demo_copy(&e);
    let v = summary::view(&e.state, C3).unwrap();
    let errors: Vec<(&str, &str)> = v
        .check
        .retention
        .facts
        .iter()
        .filter(|f| f.kind == FactKind::Error)
        .map(|f| (f.text.as_str(), f.source_entry_id.as_str()))
        .collect();
    assert!(
        errors.contains(&(
            "error: struct `KeyedLimiter` has a public `len` method, but no `is_empty` method",
            "8b4704ad"
        )),
        "{errors:?}"
    );
    assert!(errors.iter().all(|(t, _)| !t.starts_with("Checking") && t.chars().count() <= 201), "{errors:?}");
}

#[test]
fn edit_appends_one_line_and_the_context_keeps_the_same_messages() {
    let e = env();
    let path = open_demo_copy(&e);
    let before = std::fs::read(&path).unwrap();
    let s0 = Session::open(&path).unwrap();
    let (_, messages_before) = context_after_summary(&s0, DEMO_LEAF);
    let v = summary::view(&e.state, C3).unwrap();
    let new_text = v
        .text
        .replace("a new `ttl` argument\n\n## Next Steps", &format!("a new `ttl` argument\n{LOST}\n\n## Next Steps"));
    assert_ne!(new_text, v.text);
    let w = summary::save_edit(&e.state, C3, &new_text, 1_740_822_000_000, Some("ed170001")).unwrap();
    assert_eq!(w.entry_id, "ed170001");
    assert_eq!(w.edited_from, C3);
    assert_eq!(w.session.leaf_id.as_deref(), Some("ed170001"));
    assert_eq!(w.session.file_leaf_id.as_deref(), Some("ed170001"));
    assert!(!w.session.leaf_moved);

    let after = std::fs::read(&path).unwrap();
    assert_eq!(&after[..before.len()], &before[..], "earlier bytes unchanged");
    let added = &after[before.len()..];
    assert_eq!(added.iter().filter(|&&b| b == b'\n').count(), 1, "exactly one line appended");
    let line: serde_json::Value = serde_json::from_slice(added).unwrap();
    assert_eq!(line["type"], "compaction");
    assert_eq!(line["parentId"], DEMO_LEAF);
    assert_eq!(line["summary"], new_text.as_str());
    assert_eq!(line["firstKeptEntryId"], s0.value(s0.index_of(C3).unwrap()).str_field("firstKeptEntryId").unwrap());
    assert_eq!(line["details"]["editedFrom"], C3);
    assert_eq!(line["details"]["editKind"], "edit");

    // The context at the new leaf: the edited summary, then the same messages as before.
    let s1 = Session::open(&path).unwrap();
    let (first, messages_after) = context_after_summary(&s1, "ed170001");
    assert!(first.contains("cloning it lost every take"), "{first}");
    assert_eq!(messages_after, messages_before);
    // The app's session was extended, not replaced by something else: same entries as a fresh open.
    assert_eq!(sessions::describe(&e.state).unwrap().entry_count as usize, s1.len());
    // The new view: edited by the user, editable, no drop alarm any more, history original → edit.
    assert_eq!(w.view.author, "userEdit");
    // An edit is judged as its original: the original's span and predecessor.
    assert_eq!((w.view.span.count, &w.view.span.first_id), (v.span.count, &v.span.first_id));
    assert_eq!(w.view.check.previous_entry_id.as_deref(), Some(C2));
    assert_eq!(w.view.check.retention.total, v.check.retention.total);
    assert!(w.view.editable);
    assert!(w.view.check.dropped.is_empty(), "{:?}", w.view.check.dropped);
    let kinds: Vec<VersionKind> = w.view.history.iter().map(|h| h.kind).collect();
    assert_eq!(kinds, [VersionKind::Original, VersionKind::Edit]);
    // The diff original → edit shows the restored decision as added.
    let d = summary::diff(&e.state, C3, "ed170001").unwrap();
    let dec = d.sections.iter().find(|s| s.title == "Key Decisions").unwrap();
    assert_eq!(dec.added.len(), 1, "{dec:?}");
    assert!(dec.removed.is_empty());
}

#[test]
fn revert_appends_the_original_text() {
    let e = env();
    let path = open_demo_copy(&e);
    let original = summary::view(&e.state, C3).unwrap().text;
    summary::save_edit(&e.state, C3, "## Goal\nOnly this.\n", 1_740_822_000_000, Some("ed170001")).unwrap();
    let len_after_edit = std::fs::metadata(&path).unwrap().len();
    let w = summary::revert(&e.state, "ed170001", 1_740_822_060_000, Some("ed170002")).unwrap();
    assert_eq!(w.entry_id, "ed170002");
    let bytes = std::fs::read(&path).unwrap();
    let tail = &bytes[len_after_edit as usize..];
    assert_eq!(tail.iter().filter(|&&b| b == b'\n').count(), 1);
    let line: serde_json::Value = serde_json::from_slice(tail).unwrap();
    assert_eq!(line["summary"], original.as_str());
    assert_eq!(line["details"]["editKind"], "revert");
    assert_eq!(line["parentId"], "ed170001");
    let kinds: Vec<VersionKind> = w.view.history.iter().map(|h| h.kind).collect();
    assert_eq!(kinds, [VersionKind::Original, VersionKind::Edit, VersionKind::Revert]);
    assert_eq!(w.view.history[0].entry_id, C3);
    // The reverted context: the original summary (with a fresh tokensBefore), then the same messages.
    let session = Session::open(&path).unwrap();
    let (first, rest) = context_after_summary(&session, "ed170002");
    let (_, rest_before) = context_after_summary(&session, DEMO_LEAF);
    assert!(first.contains(&pi_json::to_string(&pi_json::Value::from(original.as_str()))), "{first}");
    assert_eq!(rest, rest_before);
}

#[test]
fn a_compaction_that_does_not_govern_is_refused_and_nothing_is_written() {
    let e = env();
    let path = open_demo_copy(&e);
    let before = std::fs::read(&path).unwrap();
    let err = ipc(summary::save_edit(&e.state, C2, "## Goal\nx\n", 0, None));
    assert_eq!(err.kind, ErrorKind::Refused);
    assert!(!err.message.is_empty());
    assert_eq!(ipc(summary::revert(&e.state, C2, 0, None)).kind, ErrorKind::Refused);
    // A compaction that was never edited has nothing to revert.
    assert_eq!(ipc(summary::revert(&e.state, C3, 0, None)).kind, ErrorKind::Refused);
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[test]
fn a_v1_file_is_read_only_and_refuses_edits() {
    let e = env();
    let path = e.dir.join("legacy.jsonl");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("src-tauri/crates/session-engine/tests/fixtures/conformance/load-v1-legacy.jsonl"),
        &path,
    )
    .unwrap();
    let before = std::fs::read(&path).unwrap();
    let opened = sessions::open(&e.state, &path, false).unwrap();
    assert!(opened.read_only.is_some());
    let session = Session::open(&path).unwrap();
    let comp = session.compactions().next().expect("the v1 fixture has a compaction");
    let id = session.id(comp).to_string();
    let v = summary::view(&e.state, &id).unwrap();
    assert_eq!(v.sections.len(), 1, "a summary with no headings is one section");
    let err = ipc(summary::save_edit(&e.state, &id, "edited", 0, None));
    assert_eq!(err.kind, ErrorKind::Refused);
    assert_eq!(std::fs::read(&path).unwrap(), before, "nothing was written");
}

#[test]
fn an_edit_after_another_writer_appended_is_refused_and_nothing_is_written() {
    let e = env();
    let path = open_demo_copy(&e);
    // Pi appends a message while Arbor has the session open.
    let pi_line = format!(
        "{{\"type\":\"message\",\"id\":\"0f0f0f0f\",\"parentId\":\"{DEMO_LEAF}\",\"timestamp\":\"2025-03-01T10:00:00.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"hi\",\"timestamp\":1740823200000}}}}\n"
    );
    {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(pi_line.as_bytes()).unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    let err = ipc(summary::save_edit(&e.state, C3, "## Goal\nx\n", 0, None));
    assert_eq!(err.kind, ErrorKind::Refused, "{err:?}");
    assert!(err.message.contains("nothing was written") || err.message.contains("changed"), "{}", err.message);
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[test]
fn get_summary_view_is_fast_on_the_demo() {
    let e = env();
    open_demo_copy(&e);
    let t = std::time::Instant::now();
    let v = summary::view(&e.state, C3).unwrap();
    let ms = t.elapsed().as_secs_f64() * 1000.0;
    eprintln!("get_summary_view on the demo's C3: {ms:.2} ms (inside: {:.2} ms)", v.compute_ms);
    assert!(ms < 500.0, "{ms} ms");
}

#[test]
fn resummarize_offline_compares_and_writes_nothing() {
    let e = env();
    let path = open_demo_copy(&e);
    let before = std::fs::read(&path).unwrap();
    let v = summary::view(&e.state, C3).unwrap();
    let r = tauri::async_runtime::block_on(summary::resummarize(
        &e.state,
        &e.st,
        C3,
        Some("offline"),
        None,
        Some("keep every decision"),
        None,
    ))
    .unwrap();
    assert!(r.offline);
    assert_eq!(r.summarizer, "offline summarizer");
    assert!(r.text.contains("## Goal"), "{}", r.text);
    // The same file-list appendix as the existing summary, and the requested focus.
    assert!(
        r.text.ends_with(
            "<modified-files>\nsrc/args.rs\nsrc/bucket.rs\nsrc/keyed.rs\nsrc/lib.rs\nsrc/main.rs\n</modified-files>"
        ),
        "{}",
        r.text
    );
    assert!(r.text.contains("keep every decision"), "{}", r.text);
    // Both scores are over the same facts (the existing one equals the view's).
    assert_eq!(
        (r.retention_existing.mentioned, r.retention_existing.total),
        (v.check.retention.mentioned, v.check.retention.total)
    );
    assert_eq!(r.retention_new.total, r.retention_existing.total);
    // The probe score of both texts, by kind, over the same span: the same probes asked of each,
    // and the existing one's is the quality panel's.
    let panel = arbor_app::commands::quality::quality(&e.state, C3).unwrap();
    assert_eq!(r.quality_existing, panel.score);
    assert!(r.quality_existing.score.is_some() && r.quality_new.score.is_some());
    let probes = |s: &arbor_app::view::quality::ScoreView| {
        let b = s.by_kind;
        [b.recall.probes, b.artifact.probes, b.decision.probes, b.continuation.probes]
    };
    assert_eq!(probes(&r.quality_new), probes(&r.quality_existing));
    assert!(probes(&r.quality_new).iter().sum::<u32>() > 0);
    assert_eq!(r.diff.from.as_deref(), Some(C3));
    assert!(!r.sections.is_empty());
    assert_eq!(std::fs::read(&path).unwrap(), before, "re-summarize writes nothing");
    // A non-summary is refused.
    let err: IpcError = tauri::async_runtime::block_on(summary::resummarize(
        &e.state,
        &e.st,
        DEMO_LEAF,
        Some("offline"),
        None,
        None,
        None,
    ))
    .unwrap_err()
    .into();
    assert_eq!(err.kind, ErrorKind::Invalid);
}

/// One request to a loopback OpenAI-compatible server that streams `answer`; returns the base URL
/// and a handle that yields the request body.
fn one_shot_sse(answer: &'static str) -> (String, std::thread::JoinHandle<String>) {
    use std::io::{BufRead, BufReader, Read, Write};
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/v1", l.local_addr().unwrap());
    let h = std::thread::spawn(move || {
        let (mut sock, _) = l.accept().unwrap();
        let mut r = BufReader::new(sock.try_clone().unwrap());
        let mut len = 0usize;
        loop {
            let mut line = String::new();
            r.read_line(&mut line).unwrap();
            if line == "\r\n" || line.is_empty() {
                break;
            }
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                len = v.trim().parse().unwrap();
            }
        }
        let mut body = vec![0u8; len];
        r.read_exact(&mut body).unwrap();
        let chunk = |o: serde_json::Value| format!("data: {o}\n\n");
        let mut out = String::from("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n");
        out += &chunk(
            serde_json::json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": answer}, "finish_reason": null}]}),
        );
        out += &chunk(serde_json::json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}));
        out += &chunk(serde_json::json!({"choices": [], "usage": {"prompt_tokens": 900, "completion_tokens": 20}}));
        out += "data: [DONE]\n\n";
        sock.write_all(out.as_bytes()).unwrap();
        String::from_utf8(body).unwrap()
    });
    (base, h)
}

#[test]
fn resummarize_through_a_model_sends_the_span_and_the_previous_summary() {
    use arbor_app::commands::keys;
    use arbor_app::view::keys::{CatalogModel, ModelChoice};
    let e = env();
    let path = open_demo_copy(&e);
    let (base, server) = one_shot_sse("## Goal\nPer-client limits for throttle.\n\n## Key Decisions\n- **Entry API in `allow_at`**: kept by the model.");
    keys::add_model(
        &e.st,
        &CatalogModel {
            provider: "openai".into(),
            id: "fake-small".into(),
            context_window: 32000,
            max_output: 2000,
            user_added: true,
        },
    )
    .unwrap();
    keys::save_choice(
        &e.st,
        &ModelChoice { provider: "openai".into(), model: Some("fake-small".into()), base_url: Some(base) },
    )
    .unwrap();
    let before = std::fs::read(&path).unwrap();
    let r = tauri::async_runtime::block_on(summary::resummarize(
        &e.state,
        &e.st,
        C3,
        None,
        None,
        Some("keep the decisions"),
        None,
    ))
    .unwrap();
    let body: serde_json::Value = serde_json::from_str(&server.join().unwrap()).unwrap();
    let prompt = body["messages"].as_array().unwrap().iter().map(|m| m["content"].to_string()).collect::<String>();
    assert!(
        prompt.contains("Clippy wants an `is_empty` next to the public `len`.")
            && prompt.contains("has a public `len` method, but no `is_empty` method"),
        "the span's conversation is sent"
    );
    assert!(
        !prompt.contains("Before I hand this back to the ingest team"),
        "the kept messages are not part of the span"
    );
    assert!(
        prompt.contains("<previous-summary>") && prompt.contains("Entry API in `allow_at`"),
        "C2's summary is the previous summary"
    );
    assert!(prompt.contains("keep the decisions"));
    assert!(!r.offline);
    assert_eq!(r.summarizer, "openai fake-small");
    assert!(r.text.starts_with("## Goal\nPer-client limits for throttle."), "{}", r.text);
    // The alternative carries the decision C3 dropped: the diff shows it added to Key Decisions.
    let dec = r.diff.sections.iter().find(|s| s.title == "Key Decisions").unwrap();
    assert!(dec.added.iter().any(|a| a.contains("Entry API")), "{dec:?}");
    assert_eq!(std::fs::read(&path).unwrap(), before, "re-summarize writes nothing");
    // "Use this" is an ordinary edit.
    let w = summary::save_edit(&e.state, C3, &r.text, 1_740_822_000_000, Some("ed170003")).unwrap();
    assert_eq!(w.view.text, r.text);
}
