//! `arbor-cli index` and `arbor-cli search` through the real binary, on real files and a real
//! SQLite index in a temporary folder.
#[path = "../../library/tests/support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};
use support::*;

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_arbor-cli"));
    c.env_remove("ARBOR_INDEX_DB");
    c
}

fn scratch(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("library_cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run(args: &[&str]) -> Output {
    let out = bin().args(args).output().unwrap();
    out
}

fn ok(args: &[&str]) -> String {
    let out = run(args);
    assert!(out.status.success(), "arbor-cli {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn search_json(root: &Path, db: &Path, q: &str, extra: &[&str]) -> Vec<serde_json::Value> {
    let mut args = vec!["search", q, "--root", root.to_str().unwrap(), "--db", db.to_str().unwrap(), "--json"];
    args.extend_from_slice(extra);
    let out = ok(&args);
    serde_json::from_str::<serde_json::Value>(&out).unwrap().as_array().unwrap().clone()
}

#[test]
fn search_json_reports_status_against_the_leaf() {
    let d = scratch("status");
    let root = d.join("sessions");
    let db = d.join("idx.sqlite3");
    let f = three_status_session(&root.join("--p--/a.jsonl"), "sess-a", "/p");
    three_status_session(&root.join("--q--/b.jsonl"), "sess-b", "/q");
    // search alone brings the (empty) index up to date first
    let hits = search_json(&root, &db, "zanzibar decision", &[]);
    assert_eq!(hits.len(), 2);
    for h in &hits {
        assert_eq!(h["status"], "compacted");
        assert_eq!(h["entryId"], "00000001");
        assert!(h["snippet"].as_str().unwrap().contains("«zanzibar»"));
        assert!(["sess-a", "sess-b"].contains(&h["sessionId"].as_str().unwrap()));
    }
    let hits = search_json(&root, &db, "quokka", &["--project", "/p"]);
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0]["status"], "abandoned");
    assert_eq!(hits[0]["sessionPath"], f.canonicalize().unwrap().to_str().unwrap());
    assert_eq!(search_json(&root, &db, "platypus", &[])[0]["status"], "in_context");
    assert!(search_json(&root, &db, "nothingmatchesthis", &[]).is_empty());

    // an append by another process is seen by the next search without an explicit index
    let l = line(
        &serde_json::json!({"type":"message","id":"fffffff1","parentId":"0000000a","timestamp":"2025-03-01T12:00:00.000Z",
        "message":{"role":"user","content":"the capybara came later","timestamp":1740830400000u64}}),
    );
    append_from_other_process(&f, &l);
    let hits = search_json(&root, &db, "capybara", &[]);
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0]["entryId"], "fffffff1");

    // text output, and the index summary
    let out = ok(&["search", "quokka", "--root", root.to_str().unwrap(), "--db", db.to_str().unwrap()]);
    assert!(out.contains("[abandoned branch]"), "{out}");
    let out = ok(&["index", "--root", root.to_str().unwrap(), "--db", db.to_str().unwrap()]);
    assert!(out.contains("indexed 2 session files"), "{out}");
    assert!(out.contains("2 unchanged"), "{out}");
}

#[test]
fn bad_input_gives_a_sentence_and_exit_2() {
    let d = scratch("bad");
    let db = d.join("idx.sqlite3");
    let out = run(&["index", "--root", d.join("missing").to_str().unwrap(), "--db", db.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a folder"));
    std::fs::create_dir_all(d.join("r")).unwrap();
    let out = run(&["search", "   ", "--root", d.join("r").to_str().unwrap(), "--db", db.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("at least one word"));
}

#[test]
fn corrupt_index_is_replaced_and_the_user_is_told() {
    let d = scratch("corrupt");
    let root = d.join("sessions");
    let db = d.join("idx.sqlite3");
    three_status_session(&root.join("a.jsonl"), "sess-a", "/p");
    ok(&["index", "--root", root.to_str().unwrap(), "--db", db.to_str().unwrap()]);
    let _ = std::fs::remove_file(format!("{}-wal", db.display()));
    let _ = std::fs::remove_file(format!("{}-shm", db.display()));
    std::fs::write(&db, b"garbage garbage garbage".repeat(100)).unwrap();
    let out = run(&["search", "quokka", "--root", root.to_str().unwrap(), "--db", db.to_str().unwrap(), "--json"]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("moved to") && err.contains(".corrupt-"), "{err}");
    let hits: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(hits.as_array().unwrap().len(), 1);
}

#[test]
fn f35_kill_9_during_index_then_rerun_equals_a_fresh_build() {
    let d = scratch("kill");
    let root = d.join("sessions");
    for i in 0..150 {
        let mut g = Gen::new(&format!("sess-{i:03}"), &format!("/k/{}", i % 3));
        g.chain(None, 30, &format!("kill{} common", i % 5), "m");
        g.write(&root.join(format!("s{i:03}.jsonl")));
    }
    let db = d.join("idx.sqlite3");
    let fresh = d.join("fresh.sqlite3");
    let mut killed_mid_way = 0;
    for delay_ms in [30u64, 80, 150] {
        let mut child =
            bin().args(["index", "--root", root.to_str().unwrap(), "--db", db.to_str().unwrap()]).spawn().unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        if child.try_wait().unwrap().is_none() {
            killed_mid_way += 1;
        }
        let _ = child.kill(); // SIGKILL on Unix
        let _ = child.wait();
    }
    let out = ok(&["index", "--root", root.to_str().unwrap(), "--db", db.to_str().unwrap()]);
    assert!(out.contains("indexed 150 session files"), "{out}");
    ok(&["index", "--root", root.to_str().unwrap(), "--db", fresh.to_str().unwrap()]);
    for q in ["kill3", "common", "\"kill1 common question 29\""] {
        let mut a: Vec<String> = search_json(&root, &db, q, &[])
            .iter()
            .map(|h| format!("{}#{}#{}", h["sessionId"], h["entryId"], h["status"]))
            .collect();
        let mut b: Vec<String> = search_json(&root, &fresh, q, &[])
            .iter()
            .map(|h| format!("{}#{}#{}", h["sessionId"], h["entryId"], h["status"]))
            .collect();
        a.sort();
        b.sort();
        assert_eq!(a, b, "query {q}");
        assert!(!a.is_empty());
    }
    let c = rusqlite_free_quick_check(&db);
    assert_eq!(c, "ok");
    eprintln!("killed {killed_mid_way}/3 runs mid-way");
}

/// quick_check through the CLI's own index open (it runs quick_check and would move a bad file
/// aside with a notice on stderr).
fn rusqlite_free_quick_check(db: &Path) -> &'static str {
    let t = Instant::now();
    let out = run(&[
        "index",
        "--root",
        db.parent().unwrap().join("sessions").to_str().unwrap(),
        "--db",
        db.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    assert!(t.elapsed() < Duration::from_secs(30));
    if String::from_utf8_lossy(&out.stderr).contains("corrupt") {
        "corrupt"
    } else {
        "ok"
    }
}
