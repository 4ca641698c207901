//! The summary analysis on texts: the parser on every summary of the conformance corpus and on
//! real-world shapes, the print(parse(t)) == t property, the diff (reworded, moved), the drop
//! alarm between two texts and what a split turn owes the next summary. The same analysis on
//! sessions built for the purpose is in `sessions.rs`.

mod common;

use common::*;
use pi_json::Value;
use proptest::prelude::*;
use session_engine::{Kind, Session};
use std::time::Instant;
use summary_analysis::*;

fn roundtrip(t: &str) -> Summary {
    let p = parse(t);
    assert_eq!(print(&p), t, "print(parse(t)) must give back t");
    p
}

fn names(p: &Summary) -> Vec<&str> {
    p.sections.iter().map(|s| s.name.as_str()).collect()
}

fn section<'a>(p: &'a Summary, name: &str) -> &'a Section {
    p.sections.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("no section {name:?} in {:?}", names(p)))
}

fn item_texts(s: &Section) -> Vec<&str> {
    s.items.iter().map(|i| i.text.as_str()).collect()
}

// ---- parser ---------------------------------------------------------------------------------

#[test]
fn every_summary_of_the_conformance_corpus_round_trips_and_keeps_its_structure() {
    let dir = fixtures().join("conformance");
    let mut seen = 0;
    let mut templated = 0;
    let mut with_appendix = 0;
    let mut split = 0;
    for f in std::fs::read_dir(&dir).unwrap() {
        let p = f.unwrap().path();
        if p.extension().and_then(|e| e.to_str()) != Some("jsonl") {
            continue;
        }
        let session = Session::open(&p).unwrap();
        for i in 0..session.len() {
            if !matches!(session.kind(i), Kind::Compaction | Kind::BranchSummary) {
                continue;
            }
            let Some(text) = session.value(i).str_field("summary") else { continue };
            seen += 1;
            let parsed = roundtrip(text);
            let joined: String =
                parsed.sections.iter().map(|x| x.raw.as_str()).collect::<String>() + &parsed.appendix_raw;
            assert_eq!(joined, text);
            if !text.trim().is_empty() {
                assert!(!parsed.sections.is_empty(), "{}: {text:?}", p.display());
            }
            let mut uniq = std::collections::HashSet::new();
            for sec in &parsed.sections {
                assert!(uniq.insert(sec.name.clone()), "section names are unique: {:?}", names(&parsed));
                assert_eq!(sec.role, role_of(sec));
            }
            if text.contains("## Goal\n") {
                templated += 1;
                assert_eq!(parsed.sections.iter().find(|x| x.title == "Goal").map(|x| x.role), Some(SectionRole::Goal));
                for (n, role) in [
                    ("Constraints & Preferences", SectionRole::Constraints),
                    ("Progress › Done", SectionRole::Done),
                    ("Progress › In Progress", SectionRole::InProgress),
                    ("Progress › Blocked", SectionRole::Blocked),
                    ("Key Decisions", SectionRole::Decisions),
                    ("Next Steps", SectionRole::NextSteps),
                ] {
                    if text.contains(&format!("# {}\n", n.rsplit(" › ").next().unwrap())) {
                        assert_eq!(section(&parsed, n).role, role, "{}", p.display());
                    }
                }
                // Pi's Done items are checked checkboxes.
                if let Some(done) = parsed.sections.iter().find(|x| x.name == "Progress › Done") {
                    assert!(
                        done.items.iter().all(|it| it.marker == Marker::Checkbox && it.checked == Some(true)),
                        "{:?}",
                        done.items
                    );
                }
            }
            if text.contains(TURN_CONTEXT_MARKER) {
                split += 1;
                let tp = parsed.turn_prefix.as_deref().expect("split-turn part");
                if tp.starts_with("## Original Request") {
                    assert!(parsed.sections.iter().any(|x| x.name == "Turn Context › Original Request"
                        && x.turn_prefix
                        && x.role == SectionRole::Goal));
                }
                assert!(parsed
                    .sections
                    .iter()
                    .any(|x| x.name == "Turn Context" && x.raw.starts_with(TURN_CONTEXT_MARKER)));
            }
            // Pi writes the appendix from details: the lists agree (in order).
            let d = session.value(i).get("details");
            if !parsed.appendix_raw.is_empty() && !session.value(i).get("fromHook").is_some_and(Value::truthy) {
                with_appendix += 1;
                let list = |k: &str| -> Vec<String> {
                    d.and_then(|d| d.get(k))
                        .and_then(Value::as_array)
                        .map(|a| a.iter().filter_map(|x| x.as_str().map(String::from)).collect())
                        .unwrap_or_default()
                };
                if d.is_some() {
                    assert_eq!(parsed.read_files, list("readFiles"), "{}", p.display());
                    assert_eq!(parsed.modified_files, list("modifiedFiles"), "{}", p.display());
                }
            }
        }
    }
    assert!(seen >= 40, "the corpus has 44 summaries, saw {seen}");
    assert!(
        templated >= 20 && with_appendix >= 5 && split >= 3,
        "templated {templated}, appendix {with_appendix}, split {split}"
    );
}

