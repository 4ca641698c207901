//! The fuzz targets' checks (fuzz/fuzz_targets/*.rs include this file by path), so that a
//! crashing input replays exactly in the engine's normal tests (tests/fuzz_regressions.rs).
//! Each function panics when the engine breaks an invariant on `data`. The summary targets'
//! checks are summary-analysis's (`summary-analysis/tests/fuzz_checks/mod.rs`).
#![allow(dead_code)] // each including crate uses a different part

use pi_json::Value;
use session_engine::session::{CounterIds, Extend};
use session_engine::settings::{self, PiSettings};
use session_engine::{branch, compaction, context, report, CompactionSettings, Session};
use std::path::PathBuf;

/// A scratch path of this process and thread (tmpfs when there is one).
fn scratch(what: &str) -> PathBuf {
    let dir = if std::path::Path::new("/dev/shm").is_dir() { PathBuf::from("/dev/shm") } else { std::env::temp_dir() };
    let t = format!("{:?}", std::thread::current().id()).replace(|c: char| !c.is_ascii_alphanumeric(), "");
    dir.join(format!("arbor-fuzz-{what}-{}-{t}", std::process::id()))
}

/// The line scanner and loader on arbitrary bytes: `Session::from_bytes`, then the tree, every
/// path, the context, the token estimate, the compaction plan, a branch plan and the inspection
/// report. Nothing may panic, and:
/// * the one-thread and two-thread loads agree (the one-thread load of a small file is the
///   single pass that parses each line whole; the two-thread load scans, then parses; the
///   single pass may also parse its second half on another thread, or take both halves parsed
///   by the threads that read them): the same entries with the
///   same fields, roles, values, labels, name and header;
/// * every path starts at a root (no parent) and follows parent links to the entry it ends at;
/// * every entry the id index holds is in the tree exactly once (a root or one parent's child);
/// * every line the scanner accepted parses with the full JSON parser (`value` does not panic).
pub fn loader(data: &[u8]) {
    let session = Session::from_bytes_with(data.to_vec(), &mut CounterIds { prefix: 'm', next: 0 }, usize::MAX);
    let two = Session::from_bytes_with(data.to_vec(), &mut CounterIds { prefix: 'm', next: 0 }, 0);
    // The single pass with its second half parsed on another thread.
    let split = Session::from_bytes_with_splits(data.to_vec(), &mut CounterIds { prefix: 'm', next: 0 }, usize::MAX, 0);
    // The open of a file read in two parts, each parsed by the thread that read it, split
    // anywhere (inside a line, a character, the leading or trailing whitespace).
    let parts: Vec<Session> = [data.len() / 2, data.len() * 11 / 20, data.len() / 5, 1]
        .into_iter()
        .map(|h| Session::from_bytes_in_parts(data.to_vec(), h))
        .collect();
    for two in [&two, &split].into_iter().chain(&parts) {
        same_load(&session, two);
    }
    #[cfg(unix)]
    windowed_opens_agree(&session, data);
    let n = session.len();
    // The tree: each indexed entry once.
    let mut seen = vec![0u32; n];
    for &r in session.roots() {
        seen[r as usize] += 1;
    }
    for i in 0..n {
        for &c in session.children(i) {
            seen[c as usize] += 1;
            assert_eq!(session.index_of(session.id(c as usize)), Some(c as usize));
        }
    }
    for (i, &times) in seen.iter().enumerate() {
        let winner = session.index_of(session.id(i)) == Some(i);
        assert_eq!(times, winner as u32, "entry {i} appears {times} times in the tree");
    }
    let cyclic = session.read_only().is_some_and(|r| matches!(r, session_engine::ReadOnly::Cycle))
        || session.diagnostics().iter().any(|d| d.kind == session_engine::DiagnosticKind::Cycle);
    for i in 0..n {
        let p = session.path(Some(i));
        assert_eq!(p.last(), Some(&i));
        if !cyclic {
            assert_eq!(session.parent_of(p[0]), None);
            for w in p.windows(2) {
                assert_eq!(session.parent_of(w[1]), Some(w[0]));
            }
        }
        assert!(p.len() <= n + 1);
    }
    let leaf = session.file_leaf();
    let path = session.path(leaf);
    let ctx = context::build_context(&session, leaf);
    // The context walked up from a leaf is the context on the leaf's path, for every leaf
    // (compared as text: a timestamp that does not parse is NaN, unequal to itself).
    for i in (0..n).take(300) {
        let (up, on_path) = (
            context::build_context(&session, Some(i)),
            context::build_context_on_path(&session, &session.path(Some(i))),
        );
        assert_eq!(format!("{up:?}"), format!("{on_path:?}"), "leaf {i}");
    }
    let msgs = ctx.agent_messages();
    let _ = context::estimate_context(&msgs);
    let _ = context::to_llm(&msgs);
    let prepared = compaction::prepare_compaction(&session, &path, &CompactionSettings::default());
    // The cut alone is the preparation's cut.
    let keep = CompactionSettings::default().keep_recent_tokens;
    assert_eq!(compaction::first_kept_position(&session, &path, keep), prepared.ok().map(|p| p.first_kept_position));
    if n > 0 {
        let target = data.len() % n;
        let col = branch::collect_branch_entries(&session, leaf, target);
        let _ = branch::prepare_branch_entries(&session, &col.entries, 2000.0);
        if let Some(l) = leaf {
            let _ = session.common_ancestor(l, target);
        }
    }
    let opts = report::InspectOptions::default();
    let r = report::inspect(&session, &opts).expect("inspect with the file's leaf always answers");
    let _ = pi_json::to_string(&r);
}

