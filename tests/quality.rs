//! Summary quality in the app, without a window, on copies of real Pi sessions (the engine's
//! `real-pi` fixtures, recorded from Pi 0.73.1): the workbench's quality panel (score by kind,
//! probes, citations, unsupported items, growth, the cost of forgetting), the marks of every
//! summary computed in the background for the graph and the Timeline, and how that run follows
//! appends and another file. Included by tests/app.rs.

use crate::support::{env, Env};
use arbor_app::commands::{graph, quality, sessions};
use arbor_app::error::{ErrorKind, IpcError};
use arbor_app::state::quality::{MarkSink, Next, QualityCache, Work};
use arbor_app::view::graph::GraphRowKind;
use arbor_app::view::quality::{ForgettingView, GrowthFlag, KindScoreView, ProbeKind, QualityMarkView};
use session_engine::Session;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src-tauri/crates/session-engine/tests/fixtures/real-pi").join(name)
}

/// Opens a copy of the real Pi session `name` (its first `lines` lines when given).
fn open_copy(e: &Env, name: &str, lines: Option<usize>) -> PathBuf {
    let text = std::fs::read_to_string(fixture(name)).unwrap();
    let text = match lines {
        Some(n) => text.lines().take(n).map(|l| format!("{l}\n")).collect(),
        None => text,
    };
    let p = e.dir.join(name);
    std::fs::write(&p, text).unwrap();
    sessions::open(&e.state, &p, false).unwrap();
    p
}

fn k(probes: u32, answered: u32) -> KindScoreView {
    KindScoreView { probes, answered }
}

/// A sink that keeps every batch it is sent.
fn collector() -> (MarkSink, Arc<Mutex<Vec<Vec<QualityMarkView>>>>) {
    let got = Arc::new(Mutex::new(Vec::new()));
    let g = got.clone();
    let sink: MarkSink = Arc::new(move |m| {
        g.lock().unwrap().push(m);
        true
    });
    (sink, got)
}

fn flat(got: &Mutex<Vec<Vec<QualityMarkView>>>) -> Vec<QualityMarkView> {
    got.lock().unwrap().iter().flatten().cloned().collect()
}

/// The last mark sent for each entry (a compaction's comes again with its forgetting).
fn last_marks(got: &Mutex<Vec<Vec<QualityMarkView>>>) -> Vec<QualityMarkView> {
    let mut out: Vec<QualityMarkView> = Vec::new();
    for m in flat(got) {
        out.retain(|x| x.entry_id != m.entry_id);
        out.push(m);
    }
    out
}

