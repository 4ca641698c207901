//! Compaction and branch-summary runs on real conformance sessions: parallel split-turn calls,
//! all-or-nothing results, hooks (cancel, replace, timeout, non-zero exit), offline summaries,
//! and the extra details Arbor records.
mod support;
use pi_json::Value;
use session_engine::context::CompactionSettings;
use session_engine::Session;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use summarizer::hooks::HookCommand;
use summarizer::run::{
    compaction_entry, navigation_entries, plan_compaction, plan_navigation, summarize_branch, summarize_compaction,
    Backend, RunOptions,
};
use summarizer::{ApiKey, CancellationToken, Client, Error, ProviderConfig, Wire};
use support::loopback::{ok_answer, prompt_of, Fmt, Script, Server, Step};

fn case(name: &str) -> Session {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("../session-engine/tests/fixtures/conformance/{name}.jsonl"));
    Session::open(&p).unwrap()
}

fn settings(reserve: f64, keep: f64) -> CompactionSettings {
    CompactionSettings { enabled: true, reserve_tokens: reserve, keep_recent_tokens: keep }
}

fn model(server: &Server) -> Backend {
    Backend::Model(support::anthropic_client(server))
}

fn no_extras() -> RunOptions {
    RunOptions { record_extras: false, ..RunOptions::default() }
}

fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

fn hook(path: &Path, timeout_ms: u64) -> Option<HookCommand> {
    Some(HookCommand { command: vec![path.display().to_string()], timeout_ms })
}

#[tokio::test]
async fn split_turn_runs_both_calls_in_parallel_and_merges_like_pi() {
    let s = case("cut-split-turn");
    let job = plan_compaction(&s, None, &settings(16384.0, 6000.0)).unwrap();
    assert!(job.prep.needs_history_call() && job.prep.needs_prefix_call());
    let arrivals: Arc<Mutex<Vec<Instant>>> = Arc::default();
    let a2 = arrivals.clone();
    let server = Server::start(move |r, _| {
        a2.lock().unwrap().push(Instant::now());
        let prompt = prompt_of(Fmt::Anthropic, r);
        let text = if prompt.ends_with(summarizer::prompts::TURN_PREFIX) { "PREFIX" } else { "HISTORY" };
        let mut s = Script(vec![Step::Sleep(Duration::from_millis(400))]);
        s.0.extend(ok_answer(Fmt::Anthropic, r, text).0);
        s
    })
    .await;
    let calls_seen: Arc<Mutex<Vec<(summarizer::offline::Kind, String)>>> = Arc::default();
    let c2 = calls_seen.clone();
    let progress: summarizer::ProgressFn = Arc::new(move |p| {
        if let summarizer::Progress::SummaryText { call, delta, .. } = p {
            c2.lock().unwrap().push((call, delta));
        }
    });
    let t = Instant::now();
    let out = summarize_compaction(&job, &model(&server), &no_extras(), &CancellationToken::new(), Some(&progress))
        .await
        .unwrap();
    let took = t.elapsed();
    let seen = calls_seen.lock().unwrap().clone();
    use summarizer::offline::Kind;
    let text_of = |c: Kind| seen.iter().filter(|(k, _)| *k == c).map(|(_, d)| d.as_str()).collect::<String>();
    assert_eq!(
        (text_of(Kind::History).as_str(), text_of(Kind::TurnPrefix).as_str()),
        ("HISTORY", "PREFIX"),
        "streamed progress is tagged per call"
    );
    let a = arrivals.lock().unwrap().clone();
    assert_eq!(a.len(), 2);
    let gap = if a[1] > a[0] { a[1] - a[0] } else { a[0] - a[1] };
    assert!(gap < Duration::from_millis(300), "second call started {gap:?} after the first: not parallel");
    assert!(took < Duration::from_millis(780), "took {took:?}: the two 400 ms calls ran one after the other");
    assert!(
        out.summary.starts_with("HISTORY\n\n---\n\n**Turn Context (split turn):**\n\nPREFIX\n\n<read-files>\n"),
        "{}",
        out.summary
    );
    assert_eq!(out.calls, 2);
    assert_eq!(out.usage.output, 14);
}

