//! One measurement of Arbor's engine per process, in the shape of Pi's `pi-bench-op.mjs`, so the
//! two can be compared op by op on the same files (see `bench/compare.py`).
//!
//!   engine_bench load FILE            open + tree (children index, roots) + leaf path
//!   engine_bench context FILE         open (untimed), then path + build_context for the leaf
//!   engine_bench compact FILE         open (untimed), then path + prepare_compaction + serialization
//!   engine_bench navigate FILE TARGET open (untimed), then collect + prepare + serialize + context at TARGET
//!   engine_bench append FILE N        append N message lines one by one (p50/p99/max in µs)
//!   engine_bench follow FILE N        open (untimed), keep a clone alive, then read N appended
//!                                     messages one by one with extend_from_file (µs); writes FILE
//!
//! Prints one JSON line: {"op", "ms", ...}. Peak RSS is measured from outside (/usr/bin/time).
//! For profiling: `ARBOR_BENCH_WARM=N` repeats the context build (context), the compaction's
//! path, preparation and serialization (compact) or the branch preparation (navigate) N more
//! times, untimed in the JSON line; `ARBOR_BENCH_SPLIT=1` prints navigate's parts on stderr, with
//! the page faults each took (on Linux; a fresh process's parses are bound by them).
use session_engine::{branch, compaction, context, entries, store, Session};
use std::path::Path;
use std::time::Instant;

fn ms(t: Instant) -> f64 {
    (t.elapsed().as_secs_f64() * 1e6).round() / 1e3
}