/// rpc-manual: Pi's manual compaction 05e34e69 (its first), then 7e4d8172.
#[test]
fn the_quality_panel_of_a_real_pi_compaction() {
    let e = env();
    let path = open_copy(&e, "rpc-manual.jsonl", None);
    let v = quality::quality(&e.state, "05e34e69").unwrap();
    assert_eq!(v.score.score, Some(0.909));
    let b = v.score.by_kind;
    assert_eq!((b.recall, b.artifact, b.decision, b.continuation), (k(9, 7), k(7, 6), k(2, 2), k(2, 2)));
    assert_eq!(v.probes.len(), 20);
    assert_eq!(v.probes.iter().filter(|p| !p.answered).count(), 3);
    let missed = v.probes.iter().find(|p| p.expected == "0.006s").expect("the probe of the test run's time");
    assert_eq!((missed.kind, missed.answered, missed.source_entry_id.as_str()), (ProbeKind::Recall, false, "bbdde4f9"));
    assert!(!missed.question.is_empty());
    // The one item nothing in the span says, in the unsupported list and marked among the citations.
    let unsupported: Vec<(&str, &str)> = v.unsupported.iter().map(|u| (u.section.as_str(), u.text.as_str())).collect();
    assert_eq!(unsupported, [("Next Steps", "Wait for the user's next request")]);
    let wait = v.citations.iter().find(|c| c.text == "Wait for the user's next request").unwrap();
    assert!(wait.unsupported && wait.sources.is_empty());
    assert_eq!(v.citations.iter().filter(|c| c.unsupported).count(), 1);
    // Each item's best sources, best first: the Goal's first line is the user's request itself.
    let goal = &v.citations[0];
    assert_eq!(goal.section, "Goal");
    assert!(goal.text.starts_with("Read `ledger/core.py` and `tests/test_core.py`"), "{}", goal.text);
    let sources: Vec<&str> = goal.sources.iter().map(|s| s.entry_id.as_str()).collect();
    assert_eq!(sources, ["d081ee73", "c33cfe8e", "bbdde4f9"]);
    assert_eq!(goal.sources[0].score, 1.0);
    assert!(goal.sources.windows(2).all(|w| w[0].score >= w[1].score));
    assert!(v.citations.iter().all(|c| c.sources.len() <= 3));
    // Growth: 428 tokens for the 4,465 it replaced, no flag (the first compaction: no previous).
    assert_eq!(
        (v.growth.summary_tokens, v.growth.replaced_tokens, v.growth.previous_summary_tokens, v.growth.flag),
        (428.0, 4465.0, None, None)
    );
    // After it the agent read two files again and ran the tests again before its first edit.
    assert_eq!(
        v.forgetting,
        Some(ForgettingView {
            reread_files: vec!["data/transactions.csv".into(), "ledger/core.py".into()],
            rerun_commands: vec!["python3 -m unittest discover -s tests -v".into()],
            calls_before_first_edit: 2,
            edited: true,
            baseline_calls_before_first_edit: Some(3),
            window_entries: 20,
            cost: 3,
        })
    );
    // The same numbers as the engine's one call for the whole judgement.
    let s = Session::open(&path).unwrap();
    let q = summary_analysis::quality(&s, s.index_of("05e34e69").unwrap());
    assert_eq!(v.score.score, q.score);
    assert_eq!(v.probes.len(), q.probes.len());
    assert_eq!(v.unsupported.len(), q.unsupported.len());
    assert_eq!(v.forgetting.as_ref().map(|f| f.cost as usize), q.forgetting.as_ref().map(|f| f.cost()));

    // The second compaction grew more than 1.5× over the first, and nothing was forgotten after it.
    let v2 = quality::quality(&e.state, "7e4d8172").unwrap();
    assert_eq!(v2.score.score, Some(0.958));
    assert_eq!((v2.growth.summary_tokens, v2.growth.previous_summary_tokens), (742.0, Some(428.0)));
    assert_eq!(v2.growth.flag, Some(GrowthFlag::Grew));
    let f = v2.forgetting.unwrap();
    assert_eq!((f.cost, f.calls_before_first_edit, f.baseline_calls_before_first_edit), (0, 1, Some(3)));

    // A non-summary entry and an unknown id are refused with a sentence.
    let err: IpcError = quality::quality(&e.state, "8d25023b").unwrap_err().into();
    assert_eq!(err.kind, ErrorKind::Invalid);
    let err: IpcError = quality::quality(&e.state, "nope").unwrap_err().into();
    assert_eq!(err.kind, ErrorKind::NotFound);
}

/// rpc-branch: Pi's branch summary 2cb2c56f, with two items its span does not say.
#[test]
fn a_branch_summary_has_a_score_and_no_cost_of_forgetting() {
    let e = env();
    open_copy(&e, "rpc-branch.jsonl", None);
    let v = quality::quality(&e.state, "2cb2c56f").unwrap();
    assert_eq!(v.score.score, Some(0.683));
    let b = v.score.by_kind;
    assert_eq!((b.recall, b.artifact, b.decision, b.continuation), (k(3, 1), k(5, 2), k(1, 1), k(2, 2)));
    let unsupported: Vec<&str> = v.unsupported.iter().map(|u| u.section.as_str()).collect();
    assert_eq!(unsupported, ["(untitled)", "Next Steps"]);
    assert_eq!((v.growth.summary_tokens, v.growth.replaced_tokens, v.growth.flag), (174.0, 580.0, None));
    assert_eq!(v.forgetting, None);
}

