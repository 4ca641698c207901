//! Crash injection for the SQLite index (fault F35 of docs/RELIABILITY.md): `arbor-cli index` is
//! killed with SIGKILL at random points during a first index of 50 generated sessions, round
//! after round (sometimes killed again during the run after the kill). Then the next run must
//! complete with no manual repair, and the answers must be right: `arbor-cli search` finds a
//! known phrase in the one session that holds it, the library lists every session, and a
//! sampled session's indexed entries are exactly the file's. No kill may make the index look
//! damaged (nothing is moved aside as corrupt).
//!
//! 50 kills in CI; `ARBOR_CRASH_ROUNDS=N` for N kills (the long run). `ARBOR_CRASH_SEED`
//! replays a run. Figures go to stderr (`--nocapture`).
#[path = "support/rng.rs"]
mod rng;
#[path = "../../library/tests/support/mod.rs"]
mod support;

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SESSIONS: usize = 50;

fn cli() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_arbor-cli"));
    c.env_remove("ARBOR_INDEX_DB").stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    c
}

fn index_cmd(root: &Path, db: &Path) -> Command {
    let mut c = cli();
    c.arg("index").arg("--root").arg(root).arg("--db").arg(db);
    c
}

/// 50 sessions in 5 project folders, a branch and a compaction in some, one phrase in one.
fn generate(root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for i in 0..SESSIONS {
        let mut g = support::Gen::new(&format!("crash-{i:03}"), &format!("/proj/{}", i % 5));
        let filler = "the tokenizer splits words at punctuation and we index every one of them ".repeat(6);
        let mid = g.chain(None, 20, &format!("s{i} {filler}"), "m");
        if i % 3 == 0 {
            let first = g.lines[1]["id"].as_str().unwrap().to_string();
            let c = g.compaction(mid.as_deref().unwrap(), &first, &format!("summary of s{i}: {filler}"));
            g.chain(Some(c), 5, &format!("after {i}"), "m");
        }
        if i % 4 == 1 {
            // a branch off the middle, abandoned
            let at = g.lines[10]["id"].as_str().unwrap().to_string();
            g.chain(Some(at), 3, &format!("branch {i}"), "m");
        }
        if i == 37 {
            let leaf = g.leaf();
            g.user(leaf.as_deref(), "the resplendent quetzal phrase is only here");
        }
        let p = root.join(format!("--proj-{}--/s{i:03}.jsonl", i % 5));
        g.write(&p);
        files.push(p.canonicalize().unwrap());
    }
    files
}

#[derive(Debug, Default)]
struct Figures {
    rounds: usize,
    kills: usize,
    /// Runs that finished before their kill came.
    completed_before_kill: usize,
    /// Kills after which the next run found part of the work already committed.
    partial_progress_seen: usize,
    /// Kills after which the next run found nothing committed (killed early, or in phase 1).
    nothing_committed: usize,
    /// Rounds whose recovery run was itself killed once.
    double_kills: usize,
    moved_aside: usize,
}

fn new_count(stdout: &str) -> usize {
    // "... in N s (...): A new, B appended, C re-read, D removed, E unchanged ..."
    let i = stdout.find(" new,").unwrap_or_else(|| panic!("no summary line: {stdout}"));
    stdout[..i].rsplit(' ').next().unwrap().parse().unwrap()
}