/// The open of a big file in windows (its lines indexed a window at a time, its bytes left in
/// the file) agrees with the load of the same bytes, for windows shorter than a line, a few lines
/// and a third of the file, each scanned on one thread or split between two; a file the windowed
/// open leaves to the whole-file open (no header first, an older version) is not compared.
#[cfg(unix)]
pub fn windowed_opens_agree(session: &Session, data: &[u8]) {
    let f = scratch("windows");
    std::fs::write(&f, data).unwrap();
    for window in [1, 7, 64, data.len() / 3 + 1] {
        for parallel_min in [0, usize::MAX] {
            if let Some(w) = Session::open_in_windows_of(&f, window, parallel_min) {
                assert!(w.reads_lines_from_file());
                same_load(session, &w);
            }
        }
    }
    let _ = std::fs::remove_file(&f);
}

/// Two loads of the same bytes agree: the same entries with the same fields, roles, values,
/// labels, name, header, diagnostics and malformed lines.
pub fn same_load(session: &Session, two: &Session) {
    assert_eq!(session.len(), two.len());
    assert_eq!(session.diagnostics(), two.diagnostics());
    assert_eq!(session.file_leaf(), two.file_leaf());
    assert_eq!(session.header(), two.header());
    assert_eq!(session.read_only(), two.read_only());
    assert_eq!(session.labels(), two.labels());
    assert_eq!(session.name(), two.name());
    assert_eq!(session.malformed_lines(), two.malformed_lines());
    assert_eq!(session.non_empty_lines(), two.non_empty_lines());
    assert_eq!(session.ends_with_newline(), two.ends_with_newline());
    assert_eq!(session.file_len(), two.file_len());
    for i in 0..session.len() {
        assert_eq!(session.raw(i), two.raw(i));
        let (a, b) = (session.entry(i), two.entry(i));
        assert_eq!((a.start, a.end, a.line, a.kind), (b.start, b.end, b.line, b.kind), "entry {i}");
        assert_eq!(
            (&a.type_name, &a.id, &a.parent_id, &a.timestamp),
            (&b.type_name, &b.id, &b.parent_id, &b.timestamp),
            "entry {i}"
        );
        assert_eq!(session.parent_of(i), two.parent_of(i));
        assert_eq!(pi_json::to_string(session.value(i)), pi_json::to_string(two.value(i)), "entry {i}");
        assert_eq!(session.role(i), two.role(i), "entry {i}");
    }
}

/// Everything a session shows, field by field (for "extended == loaded fresh").
fn state(session: &Session) -> Vec<(&'static str, String)> {
    let leaf = session.file_leaf();
    let (ctx_v, _) = report::context_section(session, &session.path(leaf));
    let children: Vec<Vec<u32>> = (0..session.len()).map(|i| session.children(i).to_vec()).collect();
    vec![
        ("len", session.len().to_string()),
        ("leaf", format!("{:?}", leaf.map(|l| session.id(l).to_string()))),
        ("path", format!("{:?}", session.path_ids(leaf))),
        ("labels", format!("{:?}", session.labels())),
        ("name", format!("{:?}", session.name())),
        ("roots", format!("{:?}", session.roots())),
        ("children", format!("{children:?}")),
        ("malformed", format!("{:?}", session.malformed_lines())),
        // In line order: a load reports line problems, then index problems (orphans, repeated
        // ids); an extend does the same for each batch, so the lists interleave differently.
        ("diagnostics", {
            let mut d = session.diagnostics().to_vec();
            d.sort_by_key(|d| (d.line, d.offset));
            format!("{d:?}")
        }),
        ("read_only", format!("{:?}", session.read_only())),
        ("non_empty_lines", session.non_empty_lines().to_string()),
        (
            "raw lines",
            format!(
                "{:?}",
                (0..session.len()).map(|i| String::from_utf8_lossy(&session.raw(i)).into_owned()).collect::<Vec<_>>()
            ),
        ),
        ("context", pi_json::to_string(&ctx_v)),
    ]
}

fn short(s: &str) -> String {
    if s.len() <= 600 {
        s.to_string()
    } else {
        let mut end = 600;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}… ({} bytes)", &s[..end], s.len())
    }
}

