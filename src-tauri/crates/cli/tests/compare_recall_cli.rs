//! `arbor-cli compare` and `arbor-cli recall` through the real binary: the JSON shapes, a recall
//! Pi loads and sends (its context ends with the recalled message, whose text is the source
//! entry's), a long tool result cut with a marker, and the refusals (already in context, an
//! earlier recall, a read-only file), each writing nothing.
#[path = "support/pi.rs"]
mod pi;

use serde_json::Value as J;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixture(dir: &str, name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../session-engine/tests/fixtures/{dir}/{name}.jsonl"))
}

fn copy(dir: &str, name: &str) -> PathBuf {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("compare_recall-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    let f = tmp.join(format!("{name}.jsonl"));
    std::fs::copy(fixture(dir, name), &f).unwrap();
    f
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_arbor-cli"))
        .args(args)
        .env("PI_CODING_AGENT_DIR", "/nonexistent-agent-dir")
        .output()
        .unwrap()
}

fn ok_json(args: &[&str]) -> J {
    let o = run(args);
    assert!(o.status.success(), "arbor-cli {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn refused(file: &Path, args: &[&str]) -> String {
    let before = std::fs::read(file).unwrap();
    let o = run(args);
    assert_eq!(o.status.code(), Some(2), "{args:?} must exit 2: {}", String::from_utf8_lossy(&o.stdout));
    assert_eq!(std::fs::read(file).unwrap(), before, "nothing was written");
    String::from_utf8(o.stderr).unwrap()
}

#[test]
fn compare_json_has_the_issue_shape() {
    let f = fixture("conformance", "branch-simple-siblings");
    let c = ok_json(&["compare", f.to_str().unwrap(), "--a", "c2dfa6ab", "--b", "55732918", "--json"]);
    assert_eq!(c["ancestorId"], "3a3a8877");
    for s in c["sides"].as_array().unwrap() {
        for k in [
            "tipId",
            "entries",
            "contextTokens",
            "summaries",
            "readFiles",
            "modifiedFiles",
            "commands",
            "errors",
            "lastUserRequest",
            "cost",
        ] {
            assert!(s.get(k).is_some(), "side has {k}");
        }
    }
    assert_eq!(c["sides"][0]["tipId"], "c2dfa6ab");
    for part in ["onlyA", "onlyB", "both"] {
        assert!(c[part]["readFiles"].is_array() && c[part]["modifiedFiles"].is_array(), "{part}");
    }
    assert_eq!(c["both"]["modifiedDifferently"][0], "/home/dev/project/.env.example");
    let err =
        String::from_utf8(run(&["compare", f.to_str().unwrap(), "--a", "nope", "--b", "55732918"]).stderr).unwrap();
    assert!(err.contains("no entry with id nope"), "{err}");
}

#[test]
fn recall_is_loaded_and_sent_by_pi() {
    let file = copy("real-pi", "print-autocompact");
    let f = file.to_str().unwrap();
    // 8ff1ab00: the failing test run's output, compacted away by the first compaction.
    let before = std::fs::read(&file).unwrap();
    let preview = ok_json(&["recall", f, "--entry", "8ff1ab00", "--max-chars", "300", "--dry-run", "--json"]);
    assert_eq!(std::fs::read(&file).unwrap(), before, "--dry-run writes nothing");
    assert_eq!(preview["cut"][0], "8ff1ab00", "a result over the limit is cut");
    assert_eq!(preview["crossesThreshold"], false);
    assert!(preview["tokens"].as_f64().unwrap() > 0.0);
    assert_eq!(
        preview["contextTokensAfter"].as_f64().unwrap() - preview["contextTokens"].as_f64().unwrap(),
        preview["tokens"].as_f64().unwrap(),
        "the message's estimate is what the context grows by"
    );

    let out = ok_json(&["recall", f, "--entry", "8ff1ab00", "--json"]);
    let id = out["entryId"].as_str().unwrap().to_string();
    assert!(std::fs::read(&file).unwrap().starts_with(&before), "appended, nothing rewritten");
    let text = std::fs::read_to_string(&file).unwrap();
    let last: J = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    let keys: Vec<&str> = last.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        ["type", "customType", "content", "display", "details", "id", "parentId", "timestamp"],
        "Pi's key order"
    );
    assert_eq!((last["customType"].as_str(), last["display"].as_bool()), (Some("arbor-recall"), Some(true)));
    assert_eq!(last["details"]["sources"][0]["entryId"], "8ff1ab00");
    // The source's text, whole (under the limit), under its one-line header.
    let source: J =
        text.lines().map(|l| serde_json::from_str::<J>(l).unwrap()).find(|e| e["id"] == "8ff1ab00").unwrap();
    let source_text = source["message"]["content"][0]["text"].as_str().unwrap();
    let content = last["content"].as_str().unwrap();
    assert!(content.starts_with("[Brought back by Arbor: tool result of bash 8ff1ab00 from "), "{content:.120}");
    assert!(content.ends_with(source_text), "the text is the source entry's");

    // Pi loads the file, and its context ends with the recalled message.
    if pi::pi_or_skip("recall_is_loaded_and_sent_by_pi") {
        let view = pi::assert_pi_agrees(&file, None);
        assert_eq!(view.leaf_id.as_deref(), Some(id.as_str()));
        let last_msg = view.messages.last().expect("a context");
        assert_eq!(last_msg.role, "custom");
        assert!(last_msg.text.ends_with(source_text), "Pi sends the source's text: {:.200}", last_msg.text);
    }

    // Refusals: in context already (it was just brought back), an entry in context at the leaf.
    let err = refused(&file, &["recall", f, "--entry", "8ff1ab00"]);
    assert!(err.contains("the model already sees entry 8ff1ab00"), "{err}");
    let leaf_parent = last["parentId"].as_str().unwrap().to_string();
    let err = refused(&file, &["recall", f, "--entry", &leaf_parent]);
    assert!(err.contains("already sees"), "{err}");
}

#[test]
fn recall_on_a_read_only_file_says_how_to_continue() {
    let file = copy("conformance", "load-v1-legacy");
    let first_entry = {
        let text = std::fs::read_to_string(&file).unwrap();
        let e: J = serde_json::from_str(text.lines().nth(1).unwrap()).unwrap();
        e["id"].as_str().map(str::to_string)
    };
    let id = first_entry.unwrap_or_else(|| "x".into());
    let err = refused(&file, &["recall", file.to_str().unwrap(), "--entry", &id]);
    assert!(err.contains("read-only") && err.contains("arbor-cli migrate"), "{err}");
}

/// The planted-secrets session with every secret on a branch that was left, in a folder of its own.
fn planted_with_a_branch() -> (PathBuf, Vec<secrets::corpus::Placed>) {
    let (text, placed) = secrets::corpus::planted_session_left_behind();
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("recall-secrets-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    let f = tmp.join("planted.jsonl");
    std::fs::write(&f, text).unwrap();
    (f, placed)
}

#[test]
fn recall_lists_the_secrets_it_redacts_and_keeps_them_only_when_asked() {
    let (file, placed) = planted_with_a_branch();
    let f = file.to_str().unwrap();
    // The first planted secret in a tool result (the third entry) and one in a tool call's arguments.
    let in_result = placed.iter().find(|p| p.field == "message.content[0].text" && p.entry_id != "00000001").unwrap();
    let in_call = placed.iter().find(|p| p.field.ends_with("arguments.command")).unwrap();
    let ids = [in_result.entry_id.as_str(), in_call.entry_id.as_str()];

    let preview = ok_json(&["recall", f, "--entry", ids[0], "--entry", ids[1], "--dry-run", "--json"]);
    let listed: Vec<(String, String)> = preview["secrets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["entryId"].as_str().unwrap().to_string(), s["kind"].as_str().unwrap().to_string()))
        .collect();
    assert!(listed.contains(&(in_result.entry_id.clone(), in_result.planted.kind.to_string())), "{listed:?}");
    assert!(listed.contains(&(in_call.entry_id.clone(), in_call.planted.kind.to_string())), "{listed:?}");
    assert_eq!(preview["secretsKept"], false);
    // The text-based listing goes to stderr, before anything is written.
    let o = run(&["recall", f, "--entry", ids[0], "--dry-run"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(&format!("{} in entry {}", in_result.planted.kind, in_result.entry_id)), "{err}");

    let out = ok_json(&["recall", f, "--entry", ids[0], "--entry", ids[1], "--json"]);
    let text = std::fs::read_to_string(&file).unwrap();
    let last: J = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(last["id"], out["entryId"]);
    let content = last["content"].as_str().unwrap();
    assert!(!content.contains(&in_result.planted.secret) && !content.contains(&in_call.planted.secret), "redacted");
    assert!(content.contains(&format!("[redacted: {}]", in_result.planted.kind)), "{content}");
    // The source entries still hold their secrets: nothing is removed from the file.
    assert!(text.contains(&in_result.planted.secret));

    // --keep-secrets, on a fresh copy: the secret goes into the message as it was, and is listed.
    let (file, _) = planted_with_a_branch();
    let f = file.to_str().unwrap();
    let kept = ok_json(&["recall", f, "--entry", ids[0], "--keep-secrets", "--json"]);
    assert_eq!(kept["secretsKept"], true);
    assert!(!kept["secrets"].as_array().unwrap().is_empty());
    let text = std::fs::read_to_string(&file).unwrap();
    let last: J = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert!(last["content"].as_str().unwrap().contains(&in_result.planted.secret));
}
