//! `arbor-cli summary show|check|diff|edit|revert` through the real binary: the JSON shapes of
//! the workbench's commands, errors (exit 2, one sentence, the file byte-identical), edit → revert with the
//! context shown by `arbor-cli context` and checked by Pi itself, and an edit refused because
//! another program appended to the file meanwhile.
#[path = "support/pi.rs"]
mod pi;

use serde_json::Value as J;
use session_engine::entries;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../session-engine/tests/fixtures/conformance/{name}.jsonl"))
}

fn tmp(case: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("summary_cli-{case}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn copy(case: &str, name: &str) -> (PathBuf, PathBuf) {
    let dir = tmp(case);
    let file = dir.join(format!("{name}.jsonl"));
    std::fs::copy(fixture(name), &file).unwrap();
    (dir, file)
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_arbor-cli")).args(args).output().unwrap()
}

fn ok_json(args: &[&str]) -> J {
    let o = run(args);
    assert!(o.status.success(), "arbor-cli {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{args:?} printed no JSON ({e}): {}", String::from_utf8_lossy(&o.stdout)))
}

fn ok_text(args: &[&str]) -> String {
    let o = run(args);
    assert!(o.status.success(), "arbor-cli {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// Runs a command that must fail: exit 2, one line on stderr, the file unchanged. Returns stderr.
fn refused(file: &Path, args: &[&str]) -> String {
    let before = std::fs::read(file).unwrap();
    let o = run(args);
    assert_eq!(
        o.status.code(),
        Some(2),
        "arbor-cli {args:?} must exit 2; stdout {}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert!(o.stdout.is_empty(), "nothing on stdout: {}", String::from_utf8_lossy(&o.stdout));
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert_eq!(std::fs::read(file).unwrap(), before, "{args:?} changed the file");
    err
}

fn strs(v: &J) -> Vec<&str> {
    v.as_array().unwrap_or_else(|| panic!("not an array: {v}")).iter().map(|x| x.as_str().unwrap()).collect()
}

fn p(f: &Path) -> &str {
    f.to_str().unwrap()
}

// ---- a session with known answers ---------------------------------------------------------

const PREV: &str = "## Goal\nBuild the parser.\n\n## Constraints & Preferences\n- Never rewrite session files\n- Use Rust only\n\n## Progress\n### Done\n- [x] Read the format docs\n\n### In Progress\n- [ ] Write the section parser\n\n## Key Decisions\n- **similar crate**: word diffs come from a maintained library\n\n## Next Steps\n1. Write tests\n";
const NEXT: &str = "## Goal\nBuild the parser.\n\n## Constraints & Preferences\n- Never rewrite the session files\n\n## Progress\n### Done\n- [x] Read the format docs\n- [x] Write the section parser\n\n### In Progress\n- [ ] Benchmark it\n\n## Key Decisions\n- **Parser**: one pass over lines\n\n## Next Steps\n1. Write tests\n\n<modified-files>\nsrc/parse.rs\n</modified-files>";

/// header, u1 (user), a1 (read + bash), r1, k1 (user), c1 (PREV), u2, k2, c2 (NEXT), u3.
fn built(dir: &Path) -> PathBuf {
    let ts = |n: u32| format!("2026-01-01T00:00:{n:02}.000Z");
    let m = |t: &str| pi_json::parse(t).unwrap();
    let mut lines = vec![entries::line(&entries::header("s1", &ts(0), "/p", None))];
    let mut add = |v: pi_json::Value| lines.push(entries::line(&v));
    add(entries::message(
        "u1",
        None,
        &ts(1),
        m(r#"{"role":"user","content":"Use Rust only. You must never rewrite session files.","timestamp":1}"#),
    ));
    add(entries::message(
        "a1",
        Some("u1"),
        &ts(2),
        m(
            r#"{"role":"assistant","content":[{"type":"toolCall","id":"t1","name":"read","arguments":{"path":"docs/format.md"}},{"type":"toolCall","id":"t2","name":"bash","arguments":{"command":"cargo test -p session-engine"}}],"provider":"p","model":"m","timestamp":2}"#,
        ),
    ));
    add(entries::message(
        "r1",
        Some("a1"),
        &ts(3),
        m(
            r#"{"role":"toolResult","toolCallId":"t2","toolName":"bash","content":[{"type":"text","text":"error: could not compile `session-engine`"}],"isError":false,"timestamp":3}"#,
        ),
    ));
    add(entries::message("k1", Some("r1"), &ts(4), m(r#"{"role":"user","content":"go on","timestamp":4}"#)));
    add(entries::compaction("c1", Some("k1"), &ts(5), PREV, "k1", 500.0, None, false));
    add(entries::message("u2", Some("c1"), &ts(6), m(r#"{"role":"user","content":"next part","timestamp":6}"#)));
    add(entries::message(
        "k2",
        Some("u2"),
        &ts(7),
        m(
            r#"{"role":"assistant","content":[{"type":"text","text":"working"}],"provider":"p","model":"m","timestamp":7}"#,
        ),
    ));
    add(entries::compaction("c2", Some("k2"), &ts(8), NEXT, "k2", 600.0, None, false));
    add(entries::message("u3", Some("c2"), &ts(9), m(r#"{"role":"user","content":"continue","timestamp":9}"#)));
    let f = dir.join("built.jsonl");
    std::fs::write(&f, lines.join("\n") + "\n").unwrap();
    f
}

// ---- show / check / diff -----------------------------------------------------------------

#[test]
fn show_json_has_the_issue_shape() {
    let f = fixture("compaction-repeated");
    let v = ok_json(&["summary", "show", p(&f), "--entry", "219907c0", "--json"]);
    assert_eq!(v["entryId"], "219907c0");
    assert_eq!(v["kind"], "compaction");
    assert_eq!(v["tokensBefore"], 37053.0);
    assert_eq!(v["firstKeptEntryId"], "20be359d");
    assert_eq!(strs(&v["readFiles"]), ["src/index.ts"]);
    assert_eq!(v["modifiedFiles"].as_array().unwrap().len(), 11);
    let secs = v["sections"].as_array().unwrap();
    let titles: Vec<&str> = secs.iter().map(|s| s["title"].as_str().unwrap()).collect();
    assert_eq!(
        titles,
        [
            "Goal",
            "Constraints & Preferences",
            "Progress",
            "Done",
            "In Progress",
            "Blocked",
            "Key Decisions",
            "Next Steps",
            "Critical Context",
            "Turn Context (split turn)",
            "Original Request",
            "Early Progress",
            "Context for Suffix"
        ]
    );
    let done = &secs[3];
    assert_eq!(done["level"], 3);
    assert_eq!(done["name"], "Progress › Done");
    assert_eq!(strs(&done["items"]), ["Tag state bytes index queue resolve hook:", "Test error stream module."]);
    assert_eq!(secs[0]["text"], "Thread retry summary conflict render effect release render branch?");
    assert!(v["turnPrefix"].as_str().unwrap().starts_with("## Original Request"));
    assert_eq!(v["span"]["firstId"], "8660612b");
    assert_eq!(v["span"]["exact"], true);
    // A branch summary: no tokensBefore, no firstKeptEntryId.
    let f = fixture("branch-summaries-in-context");
    let text = std::fs::read_to_string(&f).unwrap();
    let id =
        text.lines().filter_map(|l| serde_json::from_str::<J>(l).ok()).find(|e| e["type"] == "branch_summary").unwrap()
            ["id"]
            .as_str()
            .unwrap()
            .to_string();
    let v = ok_json(&["summary", "show", p(&f), "--entry", &id, "--json"]);
    assert_eq!(v["kind"], "branch_summary");
    assert!(v["tokensBefore"].is_null() && v["firstKeptEntryId"].is_null());
    assert_eq!(v["span"]["exact"], false);
    // The text form is readable.
    let t = ok_text(&["summary", "show", p(&fixture("compaction-repeated")), "--entry", "219907c0"]);
    assert!(t.starts_with("compaction 219907c0 — written by unknown"), "{t}");
    assert!(t.contains("### Progress › Done  (2 items)\n  - [x] Tag state bytes index queue resolve hook:"), "{t}");
}

#[test]
fn check_json_has_the_issue_shape_and_known_answers() {
    let dir = tmp("check");
    let f = built(&dir);
    let v = ok_json(&["summary", "check", p(&f), "--entry", "c2", "--json"]);
    assert_eq!(v["entryId"], "c2");
    assert_eq!(v["previousEntryId"], "c1");
    let dropped: Vec<(&str, &str)> = v["dropped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["section"].as_str().unwrap(), d["text"].as_str().unwrap()))
        .collect();
    assert_eq!(
        dropped,
        [
            ("Constraints & Preferences", "Use Rust only"),
            ("Key Decisions", "**similar crate**: word diffs come from a maintained library")
        ]
    );
    let moved = &v["moved"].as_array().unwrap()[0];
    assert_eq!(
        (moved["text"].as_str(), moved["from"].as_str(), moved["to"].as_str()),
        (Some("Write the section parser"), Some("Progress › In Progress"), Some("Progress › Done"))
    );
    // c2's span is k1..u2: no tool calls; c1's span has them.
    let r = &v["retention"];
    assert_eq!(r["total"].as_u64().unwrap() as usize, r["facts"].as_array().unwrap().len());
    let v = ok_json(&["summary", "check", p(&f), "--entry", "c1", "--json"]);
    assert!(v["previousEntryId"].is_null());
    assert!(v["dropped"].as_array().unwrap().is_empty());
    let facts: Vec<(&str, &str, &str, bool)> = v["retention"]["facts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["kind"].as_str().unwrap(),
                x["text"].as_str().unwrap(),
                x["sourceEntryId"].as_str().unwrap(),
                x["mentioned"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        facts,
        [
            ("constraint", "Use Rust only.", "u1", true),
            ("constraint", "You must never rewrite session files.", "u1", true),
            ("path", "docs/format.md", "a1", false),
            ("command", "cargo test -p session-engine", "a1", false),
            ("error", "error: could not compile `session-engine`", "r1", false),
        ]
    );
    assert_eq!((v["retention"]["mentioned"].as_u64(), v["retention"]["total"].as_u64()), (Some(2), Some(5)));
    let t = ok_text(&["summary", "check", p(&f), "--entry", "c2"]);
    assert!(t.contains("dropped (2):\n  [Constraints & Preferences] Use Rust only\n"), "{t}");
}

#[test]
fn diff_json_has_the_issue_shape() {
    let dir = tmp("diff");
    let f = built(&dir);
    let v = ok_json(&["summary", "diff", p(&f), "--from", "c1", "--to", "c2", "--json"]);
    assert_eq!((v["from"].as_str(), v["to"].as_str()), (Some("c1"), Some("c2")));
    let sec = |t: &str| {
        v["sections"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["title"] == t)
            .unwrap_or_else(|| panic!("no {t}: {v}"))
            .clone()
    };
    let c = sec("Constraints & Preferences");
    assert_eq!(strs(&c["removed"]), ["Use Rust only"]);
    assert!(strs(&c["added"]).is_empty());
    assert_eq!(c["reworded"][0]["to"], "Never rewrite the session files");
    assert_eq!(strs(&sec("Progress › Done")["unchanged"]), ["Read the format docs"]);
    assert_eq!(strs(&sec("Progress › In Progress")["added"]), ["Benchmark it"]);
    assert_eq!(v["moved"].as_array().unwrap().len(), 1);
    assert_eq!(strs(&v["filesAdded"]), ["src/parse.rs"]);
    // Default --from: the previous compaction on the path.
    let w = ok_json(&["summary", "diff", p(&f), "--to", "c2", "--json"]);
    assert_eq!(w, v);
    let t = ok_text(&["summary", "diff", p(&f), "--to", "c2"]);
    assert!(t.contains("Constraints & Preferences\n    - Use Rust only\n    ~ Never rewrite session files\n      → Never rewrite the session files"), "{t}");
}

/// An edit is checked as its original: the original's span, the compaction the original
/// replaced as previous (so restoring a dropped item clears it from the alarm), the same JSON
/// shape; its default diff is against its original.
#[test]
fn an_edit_is_checked_as_its_original() {
    let dir = tmp("check-edit");
    let f = built(&dir);
    let tf = dir.join("restored.md");
    std::fs::write(
        &tf,
        NEXT.replace("- Never rewrite the session files\n", "- Never rewrite the session files\n- Use Rust only\n"),
    )
    .unwrap();
    let v = ok_json(&["summary", "edit", p(&f), "--entry", "c2", "--text-file", p(&tf), "--json"]);
    let edit = v["entryId"].as_str().unwrap().to_string();
    let c = ok_json(&["summary", "check", p(&f), "--entry", &edit, "--json"]);
    let keys: Vec<&str> = c.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["entryId", "previousEntryId", "dropped", "moved", "retention"], "the issue's shape");
    assert_eq!(c["entryId"], edit.as_str());
    assert_eq!(c["previousEntryId"], "c1", "the compaction c2 replaced, not c2 itself");
    let dropped: Vec<(&str, &str)> = c["dropped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["section"].as_str().unwrap(), d["text"].as_str().unwrap()))
        .collect();
    assert_eq!(dropped, [("Key Decisions", "**similar crate**: word diffs come from a maintained library")]);
    assert_eq!(c["moved"][0]["text"], "Write the section parser");
    // Retention over c2's span: the same facts as c2's (c2's span k1..u2 has none to find).
    let c2 = ok_json(&["summary", "check", p(&f), "--entry", "c2", "--json"]);
    let facts = |v: &J| {
        v["retention"]["facts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| (x["kind"].clone(), x["text"].clone(), x["sourceEntryId"].clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(facts(&c), facts(&c2));
    // The span shown is c2's.
    let se = ok_json(&["summary", "show", p(&f), "--entry", &edit, "--json"]);
    let s2 = ok_json(&["summary", "show", p(&f), "--entry", "c2", "--json"]);
    assert_eq!(se["span"], s2["span"]);
    assert_eq!(strs(&se["span"]["entryIds"]), ["k1", "u2"], "read literally, an edit's span is empty");
    // The default diff of an edit: against its original.
    let d = ok_json(&["summary", "diff", p(&f), "--to", &edit, "--json"]);
    assert_eq!((d["from"].as_str(), d["to"].as_str()), (Some("c2"), Some(edit.as_str())));
    let cons = d["sections"].as_array().unwrap().iter().find(|s| s["title"] == "Constraints & Preferences").unwrap();
    assert_eq!(strs(&cons["added"]), ["Use Rust only"]);
}

// ---- edit / revert -------------------------------------------------------------------------

/// `arbor-cli context` minus its first line (which names the leaf): the listing.
fn listing(f: &Path) -> Vec<String> {
    ok_text(&["context", p(f)]).lines().skip(1).map(str::to_string).collect()
}

#[test]
fn edit_then_revert_shows_in_context_and_pi_agrees() {
    let (dir, f) = copy("edit-revert", "compaction-repeated");
    let before_ctx = listing(&f);
    let pi_ok = pi::pi_or_skip("edit_then_revert_shows_in_context_and_pi_agrees");
    let pi_before = if pi_ok { Some(pi::assert_pi_agrees(&f, None)) } else { None };
    let edited = "## Goal\nEdited by the user: ship the workbench.\n\n## Constraints & Preferences\n- Never rewrite a session file\n";
    let tf = dir.join("edited.md");
    std::fs::write(&tf, edited).unwrap();
    let v = ok_json(&["summary", "edit", p(&f), "--entry", "f546dee3", "--text-file", p(&tf), "--json"]);
    let edit_id = v["entryId"].as_str().unwrap().to_string();
    assert_eq!(v["editedFrom"], "f546dee3");
    assert_eq!(edit_id.len(), 8);
    // The appended line: a compaction under the old leaf with the same firstKeptEntryId.
    let text = std::fs::read_to_string(&f).unwrap();
    let last: J = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(
        (last["type"].as_str(), last["id"].as_str(), last["parentId"].as_str()),
        (Some("compaction"), Some(edit_id.as_str()), Some("c9d4d100"))
    );
    assert_eq!(last["firstKeptEntryId"], "cf9fefdd");
    assert_eq!(last["summary"], edited);
    assert_eq!(last["details"]["editKind"], "edit");
    assert!(
        text.starts_with(&std::fs::read_to_string(fixture("compaction-repeated")).unwrap()),
        "nothing earlier changed"
    );
    // The context: the edited summary, then the same verbatim messages as before.
    let after = listing(&f);
    assert!(after[0].contains(&format!("SUMMARY (compaction)   {edit_id}")), "{}", after[0]);
    assert!(after[1].trim().starts_with("## Goal Edited by the user: ship the workbench."), "{}", after[1]);
    assert_eq!(after[2..after.len() - 1], before_ctx[2..before_ctx.len() - 1], "the same messages follow the summary");
    if let Some(pb) = &pi_before {
        let pa = pi::assert_pi_agrees(&f, None);
        assert_eq!(pa.leaf_id.as_deref(), Some(edit_id.as_str()));
        assert_eq!((pa.messages[0].role.as_str(), pa.messages[0].text.as_str()), ("compactionSummary", edited));
        assert_eq!(pa.messages[1..], pb.messages[1..], "Pi: the same verbatim messages after the edited summary");
    }
    // Revert.
    let v = ok_json(&["summary", "revert", p(&f), "--entry", &edit_id, "--json"]);
    let rev_id = v["entryId"].as_str().unwrap().to_string();
    assert_eq!(v["revertedTo"], "f546dee3");
    let after = listing(&f);
    assert!(after[0].contains(&format!("SUMMARY (compaction)   {rev_id}")));
    assert_eq!(after[1], before_ctx[1], "the original text is back");
    assert_eq!(after[2..after.len() - 1], before_ctx[2..before_ctx.len() - 1]);
    if let Some(pb) = &pi_before {
        let pa = pi::assert_pi_agrees(&f, None);
        assert_eq!(pa.messages[0].text, pb.messages[0].text, "Pi sees the original text again");
        assert_eq!(pa.messages[1..], pb.messages[1..]);
        pi::assert_arbor_reads_pi_append(&f);
    }
    // The chain is visible from any version.
    let v = ok_json(&["summary", "show", p(&f), "--entry", "f546dee3", "--json"]);
    let kinds: Vec<&str> = v["history"].as_array().unwrap().iter().map(|h| h["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["original", "edit", "revert"]);
    if pi_ok {
        assert!(pi::pi_runs() >= 5, "Pi really ran ({} runs)", pi::pi_runs());
    }
}

#[test]
fn errors_exit_2_with_one_sentence_and_write_nothing() {
    let (dir, f) = copy("errors", "compaction-repeated");
    let tf = dir.join("t.md");
    std::fs::write(&tf, "## Goal\nx\n").unwrap();
    let e = refused(&f, &["summary", "edit", p(&f), "--entry", "6ff09278", "--text-file", p(&tf), "--json"]);
    assert_eq!(
        e.trim_end(),
        "arbor-cli: Entry 6ff09278 is not the newest compaction on the path to the leaf (f546dee3 is); only f546dee3 can be edited — select it, or move the leaf back first."
    );
    let e = refused(&f, &["summary", "revert", p(&f), "--entry", "f546dee3", "--json"]);
    assert!(e.contains("is an original summary, not an edit"), "{e}");
    let e = refused(&f, &["summary", "edit", p(&f), "--entry", "f546dee3", "--text-file", p(&dir.join("missing.md"))]);
    assert!(e.contains("check the --text-file path"), "{e}");
    let e = refused(&f, &["summary", "show", p(&f), "--entry", "nope", "--json"]);
    assert!(e.contains("no entry with id nope"), "{e}");
    let e = refused(&f, &["summary", "check", p(&f), "--entry", "c9d4d100", "--json"]);
    assert!(e.contains("is a message entry, not a summary"), "{e}");
    let e = refused(&f, &["summary", "diff", p(&f), "--to", "6ff09278", "--json"]);
    assert!(e.contains("pass --from ID"), "{e}");
    let e =
        refused(&f, &["summary", "edit", p(&f), "--entry", "f546dee3", "--text-file", p(&tf), "--leaf", "8660612b"]);
    assert!(e.contains("is not on the path to the leaf"), "{e}");
    std::fs::write(&tf, "").unwrap();
    let e = refused(&f, &["summary", "edit", p(&f), "--entry", "f546dee3", "--text-file", p(&tf)]);
    assert!(e.contains("The new summary is empty"), "{e}");
    // A read-only (v1) file.
    let (_, legacy) = copy("errors-v1", "load-v1-legacy");
    let session = session_engine::Session::open(&legacy).unwrap();
    let c = session.compactions().next().map(|i| session.id(i).to_string()).unwrap();
    std::fs::write(&tf, "## Goal\nx\n").unwrap();
    let e = refused(&legacy, &["summary", "edit", p(&legacy), "--entry", &c, "--text-file", p(&tf)]);
    assert!(e.contains("read-only") && e.contains("version 1"), "{e}");
}

#[test]
fn an_edit_while_another_program_appends_is_refused() {
    let (dir, f) = copy("grew", "compaction-repeated");
    let fifo = dir.join("text.fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let child = Command::new(env!("CARGO_BIN_EXE_arbor-cli"))
        .args(["summary", "edit", p(&f), "--entry", "f546dee3", "--text-file", p(&fifo), "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Opening the FIFO for writing waits until the CLI opens it for reading, which it does after
    // it has loaded the session: now another program appends a line.
    let mut w = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
    let other = r#"{"type":"message","id":"other001","parentId":"c9d4d100","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"from another program","timestamp":1}}"#;
    let mut grown = std::fs::read(&f).unwrap();
    grown.extend_from_slice(other.as_bytes());
    grown.push(b'\n');
    {
        use std::io::Write;
        let mut a = std::fs::OpenOptions::new().append(true).open(&f).unwrap();
        a.write_all(other.as_bytes()).unwrap();
        a.write_all(b"\n").unwrap();
        w.write_all(b"## Goal\nedited while the file grew\n").unwrap();
    }
    drop(w);
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(2), "stdout {}", String::from_utf8_lossy(&o.stdout));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.contains("changed while you were editing (another program appended to it); nothing was written. Reload and try again."), "{err}");
    assert_eq!(std::fs::read(&f).unwrap(), grown, "only the other program's line was added");
}