/// print-autocompact: three compactions Pi made on its own.
#[test]
fn every_summary_is_marked_in_the_background_and_the_graph_rows_carry_the_score() {
    let e = env();
    open_copy(&e, "print-autocompact.jsonl", None);
    // Before the run, the graph's summary rows have no score.
    let total = sessions::describe(&e.state).unwrap().total_rows;
    let rows = graph::window(&e.state, 0, total).unwrap().rows;
    let summary_rows: Vec<_> = rows.iter().filter(|r| r.kind == GraphRowKind::Compaction).collect();
    assert_eq!(summary_rows.len(), 3);
    assert!(summary_rows.iter().all(|r| r.quality.is_none()));

    // A zero slice: one piece of work per slice, one batch each: every score newest first (the
    // graph's badges), then every cost of forgetting newest first (the Timeline's marks).
    let (sink, got) = collector();
    let w = quality::warm(&e.state, sink, Duration::ZERO).unwrap();
    assert!(!w.joined);
    assert_eq!((w.scored, w.forgetting, w.summaries), (3, 3, 3));
    let batches: Vec<(String, bool)> = got
        .lock()
        .unwrap()
        .iter()
        .map(|b| {
            assert_eq!(b.len(), 1);
            (b[0].entry_id.clone(), b[0].forgetting.is_some())
        })
        .collect();
    let newest_first = ["0181db97", "9a784c44", "83979d02"];
    let want: Vec<(String, bool)> =
        [false, true].iter().flat_map(|&f| newest_first.iter().map(move |id| (id.to_string(), f))).collect();
    assert_eq!(batches, want);
    let marks = last_marks(&got);
    let mark = |id: &str| marks.iter().find(|m| m.entry_id == id).unwrap();
    let cost = |id: &str| mark(id).forgetting.as_ref().map(|f| f.cost);
    assert_eq!(
        [mark("83979d02").score.score, mark("9a784c44").score.score, mark("0181db97").score.score],
        [Some(0.922), Some(0.929), Some(0.833)]
    );
    assert_eq!([cost("83979d02"), cost("9a784c44"), cost("0181db97")], [Some(2), Some(4), Some(0)]);
    let f = mark("9a784c44").forgetting.clone().unwrap();
    assert_eq!(f.reread_files, ["ledger/csv_import.py", "README.md", "ledger/core.py"]);
    assert_eq!(f.rerun_commands, ["python3 -m unittest discover -s tests -v"]);
    // The marks are the workbench panel's numbers.
    let v = quality::quality(&e.state, "9a784c44").unwrap();
    assert_eq!((mark("9a784c44").score.clone(), mark("9a784c44").forgetting.clone()), (v.score, v.forgetting));

    // Graph windows now carry the score on every compaction row.
    let rows = graph::window(&e.state, 0, total).unwrap().rows;
    let scored: Vec<(String, Option<f64>)> =
        rows.iter().filter(|r| r.kind == GraphRowKind::Compaction).map(|r| (r.entry_id.clone(), r.quality)).collect();
    assert!(scored.iter().all(|(id, q)| *q == mark(id).score.score), "{scored:?}");
    assert!(rows.iter().filter(|r| r.kind == GraphRowKind::User).all(|r| r.quality.is_none()));

    // Asked again (a reloaded page): nothing to compute; the cached marks are sent first.
    let (sink, again) = collector();
    let w = quality::warm(&e.state, sink, Duration::ZERO).unwrap();
    assert_eq!((w.joined, w.scored, w.forgetting, w.summaries), (false, 0, 0, 3));
    let mut replay: Vec<String> = flat(&again).into_iter().map(|m| m.entry_id).collect();
    replay.sort();
    assert_eq!(replay, ["0181db97", "83979d02", "9a784c44"]);
}

