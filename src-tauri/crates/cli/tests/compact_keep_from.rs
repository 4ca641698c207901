//! `arbor-cli compact FILE --keep-from ID` ("compact up to here"): on three sessions the real
//! `pi` wrote, every entry as the chosen cut. A valid cut point gives a compaction whose
//! `firstKeptEntryId` is that entry, which Pi loads with the context Arbor builds (the summary,
//! then the chosen entry); an invalid one is refused with the nearest valid ones named, and the
//! file is not touched.
#[path = "support/pi.rs"]
mod pi;

use session_engine::Session;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_arbor-cli");

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../session-engine/tests/fixtures/real-pi").join(format!("{name}.jsonl"))
}

fn inspect(file: &Path) -> serde_json::Value {
    let o = Command::new(BIN).arg("inspect").arg(file).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// Pi's view of many files in one Node process (tests/pi/pi-differential.mjs).
fn pi_views(files: &[PathBuf]) -> Vec<serde_json::Value> {
    let mut child = Command::new("node")
        .arg(pi::repo_root().join("tests/pi/pi-differential.mjs"))
        .env_remove("PI_CODING_AGENT_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    for f in files {
        writeln!(input, "{}", f.display()).unwrap();
    }
    drop(input);
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success());
    String::from_utf8(o.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn every_entry_as_the_cut_point_of_three_pi_sessions() {
    let dir = tempfile::tempdir().unwrap();
    // (session, leaf to compact at): print-autocompact ends with a compaction, so its leaf is the
    // entry before that compaction.
    let cases = [("rpc-manual", None), ("rpc-branch", None), ("print-autocompact", Some("f4528d4c"))];
    let mut written = Vec::new();
    let (mut valid, mut refused) = (0, 0);
    for (name, leaf) in cases {
        let session = Session::open(&fixture(name)).unwrap();
        let before = std::fs::read(fixture(name)).unwrap();
        for idx in 0..session.len() {
            let id = session.id(idx).to_string();
            let file = dir.path().join(format!("{name}-{id}.jsonl"));
            std::fs::write(&file, &before).unwrap();
            let mut args = vec![
                "compact".to_string(),
                file.display().to_string(),
                "--keep-from".into(),
                id.clone(),
                "--provider".into(),
                "offline".into(),
            ];
            if let Some(l) = leaf {
                args.extend(["--leaf".to_string(), l.to_string()]);
            }
            let o = Command::new(BIN)
                .args(&args)
                .env("PI_CODING_AGENT_DIR", dir.path().join("agent"))
                .env("ARBOR_KEYRING", "off")
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            if o.status.success() {
                valid += 1;
                let after = Session::open(&file).unwrap();
                let last = after.file_leaf().unwrap();
                let entry: serde_json::Value = serde_json::from_slice(&after.raw(last)).unwrap();
                assert_eq!(entry["type"], "compaction");
                assert_eq!(entry["firstKeptEntryId"], id.as_str(), "{name}");
                assert_eq!(
                    entry["parentId"].as_str(),
                    Some(leaf.unwrap_or_else(|| session.id(session.file_leaf().unwrap())))
                );
                let report = inspect(&file);
                assert_eq!(report["load"]["diagnostics"], serde_json::json!([]));
                let msgs = report["context"]["messages"].as_array().unwrap();
                assert_eq!(msgs[0]["role"], "compactionSummary");
                assert_eq!(msgs[1]["entryId"], id.as_str(), "{name}: the context goes on with the chosen entry");
                written.push((file, report));
            } else {
                refused += 1;
                assert_eq!(o.status.code(), Some(2), "{name} {id}: {err}");
                assert!(
                    err.contains(&format!("cannot keep from {id}: ")) && err.contains("nothing was written"),
                    "{name} {id}: {err}"
                );
                assert!(err.contains("nearest valid cut points: "), "{name} {id}: {err}");
                assert_eq!(std::fs::read(&file).unwrap(), before, "{name} {id}: a refusal writes nothing");
            }
        }
    }
    eprintln!("compact --keep-from: {valid} cut points written, {refused} refused");
    assert!(valid >= 20 && refused >= 60, "valid {valid}, refused {refused}");
    // Pi loads every file written, with the context Arbor builds.
    if !pi::pi_or_skip("compact --keep-from") {
        return;
    }
    let files: Vec<PathBuf> = written.iter().map(|(f, _)| f.clone()).collect();
    for ((file, report), pi) in written.iter().zip(pi_views(&files)) {
        assert_eq!(pi["file"], file.display().to_string());
        assert!(pi.get("error").is_none(), "{pi}");
        let ours: Vec<_> = report["context"]["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| (m["role"].clone(), m["sha256"].clone()))
            .collect();
        let theirs: Vec<_> = pi["context"]["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| (m["role"].clone(), m["sha256"].clone()))
            .collect();
        assert_eq!(ours, theirs, "{}", file.display());
        assert_eq!(report["tokens"]["estimate"]["tokens"], pi["context"]["tokens"]["tokens"], "{}", file.display());
        assert_eq!(report["leafId"], pi["load"]["fileLeafId"]);
    }
}
