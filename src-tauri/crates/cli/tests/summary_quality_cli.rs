//! `arbor-cli summary score|cite --json` through the real binary, on a session the real `pi`
//! wrote: the JSON shapes, and the cost of forgetting checked against a count made here
//! independently from the file's lines.
use serde_json::Value as J;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn recording() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../session-engine/tests/fixtures/real-pi/print-autocompact.jsonl")
}

fn ok_json(args: &[&str]) -> J {
    let o = Command::new(env!("CARGO_BIN_EXE_arbor-cli")).args(args).output().unwrap();
    assert!(o.status.success(), "arbor-cli {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn lines() -> Vec<J> {
    std::fs::read_to_string(recording()).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The paths `read` was called with in these entries.
fn reads(entries: &[&J]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for e in entries {
        for b in e["message"]["content"].as_array().into_iter().flatten() {
            if b["type"] == "toolCall" && b["name"] == "read" {
                out.insert(b["arguments"]["path"].as_str().unwrap().to_string());
            }
        }
    }
    out
}

#[test]
fn score_and_cite_on_a_real_pi_session() {
    let all = lines();
    let compactions: Vec<&J> = all.iter().filter(|e| e["type"] == "compaction").collect();
    assert!(compactions.len() >= 2);
    let file = recording();
    let f = file.to_str().unwrap();
    for c in &compactions {
        let id = c["id"].as_str().unwrap();
        let s = ok_json(&["summary", "score", f, "--entry", id, "--json"]);
        assert_eq!(s["entryId"], *id);
        let score = s["score"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&score));
        let mut total = 0;
        for k in ["recall", "artifact", "decision", "continuation"] {
            let n = s["byKind"][k]["probes"].as_u64().unwrap();
            assert!(s["byKind"][k]["answered"].as_u64().unwrap() <= n);
            total += n;
        }
        let probes = s["probes"].as_array().unwrap();
        assert_eq!(probes.len() as u64, total);
        for p in probes {
            for key in ["kind", "question", "expected", "sourceEntryId", "answered"] {
                assert!(!p[key].is_null(), "{key} in {p}");
            }
        }
        assert!(s["unsupported"].is_array());
        let g = &s["growth"];
        assert!(g["summaryTokens"].as_f64().unwrap() > 0.0 && g["replacedTokens"].as_f64().unwrap() > 0.0);
        assert!(g.get("previousSummaryTokens").is_some() && g.get("flag").is_some());

        // The cost of forgetting, counted here from the lines: the file is one path (no
        // branches), so "before the cut" is every line before the first kept entry, and the
        // window is the lines after the compaction up to the next one.
        let pos = |id: &str| all.iter().position(|e| e["id"] == id).unwrap();
        let cut = pos(c["firstKeptEntryId"].as_str().unwrap());
        let at = pos(id);
        let end = all[at + 1..].iter().position(|e| e["type"] == "compaction").map_or(all.len(), |p| at + 1 + p);
        let before = reads(&all[..cut].iter().collect::<Vec<_>>());
        let after = reads(&all[at + 1..end].iter().collect::<Vec<_>>());
        let expected: BTreeSet<String> = before.intersection(&after).cloned().collect();
        let got: BTreeSet<String> = s["forgetting"]["rereadFiles"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        assert_eq!(got, expected, "compaction {id}");
        assert!(s["forgetting"]["callsBeforeFirstEdit"].is_u64());

        let cites = ok_json(&["summary", "cite", f, "--entry", id, "--json"]);
        let items = cites["items"].as_array().unwrap();
        assert!(!items.is_empty());
        for it in items {
            assert!(it["section"].is_string() && it["text"].is_string() && it["unsupported"].is_boolean());
            for src in it["sources"].as_array().unwrap() {
                let sid = src["entryId"].as_str().unwrap();
                assert!(all.iter().any(|e| e["id"] == sid), "{sid}");
                assert!(src["score"].as_f64().unwrap() > 0.0);
            }
        }
    }
    // On this recording the agent re-read files after the first compaction: the count is real.
    let first = compactions[1]["id"].as_str().unwrap();
    let s = ok_json(&["summary", "score", f, "--entry", first, "--json"]);
    assert!(!s["forgetting"]["rereadFiles"].as_array().unwrap().is_empty());
}