/// The cost of forgetting looks below a compaction, which an append changes: only it is computed
/// again at the new file version; scores stay.
#[test]
fn an_append_recomputes_the_cost_of_forgetting_and_keeps_the_scores() {
    let e = env();
    // rpc-manual up to 9 entries after its first compaction (line 31 of 58).
    let path = open_copy(&e, "rpc-manual.jsonl", Some(40));
    let (sink, got) = collector();
    let w = quality::warm(&e.state, sink, Duration::from_secs(60)).unwrap();
    assert_eq!((w.scored, w.forgetting, w.summaries), (1, 1, 1));
    let early = last_marks(&got)[0].forgetting.clone().unwrap();
    assert_eq!(early.window_entries, 9);
    // Pi appends the rest of the session; the app reads the new lines.
    let full = std::fs::read_to_string(fixture("rpc-manual.jsonl")).unwrap();
    let rest: String = full.lines().skip(40).map(|l| format!("{l}\n")).collect();
    use std::io::Write as _;
    std::fs::OpenOptions::new().append(true).open(&path).unwrap().write_all(rest.as_bytes()).unwrap();
    e.state.with_open(|o| o.read_appended()).unwrap();
    let (sink, got) = collector();
    let w = quality::warm(&e.state, sink, Duration::from_secs(60)).unwrap();
    // The new compaction's score and forgetting, and the first one's forgetting again.
    assert_eq!((w.scored, w.forgetting, w.summaries), (1, 2, 2));
    let marks = last_marks(&got);
    let last = marks.iter().find(|m| m.entry_id == "05e34e69").unwrap();
    assert_eq!(last.score.score, Some(0.909));
    let f = last.forgetting.clone().unwrap();
    assert_eq!((f.window_entries, f.cost), (20, 3));
    assert!(marks.iter().any(|m| m.entry_id == "7e4d8172" && m.score.score == Some(0.958)));
}

#[test]
fn a_run_stops_when_another_session_opens() {
    let e = env();
    open_copy(&e, "print-autocompact.jsonl", None);
    let other = fixture("rpc-branch.jsonl");
    let state = e.state.clone();
    let got = Arc::new(Mutex::new(0));
    let g = got.clone();
    // The first batch arrives; meanwhile the user opens another session.
    let sink: MarkSink = Arc::new(move |_| {
        *g.lock().unwrap() += 1;
        let copy = other.clone();
        if *g.lock().unwrap() == 1 {
            sessions::open(&state, &copy, false).unwrap();
        }
        true
    });
    let w = quality::warm(&e.state, sink, Duration::ZERO).unwrap();
    assert_eq!((w.scored, w.forgetting), (1, 0), "the run stopped at its next slice");
    assert_eq!(*got.lock().unwrap(), 1);
    // The new session's run starts fresh.
    let (sink, got) = collector();
    let w = quality::warm(&e.state, sink, Duration::ZERO).unwrap();
    assert_eq!((w.scored, w.forgetting, w.summaries), (1, 0, 1));
    assert_eq!(flat(&got)[0].entry_id, "2cb2c56f");
}

/// An open lets the session before it go before reading the next (a million-entry session is
/// 2.6 GB): the old session's marks are retired, and a run on a retired cache stops at its next
/// summary instead of computing the rest of its slice on a snapshot that keeps the old session.
#[test]
fn an_open_retires_the_previous_sessions_marks_and_a_retired_run_stops_at_once() {
    let e = env();
    open_copy(&e, "print-autocompact.jsonl", None);
    let old = e.state.with_open(|o| Ok(o.quality.clone())).unwrap();
    assert!(!old.is_retired());
    sessions::open(&e.state, &fixture("rpc-branch.jsonl"), false).unwrap();
    assert!(old.is_retired(), "the replaced session's marks were not retired");
    let new = e.state.with_open(|o| Ok(o.quality.clone())).unwrap();
    assert!(!new.is_retired());
    // A run whose slice could hold every summary computes none once its cache is retired.
    new.retire();
    let (sink, got) = collector();
    let w = quality::warm(&e.state, sink, Duration::from_secs(3600)).unwrap();
    assert_eq!((w.joined, w.scored, w.forgetting), (false, 0, 0));
    assert!(flat(&got).is_empty());
}

