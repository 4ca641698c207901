//! Forks across files in a real index: a session's forks are the indexed files whose header names
//! it as `parentSession` (absolute, relative to the fork's folder, or `..`-climbing), counted
//! without opening them; a fork of a missing parent still counts for that path, and a header
//! naming its own file is no fork.
mod support;

use library::Library;
use serde_json::json;
use std::path::Path;
use support::*;

fn fork(path: &Path, id: &str, parent_session: &str) {
    let mut g = Gen::new(id, "/p");
    g.lines[0]["parentSession"] = json!(parent_session);
    g.chain(None, 1, "fork", "m");
    g.write(path);
}

#[test]
fn forks_are_counted_per_parent_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("sessions");
    let proj = root.join("--p--");
    let parent = proj.join("parent.jsonl");
    let mut g = Gen::new("parent", "/p");
    g.chain(None, 2, "parent", "m");
    g.write(&parent);
    let lone = proj.join("lone.jsonl");
    Gen::new("lone", "/p").write(&lone);
    // Three forks of `parent`, each naming it another way.
    fork(&proj.join("fork-abs.jsonl"), "f1", &parent.display().to_string());
    fork(&proj.join("fork-rel.jsonl"), "f2", "parent.jsonl");
    fork(&root.join("--q--").join("fork-up.jsonl"), "f3", "../--p--/./parent.jsonl");
    // A fork whose parent is gone, and a header naming its own file.
    let gone = proj.join("deleted.jsonl");
    fork(&proj.join("fork-of-gone.jsonl"), "f4", &gone.display().to_string());
    fork(&proj.join("selfish.jsonl"), "f5", "selfish.jsonl");

    let db = dir.path().join("index.sqlite3");
    let mut lib = Library::open(&db).unwrap();
    lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    let counts = lib.fork_counts().unwrap();
    assert_eq!(counts.get(&parent), Some(&3), "{counts:?}");
    assert_eq!(counts.get(&gone), Some(&1), "a missing parent still has its fork");
    assert_eq!(counts.get(&lone), None);
    assert!(!counts.contains_key(&proj.join("selfish.jsonl")), "naming itself is no fork");
    assert_eq!(counts.len(), 2, "{counts:?}");
    let mut of = lib.forks_of(&parent).unwrap();
    of.sort();
    assert_eq!(
        of,
        vec![proj.join("fork-abs.jsonl"), proj.join("fork-rel.jsonl"), root.join("--q--").join("fork-up.jsonl")]
    );
    assert!(lib.forks_of(&lone).unwrap().is_empty());
    // The fork's row keeps the header's text as written.
    let rel = lib.session(&proj.join("fork-rel.jsonl")).unwrap().unwrap();
    assert_eq!(rel.parent_session.as_deref(), Some("parent.jsonl"));
}
