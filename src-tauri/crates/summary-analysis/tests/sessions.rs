//! The summary analysis on sessions built for the purpose: spans, the drop alarm and the
//! retention probe, edit/revert entries, and edits judged as their origin. The analysis of
//! texts alone (parser, diff) is in `texts.rs`.

mod common;

use common::*;
use pi_json::Value;
use session_engine::context::{build_context, estimate_context};
use session_engine::entries;
use session_engine::Session;
use summary_analysis::*;

// ---- sessions: span, check, retention -----------------------------------------------------

/// A session with known facts (see the test below for the answers).
fn facts_session() -> (B, [String; 4]) {
    let mut b = B::new();
    let u1 = b.user("Please refactor the parser. You must keep the public API stable. Never touch the session files directly! Thanks.");
    b.calls(&[("read", r#"{"path":"src/parse.rs"}"#), ("bash", r#"{"command":"cargo test -p engine"}"#)]);
    b.result("read", "fn parse() {}", false);
    b.result(
        "bash",
        "running 3 tests\nerror[E0425]: cannot find value `x` in this scope\ntest result: FAILED. 2 passed; 1 failed",
        false,
    );
    b.calls(&[
        ("edit", r#"{"path":"src/lib/render.ts","oldText":"a","newText":"b"}"#),
        ("write", r#"{"path":"docs/notes.md","content":"x"}"#),
    ]);
    b.result("edit", "Could not find the text to replace in src/lib/render.ts", true);
    b.bash("npm run build", "ok");
    let kept = b.user("continue");
    b.assistant("Done with the refactor.");
    let c1 = b.compaction(
        "## Goal\nRefactor `src/parse.rs`; keep the public API stable.\n\n## Constraints & Preferences\n- Keep the public API stable\n\n## Progress\n### Done\n- [x] Ran `cargo test`: E0425 cannot find value x\n- [x] Edited render.ts\n\n## Key Decisions\n- **Stable API**: callers depend on it\n\n## Critical Context\n- The parser lives in src/parse.rs\n",
        &kept,
        None,
    );
    (b, [u1, kept, c1, String::new()])
}

#[test]
fn span_of_a_compaction_is_pi_boundary_to_first_kept() {
    let (mut b, [u1, kept, c1, _]) = facts_session();
    let session = b.session();
    let sp = span(&session, idx(&session, &c1));
    assert!(sp.exact && sp.note.is_none());
    assert_eq!(sp.first_id.as_deref(), Some(u1.as_str()));
    assert_eq!(sp.entry_ids.len(), 7);
    assert_eq!(sp.last_id.as_deref(), Some("e007"));
    let (msgs, prev) = span_messages(&session, idx(&session, &c1));
    assert_eq!(msgs.len(), 7);
    assert!(prev.is_none());
    // A second compaction starts at the first one's firstKeptEntryId, without compaction entries.
    let a = b.user("now the docs");
    let kept2 = b.assistant("ok");
    b.user("more");
    let c2 = b.compaction("## Goal\nDocs.\n", &kept2, None);
    let session = b.session();
    let sp = span(&session, idx(&session, &c2));
    assert_eq!(sp.entry_ids, [kept.as_str(), "e009", a.as_str()]);
    let (_, prev) = span_messages(&session, idx(&session, &c2));
    assert!(prev.unwrap().starts_with("## Goal\nRefactor"));
    assert_eq!(previous_compaction(&session, idx(&session, &c2)), Some(idx(&session, &c1)));
    assert_eq!(previous_compaction(&session, idx(&session, &c1)), None);
}

#[test]
fn span_with_a_missing_or_foreign_first_kept_says_so() {
    let mut b = B::new();
    let r = b.user("root");
    let side = b.user("side branch");
    b.at(&r);
    b.user("main");
    let c = b.compaction("## Goal\nx", &side, None);
    let c2 = b.compaction("## Goal\ny", "nope", None);
    let session = b.session();
    for (id, needle) in [(&c, "not on its path"), (&c2, "not on its path")] {
        let sp = span(&session, idx(&session, id));
        assert!(!sp.exact);
        assert!(sp.note.as_deref().unwrap().contains(needle), "{:?}", sp.note);
    }
    assert_eq!(span(&session, idx(&session, &c)).entry_ids, [r.as_str(), "e003"]);
    // A compaction without the key at all.
    let mut b2 = B::new();
    b2.user("a");
    b2.lines.push(r#"{"type":"compaction","id":"cx","parentId":"e001","timestamp":"2026-01-01T00:00:09.000Z","summary":"s","tokensBefore":1}"#.into());
    let s2 = b2.session();
    let sp = span(&s2, idx(&s2, "cx"));
    assert!(!sp.exact && sp.note.unwrap().contains("no firstKeptEntryId"));
    assert_eq!(sp.entry_ids, ["e001"]);
    // Not a summary: an empty span with a note, no panic.
    let sp = span(&s2, 0);
    assert!(sp.entry_ids.is_empty() && sp.note.is_some());
    assert!(span(&s2, 99).entry_ids.is_empty());
}

#[test]
fn branch_summary_span_is_the_branch_that_was_left() {
    let mut b = B::new();
    b.user("start");
    let fork = b.assistant("fork point");
    let x = b.user("try the risky approach");
    let y = b.assistant("tried it, it failed");
    b.at(&fork);
    let bs =
        b.branch_summary("The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n## Goal\nRisky approach");
    let session = b.session();
    let sp = span(&session, idx(&session, &bs));
    assert!(!sp.exact);
    assert_eq!(sp.entry_ids, [x.as_str(), y.as_str()]);
    assert!(sp.note.unwrap().contains(&y));
    let (msgs, prev) = span_messages(&session, idx(&session, &bs));
    assert_eq!(msgs.len(), 2);
    assert!(prev.is_none());
    let p = parse(summary_analysis::summary_text(&session, idx(&session, &bs)));
    assert_eq!(
        p.sections[0].text,
        "The user explored a different conversation branch before returning here.\nSummary of that exploration:"
    );
}

#[test]
fn retention_probe_finds_the_facts_of_the_span_with_known_answers() {
    let (b, [u1, _, c1, _]) = facts_session();
    let session = b.session();
    let r = retention(&session, idx(&session, &c1), summary_analysis::summary_text(&session, idx(&session, &c1)));
    let got: Vec<(FactKind, &str, bool)> = r.facts.iter().map(|f| (f.kind, f.text.as_str(), f.mentioned)).collect();
    use FactKind::*;
    assert_eq!(
        got,
        [
            (Constraint, "You must keep the public API stable.", true),
            (Constraint, "Never touch the session files directly!", false),
            (Path, "src/parse.rs", true),
            (Command, "cargo test -p engine", true),
            (Error, "error[E0425]: cannot find value `x` in this scope", true),
            (Error, "test result: FAILED. 2 passed; 1 failed", false),
            (Path, "src/lib/render.ts", true),
            (Path, "docs/notes.md", false),
            (Error, "Could not find the text to replace in src/lib/render.ts", false),
            (Command, "npm run build", false),
        ]
    );
    assert_eq!((r.mentioned, r.total), (5, 10));
    assert_eq!(r.facts[0].source_entry_id, u1);
    assert_eq!(r.facts[2].source_entry_id, "e002");
    assert_eq!(r.facts[9].source_entry_id, "e007");
    // Probing another text: a summary that says nothing mentions nothing.
    assert_eq!(retention(&session, idx(&session, &c1), "Nothing here.").mentioned, 0);
    // Facts are deduplicated: the same path read twice is one fact.
    let mut b2 = B::new();
    b2.calls(&[("read", r#"{"path":"a.rs"}"#)]);
    b2.calls(&[("read", r#"{"path":"a.rs"}"#)]);
    let k = b2.user("go");
    let c = b2.compaction("a.rs", &k, None);
    let s2 = b2.session();
    let r = retention(&s2, idx(&s2, &c), "see a.rs");
    assert_eq!((r.total, r.mentioned), (1, 1));
}

#[test]
fn check_reports_drops_and_moves_against_the_previous_compaction() {
    let mut b = B::new();
    b.user("must use Rust only");
    let k1 = b.user("next");
    let c1 = b.compaction(PREV, &k1, None);
    b.user("go on");
    let k2 = b.user("and on");
    let c2 = b.compaction(NEXT, &k2, None);
    let session = b.session();
    let ch = check(&session, idx(&session, &c2));
    assert_eq!(ch.entry_id, c2);
    assert_eq!(ch.previous_entry_id.as_deref(), Some(c1.as_str()));
    assert_eq!(ch.dropped.len(), 2);
    assert_eq!(ch.dropped[0].text, "Use Rust only");
    assert_eq!(ch.moved.len(), 2);
    // The span's facts include the previous compaction's kept user message.
    assert!(ch.retention.facts.iter().all(|f| f.kind != FactKind::Constraint || f.source_entry_id != "e001"));
    let first = check(&session, idx(&session, &c1));
    assert!(first.previous_entry_id.is_none() && first.dropped.is_empty());
    assert_eq!(first.retention.facts[0].text, "must use Rust only");
    assert!(first.retention.facts[0].mentioned, "PREV says 'Use Rust only'");
    let json = serde_json::to_value(&ch).unwrap();
    assert!(json.get("previousEntryId").is_some() && json["retention"]["facts"].is_array());
}

// ---- edit and revert ----------------------------------------------------------------------

fn keys(v: &Value) -> Vec<String> {
    v.as_object().unwrap().iter().map(|(k, _)| k.to_string()).collect()
}

#[test]
fn edit_then_revert_append_compactions_that_pi_reads_normally() {
    let (mut b, [_, kept, c1, _]) = facts_session();
    b.user("after the compaction");
    let leaf_before = b.assistant("reply");
    let session = b.session();
    let ci = idx(&session, &c1);
    let leaf = Some(idx(&session, &leaf_before));
    assert_eq!(governing_compaction(&session, leaf), Some(ci));
    assert!(edit_refusal(&session, ci, leaf).is_none());
    let before = build_context(&session, leaf);
    let text = summary_analysis::summary_text(&session, ci)
        .replace("Keep the public API stable", "Keep the public API stable and documented");
    let e = edit_entry(&session, ci, leaf, &text, "edit0001", "2026-01-02T00:00:00.000Z").unwrap();
    assert_eq!(
        keys(&e),
        ["type", "id", "parentId", "timestamp", "summary", "firstKeptEntryId", "tokensBefore", "details", "fromHook"]
    );
    assert_eq!(e.str_field("parentId"), Some(leaf_before.as_str()));
    assert_eq!(e.str_field("firstKeptEntryId"), Some(kept.as_str()));
    assert_eq!(e.get("fromHook").and_then(Value::as_bool), Some(false));
    assert_eq!(e.get("tokensBefore").and_then(Value::as_f64), Some(estimate_context(&before.agent_messages()).tokens));
    let d = e.get("details").unwrap();
    assert_eq!(keys(d), ["readFiles", "modifiedFiles", "editedFrom", "editOrigin", "editKind"]);
    assert_eq!(d.str_field("editedFrom"), Some(c1.as_str()));
    assert_eq!(d.str_field("editOrigin"), Some(c1.as_str()));
    assert_eq!(d.str_field("editKind"), Some("edit"));
    b.lines.push(entries::line(&e));
    let s2 = b.session();
    let ei = idx(&s2, "edit0001");
    assert_eq!(governing_compaction(&s2, s2.file_leaf()), Some(ei));
    let after = build_context(&s2, s2.file_leaf());
    assert_eq!(after.messages[0].message.str_field("summary"), Some(text.as_str()));
    let verbatim = |c: &session_engine::Context| {
        c.messages[1..].iter().map(|m| pi_json::to_string(&m.message)).collect::<Vec<_>>()
    };
    assert_eq!(verbatim(&after), verbatim(&before), "the same verbatim messages follow the edited summary");
    assert_eq!(author(&s2, ei).kind, AuthorKind::User);

    // The original can no longer be edited: the edit governs.
    let r = edit_refusal(&s2, ci, s2.file_leaf()).unwrap();
    assert_eq!(
        r,
        format!("Entry {c1} is not the newest compaction on the path to the leaf (edit0001 is); only edit0001 can be edited — select it, or move the leaf back first.")
    );
    // Revert.
    let rv = revert_entry(&s2, ei, s2.file_leaf(), "rev00001", "2026-01-02T00:00:01.000Z").unwrap();
    assert_eq!(rv.str_field("summary"), Some(summary_analysis::summary_text(&session, ci)));
    let d = rv.get("details").unwrap();
    assert_eq!(keys(d), ["readFiles", "modifiedFiles", "editedFrom", "editOrigin", "editKind", "revertedTo"]);
    assert_eq!(
        (d.str_field("editedFrom"), d.str_field("editKind"), d.str_field("revertedTo")),
        (Some("edit0001"), Some("revert"), Some(c1.as_str()))
    );
    b.lines.push(entries::line(&rv));
    let s3 = b.session();
    let ri = idx(&s3, "rev00001");
    let after = build_context(&s3, s3.file_leaf());
    assert_eq!(after.messages[0].message.str_field("summary"), Some(summary_analysis::summary_text(&session, ci)));
    assert_eq!(verbatim(&after), verbatim(&before));
    let h: Vec<(String, EditKind, Option<String>)> =
        history(&s3, ri).into_iter().map(|v| (v.entry_id, v.kind, v.edited_from)).collect();
    assert_eq!(
        h,
        [
            (c1.clone(), EditKind::Original, None),
            ("edit0001".into(), EditKind::Edit, Some(c1.clone())),
            ("rev00001".into(), EditKind::Revert, Some("edit0001".into()))
        ]
    );
    assert_eq!(history(&s3, ci), history(&s3, ri));
    // Reverting again: nothing to revert.
    let again = revert_entry(&s3, ri, s3.file_leaf(), "x", TS).unwrap_err();
    assert_eq!(again, format!("Entry rev00001 already has the text of its original {c1}; there is nothing to revert."));
    // The revert stands for the original (no compaction before it); the next compaction after
    // it replaces the revert, so it sees the revert as previous.
    assert_eq!(previous_compaction(&s3, ri), None);
    b.at("rev00001");
    b.user("after the revert");
    let k3 = b.assistant("ok");
    let c3 = b.compaction("## Goal\nNext.\n", &k3, None);
    let s4 = b.session();
    assert_eq!(previous_compaction(&s4, idx(&s4, &c3)), Some(idx(&s4, "rev00001")));
}

#[test]
fn edit_refusals_are_one_sentence_that_says_what_to_do() {
    let (mut b, [u1, _, c1, _]) = facts_session();
    let session = b.session();
    let ci = idx(&session, &c1);
    let leaf = session.file_leaf();
    let r = edit_refusal(&session, idx(&session, &u1), leaf).unwrap();
    assert_eq!(r, format!("Entry {u1} is a message entry, not a compaction; only compaction summaries can be edited — select a compaction entry."));
    let r = revert_entry(&session, ci, leaf, "x", TS).unwrap_err();
    assert_eq!(
        r,
        format!("Entry {c1} is an original summary, not an edit, so there is nothing to revert; edit it instead.")
    );
    assert_eq!(
        edit_entry(&session, ci, leaf, "   ", "x", TS).unwrap_err(),
        "The new summary is empty; write a summary, or cancel the edit."
    );
    let same = summary_analysis::summary_text(&session, ci).to_string();
    assert!(edit_entry(&session, ci, leaf, &same, "x", TS).unwrap_err().contains("change something"));
    // Off the path: a leaf on a branch before the compaction.
    let r = edit_refusal(&session, ci, Some(idx(&session, &u1))).unwrap();
    assert!(r.starts_with(&format!("Entry {c1} is not on the path to the leaf {u1}; move the leaf")), "{r}");
    assert!(edit_refusal(&session, ci, None).unwrap().contains("no leaf"));
    assert!(edit_refusal(&session, 999, leaf).unwrap().contains("no entry number 999"));
    for r in [
        edit_refusal(&session, idx(&session, &u1), leaf).unwrap(),
        revert_entry(&session, ci, leaf, "x", TS).unwrap_err(),
    ] {
        assert_eq!(r.matches(". ").count(), 0, "one sentence: {r}");
    }
    // A v1 file (read-only) refuses.
    let legacy = Session::open(&fixtures().join("conformance/load-v1-legacy.jsonl")).unwrap();
    let lc = legacy.compactions().next().unwrap();
    let r = edit_refusal(&legacy, lc, legacy.file_leaf()).unwrap();
    assert!(
        r.starts_with(
            "Summaries of this session cannot be edited because it is read-only: This is a version 1 session file."
        ),
        "{r}"
    );
    // A cycle (read-only) refuses too.
    b.lines.push(r#"{"type":"custom","id":"ca","parentId":"cb","timestamp":"2026-01-01T00:00:00.000Z"}"#.into());
    b.lines.push(r#"{"type":"custom","id":"cb","parentId":"ca","timestamp":"2026-01-01T00:00:00.000Z"}"#.into());
    let cyc = b.session();
    assert!(edit_refusal(&cyc, idx(&cyc, &c1), Some(idx(&cyc, &c1))).unwrap().contains("read-only"));
}

#[test]
fn edit_keeps_file_lists_from_details_or_from_the_appendix() {
    let mut b = B::new();
    let k = b.user("a");
    let c = b.compaction(
        "## Goal\nx\n\n<read-files>\nr.rs\n</read-files>\n\n<modified-files>\nm.rs\n</modified-files>",
        &k,
        Some(v(r#"{"readFiles":["dr.rs"],"modifiedFiles":["dm.rs"]}"#)),
    );
    let c2 = b.compaction("## Goal\ny\n\n<read-files>\nr2.rs\n</read-files>", &k, None);
    let session = b.session();
    let e = edit_entry(&session, idx(&session, &c2), session.file_leaf(), "## Goal\nz", "n", TS).unwrap();
    let d = e.get("details").unwrap();
    assert_eq!(pi_json::to_string(d.get("readFiles").unwrap()), r#"["r2.rs"]"#);
    assert_eq!(pi_json::to_string(d.get("modifiedFiles").unwrap()), "[]");
    assert_eq!(
        summary_analysis::file_lists(&session, idx(&session, &c)),
        (vec!["dr.rs".to_string()], vec!["dm.rs".to_string()])
    );
}

#[test]
fn author_reads_the_entry() {
    let mut b = B::new();
    let k = b.user("a");
    let off = b.compaction(
        "x",
        &k,
        Some(v(r#"{"readFiles":[],"modifiedFiles":[],"summarizer":{"provider":"offline"},"offline":true}"#)),
    );
    let m = b.compaction(
        "x",
        &k,
        Some(v(r#"{"readFiles":[],"modifiedFiles":[],"summarizer":{"provider":"anthropic","model":"claude"}}"#)),
    );
    let pi = b.compaction("x", &k, Some(v(r#"{"readFiles":[],"modifiedFiles":[]}"#)));
    b.lines.push(r#"{"type":"compaction","id":"hk","parentId":"e001","timestamp":"2026-01-01T00:00:09.000Z","summary":"s","firstKeptEntryId":"e001","tokensBefore":1,"fromHook":true}"#.into());
    let session = b.session();
    assert_eq!(author(&session, idx(&session, &off)).kind, AuthorKind::Offline);
    let a = author(&session, idx(&session, &m));
    assert_eq!((a.kind, a.model.as_deref()), (AuthorKind::Model, Some("claude")));
    assert_eq!(author(&session, idx(&session, &pi)).kind, AuthorKind::Unknown);
    assert_eq!(author(&session, idx(&session, "hk")).kind, AuthorKind::Hook);
}

// ---- edits are judged as their origin ------------------------------------------------------

/// u1, k1, C1 (PREV), u2, k2, C2 (NEXT: drops "Use Rust only" and the similar-crate decision),
/// u3 (the leaf).
fn two_compactions() -> (B, String, String) {
    let mut b = B::new();
    b.user("You must use Rust only.");
    b.calls(&[("read", r#"{"path":"docs/format.md"}"#)]);
    let k1 = b.user("next");
    let c1 = b.compaction(PREV, &k1, None);
    b.user("go on");
    b.calls(&[
        ("edit", r#"{"path":"src/parse.rs","oldText":"a","newText":"b"}"#),
        ("bash", r#"{"command":"cargo bench"}"#),
    ]);
    let k2 = b.user("and on");
    let c2 = b.compaction(NEXT, &k2, None);
    b.user("continue");
    (b, c1, c2)
}

fn append_entry(b: &mut B, e: Result<Value, String>) -> String {
    b.push(e.unwrap())
}

fn dropped_texts(c: &Check) -> Vec<(&str, &str)> {
    c.dropped.iter().map(|d| (d.section.as_str(), d.text.as_str())).collect()
}

#[test]
fn an_edit_is_judged_as_its_origin_span_previous_retention_and_drop_alarm() {
    let (mut b, c1, c2) = two_compactions();
    let session = b.session();
    let (i1, i2) = (idx(&session, &c1), idx(&session, &c2));
    let original = check(&session, i2);
    assert_eq!(original.previous_entry_id.as_deref(), Some(c1.as_str()));
    assert_eq!(
        dropped_texts(&original),
        [
            ("Constraints & Preferences", "Use Rust only"),
            ("Key Decisions", "**similar crate**: word diffs come from a maintained library")
        ]
    );
    assert!(span(&session, i2).entry_ids.len() >= 3);

    // The user restores the constraint: the edit no longer drops it, only the decision.
    let restored =
        NEXT.replace("- Never rewrite the session files\n", "- Never rewrite the session files\n- Use Rust only\n");
    let e1 = append_entry(&mut b, edit_entry(&session, i2, session.file_leaf(), &restored, "edit0001", TS));
    let session = b.session();
    let ei = idx(&session, &e1);
    assert_eq!(edit_origin(&session, ei), Some(i2));
    assert_eq!(edit_origin(&session, i2), None, "an original stands for itself");
    // Span, previous compaction, span messages: the origin's (read literally the span is empty
    // and the previous compaction is the original itself).
    assert_eq!(span(&session, ei), span(&session, i2));
    assert_eq!(previous_compaction(&session, ei), Some(i1));
    assert_eq!(span_messages(&session, ei), span_messages(&session, i2));
    let ch = check(&session, ei);
    assert_eq!(ch.entry_id, e1);
    assert_eq!(ch.previous_entry_id.as_deref(), Some(c1.as_str()), "compared with the summary the origin replaced");
    assert_eq!(dropped_texts(&ch), [("Key Decisions", "**similar crate**: word diffs come from a maintained library")]);
    assert!(ch.moved.iter().any(|m| m.text == "Write the section parser"), "{:?}", ch.moved);
    // Retention over the origin's span (and the origin's predecessor's file lists), probed with the edit's text.
    assert_eq!(ch.retention, retention(&session, i2, &restored));
    assert!(
        ch.retention.facts.iter().any(|f| f.kind == FactKind::Command && f.text == "cargo bench"),
        "{:?}",
        ch.retention.facts
    );
    // The default diff of an edit is against its original; of an original, the compaction before it.
    assert_eq!(diff_base(&session, ei), Some(i2));
    assert_eq!(diff_base(&session, i2), Some(i1));
    assert_eq!(diff_base(&session, i1), None);

    // An edit of the edit that deletes a Done item the predecessor had: the alarm says so.
    let cut = restored.replace("- [x] Read the format docs\n", "");
    let e2 = append_entry(&mut b, edit_entry(&session, ei, session.file_leaf(), &cut, "edit0002", TS));
    let session = b.session();
    let e2i = idx(&session, &e2);
    assert_eq!(edit_origin(&session, e2i), Some(i2), "the chain's origin, not the edit it was made from");
    let ch2 = check(&session, e2i);
    assert_eq!(ch2.previous_entry_id.as_deref(), Some(c1.as_str()));
    assert!(dropped_texts(&ch2).contains(&("Progress › Done", "Read the format docs")), "{:?}", ch2.dropped);
    assert_eq!(diff_base(&session, e2i), Some(i2));
    assert_eq!(span(&session, e2i), span(&session, i2));

    // A revert is the original again: the same check as the original, under its own id.
    let r = append_entry(&mut b, revert_entry(&session, e2i, session.file_leaf(), "rev00001", TS));
    let session = b.session();
    let ri = idx(&session, &r);
    let chr = check(&session, ri);
    assert_eq!(
        (chr.previous_entry_id, chr.dropped, chr.moved, chr.retention),
        (original.previous_entry_id, original.dropped, original.moved, original.retention)
    );

    // An "edit" whose origin is not on its path (a copied or hand-written line) is judged as written.
    let mut b2 = B::new();
    let root = b2.user("root");
    let side_k = b2.user("side");
    let side_c = b2.compaction(PREV, &side_k, None);
    b2.at(&root);
    let k = b2.user("main");
    let d = v(&format!(
        r#"{{"readFiles":[],"modifiedFiles":[],"editedFrom":"{side_c}","editOrigin":"{side_c}","editKind":"edit"}}"#
    ));
    let stray = b2.compaction(NEXT, &k, Some(d));
    let s2 = b2.session();
    let si = idx(&s2, &stray);
    assert_eq!(edit_origin(&s2, si), None);
    assert_eq!(previous_compaction(&s2, si), None);
    assert_eq!(span(&s2, si).entry_ids, [root.as_str()]);
}

#[test]
fn a_branch_summary_compares_with_the_summary_before_it_and_has_no_drop_alarm() {
    let mut b = B::new();
    b.user("start");
    let fork = b.assistant("fork point");
    b.user("try the risky approach");
    b.assistant("tried it");
    b.at(&fork);
    let bs1 = b.branch_summary("## Goal\nRisky approach\n\n## Key Decisions\n- **Risky**: abandoned");
    // No summary above bs1: nothing to compare with.
    let session = b.session();
    assert_eq!(diff_base(&session, idx(&session, &bs1)), None);
    let k = b.user("keep going");
    let c = b.compaction(PREV, &k, None);
    let f2 = b.user("second fork");
    b.user("another try");
    b.at(&f2);
    let bs2 = b.branch_summary("## Goal\nAnother try\n");
    let x = b.user("more");
    b.user("a third try");
    b.at(&x);
    let bs3 = b.branch_summary("## Goal\nThird try\n");
    let session = b.session();
    // The previous summary on its path: a compaction, or a branch summary.
    assert_eq!(diff_base(&session, idx(&session, &bs2)), Some(idx(&session, &c)));
    assert_eq!(diff_base(&session, idx(&session, &bs3)), Some(idx(&session, &bs2)));
    // A branch summary replaces no summary: no previous entry, no drops, its own retention.
    let ch = check(&session, idx(&session, &bs2));
    assert_eq!(ch.previous_entry_id, None);
    assert!(ch.dropped.is_empty() && ch.moved.is_empty(), "{:?}", ch.dropped);
    assert_eq!(
        ch.retention,
        retention(&session, idx(&session, &bs2), summary_analysis::summary_text(&session, idx(&session, &bs2)))
    );
    assert_eq!(diff_base(&session, 0), None, "not a summary");
}

#[test]
fn error_facts_are_the_lines_that_carry_the_error() {
    use summary_analysis::check::{error_lines, tool_error_lines};
    let npm = "> arbor-demo@1.0.0 build\n> tsc -p .\n\nsrc/cli/flags.ts(41,5): error TS2741: Property 'retryBudget' is missing in type '{ timeout: number; }'.";
    assert_eq!(
        tool_error_lines(npm),
        ["src/cli/flags.ts(41,5): error TS2741: Property 'retryBudget' is missing in type '{ timeout: number; }'."]
    );
    // A TypeScript code without the word "error" (tsc --pretty false output of some tools).
    assert_eq!(
        error_lines("> build\nsrc/a.ts:3:1 - TS2304: Cannot find name 'x'.\n"),
        ["src/a.ts:3:1 - TS2304: Cannot find name 'x'."]
    );
    assert!(error_lines("TSX files: 12\nSTATUS ok\nTS123 is not a code").is_empty());
    for (out, want) in [
        (
            "   Compiling x v0.1.0\nerror[E0425]: cannot find value `y` in this scope\n",
            "error[E0425]: cannot find value `y` in this scope",
        ),
        (
            "running 2 tests\nthread 'main' panicked at src/lib.rs:3:5:\nboom",
            "thread 'main' panicked at src/lib.rs:3:5:",
        ),
        ("$ python x.py\nTraceback (most recent call last):\n  File \"x.py\"", "Traceback (most recent call last):"),
        ("   ERROR  in ./src/a.js\n", "ERROR  in ./src/a.js"),
        ("java.lang.IllegalStateException: bad\n", "java.lang.IllegalStateException: bad"),
    ] {
        assert_eq!(error_lines(out).first().map(String::as_str), Some(want), "{out:?}");
    }
    // Trimmed and cut to about 200 characters.
    let long = format!("   error: {}   ", "x".repeat(500));
    let got = &error_lines(&long)[0];
    assert!(got.starts_with("error: xxx") && got.ends_with('…') && got.chars().count() == 201, "{got}");
    // An isError result without an error word: its first non-empty line.
    assert_eq!(
        tool_error_lines("\n\n  Could not find the text to replace in a.ts  \nmore"),
        ["Could not find the text to replace in a.ts"]
    );
    assert!(tool_error_lines("  \n").is_empty());

    // In a built session: the isError bash result gives its error line, not its banner.
    let mut b = B::new();
    b.calls(&[("bash", r#"{"command":"npm run build"}"#)]);
    let r = b.result("bash", npm, true);
    let k = b.user("go");
    let c = b.compaction("Fixed the error TS2741: property retryBudget was missing in the flags type.", &k, None);
    let session = b.session();
    let errors: Vec<(String, String, bool)> = check(&session, idx(&session, &c))
        .retention
        .facts
        .into_iter()
        .filter(|f| f.kind == FactKind::Error)
        .map(|f| (f.text, f.source_entry_id, f.mentioned))
        .collect();
    assert_eq!(
        errors,
        [(
            "src/cli/flags.ts(41,5): error TS2741: Property 'retryBudget' is missing in type '{ timeout: number; }'."
                .to_string(),
            r,
            true
        )]
    );
}
