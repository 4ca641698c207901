//! A big file is opened in windows, its bytes left in the file, and its lines are read from there:
//! every answer is the one of the same bytes held in memory, appends are followed as before, and
//! a file cut or rewritten in place is reported as changed (never a crash), while a file replaced
//! by another one is still read as it was opened.

use session_engine::session::{Extend, EAGER_PARSE_MAX_BYTES, LEFT_IN_FILE_MIN_BYTES};
use session_engine::{context, Session};
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::Path;

const H: &str = r#"{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#;

fn line(k: usize, parent: Option<usize>, role: &str) -> String {
    let body = format!("{k} é😀 {}", "y".repeat(3000 + k % 97));
    let parent = parent.map_or("null".to_string(), |p| format!("\"m{p}\""));
    format!(
        r#"{{"type":"message","id":"m{k}","parentId":{parent},"timestamp":"2025-01-01T00:00:01.000Z","message":{{"role":"{role}","content":"{body}"}}}}"#
    )
}

/// A session past the eager-parse size: a chain with a branch, a label, and the last line
/// followed by whitespace (Pi trims it).
fn big_text() -> String {
    let mut text = format!("{H}\n");
    let n = EAGER_PARSE_MAX_BYTES / 3000 + 100;
    for k in 0..n {
        let parent = match k {
            0 => None,
            k if k == n / 2 => Some(10),
            k => Some(k - 1),
        };
        text.push_str(&line(k, parent, if k % 2 == 0 { "user" } else { "assistant" }));
        text.push('\n');
    }
    text.push_str(r#"{"type":"label","id":"l1","parentId":"m5","timestamp":"2025-01-01T00:00:02.000Z","targetId":"m3","label":"here"}"#);
    text.push_str("\n  \n");
    text
}

/// Opens as a file of [`LEFT_IN_FILE_MIN_BYTES`] is opened (this one is smaller, to keep the
/// tests quick).
fn open(p: &Path) -> Result<Session, session_engine::session::OpenError> {
    Session::open_leaving_in_file(p, EAGER_PARSE_MAX_BYTES + 1)
}

/// A folder holding `big.jsonl` with [`big_text`]: the folder, the file's path and text, and the
/// session opened on it.
fn big_file() -> (tempfile::TempDir, std::path::PathBuf, String, Session) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("big.jsonl");
    let text = big_text();
    write(&p, &text);
    let session = open(&p).unwrap();
    (dir, p, text, session)
}

fn write(p: &Path, text: &str) {
    std::fs::write(p, text).unwrap();
}

#[test]
fn a_big_file_read_from_disk_answers_as_from_memory() {
    let (dir, p, text, on_disk) = big_file();
    let in_memory = Session::from_bytes(text.clone().into_bytes());
    assert!(on_disk.reads_lines_from_file(), "a big file's bytes go back to the file");
    assert!(!in_memory.reads_lines_from_file());
    assert_eq!(on_disk.len(), in_memory.len());
    for i in 0..on_disk.len() {
        assert_eq!(on_disk.raw(i), in_memory.raw(i), "entry {i}");
        assert_eq!(on_disk.raw_len(i), in_memory.raw(i).len(), "entry {i}");
        assert_eq!(on_disk.value(i), in_memory.value(i), "entry {i}");
        assert_eq!(on_disk.role(i), in_memory.role(i), "entry {i}");
    }
    let leaf = on_disk.file_leaf();
    assert_eq!(on_disk.path_ids(leaf), in_memory.path_ids(leaf));
    assert_eq!(on_disk.label_of("m3"), Some("here"));
    let (a, b) = (context::build_context(&on_disk, leaf), context::build_context(&in_memory, leaf));
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
    assert!(!on_disk.changed_on_disk());
    // A small file keeps its bytes, and so does one of this size opened as any other: only a
    // file of LEFT_IN_FILE_MIN_BYTES or more is read back from the file.
    let small = dir.path().join("small.jsonl");
    write(&small, &format!("{H}\n{}\n", line(0, None, "user")));
    assert!(!open(&small).unwrap().reads_lines_from_file());
    assert!(text.len() < LEFT_IN_FILE_MIN_BYTES);
    assert!(!Session::open(&p).unwrap().reads_lines_from_file());
}

