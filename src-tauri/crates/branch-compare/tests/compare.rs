//! Compare on the conformance corpus's branched cases, against Pi's own branch collection
//! (`collectEntriesForBranchSummary` from the old leaf to the target: the entries side A holds,
//! the common ancestor and the file operations Pi found there), and on a built session whose
//! sides touch known files.
use branch_compare::compare;
use session_engine::{entries, Session};
use std::collections::BTreeSet;
use std::path::Path;

fn corpus() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../session-engine/tests/fixtures/conformance")
}

fn strs(v: Option<&pi_json::Value>) -> BTreeSet<String> {
    v.and_then(|v| v.as_array()).unwrap().iter().map(|x| x.as_str().unwrap().to_string()).collect()
}

#[test]
fn sides_are_pi_branch_collections_on_the_corpus() {
    let mut n = 0;
    for f in std::fs::read_dir(corpus()).unwrap() {
        let p = f.unwrap().path();
        let name = p.file_name().unwrap().to_str().unwrap().to_string();
        let Some(case) = name.strip_suffix(".expected.json") else { continue };
        // Pi's oracle output keeps lone surrogates as JSON escapes: Arbor's own JSON reader takes them.
        let expected = pi_json::parse(&std::fs::read_to_string(&p).unwrap()).unwrap();
        let Some(b) = expected.get("branch") else { continue };
        let (Some(old_id), Some(target_id)) = (b.str_field("oldLeafId"), b.str_field("targetId")) else { continue };
        let session = Session::open(&corpus().join(format!("{case}.jsonl"))).unwrap();
        let old = session.index_of(old_id).unwrap();
        let target = session.index_of(target_id).unwrap();
        let c = compare(&session, old, target);
        assert_eq!(c.ancestor_id.as_deref(), b.str_field("commonAncestorId"), "{case}");
        let pi_entries: Vec<&str> = b
            .get("entriesToSummarize")
            .and_then(|v| v.as_array())
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(c.sides[0].entry_ids, pi_entries, "{case}: side A is Pi's collection");
        assert_eq!(c.sides[0].entries, pi_entries.len());
        // Pi's file operations come from the messages it kept within the branch budget: a
        // subset of the side's (all of them when the budget kept every message).
        let ops = b.get("fileOps").unwrap();
        let read: BTreeSet<String> = c.sides[0].read_files.iter().cloned().collect();
        let modified: BTreeSet<String> = c.sides[0].modified_files.iter().cloned().collect();
        assert!(strs(ops.get("read")).is_subset(&read), "{case}: {:?} ⊄ {read:?}", ops.get("read"));
        let pi_mod: BTreeSet<String> = strs(ops.get("written")).union(&strs(ops.get("edited"))).cloned().collect();
        assert!(pi_mod.is_subset(&modified), "{case}");
        // Side B is the collection the other way round, and the two meet at the same ancestor.
        let back = session_engine::branch::collect_branch_entries(&session, Some(target), old);
        let back_ids: Vec<&str> = back.entries.iter().map(|&i| session.id(i)).collect();
        assert_eq!(c.sides[1].entry_ids, back_ids, "{case}");
        // What the model sees at each tip is Pi's context there.
        if expected.str_field("leafId") == Some(old_id) {
            let pi_tokens = expected.get("tokens").and_then(|t| t.get("estimate")).and_then(|e| e.get("tokens"));
            assert_eq!(Some(c.sides[0].context_tokens), pi_tokens.and_then(|t| t.as_f64()), "{case}");
        }
        n += 1;
    }
    assert!(n >= 6, "{n} branched cases");
}

const TS: &str = "2026-01-01T00:00:00.000Z";

fn line(v: &pi_json::Value) -> String {
    entries::line(v)
}

fn msg(id: &str, parent: &str, m: &str) -> String {
    line(&entries::message(id, Some(parent), TS, pi_json::parse(m).unwrap()))
}