#[test]
fn appendix_followed_by_more_text_still_gives_the_file_lists() {
    // branch-deep-budget has text after its <modified-files> block.
    let t = "## Goal\nx\n\n<modified-files>\na.rs\nb.rs\n</modified-files>\n\nExtra critical context.";
    let p = roundtrip(t);
    assert_eq!(p.modified_files, ["a.rs", "b.rs"]);
    assert_eq!(p.appendix_raw, "");
    assert_eq!(section(&p, "Goal").text, "x\nExtra critical context.");
}

#[test]
fn context_checkpoint_branch_and_completed_work_shapes() {
    let t = std::fs::read_to_string(own_fixtures().join("summaries/context-checkpoint.md")).unwrap();
    let p = roundtrip(&t);
    assert_eq!(
        names(&p),
        [
            "Context Checkpoint",
            "Context Checkpoint › Branch",
            "Context Checkpoint › Completed Work",
            "Context Checkpoint › Constraints",
            "Context Checkpoint › Decisions",
            "Context Checkpoint › Context"
        ]
    );
    let roles: Vec<SectionRole> = p.sections.iter().map(|s| s.role).collect();
    use SectionRole::*;
    assert_eq!(roles, [Other, Other, Done, Constraints, Decisions, Other]);
    let done = section(&p, "Context Checkpoint › Completed Work");
    assert_eq!(done.items.len(), 5);
    assert_eq!(done.items[0].marker, Marker::Numbered);
    assert_eq!(done.items[1].text, "Wired `arbor-cli summary show` into the CLI");
    assert_eq!(
        (done.items[2].depth, done.items[2].marker, done.items[2].text.as_str()),
        (1, Marker::Bullet, "JSON output matches issue 11")
    );
    assert_eq!(done.items[4].depth, 0);
    assert_eq!(section(&p, "Context Checkpoint › Branch").text, "feature/summary-workbench (3 commits ahead of main)");
    assert_eq!(p.sections[0].level, 1);
    assert_eq!(p.sections[1].level, 2);
}

#[test]
fn german_and_japanese_headings_get_roles() {
    let p = roundtrip(&std::fs::read_to_string(own_fixtures().join("summaries/german.md")).unwrap());
    use SectionRole::*;
    let roles: Vec<(&str, SectionRole)> = p.sections.iter().map(|s| (s.name.as_str(), s.role)).collect();
    assert_eq!(
        roles,
        [
            ("Ziel", Goal),
            ("Einschränkungen & Präferenzen", Constraints),
            ("Fortschritt", Other),
            ("Fortschritt › Erledigt", Done),
            ("Fortschritt › In Arbeit", InProgress),
            ("Wichtige Entscheidungen", Decisions),
            ("Nächste Schritte", NextSteps)
        ]
    );
    assert_eq!(
        item_texts(section(&p, "Fortschritt › Erledigt")),
        ["Parser geschrieben (`parse.rs`)", "Tests für CRLF"]
    );
    let p = roundtrip(&std::fs::read_to_string(own_fixtures().join("summaries/japanese.md")).unwrap());
    let roles: Vec<(&str, SectionRole)> = p.sections.iter().map(|s| (s.name.as_str(), s.role)).collect();
    assert_eq!(roles, [("目標", Goal), ("制約", Constraints), ("完了", Done), ("次のステップ", NextSteps)]);
    assert_eq!(item_texts(section(&p, "完了")), ["パーサーを実装した", "往復テストを追加した"]);
    // A reworded Japanese item still matches (characters as words).
    assert!(similar_items("パーサーを実装した", "パーサーを実装しました"));
}

