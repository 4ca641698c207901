//! Judge mode against real HTTP servers on 127.0.0.1 (tests/support/loopback.rs) in the three
//! wire formats. The server plays the model honestly: it answers a question only from the
//! summary the request carried (a line of it, found through a key phrase per question) or says
//! "not in the summary", and grades by comparing the answer with the expected answer the request
//! carried. So a request that lost the summary, the question or the expected answer changes the
//! verdicts, and the exact counts below fail.
mod support;
use serde_json::Value as J;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use summarizer::judge::{judge, JudgeOptions, JudgeProgress, JudgeProgressFn, Judged, Verdict};
use summarizer::{ApiKey, CancellationToken, Client, Error, ProviderConfig, RetryPolicy, Timeouts, Wire};
use summary_analysis::quality::{KindScore, Probe, ProbeKind};
use support::loopback::{ok_answer, prompt_of, Fmt, Recorded, Script, Server, Step, ALL_FMTS};

const SUMMARY: &str = "## Goal
Make the cache faster.

## Constraints & Preferences
- never push to main without review

## Progress
### Done
- [x] edited src/cache.rs
- [x] ran cargo bench: 12% faster

## Key Decisions
- **LRU**: decided to use an LRU cache instead of a TTL map

## Next Steps
1. add a benchmark for cache misses

## Critical Context
- p95 latency is 342 ms after the cache change
- the flag --keep-recent is set to 20000";

/// The grader answers this expected answer with text that holds no verdict.
const UNREADABLE_GRADE_FOR: &str = "never push to main without review";

/// (kind, question, the phrase the fake model looks for in the summary, expected, verdict).
const CASES: &[(ProbeKind, &str, &str, &str, Verdict)] = &[
    (ProbeKind::Recall, "What p95 latency did the benchmark report?", "p95", "342 ms", Verdict::Correct),
    (ProbeKind::Recall, "Which pi version was the session on?", "version", "v0.73.1", Verdict::Wrong),
    (ProbeKind::Recall, "Which flag sets the kept tokens?", "flag", "--keep-recent", Verdict::Correct),
    (ProbeKind::Artifact, "Which file was modified, at `cache.rs`?", "cache.rs", "src/cache.rs", Verdict::Correct),
    (
        ProbeKind::Artifact,
        "Which command was run here, and with what outcome?",
        "ran cargo",
        "cargo bench --bench cache_hits",
        Verdict::Partial,
    ),
    (ProbeKind::Artifact, "What error was seen?", "error", "thread 'main' panicked at src/cache.rs:40", Verdict::Wrong),
    (
        ProbeKind::Decision,
        "What did the assistant decide about “an LRU cache”?",
        "LRU",
        "We'll use an LRU cache instead of a TTL map.",
        Verdict::Correct,
    ),
    (ProbeKind::Decision, "What rule did the user set?", "never", UNREADABLE_GRADE_FOR, Verdict::Unparseable),
    (
        ProbeKind::Continuation,
        "What was the user's last request before the cut?",
        "benchmark for",
        "add a benchmark for cache misses",
        Verdict::Correct,
    ),
    (ProbeKind::Continuation, "What was the agent doing at the cut?", "doing", "reading src/lru.rs", Verdict::Wrong),
];

fn probes() -> Vec<Probe> {
    CASES
        .iter()
        .enumerate()
        .map(|(i, (kind, q, _, expected, _))| Probe {
            kind: *kind,
            question: q.to_string(),
            expected: expected.to_string(),
            source_entry_id: format!("e{i:07}"),
            // The offline verdict: the judge must not read it.
            answered: true,
        })
        .collect()
}

fn client(fmt: Fmt, server: &Server, stream: bool) -> Client {
    let wire = Wire::parse(fmt.provider()).unwrap();
    let mut cfg = ProviderConfig::new(wire, "judge-model", Some(ApiKey::new("sk-test")));
    cfg.base_url = if fmt == Fmt::OpenAi { server.base_v1() } else { server.base() };
    cfg.stream = stream;
    cfg.timeouts = Timeouts { connect: Duration::from_secs(2), read_idle: Duration::from_secs(5) };
    cfg.retry = RetryPolicy {
        max_retries: 2,
        base_delay: Duration::from_millis(10),
        max_delay: Duration::from_millis(20),
        max_server_wait: Duration::from_secs(5),
    };
    Client::new(cfg).unwrap()
}

fn system_of(fmt: Fmt, rec: &Recorded) -> String {
    let v = rec.json();
    let s = match fmt {
        Fmt::OpenAi => &v["messages"][0]["content"],
        Fmt::Anthropic => &v["system"],
        Fmt::Gemini => &v["systemInstruction"]["parts"][0]["text"],
    };
    s.as_str().unwrap_or("").to_string()
}

