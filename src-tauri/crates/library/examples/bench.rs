//! Benchmarks for the library crate. Build with `--release`; run each under `/usr/bin/time -v`
//! to get the peak RSS. Data comes from the repository's `scripts/gen-sessions.mjs` (see
//! docs/PERFORMANCE.md).
//!
//! ```text
//! cargo run --release -p library --example bench -- index DIR DB [catalog]  # from scratch (DB deleted first); `catalog`: phase 1 only
//! cargo run --release -p library --example bench -- resync DIR DB       # up-to-date pass (nothing changed)
//! cargo run --release -p library --example bench -- append FILE DB [branch]  # full index of FILE, then +1 entry (at the leaf, or off the first entry) and re-index
//! cargo run --release -p library --example bench -- append-many FILE DB N     # +N chained entries at the leaf and re-index
//! cargo run --release -p library --example bench -- links DIR OUT N     # N hard-linked copies of DIR's files under OUT/c<i>/
//! cargo run --release -p library --example bench -- query DB RUNS Q...  # median / max time per query
//! cargo run --release -p library --example bench -- fts-floor DB OUT     # DB's full-text bodies into a bare FTS5 table (phase 2's floor)
//! cargo run --release -p library --example bench -- fts-ratio DIR SCRATCH ROUNDS   # phase 2 against fts-floor, interleaved (target: at most 1.2x)
//! cargo run --release -p library --example bench -- phase2 DIR DB       # phase 1, then phase 2 alone with its CPU (to profile the writer)
//! cargo run --release -p library --example bench -- list-vs-pi DIR SCRATCH ROUNDS  # the picker's listing against Pi's SessionManager.list (target: 10x faster)
//! ```
//!
//! The two performance targets (phase 2 costs at most 1.2x a bare FTS5 insert of the same text;
//! the picker lists 10x faster than Pi's own listing), re-run with one command each (scratch
//! outside the repo; the sessions are read only):
//!
//! ```text
//! CARGO_TARGET_DIR=... cargo build --release -p library --example bench
//! B=$CARGO_TARGET_DIR/release/examples/bench
//! # data (seed 42: /tmp/bench-data/s1k.jsonl, s10k.jsonl, /tmp/bench100k/agent/sessions/--p--/s100k.jsonl)
//! mkdir -p /tmp/libbench/set /tmp/libbench/list/--p--
//! for f in /tmp/bench-data/s1k.jsonl /tmp/bench-data/s10k.jsonl /tmp/bench100k/agent/sessions/--p--/s100k.jsonl; do
//!   ln -sf $f /tmp/libbench/set/; ln -sf $f /tmp/libbench/list/--p--/; done
//! node scripts/gen-sessions.mjs --many 40 --min-entries 20 --max-entries 500 --seed 11 --dir /tmp/libbench/list/--p--
//! rm -f /tmp/libbench/list/--p--/*.meta.json
//! # the two measurements (5 interleaved rounds each; each line also prints the load average)
//! $B fts-ratio /tmp/libbench/set /tmp/libbench 5
//! PI_DIR=/work/main/tests/pi SHARED_BENCH=/work/shared/bench $B list-vs-pi /tmp/libbench/list /tmp/libbench 5
//! ```
//!
//! `fts-ratio`: each round indexes DIR's catalog (phase 1), then times phase 2 alone (entry rows,
//! statuses, text extraction, full-text inserts and their commits: `complete_fulltext`), and
//! `fts-floor` on exactly the rows that pass wrote (same text, rowids, table definition from the
//! index's schema, same pragmas, one transaction), alternating which goes first; it reports wall
//! time and CPU (the process, and phase 2's writer thread: the critical path when a core is free
//! for the reader thread; on a loaded machine the wall ratio follows the process CPU). `list-vs-pi`:
//! each round Pi's `SessionManager.list` on DIR's one folder of sessions (`pi-bench-op.mjs list`,
//! import excluded), Arbor's cold first scan (index created, phase 1, then the listing: what the
//! picker waits for the first time) and the warm listing (the app's `library_listing` reads on an
//! open index: projects, sessions of the roots, models).
use library::{Library, SearchQuery, SessionFilter};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

fn wipe(db: &Path) {
    for ext in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{ext}", db.display()));
    }
}

fn dir_bytes(dir: &Path) -> u64 {
    library::roots::scan(dir).iter().filter_map(|p| std::fs::metadata(p).ok()).map(|m| m.len()).sum()
}