/// `extend_from_file` on a growing file. The input's first two bytes pick a split point in the
/// rest (an odd first byte moves the cut to the next line end): the prefix is written and loaded, the remainder appended, and the session extended.
/// Unless extend says to reload, the result must equal a fresh load of the bytes it consumed
/// (the prefix plus the remainder up to its last newline): same entries, raw lines, leaf, path,
/// labels, name, roots, children, diagnostics and context. A second extend after the file is
/// finished must agree again.
pub fn extend(data: &[u8]) {
    if data.len() < 2 {
        return;
    }
    let body = &data[2..];
    let mut cut = u16::from_le_bytes([data[0], data[1]]) as usize % (body.len() + 1);
    // A prefix that ends mid-line always asks for a reload; move most cuts to a line end so
    // the interesting path (adding lines) is the common one.
    if data[0] & 1 == 1 && cut > 0 && body[cut - 1] != b'\n' {
        cut = body[cut..].iter().position(|&c| c == b'\n').map(|i| cut + i + 1).unwrap_or(body.len());
    }
    let f = scratch("extend").with_extension("jsonl");
    std::fs::write(&f, &body[..cut]).unwrap();
    let mut session = Session::open(&f).unwrap();
    std::fs::write(&f, body).unwrap();
    let r = session.extend_from_file(&f).unwrap();
    if r == Extend::Reload {
        return;
    }
    let consumed = match memchr_last_nl(&body[cut..]) {
        Some(i) => cut + i + 1,
        None => cut,
    };
    let fresh = Session::from_bytes(body[..consumed].to_vec());
    for ((k, a), (_, b)) in state(&session).into_iter().zip(state(&fresh)) {
        if a != b {
            // The first differing position, so the message stays readable.
            let at = a.bytes().zip(b.bytes()).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()));
            let from = at.saturating_sub(200);
            let (a, b) = (
                String::from_utf8_lossy(&a.as_bytes()[from..]).into_owned(),
                String::from_utf8_lossy(&b.as_bytes()[from..]).into_owned(),
            );
            panic!(
                "cut {cut}, consumed {consumed}: {k} differs after extend\nextended: {}\nfresh:    {}",
                short(&a),
                short(&b)
            );
        }
    }
    // Nothing more to add: a second call adds nothing.
    assert_eq!(session.extend_from_file(&f).unwrap(), Extend::Added(0));
}

fn memchr_last_nl(b: &[u8]) -> Option<usize> {
    b.iter().rposition(|&c| c == b'\n')
}

/// The settings reader: the input, split at its first 0xFF byte (never in valid UTF-8), is the
/// global and the project `settings.json`. `PiSettings::load` and everything read from it must
/// not panic; the pretty printer's output parses back to the same text; and `write_setting`
/// either sets the key and keeps every other top-level key, or refuses an invalid file and
/// leaves it byte for byte as it was.
pub fn settings(data: &[u8]) {
    let (global, project) = match data.iter().position(|&b| b == 0xff) {
        Some(i) => (&data[..i], Some(&data[i + 1..])),
        None => (data, None),
    };
    let agent = scratch("settings");
    let cwd = agent.join("proj");
    std::fs::create_dir_all(cwd.join(".pi")).unwrap();
    let g = settings::global_path(&agent);
    let p = settings::project_path(&cwd);
    std::fs::write(&g, global).unwrap();
    match project {
        Some(b) => std::fs::write(&p, b).unwrap(),
        None => {
            let _ = std::fs::remove_file(&p);
        }
    }
    let s = PiSettings::load(&agent, Some(&cwd));
    let eff = s.effective();
    assert!(eff.as_object().is_some());
    let _ = s.compaction();
    let _ = s.branch_reserve_tokens();
    let _ = s.session_dir();
    let pretty = pi_json::to_pretty(&eff);
    let back = pi_json::parse(&pretty).expect("the pretty printer writes valid JSON");
    assert_eq!(pi_json::to_pretty(&back), pretty);

    // Writing one key.
    let before = std::fs::read(&g).unwrap();
    let res = settings::write_setting(&g, "compaction", "keepRecentTokens", Value::Num(12345.0));
    let after = std::fs::read(&g).unwrap();
    match res {
        Ok(()) => {
            let old = if before.iter().all(u8::is_ascii_whitespace) {
                pi_json::parse("{}").unwrap()
            } else {
                pi_json::parse_bytes(&before).unwrap()
            };
            let new = pi_json::parse_bytes(&after).expect("write_setting writes valid JSON");
            let (o, n) = (old.as_object().unwrap(), new.as_object().unwrap());
            assert_eq!(n.get("compaction").and_then(|c| c.num_field("keepRecentTokens")), Some(12345.0));
            for (k, v) in o.iter() {
                if k != "compaction" {
                    assert_eq!(pi_json::to_pretty(n.get(k).expect("a key was lost")), pi_json::to_pretty(v));
                }
            }
        }
        Err(_) => assert_eq!(before, after, "a refused write changed the file"),
    }
}