#[test]
fn appends_to_a_big_file_are_followed() {
    let (_dir, p, _, mut session) = big_file();
    let n = session.len();
    let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
    for k in 0..3 {
        writeln!(f, "{}", line(90_000 + k, Some(if k == 0 { 7 } else { 90_000 + k - 1 }), "user")).unwrap();
    }
    drop(f);
    assert_eq!(session.extend_from_file(&p).unwrap(), Extend::Added(3));
    let fresh = open(&p).unwrap();
    assert_eq!(session.len(), n + 3);
    for i in 0..session.len() {
        assert_eq!(session.raw(i), fresh.raw(i), "entry {i}");
        assert_eq!(session.value(i), fresh.value(i), "entry {i}");
    }
    assert!(!session.changed_on_disk());
}

#[test]
fn a_big_file_rewritten_in_place_is_reported_changed() {
    let (dir, p, text, mut session) = big_file();
    // Another program writes over entry 20's id, keeping the length: the line is still framed
    // by line ends, but it is not the entry the open indexed. (Found in a copy held in memory:
    // a read of the file now would keep its block, and the open's bytes would still answer.)
    let held = Session::from_bytes(text.into_bytes());
    let at = held.entry(20).start + held.raw(20).windows(5).position(|w| w == b"\"m20\"").unwrap() as u64;
    std::fs::OpenOptions::new().write(true).open(&p).unwrap().write_all_at(b"\"x20\"", at).unwrap();
    assert_eq!(session.value(20), &pi_json::Value::Null);
    assert!(session.changed_on_disk());
    assert_eq!(session.extend_from_file(&p).unwrap(), Extend::Reload);
    // Rewritten shifted by one byte: the lines no longer sit between line ends.
    let q = dir.path().join("again.jsonl");
    write(&q, &big_text());
    let session = open(&q).unwrap();
    write(&q, &format!(" {}", big_text()));
    assert!(session.raw(30).is_empty());
    assert!(session.changed_on_disk());
}

#[test]
fn a_big_file_cut_short_is_reported_changed_not_a_crash() {
    let (_dir, p, _, mut session) = big_file();
    // In the half cut off, and not among the last bytes, which stay in memory (see `bytes`).
    let gone = session.len() * 3 / 4;
    std::fs::OpenOptions::new().write(true).open(&p).unwrap().set_len(session.file_len() / 2).unwrap();
    assert!(session.raw(gone).is_empty());
    assert_eq!(session.value(gone + 1), &pi_json::Value::Null);
    assert!(session.changed_on_disk());
    assert_eq!(session.extend_from_file(&p).unwrap(), Extend::Reload);
    // Entries in the half that is left still read.
    assert!(!session.raw(3).is_empty());
}

#[test]
fn a_big_file_replaced_by_another_is_read_as_opened() {
    let (dir, p, _, mut session) = big_file();
    let before: Vec<Vec<u8>> = (0..session.len()).map(|i| session.raw(i).into_owned()).collect();
    // An editor's save: a new file renamed over the old one.
    let q = dir.path().join("new.jsonl");
    write(&q, &format!("{H}\n{}\n", line(0, None, "user")));
    std::fs::rename(&q, &p).unwrap();
    for (i, b) in before.iter().enumerate() {
        assert_eq!(&*session.raw(i), &b[..], "entry {i}");
    }
    assert!(!session.changed_on_disk());
    assert_eq!(session.extend_from_file(&p).unwrap(), Extend::Reload);
}

#[test]
fn lines_that_follow_each_other_are_read_a_block_at_a_time() {
    let (_dir, _, _, session) = big_file();
    assert_eq!(session.file_reads(), 0, "the open reads no line back");
    for i in 0..session.len() {
        session.value(i);
    }
    // One read per 16 KiB block, not one per line (about 3 KB each here).
    let blocks = (session.file_len() as usize).div_ceil(16 << 10);
    let reads = session.file_reads();
    assert!(reads <= blocks, "{reads} reads for {} lines in {blocks} blocks", session.len());
    // The same lines again, backwards (a walk from a leaf to the root) across more blocks than
    // are kept: each block is read once more, as the walk enters it.
    for i in (0..session.len()).rev() {
        assert!(!session.raw(i).is_empty(), "entry {i}");
    }
    let again = session.file_reads() - reads;
    assert!(again <= blocks, "{again} reads backwards");
    assert!(!session.changed_on_disk());
}
