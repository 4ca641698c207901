//! Sessions the real `pi` program wrote (the engine's tests/fixtures/real-pi, recorded by
//! `tests/pi/record/record.mjs`): Pi 0.73.1 in print and RPC mode ran its own tools against a
//! scripted loopback model with a 13,000-token window and a 2,000-token reserve, compacted
//! automatically at its threshold (every cut a split turn), compacted by hand with instructions
//! and summarized a branch it left. What they are checked against is derived from the files
//! themselves (re-recording changes ids and timestamps) and from Pi's answers (the oracle runs
//! beside them, checked in the engine's `conformance.rs`); the drop-alarm expectations were
//! written by reading each summary.

use pi_json::Value;
use session_engine::compaction::prepare_compaction;
use session_engine::settings::PiSettings;
use session_engine::timeline::timeline;
use session_engine::{Kind, Session};
use std::path::{Path, PathBuf};
use summary_analysis::{check, parse, SectionRole, TURN_CONTEXT_MARKER};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../session-engine/tests/fixtures/real-pi")
}

fn open(name: &str) -> Session {
    let session = Session::open(&dir().join(format!("{name}.jsonl"))).unwrap();
    assert!(session.header_accepted() && session.diagnostics().is_empty(), "{name}: {:?}", session.diagnostics());
    session
}

fn compactions(session: &Session) -> Vec<usize> {
    (0..session.len()).filter(|&i| session.kind(i) == Kind::Compaction).collect()
}

fn expected(file: &str) -> Value {
    pi_json::parse_bytes(&std::fs::read(dir().join(file)).unwrap()).unwrap()
}

fn num(v: &Value, path: &[&str]) -> f64 {
    let mut cur = v;
    for k in path {
        cur = cur.get(k).unwrap_or_else(|| panic!("no {k} in {path:?}"));
    }
    cur.as_f64().unwrap()
}

const NAMES: [&str; 3] = ["print-autocompact", "rpc-manual", "rpc-branch"];

/// What the running agent wrote is what Pi's own preparation gives at the entry before each
/// compaction, and what Arbor's gives with Pi's settings files of the recording.
#[test]
fn each_compaction_pi_wrote_is_the_one_arbor_plans_at_that_point() {
    let settings = PiSettings::load(&dir().join("agent"), None).compaction();
    assert_eq!(
        (settings.reserve_tokens, settings.keep_recent_tokens),
        (2000.0, 3500.0),
        "the recording's settings.json"
    );
    let mut seen = 0;
    for name in NAMES {
        let session = open(name);
        for c in compactions(&session) {
            let v = session.value(c);
            let parent = session.parent_of(c).expect("a compaction has a parent");
            let prep = prepare_compaction(&session, &session.path(Some(parent)), &settings)
                .unwrap_or_else(|r| panic!("{name} {}: {r:?}", session.id(c)));
            assert_eq!(
                Some(prep.first_kept_entry_id.as_str()),
                v.str_field("firstKeptEntryId"),
                "{name} {}",
                session.id(c)
            );
            assert_eq!(
                Some(prep.tokens_before),
                v.get("tokensBefore").and_then(Value::as_f64),
                "{name} {}",
                session.id(c)
            );
            // Every cut in these long tool-heavy turns fell inside a turn, as Pi's summary says.
            assert!(prep.is_split_turn, "{name} {}", session.id(c));
            assert!(
                summary_analysis::summary_text(&session, c).contains(TURN_CONTEXT_MARKER.trim()),
                "{name} {}",
                session.id(c)
            );
            // Pi's answer at the same point agrees (the oracle's run beside the recording).
            let want = expected(&format!("{name}.before-{}.expected.json", session.id(c)));
            assert_eq!(
                want.get("compaction").and_then(|x| x.str_field("firstKeptEntryId")),
                v.str_field("firstKeptEntryId")
            );
            seen += 1;
        }
    }
    assert_eq!(seen, 5, "three automatic compactions, one manual and one automatic");
}

/// The Timeline's point at the leaf is Pi's own context estimate there, at the leaf of every
/// recording and before every compaction (where the estimate crossed the threshold).
#[test]
fn the_timeline_ends_on_pis_estimate() {
    let mut compared = 0;
    for name in NAMES {
        let session = open(name);
        let mut cases = vec![(session.file_leaf(), format!("{name}.expected.json"))];
        for c in compactions(&session) {
            cases.push((session.parent_of(c), format!("{name}.before-{}.expected.json", session.id(c))));
        }
        for (leaf, file) in cases {
            let want = expected(&file);
            let points = timeline(&session, leaf);
            assert_eq!(
                points.last().map(|p| p.context_tokens),
                Some(num(&want, &["tokens", "estimate", "tokens"])),
                "{file}"
            );
            compared += 1;
        }
    }
    assert_eq!(compared, 8);
}

fn dropped(session: &Session, idx: usize) -> Vec<(String, String)> {
    check(session, idx).dropped.into_iter().map(|d| (d.section, d.text)).collect()
}

