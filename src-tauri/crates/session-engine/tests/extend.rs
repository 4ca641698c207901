//! Live follow: a session extended with what was appended equals the same file loaded fresh,
//! on every fixture and at several cut points; rewrites and truncations ask for a reload.

use session_engine::session::Extend;
use session_engine::{context, report, Session};
use std::path::{Path, PathBuf};

fn fixtures_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Every session file of the conformance and random fixtures.
fn fixture_files() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for sub in ["conformance", "random"] {
        for e in std::fs::read_dir(fixtures_root().join(sub)).unwrap() {
            let p = e.unwrap().path();
            if p.to_string_lossy().ends_with(".jsonl") {
                out.push(p);
            }
        }
    }
    out
}

fn summary(session: &Session) -> String {
    let leaf = session.file_leaf();
    let ctx = context::build_context(session, leaf);
    let (ctx_v, _) = report::context_section(session, &session.path(leaf));
    format!(
        "n={} leaf={:?} path={:?} labels={:?} name={:?} roots={:?} malformed={:?} kinds={:?} ctx={} msgs={} children0={:?}",
        session.len(),
        leaf.map(|l| session.id(l).to_string()),
        session.path_ids(leaf),
        session.labels(),
        session.name(),
        session.roots(),
        session.malformed_lines(),
        session.diagnostics().iter().map(|d| (d.line, d.kind.clone())).collect::<Vec<_>>(),
        pi_json::to_string(&ctx_v),
        ctx.messages.len(),
        if session.is_empty() { vec![] } else { session.children(0).to_vec() },
    )
}

#[test]
fn extending_equals_a_fresh_load_on_every_fixture() {
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for p in fixture_files() {
        let bytes = std::fs::read(&p).unwrap();
        let full = Session::from_bytes(bytes.clone());
        if full.read_only().is_some() || !bytes.ends_with(b"\n") || bytes.contains(&b'\r') {
            continue;
        }
        let nls: Vec<usize> = bytes.iter().enumerate().filter(|(_, &b)| b == b'\n').map(|(i, _)| i + 1).collect();
        for frac in [0.3, 0.7, 0.97] {
            let cut = nls[((nls.len() as f64 * frac) as usize).max(1).min(nls.len() - 1)];
            let f = dir.path().join("s.jsonl");
            std::fs::write(&f, &bytes[..cut]).unwrap();
            let mut session = Session::open(&f).unwrap();
            // Appended in two writes, the first ending mid-line (Pi caught mid-write).
            let mid = cut + (bytes.len() - cut) / 2;
            std::fs::write(&f, &bytes[..mid]).unwrap();
            let first = session.extend_from_file(&f).unwrap();
            std::fs::write(&f, &bytes).unwrap();
            // After a Reload the session is stale: every later call says Reload too.
            let second = session.extend_from_file(&f).unwrap();
            let fresh = Session::open(&f).unwrap();
            let expect_reload =
                fresh.diagnostics().iter().any(|d| d.kind == session_engine::DiagnosticKind::DuplicateId);
            if first == Extend::Reload || second == Extend::Reload {
                assert!(expect_reload, "{}: unexpected reload", p.display());
                continue;
            }
            assert_eq!(summary(&session), summary(&fresh), "{} cut at {cut}", p.display());
            for i in 0..session.len() {
                assert_eq!(session.raw(i), fresh.raw(i));
            }
            checked += 1;
        }
    }
    assert!(checked > 100, "only {checked} cut points checked");
}

#[test]
fn a_rewritten_or_truncated_file_asks_for_a_reload() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("s.jsonl");
    let h = r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#;
    let a = r#"{"type":"custom","customType":"x","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z"}"#;
    let b = r#"{"type":"custom","customType":"x","id":"b","parentId":"a","timestamp":"2025-01-01T00:00:02.000Z"}"#;
    std::fs::write(&f, format!("{h}\n{a}\n")).unwrap();
    let mut session = Session::open(&f).unwrap();
    assert_eq!(session.extend_from_file(&f).unwrap(), Extend::Added(0));
    std::fs::write(&f, format!("{h}\n{a}\n{b}\n")).unwrap();
    assert_eq!(session.extend_from_file(&f).unwrap(), Extend::Added(1));
    assert_eq!(session.path_ids(session.file_leaf()), vec!["a", "b"]);
    // Truncated.
    std::fs::write(&f, format!("{h}\n")).unwrap();
    assert_eq!(session.extend_from_file(&f).unwrap(), Extend::Reload);
    // Rewritten with the same length and more.
    let mut session = Session::open(&f).unwrap();
    std::fs::write(&f, format!("{}\n{a}\n", h.replace("\"s\"", "\"t\""))).unwrap();
    assert_eq!(session.extend_from_file(&f).unwrap(), Extend::Reload);
    // A repeated id changes earlier resolution.
    std::fs::write(&f, format!("{h}\n{a}\n")).unwrap();
    let mut session = Session::open(&f).unwrap();
    std::fs::write(&f, format!("{h}\n{a}\n{a}\n")).unwrap();
    assert_eq!(session.extend_from_file(&f).unwrap(), Extend::Reload);
}

