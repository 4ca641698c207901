//! Faults F01–F19 of RELIABILITY.md: every one loads without a panic, reports what it skipped,
//! and loses nothing (the file is never modified by loading, and complete lines stay visible).

use session_engine::session::{DiagnosticKind as K, ReadOnly, Session};
use session_engine::{compaction, context, store};
use std::io::Write;

const H: &str = r#"{"type":"session","version":3,"id":"0195-s","timestamp":"2025-03-01T09:00:00.000Z","cwd":"/p"}"#;

fn entry(id: &str, parent: Option<&str>, text: &str) -> String {
    let p = parent.map(|p| format!("\"{p}\"")).unwrap_or("null".into());
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{p},"timestamp":"2025-03-01T09:00:01.000Z","message":{{"role":"user","content":"{text}","timestamp":1}}}}"#
    )
}

fn load(bytes: &[u8]) -> Session {
    Session::from_bytes(bytes.to_vec())
}

fn kinds(session: &Session) -> Vec<K> {
    session.diagnostics().iter().map(|d| d.kind.clone()).collect()
}

/// Loads from a real file and checks the file is byte-identical afterwards.
fn load_file(bytes: &[u8]) -> (Session, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.jsonl");
    std::fs::write(&p, bytes).unwrap();
    let session = Session::open(&p).unwrap();
    assert_eq!(std::fs::read(&p).unwrap(), bytes, "loading must never modify the file");
    (session, dir)
}

#[test]
fn f01_torn_last_line_loads_the_rest_and_next_append_starts_with_newline() {
    let text = format!("{H}\n{}\n{{\"type\":\"message\",\"id\":\"b\",\"par", entry("a", None, "hi"));
    let (session, dir) = load_file(text.as_bytes());
    assert_eq!(session.len(), 1);
    let d = session.diagnostics().iter().find(|d| d.kind == K::TornTail).expect("torn tail reported");
    assert!(d.message.contains("incomplete last line"), "{}", d.message);
    let p = dir.path().join("s.jsonl");
    store::append_line(&p, &entry("c", Some("a"), "next"), false).unwrap();
    let after = Session::open(&p).unwrap();
    assert_eq!(after.len(), 2, "the fragment stays isolated on its own line");
    assert!(std::fs::read(&p).unwrap().starts_with(text.as_bytes()));
}

#[test]
fn f02_complete_last_line_without_newline_is_flagged_and_separated() {
    let text = format!("{H}\n{}", entry("a", None, "hi"));
    let (session, dir) = load_file(text.as_bytes());
    assert_eq!(session.len(), 1);
    assert!(kinds(&session).contains(&K::Unterminated));
    assert!(!session.ends_with_newline());
    let p = dir.path().join("s.jsonl");
    store::append_line(&p, &entry("b", Some("a"), "x"), false).unwrap();
    assert_eq!(Session::open(&p).unwrap().len(), 2);
}

#[test]
fn f03_glued_records_are_one_bad_line_and_later_lines_load() {
    let glued = format!("{}{}", &entry("b", Some("a"), "x")[..60], entry("c", Some("b"), "y"));
    let text = format!("{H}\n{}\n{glued}\n{}\n", entry("a", None, "hi"), entry("d", Some("c"), "z"));
    let session = load(text.as_bytes());
    assert_eq!(session.len(), 2);
    let bad = session.diagnostics().iter().find(|d| d.kind == K::Malformed).unwrap();
    assert_eq!(bad.line, 3);
    // d's parent c was lost in the glued line: it is an orphan, shown as an extra root.
    assert!(kinds(&session).contains(&K::Orphan));
    assert_eq!(session.roots().len(), 2);
}

#[test]
fn f04_nul_tail_is_a_reported_torn_tail() {
    let mut bytes = format!("{H}\n{}\n", entry("a", None, "hi")).into_bytes();
    bytes.extend(std::iter::repeat_n(0u8, 4096));
    let (session, _d) = load_file(&bytes);
    assert_eq!(session.len(), 1);
    assert!(kinds(&session).contains(&K::NulBytes));
}

