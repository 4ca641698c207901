//! Summary quality on sessions built for the purpose, with answers known in advance: the probe
//! rules of each kind (paraphrases that must count and must not), citations, growth, the cost
//! of forgetting and the artifact ledger; then every summary of the corpus and the real-Pi
//! recordings judged without error.

mod common;

use common::*;
use summary_analysis::quality::{self, GrowthFlag, Probe, ProbeKind};
use summary_analysis::*;

/// A span with known values, artifacts, decisions and a last request.
fn probe_session() -> (B, String, String) {
    let mut b = B::new();
    b.user("Speed up the index. We decided to use SQLite FTS5 instead of tantivy. Target p95 under 50 ms with `rusqlite` and --release.");
    b.calls(&[("read", r#"{"path":"src/index/db.rs"}"#), ("bash", r#"{"command":"cargo bench -p library"}"#)]);
    b.result("read", "version 9.9.9 of a file nobody ran", false);
    b.result("bash", "   Compiling library v0.1.0\nquery p95: 342 ms\nindex size 93.9 MB", false);
    b.calls(&[("edit", r#"{"path":"src/index/query.rs","oldText":"a","newText":"b"}"#)]);
    b.result("edit", "ok", false);
    b.assistant("I chose a contentless table rather than a copy of every text.");
    let last = b.user("Now make the snippets come from the session files by offset.");
    b.calls(&[("edit", r#"{"path":"src/index/snippet.rs","oldText":"a","newText":"b"}"#)]);
    let kept = b.user("continue");
    (b, kept, last)
}

fn by_expected<'a>(probes: &'a [Probe], expected: &str) -> &'a Probe {
    probes.iter().find(|p| p.expected == expected).unwrap_or_else(|| {
        panic!("no probe expecting {expected:?}: {:?}", probes.iter().map(|p| &p.expected).collect::<Vec<_>>())
    })
}

#[test]
fn probes_of_each_kind_with_known_answers() {
    let (mut b, kept, last) = probe_session();
    let good = "## Goal\nSpeed up the index (p95 was 342ms; index 93.9MB). Target p95 under 50 ms.\n\n## Key Decisions\n- We decided on SQLite FTS5 instead of tantivy.\n- Contentless table chosen rather than copying every text.\n\n## Progress\n### Done\n- Read db.rs, ran `cargo bench`, edited src/index/query.rs\n\n## Next Steps\n1. Make snippets come from session files by their offset (editing snippet.rs)\n";
    let c = b.compaction(good, &kept, None);
    let session = b.session();
    let s = quality::score(&session, idx(&session, &c), good);
    let p = &s.probes;
    // Recall: values from the user and the command's output; none from the read result, none
    // from a progress line.
    let recall: Vec<&str> = p.iter().filter(|p| p.kind == ProbeKind::Recall).map(|p| p.expected.as_str()).collect();
    // Names in backticks come first in a line, then the other values in order.
    assert_eq!(recall, ["rusqlite", "50 ms", "--release", "342 ms", "93.9 MB"]);
    for v in ["50 ms", "342 ms", "93.9 MB"] {
        assert!(by_expected(p, v).answered, "{v}: the unit's spacing is a format, not a value");
    }
    assert!(!by_expected(p, "rusqlite").answered && !by_expected(p, "--release").answered);
    // Artifacts: both paths by file name or full path, the command by its head.
    for a in ["src/index/db.rs", "src/index/query.rs", "cargo bench -p library"] {
        assert!(by_expected(p, a).answered, "{a}");
    }
    assert!(by_expected(p, "src/index/db.rs").question.contains("read"));
    assert!(by_expected(p, "src/index/query.rs").question.contains("modified"));
    // Decisions: the user's and the assistant's, paraphrased.
    let d = by_expected(p, "We decided to use SQLite FTS5 instead of tantivy.");
    assert!(d.answered && d.kind == ProbeKind::Decision);
    assert!(by_expected(p, "I chose a contentless table rather than a copy of every text.").answered);
    // Continuation: the last request and the work at the cut.
    let req = by_expected(p, "Now make the snippets come from the session files by offset.");
    assert!(req.answered && req.source_entry_id == last);
    assert!(by_expected(p, "editing src/index/snippet.rs").answered);
    assert_eq!(s.by_kind.recall.probes, 5);
    assert_eq!(s.by_kind.recall.answered, 3);
    assert_eq!(s.by_kind.decision.answered, s.by_kind.decision.probes);
    assert_eq!(s.by_kind.continuation.answered, 2);
    // The score is the mean of the kinds' shares.
    let k = |x: quality::KindScore| x.answered as f64 / x.probes as f64;
    let mean = (k(s.by_kind.recall) + k(s.by_kind.artifact) + k(s.by_kind.decision) + k(s.by_kind.continuation)) / 4.0;
    assert!((s.score.unwrap() - mean).abs() < 0.001);
}

#[test]
fn paraphrases_that_must_not_count() {
    let (mut b, kept, _) = probe_session();
    // Near misses: a different number, a different file with the same directory, a decision
    // reversed in other words, another request.
    let bad = "## Goal\nSpeed up the index; p95 was 34 ms, 93 MB.\n\n## Key Decisions\n- Keep tantivy.\n\n## Progress\n- Looked at src/index/mod.rs\n\n## Next Steps\n1. Write docs\n";
    let c = b.compaction(bad, &kept, None);
    let session = b.session();
    let s = quality::score(&session, idx(&session, &c), bad);
    for v in ["342 ms", "93.9 MB", "src/index/db.rs", "src/index/query.rs", "cargo bench -p library"] {
        assert!(!by_expected(&s.probes, v).answered, "{v} must not count");
    }
    assert!(!by_expected(&s.probes, "We decided to use SQLite FTS5 instead of tantivy.").answered);
    assert_eq!(s.by_kind.continuation.answered, 0);
    assert!(s.score.unwrap() < 0.2, "{:?}", s.score);
}

#[test]
fn a_span_without_probes_has_no_score() {
    let mut b = B::new();
    let kept = b.user("hi");
    let c = b.compaction("## Goal\nNothing.\n", &kept, None);
    let session = b.session();
    let s = quality::score(&session, idx(&session, &c), "## Goal\nNothing.\n");
    assert!(s.probes.is_empty() && s.score.is_none());
}

#[test]
fn citations_lead_to_the_entries_that_say_it() {
    let mut b = B::new();
    let u = b.user("Add a retry with exponential backoff to the uploader in upload.rs.");
    let call = b.calls(&[("edit", r#"{"path":"src/upload.rs","oldText":"send()","newText":"retry(send)"}"#)]);
    b.result("edit", "ok", false);
    let out = b.result("bash", "thread main panicked at overflow in backoff multiplier", false);
    b.assistant("Fixed.");
    let kept = b.user("next");
    let text = "## Goal\n- Retry with exponential backoff in the uploader\n\n## Progress\n- Edited src/upload.rs\n- Backoff multiplier panicked with an overflow\n- Migrated the billing database to Postgres 16\n\n## Next Steps\n1. (none)\n";
    let c = b.compaction(text, &kept, None);
    let session = b.session();
    let cites = citations(&session, idx(&session, &c), text);
    let item = |t: &str| cites.items.iter().find(|i| i.text.contains(t)).unwrap_or_else(|| panic!("{t}"));
    assert_eq!(item("exponential").sources[0].entry_id, u);
    assert_eq!(item("Edited").sources[0].entry_id, call);
    assert_eq!(item("panicked").sources[0].entry_id, out);
    let invented = item("billing");
    assert!(invented.unsupported && invented.sources.is_empty(), "{invented:?}");
    assert_eq!(cites.unsupported().count(), 1, "{cites:?}");
    assert!(cites.items.iter().all(|i| !i.text.contains("(none)")), "placeholders are not items");
    for i in &cites.items {
        assert!(i.sources.len() <= 3 && i.sources.iter().all(|s| s.score >= 0.35 && s.score <= 1.0));
    }
    // The previous summary supports what Pi carried forward: not unsupported, listed after the span.
    let kept2 = b.user("and then");
    let text2 = "## Goal\n- Retry with exponential backoff in the uploader\n\n## Progress\n- Migrated the billing database to Postgres 16\n";
    let c2 = b.compaction(text2, &kept2, None);
    let session = b.session();
    let cites = citations(&session, idx(&session, &c2), text2);
    let goal = cites.items.iter().find(|i| i.text.contains("exponential")).unwrap();
    assert_eq!(goal.sources.last().unwrap().entry_id, c);
    assert!(!goal.unsupported);
    assert!(
        !cites.items.iter().find(|i| i.text.contains("billing")).unwrap().unsupported,
        "carried from the previous summary"
    );
}

#[test]
fn growth_against_what_was_replaced_and_the_previous_summary() {
    let mut b = B::new();
    b.user(&"x".repeat(4000)); // 1000 tokens
    let kept = b.user("y");
    let c1 = b.compaction(&"a".repeat(400), &kept, None); // 100 tokens
    b.user(&"z".repeat(400)); // 100 tokens
    let kept2 = b.user("w");
    let big = "b".repeat(1000); // 250 tokens: not smaller than 100 + 100 + the 1-token kept user message
    let c2 = b.compaction(&big, &kept2, None);
    let session = b.session();
    let g1 = quality::growth(&session, idx(&session, &c1), &"a".repeat(400));
    assert_eq!(
        (g1.summary_tokens, g1.replaced_tokens, g1.previous_summary_tokens, g1.flag),
        (100.0, 1000.0, None, None)
    );
    let g2 = quality::growth(&session, idx(&session, &c2), &big);
    assert_eq!(g2.summary_tokens, 250.0);
    assert_eq!(g2.previous_summary_tokens, Some(100.0));
    assert_eq!(
        g2.replaced_tokens,
        100.0 + 1.0 + 100.0,
        "the span from the first kept entry, plus the previous summary"
    );
    assert_eq!(g2.flag, Some(GrowthFlag::NotSmaller));
    // Smaller than what it replaced but more than 1.5× the previous summary.
    let g3 = quality::growth(&session, idx(&session, &c2), &"c".repeat(640));
    assert_eq!((g3.summary_tokens, g3.flag), (160.0, Some(GrowthFlag::Grew)));
    let g4 = quality::growth(&session, idx(&session, &c2), &"c".repeat(600));
    assert_eq!(g4.flag, None, "150 tokens is exactly 1.5×: not flagged");
}

#[test]
fn forgetting_counts_rereads_reruns_and_calls_before_the_first_edit() {
    let mut b = B::new();
    // The session's start: 2 calls, then an edit.
    b.user("go");
    b.calls(&[("read", r#"{"path":"a.rs"}"#), ("read", r#"{"path":"b.rs"}"#)]);
    b.calls(&[("bash", r#"{"command":"cargo test"}"#)]);
    b.calls(&[("edit", r#"{"path":"a.rs","oldText":"1","newText":"2"}"#)]);
    let kept = b.user("more");
    b.calls(&[("read", r#"{"path":"c.rs"}"#)]); // read after the cut: kept, not forgotten
    let c = b.compaction("## Goal\ngo\n", &kept, None);
    // After it: re-read a.rs and b.rs, re-run cargo test, read c.rs again (it was kept), 4 calls
    // before the first write.
    b.calls(&[("read", r#"{"path":"a.rs"}"#), ("read", r#"{"path":"b.rs"}"#), ("read", r#"{"path":"a.rs"}"#)]);
    b.calls(&[("bash", r#"{"command":" cargo test "}"#), ("read", r#"{"path":"c.rs"}"#)]);
    b.calls(&[("write", r#"{"path":"d.rs","content":"x"}"#)]);
    b.calls(&[("read", r#"{"path":"e.rs"}"#)]);
    let session = b.session();
    let f = forgetting(&session, idx(&session, &c)).unwrap();
    assert_eq!(f.reread_files, ["a.rs", "b.rs"]);
    assert_eq!(f.rerun_commands, ["cargo test"]);
    assert_eq!(f.cost(), 3);
    assert_eq!((f.calls_before_first_edit, f.edited), (5, true));
    assert_eq!(f.baseline_calls_before_first_edit, Some(3));
    assert_eq!(f.window_entries, 4);
    // A later compaction ends the window.
    let kept2 = b.user("again");
    let c2 = b.compaction("## Goal\nagain\n", &kept2, None);
    b.calls(&[("read", r#"{"path":"a.rs"}"#)]);
    let session = b.session();
    let f = forgetting(&session, idx(&session, &c)).unwrap();
    assert_eq!(f.window_entries, 5, "up to the next compaction");
    let f2 = forgetting(&session, idx(&session, &c2)).unwrap();
    assert_eq!(f2.reread_files, ["a.rs"]);
    assert!(!f2.edited && f2.calls_before_first_edit == 1);
    assert!(forgetting(&session, idx(&session, &kept2)).is_none(), "not a compaction");
}

/// The app marks every compaction with one memo of what each entry does: the answers must be
/// those of a fresh reading, for each compaction, in any order, and for entries appended after
/// the memo was filled (it covers only the entries it first saw).
#[test]
fn forgetting_with_a_shared_memo_answers_as_a_fresh_reading() {
    let mut b = B::new();
    b.user("start");
    b.calls(&[("read", r#"{"path":"a.rs"}"#), ("bash", r#"{"command":"cargo test"}"#)]);
    let kept = b.user("go on");
    let c1 = b.compaction("## Goal\ngo\n", &kept, None);
    b.calls(&[("read", r#"{"path":"a.rs"}"#), ("read", r#"{"path":"b.rs"}"#)]);
    let kept2 = b.user("more");
    let c2 = b.compaction("## Goal\nmore\n", &kept2, None);
    b.calls(&[("read", r#"{"path":"b.rs"}"#), ("bash", r#"{"command":" cargo test "}"#)]);
    let memo = ActsMemo::default();
    let session = b.session();
    for c in [&c2, &c1, &c2] {
        let i = idx(&session, c);
        assert_eq!(forgetting_with(&session, i, &memo), forgetting(&session, i), "{c}");
    }
    assert_eq!(forgetting_with(&session, idx(&session, &c2), &memo).unwrap().cost(), 2, "b.rs and cargo test");
    // Appended after the memo was filled: read fresh.
    b.calls(&[("read", r#"{"path":"a.rs"}"#)]);
    let grown = b.session();
    for c in [&c1, &c2] {
        let i = idx(&grown, c);
        assert_eq!(forgetting_with(&grown, i, &memo), forgetting(&grown, i), "{c} after the append");
    }
    assert_eq!(forgetting_with(&grown, idx(&grown, &c2), &memo).unwrap().reread_files, ["b.rs", "a.rs"]);
}

#[test]
fn the_ledger_lists_what_the_summary_leaves_out_before_the_appendix() {
    let (mut b, kept, _) = probe_session();
    let text = "## Goal\nSpeed up the index.\n\n<read-files>\nsrc/index/db.rs\n</read-files>";
    let c = b.compaction(text, &kept, None);
    let session = b.session();
    let i = idx(&session, &c);
    let before = quality::score(&session, i, text);
    let with = with_ledger(&session, i, text);
    assert!(with.ends_with("<read-files>\nsrc/index/db.rs\n</read-files>"), "{with}");
    assert!(with.contains("## Artifacts\n"));
    assert!(with.contains("- modified `src/index/query.rs`"), "{with}");
    assert!(with.contains("- ran `cargo bench -p library`"), "{with}");
    assert!(!with.contains("- read `src/index/db.rs`"), "the appendix already names it");
    let after = quality::score(&session, i, &with);
    assert_eq!(after.by_kind.artifact.answered, after.by_kind.artifact.probes, "{:?}", after.probes);
    assert!(before.by_kind.artifact.answered < before.by_kind.artifact.probes);
    // The text stays a summary Pi's parser and ours read: a section, same appendix, and adding
    // the ledger again adds nothing.
    let parsed = parse(&with);
    assert!(parsed.sections.iter().any(|s| s.title == "Artifacts"));
    assert_eq!(parsed.read_files, ["src/index/db.rs"]);
    assert_eq!(print(&parsed), with);
    assert_eq!(with_ledger(&session, i, &with), with);
    // A summary that carries an Artifacts section gets the new lines in it.
    let carried = "## Goal\nSpeed up.\n\n## Artifacts\n- ran `ls`\n\n## Next Steps\n1. more\n";
    let merged = with_ledger(&session, i, carried);
    let p = parse(&merged);
    assert_eq!(p.sections.iter().filter(|s| s.title == "Artifacts").count(), 1, "{merged}");
    let art = p.sections.iter().find(|s| s.title == "Artifacts").unwrap();
    assert_eq!(art.items[0].text, "ran `ls`");
    assert!(art.items.len() > 2, "{merged}");
    assert!(merged.contains("## Next Steps\n1. more"));
}

/// Every summary of the conformance corpus, the random oracle sessions and the real-Pi
/// recordings: judged without error, scores in range, and every probe and citation names an
/// entry of the session.
#[test]
fn every_summary_of_the_fixtures_is_judged() {
    let mut n = 0;
    for dir in ["conformance", "random", "real-pi"] {
        for f in std::fs::read_dir(fixtures().join(dir)).unwrap() {
            let p = f.unwrap().path();
            if p.extension().is_none_or(|e| e != "jsonl") {
                continue;
            }
            let session = session_engine::Session::open(&p).unwrap();
            for i in 0..session.len() {
                if !is_summary(&session, i) {
                    continue;
                }
                let q = quality(&session, i);
                assert!(q.score.is_none_or(|s| (0.0..=1.0).contains(&s)), "{}: {:?}", p.display(), q.score);
                for pr in &q.probes {
                    assert!(session.index_of(&pr.source_entry_id).is_some(), "{} {pr:?}", p.display());
                    assert!(!pr.question.is_empty() && !pr.expected.is_empty());
                }
                let text = summary_text(&session, i);
                for c in citations(&session, i, text).items {
                    assert!(c.sources.iter().all(|s| session.index_of(&s.entry_id).is_some()));
                }
                let with = with_ledger(&session, i, text);
                let (before, after) = (parse(text), parse(&with));
                assert_eq!((&before.read_files, &before.modified_files), (&after.read_files, &after.modified_files));
                assert_eq!(print(&after), with);
                if !before.sections.iter().any(|s| s.title.eq_ignore_ascii_case("artifacts")) && with != text {
                    let body = &text[..text.len() - before.appendix_raw.len()];
                    assert!(with.starts_with(body.trim_end()), "{}: {}", p.display(), session.id(i));
                }
                assert_eq!(q.forgetting.is_some(), session.kind(i) == session_engine::Kind::Compaction);
                n += 1;
            }
        }
    }
    assert!(n >= 40, "{n} summaries");
}