/// `fts-floor`: the full-text rows of index `src` into a bare FTS5 table in `out`, created with
/// the index's own definition and hash size, under the index's pragmas, in one transaction.
/// (rows, MB of text, ms, CPU s)
fn fts_floor(src: &Path, out: &Path) -> (usize, f64, f64, f64) {
    let def: String = rusqlite::Connection::open(src)
        .unwrap()
        .query_row("SELECT sql FROM sqlite_master WHERE name = 'fts'", [], |r| r.get(0))
        .unwrap();
    // the index keeps no copy of its text: read it again from the sessions, as a search does
    let bodies: Vec<(i64, String)> = Library::open(src)
        .unwrap()
        .indexed_texts()
        .unwrap()
        .into_iter()
        .map(|(r, b)| (r, b.expect("a session changed since it was indexed")))
        .collect();
    let mb = bodies.iter().map(|b| b.1.len()).sum::<usize>() as f64 / 1e6;
    wipe(out);
    let (t, cpu) = (Instant::now(), cpu_s("self"));
    let c = rusqlite::Connection::open(out).unwrap();
    let _: String = c.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0)).unwrap();
    c.execute_batch(&format!(
        "PRAGMA synchronous=NORMAL; PRAGMA temp_store=MEMORY; PRAGMA cache_size=-16000; {def};
         INSERT INTO fts(fts, rank) VALUES('hashsize', 16777216); BEGIN IMMEDIATE;"
    ))
    .unwrap();
    {
        let mut ins = c.prepare("INSERT INTO fts(rowid, body) VALUES (?1, ?2)").unwrap();
        for (r, b) in &bodies {
            ins.execute(rusqlite::params![r, b]).unwrap();
        }
    }
    c.execute_batch("COMMIT").unwrap();
    drop(c);
    let (took, cpu) = (ms(t), cpu_s("self") - cpu);
    wipe(out);
    (bodies.len(), mb, took, cpu)
}

/// The library calls of the app's picker (`commands/library.rs` `listing`): projects, the
/// sessions under the roots (newest first, 500), and the models (5000 sessions). Returns the
/// number of sessions listed.
fn listing(lib: &Library, root: &Path) -> usize {
    let projects = lib.projects().unwrap();
    let sessions = lib
        .sessions(&SessionFilter { limit: Some(500), roots: vec![root.to_path_buf()], ..Default::default() })
        .unwrap();
    let mut models: Vec<String> = lib
        .sessions(&SessionFilter { limit: Some(5000), ..Default::default() })
        .unwrap()
        .into_iter()
        .filter_map(|s| s.model)
        .collect();
    models.sort();
    models.dedup();
    assert!(!projects.is_empty() || sessions.is_empty());
    sessions.len()
}

