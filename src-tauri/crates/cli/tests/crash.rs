//! Crash injection (fault F29 of docs/RELIABILITY.md): `arbor-cli label` and `arbor-cli compact --provider offline`
//! are killed with SIGKILL at random points while they append to one session file, round after
//! round. After every round the next writer must get the session lock; at the end (and on a
//! sample of intermediate states) the file must load in Arbor and in Pi, every acknowledged
//! append (exit 0 / the id printed) must be in the file, whole, and nothing but the one write in
//! flight may be lost.
//!
//! Rounds continue until 200 runs were killed (`ARBOR_CRASH_ROUNDS=1000` for the long run: 1000
//! kills); runs that finish before their kill are counted as acknowledged appends.
//! `ARBOR_CRASH_SEED` replays a run. Figures go to stderr (`--nocapture` to see them).
#[path = "support/pi.rs"]
mod pi;
#[path = "support/rng.rs"]
mod rng;

use pi_json::Value;
use session_engine::store::SessionLock;
use session_engine::{DiagnosticKind, Session};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    Label,
    Clear,
    Compact,
}

fn command(dir: &Path, file: &Path, op: Op, target: &str, text: &str) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_arbor-cli"));
    c.env("PI_CODING_AGENT_DIR", dir.join("agent"))
        .env("ARBOR_SETTINGS", dir.join("arbor-settings.json"))
        .env("ARBOR_KEYRING", "off");
    match op {
        Op::Label => c.arg("label").arg(file).args(["--entry", target, "--text", text, "--json"]),
        Op::Clear => c.arg("label").arg(file).args(["--entry", target, "--clear", "--json"]),
        Op::Compact => c.arg("compact").arg(file).args(["--provider", "offline", "--keep-recent-tokens", "800"]),
    };
    c.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    c
}

/// The id an acknowledged run printed: `{"entryId":…}` for label, the bare id for compact.
fn acknowledged_id(op: Op, stdout: &str) -> Option<String> {
    let line = stdout.lines().next()?.trim();
    match op {
        Op::Compact => (line.len() == 8 && line.bytes().all(|b| b.is_ascii_hexdigit())).then(|| line.to_string()),
        _ => serde_json::from_str::<serde_json::Value>(line).ok()?["entryId"].as_str().map(str::to_string),
    }
}

/// An append that was acknowledged, and what its line must say.
struct Acked {
    id: String,
    op: Op,
    target: String,
    text: String,
}

#[derive(Default, Debug)]
struct Figures {
    rounds: usize,
    killed: usize,
    completed: usize,
    acked: usize,
    /// Killed after the line was written but before the id was printed.
    written_unacked: usize,
    /// Killed before anything was written.
    nothing_written: usize,
    refused_already_compacted: usize,
    acked_lost: usize,
    fragments: usize,
    pi_runs: usize,
}

fn median_micros(mut v: Vec<u128>) -> u64 {
    v.sort_unstable();
    v[v.len() / 2] as u64
}

