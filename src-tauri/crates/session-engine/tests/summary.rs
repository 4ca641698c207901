//! The summary workbench (issue 11) on real texts and on sessions built for the purpose:
//! the parser on every summary of the conformance corpus and on real-world shapes, the
//! print(parse(t)) == t property, the diff (reworded, moved), the drop alarm, the retention
//! probe, spans, and edit/revert entries.

use proptest::prelude::*;
use session_engine::context::{build_context, estimate_context};
use session_engine::entries;
use session_engine::json::{self, Value};
use session_engine::summary::{self, *};
use session_engine::{Kind, Session};
use std::path::{Path, PathBuf};
use std::time::Instant;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

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

// ---- a small session builder ------------------------------------------------------------

const TS: &str = "2026-01-01T00:00:00.000Z";

struct B {
    lines: Vec<String>,
    n: usize,
    leaf: Option<String>,
}

fn v(text: &str) -> Value {
    json::parse(text).unwrap()
}

impl B {
    fn new() -> B {
        B { lines: vec![entries::line(&entries::header("sess", TS, "/p", None))], n: 0, leaf: None }
    }
    fn next_id(&mut self) -> String {
        self.n += 1;
        format!("e{:03}", self.n)
    }
    fn ts(&self) -> String {
        format!("2026-01-01T00:{:02}:{:02}.000Z", self.n / 60, self.n % 60)
    }
    fn push(&mut self, e: Value) -> String {
        let id = e.str_field("id").unwrap().to_string();
        self.lines.push(entries::line(&e));
        self.leaf = Some(id.clone());
        id
    }
    fn msg(&mut self, m: Value) -> String {
        let id = self.next_id();
        let ts = self.ts();
        let e = entries::message(&id, self.leaf.as_deref(), &ts, m);
        self.push(e)
    }
    fn user(&mut self, text: &str) -> String {
        self.msg(v(&format!(r#"{{"role":"user","content":{},"timestamp":1}}"#, json::quote(text))))
    }
    fn assistant(&mut self, text: &str) -> String {
        self.msg(v(&format!(r#"{{"role":"assistant","content":[{{"type":"text","text":{}}}],"provider":"p","model":"m","timestamp":1}}"#, json::quote(text))))
    }
    /// An assistant message with tool calls: (name, arguments JSON).
    fn calls(&mut self, calls: &[(&str, &str)]) -> String {
        let blocks: Vec<String> =
            calls.iter().enumerate().map(|(i, (n, a))| format!(r#"{{"type":"toolCall","id":"c{i}","name":"{n}","arguments":{a}}}"#)).collect();
        self.msg(v(&format!(r#"{{"role":"assistant","content":[{}],"provider":"p","model":"m","timestamp":1}}"#, blocks.join(","))))
    }
    fn result(&mut self, tool: &str, text: &str, is_error: bool) -> String {
        self.msg(v(&format!(
            r#"{{"role":"toolResult","toolCallId":"c0","toolName":"{tool}","content":[{{"type":"text","text":{}}}],"isError":{is_error},"timestamp":1}}"#,
            json::quote(text)
        )))
    }
    fn bash(&mut self, command: &str, output: &str) -> String {
        self.msg(v(&format!(r#"{{"role":"bashExecution","command":{},"output":{},"exitCode":0,"timestamp":1}}"#, json::quote(command), json::quote(output))))
    }
    fn compaction(&mut self, text: &str, first_kept: &str, details: Option<Value>) -> String {
        let id = self.next_id();
        let ts = self.ts();
        let e = entries::compaction(&id, self.leaf.as_deref(), &ts, text, first_kept, 1000.0, details, false);
        self.push(e)
    }
    fn branch_summary(&mut self, text: &str) -> String {
        let id = self.next_id();
        let ts = self.ts();
        let e = entries::branch_summary(&id, self.leaf.as_deref(), &ts, text, None, false);
        self.push(e)
    }
    fn at(&mut self, id: &str) {
        self.leaf = Some(id.to_string());
    }
    fn text(&self) -> String {
        self.lines.join("\n") + "\n"
    }
    fn session(&self) -> Session {
        Session::from_bytes(self.text().into_bytes())
    }
}

fn idx(s: &Session, id: &str) -> usize {
    s.index_of(id).unwrap_or_else(|| panic!("no entry {id}"))
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
        let s = Session::open(&p).unwrap();
        for i in 0..s.len() {
            if !matches!(s.kind(i), Kind::Compaction | Kind::BranchSummary) {
                continue;
            }
            let Some(text) = s.value(i).str_field("summary") else { continue };
            seen += 1;
            let parsed = roundtrip(text);
            let joined: String = parsed.sections.iter().map(|x| x.raw.as_str()).collect::<String>() + &parsed.appendix_raw;
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
                    assert!(done.items.iter().all(|it| it.marker == Marker::Checkbox && it.checked == Some(true)), "{:?}", done.items);
                }
            }
            if text.contains(TURN_CONTEXT_MARKER) {
                split += 1;
                let tp = parsed.turn_prefix.as_deref().expect("split-turn part");
                if tp.starts_with("## Original Request") {
                    assert!(parsed.sections.iter().any(|x| x.name == "Turn Context › Original Request" && x.turn_prefix && x.role == SectionRole::Goal));
                }
                assert!(parsed.sections.iter().any(|x| x.name == "Turn Context" && x.raw.starts_with(TURN_CONTEXT_MARKER)));
            }
            // Pi writes the appendix from details: the lists agree (in order).
            let d = s.value(i).get("details");
            if !parsed.appendix_raw.is_empty() && !s.value(i).get("fromHook").is_some_and(Value::truthy) {
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
    assert!(templated >= 20 && with_appendix >= 5 && split >= 3, "templated {templated}, appendix {with_appendix}, split {split}");
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
    let t = std::fs::read_to_string(fixtures().join("summaries/context-checkpoint.md")).unwrap();
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
    assert_eq!((done.items[2].depth, done.items[2].marker, done.items[2].text.as_str()), (1, Marker::Bullet, "JSON output matches issue 11"));
    assert_eq!(done.items[4].depth, 0);
    assert_eq!(section(&p, "Context Checkpoint › Branch").text, "feature/summary-workbench (3 commits ahead of main)");
    assert_eq!(p.sections[0].level, 1);
    assert_eq!(p.sections[1].level, 2);
}

#[test]
fn german_and_japanese_headings_get_roles() {
    let p = roundtrip(&std::fs::read_to_string(fixtures().join("summaries/german.md")).unwrap());
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
    assert_eq!(item_texts(section(&p, "Fortschritt › Erledigt")), ["Parser geschrieben (`parse.rs`)", "Tests für CRLF"]);
    let p = roundtrip(&std::fs::read_to_string(fixtures().join("summaries/japanese.md")).unwrap());
    let roles: Vec<(&str, SectionRole)> = p.sections.iter().map(|s| (s.name.as_str(), s.role)).collect();
    assert_eq!(roles, [("目標", Goal), ("制約", Constraints), ("完了", Done), ("次のステップ", NextSteps)]);
    assert_eq!(item_texts(section(&p, "完了")), ["パーサーを実装した", "往復テストを追加した"]);
    // A reworded Japanese item still matches (characters as words).
    assert!(similar_items("パーサーを実装した", "パーサーを実装しました"));
}

#[test]
fn a_summary_without_headings_is_one_section() {
    let t = std::fs::read_to_string(fixtures().join("summaries/no-headings.md")).unwrap();
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
    let t = std::fs::read_to_string(fixtures().join("summaries/odd-nesting.md")).unwrap();
    let p = roundtrip(&t);
    assert_eq!(names(&p), ["Progress", "Closing hashes", "Closing hashes › Three spaces ok"]);
    let items: Vec<(u8, Marker, Option<bool>, &str)> = p.sections[0].items.iter().map(|i| (i.depth, i.marker, i.checked, i.text.as_str())).collect();
    assert_eq!(
        items,
        [
            (0, Marker::Bullet, None, "top level"),
            (1, Marker::Bullet, None, "one space deeper"),
            (2, Marker::Bullet, None, "six spaces"),
            (2, Marker::Bullet, None, "three spaces"),
            (3, Marker::Bullet, None, "a tab"),
            (0, Marker::Checkbox, Some(true), "done item\ncontinuation line of the done item\nindented paragraph after a blank line"),
            (0, Marker::Bullet, None, "star bullet"),
            (0, Marker::Bullet, None, "plus bullet"),
            (0, Marker::Numbered, None, "paren numbered"),
            (0, Marker::Numbered, None, "ten"),
            (0, Marker::Checkbox, Some(true), "upper X"),
            (0, Marker::Checkbox, Some(false), ""),
        ]
    );
    let text = &p.sections[0].text;
    for line in ["-not an item", "---", "***", "#not a heading", "####### seven hashes is text", "## not a heading inside a fence", "# also not a heading"] {
        assert!(text.lines().any(|l| l == line), "{line:?} is free text: {text:?}");
    }
    assert_eq!(item_texts(&p.sections[2]), ["item after heading"]);
}

#[test]
fn crlf_text_round_trips_and_parses_like_lf() {
    let lf = std::fs::read_to_string(fixtures().join("summaries/provider-preamble.md")).unwrap();
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
    let t = std::fs::read_to_string(fixtures().join("summaries/provider-preamble.md")).unwrap();
    let p = roundtrip(&t);
    assert_eq!(p.sections[0].name, "(untitled)");
    assert_eq!(p.sections[0].text, "Here is the checkpoint summary you asked for.");
    assert_eq!(item_texts(section(&p, "Progress › In Progress")), ["`summary diff`"]);
    assert_eq!(section(&p, "Key Decisions").items[0].text, "**Exit code 2**: errors are user errors");
    // A whole answer wrapped in ```markdown (seen from Gemini): the headings still count.
    let t = std::fs::read_to_string(fixtures().join("summaries/fenced-answer.md")).unwrap();
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
        t.push_str(&format!("- [x] step {k} edited `src/module_{k}.rs` and ran `cargo test`\n  with a continuation line\n"));
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
    assert_eq!(out, "## Goal\nNew goal.\n- with an item\n\n## Constraints & Preferences\n- a\n\n<read-files>\nx\n</read-files>");
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

const PREV: &str = "## Goal
Build the parser.

## Constraints & Preferences
- Never rewrite session files
- Use Rust only

## Progress
### Done
- [x] Read the format docs

### In Progress
- [ ] Write the section parser
- [ ] Add CRLF support

### Blocked
- (none)

## Key Decisions
- **similar crate**: word diffs come from a maintained library

## Next Steps
1. Write tests

## Critical Context
- Tests live in tests/summary.rs

<read-files>
docs/format.md
</read-files>";

const NEXT: &str = "## Goal
Build the parser.

## Constraints & Preferences
- Never rewrite the session files

## Progress
### Done
- [x] Read the format docs
- [x] Write the section parser
- [x] CRLF support added

### In Progress
- [ ] Benchmark the parser

## Key Decisions
- **Parser**: one pass over lines

## Next Steps
1. Write tests
2. Run the benchmark

## Critical Context
- Tests live in tests/summary.rs

<read-files>
docs/format.md
</read-files>

<modified-files>
src/parse.rs
</modified-files>";

fn sd<'a>(d: &'a SummaryDiff, title: &str) -> &'a SectionDiff {
    d.sections.iter().find(|s| s.title == title).unwrap_or_else(|| panic!("no {title} in {:?}", d.sections.iter().map(|s| &s.title).collect::<Vec<_>>()))
}

#[test]
fn diff_reports_added_removed_reworded_and_moved_per_section() {
    let d = diff(&parse(PREV), &parse(NEXT));
    let c = sd(&d, "Constraints & Preferences");
    assert_eq!(c.removed, ["Use Rust only"]);
    assert!(c.added.is_empty());
    assert_eq!(c.reworded.len(), 1);
    assert_eq!((c.reworded[0].from.as_str(), c.reworded[0].to.as_str()), ("Never rewrite session files", "Never rewrite the session files"));
    let inserted: String = c.reworded[0].words.iter().filter(|w| w.op == WordOp::Insert).map(|w| w.text.as_str()).collect();
    assert_eq!(inserted.trim(), "the");
    let done = sd(&d, "Progress › Done");
    assert_eq!(done.unchanged, ["Read the format docs"]);
    assert!(done.added.is_empty(), "moved items are not additions: {:?}", done.added);
    let ip = sd(&d, "Progress › In Progress");
    assert_eq!(ip.added, ["Benchmark the parser"]);
    assert!(ip.removed.is_empty(), "moved items are not removals: {:?}", ip.removed);
    let moved: Vec<(&str, &str, &str)> = d.moved.iter().map(|m| (m.text.as_str(), m.from.as_str(), m.to.as_str())).collect();
    assert_eq!(
        moved,
        [("Write the section parser", "Progress › In Progress", "Progress › Done"), ("CRLF support added", "Progress › In Progress", "Progress › Done")]
    );
    let kd = sd(&d, "Key Decisions");
    assert_eq!(kd.removed, ["**similar crate**: word diffs come from a maintained library"]);
    assert_eq!(kd.added, ["**Parser**: one pass over lines"]);
    let ns = sd(&d, "Next Steps");
    assert_eq!((ns.unchanged.as_slice(), ns.added.as_slice()), (&["Write tests".to_string()][..], &["Run the benchmark".to_string()][..]));
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
    let dropped = summary::check::dropped_items(&parse(PREV), &parse(NEXT));
    let got: Vec<(&str, &str)> = dropped.iter().map(|d| (d.section.as_str(), d.text.as_str())).collect();
    assert_eq!(got, [("Constraints & Preferences", "Use Rust only"), ("Key Decisions", "**similar crate**: word diffs come from a maintained library")]);
    // Merged into a longer line, or reworded: still carried.
    let merged =
        NEXT.replace("- **Parser**: one pass over lines", "- **Parser**: one pass over lines; word diffs come from the maintained similar crate library");
    let merged = merged.replace("- Never rewrite the session files", "- Never rewrite the session files, use only Rust");
    assert!(summary::check::dropped_items(&parse(PREV), &parse(&merged)).is_empty());
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
    assert!(prev.sections.iter().any(|s| s.turn_prefix && s.name == "Turn Context › Context for Suffix"), "{:?}", prev.sections);
    // Only the prefix's decision outlives the turn: its progress, the request and the
    // context for the suffix are owed nothing.
    let dropped = summary::check::dropped_items(&prev, &parse(SPLIT_NEXT));
    let got: Vec<(&str, &str)> = dropped.iter().map(|d| (d.section.as_str(), d.text.as_str())).collect();
    assert_eq!(got, [("Turn Context › Early Progress", "Decided to keep the rounding in `total()` instead of `add()`")]);
    // Carried into Key Decisions: nothing dropped, and that move is reported.
    let carried = SPLIT_NEXT.replace(
        "- **Decimal**: amounts are `Decimal`, not float",
        "- **Decimal**: amounts are `Decimal`, not float\n- Decided to keep the rounding in `total()` instead of `add()`",
    );
    assert!(summary::check::dropped_items(&prev, &parse(&carried)).is_empty());
    let moved = summary::check::moved_items(&prev, &parse(&carried));
    assert_eq!(moved.iter().map(|m| (m.from.as_str(), m.to.as_str())).collect::<Vec<_>>(), [("Turn Context › Early Progress", "Key Decisions")]);
    // A prefix item folded into Done is the expected path, not a move worth reporting; the
    // same diff still shows it as moved.
    let folded = SPLIT_NEXT.replace("- [x] `total()` rounds half up; all tests pass", "- [x] Edited `ledger/core.py`");
    assert!(summary::check::moved_items(&prev, &parse(&folded)).iter().all(|m| !m.from.starts_with("Turn Context")));
    assert!(diff(&prev, &parse(&folded)).moved.iter().any(|m| m.from == "Turn Context › Early Progress"));
    // The history's own items stay watched: dropping the constraint is reported.
    let lost = SPLIT_NEXT.replace("- Never touch `ledger/legacy.py`\n", "");
    let dropped = summary::check::dropped_items(&prev, &parse(&lost));
    assert!(dropped.iter().any(|d| d.section == "Constraints & Preferences" && d.text == "Never touch `ledger/legacy.py`"), "{dropped:?}");
}

#[test]
fn states_rule_reads_constraints_and_decisions_not_progress() {
    use summary::check::states_rule;
    for t in
        ["Never touch legacy.py", "Decided to use Decimal", "Chose sqlite instead of files", "don\u{2019}t log secrets", "Use dataclasses rather than dicts"]
    {
        assert!(states_rule(t), "{t}");
    }
    for t in ["Ran `mypy ledger` → command not found", "Edited core.py", "Last note before the cut: the test fails", "Read the docs"] {
        assert!(!states_rule(t), "{t}");
    }
}

// ---- sessions: span, check, retention -----------------------------------------------------

/// A session with known facts (see the test below for the answers).
fn facts_session() -> (B, [String; 4]) {
    let mut b = B::new();
    let u1 = b.user("Please refactor the parser. You must keep the public API stable. Never touch the session files directly! Thanks.");
    b.calls(&[("read", r#"{"path":"src/parse.rs"}"#), ("bash", r#"{"command":"cargo test -p engine"}"#)]);
    b.result("read", "fn parse() {}", false);
    b.result("bash", "running 3 tests\nerror[E0425]: cannot find value `x` in this scope\ntest result: FAILED. 2 passed; 1 failed", false);
    b.calls(&[("edit", r#"{"path":"src/lib/render.ts","oldText":"a","newText":"b"}"#), ("write", r#"{"path":"docs/notes.md","content":"x"}"#)]);
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
    let s = b.session();
    let sp = span(&s, idx(&s, &c1));
    assert!(sp.exact && sp.note.is_none());
    assert_eq!(sp.first_id.as_deref(), Some(u1.as_str()));
    assert_eq!(sp.entry_ids.len(), 7);
    assert_eq!(sp.last_id.as_deref(), Some("e007"));
    let (msgs, prev) = span_messages(&s, idx(&s, &c1));
    assert_eq!(msgs.len(), 7);
    assert!(prev.is_none());
    // A second compaction starts at the first one's firstKeptEntryId, without compaction entries.
    let a = b.user("now the docs");
    let kept2 = b.assistant("ok");
    b.user("more");
    let c2 = b.compaction("## Goal\nDocs.\n", &kept2, None);
    let s = b.session();
    let sp = span(&s, idx(&s, &c2));
    assert_eq!(sp.entry_ids, [kept.as_str(), "e009", a.as_str()]);
    let (_, prev) = span_messages(&s, idx(&s, &c2));
    assert!(prev.unwrap().starts_with("## Goal\nRefactor"));
    assert_eq!(previous_compaction(&s, idx(&s, &c2)), Some(idx(&s, &c1)));
    assert_eq!(previous_compaction(&s, idx(&s, &c1)), None);
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
    let s = b.session();
    for (id, needle) in [(&c, "not on its path"), (&c2, "not on its path")] {
        let sp = span(&s, idx(&s, id));
        assert!(!sp.exact);
        assert!(sp.note.as_deref().unwrap().contains(needle), "{:?}", sp.note);
    }
    assert_eq!(span(&s, idx(&s, &c)).entry_ids, [r.as_str(), "e003"]);
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
    let s = b.session();
    let sp = span(&s, idx(&s, &bs));
    assert!(!sp.exact);
    assert_eq!(sp.entry_ids, [x.as_str(), y.as_str()]);
    assert!(sp.note.unwrap().contains(&y));
    let (msgs, prev) = span_messages(&s, idx(&s, &bs));
    assert_eq!(msgs.len(), 2);
    assert!(prev.is_none());
    let p = parse(summary::summary_text(&s, idx(&s, &bs)));
    assert_eq!(p.sections[0].text, "The user explored a different conversation branch before returning here.\nSummary of that exploration:");
}

#[test]
fn retention_probe_finds_the_facts_of_the_span_with_known_answers() {
    let (b, [u1, _, c1, _]) = facts_session();
    let s = b.session();
    let r = retention(&s, idx(&s, &c1), summary::summary_text(&s, idx(&s, &c1)));
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
    assert_eq!(retention(&s, idx(&s, &c1), "Nothing here.").mentioned, 0);
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
    let s = b.session();
    let ch = check(&s, idx(&s, &c2));
    assert_eq!(ch.entry_id, c2);
    assert_eq!(ch.previous_entry_id.as_deref(), Some(c1.as_str()));
    assert_eq!(ch.dropped.len(), 2);
    assert_eq!(ch.dropped[0].text, "Use Rust only");
    assert_eq!(ch.moved.len(), 2);
    // The span's facts include the previous compaction's kept user message.
    assert!(ch.retention.facts.iter().all(|f| f.kind != FactKind::Constraint || f.source_entry_id != "e001"));
    let first = check(&s, idx(&s, &c1));
    assert!(first.previous_entry_id.is_none() && first.dropped.is_empty());
    assert_eq!(first.retention.facts[0].text, "must use Rust only");
    assert!(first.retention.facts[0].mentioned, "PREV says 'Use Rust only'");
    let json = serde_json::to_value(&ch).unwrap();
    assert!(json.get("previousEntryId").is_some() && json["retention"]["facts"].is_array());
}

// ---- edit and revert ----------------------------------------------------------------------

fn keys(v: &Value) -> Vec<String> {
    v.as_object().unwrap().iter().map(|(k, _)| k.clone()).collect()
}

#[test]
fn edit_then_revert_append_compactions_that_pi_reads_normally() {
    let (mut b, [_, kept, c1, _]) = facts_session();
    b.user("after the compaction");
    let leaf_before = b.assistant("reply");
    let s = b.session();
    let ci = idx(&s, &c1);
    let leaf = Some(idx(&s, &leaf_before));
    assert_eq!(governing_compaction(&s, leaf), Some(ci));
    assert!(edit_refusal(&s, ci, leaf).is_none());
    let before = build_context(&s, leaf);
    let text = summary::summary_text(&s, ci).replace("Keep the public API stable", "Keep the public API stable and documented");
    let e = edit_entry(&s, ci, leaf, &text, "edit0001", "2026-01-02T00:00:00.000Z").unwrap();
    assert_eq!(keys(&e), ["type", "id", "parentId", "timestamp", "summary", "firstKeptEntryId", "tokensBefore", "details", "fromHook"]);
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
    let verbatim = |c: &session_engine::Context| c.messages[1..].iter().map(|m| json::to_string(&m.message)).collect::<Vec<_>>();
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
    assert_eq!(rv.str_field("summary"), Some(summary::summary_text(&s, ci)));
    let d = rv.get("details").unwrap();
    assert_eq!(keys(d), ["readFiles", "modifiedFiles", "editedFrom", "editOrigin", "editKind", "revertedTo"]);
    assert_eq!((d.str_field("editedFrom"), d.str_field("editKind"), d.str_field("revertedTo")), (Some("edit0001"), Some("revert"), Some(c1.as_str())));
    b.lines.push(entries::line(&rv));
    let s3 = b.session();
    let ri = idx(&s3, "rev00001");
    let after = build_context(&s3, s3.file_leaf());
    assert_eq!(after.messages[0].message.str_field("summary"), Some(summary::summary_text(&s, ci)));
    assert_eq!(verbatim(&after), verbatim(&before));
    let h: Vec<(String, EditKind, Option<String>)> = history(&s3, ri).into_iter().map(|v| (v.entry_id, v.kind, v.edited_from)).collect();
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
    let s = b.session();
    let ci = idx(&s, &c1);
    let leaf = s.file_leaf();
    let r = edit_refusal(&s, idx(&s, &u1), leaf).unwrap();
    assert_eq!(r, format!("Entry {u1} is a message entry, not a compaction; only compaction summaries can be edited — select a compaction entry."));
    let r = revert_entry(&s, ci, leaf, "x", TS).unwrap_err();
    assert_eq!(r, format!("Entry {c1} is an original summary, not an edit, so there is nothing to revert; edit it instead."));
    assert_eq!(edit_entry(&s, ci, leaf, "   ", "x", TS).unwrap_err(), "The new summary is empty; write a summary, or cancel the edit.");
    let same = summary::summary_text(&s, ci).to_string();
    assert!(edit_entry(&s, ci, leaf, &same, "x", TS).unwrap_err().contains("change something"));
    // Off the path: a leaf on a branch before the compaction.
    let r = edit_refusal(&s, ci, Some(idx(&s, &u1))).unwrap();
    assert!(r.starts_with(&format!("Entry {c1} is not on the path to the leaf {u1}; move the leaf")), "{r}");
    assert!(edit_refusal(&s, ci, None).unwrap().contains("no leaf"));
    assert!(edit_refusal(&s, 999, leaf).unwrap().contains("no entry number 999"));
    for r in [edit_refusal(&s, idx(&s, &u1), leaf).unwrap(), revert_entry(&s, ci, leaf, "x", TS).unwrap_err()] {
        assert_eq!(r.matches(". ").count(), 0, "one sentence: {r}");
    }
    // A v1 file (read-only) refuses.
    let legacy = Session::open(&fixtures().join("conformance/load-v1-legacy.jsonl")).unwrap();
    let lc = legacy.compactions().next().unwrap();
    let r = edit_refusal(&legacy, lc, legacy.file_leaf()).unwrap();
    assert!(r.starts_with("Summaries of this session cannot be edited because it is read-only: This is a version 1 session file."), "{r}");
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
    let s = b.session();
    let e = edit_entry(&s, idx(&s, &c2), s.file_leaf(), "## Goal\nz", "n", TS).unwrap();
    let d = e.get("details").unwrap();
    assert_eq!(json::to_string(d.get("readFiles").unwrap()), r#"["r2.rs"]"#);
    assert_eq!(json::to_string(d.get("modifiedFiles").unwrap()), "[]");
    assert_eq!(summary::file_lists(&s, idx(&s, &c)), (vec!["dr.rs".to_string()], vec!["dm.rs".to_string()]));
}

#[test]
fn author_reads_the_entry() {
    let mut b = B::new();
    let k = b.user("a");
    let off = b.compaction("x", &k, Some(v(r#"{"readFiles":[],"modifiedFiles":[],"summarizer":{"provider":"offline"},"offline":true}"#)));
    let m = b.compaction("x", &k, Some(v(r#"{"readFiles":[],"modifiedFiles":[],"summarizer":{"provider":"anthropic","model":"claude"}}"#)));
    let pi = b.compaction("x", &k, Some(v(r#"{"readFiles":[],"modifiedFiles":[]}"#)));
    b.lines.push(r#"{"type":"compaction","id":"hk","parentId":"e001","timestamp":"2026-01-01T00:00:09.000Z","summary":"s","firstKeptEntryId":"e001","tokensBefore":1,"fromHook":true}"#.into());
    let s = b.session();
    assert_eq!(author(&s, idx(&s, &off)).kind, AuthorKind::Offline);
    let a = author(&s, idx(&s, &m));
    assert_eq!((a.kind, a.model.as_deref()), (AuthorKind::Model, Some("claude")));
    assert_eq!(author(&s, idx(&s, &pi)).kind, AuthorKind::Unknown);
    assert_eq!(author(&s, idx(&s, "hk")).kind, AuthorKind::Hook);
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
    b.calls(&[("edit", r#"{"path":"src/parse.rs","oldText":"a","newText":"b"}"#), ("bash", r#"{"command":"cargo bench"}"#)]);
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
    let s = b.session();
    let (i1, i2) = (idx(&s, &c1), idx(&s, &c2));
    let original = check(&s, i2);
    assert_eq!(original.previous_entry_id.as_deref(), Some(c1.as_str()));
    assert_eq!(
        dropped_texts(&original),
        [("Constraints & Preferences", "Use Rust only"), ("Key Decisions", "**similar crate**: word diffs come from a maintained library")]
    );
    assert!(span(&s, i2).entry_ids.len() >= 3);

    // The user restores the constraint: the edit no longer drops it, only the decision.
    let restored = NEXT.replace("- Never rewrite the session files\n", "- Never rewrite the session files\n- Use Rust only\n");
    let e1 = append_entry(&mut b, edit_entry(&s, i2, s.file_leaf(), &restored, "edit0001", TS));
    let s = b.session();
    let ei = idx(&s, &e1);
    assert_eq!(edit_origin(&s, ei), Some(i2));
    assert_eq!(edit_origin(&s, i2), None, "an original stands for itself");
    // Span, previous compaction, span messages: the origin's (read literally the span is empty
    // and the previous compaction is the original itself).
    assert_eq!(span(&s, ei), span(&s, i2));
    assert_eq!(previous_compaction(&s, ei), Some(i1));
    assert_eq!(span_messages(&s, ei), span_messages(&s, i2));
    let ch = check(&s, ei);
    assert_eq!(ch.entry_id, e1);
    assert_eq!(ch.previous_entry_id.as_deref(), Some(c1.as_str()), "compared with the summary the origin replaced");
    assert_eq!(dropped_texts(&ch), [("Key Decisions", "**similar crate**: word diffs come from a maintained library")]);
    assert!(ch.moved.iter().any(|m| m.text == "Write the section parser"), "{:?}", ch.moved);
    // Retention over the origin's span (and the origin's predecessor's file lists), probed with the edit's text.
    assert_eq!(ch.retention, retention(&s, i2, &restored));
    assert!(ch.retention.facts.iter().any(|f| f.kind == FactKind::Command && f.text == "cargo bench"), "{:?}", ch.retention.facts);
    // The default diff of an edit is against its original; of an original, the compaction before it.
    assert_eq!(diff_base(&s, ei), Some(i2));
    assert_eq!(diff_base(&s, i2), Some(i1));
    assert_eq!(diff_base(&s, i1), None);

    // An edit of the edit that deletes a Done item the predecessor had: the alarm says so.
    let cut = restored.replace("- [x] Read the format docs\n", "");
    let e2 = append_entry(&mut b, edit_entry(&s, ei, s.file_leaf(), &cut, "edit0002", TS));
    let s = b.session();
    let e2i = idx(&s, &e2);
    assert_eq!(edit_origin(&s, e2i), Some(i2), "the chain's origin, not the edit it was made from");
    let ch2 = check(&s, e2i);
    assert_eq!(ch2.previous_entry_id.as_deref(), Some(c1.as_str()));
    assert!(dropped_texts(&ch2).contains(&("Progress › Done", "Read the format docs")), "{:?}", ch2.dropped);
    assert_eq!(diff_base(&s, e2i), Some(i2));
    assert_eq!(span(&s, e2i), span(&s, i2));

    // A revert is the original again: the same check as the original, under its own id.
    let r = append_entry(&mut b, revert_entry(&s, e2i, s.file_leaf(), "rev00001", TS));
    let s = b.session();
    let ri = idx(&s, &r);
    let chr = check(&s, ri);
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
    let d = v(&format!(r#"{{"readFiles":[],"modifiedFiles":[],"editedFrom":"{side_c}","editOrigin":"{side_c}","editKind":"edit"}}"#));
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
    let s = b.session();
    assert_eq!(diff_base(&s, idx(&s, &bs1)), None);
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
    let s = b.session();
    // The previous summary on its path: a compaction, or a branch summary.
    assert_eq!(diff_base(&s, idx(&s, &bs2)), Some(idx(&s, &c)));
    assert_eq!(diff_base(&s, idx(&s, &bs3)), Some(idx(&s, &bs2)));
    // A branch summary replaces no summary: no previous entry, no drops, its own retention.
    let ch = check(&s, idx(&s, &bs2));
    assert_eq!(ch.previous_entry_id, None);
    assert!(ch.dropped.is_empty() && ch.moved.is_empty(), "{:?}", ch.dropped);
    assert_eq!(ch.retention, retention(&s, idx(&s, &bs2), summary::summary_text(&s, idx(&s, &bs2))));
    assert_eq!(diff_base(&s, 0), None, "not a summary");
}

#[test]
fn error_facts_are_the_lines_that_carry_the_error() {
    use summary::check::{error_lines, tool_error_lines};
    let npm = "> arbor-demo@1.0.0 build\n> tsc -p .\n\nsrc/cli/flags.ts(41,5): error TS2741: Property 'retryBudget' is missing in type '{ timeout: number; }'.";
    assert_eq!(tool_error_lines(npm), ["src/cli/flags.ts(41,5): error TS2741: Property 'retryBudget' is missing in type '{ timeout: number; }'."]);
    // A TypeScript code without the word "error" (tsc --pretty false output of some tools).
    assert_eq!(error_lines("> build\nsrc/a.ts:3:1 - TS2304: Cannot find name 'x'.\n"), ["src/a.ts:3:1 - TS2304: Cannot find name 'x'."]);
    assert!(error_lines("TSX files: 12\nSTATUS ok\nTS123 is not a code").is_empty());
    for (out, want) in [
        ("   Compiling x v0.1.0\nerror[E0425]: cannot find value `y` in this scope\n", "error[E0425]: cannot find value `y` in this scope"),
        ("running 2 tests\nthread 'main' panicked at src/lib.rs:3:5:\nboom", "thread 'main' panicked at src/lib.rs:3:5:"),
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
    assert_eq!(tool_error_lines("\n\n  Could not find the text to replace in a.ts  \nmore"), ["Could not find the text to replace in a.ts"]);
    assert!(tool_error_lines("  \n").is_empty());

    // In a built session: the isError bash result gives its error line, not its banner.
    let mut b = B::new();
    b.calls(&[("bash", r#"{"command":"npm run build"}"#)]);
    let r = b.result("bash", npm, true);
    let k = b.user("go");
    let c = b.compaction("Fixed the error TS2741: property retryBudget was missing in the flags type.", &k, None);
    let s = b.session();
    let errors: Vec<(String, String, bool)> =
        check(&s, idx(&s, &c)).retention.facts.into_iter().filter(|f| f.kind == FactKind::Error).map(|f| (f.text, f.source_entry_id, f.mentioned)).collect();
    assert_eq!(errors, [("src/cli/flags.ts(41,5): error TS2741: Property 'retryBudget' is missing in type '{ timeout: number; }'.".to_string(), r, true)]);
}