/// The text between `<tag>` and `</tag>` lines of a prompt.
fn tagged(prompt: &str, tag: &str) -> Option<String> {
    let open = format!("<{tag}>\n");
    let close = format!("\n</{tag}>");
    let a = prompt.find(&open)? + open.len();
    let b = a + prompt[a..].find(&close)?;
    Some(prompt[a..b].to_string())
}

fn words(s: &str) -> Vec<String> {
    s.split_whitespace()
        .map(|w| w.trim_matches(|c: char| !(c.is_alphanumeric() || "-_/'".contains(c))).to_lowercase())
        .filter(|w| !w.is_empty())
        .collect()
}

/// The fake model's text for a request: an answer from the summary it was sent, or a grade.
fn model_text(fmt: Fmt, rec: &Recorded) -> String {
    let prompt = prompt_of(fmt, rec);
    let question = tagged(&prompt, "question").unwrap_or_default();
    if let Some(summary) = tagged(&prompt, "summary") {
        let key = CASES.iter().find(|c| c.1 == question).map(|c| c.2).unwrap_or("\u{0}");
        return summary
            .lines()
            .find(|l| l.contains(key))
            .map(|l| l.trim_start_matches(['-', ' ']).to_string())
            .unwrap_or_else(|| "not in the summary".to_string());
    }
    let (Some(expected), Some(answer)) = (tagged(&prompt, "expected-answer"), tagged(&prompt, "answer")) else {
        return "a request that is neither an answer nor a grade".into();
    };
    if expected == UNREADABLE_GRADE_FOR {
        return "Looks right to me!".into();
    }
    let a = answer.to_lowercase();
    if a.contains(&expected.to_lowercase()) {
        return "CORRECT\nthe answer holds the expected text".into();
    }
    if a.contains("not in the summary") {
        return "WRONG\nthe summary did not say".into();
    }
    let aw = words(&answer);
    let ew = words(&expected);
    let share = ew.iter().filter(|w| aw.contains(w)).count() as f64 / ew.len() as f64;
    if share >= 0.75 {
        "**CORRECT** — same content in other words".into()
    } else if share >= 0.4 {
        format!("Verdict: PARTIAL\n{:.0} % of the expected words", share * 100.0)
    } else {
        "WRONG\nunrelated".into()
    }
}

/// The `(done, total)` reports of a judge run, in order.
type Seen = Arc<Mutex<Vec<(usize, usize)>>>;

fn recorder() -> (JudgeProgressFn, Seen, Arc<Mutex<usize>>) {
    let seen: Seen = Arc::default();
    let retries: Arc<Mutex<usize>> = Arc::default();
    let (s, r) = (seen.clone(), retries.clone());
    let f: JudgeProgressFn = Arc::new(move |p| match p {
        JudgeProgress::Probes { done, total } => s.lock().unwrap().push((done, total)),
        JudgeProgress::Provider(_) => *r.lock().unwrap() += 1,
    });
    (f, seen, retries)
}

fn by_kind_counts(j: &Judged) -> Vec<(ProbeKind, KindScore, usize)> {
    ProbeKind::ALL.iter().map(|&k| (k, j.by_kind.get(k), j.partial(k))).collect()
}

