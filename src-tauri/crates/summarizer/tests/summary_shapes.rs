//! The summary workbench's parser on the summaries this crate writes: the offline summarizer
//! on every conformance case (compactions, split turns, repeated compactions, branch
//! summaries), and the three provider paths (OpenAI-compatible, Anthropic, Gemini) through
//! loopback servers, with the answer shapes models produce.
mod support;
use serde_json::json;
use session_engine::context::CompactionSettings;
use session_engine::{entries, Session};
use std::path::{Path, PathBuf};
use summarizer::run::{
    compaction_entry, plan_compaction, plan_navigation, summarize_branch, summarize_compaction, Backend, RunOptions,
};
use summarizer::{ApiKey, CancellationToken, Client, ProviderConfig, Wire};
use summary_analysis::{parse, print, SectionRole, Summary};
use support::loopback::{ok_answer, prompt_of, Fmt, Script, Server};

fn conformance() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../session-engine/tests/fixtures/conformance")
}

fn settings(keep: f64) -> CompactionSettings {
    CompactionSettings { enabled: true, reserve_tokens: 16384.0, keep_recent_tokens: keep }
}

fn opts() -> RunOptions {
    RunOptions { record_extras: false, ..RunOptions::default() }
}

fn roundtrip(t: &str) -> Summary {
    let p = parse(t);
    assert_eq!(print(&p), t);
    p
}

fn names(p: &Summary) -> Vec<&str> {
    p.sections.iter().map(|s| s.name.as_str()).collect()
}

const TEMPLATE: [(&str, SectionRole); 9] = [
    ("Goal", SectionRole::Goal),
    ("Constraints & Preferences", SectionRole::Constraints),
    ("Progress", SectionRole::Other),
    ("Progress › Done", SectionRole::Done),
    ("Progress › In Progress", SectionRole::InProgress),
    ("Progress › Blocked", SectionRole::Blocked),
    ("Key Decisions", SectionRole::Decisions),
    ("Next Steps", SectionRole::NextSteps),
    ("Critical Context", SectionRole::CriticalContext),
];

fn assert_template(p: &Summary, with_critical: bool, what: &str) {
    let want: Vec<(&str, SectionRole)> =
        TEMPLATE.iter().copied().filter(|(n, _)| with_critical || *n != "Critical Context").collect();
    let got: Vec<(&str, SectionRole)> =
        p.history_sections().filter(|s| s.level > 0).map(|s| (s.name.as_str(), s.role)).collect();
    assert_eq!(got, want, "{what}");
}

#[tokio::test]
async fn offline_summaries_of_every_case_parse_into_pis_template() {
    let mut compactions = 0;
    let mut split = 0;
    let mut files: Vec<PathBuf> = std::fs::read_dir(conformance())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    for f in files {
        let session = Session::open(&f).unwrap();
        if session.read_only().is_some() || session.is_empty() {
            continue;
        }
        for keep in [800.0, 6000.0] {
            let Ok(job) = plan_compaction(&session, None, &settings(keep)) else { continue };
            let out =
                summarize_compaction(&job, &Backend::Offline, &opts(), &CancellationToken::new(), None).await.unwrap();
            let what = format!("{} keep {keep}", f.display());
            let p = roundtrip(&out.summary);
            let history_empty = job.prep.messages_to_summarize.is_empty() && job.prep.needs_prefix_call();
            if history_empty {
                assert_eq!(p.sections[0].text, "No prior history.", "{what}");
            } else {
                assert_template(&p, true, &what);
                let done = p.sections.iter().find(|x| x.name == "Progress › Done").unwrap();
                assert!(done.items.iter().all(|i| i.checked == Some(true)), "{what}: {:?}", done.items);
            }
            if job.prep.needs_prefix_call() {
                split += 1;
                let turn: Vec<&str> = p.sections.iter().filter(|x| x.turn_prefix).map(|x| x.name.as_str()).collect();
                assert_eq!(
                    turn,
                    [
                        "Turn Context",
                        "Turn Context › Original Request",
                        "Turn Context › Early Progress",
                        "Turn Context › Context for Suffix"
                    ],
                    "{what}"
                );
            }
            assert_eq!(p.read_files, job.prep.read_files, "{what}");
            assert_eq!(p.modified_files, job.prep.modified_files, "{what}");
            compactions += 1;
        }
    }
    assert!(compactions >= 60 && split >= 5, "{compactions} compactions, {split} split turns");
}