/// This process's minor page faults so far (Linux; 0 elsewhere).
fn minflt() -> u64 {
    let s = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    s.rsplit(')').next().and_then(|r| r.split_whitespace().nth(7)).and_then(|v| v.parse().ok()).unwrap_or(0)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: engine_bench load|context|compact|navigate|append|follow FILE [TARGET|N]");
        std::process::exit(2);
    }
    let (op, file) = (args[1].as_str(), Path::new(&args[2]));
    let out = match op {
        "load" => {
            let t = Instant::now();
            let session = Session::open(file).expect("open");
            let roots = session.roots().len();
            let path = session.path(session.file_leaf());
            format!(
                "{{\"op\":\"load\",\"ms\":{},\"entries\":{},\"roots\":{roots},\"pathLength\":{},\"diagnostics\":{}}}",
                ms(t),
                session.len(),
                path.len(),
                session.diagnostics().len()
            )
        }
        "context" => {
            let session = Session::open(file).expect("open");
            let t = Instant::now();
            let ctx = context::build_context(&session, session.file_leaf());
            let first = ms(t);
            if std::env::var_os("ARBOR_BENCH_WARM").is_some() {
                let t3 = Instant::now();
                let p = session.path(session.file_leaf());
                let pm = ms(t3);
                let t3 = Instant::now();
                let mut c2 = context::build_context(&session, session.file_leaf());
                for _ in 0..std::env::var("ARBOR_BENCH_WARM").ok().and_then(|v| v.parse().ok()).unwrap_or(0) {
                    c2 = context::build_context(&session, session.file_leaf());
                }
                eprintln!("warm {} ms (path {pm} ms), {} msgs", ms(t3), c2.messages.len());
                drop(p);
            }
            let t2 = Instant::now();
            let est = context::estimate_context(&ctx.agent_messages());
            format!(
                "{{\"op\":\"context\",\"ms\":{first},\"messages\":{},\"estimateMs\":{},\"contextTokens\":{}}}",
                ctx.messages.len(),
                ms(t2),
                est.tokens
            )
        }
        "compact" => {
            let session = Session::open(file).expect("open");
            let t = Instant::now();
            let path = session.path(session.file_leaf());
            let prep = compaction::prepare_compaction(&session, &path, &Default::default()).expect("prepare");
            let prep_ms = ms(t);
            for _ in 0..std::env::var("ARBOR_BENCH_WARM").ok().and_then(|v| v.parse().ok()).unwrap_or(0) {
                let path = session.path(session.file_leaf());
                let p = compaction::prepare_compaction(&session, &path, &Default::default()).expect("prepare");
                std::hint::black_box((p.serialized_history(), p.serialized_turn_prefix()));
            }
            let t2 = Instant::now();
            let text = prep.serialized_history();
            let prefix = if prep.is_split_turn { prep.serialized_turn_prefix() } else { String::new() };
            let ser = ms(t2);
            format!(
                "{{\"op\":\"compact\",\"ms\":{},\"prepareMs\":{prep_ms},\"serializeMs\":{ser},\"pathLength\":{},\"messagesToSummarize\":{},\"tokensBefore\":{},\"serializedChars\":{}}}",
                ms(t),
                path.len(),
                prep.messages_to_summarize.len(),
                prep.tokens_before,
                pi_json::utf16_len(&text) + pi_json::utf16_len(&prefix)
            )
        }
        "navigate" => {
            let session = Session::open(file).expect("open");
            let target = session.index_of(&args[3]).expect("target id");
            // Reading the fault count costs tens of µs: only when the parts are asked for.
            let split = std::env::var_os("ARBOR_BENCH_SPLIT").is_some();
            let f0 = if split { minflt() } else { 0 };
            let t = Instant::now();
            let col = branch::collect_branch_entries(&session, session.file_leaf(), target);
            let collect_ms = ms(t);
            let t1 = Instant::now();
            let prep = branch::prepare_branch_entries(&session, &col.entries, 128000.0 - 16384.0);
            let prep_ms = ms(t1);
            for _ in 0..std::env::var("ARBOR_BENCH_WARM").ok().and_then(|v| v.parse().ok()).unwrap_or(0) {
                std::hint::black_box(branch::prepare_branch_entries(&session, &col.entries, 128000.0 - 16384.0));
            }
            let t1 = Instant::now();
            let text = prep.serialized();
            let ser_ms = ms(t1);
            let f1 = if split { minflt() } else { 0 };
            let t1 = Instant::now();
            let ctx = context::build_context(&session, Some(target));
            if split {
                eprintln!("faults: prepare+serialize {}, context {}", f1 - f0, minflt() - f1);
                eprintln!(
                    "prepare {prep_ms} ms ({} read, {} modified files), serialize {ser_ms} ms, context {} ms",
                    prep.read_files.len(),
                    prep.modified_files.len(),
                    ms(t1)
                );
            }
            format!(
                "{{\"op\":\"navigate\",\"ms\":{},\"collectMs\":{collect_ms},\"entriesToSummarize\":{},\"summaryMessages\":{},\"serializedChars\":{},\"newContextMessages\":{}}}",
                ms(t),
                col.entries.len(),
                prep.messages.len(),
                pi_json::utf16_len(&text),
                ctx.messages.len()
            )
        }
        "append" => {
            let n: usize = args.get(3).and_then(|x| x.parse().ok()).unwrap_or(1000);
            let session = Session::open(file).expect("open");
            let _lock = store::SessionLock::try_acquire(file).expect("lock");
            let mut parent = session.file_leaf().map(|l| session.id(l).to_string());
            let mut times = Vec::with_capacity(n);
            let mut taken: std::collections::HashSet<String> = Default::default();
            for i in 0..n {
                let id = session_engine::ids::new_entry_id(|c| session.index_of(c).is_some() || taken.contains(c));
                taken.insert(id.clone());
                let e = user_entry(&id, parent.as_deref(), i, format!("bench message {i}"));
                let t = Instant::now();
                store::append_entry(file, &e, false).expect("append");
                times.push(t.elapsed().as_secs_f64() * 1e6);
                parent = Some(id);
            }
            let (p50, p99, max) = percentiles(times);
            format!("{{\"op\":\"append\",\"n\":{n},\"medianUs\":{p50:.1},\"p99Us\":{p99:.1},\"maxUs\":{max:.1}}}")
        }
        "follow" => {
            // The app's live follow while a background reader holds the session (a snapshot):
            // another writer appends N messages of about 3 KB, one at a time, and the session
            // reads each with extend_from_file. Peak memory (measured from outside) shows whether
            // the bytes read at open were held twice.
            let n: usize = args.get(3).and_then(|x| x.parse().ok()).unwrap_or(1000);
            let mut session = Session::open(file).expect("open");
            let snapshot = session.clone();
            let mut times = Vec::with_capacity(n);
            let body = "x".repeat(3000);
            for i in 0..n {
                let parent = session.file_leaf().map(|l| session.id(l).to_string());
                let id = session_engine::ids::new_entry_id(|c| session.index_of(c).is_some());
                let e = user_entry(&id, parent.as_deref(), i, format!("follow {i} {body}"));
                store::append_entry(file, &e, false).expect("append");
                let t = Instant::now();
                let r = session.extend_from_file(file).expect("extend");
                times.push(t.elapsed().as_secs_f64() * 1e6);
                assert_eq!(r, session_engine::session::Extend::Added(1), "append {i} not read as one entry");
            }
            assert_eq!(session.len(), snapshot.len() + n);
            let (p50, p99, max) = percentiles(times);
            format!(
                "{{\"op\":\"follow\",\"n\":{n},\"medianUs\":{p50:.1},\"p99Us\":{p99:.1},\"maxUs\":{max:.1},\"entries\":{}}}",
                session.len()
            )
        }
        other => {
            eprintln!("unknown op {other}");
            std::process::exit(2);
        }
    };
    println!("{out}");
}

/// The user message the append benchmarks write, `i` its timestamp.
fn user_entry(id: &str, parent: Option<&str>, i: usize, text: String) -> pi_json::Value {
    let msg =
        pi_json::obj([("role", "user".into()), ("content", text.into()), ("timestamp", pi_json::Value::Num(i as f64))]);
    entries::message(id, parent, &session_engine::time::now_iso(), msg)
}

/// Median, 99th percentile and maximum of per-append times (the nearest-rank percentile).
fn percentiles(mut times: Vec<f64>) -> (f64, f64, f64) {
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let p = |q: f64| times[((q / 100.0) * times.len() as f64).floor().min(times.len() as f64 - 1.0) as usize];
    (p(50.0), p(99.0), times[times.len() - 1])
}