#[tokio::test]
async fn one_failed_call_fails_the_whole_compaction() {
    let s = case("cut-split-turn");
    let job = plan_compaction(&s, None, &settings(16384.0, 6000.0)).unwrap();
    let server = Server::start(|r, _| {
        if prompt_of(Fmt::Anthropic, r).ends_with(summarizer::prompts::TURN_PREFIX) {
            Script::response(401, &[], r#"{"error":{"message":"bad key"}}"#)
        } else {
            ok_answer(Fmt::Anthropic, r, "HISTORY")
        }
    })
    .await;
    let e =
        summarize_compaction(&job, &model(&server), &no_extras(), &CancellationToken::new(), None).await.unwrap_err();
    assert!(matches!(e, Error::Unauthorized { .. }), "{e:?}");
}

#[tokio::test]
async fn history_call_carries_previous_summary_and_custom_instructions() {
    let s = case("compaction-repeated");
    let job = plan_compaction(&s, None, &settings(4000.0, 8000.0)).unwrap();
    let server = Server::start(|r, _| ok_answer(Fmt::OpenAi, r, "S")).await;
    let mut cfg = ProviderConfig::new(Wire::OpenAi, "m", Some(ApiKey::new("k")));
    cfg.base_url = server.base_v1();
    let backend = Backend::Model(Client::new(cfg).unwrap());
    let opts = RunOptions { custom_instructions: Some("keep test names".into()), ..no_extras() };
    summarize_compaction(&job, &backend, &opts, &CancellationToken::new(), None).await.unwrap();
    let reqs = server.requests();
    let history = reqs
        .iter()
        .map(|r| prompt_of(Fmt::OpenAi, r))
        .find(|p| !p.ends_with(summarizer::prompts::TURN_PREFIX))
        .expect("update prompt");
    assert!(history.contains(summarizer::prompts::UPDATE));
    assert!(history.ends_with("\n\nAdditional focus: keep test names"));
    assert!(history.contains("</previous-summary>\n\n"));
    let prefix = reqs
        .iter()
        .map(|r| prompt_of(Fmt::OpenAi, r))
        .find(|p| p.ends_with(summarizer::prompts::TURN_PREFIX))
        .expect("prefix prompt");
    assert!(
        !prefix.contains("Additional focus") && !prefix.contains("<previous-summary>"),
        "the prefix call never gets them: {}",
        &prefix[prefix.len().saturating_sub(300)..]
    );
    assert_eq!(reqs.iter().map(|r| r.json()["max_tokens"].as_u64().unwrap()).max(), Some(3200));
}

#[tokio::test]
async fn extras_record_usage_and_tokens_after_behind_pis_keys() {
    let s = case("cut-over-threshold-basic");
    let job = plan_compaction(&s, None, &settings(8000.0, 12000.0)).unwrap();
    let server = Server::start(|r, _| ok_answer(Fmt::Gemini, r, "summary text")).await;
    let mut cfg = ProviderConfig::new(Wire::Gemini, "g", Some(ApiKey::new("k")));
    cfg.base_url = server.base();
    let backend = Backend::Model(Client::new(cfg).unwrap());
    let out =
        summarize_compaction(&job, &backend, &RunOptions::default(), &CancellationToken::new(), None).await.unwrap();
    assert!(
        out.tokens_after > 0.0 && out.tokens_after < out.tokens_before,
        "{} vs {}",
        out.tokens_after,
        out.tokens_before
    );
    let entry = compaction_entry(&job, &out, "abcd1234", "2030-01-01T00:00:00.000Z");
    let d = entry.get("details").unwrap();
    let Value::Obj(m) = d else { panic!() };
    let keys: Vec<&str> = m.0.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["readFiles", "modifiedFiles", "usage", "tokensAfter", "summarizer"]);
    assert_eq!(d.get("usage").unwrap().num_field("output"), Some(7.0 * out.calls as f64));
    assert_eq!(d.get("tokensAfter").unwrap().as_f64(), Some(out.tokens_after));
    assert_eq!(entry.get("fromHook").unwrap().as_bool(), Some(false));
}