#[test]
fn a_summary_without_headings_is_one_section() {
    let t = std::fs::read_to_string(own_fixtures().join("summaries/no-headings.md")).unwrap();
    let p = roundtrip(&t);
    assert_eq!(p.sections.len(), 1);
    let s = &p.sections[0];
    assert_eq!((s.title.as_str(), s.name.as_str(), s.level), ("", "(untitled)", 0));
    assert_eq!(item_texts(s), ["remaining: update the docs"]);
    assert!(s.text.starts_with("The user asked to speed up the indexer."));
    assert_eq!(roundtrip("").sections.len(), 0);
    assert_eq!(roundtrip("\n\n").sections.len(), 1);
}

#[test]
fn odd_nesting_fences_and_non_headings() {
    let t = std::fs::read_to_string(own_fixtures().join("summaries/odd-nesting.md")).unwrap();
    let p = roundtrip(&t);
    assert_eq!(names(&p), ["Progress", "Closing hashes", "Closing hashes › Three spaces ok"]);
    let items: Vec<(u8, Marker, Option<bool>, &str)> =
        p.sections[0].items.iter().map(|i| (i.depth, i.marker, i.checked, i.text.as_str())).collect();
    assert_eq!(
        items,
        [
            (0, Marker::Bullet, None, "top level"),
            (1, Marker::Bullet, None, "one space deeper"),
            (2, Marker::Bullet, None, "six spaces"),
            (2, Marker::Bullet, None, "three spaces"),
            (3, Marker::Bullet, None, "a tab"),
            (
                0,
                Marker::Checkbox,
                Some(true),
                "done item\ncontinuation line of the done item\nindented paragraph after a blank line"
            ),
            (0, Marker::Bullet, None, "star bullet"),
            (0, Marker::Bullet, None, "plus bullet"),
            (0, Marker::Numbered, None, "paren numbered"),
            (0, Marker::Numbered, None, "ten"),
            (0, Marker::Checkbox, Some(true), "upper X"),
            (0, Marker::Checkbox, Some(false), ""),
        ]
    );
    let text = &p.sections[0].text;
    for line in [
        "-not an item",
        "---",
        "***",
        "#not a heading",
        "####### seven hashes is text",
        "## not a heading inside a fence",
        "# also not a heading",
    ] {
        assert!(text.lines().any(|l| l == line), "{line:?} is free text: {text:?}");
    }
    assert_eq!(item_texts(&p.sections[2]), ["item after heading"]);
}

#[test]
fn crlf_text_round_trips_and_parses_like_lf() {
    let lf = std::fs::read_to_string(own_fixtures().join("summaries/provider-preamble.md")).unwrap();
    let crlf = lf.replace('\n', "\r\n") + "\r\n<read-files>\r\na.rs\r\n</read-files>\r\n";
    let a = parse(&lf);
    let b = roundtrip(&crlf);
    assert_eq!(names(&a), names(&b));
    for (x, y) in a.sections.iter().zip(&b.sections) {
        assert_eq!(x.items, y.items);
        assert_eq!(x.text, y.text);
    }
    assert_eq!(b.read_files, ["a.rs"]);
}

#[test]
fn provider_answer_shapes() {
    // A preamble line and no blank lines between sections (Anthropic text blocks joined by "\n").
    let t = std::fs::read_to_string(own_fixtures().join("summaries/provider-preamble.md")).unwrap();
    let p = roundtrip(&t);
    assert_eq!(p.sections[0].name, "(untitled)");
    assert_eq!(p.sections[0].text, "Here is the checkpoint summary you asked for.");
    assert_eq!(item_texts(section(&p, "Progress › In Progress")), ["`summary diff`"]);
    assert_eq!(section(&p, "Key Decisions").items[0].text, "**Exit code 2**: errors are user errors");
    // A whole answer wrapped in ```markdown (seen from Gemini): the headings still count.
    let t = std::fs::read_to_string(own_fixtures().join("summaries/fenced-answer.md")).unwrap();
    let p = roundtrip(&t);
    assert_eq!(names(&p), ["(untitled)", "Goal", "Progress", "Progress › Done"]);
    assert_eq!(item_texts(section(&p, "Progress › Done")), ["Parser"]);
}

