//! Cut validation on sessions the real `pi` wrote (session-engine's real-pi fixtures).
use pi_review::cut::{check_cut, check_cut_in_file, valid_cut_positions, CheckError};
use session_engine::compaction::prepare_compaction;
use session_engine::{CompactionSettings, Kind, Session};
use std::path::PathBuf;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../session-engine/tests/fixtures/real-pi")
        .join(format!("{name}.jsonl"))
}

fn open(name: &str) -> (Session, Vec<usize>) {
    let session = Session::open(&fixture(name)).unwrap();
    let path = session.path(session.file_leaf());
    (session, path)
}

#[test]
fn every_entry_is_either_a_valid_cut_or_refused_with_neighbours() {
    for name in ["print-autocompact", "rpc-manual", "rpc-branch"] {
        let session = Session::open(&fixture(name)).unwrap();
        // Every leaf on every branch, every entry of the session as the proposed cut.
        for leaf in 0..session.len() {
            let path = session.path(Some(leaf));
            let valid = valid_cut_positions(&session, &path);
            for idx in 0..session.len() {
                let id = session.id(idx);
                match check_cut(&session, &path, id) {
                    Ok(cut) => {
                        assert!(valid.contains(&cut.position), "{name}: {id} at leaf {}", session.id(leaf));
                        assert_eq!(path[cut.position], idx);
                        assert_ne!(session.role(idx), Some("toolResult"));
                        assert!(cut.position >= cut.span_start);
                        if cut.is_split_turn {
                            // A branch summary or custom message starts its own turn (Pi: an empty turn prefix).
                            assert!(cut.turn_start.is_some_and(|t| t <= cut.position));
                        }
                    }
                    Err(e) => {
                        assert!(!path.iter().enumerate().any(|(p, &i)| i == idx && valid.contains(&p)));
                        assert_eq!(e.nearest.is_empty(), valid.is_empty(), "{name}: {e}");
                        for n in &e.nearest {
                            let p = path.iter().position(|&i| session.id(i) == n).unwrap();
                            assert!(valid.contains(&p));
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn pis_own_cut_is_valid_where_it_cuts_at_a_message() {
    for name in ["print-autocompact", "rpc-manual", "rpc-branch"] {
        let session = Session::open(&fixture(name)).unwrap();
        let mut checked = 0;
        for leaf in 0..session.len() {
            let path = session.path(Some(leaf));
            for keep in [0.0, 500.0, 3500.0, 20000.0] {
                let Ok(prep) = prepare_compaction(
                    &session,
                    &path,
                    &CompactionSettings { keep_recent_tokens: keep, ..Default::default() },
                ) else {
                    continue;
                };
                let idx = path[prep.first_kept_position];
                let has_message_before = prep.messages_to_summarize.len() + prep.turn_prefix_messages.len() > 0;
                if matches!(session.kind(idx), Kind::Message | Kind::BranchSummary | Kind::CustomMessage)
                    && has_message_before
                {
                    let cut =
                        check_cut(&session, &path, &prep.first_kept_entry_id).unwrap_or_else(|e| panic!("{name}: {e}"));
                    assert_eq!(cut.is_split_turn, prep.is_split_turn);
                    assert_eq!(cut.span_start, prep.boundary_start);
                    checked += 1;
                }
            }
        }
        assert!(checked > 20, "{name}: {checked}");
    }
}

#[test]
fn refusals_say_why_and_name_the_nearest_valid_points() {
    let (session, path) = open("rpc-manual");
    let err = |id: &str| check_cut(&session, &path, id).unwrap_err().to_string();
    assert_eq!(
        err("86dfb0db"),
        "cannot keep from 86dfb0db: it is a tool result (it must stay with its tool call); nearest valid cut points: 90847218, 190461d2"
    );
    assert_eq!(
        err("69176e28"),
        "cannot keep from 69176e28: it is before the previous compaction's first kept entry (already summarized); nearest valid cut points: c956afba"
    );
    assert_eq!(
        err("2a0c6cde"),
        "cannot keep from 2a0c6cde: nothing before it is left to summarize; nearest valid cut points: c956afba"
    );
    assert_eq!(
        err("7e4d8172"),
        "cannot keep from 7e4d8172: it is a compaction entry; nearest valid cut points: 0d9ae6d9, 5ea325e4"
    );
    assert_eq!(err("nope0000"), "cannot keep from nope0000: no entry has this id in the session; nearest valid cut points: 90847218, 190461d2, 8d25023b");
    let user = check_cut(&session, &path, "5ea325e4").unwrap();
    assert!(!user.is_split_turn);
    let mid_turn = check_cut(&session, &path, "90847218").unwrap();
    assert!(mid_turn.is_split_turn);
    assert_eq!(mid_turn.turn_start.map(|p| session.id(path[p])), Some("5ea325e4"));

    let (session, path) = open("rpc-branch");
    let off = check_cut(&session, &path, "61e7f242").unwrap_err().to_string();
    assert_eq!(off, "cannot keep from 61e7f242: it is not on the path being compacted (another branch); nearest valid cut points: af683cb0, 2cb2c56f");
    assert!(check_cut(&session, &path, "2cb2c56f").is_ok(), "a branch summary is a cut point");
    let label = check_cut(&session, &path, "3a1f9606").unwrap_err().to_string();
    assert!(label.contains("a label entry, not a message"), "{label}");
}

#[test]
fn a_file_is_checked_on_the_path_to_pis_leaf() {
    let f = fixture("rpc-branch");
    // On the abandoned branch's tip, its own entries are cut points and the new branch's are not.
    assert!(check_cut_in_file(&f, Some("03e39e5b"), "61e7f242").is_ok());
    assert!(matches!(check_cut_in_file(&f, Some("03e39e5b"), "0df24a70"), Err(CheckError::Invalid(_))));
    assert!(matches!(check_cut_in_file(&f, Some("zzzz0000"), "61e7f242"), Err(CheckError::NoLeaf(_))));
    assert!(matches!(check_cut_in_file(&f.with_extension("missing"), None, "x"), Err(CheckError::Unreadable { .. })));
    // The leaf is a compaction: Pi would not compact there.
    let e = check_cut_in_file(&fixture("print-autocompact"), None, "18f2e745").unwrap_err().to_string();
    assert!(e.contains("Already compacted"), "{e}");
}

#[test]
fn a_plan_kept_from_an_entry_is_pis_own_plan_wherever_pi_cuts_there() {
    use pi_review::cut::plan_compaction_keep_from;
    use session_engine::compaction::plan_compaction;
    for name in ["print-autocompact", "rpc-manual", "rpc-branch"] {
        let session = Session::open(&fixture(name)).unwrap();
        let mut compared = 0;
        for leaf in 0..session.len() {
            let path = session.path(Some(leaf));
            for keep in [0.0, 1.0, 200.0, 800.0, 2000.0, 3500.0, 8000.0, 1e9] {
                let settings = CompactionSettings { keep_recent_tokens: keep, ..Default::default() };
                let Ok(pi) = plan_compaction(&session, Some(leaf), &settings) else { continue };
                if !valid_cut_positions(&session, &path).contains(&pi.prep.first_kept_position) {
                    continue;
                }
                let ours =
                    plan_compaction_keep_from(&session, Some(leaf), &settings, &pi.prep.first_kept_entry_id).unwrap();
                assert_eq!(ours, pi, "{name}: leaf {}, keep {keep}", session.id(leaf));
                compared += 1;
            }
        }
        assert!(compared > 20, "{name}: {compared}");
    }
}