fn call(id: &str, parent: &str, calls: &[(&str, &str, &str)], model: &str, cost: f64) -> String {
    let blocks: Vec<String> = calls
        .iter()
        .map(|(cid, n, a)| format!(r#"{{"type":"toolCall","id":"{cid}","name":"{n}","arguments":{a}}}"#))
        .collect();
    msg(
        id,
        parent,
        &format!(
            r#"{{"role":"assistant","content":[{}],"provider":"anthropic","model":"{model}","usage":{{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15,"cost":{{"total":{cost}}}}},"stopReason":"toolUse","timestamp":1}}"#,
            blocks.join(",")
        ),
    )
}

fn result(id: &str, parent: &str, cid: &str, tool: &str, text: &str, err: bool) -> String {
    msg(
        id,
        parent,
        &format!(
            r#"{{"role":"toolResult","toolCallId":"{cid}","toolName":"{tool}","content":[{{"type":"text","text":{}}}],"isError":{err},"timestamp":1}}"#,
            pi_json::quote(text)
        ),
    )
}

fn user(id: &str, parent: &str, text: &str) -> String {
    msg(id, parent, &format!(r#"{{"role":"user","content":{},"timestamp":1}}"#, pi_json::quote(text)))
}

/// root ← a1 (user) ← a2 (reads a.rs) ← fork
///   side A: edits x.rs ("A"), reads b.rs, runs `cargo test` (fails), asks "ship it"
///   side B: edits x.rs ("B"), edits y.rs, reads b.rs, runs `cargo test` (passes), asks "try B"
#[test]
fn sides_touching_known_files() {
    let mut lines = vec![line(&entries::header("s", TS, "/p", None))];
    lines.push(line(&entries::message(
        "r1",
        None,
        TS,
        pi_json::parse(r#"{"role":"user","content":"start","timestamp":1}"#).unwrap(),
    )));
    lines.push(call("r2", "r1", &[("c0", "read", r#"{"path":"a.rs"}"#)], "m-root", 0.5));
    lines.push(result("r3", "r2", "c0", "read", "fn a() {}", false));
    // Side A.
    lines.push(user("a1", "r3", "way A"));
    lines.push(call(
        "a2",
        "a1",
        &[("c1", "edit", r#"{"path":"x.rs","oldText":"1","newText":"A"}"#), ("c2", "read", r#"{"path":"b.rs"}"#)],
        "m-a",
        0.25,
    ));
    lines.push(result("a3", "a2", "c1", "edit", "ok", false));
    lines.push(call("a4", "a3", &[("c3", "bash", r#"{"command":"cargo test"}"#)], "m-a", 0.25));
    lines.push(result("a5", "a4", "c3", "bash", "error[E0425]: cannot find value `z`\ntest result: FAILED", true));
    lines.push(user("a6", "a5", "ship it"));
    // Side B.
    lines.push(user("b1", "r3", "way B"));
    lines.push(call(
        "b2",
        "b1",
        &[
            ("d1", "edit", r#"{"path":"x.rs","oldText":"1","newText":"B"}"#),
            ("d2", "write", r#"{"path":"y.rs","content":"y"}"#),
        ],
        "m-b",
        1.0,
    ));
    lines.push(call(
        "b3",
        "b2",
        &[("d3", "read", r#"{"path":"b.rs"}"#), ("d4", "bash", r#"{"command":"cargo test"}"#)],
        "m-b",
        1.0,
    ));
    lines.push(result("b4", "b3", "d4", "bash", "test result: ok. 3 passed", false));
    lines.push(user("b5", "b4", "try B"));
    let session = Session::from_bytes((lines.join("\n") + "\n").into_bytes());
    let c = compare(&session, session.index_of("a6").unwrap(), session.index_of("b5").unwrap());
    assert_eq!(c.ancestor_id.as_deref(), Some("r3"));
    let [a, b] = &c.sides;
    assert_eq!((a.tip_id.as_str(), a.entries, a.turns), ("a6", 6, 2));
    assert_eq!((b.tip_id.as_str(), b.entries, b.turns), ("b5", 5, 2));
    assert_eq!(a.read_files, ["b.rs"]);
    assert_eq!(a.modified_files, ["x.rs"]);
    assert_eq!(b.modified_files, ["x.rs", "y.rs"]);
    // Each file leads to the entry whose tool call last touched it on that side.
    assert_eq!(a.file_entries.get("x.rs").map(String::as_str), Some("a2"));
    assert_eq!(b.file_entries.get("b.rs").map(String::as_str), Some("b3"));
    assert_eq!(b.file_entries.get("y.rs").map(String::as_str), Some("b2"));
    assert_eq!((a.commands[0].command.as_str(), a.commands[0].last_outcome.as_str()), ("cargo test", "error"));
    assert_eq!((b.commands[0].command.as_str(), b.commands[0].last_outcome.as_str()), ("cargo test", "ok"));
    // The failing run's two error lines.
    assert_eq!(a.errors.len(), 2);
    assert!(a.errors[0].text.contains("E0425") && a.errors[0].entry_id == "a5");
    assert_eq!(a.errors[1].text, "test result: FAILED");
    assert!(b.errors.is_empty(), "{:?}", b.errors);
    assert_eq!(a.last_user_request.as_ref().map(|r| r.text.as_str()), Some("ship it"));
    assert_eq!(b.last_user_request.as_ref().map(|r| (r.text.as_str(), r.entry_id.as_str())), Some(("try B", "b5")));
    assert_eq!((a.model.as_deref(), a.cost), (Some("anthropic/m-a"), 0.5));
    assert_eq!((b.model.as_deref(), b.cost), (Some("anthropic/m-b"), 2.0));
    assert!(a.context_tokens > 0.0 && a.tokens.user > 0.0 && a.tokens.tool_calls > 0.0);
    assert!(c.only_a.read_files.is_empty() && c.only_a.modified_files.is_empty());
    assert_eq!(c.only_b.modified_files, ["y.rs"]);
    assert_eq!(c.both.read_files, ["b.rs"]);
    assert_eq!(c.both.modified_files, ["x.rs"]);
    assert_eq!(c.both.modified_differently, ["x.rs"], "A wrote \"A\", B wrote \"B\"");
    // A node against its own ancestor: that side is empty.
    let c = compare(&session, session.index_of("r3").unwrap(), session.index_of("b5").unwrap());
    assert_eq!(c.ancestor_id.as_deref(), Some("r3"));
    assert_eq!(c.sides[0].entries, 0);
    assert_eq!(c.sides[1].entries, 5);
}
