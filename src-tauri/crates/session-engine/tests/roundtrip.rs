//! Property tests over random trees: every line reads back byte for byte, the engine's paths
//! equal a naive replay of Pi's rules, and appends never change earlier bytes.

use proptest::prelude::*;
use session_engine::{entries, store, Session};

#[derive(Debug, Clone)]
enum Op {
    Message { parent_back: usize, text: String, assistant: bool },
    Label { target_back: usize, label: Option<String> },
    Compaction { keep_back: usize },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0usize..4, "[a-zA-Z0-9 éß🚀\\\\\"\n\t]{0,40}", any::<bool>()).prop_map(|(p, t, a)| Op::Message { parent_back: p, text: t, assistant: a }),
        1 => (0usize..6, proptest::option::of("[a-z]{0,6}")).prop_map(|(t, l)| Op::Label { target_back: t, label: l }),
        1 => (0usize..8).prop_map(|k| Op::Compaction { keep_back: k }),
    ]
}

fn build(ops: &[Op]) -> (Vec<String>, Vec<(String, Option<String>)>) {
    let mut lines = vec![entries::line(&entries::header("sess", "2025-01-01T00:00:00.000Z", "/p", None))];
    let mut ids: Vec<String> = Vec::new();
    let mut parents: Vec<(String, Option<String>)> = Vec::new();
    for (n, o) in ops.iter().enumerate() {
        let id = format!("{:08x}", n + 1);
        let ts = session_engine::time::format_iso_ms(1_735_689_600_000 + n as i64 * 1000);
        let pick = |back: usize| {
            if ids.is_empty() {
                None
            } else {
                Some(ids[ids.len() - 1 - back.min(ids.len() - 1)].clone())
            }
        };
        let (v, parent) = match o {
            Op::Message { parent_back, text, assistant } => {
                let parent = pick(*parent_back);
                let msg = if *assistant {
                    pi_json::obj([
                        ("role", "assistant".into()),
                        (
                            "content",
                            pi_json::Value::Arr(vec![pi_json::obj([
                                ("type", "text".into()),
                                ("text", text.as_str().into()),
                            ])]),
                        ),
                        ("stopReason", "stop".into()),
                        ("timestamp", pi_json::Value::Num(n as f64)),
                    ])
                } else {
                    pi_json::obj([
                        ("role", "user".into()),
                        ("content", text.as_str().into()),
                        ("timestamp", pi_json::Value::Num(n as f64)),
                    ])
                };
                (entries::message(&id, parent.as_deref(), &ts, msg), parent)
            }
            Op::Label { target_back, label } => {
                let parent = pick(0);
                let target = pick(*target_back).unwrap_or_else(|| id.clone());
                (entries::label(&id, parent.as_deref(), &ts, &target, label.as_deref()), parent)
            }
            Op::Compaction { keep_back } => {
                let parent = pick(0);
                let keep = pick(*keep_back).unwrap_or_else(|| id.clone());
                (entries::compaction(&id, parent.as_deref(), &ts, "sum", &keep, 10.0, None, false), parent)
            }
        };
        lines.push(entries::line(&v));
        parents.push((id.clone(), parent));
        ids.push(id);
    }
    (lines, parents)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    #[test]
    fn lines_round_trip_and_paths_match_a_naive_walk(ops in proptest::collection::vec(op(), 0..40)) {
        let (lines, parents) = build(&ops);
        let text = lines.join("\n") + "\n";
        let session = Session::from_bytes(text.as_bytes().to_vec());
        prop_assert_eq!(session.len(), ops.len());
        for i in 0..session.len() {
            // Raw bytes kept, and JSON.stringify of the parsed entry gives the same bytes.
            prop_assert_eq!(session.raw(i), lines[i + 1].as_bytes());
            prop_assert_eq!(pi_json::to_string(session.value(i)), lines[i + 1].clone());
        }
        // Naive replay: the leaf is the last line; walk parentIds through a map.
        if let Some((leaf, _)) = parents.last() {
            let map: std::collections::HashMap<_, _> = parents.iter().cloned().collect();
            let mut naive = vec![leaf.clone()];
            let mut cur = map[leaf].clone();
            while let Some(p) = cur { naive.push(p.clone()); cur = map[&p].clone(); }
            naive.reverse();
            let got: Vec<String> = session.path_ids(session.file_leaf()).into_iter().map(str::to_string).collect();
            prop_assert_eq!(got, naive);
        } else {
            // No entries: no leaf, an empty path.
            prop_assert_eq!(session.file_leaf(), None);
            prop_assert!(session.path_ids(None).is_empty());
        }
    }

    #[test]
    fn appends_never_change_earlier_bytes(ops in proptest::collection::vec(op(), 1..20), torn in any::<bool>()) {
        let (lines, _) = build(&ops);
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        let mut text = lines[..lines.len() - 1].join("\n") + "\n";
        if torn { text.push_str("{\"type\":\"mess"); }
        std::fs::write(&p, &text).unwrap();
        store::append_line(&p, lines.last().unwrap(), false).unwrap();
        let after = std::fs::read(&p).unwrap();
        prop_assert!(after.starts_with(text.as_bytes()));
        let session = Session::open(&p).unwrap();
        prop_assert_eq!(session.len(), ops.len());
        prop_assert_eq!(session.raw(session.len() - 1), lines.last().unwrap().as_bytes());
    }
}