#[tokio::test]
async fn each_format_answers_from_the_summary_and_grades_against_the_expected_answer() {
    let probes = probes();
    for fmt in ALL_FMTS {
        for stream in [true, false] {
            let server = Server::start(move |r, _| ok_answer(fmt, r, &model_text(fmt, r))).await;
            let c = client(fmt, &server, stream);
            let (progress, seen, _) = recorder();
            let opts = JudgeOptions { concurrency: 3, ..Default::default() };
            let j = judge(&c, SUMMARY, &probes, &opts, &CancellationToken::new(), Some(&progress))
                .await
                .unwrap_or_else(|e| panic!("{fmt:?} stream={stream}: {e}"));
            let at = format!("{fmt:?} stream={stream}");

            assert_eq!((j.provider.as_str(), j.model.as_str()), (fmt.provider(), "judge-model"), "{at}");
            let k = |probes, answered| KindScore { probes, answered };
            assert_eq!(
                by_kind_counts(&j),
                vec![
                    (ProbeKind::Recall, k(3, 2), 0),
                    (ProbeKind::Artifact, k(3, 1), 1),
                    (ProbeKind::Decision, k(2, 1), 0),
                    (ProbeKind::Continuation, k(2, 1), 0),
                ],
                "{at}"
            );
            // recall 2/3, artifact (1 + ½)/3, decision 1/2, continuation 1/2, kinds weighted equally.
            assert_eq!(j.score, Some(0.542), "{at}");
            assert_eq!(j.probes.len(), CASES.len(), "{at}");
            for (p, (kind, q, _, expected, verdict)) in j.probes.iter().zip(CASES) {
                assert_eq!((p.kind, p.question.as_str(), p.expected.as_str()), (*kind, *q, *expected), "{at}");
                assert_eq!(p.verdict, *verdict, "{at}: {q} answered {:?}, reason {:?}", p.answer, p.reason);
            }
            let by_q = |q: &str| j.probes.iter().find(|p| p.question == q).unwrap();
            assert_eq!(
                by_q("What p95 latency did the benchmark report?").answer,
                "p95 latency is 342 ms after the cache change"
            );
            assert_eq!(by_q("Which pi version was the session on?").answer, "not in the summary");
            assert_eq!(by_q("Which pi version was the session on?").reason, "the summary did not say");
            let unreadable = by_q("What rule did the user set?");
            assert_eq!(unreadable.answer, "never push to main without review", "the answer itself was right");
            assert!(unreadable.reason.contains("Looks right to me!"), "{}", unreadable.reason);
            assert_eq!(by_q("Which command was run here, and with what outcome?").reason, "50 % of the expected words");

            // Two calls per probe, each carrying what it must and nothing it must not.
            let reqs = server.requests();
            assert_eq!(reqs.len(), 2 * CASES.len(), "{at}");
            for (_, q, _, expected, _) in CASES {
                let asked: Vec<&Recorded> = reqs
                    .iter()
                    .filter(|r| {
                        let p = prompt_of(fmt, r);
                        tagged(&p, "summary").is_some() && tagged(&p, "question").as_deref() == Some(*q)
                    })
                    .collect();
                assert_eq!(asked.len(), 1, "{at}: one answer call for {q}");
                let p = prompt_of(fmt, asked[0]);
                assert_eq!(tagged(&p, "summary").as_deref(), Some(SUMMARY), "{at}: the whole summary");
                if !SUMMARY.contains(expected) {
                    assert!(!p.contains(expected), "{at}: the answer call must not see the expected answer");
                }
                let sys = system_of(fmt, asked[0]);
                assert!(sys.contains("only from the summary") && sys.contains("not in the summary"), "{sys}");

                let graded: Vec<&Recorded> = reqs
                    .iter()
                    .filter(|r| {
                        let p = prompt_of(fmt, r);
                        tagged(&p, "expected-answer").is_some() && tagged(&p, "question").as_deref() == Some(*q)
                    })
                    .collect();
                assert_eq!(graded.len(), 1, "{at}: one grade call for {q}");
                let p = prompt_of(fmt, graded[0]);
                assert_eq!(tagged(&p, "expected-answer").as_deref(), Some(*expected), "{at}");
                assert_eq!(tagged(&p, "answer").as_deref(), Some(by_q(q).answer.as_str()), "{at}");
                assert!(!p.contains("## Key Decisions"), "{at}: the grader judges the answer, not the summary");
                assert!(system_of(fmt, graded[0]).contains("CORRECT, PARTIAL or WRONG"));
            }

            let v = serde_json::to_value(&j).unwrap();
            assert_eq!(v["provider"], fmt.provider());
            assert_eq!(v["byKind"]["artifact"], serde_json::json!({"probes": 3, "answered": 1}));
            assert_eq!(v["probes"][0]["sourceEntryId"], "e0000000");
            assert_eq!(v["probes"][4]["verdict"], "partial");
            assert_eq!(v["probes"][7]["verdict"], "unparseable");

            let seen = seen.lock().unwrap().clone();
            let want: Vec<(usize, usize)> = (0..=CASES.len()).map(|d| (d, CASES.len())).collect();
            assert_eq!(seen, want, "{at}: progress from 0 to all, one probe at a time");
        }
    }
}

#[tokio::test]
async fn at_most_n_probes_of_each_kind_the_most_recent() {
    let fmt = Fmt::Anthropic;
    let server = Server::start(move |r, _| ok_answer(fmt, r, &model_text(fmt, r))).await;
    let c = client(fmt, &server, true);
    let opts = JudgeOptions { max_per_kind: 1, concurrency: 2, ..Default::default() };
    let j = judge(&c, SUMMARY, &probes(), &opts, &CancellationToken::new(), None).await.unwrap();
    let got: Vec<&str> = j.probes.iter().map(|p| p.source_entry_id.as_str()).collect();
    // The last of each kind in the order given.
    assert_eq!(got, ["e0000002", "e0000005", "e0000007", "e0000009"]);
    assert_eq!(server.count(), 8);
    let k = |probes, answered| KindScore { probes, answered };
    assert_eq!(
        by_kind_counts(&j),
        vec![
            (ProbeKind::Recall, k(1, 1), 0),
            (ProbeKind::Artifact, k(1, 0), 0),
            (ProbeKind::Decision, k(1, 0), 0),
            (ProbeKind::Continuation, k(1, 0), 0),
        ]
    );
    assert_eq!(j.score, Some(0.25));
}