#[test]
fn sigkill_during_appends_loses_nothing_acknowledged() {
    let kills: usize = std::env::var("ARBOR_CRASH_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(200);
    let seed = rng::seed_from_env("ARBOR_CRASH_SEED");
    eprintln!("crash: until {kills} kills, ARBOR_CRASH_SEED={seed}");
    let mut rng = rng::Rng::new(seed);
    let pi_ok = pi::pi_or_skip("sigkill_during_appends_loses_nothing_acknowledged");

    let dir: PathBuf = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("crash-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("states")).unwrap();
    let file = dir.join("session.jsonl");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../session-engine/tests/fixtures/conformance/basic-tool-chain.jsonl"),
        &file,
    )
    .unwrap();
    let targets: Vec<String> = {
        let session = Session::open(&file).unwrap();
        (0..session.len()).step_by(3).map(|i| session.id(i).to_string()).collect()
    };

    // How long each command takes when left alone: kills are spread over that span.
    let span = |op: Op| {
        let mut t = Vec::new();
        for i in 0..5 {
            let probe = dir.join("probe.jsonl");
            std::fs::copy(&file, &probe).unwrap();
            let start = Instant::now();
            let o = command(&dir, &probe, op, &targets[i % targets.len()], "probe").output().unwrap();
            assert!(o.status.success(), "{op:?} on an intact copy: {}", String::from_utf8_lossy(&o.stderr));
            t.push(start.elapsed().as_micros());
        }
        median_micros(t)
    };
    let mut label_us = span(Op::Label);
    let mut compact_us = span(Op::Compact);
    eprintln!("crash: median label {label_us} µs, compact {compact_us} µs at the start");

    let sample_every = (kills / 5).max(1);
    let mut states = Vec::new();
    let mut acked: Vec<Acked> = Vec::new();
    let mut f = Figures::default();
    let started = Instant::now();
    let mut round = 0;
    while f.killed < kills {
        assert!(
            round < kills * 4,
            "{round} rounds gave only {} kills: the kill timing does not cover the runs",
            f.killed
        );
        let op = match rng.below(8) {
            0 | 1 => Op::Compact,
            2 => Op::Clear,
            _ => Op::Label,
        };
        let target = targets[rng.below(targets.len() as u64) as usize].clone();
        let text = format!("round {round} ✓ \"crash\" 🌳");
        let before = std::fs::metadata(&file).unwrap().len();
        let span_us = if op == Op::Compact { compact_us } else { label_us };
        // The probe's span can be off by a lot when the machine is busy at that moment (CI runs
        // other suites beside this one): a run that finished before its kill shrinks the span,
        // a kill grows it a little, so about one run in seven finishes whatever the load does.
        let adapt = |us: &mut u64, finished: bool| {
            *us = if finished { (*us * 85 / 100).max(200) } else { (*us * 103 / 100).min(2_000_000) };
        };
        // Uniform over 0..1.3× the usual duration: some runs finish, most are cut somewhere.
        let delay = Duration::from_micros(rng.below(span_us * 13 / 10 + 1));
        let mut child = command(&dir, &file, op, &target, &text).spawn().unwrap();
        std::thread::sleep(delay);
        let _ = child.kill();
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let after = std::fs::metadata(&file).unwrap().len();
        let was_killed = out.status.signal() == Some(9);
        adapt(if op == Op::Compact { &mut compact_us } else { &mut label_us }, !was_killed);
        if was_killed {
            f.killed += 1;
        } else {
            f.completed += 1;
            let stderr = String::from_utf8_lossy(&out.stderr);
            if op == Op::Compact && out.status.code() == Some(2) && stderr.contains("Already compacted") {
                f.refused_already_compacted += 1;
            } else {
                assert!(out.status.success(), "round {round}: {op:?} failed on its own (not killed): {stderr}");
            }
        }
        let id = acknowledged_id(op, &stdout);
        // The id is printed only after the synced write: a printed id is an acknowledged append,
        // even when the kill came right after the print.
        let text_now = std::fs::read_to_string(&file).unwrap();
        match id {
            Some(id) => {
                f.acked += 1;
                if !text_now.contains(&format!("\"id\":\"{id}\"")) {
                    f.acked_lost += 1;
                    eprintln!("round {round}: acknowledged {op:?} {id} is not in the file");
                }
                acked.push(Acked { id, op, target: target.clone(), text: text.clone() });
            }
            None if after > before => f.written_unacked += 1,
            None => f.nothing_written += 1,
        }
        // No lock left behind: the next writer gets it at once.
        let lock = SessionLock::try_acquire(&file).unwrap_or_else(|e| {
            panic!("round {round}: after a {op:?} kill the session lock blocks the next writer: {e}")
        });
        drop(lock);
        if pi_ok && (round + 1) % sample_every == 0 {
            let p = dir.join(format!("states/after-round-{round}.jsonl"));
            std::fs::copy(&file, &p).unwrap();
            states.push(p);
        }
        round += 1;
        f.rounds = round;
    }
    let write_time = started.elapsed();

    // Arbor: the file loads; the only diagnostics are fragments of writes that were in flight.
    let session = Session::open(&file).unwrap();
    for d in session.diagnostics() {
        assert!(
            matches!(d.kind, DiagnosticKind::Malformed | DiagnosticKind::TornTail),
            "unexpected diagnostic after the crash rounds: {d:?}"
        );
    }
    f.fragments = session.diagnostics().len();
    assert!(f.fragments <= f.killed, "{} fragments from {} kills", f.fragments, f.killed);
    assert!(session.read_only().is_none(), "{:?}", session.read_only());
    // Every acknowledged append is there, whole, and says what was asked.
    for a in &acked {
        let Some(i) = session.index_of(&a.id) else {
            panic!("acknowledged {:?} {} is missing from the file", a.op, a.id);
        };
        let v = session.value(i);
        match a.op {
            Op::Compact => assert_eq!(v.str_field("type"), Some("compaction"), "{}", a.id),
            Op::Label | Op::Clear => {
                assert_eq!(v.str_field("type"), Some("label"), "{}", a.id);
                assert_eq!(v.str_field("targetId"), Some(a.target.as_str()), "{}", a.id);
                let want = if a.op == Op::Label { Some(&Value::from(a.text.as_str())) } else { None };
                assert_eq!(v.get("label"), want, "{}", a.id);
            }
        }
    }
    assert_eq!(f.acked_lost, 0, "acknowledged appends lost");
    assert!(f.acked > 0 && f.written_unacked + f.nothing_written > 0, "{f:?}");

    // Pi: the final file and a sample of intermediate states load in Pi as in Arbor.
    if pi_ok {
        states.push(file.clone());
        // Two at a time: Pi's start-up dominates and the machine has two cores.
        for pair in states.chunks(2) {
            std::thread::scope(|sc| {
                for p in pair {
                    sc.spawn(move || {
                        let pv = pi::pi_view(p, None);
                        let av = pi::arbor_view(p, None);
                        assert!(pv.header_accepted, "{}: Pi rejects the header", p.display());
                        if let Some(d) = pi::first_difference(&pv, &av) {
                            panic!("{}: Pi and Arbor disagree after the crash rounds on {d}", p.display());
                        }
                    });
                }
            });
        }
        if f.fragments == 0 {
            pi::assert_arbor_reads_pi_append(&file);
        }
        f.pi_runs = pi::pi_runs();
    }
    eprintln!("crash: {f:?}; {:.1} s of kill rounds, seed {seed}; spans at the end: label {label_us} µs, compact {compact_us} µs", write_time.as_secs_f64());
}
