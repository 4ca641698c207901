//! A concurrent writer (faults F20 and F24 of docs/RELIABILITY.md): Pi, driven through its own
//! `SessionManager` (`pi-check.mjs append-loop`: user + assistant pairs with small random sleeps),
//! and Arbor (`arbor-cli label` in a loop, and now and then `arbor-cli compact --provider offline`)
//! append to the same session file at the same time, while a third thread holds the file open in Arbor
//! (`Session::extend_from_file` in a loop) and keeps a library index up to date (`sync_file`).
//!
//! Checked afterwards: every line parses and Pi skips none (no torn or interleaved line); every
//! entry each writer acknowledged is there; the open view and the index followed every append;
//! Arbor refused, with its sentence, whenever the file moved between its planning and its write,
//! and no Arbor entry hangs off a stale leaf: each one's `parentId` is the entry on the line
//! before it (the file's leaf when it was written), unless Arbor reported at that moment that
//! another append overtook it (`StoreError::Overtaken`).
//!
//! Pi's entries are different by design: Pi never re-reads the file, so each of its entries
//! parents to Pi's own in-memory leaf (its previous entry), not to an Arbor label or compaction
//! written in between. Those Arbor entries end up on side branches of Pi's chain; the file's
//! leaf is whatever was written last. The test asserts that shape too.
//!
//! Bounded for CI (150 Pi rounds, a few seconds); `ARBOR_CONCURRENT_ROUNDS=N` for a longer run.
//! Figures go to stderr (`--nocapture`).
#[path = "support/pi.rs"]
mod pi;
#[path = "support/rng.rs"]
mod rng;

use session_engine::session::Extend;
use session_engine::Session;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn arbor(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_arbor-cli"));
    c.env("PI_CODING_AGENT_DIR", dir.join("agent"))
        .env("ARBOR_SETTINGS", dir.join("arbor-settings.json"))
        .env("ARBOR_KEYRING", "off");
    c.stdin(Stdio::null());
    c
}

#[derive(Debug, Default)]
struct Figures {
    pi_rounds: usize,
    pi_entries: usize,
    arbor_runs: usize,
    labels_acked: usize,
    compactions_acked: usize,
    /// "changed while …; nothing was written": the file moved between planning and writing.
    refused_changed: usize,
    /// Written, but another append landed in the same instant; reported to the user.
    overtaken: usize,
    /// Compaction refused on its own terms ("Already compacted", "Nothing to compact").
    declined: usize,
    extend_calls: usize,
    /// Entries the open view holds: its first load plus what each extend_from_file added.
    extend_added: usize,
    index_syncs: usize,
    index_new_entries: usize,
    /// Index passes that re-read the file in full (after meeting a torn tail).
    index_rereads: usize,
    /// Arbor entries whose parent was Pi's newest entry at the time (the interesting case).
    arbor_on_pi_entry: usize,
    /// Pi entries whose parent is not the line before them (an Arbor entry came in between).
    pi_past_arbor: usize,
}

#[derive(Debug, PartialEq)]
enum Outcome {
    Acked(String),
    Refused,
    Overtaken,
    Declined,
}

fn classify(op: &str, out: &std::process::Output) -> Outcome {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.success() {
        let line = stdout.lines().next().unwrap_or("").trim().to_string();
        let id = if op == "label" {
            serde_json::from_str::<serde_json::Value>(&line)
                .ok()
                .and_then(|v| v["entryId"].as_str().map(str::to_string))
        } else {
            Some(line)
        };
        let id = id.unwrap_or_else(|| panic!("{op} succeeded without printing an id: {stdout}"));
        assert!(id.len() == 8 && id.bytes().all(|b| b.is_ascii_hexdigit()), "{op} printed {id:?}");
        return Outcome::Acked(id);
    }
    assert_eq!(out.status.code(), Some(2), "{op} failed with {:?}: {stderr}", out.status);
    assert_eq!(stderr.trim().lines().count(), 1, "{op}: the error is one line: {stderr}");
    if stderr.contains("changed while") && stderr.contains("nothing was written") && stderr.contains("Run it again") {
        Outcome::Refused
    } else if stderr.contains("at the same instant") && stderr.contains("arbor-cli tree") {
        Outcome::Overtaken
    } else if op == "compact" && (stderr.contains("Already compacted") || stderr.contains("Nothing to compact")) {
        Outcome::Declined
    } else {
        panic!("{op} refused for another reason: {stderr}")
    }
}