/// Compacts `file` offline, appends the entry and a new turn, and returns the entry's id.
async fn compact_offline(file: &Path, keep: f64, turn: usize) -> String {
    let session = Session::open(file).unwrap();
    let job = plan_compaction(&session, None, &settings(keep)).unwrap();
    let out = summarize_compaction(&job, &Backend::Offline, &opts(), &CancellationToken::new(), None).await.unwrap();
    let id = format!("cmp{turn:05}");
    let e = compaction_entry(&job, &out, &id, "2030-01-01T00:00:00.000Z");
    let mut text = std::fs::read_to_string(file).unwrap();
    text.push_str(&entries::line(&e));
    text.push('\n');
    let u = entries::message(
        &format!("usr{turn:05}"),
        Some(&id),
        "2030-01-01T00:00:01.000Z",
        pi_json::parse(&format!(
            r#"{{"role":"user","content":"Turn {turn}: you must keep the CLI output stable.","timestamp":1}}"#
        ))
        .unwrap(),
    );
    text.push_str(&entries::line(&u));
    text.push('\n');
    let a = entries::message(
        &format!("ast{turn:05}"),
        Some(&format!("usr{turn:05}")),
        "2030-01-01T00:00:02.000Z",
        pi_json::parse(r#"{"role":"assistant","content":[{"type":"text","text":"Understood."}],"provider":"p","model":"m","timestamp":2}"#).unwrap(),
    );
    text.push_str(&entries::line(&a));
    text.push('\n');
    std::fs::write(file, text).unwrap();
    id
}

#[tokio::test]
async fn repeated_offline_compactions_carry_the_watched_sections() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.jsonl");
    std::fs::copy(conformance().join("basic-tool-chain.jsonl"), &file).unwrap();
    let c1 = compact_offline(&file, 800.0, 1).await;
    let c2 = compact_offline(&file, 0.0, 2).await;
    let session = Session::open(&file).unwrap();
    let (i1, i2) = (session.index_of(&c1).unwrap(), session.index_of(&c2).unwrap());
    assert_eq!(summary_analysis::previous_compaction(&session, i2), Some(i1));
    let ch = summary_analysis::check(&session, i2);
    assert_eq!(ch.previous_entry_id.as_deref(), Some(c1.as_str()));
    // The offline summarizer carries the previous summary's history sections forward, so none
    // of their items is dropped. It does not carry the split turn's "Early Progress" ("Ran `git
    // status`") into the next summary, and need not: that turn has finished inside the new span,
    // and progress in a turn's prefix is owed to no later summary (only its rules are).
    let dropped: Vec<(&str, &str)> = ch.dropped.iter().map(|d| (d.section.as_str(), d.text.as_str())).collect();
    assert_eq!(dropped, []);
    let prev = parse(summary_analysis::summary_text(&session, i1));
    assert!(
        prev.sections.iter().any(|x| x.turn_prefix && x.items.iter().any(|i| i.text == "Ran `git status`")),
        "the prefix's progress is there to be left out"
    );
    // The new user constraint is a fact of the second span, and the offline summary keeps it.
    let f = ch
        .retention
        .facts
        .iter()
        .find(|f| f.text == "Turn 1: you must keep the CLI output stable.")
        .expect("the constraint is a fact");
    assert_eq!(f.source_entry_id, "usr00001");
    assert!(f.mentioned, "{:?}", f);
    let d = summary_analysis::diff(
        &parse(summary_analysis::summary_text(&session, i1)),
        &parse(summary_analysis::summary_text(&session, i2)),
    );
    // The new constraint shows as added (in the split turn's part, where the offline summarizer puts the turn's request).
    let added: Vec<(&str, &str)> = d
        .sections
        .iter()
        .flat_map(|x| x.added.iter().map(move |a| (x.title.as_str(), a.as_str())))
        .filter(|(_, a)| a.contains("Turn 1"))
        .collect();
    assert_eq!(added, [("Turn Context › Original Request", "Turn 1: you must keep the CLI output stable.")]);
}

#[tokio::test]
async fn offline_branch_summary_parses_with_pis_preamble() {
    let session = Session::open(&conformance().join("branch-simple-siblings.jsonl")).unwrap();
    let job = plan_navigation(&session, None, "55732918", true, 0.0).unwrap();
    let out = summarize_branch(&job, &Backend::Offline, &opts(), None, &CancellationToken::new(), None)
        .await
        .unwrap()
        .unwrap();
    let p = roundtrip(&out.summary);
    assert_eq!(p.sections[0].name, "(untitled)");
    assert_eq!(
        p.sections[0].text,
        "The user explored a different conversation branch before returning here.\nSummary of that exploration:"
    );
    assert_template(&p, false, "branch");
}

