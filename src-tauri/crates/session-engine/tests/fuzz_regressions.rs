//! Every input the fuzz targets (fuzz/, `scripts/fuzz-smoke.sh`) crashed on, replayed through
//! the same checks (tests/fuzz_checks/mod.rs) in the engine's normal tests. A crash found by
//! the fuzzer is copied to tests/fixtures/fuzz/<target>/ and fixed where the bug is; the seed
//! corpus (fuzz/seeds/<target>/) is replayed too, so the checks keep running without nightly.
//! The summary targets' inputs are replayed in summary-analysis's `tests/fuzz_regressions.rs`.

mod fuzz_checks;

#[path = "support/fuzz_replay.rs"]
mod fuzz_replay;

use fuzz_replay::replay;
use std::path::Path;

#[test]
fn loader_inputs() {
    assert!(replay("loader", fuzz_checks::loader) >= 70);
}

#[test]
fn extend_inputs() {
    assert!(replay("extend", fuzz_checks::extend) >= 70);
}

#[test]
fn settings_inputs() {
    assert!(replay("settings", fuzz_checks::settings) >= 5);
}

/// The loader target's first crash (tests/fixtures/fuzz/loader/v2-cycle-path-starts-mid-loop):
/// a v2 file whose parentId links loop. Such a file is read-only as a legacy file, so the cycle
/// shows only as a `Cycle` diagnostic, not as `ReadOnly::Cycle`; the check took "no
/// `ReadOnly::Cycle`" for "no cycle" and expected every path to start at a root. The engine was
/// right (paths stop after as many steps as there are entries); the check now asks the
/// diagnostics. This pins the engine's side.
#[test]
fn a_legacy_file_with_a_cycle_reports_it_and_its_paths_end() {
    use session_engine::{DiagnosticKind, ReadOnly, Session};
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fuzz/loader");
    for name in ["v2-two-entry-cycle", "v2-cycle-path-starts-mid-loop"] {
        let session = Session::from_bytes(std::fs::read(root.join(name)).unwrap());
        assert!(
            matches!(session.read_only(), Some(ReadOnly::Legacy { version: 2 })),
            "{name}: {:?}",
            session.read_only()
        );
        assert!(
            session.diagnostics().iter().any(|d| d.kind == DiagnosticKind::Cycle),
            "{name}: {:?}",
            session.diagnostics()
        );
        for i in 0..session.len() {
            let p = session.path(Some(i));
            assert_eq!(p.last(), Some(&i));
            assert!(p.len() <= session.len() + 1);
        }
    }
    let session = Session::from_bytes(std::fs::read(root.join("v2-two-entry-cycle")).unwrap());
    let a = session.index_of("a").unwrap();
    assert_eq!(session.parent_of(a), session.index_of("b"));
    assert_eq!(session.path(Some(a)).len(), 3, "stopped after n + 1 steps: {:?}", session.path_ids(Some(a)));
}

/// The extend target's first failure (tests/fixtures/fuzz/extend/crlf-last-line-before-the-cut,
/// from the seed corpus): Pi trims the whole file, so the last line of a CRLF file was read
/// without its `\r`, and blank lines at the end were not counted. After an append, that line
/// is in the middle of the file, where a fresh load keeps its `\r` and counts the blank lines.
/// `extend_from_file` now gives the trimmed tail back to the last line (byte range) and to the
/// blank lines (line numbers of later diagnostics), and asks for a reload when the tail holds
/// whitespace JSON does not allow (the whole line might not parse).
#[test]
fn extending_after_a_trimmed_tail_equals_a_fresh_load() {
    use session_engine::session::Extend;
    use session_engine::Session;
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("s.jsonl");
    let h =
        "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}";
    let e = |id: &str, p: &str| {
        format!("{{\"type\":\"custom\",\"customType\":\"x\",\"id\":\"{id}\",\"parentId\":{p},\"timestamp\":\"2025-01-01T00:00:01.000Z\"}}")
    };
    let first = format!("{h}\r\n{}\r\n \r\n\r\n", e("a", "null"));
    let more = format!("not json\r\n{}\r\n", e("b", "\"a\""));
    std::fs::write(&f, &first).unwrap();
    let mut session = Session::open(&f).unwrap();
    assert_eq!(session.raw(0), e("a", "null").as_bytes(), "trimmed, as Pi reads it");
    std::fs::write(&f, format!("{first}{more}")).unwrap();
    assert_eq!(session.extend_from_file(&f).unwrap(), Extend::Added(1));
    let fresh = Session::open(&f).unwrap();
    for i in 0..fresh.len() {
        assert_eq!(session.raw(i), fresh.raw(i), "entry {i}");
    }
    assert_eq!(session.raw(0), format!("{}\r", e("a", "null")).as_bytes());
    assert_eq!(session.diagnostics(), fresh.diagnostics());
    assert_eq!(session.malformed_lines(), [5], "the blank lines count");
    assert_eq!(session.path_ids(session.file_leaf()), ["a", "b"]);
    // Whitespace alone appended: nothing to add.
    std::fs::write(&f, format!("{first}{more}\r\n  \n")).unwrap();
    assert_eq!(session.extend_from_file(&f).unwrap(), Extend::Added(0));
    std::fs::write(&f, format!("{first}{more}\r\n  \n{}\n", e("c", "\"b\""))).unwrap();
    assert_eq!(session.extend_from_file(&f).unwrap(), Extend::Added(1));
    let fresh = Session::open(&f).unwrap();
    assert_eq!(session.diagnostics(), fresh.diagnostics());
    assert_eq!(session.raw(1), fresh.raw(1));
    assert_eq!(session.entry(2).line, fresh.entry(2).line);
    // A no-break space after the last line: JSON does not allow it, so only a reload knows.
    let nbsp = format!("{h}\n{}\u{a0}\n", e("a", "null"));
    std::fs::write(&f, &nbsp).unwrap();
    let mut session = Session::open(&f).unwrap();
    assert_eq!(session.len(), 1, "trimmed, the line parses");
    std::fs::write(&f, format!("{nbsp}{}\n", e("b", "\"a\""))).unwrap();
    assert_eq!(session.extend_from_file(&f).unwrap(), Extend::Reload);
    let fresh = Session::open(&f).unwrap();
    assert_eq!(fresh.malformed_lines(), [2], "whole, it does not");
}

