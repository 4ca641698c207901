//! Benchmarks for the library crate. Build with `--release`; run each under `/usr/bin/time -v`
//! to get the peak RSS. Data comes from `shared/bench/gen-sessions.mjs` (see README there).
//!
//! ```text
//! cargo run --release -p library --example bench -- index DIR DB [catalog]  # from scratch (DB deleted first); `catalog`: phase 1 only
//! cargo run --release -p library --example bench -- resync DIR DB       # up-to-date pass (nothing changed)
//! cargo run --release -p library --example bench -- append FILE DB [branch]  # full index of FILE, then +1 entry (at the leaf, or off the first entry) and re-index
//! cargo run --release -p library --example bench -- append-many FILE DB N     # +N chained entries at the leaf and re-index
//! cargo run --release -p library --example bench -- links DIR OUT N     # N hard-linked copies of DIR's files under OUT/c<i>/
//! cargo run --release -p library --example bench -- query DB RUNS Q...  # median / max time per query
//! cargo run --release -p library --example bench -- fts-floor DB OUT     # DB's full-text bodies into a bare FTS5 table (phase 2's floor)
//! ```
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
            let mut opts = library::SyncOptions { full_text: a.get(3).map(String::as_str) != Some("catalog"), ..Default::default() };
            if let Some(t) = std::env::var("BENCH_THREADS").ok().and_then(|t| t.parse().ok()) {
                opts.threads = t;
            }
            let rep = lib.sync_roots_with(std::slice::from_ref(&dir), opts, &mut |_| {}).unwrap();
            let took = ms(t);
            println!("phases: catalog (phase 1) {:.0} ms, full text (phase 2) {:.0} ms", rep.catalog_ms, rep.fulltext_ms);
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
                u.new_entries.first().map(|e| e.status).unwrap_or("-"),
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
                        let r = if which.starts_with("scan_line_fast") { session_engine::json::scan_line_fast(l) } else { session_engine::json::scan_line(l) };
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
                    let v = session_engine::json::parse_bytes(l.s.raw(i)).unwrap_or_default();
                    let e = library::analyze::entry_facts(l.s.kind(i), &v);
                    body += e.body.len();
                    n += 1;
                }
            }
            println!("bodies: {n} entries, {:.1} MB of text, {:.0} ms", body as f64 / 1e6, ms(t));
        }
        "fts-floor" => {
            // The floor of phase 2 with FTS5: insert exactly the bodies an index holds into a
            // fresh FTS5 table (same tokenizer and hash size, WAL, one transaction), with nothing
            // else: no JSON, no entry rows, no statuses. Bodies are read into memory first.
            let src = rusqlite::Connection::open(&a[1]).unwrap();
            let bodies: Vec<(i64, String)> =
                src.prepare("SELECT rowid, body FROM fts").unwrap().query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect();
            let mb = bodies.iter().map(|b| b.1.len()).sum::<usize>() as f64 / 1e6;
            let out = PathBuf::from(&a[2]);
            wipe(&out);
            let t = Instant::now();
            let c = rusqlite::Connection::open(&out).unwrap();
            c.execute_batch(
                "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;
                 CREATE VIRTUAL TABLE fts USING fts5(body, tokenize = 'unicode61 remove_diacritics 2');
                 INSERT INTO fts(fts, rank) VALUES('hashsize', 16777216); BEGIN IMMEDIATE;",
            )
            .unwrap();
            {
                let mut ins = c.prepare("INSERT INTO fts(rowid, body) VALUES (?1, ?2)").unwrap();
                for (r, b) in &bodies {
                    ins.execute(rusqlite::params![r, b]).unwrap();
                }
            }
            c.execute_batch("COMMIT").unwrap();
            println!("fts-floor: {} rows, {mb:.1} MB of text into FTS5 alone: {:.0} ms", bodies.len(), ms(t));
            drop(c);
            wipe(&out);
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
            let lib = Library::open_with(&db, library::OpenOptions { quick_check: false, ..Default::default() }).unwrap();
            for q in &a[3..] {
                let mut times = Vec::new();
                let mut n = 0;
                for _ in 0..runs {
                    let t = Instant::now();
                    n = lib.search(&SearchQuery::new(q)).unwrap().len();
                    times.push(ms(t));
                }
                times.sort_by(|x, y| x.partial_cmp(y).unwrap());
                println!("query {q:?}: {n} hits (limit 50), median {:.2} ms, max {:.2} ms over {runs} runs", times[times.len() / 2], times[times.len() - 1]);
            }
        }
        _ => {
            eprintln!("unknown bench command {cmd}");
            std::process::exit(2);
        }
    }
}