#[tokio::test]
async fn offline_compaction_is_marked_and_needs_no_network() {
    let s = case("basic-tool-chain");
    let job = plan_compaction(&s, None, &settings(16384.0, 800.0)).unwrap();
    let out = summarize_compaction(&job, &Backend::Offline, &RunOptions::default(), &CancellationToken::new(), None)
        .await
        .unwrap();
    assert!(out.summary.starts_with("## Goal\n"), "{}", out.summary);
    assert!(out.summary.contains("## Critical Context"));
    let d = out.details.unwrap();
    assert_eq!(d.get("offline").and_then(Value::as_bool), Some(true));
    assert_eq!(d.get("summarizer").unwrap().str_field("provider"), Some("offline"));
    assert!(d.get("usage").is_none());
}

#[tokio::test]
async fn before_compact_hook_can_cancel_replace_or_fail() {
    let dir = tempfile::tempdir().unwrap();
    let s = case("basic-tool-chain");
    let job = plan_compaction(&s, None, &settings(16384.0, 800.0)).unwrap();
    let server = Server::start(|r, _| ok_answer(Fmt::Anthropic, r, "MODEL")).await;
    let backend = model(&server);
    let run = |h: Option<HookCommand>| {
        let opts = RunOptions { hook: h, ..no_extras() };
        let job = job.clone();
        let backend = &backend;
        async move { summarize_compaction(&job, backend, &opts, &CancellationToken::new(), None).await }
    };

    // Cancel: nothing else happens.
    let p = script(dir.path(), "cancel.sh", "cat >/dev/null; echo '{\"cancel\":true}'");
    assert!(matches!(run(hook(&p, 5000)).await.unwrap_err(), Error::HookCancelled));
    assert_eq!(server.count(), 0);

    // Replace: the hook's summary, written with fromHook:true; it saw the preparation.
    let seen = dir.path().join("stdin.json");
    let p = script(
        dir.path(),
        "replace.sh",
        &format!(
            "cat > '{}'; echo '{{\"summary\":\"from hook\",\"tokensBefore\":42,\"details\":{{\"by\":\"hook\"}}}}'",
            seen.display()
        ),
    );
    let out = run(hook(&p, 5000)).await.unwrap();
    assert_eq!(server.count(), 0);
    assert!(out.from_hook);
    assert_eq!(out.summary, "from hook");
    assert_eq!(out.tokens_before, 42.0);
    assert_eq!(out.first_kept_entry_id, job.prep.first_kept_entry_id);
    let entry = compaction_entry(&job, &out, "abcd1234", "2030-01-01T00:00:00.000Z");
    let line = session_engine::entries::line(&entry);
    assert!(line.ends_with(r#""tokensBefore":42,"details":{"by":"hook"},"fromHook":true}"#), "{line}");
    let input: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&seen).unwrap()).unwrap();
    assert_eq!(input["type"], "session_before_compact");
    assert_eq!(input["preparation"]["firstKeptEntryId"], job.prep.first_kept_entry_id.as_str());
    assert!(input["preparation"]["messagesToSummarize"].as_array().unwrap().len() > 1);

    // Empty output: go on with the model.
    let p = script(dir.path(), "quiet.sh", "cat >/dev/null");
    assert!(run(hook(&p, 5000)).await.unwrap().summary.starts_with("MODEL"));
    let calls = server.count();
    assert!(calls >= 1);

    // Non-zero exit: aborted, stderr shown.
    let p = script(dir.path(), "fail.sh", "cat >/dev/null; echo 'policy says no' >&2; exit 3");
    let e = run(hook(&p, 5000)).await.unwrap_err().to_string();
    assert!(e.contains("exited with 3") && e.contains("policy says no"), "{e}");

    // Timeout: aborted quickly, stderr shown.
    let p = script(dir.path(), "slow.sh", "echo 'thinking hard' >&2; sleep 5");
    let t = Instant::now();
    let e = run(hook(&p, 300)).await.unwrap_err().to_string();
    assert!(e.contains("timed out after 300 ms"), "{e}");
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());

    // Garbage output: aborted.
    let p = script(dir.path(), "garbage.sh", "cat >/dev/null; echo 'not json'");
    assert!(run(hook(&p, 5000)).await.unwrap_err().to_string().contains("not JSON"));
    assert_eq!(server.count(), calls, "no model call after a failed hook");
}