#[test]
fn the_two_thread_load_equals_the_one_thread_load_on_every_fixture() {
    use session_engine::session::CounterIds;
    let root = fixtures_root();
    let mut n = 0;
    for p in fixture_files() {
        let bytes = std::fs::read(&p).unwrap();
        let one = Session::from_bytes_with(bytes.clone(), &mut CounterIds { prefix: 'm', next: 0 }, usize::MAX);
        let two = Session::from_bytes_with(bytes.clone(), &mut CounterIds { prefix: 'm', next: 0 }, 0);
        assert_eq!(summary(&one), summary(&two), "{}", p.display());
        assert_eq!(one.diagnostics(), two.diagnostics(), "{}", p.display());
        assert_eq!(one.non_empty_lines(), two.non_empty_lines());
        n += 1;
    }
    // Damaged files too: the bad lines fall in either half.
    let good = std::fs::read(root.join("conformance/basic-tool-chain.jsonl")).unwrap();
    let mut bad = good.clone();
    let len = bad.len();
    bad.truncate(len - 40); // torn tail
    bad.splice(len / 2..len / 2, b"\n{not json}\n\n   \n[1,2]\n".iter().copied());
    bad.extend_from_slice(&[0xff, b'\n']);
    let one = Session::from_bytes_with(bad.clone(), &mut CounterIds { prefix: 'm', next: 0 }, usize::MAX);
    let two = Session::from_bytes_with(bad, &mut CounterIds { prefix: 'm', next: 0 }, 0);
    assert_eq!(summary(&one), summary(&two));
    assert_eq!(one.diagnostics(), two.diagnostics());
    assert!(one.diagnostics().len() >= 3);
    assert!(n >= 70, "{n} fixtures");
}

/// A file big enough to be read into anonymous memory (8 MiB and more: `session/bytes.rs`), then
/// appended to past the room that memory leaves (2 MiB): the extended session equals
/// a fresh load, and so does the open of the big file itself against a load of its bytes.
#[test]
fn a_big_file_extended_past_its_buffer_equals_a_fresh_load() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("big.jsonl");
    let pad = "x".repeat(4000);
    let line = |i: usize| {
        let parent = if i == 0 { "null".to_string() } else { format!("\"e{}\"", i - 1) };
        let role = if i.is_multiple_of(2) { "user" } else { "assistant" };
        format!(
            r#"{{"type":"message","id":"e{i}","parentId":{parent},"timestamp":"2025-01-01T00:00:00.000Z","message":{{"role":"{role}","content":[{{"type":"text","text":"{i} {pad}"}}],"timestamp":1}}}}"#
        )
    };
    let mut body = String::from(
        "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}\n",
    );
    let mut n = 0;
    while body.len() < (9 << 20) {
        body += &line(n);
        body.push('\n');
        n += 1;
    }
    std::fs::write(&f, &body).unwrap();
    let mut session = Session::open(&f).unwrap();
    assert_eq!(summary(&session), summary(&Session::from_bytes(body.clone().into_bytes())));
    // About 4 MiB more, in three appends: more than the room the first buffer left.
    for _ in 0..3 {
        let start = n;
        while n < start + 350 {
            body += &line(n);
            body.push('\n');
            n += 1;
        }
        std::fs::write(&f, &body).unwrap();
        assert_eq!(session.extend_from_file(&f).unwrap(), Extend::Added(350));
    }
    let fresh = Session::open(&f).unwrap();
    assert_eq!(session.len(), n);
    assert_eq!(summary(&session), summary(&fresh));
    for i in [0, 1, n / 2, n - 1] {
        assert_eq!(session.raw(i), fresh.raw(i));
    }
    assert_eq!(session.file_len(), body.len() as u64);
}