#[test]
fn f05_blank_lines_are_ignored_silently() {
    let text = format!("\n\n{H}\n\n   \n{}\n\t\n{}\n\n", entry("a", None, "x"), entry("b", Some("a"), "y"));
    let session = load(text.as_bytes());
    assert_eq!(session.len(), 2);
    assert!(session.diagnostics().is_empty(), "{:?}", session.diagnostics());
}

#[test]
fn f06_crlf_and_bom() {
    let text = format!("\u{feff}{H}\r\n{}\r\n{}\r\n", entry("a", None, "x"), entry("b", Some("a"), "y"));
    let session = load(text.as_bytes());
    assert!(session.header_accepted());
    assert_eq!(session.len(), 2);
    assert_eq!(session.path_ids(session.file_leaf()), vec!["a", "b"]);
    assert!(session.diagnostics().is_empty());
}

#[test]
fn f07_invalid_utf8_affects_only_its_line() {
    let mut bytes = format!("{H}\n{}\n", entry("a", None, "x")).into_bytes();
    let bad = entry("b", Some("a"), "caf\u{e9}");
    let mut bad = bad.into_bytes();
    let pos = bad.iter().position(|&b| b == 0xC3).unwrap();
    bad[pos] = 0xFF; // invalid UTF-8 inside a string
    bytes.extend(&bad);
    bytes.push(b'\n');
    bytes.extend(entry("c", Some("b"), "ok").as_bytes());
    bytes.push(b'\n');
    let session = load(&bytes);
    // Pi decodes the file with U+FFFD, so the entry still loads; Arbor reports the line.
    assert_eq!(session.len(), 3);
    let d = session.diagnostics().iter().find(|d| d.kind == K::InvalidUtf8).unwrap();
    assert_eq!(d.line, 3);
    let text = context::user_text(session.message(1).unwrap().get("content").unwrap());
    assert!(text.contains('\u{FFFD}'));
}

#[test]
fn f08_raw_newline_inside_a_string_reports_both_fragments() {
    let e = entry("b", Some("a"), "line one");
    let split = e.replacen("line one", "line\none", 1);
    let text = format!("{H}\n{}\n{split}\n{}\n", entry("a", None, "x"), entry("c", Some("a"), "y"));
    let session = load(text.as_bytes());
    assert_eq!(session.len(), 2);
    let bad: Vec<usize> = session.diagnostics().iter().filter(|d| d.kind == K::Malformed).map(|d| d.line).collect();
    assert_eq!(bad, vec![3, 4]);
}

#[test]
fn f09_non_objects_and_entries_without_string_ids_are_skipped() {
    let text = format!(
        "{H}\n[]\n42\n\"x\"\nnull\n{{\"type\":\"message\"}}\n{{\"type\":\"custom\",\"id\":7}}\n{}\n",
        entry("a", None, "x")
    );
    let session = load(text.as_bytes());
    assert_eq!(session.len(), 1);
    assert_eq!(kinds(&session).iter().filter(|k| **k == K::InvalidEntry).count(), 6);
}

#[test]
fn f10_unknown_types_are_kept_and_newer_versions_are_read_only() {
    let text = format!(
        "{H}\n{}\n{{\"type\":\"future_thing\",\"id\":\"u\",\"parentId\":\"a\",\"timestamp\":\"t\"}}\n",
        entry("a", None, "x")
    );
    let session = load(text.as_bytes());
    assert_eq!(session.len(), 2);
    assert_eq!(session.path_ids(session.file_leaf()), vec!["a", "u"]);
    assert_eq!(context::build_context(&session, session.file_leaf()).messages.len(), 1);
    let newer =
        load(format!("{}\n{}\n", H.replace("\"version\":3", "\"version\":4"), entry("a", None, "x")).as_bytes());
    assert!(matches!(newer.read_only(), Some(ReadOnly::Newer { .. })));
    assert!(newer.read_only_reason().unwrap().contains("read-only"));
}