#[test]
fn a_one_megabyte_summary_parses_in_linear_time() {
    let mut t = String::from("## Goal\nBig.\n\n## Progress\n### Done\n");
    let mut k = 0;
    while t.len() < 1 << 20 {
        k += 1;
        t.push_str(&format!(
            "- [x] step {k} edited `src/module_{k}.rs` and ran `cargo test`\n  with a continuation line\n"
        ));
        if k % 500 == 0 {
            t.push_str(&format!("### Batch {k}\n```\n# code {k}\n```\n"));
        }
    }
    let start = Instant::now();
    let p = roundtrip(&t);
    let one = start.elapsed();
    assert!(p.sections.iter().map(|s| s.items.len()).sum::<usize>() == k);
    let double = t.clone() + &t;
    let start = Instant::now();
    let p2 = parse(&double);
    let two = start.elapsed();
    assert_eq!(print(&p2), double);
    // Unoptimized test builds are slow; the point is no quadratic blow-up.
    assert!(one.as_secs_f64() < 3.0, "1 MB took {one:?}");
    assert!(two.as_secs_f64() < one.as_secs_f64() * 4.0 + 0.05, "2 MB took {two:?} vs {one:?} for 1 MB");
    // A diff of two big summaries stays fast too (fuzzy matching is capped).
    let start = Instant::now();
    let d = diff(&p, &parse(&t.replace("continuation", "follow-up")));
    assert!(start.elapsed().as_secs_f64() < 10.0);
    assert!(d.sections.iter().map(|s| s.reworded.len() + s.added.len()).sum::<usize>() > 0);
}

#[test]
fn replace_section_replaces_one_body_and_keeps_the_rest() {
    let t = "## Goal\nOld goal.\n\n## Constraints & Preferences\n- a\n\n<read-files>\nx\n</read-files>";
    let out = replace_section(t, 0, "New goal.\n- with an item");
    assert_eq!(
        out,
        "## Goal\nNew goal.\n- with an item\n\n## Constraints & Preferences\n- a\n\n<read-files>\nx\n</read-files>"
    );
    let out = replace_section(t, 1, "- a\n- b");
    assert_eq!(out, "## Goal\nOld goal.\n\n## Constraints & Preferences\n- a\n- b\n\n<read-files>\nx\n</read-files>");
    assert_eq!(replace_section(t, 9, "x"), t);
    // A heading at the very end gets its newline before the body.
    assert_eq!(replace_section("## Goal", 0, "x"), "## Goal\nx");
}

fn markdownish() -> impl Strategy<Value = String> {
    let frag = prop::sample::select(vec![
        "## Goal\n",
        "### Done\n",
        "# Context Checkpoint\n",
        "- [x] a\n",
        "- [ ] b\n",
        "  - nested\n",
        "1. one\n",
        "2) two\n",
        "* star\n",
        "```\n",
        "~~~\n",
        "```rust\n",
        "\n",
        "\r\n",
        "text ",
        "# ",
        "####### ",
        "\t",
        "é",
        "東京",
        "<read-files>\n",
        "</read-files>\n",
        "<modified-files>\n",
        "</modified-files>",
        "\n\n---\n\n**Turn Context (split turn):**\n\n",
        "---\n",
        "   ",
        "#",
        "-",
        "[x]",
        "\r",
    ]);
    prop::collection::vec(frag, 0..40).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn print_parse_is_identity_on_markdownish_text(t in markdownish()) {
        let p = parse(&t);
        prop_assert_eq!(print(&p), t.clone());
        for (i, _) in p.sections.iter().enumerate() {
            let out = replace_section(&t, i, "- replaced");
            let q = parse(&out);
            prop_assert_eq!(print(&q), out.clone());
        }
    }

    #[test]
    fn print_parse_is_identity_on_any_text(t in any::<String>()) {
        prop_assert_eq!(print(&parse(&t)), t);
    }
}

// ---- diff and drop alarm ------------------------------------------------------------------

fn sd<'a>(d: &'a SummaryDiff, title: &str) -> &'a SectionDiff {
    d.sections
        .iter()
        .find(|s| s.title == title)
        .unwrap_or_else(|| panic!("no {title} in {:?}", d.sections.iter().map(|s| &s.title).collect::<Vec<_>>()))
}