/// One run at a time: a request while one runs joins it, and the run reads the session again
/// before it ends when a request came after its snapshot.
#[test]
fn a_request_during_a_run_joins_it_and_is_not_lost() {
    let e = env();
    let path = open_copy(&e, "rpc-branch.jsonl", None);
    let s = Session::open(&path).unwrap();
    let cache = QualityCache::default();
    let (sink, _) = collector();
    let mut run = cache.request(sink.clone()).expect("no run yet: this one runs");
    assert!(cache.request(sink.clone()).is_none(), "a run is going: the second request joins it");
    let seen = cache.requests();
    assert_eq!(seen, 2);
    // The run computes the branch summary's mark.
    let Next::Compute(todo) = cache.next(&mut run, &s, seen) else { panic!("the summary is missing") };
    let idx = s.index_of("2cb2c56f").unwrap();
    assert_eq!(todo, [Work::Score(idx)], "a branch summary has no cost of forgetting");
    cache.store("2cb2c56f", Some(arbor_app::view::quality::score_of(&s, idx)), None);
    // A request after the run's snapshot: the run must look again rather than end.
    assert!(cache.request(sink.clone()).is_none());
    assert!(matches!(cache.next(&mut run, &s, seen), Next::Again));
    assert!(matches!(cache.next(&mut run, &s, cache.requests()), Next::Done));
    // Done released the run: the next request runs.
    assert!(cache.request(sink.clone()).is_some());
    drop(run);
    // A run that stops (or panics) without finishing lets the next one start too.
    let cache = QualityCache::default();
    drop(cache.request(sink.clone()));
    assert!(cache.request(sink).is_some());
}

/// Judge mode through the Model tab's model on a loopback OpenAI-compatible server: two calls per
/// probe (answer from the summary alone, then grade), the judge's score named with its model and
/// apart from the offline one; the offline summarizer refuses with a sentence.
#[test]
fn judge_mode_asks_the_chosen_model() {
    use crate::support::provider::{block, fake, use_fake, Reply};
    let e = env();
    open_copy(&e, "rpc-manual.jsonl", None);
    let id = "05e34e69";
    // Offline (the default choice): refused before any call.
    let err: IpcError = block(quality::judge(&e.state, &e.st, id, None)).unwrap_err().into();
    assert_eq!(err.kind, ErrorKind::Invalid, "{err:?}");
    assert!(err.message.contains("Model tab"), "{}", err.message);

    // The model answers only the "which file" probes, and the grader passes only those answers:
    // the judge's score then follows the kinds, and can fail.
    let f = fake(|_, body| {
        if body.contains("You grade an answer") {
            Reply::Sse(
                if body.contains("the file it names") { "CORRECT\nit matches" } else { "WRONG\nit does not" }.into(),
                10,
            )
        } else if body.contains("Which file was") {
            Reply::Sse("the file it names".into(), 10)
        } else {
            Reply::Sse("not in the summary".into(), 10)
        }
    });
    use_fake(&e, &f.base, 32000);
    let j = block(quality::judge(&e.state, &e.st, id, None)).unwrap();
    assert_eq!((j.provider.as_str(), j.model.as_str()), ("openai", "fake-small"));
    let asked = j.probes.len();
    assert!(asked > 0 && asked <= 32, "{asked}");
    assert_eq!(f.reqs.lock().unwrap().len(), asked * 2, "two calls per probe");
    for p in &j.probes {
        let file = p.question.contains("Which file was");
        assert_eq!(p.verdict, if file { "correct" } else { "wrong" }, "{p:?}");
        assert_eq!(p.answer, if file { "the file it names" } else { "not in the summary" });
    }
    let files = j.probes.iter().filter(|p| p.question.contains("Which file was")).count() as u32;
    assert!(files > 0, "the session's span has file probes");
    assert_eq!(j.score.by_kind.artifact.answered, files);
    assert_eq!(j.score.by_kind.recall.answered, 0);
    let s = j.score.score.unwrap();
    assert!(s > 0.0 && s < 0.5, "only artifact probes pass: {s}");
    let offline = quality::quality(&e.state, id).unwrap();
    assert!(offline.score.score.unwrap() > 0.5, "the offline score stays its own");
}
