//! `inspect`, `tree` and `context` through the real binary: output shape, the conformance
//! report on a corpus file, and clear errors for a missing file, a bad flag or an unknown id.

use std::path::PathBuf;
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_arbor-cli"))
}

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../session-engine/tests/fixtures/conformance").join(name)
}

fn run(args: &[&str]) -> (i32, String, String) {
    let o = bin().args(args).output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn help_on_every_command() {
    for cmd in ["inspect", "tree", "context", "compact", "navigate", "index", "search"] {
        let (code, out, _) = run(&[cmd, "--help"]);
        assert_eq!(code, 0, "{cmd} --help");
        assert!(out.contains("Usage: arbor-cli"), "{cmd}: {out}");
    }
}

#[test]
fn inspect_prints_the_oracle_fields() {
    let f = fixture("basic-tool-chain.jsonl");
    let (code, out, err) = run(&["inspect", f.to_str().unwrap(), "--keep-recent-tokens", "800"]);
    assert_eq!(code, 0, "{err}");
    let v = pi_json::parse(&out).unwrap();
    assert_eq!(v.get("leafId").and_then(|x| x.as_str()), Some("06ee6f65"));
    let c = v.get("compaction").unwrap();
    assert_eq!(c.str_field("firstKeptEntryId"), Some("7d16d009"));
    assert_eq!(c.get("isSplitTurn").and_then(|x| x.as_bool()), Some(true));
    assert_eq!(v.get("tokens").unwrap().get("estimate").unwrap().num_field("tokens"), Some(5876.0));
}

#[test]
fn inspect_with_options_json_and_target() {
    let dir = tempfile::tempdir().unwrap();
    let opts = dir.path().join("o.json");
    std::fs::write(&opts, r#"{"keepRecentTokens": 20000, "target": "55732918"}"#).unwrap();
    let f = fixture("branch-simple-siblings.jsonl");
    let (code, out, err) = run(&["inspect", f.to_str().unwrap(), "--options-json", opts.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let v = pi_json::parse(&out).unwrap();
    assert!(v.get("branch").unwrap().get("entriesToSummarize").unwrap().as_array().unwrap().len() > 3);
}

#[test]
fn tree_marks_path_leaf_compactions_and_branches() {
    let f = fixture("compaction-repeated.jsonl");
    let (code, out, err) = run(&["tree", f.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("[COMPACTION]"));
    assert!(out.lines().any(|l| l.starts_with("@ ")), "leaf marked");
    assert!(out.lines().any(|l| l.starts_with("~ ")), "compacted-away entries marked");
    let f = fixture("branch-summaries-in-context.jsonl");
    let (_, out, _) = run(&["tree", f.to_str().unwrap()]);
    assert!(out.contains("[BRANCH SUMMARY]"));
    assert!(out.contains("├─ branch:"));
    let f = fixture("basic-labels-and-names.jsonl");
    let (_, out, _) = run(&["tree", f.to_str().unwrap()]);
    assert!(out.contains("[label: "), "{out}");
}

#[test]
fn context_lists_what_the_model_sees_with_tokens() {
    let f = fixture("compaction-repeated.jsonl");
    let (code, out, err) =
        run(&["context", f.to_str().unwrap(), "--context-window", "40000", "--reserve-tokens", "4000"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("SUMMARY (compaction)"));
    assert!(out.contains("threshold 36000"));
    assert!(out.contains("~"));
}

#[test]
fn clear_errors() {
    let (code, _, err) = run(&["tree", "/definitely/not/here.jsonl"]);
    assert_eq!(code, 2);
    assert!(err.contains("no such file"), "{err}");
    let f = fixture("basic-simple-chat.jsonl");
    let (code, _, err) = run(&["context", f.to_str().unwrap(), "--leaf", "deadbeef"]);
    assert_eq!(code, 2);
    assert!(err.contains("no entry with id deadbeef"), "{err}");
    let (code, _, err) = run(&["inspect", f.to_str().unwrap(), "--no-such-flag"]);
    assert_eq!(code, 2);
    assert!(err.contains("unexpected argument"), "{err}");
    let bad = fixture("load-invalid-header.jsonl");
    let (code, _, err) = run(&["tree", bad.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("not a Pi session"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let (code, _, err) = run(&["tree", dir.path().to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("directory"), "{err}");
}

/// On a session the real `pi` program wrote for a custom model (13,000 tokens in Pi's
/// models.json, reserve 2,000 in its settings.json), `context` gives Pi's threshold, not
/// 200,000 − 16,384; flags still override.
#[test]
fn context_takes_the_window_from_pis_models_json_and_the_reserve_from_its_settings() {
    let real = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../session-engine/tests/fixtures/real-pi");
    let f = real.join("print-autocompact.jsonl");
    let run_in = |agent: &std::path::Path, extra: &[&str]| {
        let o = bin().env("PI_CODING_AGENT_DIR", agent).arg("context").arg(&f).args(extra).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let out = run_in(&real.join("agent"), &[]);
    assert!(out.contains("threshold 11000 (window 13000 − reserve 2000); OVER the threshold"), "{out}");
    assert!(out.contains("Window: scripted-13k · 13k from Pi's models.json (loopback)"), "{out}");
    let out = run_in(&real.join("agent"), &["--context-window", "64000", "--reserve-tokens", "4000"]);
    assert!(
        out.contains("threshold 60000 (window 64000 − reserve 4000); under the threshold")
            && out.contains("Window: --context-window"),
        "{out}"
    );
    // Without Pi's files (another agent folder): the unknown model's 200k and Pi's default reserve.
    let empty = tempfile::tempdir().unwrap();
    let out = run_in(empty.path(), &[]);
    assert!(out.contains("threshold 183616 (window 200000 − reserve 16384)"), "{out}");
}
