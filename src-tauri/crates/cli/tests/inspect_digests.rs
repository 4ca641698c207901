//! `arbor-cli inspect` on every session of the engine's conformance, random and real-Pi fixtures,
//! with each case's oracle options, is byte-identical to what it was when the digests were taken:
//! a restructuring that moves code between crates must not change one byte of the report.
//!
//! The digests (sha256 and length of stdout, one line per case) are in
//! `tests/fixtures/inspect-digests.txt`. After a change that is meant to change the report, write
//! them again with `ARBOR_UPDATE_INSPECT_DIGESTS=1 cargo test -p arbor-cli --test inspect_digests`
//! and say why in the commit.

use sha2::{Digest, Sha256};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

fn engine_fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../session-engine/tests/fixtures")
}

/// `(case name, session file, options file)` for every `<case>[.<variant>].expected.json`.
fn cases() -> Vec<(String, PathBuf, PathBuf)> {
    let mut out = Vec::new();
    for dir in ["conformance", "random", "real-pi"] {
        let d = engine_fixtures().join(dir);
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let Some(name) = p
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(".expected.json"))
                .map(str::to_string)
            else {
                continue;
            };
            let session = d.join(format!("{}.jsonl", name.split('.').next().unwrap()));
            out.push((format!("{dir}/{name}"), session, p));
        }
    }
    out.sort();
    out
}

#[test]
fn inspect_output_is_byte_identical_on_every_fixture() {
    let tmp = tempfile::tempdir().unwrap();
    let mut got = String::new();
    for (name, session, expected) in cases() {
        // The options in the file's own key order (the report echoes them).
        let v = pi_json::parse_bytes(&std::fs::read(&expected).unwrap()).unwrap();
        let opts = tmp.path().join("options.json");
        std::fs::write(&opts, pi_json::to_string(v.get("options").unwrap())).unwrap();
        let o = Command::new(env!("CARGO_BIN_EXE_arbor-cli"))
            .arg("inspect")
            .arg(&session)
            .arg("--options-json")
            .arg(&opts)
            .output()
            .unwrap();
        assert!(o.status.success(), "{name}: {}", String::from_utf8_lossy(&o.stderr));
        let digest: String = Sha256::digest(&o.stdout).iter().map(|b| format!("{b:02x}")).collect();
        let _ = writeln!(got, "{name} {} {digest}", o.stdout.len());
    }
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/inspect-digests.txt");
    if std::env::var_os("ARBOR_UPDATE_INSPECT_DIGESTS").is_some() {
        std::fs::write(&file, &got).unwrap();
    }
    let want = std::fs::read_to_string(&file).unwrap_or_default();
    assert!(got.lines().count() >= 80, "too few cases: {}", got.lines().count());
    let changed: Vec<&str> = got.lines().filter(|l| !want.lines().any(|w| w == *l)).collect();
    assert!(
        changed.is_empty() && want.lines().count() == got.lines().count(),
        "arbor-cli inspect changed on {} of {} cases (first: {:?}); if that is meant, set ARBOR_UPDATE_INSPECT_DIGESTS=1 and say why in the commit",
        changed.len(),
        got.lines().count(),
        changed.first()
    );
}