#[test]
fn f11_duplicate_ids_last_wins_with_a_warning() {
    let text =
        format!("{H}\n{}\n{}\n{}\n", entry("a", None, "first"), entry("a", None, "second"), entry("b", Some("a"), "y"));
    let session = load(text.as_bytes());
    assert_eq!(session.len(), 3);
    assert!(kinds(&session).contains(&K::DuplicateId));
    let a = session.index_of("a").unwrap();
    assert_eq!(context::user_text(session.message(a).unwrap().get("content").unwrap()), "second");
    // A fresh id never collides.
    let id = session_engine::ids::new_entry_id(|c| session.index_of(c).is_some());
    assert!(session.index_of(&id).is_none());
}

#[test]
fn f12_missing_parent_is_an_orphan_root_and_never_a_compaction_anchor() {
    let text = format!("{H}\n{}\n{}\n", entry("a", None, "x"), entry("b", Some("gone"), "y"));
    let session = load(text.as_bytes());
    assert_eq!(session.roots().len(), 2);
    assert_eq!(session.path_ids(session.file_leaf()), vec!["b"]);
    assert!(kinds(&session).contains(&K::Orphan));
}

#[test]
fn f13_cycles_and_self_parents_do_not_hang() {
    let text = format!(
        "{H}\n{}\n{}\n{}\n",
        entry("a", Some("c"), "x"),
        entry("b", Some("a"), "y"),
        entry("c", Some("b"), "z")
    );
    let session = load(text.as_bytes());
    assert!(kinds(&session).contains(&K::Cycle));
    assert_eq!(session.read_only(), Some(&ReadOnly::Cycle));
    let p = session.path(session.file_leaf());
    assert!(p.len() <= session.len() + 1);
    let _ = context::build_context(&session, session.file_leaf());
    let _ = compaction::prepare_compaction(&session, &p, &Default::default());
    let selfp = load(format!("{H}\n{}\n", entry("a", Some("a"), "x")).as_bytes());
    assert!(kinds(&selfp).contains(&K::Cycle));
    assert_eq!(selfp.roots().len(), 1, "Pi's getTree treats a self-parent as a root");
}

#[test]
fn f14_bad_header_or_empty_file_is_rejected_and_never_rewritten() {
    for bytes in
        [&b""[..], b"{\"type\":\"message\",\"id\":\"a\"}\n", b"not json at all\n", b"{\"type\":\"session\",\"id\":5}\n"]
    {
        let (session, _d) = load_file(bytes);
        assert!(!session.header_accepted());
        assert_eq!(session.read_only(), Some(&ReadOnly::Rejected));
        assert!(session.read_only_reason().unwrap().contains("not a Pi session"));
    }
}

#[test]
fn f15_missing_first_kept_keeps_nothing_like_pi() {
    let comp = r#"{"type":"compaction","id":"c","parentId":"a","timestamp":"2025-03-01T09:00:02.000Z","summary":"S","firstKeptEntryId":"nowhere","tokensBefore":5}"#;
    let text = format!("{H}\n{}\n{comp}\n{}\n", entry("a", None, "x"), entry("b", Some("c"), "y"));
    let session = load(text.as_bytes());
    let ctx = context::build_context(&session, session.file_leaf());
    let roles: Vec<&str> = ctx.messages.iter().map(|m| m.message.str_field("role").unwrap()).collect();
    assert_eq!(roles, vec!["compactionSummary", "user"]);
}

#[test]
fn f16_a_100_mb_line_loads_without_a_dom() {
    let big = "x".repeat(100 * 1024 * 1024);
    let text = format!("{H}\n{}\n{}\n", entry("a", None, &big), entry("b", Some("a"), "after"));
    let session = load(text.as_bytes());
    assert_eq!(session.len(), 2);
    assert_eq!(session.path_ids(session.file_leaf()), vec!["a", "b"]);
    // The context estimate parses the line on demand.
    let est = context::estimate_tokens(session.message(0).unwrap());
    assert_eq!(est, (big.len() as f64 / 4.0).ceil());
}