/// The extend target's second failure (tests/fixtures/fuzz/extend/parent-arrives-after-its-child):
/// an entry whose parent was not in the file yet (an orphan, shown as an extra root) stayed an
/// orphan when a later append brought the parent, while a fresh load of the longer file hangs
/// the entry under it. `extend_from_file` now asks for a reload when an appended id is a
/// parent some earlier entry was missing. (Its first failure, orphan-diagnostic-order, was in
/// the check: a load lists line problems before index problems, an extend does so per batch.)
#[test]
fn an_appended_parent_of_an_earlier_orphan_asks_for_a_reload() {
    use session_engine::session::Extend;
    use session_engine::Session;
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("s.jsonl");
    let h =
        "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}";
    let e = |id: &str, p: &str| {
        format!("{{\"type\":\"custom\",\"customType\":\"x\",\"id\":\"{id}\",\"parentId\":{p},\"timestamp\":\"2025-01-01T00:00:01.000Z\"}}")
    };
    let first = format!("{h}\n{}\n{}\n", e("a", "null"), e("c", "\"b\""));
    std::fs::write(&f, &first).unwrap();
    let mut session = Session::open(&f).unwrap();
    assert_eq!(session.path_ids(session.file_leaf()), ["c"], "an orphan starts its own path");
    // An unrelated append is still taken incrementally.
    let second = format!("{first}{}\n", e("d", "\"a\""));
    std::fs::write(&f, &second).unwrap();
    assert_eq!(session.extend_from_file(&f).unwrap(), Extend::Added(1));
    // The missing parent arrives.
    std::fs::write(&f, format!("{second}{}\n", e("b", "\"a\""))).unwrap();
    assert_eq!(session.extend_from_file(&f).unwrap(), Extend::Reload);
    let fresh = Session::open(&f).unwrap();
    let c = fresh.index_of("c").unwrap();
    assert_eq!(fresh.path_ids(Some(c)), ["a", "b", "c"]);
    for name in ["orphan-diagnostic-order", "parent-arrives-after-its-child"] {
        let data =
            std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fuzz/extend").join(name)).unwrap();
        fuzz_checks::extend(&data);
    }
}

/// The extend target's third failure (tests/fixtures/fuzz/extend/nul-line-appended): an
/// appended line of NUL bytes was reported as malformed JSON, where a fresh load says what it
/// is (`NulBytes`, a tail left by a power cut); extend now classifies such lines as the loader.
#[test]
fn an_appended_nul_line_is_reported_as_the_loader_reports_it() {
    use session_engine::session::Extend;
    use session_engine::{DiagnosticKind, Session};
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("s.jsonl");
    let h =
        "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}\n";
    std::fs::write(&f, h).unwrap();
    let mut session = Session::open(&f).unwrap();
    std::fs::write(&f, format!("{h}\0\0\0\n{{\"type\":\"custom\",\"id\":\"a\",\"parentId\":null,\"timestamp\":\"2025-01-01T00:00:01.000Z\"}}\n")).unwrap();
    assert_eq!(session.extend_from_file(&f).unwrap(), Extend::Added(1));
    let fresh = Session::open(&f).unwrap();
    assert_eq!(session.diagnostics(), fresh.diagnostics());
    assert_eq!(session.diagnostics()[0].kind, DiagnosticKind::NulBytes);
    let data =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fuzz/extend/nul-line-appended"))
            .unwrap();
    fuzz_checks::extend(&data);
}

/// The extend target's fourth failure (tests/fixtures/fuzz/extend/malformed-crlf-last-line): a
/// malformed last line read trimmed (without its `\r`) kept a diagnostic that speaks of the
/// trimmed line (the byte where JSON ends) after an append made it a middle line; extend now
/// says it again of the whole line, as a fresh load does.
#[test]
fn a_malformed_last_line_is_described_again_once_it_is_whole() {
    use session_engine::session::Extend;
    use session_engine::Session;
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("s.jsonl");
    let first = "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}\n{\"torn\":\r\n";
    std::fs::write(&f, first).unwrap();
    let mut session = Session::open(&f).unwrap();
    std::fs::write(&f, format!("{first}{{\"type\":\"custom\",\"id\":\"a\",\"parentId\":null,\"timestamp\":\"2025-01-01T00:00:01.000Z\"}}\n")).unwrap();
    assert_eq!(session.extend_from_file(&f).unwrap(), Extend::Added(1));
    let fresh = Session::open(&f).unwrap();
    assert_eq!(session.diagnostics(), fresh.diagnostics());
    let data = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fuzz/extend/malformed-crlf-last-line"),
    )
    .unwrap();
    fuzz_checks::extend(&data);
}