#[tokio::test]
async fn navigation_hook_replaces_the_branch_summary_and_failure_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let s = case("branch-simple-siblings");
    let target = "55732918";
    let job = plan_navigation(&s, None, target, true, 0.0).unwrap();
    assert!(job.prep.as_ref().is_some_and(|p| !p.messages.is_empty()));
    let p = script(dir.path(), "nav.sh", "grep -q session_before_tree && echo '{\"summary\":\"hooked branch\"}'");
    let opts = RunOptions { hook: hook(&p, 5000), ..no_extras() };
    let out =
        summarize_branch(&job, &Backend::Offline, &opts, None, &CancellationToken::new(), None).await.unwrap().unwrap();
    assert!(out.from_hook);
    let mut n = 0;
    let lines = navigation_entries(&job, Some(&out), Some("here"), "2030-01-01T00:00:00.000Z", || {
        n += 1;
        format!("0000000{n}")
    });
    assert_eq!(lines.len(), 2);
    let l0 = session_engine::entries::line(&lines[0]);
    assert!(l0.contains(r#""summary":"hooked branch","fromHook":true}"#), "{l0}");
    assert_eq!(lines[1].str_field("targetId"), Some("00000001"));

    // A failing model: an error, so the caller writes nothing and the navigation is cancelled.
    let server = Server::start(|_, _| Script::response(500, &[("x-should-retry", "false")], "{}")).await;
    let e = summarize_branch(&job, &model(&server), &no_extras(), None, &CancellationToken::new(), None).await;
    assert!(e.is_err());

    // Offline branch summary: Pi's wrapper, then sections without Critical Context.
    let out = summarize_branch(&job, &Backend::Offline, &RunOptions::default(), None, &CancellationToken::new(), None)
        .await
        .unwrap()
        .unwrap();
    assert!(out.summary.starts_with("The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n## Goal\n"));
    assert!(!out.summary.contains("## Critical Context"));
}

#[tokio::test]
async fn cancelling_a_compaction_stops_the_calls() {
    let s = case("cut-split-turn");
    let job = plan_compaction(&s, None, &settings(16384.0, 6000.0)).unwrap();
    let server = Server::start(|_, _| Script::sse_head(200).then(Step::Hang)).await;
    let cancel = support::cancel_after(150);
    let t = Instant::now();
    let e = summarize_compaction(&job, &model(&server), &no_extras(), &cancel, None).await.unwrap_err();
    assert!(matches!(e, Error::Cancelled));
    assert!(t.elapsed() < Duration::from_millis(300), "{:?}", t.elapsed());
}

/// The app runs these in Tauri async commands, which need `Send` futures.
#[test]
fn file_operations_are_send() {
    fn assert_send<T: Send>(_: &T) {}
    let backend = Backend::Offline;
    let opts = RunOptions::default();
    let cancel = CancellationToken::new();
    let settings = settings(16384.0, 20000.0);
    let p = Path::new("/nonexistent.jsonl");
    let f = summarizer::session_ops::compact_file(p, None, &settings, &backend, &opts, &cancel, None);
    assert_send(&f);
    let g = summarizer::session_ops::navigate_file(p, None, "x", true, 0.0, None, &backend, &opts, &cancel, None);
    assert_send(&g);
}