#[test]
fn sigkill_during_first_index_needs_no_repair() {
    let kills: usize = std::env::var("ARBOR_CRASH_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(50);
    let seed = rng::seed_from_env("ARBOR_CRASH_SEED");
    eprintln!("index_crash: until {kills} kills, ARBOR_CRASH_SEED={seed}");
    let mut rng = rng::Rng::new(seed);
    let dir: PathBuf = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("index_crash-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let root = dir.join("sessions");
    let files = generate(&root);
    let root = root.canonicalize().unwrap();

    // How long a first index takes when left alone: kills are spread over that span.
    let mut spans = Vec::new();
    for i in 0..3 {
        let db = dir.join(format!("probe-{i}/index.sqlite3"));
        let t = Instant::now();
        let o = index_cmd(&root, &db).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        spans.push(t.elapsed().as_micros() as u64);
        assert_eq!(new_count(&String::from_utf8_lossy(&o.stdout)), SESSIONS);
    }
    spans.sort_unstable();
    let mut span = spans[1];
    eprintln!("index_crash: a first index of {SESSIONS} sessions takes {span} µs uncontended");

    let mut f = Figures::default();
    let started = Instant::now();
    let kill_after = |rng: &mut rng::Rng, db: &Path, f: &mut Figures, span: u64| -> bool {
        let delay = Duration::from_micros(rng.below(span * 11 / 10 + 1));
        let mut child = index_cmd(&root, db).spawn().unwrap();
        std::thread::sleep(delay);
        let _ = child.kill();
        let o = child.wait_with_output().unwrap();
        if o.status.signal() == Some(9) {
            f.kills += 1;
            true
        } else {
            assert!(o.status.success(), "index failed on its own (not killed): {}", String::from_utf8_lossy(&o.stderr));
            f.completed_before_kill += 1;
            false
        }
    };
    while f.kills < kills {
        assert!(f.rounds < kills * 4, "{} rounds gave only {} kills", f.rounds, f.kills);
        let db = dir.join(format!("round-{}/index.sqlite3", f.rounds));
        f.rounds += 1;
        if !kill_after(&mut rng, &db, &mut f, span) {
            // The probe's span was measured once, and a machine that others load swings by 2-3×:
            // a run that beat its kill shows the span is shorter now, and each kill lets it grow
            // a little, so the kills keep spreading over the whole run as its length drifts (the
            // two settle with about one run in seven finishing first).
            span = span * 3 / 4;
            continue;
        }
        span = span * 21 / 20;
        // Sometimes the run after the kill is killed too.
        if rng.below(3) == 0 && kill_after(&mut rng, &db, &mut f, span) {
            f.double_kills += 1;
        }
        // The next start: completes, no repair.
        let o = index_cmd(&root, &db).output().unwrap();
        let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
        assert!(o.status.success(), "round {}: the run after a kill failed: {err}", f.rounds);
        assert!(out.contains(&format!("indexed {SESSIONS} session files")), "round {}: {out}", f.rounds);
        assert!(!err.contains("could not be used"), "round {}: the index was replaced after a kill: {err}", f.rounds);
        let done_before = SESSIONS - new_count(&out);
        if done_before > 0 {
            f.partial_progress_seen += 1;
        } else {
            f.nothing_committed += 1;
        }
        // The answers.
        let o = cli()
            .args(["search", "resplendent quetzal", "--json", "--root"])
            .arg(&root)
            .arg("--db")
            .arg(&db)
            .output()
            .unwrap();
        assert!(o.status.success(), "round {}: search: {}", f.rounds, String::from_utf8_lossy(&o.stderr));
        let hits: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let hits = hits.as_array().unwrap();
        assert_eq!(hits.len(), 1, "round {}: {hits:?}", f.rounds);
        assert_eq!(hits[0]["sessionId"], "crash-037");
        assert_eq!(hits[0]["status"], "in_context");
        let lib = library::Library::open(&db).unwrap();
        assert!(lib.notices().is_empty(), "round {}: {:?}", f.rounds, lib.notices());
        let listed = lib.sessions(&library::SessionFilter::default()).unwrap();
        assert_eq!(listed.len(), SESSIONS, "round {}: the library lists {} sessions", f.rounds, listed.len());
        let sample = &files[rng.below(SESSIONS as u64) as usize];
        let session = session_engine::Session::open(sample).unwrap();
        let want: Vec<&str> = (0..session.len()).map(|i| session.id(i)).collect();
        let got = lib.entry_statuses(sample).unwrap();
        assert_eq!(
            got.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>(),
            want,
            "round {}: {} indexed entries differ",
            f.rounds,
            sample.display()
        );
        let aside = std::fs::read_dir(db.parent().unwrap())
            .unwrap()
            .filter_map(|d| d.ok())
            .filter(|d| d.file_name().to_string_lossy().contains("corrupt"))
            .count();
        f.moved_aside += aside;
        drop(lib);
        let _ = std::fs::remove_dir_all(db.parent().unwrap());
    }
    assert_eq!(f.moved_aside, 0, "a kill made the index look damaged: {f:?}");
    assert!(f.partial_progress_seen > 0 && f.nothing_committed > 0, "the kills did not cover the run: {f:?}");
    eprintln!("index_crash: {f:?}; {:.1} s, seed {seed}", started.elapsed().as_secs_f64());
}