#[test]
fn diff_reports_added_removed_reworded_and_moved_per_section() {
    let d = diff(&parse(PREV), &parse(NEXT));
    let c = sd(&d, "Constraints & Preferences");
    assert_eq!(c.removed, ["Use Rust only"]);
    assert!(c.added.is_empty());
    assert_eq!(c.reworded.len(), 1);
    assert_eq!(
        (c.reworded[0].from.as_str(), c.reworded[0].to.as_str()),
        ("Never rewrite session files", "Never rewrite the session files")
    );
    let inserted: String =
        c.reworded[0].words.iter().filter(|w| w.op == WordOp::Insert).map(|w| w.text.as_str()).collect();
    assert_eq!(inserted.trim(), "the");
    let done = sd(&d, "Progress › Done");
    assert_eq!(done.unchanged, ["Read the format docs"]);
    assert!(done.added.is_empty(), "moved items are not additions: {:?}", done.added);
    let ip = sd(&d, "Progress › In Progress");
    assert_eq!(ip.added, ["Benchmark the parser"]);
    assert!(ip.removed.is_empty(), "moved items are not removals: {:?}", ip.removed);
    let moved: Vec<(&str, &str, &str)> =
        d.moved.iter().map(|m| (m.text.as_str(), m.from.as_str(), m.to.as_str())).collect();
    assert_eq!(
        moved,
        [
            ("Write the section parser", "Progress › In Progress", "Progress › Done"),
            ("CRLF support added", "Progress › In Progress", "Progress › Done")
        ]
    );
    let kd = sd(&d, "Key Decisions");
    assert_eq!(kd.removed, ["**similar crate**: word diffs come from a maintained library"]);
    assert_eq!(kd.added, ["**Parser**: one pass over lines"]);
    let ns = sd(&d, "Next Steps");
    assert_eq!(
        (ns.unchanged.as_slice(), ns.added.as_slice()),
        (&["Write tests".to_string()][..], &["Run the benchmark".to_string()][..])
    );
    assert_eq!(sd(&d, "Progress › Blocked").removed, ["(none)"]);
    assert_eq!(sd(&d, "Goal").unchanged, ["Build the parser."]);
    assert!(!sd(&d, "Goal").text_changed);
    assert_eq!(d.files_added, ["src/parse.rs"]);
    assert!(d.files_removed.is_empty());
    // Against itself: nothing.
    assert!(diff(&parse(NEXT), &parse(NEXT)).is_empty());
}

#[test]
fn placeholders_are_never_moved() {
    let a = parse("## Progress\n### In Progress\n- [ ] (none)\n\n### Blocked\n- Waiting for CI\n");
    let b = parse("## Progress\n### In Progress\n- [ ] Fix the flaky test\n\n### Blocked\n- (none)\n");
    let d = diff(&a, &b);
    assert!(d.moved.is_empty(), "{:?}", d.moved);
    assert_eq!(sd(&d, "Progress › In Progress").removed, ["(none)"]);
    assert_eq!(sd(&d, "Progress › Blocked").added, ["(none)"]);
}

#[test]
fn sections_match_by_role_across_writers() {
    let a = parse("## Completed Work\n- Added the parser\n\n## Decisions\n- Keep it linear\n");
    let b = parse("## Progress\n### Done\n- [x] Added the parser\n\n## Key Decisions\n- Keep it linear\n");
    let d = diff(&a, &b);
    assert_eq!(sd(&d, "Progress › Done").unchanged, ["Added the parser"]);
    assert_eq!(sd(&d, "Progress › Done").from_title.as_deref(), Some("Completed Work"));
    assert_eq!(sd(&d, "Key Decisions").unchanged, ["Keep it linear"]);
    assert!(d.moved.is_empty());
}

#[test]
fn drop_alarm_lists_what_the_new_summary_no_longer_carries() {
    let dropped = summary_analysis::check::dropped_items(&parse(PREV), &parse(NEXT));
    let got: Vec<(&str, &str)> = dropped.iter().map(|d| (d.section.as_str(), d.text.as_str())).collect();
    assert_eq!(
        got,
        [
            ("Constraints & Preferences", "Use Rust only"),
            ("Key Decisions", "**similar crate**: word diffs come from a maintained library")
        ]
    );
    // Merged into a longer line, or reworded: still carried.
    let merged = NEXT.replace(
        "- **Parser**: one pass over lines",
        "- **Parser**: one pass over lines; word diffs come from the maintained similar crate library",
    );
    let merged =
        merged.replace("- Never rewrite the session files", "- Never rewrite the session files, use only Rust");
    assert!(summary_analysis::check::dropped_items(&parse(PREV), &parse(&merged)).is_empty());
}

