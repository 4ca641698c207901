//! Forks across files through `arbor-cli inspect`, on sessions the real Pi wrote: a `/fork`
//! (`createBranchedSession`), a chain of three `newSession({parentSession})`, a parent that is
//! gone, and a header that names its own file.
#[path = "support/pi.rs"]
mod pi;

use serde_json::Value as J;
use std::path::{Path, PathBuf};
use std::process::Command;

fn inspect(file: &Path) -> J {
    let o = Command::new(env!("CARGO_BIN_EXE_arbor-cli")).arg("inspect").arg(file).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn pi_check(args: &[&str]) -> J {
    let o = Command::new("node")
        .arg(pi::repo_root().join("tests/pi/pi-check.mjs"))
        .args(args)
        .env_remove("PI_CODING_AGENT_DIR")
        .output()
        .expect("node");
    assert!(o.status.success(), "pi-check {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn dir(case: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("forks-{case}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn forks_written_by_pi_name_their_parent_and_fork_point() {
    if !pi::pi_or_skip("forks_written_by_pi_name_their_parent_and_fork_point") {
        return;
    }
    let d = dir("pi");
    let root = d.join("root.jsonl");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../session-engine/tests/fixtures/real-pi/print-autocompact.jsonl"),
        &root,
    )
    .unwrap();
    // Without parentSession: no key, so the oracle's report is unchanged.
    assert!(inspect(&root).get("parentSession").is_none());

    // Pi's /fork at an entry: the copied path ends there.
    let f = pi_check(&["fork", root.to_str().unwrap(), "--leaf", "8ff1ab00"]);
    let fork = PathBuf::from(f["file"].as_str().unwrap());
    let r = inspect(&fork);
    let p = &r["parentSession"];
    assert_eq!(p["value"], root.to_str().unwrap());
    assert_eq!((p["status"].as_str(), p["resolves"].as_bool()), (Some("resolves"), Some(true)));
    assert_eq!(p["forkPointId"], "8ff1ab00");

    // A chain of three newSession({parentSession}): each names the one before; nothing is
    // copied, so the fork point is the parent's leaf when the child was made.
    let c1 = PathBuf::from(pi_check(&["child", root.to_str().unwrap(), "--text", "one"])["file"].as_str().unwrap());
    let c2 = PathBuf::from(pi_check(&["child", c1.to_str().unwrap(), "--text", "two"])["file"].as_str().unwrap());
    let r2 = inspect(&c2);
    assert_eq!(r2["parentSession"]["value"], c1.to_str().unwrap());
    assert_eq!(r2["parentSession"]["resolves"], true);
    let c1_leaf = inspect(&c1)["load"]["fileLeafId"].clone();
    assert_eq!(r2["parentSession"]["forkPointId"], c1_leaf);
    let chain = session_engine::fork::ancestry(&c2, 10);
    assert_eq!(chain.len(), 2);
    assert_eq!(chain[1].path, root);

    // The middle one gone: named, not an error.
    std::fs::remove_file(&c1).unwrap();
    let r2 = inspect(&c2);
    assert_eq!(
        (r2["parentSession"]["status"].as_str(), r2["parentSession"]["resolves"].as_bool()),
        (Some("missing"), Some(false))
    );
    assert!(r2["parentSession"]["explain"].as_str().unwrap().contains("no longer there"));
    assert_eq!(r2["parentSession"]["forkPointId"], J::Null);
    assert_eq!(session_engine::fork::ancestry(&c2, 10).len(), 1, "the chain stops at the missing file");
}

#[test]
fn a_header_that_names_its_own_file_is_no_parent() {
    let d = dir("self");
    let file = d.join("self.jsonl");
    let header = format!(
        r#"{{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p","parentSession":{}}}"#,
        serde_json::to_string(file.to_str().unwrap()).unwrap()
    );
    std::fs::write(&file, format!("{header}\n")).unwrap();
    let r = inspect(&file);
    assert_eq!(r["parentSession"]["status"], "self-reference");
    assert_eq!(r["parentSession"]["resolves"], false);
    assert_eq!(session_engine::fork::ancestry(&file, 10).len(), 1, "no loop");
}