#[test]
fn pi_and_arbor_append_to_one_file_at_the_same_time() {
    if !pi::pi_or_skip("pi_and_arbor_append_to_one_file_at_the_same_time") {
        return;
    }
    let rounds: usize = std::env::var("ARBOR_CONCURRENT_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(150);
    let seed = rng::clock_seed();
    let mut rng = rng::Rng::new(seed);
    let dir: PathBuf = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("concurrent-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let root = dir.join("sessions");
    std::fs::create_dir_all(root.join("--p--")).unwrap();
    let file = root.join("--p--/2025-03-01T09-00-00-000Z_concurrent.jsonl");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../session-engine/tests/fixtures/conformance/basic-tool-chain.jsonl"),
        &file,
    )
    .unwrap();
    let file = file.canonicalize().unwrap();
    let root = root.canonicalize().unwrap();
    let initial: Vec<String> = {
        let session = Session::open(&file).unwrap();
        (0..session.len()).map(|i| session.id(i).to_string()).collect()
    };
    let targets: Vec<String> = initial.iter().step_by(2).cloned().collect();
    let mut f = Figures { pi_rounds: rounds, ..Figures::default() };

    // The observer: Arbor's open view and the library index, following the file while it grows.
    let stop = Arc::new(AtomicBool::new(false));
    let observer = {
        let (file, root, stop, db) = (file.clone(), root.clone(), stop.clone(), dir.join("index.sqlite3"));
        std::thread::spawn(move || {
            let mut session = Session::open(&file).unwrap();
            let mut lib = library::Library::open(&db).unwrap();
            // Arbor may have appended already: the first pass reports every entry it found.
            let first = lib.sync_file(&file, Some(&root)).unwrap();
            let (mut calls, mut added, mut syncs, mut indexed, mut rereads) =
                (0usize, session.len(), 1usize, first.new_entries.len(), 0usize);
            loop {
                let last = stop.load(Ordering::SeqCst);
                match session.extend_from_file(&file).unwrap_or_else(|e| panic!("extend_from_file during the run: {e}"))
                {
                    Extend::Added(n) => added += n,
                    Extend::Reload => {
                        panic!("extend_from_file asked for a reload during the run: the file did not just grow")
                    }
                }
                calls += 1;
                assert!(
                    session.diagnostics().is_empty(),
                    "the open view saw a bad line during the run: {:?}",
                    session.diagnostics()
                );
                if calls % 20 == 0 || last {
                    let u =
                        lib.sync_file(&file, Some(&root)).unwrap_or_else(|e| panic!("index sync during the run: {e}"));
                    syncs += 1;
                    indexed += u.new_entries.len();
                    // A pass that met a line still being written (a torn tail) re-reads the file on
                    // the next pass and reports its entries again.
                    rereads += usize::from(u.change == library::Change::Reindexed);
                    assert_eq!(u.reason, None, "the index re-read the growing file");
                }
                if last {
                    break;
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            (session, lib, calls, added, syncs, indexed, rereads)
        })
    };

    // Pi, in its own process for the whole run.
    let started = Instant::now();
    let pi_child = Command::new("node")
        .arg(pi::repo_root().join("tests/pi/pi-check.mjs"))
        .args(["append-loop"])
        .arg(&file)
        .args(["--rounds", &rounds.to_string(), "--sleep-ms", "6", "--tag", "pi-concurrent"])
        .env_remove("PI_CODING_AGENT_DIR")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cannot run node");
    let pi_out = {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || tx.send(pi_child.wait_with_output()).unwrap());
        // Arbor appends until Pi is done.
        let mut acked: Vec<(String, &'static str, String)> = Vec::new();
        let mut i = 0usize;
        let out = loop {
            if let Ok(o) = rx.try_recv() {
                break o.unwrap();
            }
            assert!(started.elapsed() < Duration::from_secs(60), "Pi's append loop did not finish within 60 s");
            let compact = rng.below(6) == 0;
            let text = format!("arbor {i} ✓ \"concurrent\"");
            let target = &targets[rng.below(targets.len() as u64) as usize];
            let (op, o) = if compact {
                (
                    "compact",
                    arbor(&dir)
                        .arg("compact")
                        .arg(&file)
                        .args(["--provider", "offline", "--keep-recent-tokens", "400"])
                        .output()
                        .unwrap(),
                )
            } else {
                (
                    "label",
                    arbor(&dir)
                        .arg("label")
                        .arg(&file)
                        .args(["--entry", target, "--text", &text, "--json"])
                        .output()
                        .unwrap(),
                )
            };
            f.arbor_runs += 1;
            match classify(op, &o) {
                Outcome::Acked(id) => {
                    if op == "label" {
                        f.labels_acked += 1;
                    } else {
                        f.compactions_acked += 1;
                    }
                    acked.push((id, op, if op == "label" { text } else { String::new() }));
                }
                Outcome::Refused => f.refused_changed += 1,
                Outcome::Overtaken => f.overtaken += 1,
                Outcome::Declined => f.declined += 1,
            }
            i += 1;
            std::thread::sleep(Duration::from_micros(rng.below(3000)));
        };
        (out, acked)
    };
    let (pi_out, acked) = pi_out;
    let run_time = started.elapsed();
    assert!(pi_out.status.success(), "Pi's append loop failed: {}", String::from_utf8_lossy(&pi_out.stderr));
    stop.store(true, Ordering::SeqCst);
    let (view, lib, calls, added, syncs, indexed, rereads) = observer.join().unwrap();
    (f.extend_calls, f.extend_added, f.index_syncs, f.index_new_entries, f.index_rereads) =
        (calls, added, syncs, indexed, rereads);

    // Pi's own record of what it wrote.
    let pv: serde_json::Value = serde_json::from_slice(&pi_out.stdout).expect("pi-check append-loop prints JSON");
    let pi_written: Vec<(String, Option<String>)> = pv["ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["id"].as_str().unwrap().to_string(), e["parentId"].as_str().map(str::to_string)))
        .collect();
    f.pi_entries = pi_written.len();
    assert_eq!(pi_written.len(), f.pi_rounds * 2);

    // 1. No torn or interleaved line: every line is one whole JSON entry, the file ends in "\n".
    let bytes = std::fs::read(&file).unwrap();
    assert_eq!(bytes.last(), Some(&b'\n'), "the file ends in the middle of a line");
    let text = String::from_utf8(bytes).expect("the file is UTF-8");
    let lines: Vec<serde_json::Value> = text
        .lines()
        .enumerate()
        .map(|(n, l)| {
            serde_json::from_str(l).unwrap_or_else(|e| panic!("line {} does not parse ({e}): {l:.200}", n + 1))
        })
        .collect();
    let ids: Vec<String> =
        lines[1..].iter().map(|v| v["id"].as_str().expect("every entry line has an id").to_string()).collect();
    let parents: Vec<Option<String>> = lines[1..].iter().map(|v| v["parentId"].as_str().map(str::to_string)).collect();
    assert_eq!(ids.iter().collect::<HashSet<_>>().len(), ids.len(), "an id repeats");
    let pos: HashMap<&str, usize> = ids.iter().enumerate().map(|(i, id)| (id.as_str(), i)).collect();

    // 2. Both writers' entries are all there, whole.
    for (id, parent) in &pi_written {
        let i = *pos.get(id.as_str()).unwrap_or_else(|| panic!("Pi's entry {id} is missing"));
        assert_eq!(&parents[i], parent, "Pi's entry {id} has another parent in the file than Pi wrote");
        if i > 0 && parent.as_deref() != Some(ids[i - 1].as_str()) {
            f.pi_past_arbor += 1;
            // Pi parents to its own previous entry; what came in between is Arbor's.
            assert!(
                !pi_written.iter().any(|(p, _)| p == &ids[i - 1]),
                "Pi's {id} skipped over Pi's own {}",
                ids[i - 1]
            );
        }
    }
    for (id, op, label) in &acked {
        let i = *pos.get(id.as_str()).unwrap_or_else(|| panic!("Arbor's acknowledged {op} {id} is missing"));
        let v = &lines[i + 1];
        assert_eq!(v["type"], if *op == "label" { "label" } else { "compaction" }, "{id}");
        if *op == "label" {
            assert_eq!(v["label"].as_str(), Some(label.as_str()), "{id}");
        }
        // 3. Never on a stale leaf: the parent is the entry on the line before, the file's leaf
        // when Arbor wrote.
        assert!(i > 0);
        assert_eq!(parents[i].as_deref(), Some(ids[i - 1].as_str()), "Arbor's {op} {id} was written on a stale leaf");
        if pi_written.iter().any(|(p, _)| p == &ids[i - 1]) {
            f.arbor_on_pi_entry += 1;
        }
    }
    // Nothing else was written: the refusals wrote nothing; an overtaken write is the only kind
    // of Arbor line not acknowledged, and the only one whose parent is not the line before it.
    let known: HashSet<&str> = initial
        .iter()
        .chain(pi_written.iter().map(|(id, _)| id))
        .chain(acked.iter().map(|(id, _, _)| id))
        .map(String::as_str)
        .collect();
    let unacked: Vec<usize> = (0..ids.len()).filter(|&i| !known.contains(ids[i].as_str())).collect();
    assert_eq!(
        unacked.len(),
        f.overtaken,
        "Arbor lines in the file that no run acknowledged or reported: {:?}",
        unacked.iter().map(|&i| &ids[i]).collect::<Vec<_>>()
    );
    for &i in &unacked {
        assert_ne!(
            parents[i].as_deref(),
            Some(ids[i - 1].as_str()),
            "an overtaken write that was not overtaken: {}",
            ids[i]
        );
    }
    assert_eq!(ids.len(), initial.len() + pi_written.len() + acked.len() + f.overtaken);

    // 4. Pi loads it with no skipped line and computes what Arbor computes.
    let pi_view = pi::assert_pi_agrees(&file, None);
    assert_eq!(pi_view.entries, ids.len());
    assert_eq!(pi_view.leaf_id.as_deref(), ids.last().map(String::as_str), "the file's leaf is its last entry");

    // 5. The open view followed every append; so did the index.
    let fresh = Session::open(&file).unwrap();
    assert_eq!(view.len(), fresh.len(), "the open view has {} entries, the file {}", view.len(), fresh.len());
    assert!((0..fresh.len()).all(|i| view.id(i) == fresh.id(i)), "the open view's entries differ from a fresh load");
    assert_eq!(view.file_leaf().map(|i| view.id(i)), fresh.file_leaf().map(|i| fresh.id(i)));
    assert_eq!(
        f.extend_added,
        ids.len(),
        "the open view's first load and extend_from_file's counts do not add up to the file's entries"
    );
    assert!(f.extend_calls > 10, "the open view was refreshed only {} times", f.extend_calls);
    let statuses = lib.entry_statuses(&file).unwrap();
    let indexed_ids: Vec<&str> = statuses.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(
        indexed_ids,
        ids.iter().map(String::as_str).collect::<Vec<_>>(),
        "the index does not hold the file's entries in file order"
    );
    if f.index_rereads == 0 {
        assert_eq!(f.index_new_entries, ids.len(), "the index passes did not report every entry once");
    } else {
        assert!(f.index_new_entries >= ids.len(), "the index passes missed entries: {f:?}");
    }
    assert!(f.index_syncs > 2);
    let hits = lib.search(&library::SearchQuery::new(&format!("pi-concurrent reply {}", rounds - 1))).unwrap();
    assert!(hits.iter().any(|h| h.entry_id == pi_written.last().unwrap().0), "the index does not find Pi's last reply");

    // 6. The race was real: Arbor saw the file move under it and refused.
    assert!(
        f.arbor_on_pi_entry > 0,
        "no Arbor entry was written on one of Pi's: the writers did not interleave; {f:?}"
    );
    assert!(f.pi_past_arbor > 0, "Pi never wrote after an Arbor entry; {f:?}");
    assert!(
        f.refused_changed > 0,
        "Arbor never had to refuse: the race between planning and writing did not happen; {f:?}"
    );
    eprintln!("concurrent: {f:?}; {:.1} s, seed {seed}", run_time.as_secs_f64());
}

/// Labels while Pi appends every 3 ms: a label means the same whatever the leaf, so
/// `arbor-cli label` plans again on the grown file instead of refusing. At least 95 % of the
/// labels must land, none lost (each acknowledged label is in the file, on the file's leaf of
/// its moment), no torn line, and Pi reads the file as Arbor does.
#[test]
fn labels_land_while_pi_appends_every_3_ms() {
    if !pi::pi_or_skip("labels_land_while_pi_appends_every_3_ms") {
        return;
    }
    let rounds: usize = std::env::var("ARBOR_CONCURRENT_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(300);
    let dir: PathBuf = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("labels-under-pi-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("2025-03-01T09-00-00-000Z_labels.jsonl");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../session-engine/tests/fixtures/conformance/basic-tool-chain.jsonl"),
        &file,
    )
    .unwrap();
    let targets: Vec<String> = {
        let session = Session::open(&file).unwrap();
        (0..session.len()).map(|i| session.id(i).to_string()).collect()
    };
    let started = Instant::now();
    let pi_child = Command::new("node")
        .arg(pi::repo_root().join("tests/pi/pi-check.mjs"))
        .arg("append-loop")
        .arg(&file)
        .args(["--rounds", &rounds.to_string(), "--every-ms", "3", "--tag", "pi-steady"])
        .env_remove("PI_CODING_AGENT_DIR")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cannot run node");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(pi_child.wait_with_output()).unwrap());
    let (mut runs, mut refused, mut overtaken, mut while_pi) = (0usize, 0usize, 0usize, 0usize);
    let mut acked: Vec<(String, String)> = Vec::new();
    let pi_out = loop {
        let pi_done = rx.try_recv().ok();
        assert!(started.elapsed() < Duration::from_secs(120), "Pi's append loop did not finish within 120 s");
        let text = format!("steady {runs}");
        let o = arbor(&dir)
            .arg("label")
            .arg(&file)
            .args(["--entry", &targets[runs % targets.len()], "--text", &text, "--json"])
            .output()
            .unwrap();
        runs += 1;
        while_pi += usize::from(pi_done.is_none());
        match classify("label", &o) {
            Outcome::Acked(id) => acked.push((id, text)),
            Outcome::Refused => refused += 1,
            Outcome::Overtaken => overtaken += 1,
            Outcome::Declined => panic!("a label is never declined"),
        }
        if let Some(o) = pi_done {
            break o.unwrap();
        }
    };
    assert!(pi_out.status.success(), "Pi's append loop failed: {}", String::from_utf8_lossy(&pi_out.stderr));
    let pv: serde_json::Value = serde_json::from_slice(&pi_out.stdout).unwrap();
    let pi_written: Vec<String> =
        pv["ids"].as_array().unwrap().iter().map(|e| e["id"].as_str().unwrap().to_string()).collect();
    assert_eq!(pi_written.len(), rounds * 2);

    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.ends_with('\n'));
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("a torn line ({e}): {l:.200}")))
        .collect();
    let ids: Vec<&str> = lines[1..].iter().map(|v| v["id"].as_str().unwrap()).collect();
    let pos: HashMap<&str, usize> = ids.iter().enumerate().map(|(i, id)| (*id, i)).collect();
    for id in &pi_written {
        assert!(pos.contains_key(id.as_str()), "Pi's entry {id} is missing");
    }
    let mut on_pi = 0;
    for (id, label) in &acked {
        let i = *pos.get(id.as_str()).unwrap_or_else(|| panic!("the acknowledged label {id} is missing"));
        let v = &lines[i + 1];
        assert_eq!((v["type"].as_str(), v["label"].as_str()), (Some("label"), Some(label.as_str())));
        assert_eq!(v["parentId"].as_str(), Some(ids[i - 1]), "label {id} on a stale leaf");
        on_pi += usize::from(pi_written.iter().any(|p| p == ids[i - 1]));
    }
    assert_eq!(ids.len(), targets.len() + pi_written.len() + acked.len() + overtaken, "lines nobody acknowledged");
    let pi_view = pi::assert_pi_agrees(&file, None);
    assert_eq!(pi_view.entries, ids.len());

    let landed = acked.len() as f64 / runs as f64;
    eprintln!(
        "labels under a steady Pi writer (every 3 ms, {} Pi entries): {} runs ({} while Pi wrote), {} landed ({:.1} %), {} refused, {} overtaken, {} on one of Pi's entries; {:.1} s",
        pi_written.len(),
        runs,
        while_pi,
        acked.len(),
        landed * 100.0,
        refused,
        overtaken,
        on_pi,
        started.elapsed().as_secs_f64()
    );
    assert!(while_pi >= 20, "too few labels ran while Pi wrote ({while_pi}) to measure anything");
    assert!(on_pi > 0, "no label was written on one of Pi's entries: the writers did not interleave");
    assert!(landed >= 0.95, "only {:.1} % of the labels landed", landed * 100.0);
}
