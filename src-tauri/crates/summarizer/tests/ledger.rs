//! The artifact ledger as an option of the summaries the summarizer writes: off, the entry holds
//! the model's text alone; on, a `## Artifacts` section judged on the written text (a split
//! turn's merged text) goes before Pi's file lists, and `tokensAfter` counts it.
mod support;
use pi_json::Value;
use session_engine::context::CompactionSettings;
use session_engine::Session;
use summarizer::run::{Backend, RunOptions};
use summarizer::session_ops::{compact_file, navigate_file};
use summarizer::CancellationToken;
use support::loopback::{ok_answer, prompt_of, Fmt, Server};

fn settings() -> CompactionSettings {
    CompactionSettings { enabled: true, reserve_tokens: 16384.0, keep_recent_tokens: 6000.0 }
}

fn opts(ledger: bool) -> RunOptions {
    RunOptions { artifact_ledger: ledger, ..RunOptions::default() }
}

/// A model that answers every call with a text that names no artifact.
async fn terse_model() -> Server {
    Server::start(|r, _| {
        let prompt = prompt_of(Fmt::Anthropic, r);
        let text = if prompt.ends_with(summarizer::prompts::TURN_PREFIX) { "PREFIX" } else { "HISTORY" };
        ok_answer(Fmt::Anthropic, r, text)
    })
    .await
}

fn last_entry(file: &std::path::Path) -> (Session, usize) {
    let s = Session::open(file).unwrap();
    let i = s.len() - 1;
    (s, i)
}

#[tokio::test]
async fn a_compaction_with_the_ledger_lists_what_the_merged_text_leaves_out_before_the_file_lists() {
    let dir = tempfile::tempdir().unwrap();
    let server = terse_model().await;
    let backend = Backend::Model(support::anthropic_client(&server));
    let cancel = CancellationToken::new();

    let off = support::copy_case(dir.path(), "cut-split-turn");
    let plain = compact_file(&off, None, &settings(), &backend, &opts(false), &cancel, None).await.unwrap();
    assert!(!plain.outcome.summary.contains("## Artifacts"), "off by default: {}", plain.outcome.summary);

    let on_dir = dir.path().join("on");
    std::fs::create_dir_all(&on_dir).unwrap();
    let on = support::copy_case(&on_dir, "cut-split-turn");
    let done = compact_file(&on, None, &settings(), &backend, &opts(true), &cancel, None).await.unwrap();
    let text = &done.outcome.summary;
    assert_eq!(done.outcome.first_kept_entry_id, plain.outcome.first_kept_entry_id, "the same cut");
    let at = text.find("\n\n## Artifacts\n").expect("a ledger section");
    let files = text.find("<read-files>").or(text.find("<modified-files>")).expect("Pi's file lists");
    assert!(at < files, "the ledger goes before the file lists:\n{text}");
    assert!(
        text.starts_with("HISTORY\n\n---\n\n**Turn Context (split turn):**\n\nPREFIX\n\n## Artifacts\n"),
        "the merged text, then the ledger:\n{text}"
    );
    // Paths are in Pi's file lists already; the commands run and the errors seen are not.
    assert!(text.contains("\n- ran `git status`\n") && text.contains("\n- error: "), "{text}");

    // The ledger is the one summary-analysis gives the written entry for the model's text.
    let (s, idx) = last_entry(&on);
    assert_eq!(s.id(idx), done.entry_id);
    assert_eq!(summary_analysis::with_ledger(&s, idx, &plain.outcome.summary), *text);
    // Adding it again lists nothing twice: the written summary mentions every artifact it lists
    // (what it adds is what the budget left out the first time).
    let again = summary_analysis::with_ledger(&s, idx, text);
    assert!(again.starts_with(text.split("\n\n<read-files>").next().unwrap()), "{again}");
    for line in again.lines().filter(|l| l.starts_with("- ")) {
        assert_eq!(again.matches(&format!("\n{line}\n")).count(), 1, "{line} twice in {again}");
    }
    let answered = |t: &str| summary_analysis::score(&s, idx, t).by_kind.artifact.answered;
    assert!(answered(text) > answered(&plain.outcome.summary), "the ledger answers artifact probes");

    // tokensAfter is estimated on the text written, in the outcome and in details.
    assert!(done.outcome.tokens_after > plain.outcome.tokens_after);
    let v = s.value(idx);
    assert_eq!(v.str_field("summary"), Some(text.as_str()));
    let details = v.get("details").unwrap();
    assert_eq!(details.get("tokensAfter").and_then(Value::as_f64), Some(done.outcome.tokens_after));
}

#[tokio::test]
async fn with_extras_off_the_ledger_line_is_pis_line_with_the_longer_summary() {
    let dir = tempfile::tempdir().unwrap();
    let file = support::copy_case(dir.path(), "basic-tool-chain");
    let server = terse_model().await;
    let backend = Backend::Model(support::anthropic_client(&server));
    let o = RunOptions { record_extras: false, ..opts(true) };
    let keep = CompactionSettings { keep_recent_tokens: 20.0, ..settings() };
    let done = compact_file(&file, None, &keep, &backend, &o, &CancellationToken::new(), None).await.unwrap();
    let line: serde_json::Value = serde_json::from_str(&done.line).unwrap();
    let keys: Vec<&str> = line["details"].as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["readFiles", "modifiedFiles"], "no key Pi does not write");
    assert!(line["summary"].as_str().unwrap().contains("## Artifacts"), "{}", done.line);
}

#[tokio::test]
async fn an_offline_summary_gets_the_ledger_too_and_a_complete_one_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let file = support::copy_case(dir.path(), "cut-split-turn");
    let done = compact_file(&file, None, &settings(), &Backend::Offline, &opts(true), &CancellationToken::new(), None)
        .await
        .unwrap();
    let (s, idx) = last_entry(&file);
    // Whatever the offline text left out is listed; nothing it mentions is.
    assert_eq!(summary_analysis::with_ledger(&s, idx, &done.outcome.summary), done.outcome.summary);
}

#[tokio::test]
async fn a_branch_summary_with_the_ledger_lists_the_branch_left() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(|r, _| ok_answer(Fmt::Anthropic, r, "BRANCH")).await;
    let backend = Backend::Model(support::anthropic_client(&server));
    let file = support::copy_case(dir.path(), "branch-simple-siblings");
    let s = Session::open(&file).unwrap();
    let path = s.path(s.file_leaf());
    // Back to the first user message: the whole path after it is the branch left.
    let target = s.id(path[1]).to_string();
    drop(s);
    let done =
        navigate_file(&file, None, &target, true, 0.0, None, &backend, &opts(true), &CancellationToken::new(), None)
            .await
            .unwrap();
    let summary = done.summary.expect("a branch summary").summary;
    let at = summary.find("## Artifacts").expect("a ledger");
    assert!(summary[..at].contains("BRANCH"));
    if let Some(files) = summary.find("<read-files>").or(summary.find("<modified-files>")) {
        assert!(at < files, "{summary}");
    }
    let (s, idx) = last_entry(&file);
    let written = (0..s.len()).rev().find(|&i| s.value(i).str_field("type") == Some("branch_summary")).unwrap();
    assert!(written <= idx);
    assert_eq!(s.value(written).str_field("summary"), Some(summary.as_str()), "the entry holds the ledger");
}