/// The drop alarm on compactions that follow split turns: quiet where the next summary carried
/// the history and told the finished turn's outcome, and on for the one constraint the third
/// summary really lost. Under the rule before this one (every Done and Critical Context item of
/// the previous summary watched, the turn part included) each of these compactions raised an
/// alarm on the turn part's noise: the test measures that too, so it fails if the rule goes.
#[test]
fn the_drop_alarm_is_quiet_on_turn_noise_and_rings_for_a_lost_constraint() {
    let session = open("print-autocompact");
    let c = compactions(&session);
    assert_eq!(c.len(), 3);
    assert!(check(&session, c[0]).previous_entry_id.is_none() && dropped(&session, c[0]).is_empty());
    assert_eq!(dropped(&session, c[1]), []);
    assert_eq!(
        dropped(&session, c[2]),
        [(
            "Constraints & Preferences".to_string(),
            "Never touch `ledger/legacy.py`; it is frozen for the auditors.".to_string()
        )]
    );
    let m = open("rpc-manual");
    let mc = compactions(&m);
    assert_eq!(mc.len(), 2);
    assert_eq!(dropped(&m, mc[1]), []);

    // The same pair read as if the turn part were history: the old alarm's noise.
    // The recorded model folds most of the turn part into the next summary's Done, so the noise
    // shows on the third compaction: the second one's "Context for Suffix" lines (files changed so
    // far in the turn, the last step before the kept part).
    let flat = summary_analysis::summary_text(&session, c[1]).replace(TURN_CONTEXT_MARKER, "\n\n");
    let old_rule =
        summary_analysis::check::dropped_items(&parse(&flat), &parse(summary_analysis::summary_text(&session, c[2])));
    let noise: Vec<&str> =
        old_rule.iter().filter(|d| d.section != "Constraints & Preferences").map(|d| d.section.as_str()).collect();
    assert!(!noise.is_empty() && noise.iter().all(|n| *n == "Context for Suffix"), "{old_rule:?}");

    // Moved: the turn part's progress folded into Done is not reported as a move.
    for (sess, next) in [(&session, c[1]), (&session, c[2]), (&m, mc[1])] {
        let ch = check(sess, next);
        assert!(ch.moved.iter().all(|mv| !mv.from.starts_with("Turn Context")), "{:?}", ch.moved);
    }
}

/// Sections, retention and diff on what the real agent wrote, with facts read off the summaries.
#[test]
fn the_workbench_reads_every_summary_pi_wrote() {
    for name in NAMES {
        let session = open(name);
        for i in (0..session.len()).filter(|&i| summary_analysis::is_summary(&session, i)) {
            let p = parse(summary_analysis::summary_text(&session, i));
            assert_eq!(
                summary_analysis::print(&p),
                summary_analysis::summary_text(&session, i),
                "{name} {}: lossless",
                session.id(i)
            );
            let ch = check(&session, i);
            assert!(
                ch.retention.total > 0 && ch.retention.mentioned > 0,
                "{name} {}: {:?}",
                session.id(i),
                ch.retention
            );
            if session.kind(i) == Kind::Compaction {
                for role in [
                    SectionRole::Goal,
                    SectionRole::Constraints,
                    SectionRole::Done,
                    SectionRole::Decisions,
                    SectionRole::NextSteps,
                    SectionRole::CriticalContext,
                ] {
                    assert!(
                        p.history_sections().any(|x| x.role == role),
                        "{name} {}: no {role:?} section",
                        session.id(i)
                    );
                }
                let turn: Vec<&str> = p.sections.iter().filter(|x| x.turn_prefix).map(|x| x.name.as_str()).collect();
                for want in [
                    "Turn Context › Original Request",
                    "Turn Context › Early Progress",
                    "Turn Context › Context for Suffix",
                ] {
                    assert!(turn.contains(&want), "{name} {}: {turn:?}", session.id(i));
                }
            }
        }
    }
    let session = open("print-autocompact");
    let c = compactions(&session);
    // The third summary: the importer test it wrote and the error it hit are retained.
    let r = check(&session, c[2]).retention;
    let fact = |text: &str| {
        r.facts.iter().find(|f| f.text.contains(text)).unwrap_or_else(|| panic!("no fact {text}: {:?}", r.facts))
    };
    assert!(fact("tests/test_csv_import.py").mentioned);
    assert!(fact("239 != 240").mentioned);
    // The diff says where the constraint went: removed, not moved.
    let d = summary_analysis::diff(
        &parse(summary_analysis::summary_text(&session, c[1])),
        &parse(summary_analysis::summary_text(&session, c[2])),
    );
    let cons = d.sections.iter().find(|x| x.title == "Constraints & Preferences").unwrap();
    assert_eq!(cons.removed, ["Never touch `ledger/legacy.py`; it is frozen for the auditors."]);
    // The branch summary Pi wrote on leaving the float experiment: no previous summary to drop.
    let b = open("rpc-branch");
    let bs: Vec<usize> = (0..b.len()).filter(|&i| b.kind(i) == Kind::BranchSummary).collect();
    assert_eq!(bs.len(), 1);
    let ch = check(&b, bs[0]);
    assert!(ch.previous_entry_id.is_none() && ch.dropped.is_empty());
}