const HISTORY: &str = "## Goal
Make the indexer faster.

## Constraints & Preferences
- Never rewrite session files
- Keep `print(parse(t)) == t`

## Progress
### Done
- [x] Profiled `src/index.rs`
- [x] Replaced the JSON parser

### In Progress
- [ ] Batch SQLite writes

### Blocked
- (none)

## Key Decisions
- **SIMD parser**: 3x faster on large files

## Next Steps
1. Measure on the 100k session
2. Update the docs

## Critical Context
- The benchmark lives in `examples/summary_bench.rs`";

const PREFIX: &str = "## Original Request
Speed up search.

## Early Progress
- Read `src/search.rs`

## Context for Suffix
- The FTS table is rebuilt on every run";

/// The answer a provider gives, in the shape models of that family tend to use.
fn shaped(fmt: Fmt, text: &str) -> String {
    match fmt {
        Fmt::OpenAi => text.to_string(),
        // A preamble line right before the first heading, trailing whitespace.
        Fmt::Anthropic => format!("Here is the structured summary.\n{text}\n\n"),
        // The whole answer in a markdown fence.
        Fmt::Gemini => format!("```markdown\n{text}\n```"),
    }
}

async fn provider_split_turn(fmt: Fmt) {
    let session = Session::open(&conformance().join("cut-split-turn.jsonl")).unwrap();
    let job = plan_compaction(&session, None, &settings(6000.0)).unwrap();
    assert!(job.prep.needs_history_call() && job.prep.needs_prefix_call());
    let server = Server::start(move |r, _| {
        let prefix = prompt_of(fmt, r).ends_with(summarizer::prompts::TURN_PREFIX);
        let text = shaped(fmt, if prefix { PREFIX } else { HISTORY });
        if fmt == Fmt::Anthropic && !prefix && r.json()["stream"].as_bool() != Some(true) {
            // Two text blocks (Pi joins them with "\n").
            let (a, b) = text.split_once("\n## Constraints").unwrap();
            return Script::json(
                200,
                &json!({"id":"m","type":"message","role":"assistant","content":[{"type":"text","text":a},{"type":"text","text":format!("## Constraints{b}")}],"stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":7}}),
            );
        }
        ok_answer(fmt, r, &text)
    })
    .await;
    let wire = match fmt {
        Fmt::OpenAi => Wire::OpenAi,
        Fmt::Anthropic => Wire::Anthropic,
        Fmt::Gemini => Wire::Gemini,
    };
    let mut cfg = ProviderConfig::new(wire, "m", Some(ApiKey::new("k")));
    cfg.base_url = if fmt == Fmt::OpenAi { server.base_v1() } else { server.base() };
    cfg.retry.max_retries = 0;
    let backend = Backend::Model(Client::new(cfg).unwrap());
    let out = summarize_compaction(&job, &backend, &opts(), &CancellationToken::new(), None).await.unwrap();
    assert_eq!(server.count(), 2);
    let what = format!("{fmt:?}");
    let p = roundtrip(&out.summary);
    assert_template(&p, true, &what);
    let done = p.sections.iter().find(|x| x.role == SectionRole::Done && !x.turn_prefix).unwrap();
    assert_eq!(
        done.items.iter().map(|i| i.text.as_str()).collect::<Vec<_>>(),
        ["Profiled `src/index.rs`", "Replaced the JSON parser"],
        "{what}"
    );
    let turn: Vec<&str> = p.sections.iter().filter(|x| x.turn_prefix && x.level > 0).map(|x| x.name.as_str()).collect();
    assert_eq!(
        turn,
        ["Turn Context › Original Request", "Turn Context › Early Progress", "Turn Context › Context for Suffix"],
        "{what}"
    );
    assert!(p.turn_prefix.is_some());
    assert_eq!(p.read_files, job.prep.read_files, "{what}");
    assert_eq!(p.modified_files, job.prep.modified_files, "{what}");
    assert!(!p.read_files.is_empty() || !p.modified_files.is_empty(), "the case has file lists");
    assert_eq!(
        names(&p).iter().filter(|n| n.starts_with("(untitled)")).count(),
        if fmt == Fmt::OpenAi { 0 } else { 1 },
        "{what}: {:?}",
        names(&p)
    );
}

#[tokio::test]
async fn openai_path_summary_parses() {
    provider_split_turn(Fmt::OpenAi).await;
}

#[tokio::test]
async fn anthropic_path_summary_parses() {
    provider_split_turn(Fmt::Anthropic).await;
}

#[tokio::test]
async fn gemini_path_summary_parses() {
    provider_split_turn(Fmt::Gemini).await;
}