#[test]
fn f17_deep_nesting_neither_overflows_the_stack_nor_hides_later_lines() {
    // V8's JSON.parse accepts any depth, so Pi loads this entry; Arbor keeps it in the tree and
    // its DOM (past json::MAX_DEPTH) reads as null instead of recursing 100k frames.
    let deep = format!(
        "{{\"type\":\"custom\",\"id\":\"d\",\"parentId\":\"a\",\"timestamp\":\"t\",\"data\":{}{}}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let text = format!("{H}\n{}\n{deep}\n{}\n", entry("a", None, "x"), entry("b", Some("d"), "y"));
    let session = load(text.as_bytes());
    assert_eq!(session.len(), 3);
    assert_eq!(session.path_ids(session.file_leaf()), vec!["a", "d", "b"]);
    assert!(session.value(1).is_null());
    assert_eq!(context::build_context(&session, session.file_leaf()).messages.len(), 2);
    // A message nested too deep for the DOM is still a per-line matter, never a crash.
    let deep_msg = format!(
        "{{\"type\":\"message\",\"id\":\"m\",\"parentId\":\"b\",\"timestamp\":\"t\",\"message\":{{\"role\":\"user\",\"content\":{}{}}}}}",
        "[".repeat(5000),
        "]".repeat(5000)
    );
    let s2 = load(format!("{text}{deep_msg}\n").as_bytes());
    assert_eq!(s2.len(), 4);
    let _ = context::build_context(&s2, s2.file_leaf());
}

#[test]
fn f18_a_truncated_or_replaced_file_is_seen_as_new_content() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.jsonl");
    std::fs::write(&p, format!("{H}\n{}\n{}\n", entry("a", None, "x"), entry("b", Some("a"), "y"))).unwrap();
    let first = Session::open(&p).unwrap();
    assert_eq!(first.len(), 2);
    // Replaced under the same name by a different session.
    let other = H.replace("0195-s", "0195-other");
    let tmp = dir.path().join("new.jsonl");
    std::fs::write(&tmp, format!("{other}\n{}\n", entry("z", None, "q"))).unwrap();
    std::fs::rename(&tmp, &p).unwrap();
    let second = Session::open(&p).unwrap();
    assert_eq!(second.header().unwrap().id, "0195-other");
    assert_eq!(second.len(), 1);
    // Deleted: a clear error.
    std::fs::remove_file(&p).unwrap();
    let e = Session::open(&p).err().unwrap().to_string();
    assert!(e.contains("no such file"), "{e}");
}

#[test]
fn f19_directories_fifos_and_devices_are_rejected_before_reading() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("dir.jsonl");
    std::fs::create_dir(&d).unwrap();
    assert!(Session::open(&d).err().unwrap().to_string().contains("directory"));
    let dev = std::path::Path::new("/dev/null");
    assert!(Session::open(dev).err().unwrap().to_string().contains("not a regular file"));
    #[cfg(unix)]
    {
        let fifo = dir.path().join("f.jsonl");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().map(|s| s.success()).unwrap_or(false);
        assert!(made, "mkfifo (coreutils) could not create {}", fifo.display());
        // Must return at once instead of blocking on the FIFO.
        assert!(Session::open(&fifo).is_err());
        assert!(store::append_line(&fifo, "{}", false).is_err());
    }
}

#[test]
fn legacy_v1_opens_read_only_and_saves_as_a_v3_copy() {
    let v1 = "{\"type\":\"session\",\"id\":\"old\",\"timestamp\":\"2024-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}\n{\"type\":\"message\",\"timestamp\":\"2024-01-01T00:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n";
    let (session, dir) = load_file(v1.as_bytes());
    assert!(matches!(session.read_only(), Some(ReadOnly::Legacy { version: 1 })));
    assert_eq!(session.len(), 1);
    let lines = session.migrated_lines().unwrap();
    assert!(lines[0].ends_with("\"version\":3}"));
    let copy = dir.path().join("copy.jsonl");
    store::create_session_file(&copy, &lines).unwrap();
    let c = Session::open(&copy).unwrap();
    assert!(c.read_only().is_none());
    assert_eq!(c.len(), 1);
    assert!(store::create_session_file(&copy, &lines).is_err(), "never overwrites");
    let mut f = std::fs::OpenOptions::new().append(true).open(&copy).unwrap();
    f.write_all(b"").unwrap();
}