/// A split-turn compaction as Pi writes it: the history summary, Pi's marker, then the turn
/// prefix's three sections.
const SPLIT_PREV: &str = "## Goal
Fix the ledger's rounding bug.

## Constraints & Preferences
- Never touch `ledger/legacy.py`

## Progress
### Done
- [x] Read `ledger/core.py`

## Key Decisions
- **Decimal**: amounts are `Decimal`, not float

## Critical Context
- Tests run with `python -m pytest`

---

**Turn Context (split turn):**

## Original Request
Make `total()` round half up.

## Early Progress
- Ran `mypy ledger` → command not found
- Decided to keep the rounding in `total()` instead of `add()`
- [x] Edited `ledger/core.py`

## Context for Suffix
- Last note before the cut: the second test still fails
- Error in the prefix: AssertionError: 10.05 != 10.1";

/// The next compaction: the history carried, the turn's beginning told as its outcome.
const SPLIT_NEXT: &str = "## Goal
Fix the ledger's rounding bug.

## Constraints & Preferences
- Never touch `ledger/legacy.py`

## Progress
### Done
- [x] Read `ledger/core.py`
- [x] `total()` rounds half up; all tests pass

## Key Decisions
- **Decimal**: amounts are `Decimal`, not float

## Critical Context
- Tests run with `python -m pytest`";

#[test]
fn a_split_turns_prefix_owes_the_next_summary_only_its_rules() {
    let prev = parse(SPLIT_PREV);
    assert!(
        prev.sections.iter().any(|s| s.turn_prefix && s.name == "Turn Context › Context for Suffix"),
        "{:?}",
        prev.sections
    );
    // Only the prefix's decision outlives the turn: its progress, the request and the
    // context for the suffix are owed nothing.
    let dropped = summary_analysis::check::dropped_items(&prev, &parse(SPLIT_NEXT));
    let got: Vec<(&str, &str)> = dropped.iter().map(|d| (d.section.as_str(), d.text.as_str())).collect();
    assert_eq!(
        got,
        [("Turn Context › Early Progress", "Decided to keep the rounding in `total()` instead of `add()`")]
    );
    // Carried into Key Decisions: nothing dropped, and that move is reported.
    let carried = SPLIT_NEXT.replace(
        "- **Decimal**: amounts are `Decimal`, not float",
        "- **Decimal**: amounts are `Decimal`, not float\n- Decided to keep the rounding in `total()` instead of `add()`",
    );
    assert!(summary_analysis::check::dropped_items(&prev, &parse(&carried)).is_empty());
    let moved = summary_analysis::check::moved_items(&prev, &parse(&carried));
    assert_eq!(
        moved.iter().map(|m| (m.from.as_str(), m.to.as_str())).collect::<Vec<_>>(),
        [("Turn Context › Early Progress", "Key Decisions")]
    );
    // A prefix item folded into Done is the expected path, not a move worth reporting; the
    // same diff still shows it as moved.
    let folded = SPLIT_NEXT.replace("- [x] `total()` rounds half up; all tests pass", "- [x] Edited `ledger/core.py`");
    assert!(summary_analysis::check::moved_items(&prev, &parse(&folded))
        .iter()
        .all(|m| !m.from.starts_with("Turn Context")));
    assert!(diff(&prev, &parse(&folded)).moved.iter().any(|m| m.from == "Turn Context › Early Progress"));
    // The history's own items stay watched: dropping the constraint is reported.
    let lost = SPLIT_NEXT.replace("- Never touch `ledger/legacy.py`\n", "");
    let dropped = summary_analysis::check::dropped_items(&prev, &parse(&lost));
    assert!(
        dropped.iter().any(|d| d.section == "Constraints & Preferences" && d.text == "Never touch `ledger/legacy.py`"),
        "{dropped:?}"
    );
}

#[test]
fn states_rule_reads_constraints_and_decisions_not_progress() {
    use summary_analysis::check::states_rule;
    for t in [
        "Never touch legacy.py",
        "Decided to use Decimal",
        "Chose sqlite instead of files",
        "don\u{2019}t log secrets",
        "Use dataclasses rather than dicts",
    ] {
        assert!(states_rule(t), "{t}");
    }
    for t in [
        "Ran `mypy ledger` → command not found",
        "Edited core.py",
        "Last note before the cut: the test fails",
        "Read the docs",
    ] {
        assert!(!states_rule(t), "{t}");
    }
}