/// CPU seconds (user + system) of this process (`self`) or of the calling thread
/// (`thread-self`), from /proc (10 ms ticks); 0 where there is no /proc.
fn cpu_s(which: &str) -> f64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{which}/stat")) else { return 0.0 };
    let f: Vec<&str> = stat[stat.rfind(')').map_or(0, |i| i + 2)..].split_whitespace().collect();
    (f[11].parse::<f64>().unwrap_or(0.0) + f[12].parse::<f64>().unwrap_or(0.0)) / 100.0
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let Some(cmd) = a.first() else {
        eprintln!("usage: bench index|resync|append|links|query ...");
        std::process::exit(2);
    };
    match cmd.as_str() {
        "index" | "resync" => {
            let dir = PathBuf::from(&a[1]);
            let db = PathBuf::from(&a[2]);
            if cmd == "index" {
                wipe(&db);
            }
            let t = Instant::now();
            let mut lib = Library::open(&db).unwrap();
            let mut opts = library::SyncOptions {
                full_text: a.get(3).map(String::as_str) != Some("catalog"),
                ..Default::default()
            };
            if let Some(t) = std::env::var("BENCH_THREADS").ok().and_then(|t| t.parse().ok()) {
                opts.threads = t;
            }
            let rep = lib.sync_roots_with(std::slice::from_ref(&dir), opts, &mut |_| {}).unwrap();
            let took = ms(t);
            println!(
                "phases: catalog (phase 1) {:.0} ms, full text (phase 2) {:.0} ms",
                rep.catalog_ms, rep.fulltext_ms
            );
            let t2 = Instant::now();
            let n = lib.sessions(&SessionFilter::default()).unwrap().len();
            let list_ms = ms(t2);
            let mb = dir_bytes(&dir) as f64 / 1e6;
            println!(
                "{cmd}: {} files, {:.1} MB on disk, {:.1} MB read, {:.0} ms ({:.0} MB/s); new {} unchanged {}; then listing {n} sessions from the index: {:.1} ms; index file {:.1} MB",
                rep.files,
                mb,
                rep.bytes_read as f64 / 1e6,
                took,
                rep.bytes_read as f64 / 1e3 / took.max(0.001),
                rep.new,
                rep.unchanged,
                list_ms,
                std::fs::metadata(&db).map(|m| m.len()).unwrap_or(0) as f64 / 1e6
            );
        }
        "append" => {
            let file = PathBuf::from(&a[1]);
            let db = PathBuf::from(&a[2]);
            let mut lib = Library::open(&db).unwrap();
            let t = Instant::now();
            let u = lib.sync_file(&file, None).unwrap();
            println!(
                "first pass over {} ({:.1} MB): {:?}, {:.1} MB read, {:.0} ms",
                file.display(),
                std::fs::metadata(&file).unwrap().len() as f64 / 1e6,
                u.change,
                u.bytes_read as f64 / 1e6,
                ms(t)
            );
            let mut leaf = lib.session(&file).unwrap().unwrap().leaf_id.unwrap();
            if a.get(3).map(String::as_str) == Some("branch") {
                // continue from the first entry instead: the leaf moves to another branch and
                // every status of the session is recomputed (from the index, not the file)
                leaf = lib.entry_statuses(&file).unwrap()[0].0.clone();
            }
            let id = format!("{:08x}", std::process::id() ^ (Instant::now().elapsed().as_nanos() as u32));
            let line = format!(
                "{{\"type\":\"message\",\"id\":\"{id}\",\"parentId\":\"{leaf}\",\"timestamp\":\"2026-02-01T00:00:00.000Z\",\"message\":{{\"role\":\"user\",\"content\":[{{\"type\":\"text\",\"text\":\"bench append marker {id}\"}}],\"timestamp\":1769904000000}}}}\n"
            );
            std::fs::OpenOptions::new().append(true).open(&file).unwrap().write_all(line.as_bytes()).unwrap();
            let t = Instant::now();
            let u = lib.sync_file(&file, None).unwrap();
            let took = ms(t);
            println!(
                "append of one entry ({} bytes) to a {:.1} MB file: {:?}, {} bytes read, {} new entries ({}), re-index {:.2} ms",
                line.len(),
                std::fs::metadata(&file).unwrap().len() as f64 / 1e6,
                u.change,
                u.bytes_read,
                u.new_entries.len(),
                u.new_entries.first().map(|e| e.status.name()).unwrap_or("-"),
                took
            );
            let t = Instant::now();
            let h = lib.search(&SearchQuery::new(&format!("marker {id}"))).unwrap();
            println!("the new entry is searchable: {} hit(s) in {:.2} ms", h.len(), ms(t));
        }
        "parse" => {
            // single thread, no SQLite: engine load, then the phase-1 facts (the floor of phase 1)
            let dir = PathBuf::from(&a[1]);
            let (mut entries, mut bytes, mut load_ms, mut cat_ms, mut read_ms) = (0usize, 0u64, 0.0, 0.0, 0.0);
            for f in library::roots::scan(&dir) {
                let t = Instant::now();
                let data = std::fs::read(&f).unwrap();
                read_ms += ms(t);
                bytes += data.len() as u64;
                let t = Instant::now();
                let l = library::analyze::load(data);
                load_ms += ms(t);
                let t = Instant::now();
                let c = library::analyze::catalog(&l);
                cat_ms += ms(t);
                entries += c.entry_count as usize;
            }
            println!("parse: {entries} entries, {:.1} MB: read {read_ms:.0} ms, engine load {load_ms:.0} ms, catalog facts {cat_ms:.0} ms", bytes as f64 / 1e6);
        }
        "scan" => {
            // the engine's two line validators over every line (single thread)
            let dir = PathBuf::from(&a[1]);
            let data: Vec<Vec<u8>> = library::roots::scan(&dir).iter().map(|f| std::fs::read(f).unwrap()).collect();
            let t = Instant::now();
            let mut n = 0;
            for d in &data {
                n += session_engine::Session::from_bytes(d.clone()).len();
            }
            println!("Session::from_bytes (incl. a copy): {n} entries, {:.0} ms", ms(t));
            let t = Instant::now();
            let mut n = 0;
            for d in &data {
                let c = d.clone();
                n += session_engine::chunk::scan(&c, true).entries.len();
            }
            println!("chunk::scan (incl. a copy): {n} entries, {:.0} ms", ms(t));
            for which in ["scan_line_fast (serde)", "scan_line (exact)"] {
                let t = Instant::now();
                let mut ok = 0;
                for d in &data {
                    for l in d.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
                        let r = if which.starts_with("scan_line_fast") {
                            pi_json::scan_line_fast(l)
                        } else {
                            pi_json::scan_line(l)
                        };
                        ok += r.is_ok() as usize;
                    }
                }
                println!("{which}: {ok} lines, {:.0} ms", ms(t));
            }
        }
        "bodies" => {
            // phase-2 facts without SQLite (single thread): entry facts and full-text bodies
            let dir = PathBuf::from(&a[1]);
            let t = Instant::now();
            let (mut n, mut body) = (0usize, 0usize);
            for f in library::roots::scan(&dir) {
                let l = library::analyze::load(std::fs::read(&f).unwrap());
                for i in 0..l.s.len() {
                    let v = pi_json::parse_bytes(&l.s.raw(i)).unwrap_or_default();
                    let e = library::analyze::entry_facts(l.s.kind(i), &v);
                    body += e.body.len();
                    n += 1;
                }
            }
            println!("bodies: {n} entries, {:.1} MB of text, {:.0} ms", body as f64 / 1e6, ms(t));
        }
        "fts-floor" => {
            // The floor of phase 2 with FTS5: insert exactly the bodies an index holds into a
            // fresh FTS5 table (same definition, hash size and pragmas, WAL, one transaction),
            // with nothing else: no JSON, no entry rows, no statuses. Bodies are read into memory first.
            let (rows, mb, took, cpu) = fts_floor(Path::new(&a[1]), Path::new(&a[2]));
            println!("fts-floor: {rows} rows, {mb:.1} MB of text into FTS5 alone: {took:.0} ms ({cpu:.2} s CPU)");
        }
        "phase2" => {
            // phase 1, then phase 2 alone (for a profiler: `perf record -g` on this, then
            // `perf report --tid <pid>` for the writer thread)
            let (dir, db) = (PathBuf::from(&a[1]), PathBuf::from(&a[2]));
            wipe(&db);
            let mut lib = Library::open(&db).unwrap();
            lib.sync_roots_with(
                std::slice::from_ref(&dir),
                library::SyncOptions { full_text: false, ..Default::default() },
                &mut |_| {},
            )
            .unwrap();
            let (t, cpu, cpu_w) = (Instant::now(), cpu_s("self"), cpu_s("thread-self"));
            let files = lib.complete_fulltext().unwrap();
            println!(
                "phase 2 ({files} files): {:.0} ms, CPU {:.2} s ({:.2} s on the writer thread)",
                ms(t),
                cpu_s("self") - cpu,
                cpu_s("thread-self") - cpu_w
            );
        }
        "fts-ratio" => {
            let dir = PathBuf::from(&a[1]);
            let scratch = PathBuf::from(&a[2]);
            let rounds: usize = a.get(3).and_then(|r| r.parse().ok()).unwrap_or(5);
            let (db, floor_db) = (scratch.join("ratio.sqlite3"), scratch.join("ratio-floor.sqlite3"));
            let (mut ratios, mut cpu_ratios) = (Vec::new(), Vec::new());
            let mut have_db = false;
            for round in 1..=rounds {
                let floor_first = round % 2 == 0 && have_db;
                let mut floor = None;
                if floor_first {
                    floor = Some(fts_floor(&db, &floor_db));
                }
                let load = loadavg();
                wipe(&db);
                let mut lib = Library::open(&db).unwrap();
                let cat = lib
                    .sync_roots_with(
                        std::slice::from_ref(&dir),
                        library::SyncOptions { full_text: false, ..Default::default() },
                        &mut |_| {},
                    )
                    .unwrap();
                let (t, cpu, cpu_w) = (Instant::now(), cpu_s("self"), cpu_s("thread-self"));
                let files = lib.complete_fulltext().unwrap();
                let (phase2, cpu, cpu_w) = (ms(t), cpu_s("self") - cpu, cpu_s("thread-self") - cpu_w);
                drop(lib);
                have_db = true;
                let (rows, mb, floor_ms, floor_cpu) = floor.unwrap_or_else(|| fts_floor(&db, &floor_db));
                let ratio = phase2 / floor_ms;
                ratios.push(ratio);
                cpu_ratios.push(cpu_w / floor_cpu);
                println!(
                    "round {round}: phase 1 {:.0} ms; phase 2 ({files} files, {rows} text rows, {mb:.1} MB) {phase2:.0} ms, CPU {cpu:.2} s ({cpu_w:.2} s on the writer thread); fts-floor {floor_ms:.0} ms, CPU {floor_cpu:.2} s ({}); wall ratio {ratio:.2}x, writer CPU ratio {:.2}x; load {load}",
                    cat.catalog_ms,
                    if floor_first { "ran first" } else { "ran second" },
                    cpu_w / floor_cpu
                );
            }
            for v in [&mut ratios, &mut cpu_ratios] {
                v.sort_by(|x, y| x.partial_cmp(y).unwrap());
            }
            println!(
                "phase 2 / fts-floor over {rounds} rounds (target <= 1.2x): wall median {:.2}x (min {:.2}x, max {:.2}x); writer-thread CPU median {:.2}x (min {:.2}x, max {:.2}x)",
                ratios[rounds / 2],
                ratios[0],
                ratios[rounds - 1],
                cpu_ratios[rounds / 2],
                cpu_ratios[0],
                cpu_ratios[rounds - 1]
            );
            wipe(&db);
        }
        "list-vs-pi" => {
            let dir = PathBuf::from(&a[1]);
            let scratch = PathBuf::from(&a[2]);
            let rounds: usize = a.get(3).and_then(|r| r.parse().ok()).unwrap_or(5);
            let shared = std::env::var("SHARED_BENCH").expect("set SHARED_BENCH to the folder of pi-bench-op.mjs");
            std::env::var("PI_DIR").expect("set PI_DIR to the folder with node_modules/@mariozechner/pi-coding-agent");
            // Pi lists one folder (not recursive): the folder holding DIR's sessions
            let folders: std::collections::BTreeSet<PathBuf> =
                library::roots::scan(&dir).iter().filter_map(|p| p.parent().map(Path::to_path_buf)).collect();
            assert!(folders.len() == 1, "DIR must hold its sessions in one folder (Pi's list reads one): {folders:?}");
            let pi_folder = folders.into_iter().next().unwrap();
            let db = scratch.join("list.sqlite3");
            let (mut cold_r, mut warm_r) = (Vec::new(), Vec::new());
            for round in 1..=rounds {
                let load = loadavg();
                let pi = || {
                    let out = std::process::Command::new("node")
                        .arg(format!("{shared}/pi-bench-op.mjs"))
                        .arg("list")
                        .arg(&pi_folder)
                        .output()
                        .unwrap();
                    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
                        .unwrap_or_else(|_| panic!("pi-bench-op: {}", String::from_utf8_lossy(&out.stderr)));
                    (v["ms"].as_f64().unwrap(), v["sessions"].as_u64().unwrap())
                };
                let cold = || {
                    wipe(&db);
                    let t = Instant::now();
                    let mut lib = Library::open(&db).unwrap();
                    lib.sync_roots_with(
                        std::slice::from_ref(&dir),
                        library::SyncOptions { full_text: false, ..Default::default() },
                        &mut |_| {},
                    )
                    .unwrap();
                    let n = listing(&lib, &dir);
                    (ms(t), n)
                };
                // Pi first on odd rounds, Arbor first on even ones
                let ((pi_ms, pi_n), (cold_ms, cold_n)) = if round % 2 == 1 {
                    let p = pi();
                    (p, cold())
                } else {
                    let c = cold();
                    (pi(), c)
                };
                assert_eq!(pi_n as usize, cold_n, "Pi lists {pi_n} sessions, Arbor {cold_n}");
                // warm: the index of the cold pass, opened as the app opens it, listed 5 times
                let lib = Library::open(&db).unwrap();
                let mut warm = Vec::new();
                for _ in 0..5 {
                    let t = Instant::now();
                    listing(&lib, &dir);
                    warm.push(ms(t));
                }
                warm.sort_by(|x, y| x.partial_cmp(y).unwrap());
                let warm_ms = warm[2];
                cold_r.push(pi_ms / cold_ms);
                warm_r.push(pi_ms / warm_ms);
                println!(
                    "round {round}: Pi list {pi_ms:.0} ms ({pi_n} sessions); Arbor cold first scan (open + phase 1 + listing) {cold_ms:.0} ms = {:.1}x faster; warm listing {warm_ms:.2} ms = {:.0}x faster; load {load}",
                    pi_ms / cold_ms,
                    pi_ms / warm_ms
                );
            }
            for v in [&mut cold_r, &mut warm_r] {
                v.sort_by(|x, y| x.partial_cmp(y).unwrap());
            }
            println!(
                "Pi / Arbor over {rounds} rounds (target >= 10x): cold first scan median {:.1}x (min {:.1}x); warm listing median {:.0}x (min {:.0}x)",
                cold_r[rounds / 2],
                cold_r[0],
                warm_r[rounds / 2],
                warm_r[0]
            );
            wipe(&db);
        }
        "dump" => {
            // the session rows as JSON (path, id, cwd, name, created, modified, messages, first message)
            let lib = Library::open(&PathBuf::from(&a[1])).unwrap();
            let rows: Vec<serde_json::Value> = lib
                .sessions(&SessionFilter::default())
                .unwrap()
                .into_iter()
                .map(|s| {
                    serde_json::json!({"path": s.path, "id": s.session_id, "cwd": s.cwd, "name": s.name, "created": s.created_ms,
                        "modified": s.modified_ms, "messageCount": s.message_count, "firstMessage": s.first_message})
                })
                .collect();
            println!("{}", serde_json::Value::Array(rows));
        }
        "append-many" => {
            // append N new entries (a linear chain at the leaf, ~2.6 KB each) and re-index
            let file = PathBuf::from(&a[1]);
            let db = PathBuf::from(&a[2]);
            let n: usize = a[3].parse().unwrap();
            let mut lib = Library::open(&db).unwrap();
            lib.sync_file(&file, None).unwrap();
            let mut parent = lib.session(&file).unwrap().unwrap().leaf_id.unwrap();
            let tag = format!("{:x}", std::process::id());
            let mut text = String::new();
            for i in 0..n {
                let id = format!("{tag}{i:08x}");
                let words = "the parser keeps the byte offset of every line ".repeat(54);
                text.push_str(&format!(
                    "{{\"type\":\"message\",\"id\":\"{id}\",\"parentId\":\"{parent}\",\"timestamp\":\"2026-02-01T00:00:00.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"{words} {id}\",\"timestamp\":1769904000000}}}}\n"
                ));
                parent = id;
            }
            std::fs::OpenOptions::new().append(true).open(&file).unwrap().write_all(text.as_bytes()).unwrap();
            let t = Instant::now();
            let u = lib.sync_file(&file, None).unwrap();
            println!(
                "append of {n} entries ({:.1} KB) to a {:.1} MB file: {:?}, {} bytes read, re-index {:.2} ms",
                text.len() as f64 / 1e3,
                std::fs::metadata(&file).unwrap().len() as f64 / 1e6,
                u.change,
                u.bytes_read,
                ms(t)
            );
        }
        "links" => {
            let dir = PathBuf::from(&a[1]);
            let out = PathBuf::from(&a[2]);
            let n: usize = a[3].parse().unwrap();
            let files = library::roots::scan(&dir);
            for i in 0..n {
                let d = out.join(format!("c{i}"));
                std::fs::create_dir_all(&d).unwrap();
                for f in &files {
                    let to = d.join(f.file_name().unwrap());
                    if !to.exists() {
                        std::fs::hard_link(f, &to).unwrap_or_else(|_| {
                            std::fs::copy(f, &to).unwrap();
                        });
                    }
                }
            }
            println!("{} files x {n} under {}", files.len(), out.display());
        }
        "query" => {
            let db = PathBuf::from(&a[1]);
            let runs: usize = a[2].parse().unwrap();
            let lib =
                Library::open_with(&db, library::OpenOptions { quick_check: false, ..Default::default() }).unwrap();
            for q in &a[3..] {
                let mut times = Vec::new();
                let mut n = 0;
                for _ in 0..runs {
                    let t = Instant::now();
                    n = lib.search(&SearchQuery::new(q)).unwrap().len();
                    times.push(ms(t));
                }
                times.sort_by(|x, y| x.partial_cmp(y).unwrap());
                println!(
                    "query {q:?}: {n} hits (limit 50), median {:.2} ms, max {:.2} ms over {runs} runs",
                    times[times.len() / 2],
                    times[times.len() - 1]
                );
            }
        }
        _ => {
            eprintln!("unknown bench command {cmd}");
            std::process::exit(2);
        }
    }
}
