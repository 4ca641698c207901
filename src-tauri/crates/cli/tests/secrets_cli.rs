//! `arbor-cli secrets` and the export's redaction at the command level: a session with planted
//! keys (user messages, tool results, tool-call arguments) exports without any of them, with every
//! look-alike, a report that lists each, `--keep-secrets` keeping them, and the session file
//! byte-identical; a search near a key shows it redacted.
use secrets::corpus::{look_alikes, planted_session, Placed};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn scratch(case: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("secrets_cli-{case}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_arbor-cli")).args(args).env("ARBOR_KEYRING", "off").output().unwrap()
}

fn ok(args: &[&str]) -> Output {
    let o = run(args);
    assert!(o.status.success(), "arbor-cli {args:?} failed: {}", String::from_utf8_lossy(&o.stderr));
    o
}

fn planted(dir: &Path) -> (PathBuf, Vec<Placed>) {
    let (jsonl, placed) = planted_session();
    let file = dir.join("2025-03-01T09-00-00-000Z_planted.jsonl");
    std::fs::write(&file, jsonl).unwrap();
    (file, placed)
}

fn assert_lists_each(list: &serde_json::Value, placed: &[Placed]) {
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), placed.len(), "{list:?}");
    for p in placed {
        assert!(
            list.iter().any(|f| f["entryId"] == p.entry_id.as_str()
                && f["kind"] == p.planted.kind
                && f["field"] == p.field.as_str()
                && f["start"] == p.start
                && f["end"] == p.end),
            "{} at {} {} {}..{} is not listed",
            p.planted.kind,
            p.entry_id,
            p.field,
            p.start,
            p.end
        );
    }
}

#[test]
fn secrets_lists_every_planted_key_where_the_export_shows_it() {
    let dir = scratch("list");
    let (file, placed) = planted(&dir);
    let o = ok(&["secrets", file.to_str().unwrap(), "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_lists_each(&v["findings"], &placed);
    let human = String::from_utf8(ok(&["secrets", file.to_str().unwrap()]).stdout).unwrap();
    assert!(human.contains(&format!("{} secret(s)", placed.len())), "{human}");
    for p in &placed {
        assert!(!human.contains(&p.planted.secret), "the list never prints a key");
    }
}

#[test]
fn exports_redact_by_default_report_each_key_and_keep_them_when_asked() {
    let dir = scratch("export");
    let (file, placed) = planted(&dir);
    let before = std::fs::read(&file).unwrap();
    for (format, ext) in [("html", "html"), ("markdown", "md")] {
        let out = dir.join(format!("planted.{ext}"));
        let o = ok(&["export", file.to_str().unwrap(), "--format", format, "--out", out.to_str().unwrap(), "--json"]);
        let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(report["keptSecrets"], false);
        assert_lists_each(&report["redacted"], &placed);
        let text = std::fs::read_to_string(&out).unwrap();
        for p in &placed {
            assert!(!text.contains(&p.planted.secret), "{format}: {} leaked", p.planted.kind);
        }
        for l in look_alikes() {
            let shown =
                if format == "html" { l.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;") } else { l };
            assert!(text.contains(&shown), "{format}: a look-alike was changed: {shown:?}");
        }
        // --keep-secrets: every key as written, nothing reported.
        let kept = dir.join(format!("kept.{ext}"));
        let o = ok(&[
            "export",
            file.to_str().unwrap(),
            "--format",
            format,
            "--out",
            kept.to_str().unwrap(),
            "--keep-secrets",
            "--json",
        ]);
        let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(report["keptSecrets"], true);
        assert_eq!(report["redacted"].as_array().unwrap().len(), 0);
        let text = std::fs::read_to_string(&kept).unwrap();
        for p in placed.iter().filter(|p| !p.planted.secret.contains(['<', '>', '&'])) {
            assert!(text.contains(&p.planted.secret), "{format}: {} was not kept", p.planted.kind);
        }
    }
    // To stdout: redacted too, and stderr says so.
    let o = ok(&["export", file.to_str().unwrap(), "--format", "markdown"]);
    let md = String::from_utf8(o.stdout).unwrap();
    assert!(placed.iter().all(|p| !md.contains(&p.planted.secret)));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.contains(&format!("redacted {} secret(s)", placed.len())) && err.contains("--keep-secrets"), "{err}");
    // --json needs --out (stdout holds the export).
    let o = run(&["export", file.to_str().unwrap(), "--format", "markdown", "--json"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(std::fs::read(&file).unwrap(), before, "the session file is byte-identical");
}

#[test]
fn search_shows_a_redacted_snippet() {
    let dir = scratch("search");
    let root = dir.join("sessions");
    let proj = root.join("--home-dev-project--");
    std::fs::create_dir_all(&proj).unwrap();
    let (file, placed) = planted(&proj);
    let db = dir.join("index.sqlite3");
    let before = std::fs::read(&file).unwrap();
    let aws = placed.iter().find(|p| p.planted.kind == "aws-access-key").unwrap();
    let o =
        ok(&["search", "aws_access_key_id", "--root", root.to_str().unwrap(), "--db", db.to_str().unwrap(), "--json"]);
    let hits: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let hit =
        hits.as_array().unwrap().iter().find(|h| h["entryId"] == aws.entry_id.as_str()).expect("the entry is found");
    let snippet = hit["snippet"].as_str().unwrap();
    assert!(snippet.contains("[redacted: aws-access-key]"), "{snippet}");
    assert!(!snippet.contains(&aws.planted.secret), "{snippet}");
    assert_eq!(std::fs::read(&file).unwrap(), before);
}