#[tokio::test]
async fn cancelling_starts_no_further_call_and_drops_the_one_in_flight() {
    let fmt = Fmt::OpenAi;
    let cancel = CancellationToken::new();
    let trip = cancel.clone();
    let server = Server::start(move |r, n| {
        if n == 3 {
            // The fourth call: cancel while it is in flight, and never answer it.
            trip.cancel();
            return Script(vec![Step::Hang]);
        }
        ok_answer(fmt, r, &model_text(fmt, r))
    })
    .await;
    let c = client(fmt, &server, true);
    let opts = JudgeOptions { concurrency: 2, ..Default::default() };
    let (progress, seen, _) = recorder();
    let got =
        tokio::time::timeout(Duration::from_secs(5), judge(&c, SUMMARY, &probes(), &opts, &cancel, Some(&progress)))
            .await
            .expect("cancellation ends the judge at once, even with a call hanging");
    assert!(matches!(got, Err(Error::Cancelled)), "{got:?}");
    let at_cancel = server.count();
    // Four calls up to the cancel, at most one other in flight beside it (2 probes at once).
    assert!((4..=5).contains(&at_cancel), "{at_cancel} calls");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(server.count(), at_cancel, "no call after the cancellation");
    assert!(seen.lock().unwrap().iter().all(|&(done, _)| done < CASES.len()));

    // Cancelled before it starts: no call at all.
    let server = Server::start(move |r, _| ok_answer(fmt, r, &model_text(fmt, r))).await;
    let c = client(fmt, &server, true);
    let cancel = CancellationToken::new();
    cancel.cancel();
    let got = judge(&c, SUMMARY, &probes(), &JudgeOptions::default(), &cancel, None).await;
    assert!(matches!(got, Err(Error::Cancelled)), "{got:?}");
    assert_eq!(server.count(), 0);
}

#[tokio::test]
async fn calls_are_retried_by_the_client_policy_and_a_failure_fails_the_whole_judgement() {
    // A 503 on the first call is retried; the judgement is whole and the retry is reported.
    let fmt = Fmt::Gemini;
    let server = Server::start(move |r, n| {
        if n == 0 {
            return Script::json(
                503,
                &serde_json::json!({"error": {"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}}),
            );
        }
        ok_answer(fmt, r, &model_text(fmt, r))
    })
    .await;
    let c = client(fmt, &server, false);
    let (progress, _, retries) = recorder();
    let opts = JudgeOptions { concurrency: 1, ..Default::default() };
    let j = judge(&c, SUMMARY, &probes(), &opts, &CancellationToken::new(), Some(&progress)).await.unwrap();
    assert_eq!(j.score, Some(0.542));
    assert_eq!(server.count(), 2 * CASES.len() + 1);
    assert_eq!(*retries.lock().unwrap(), 1, "the retry reaches the caller");

    // A call that fails for good (400, not retried) fails the judgement: no score over the rest.
    let server = Server::start(move |r, _| {
        let p = prompt_of(fmt, r);
        if tagged(&p, "expected-answer").is_some_and(|e| e == "src/cache.rs") {
            return Script::json(400, &serde_json::json!({"error": {"code": 400, "message": "bad grade request", "status": "INVALID_ARGUMENT"}}));
        }
        ok_answer(fmt, r, &model_text(fmt, r))
    })
    .await;
    let c = client(fmt, &server, false);
    let got = judge(&c, SUMMARY, &probes(), &opts, &CancellationToken::new(), None).await;
    match got {
        Err(e @ Error::Http { status: 400, .. }) => assert!(e.to_string().contains("bad grade request"), "{e}"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn no_probe_no_call_no_score() {
    let fmt = Fmt::OpenAi;
    let server = Server::start(move |r, _| ok_answer(fmt, r, "CORRECT")).await;
    let c = client(fmt, &server, true);
    let j = judge(&c, SUMMARY, &[], &JudgeOptions::default(), &CancellationToken::new(), None).await.unwrap();
    assert_eq!(j.score, None);
    assert!(j.probes.is_empty());
    assert_eq!(server.count(), 0);
    let v: J = serde_json::to_value(&j).unwrap();
    assert_eq!(v["score"], J::Null);
}
