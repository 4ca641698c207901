//! The app's benchmarks without a window, on a big session (the 100k-entry one of
//! docs/PERFORMANCE.md, say):
//!
//! ```sh
//! cargo run --release --example app_bench -- BENCH FILE
//! ```
//!
//! where BENCH is `open` (an open split into its parts, and leaf moves), `continue` ("Continue
//! from here" and its parts), `append` (a label appended and read back), `send` (a message to a
//! loopback provider), `timeline` (the waterfall), `workbench` (the summary workbench and the
//! graph's markers), `quality` (the quality panel of the largest compaction, and the background
//! run that marks every summary, alone and beside graph windows asked meanwhile) or `memory` (this
//! process's resident memory and its peak, from /proc, after each step of what the window does
//! with a session it opens: the open, the waterfall's warm-up, the quality marks of every summary,
//! the graph's summary markers, clicks and Continue), and FILE a session file (default: `$ARBOR_BENCH_FILE`). The session is
//! copied into a temp dir first where the benchmark writes. Figures are printed; nothing is
//! asserted about speed.

#[path = "../tests/support/mod.rs"]
mod support;

use arbor_app::commands::timeline::{timeline, warm};
use arbor_app::commands::{budgets, graph, navigate, quality, sessions, summarize, summary};
use arbor_app::state::layout;
use arbor_app::state::timeline::TimelineCache;
use arbor_app::view::budgets::{BudgetArgs, Budgets};
use arbor_app::view::graph::{self as view_graph, GraphRowKind};
use arbor_app::view::timeline::timeline_view;
use session_engine::Session;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::env;
use support::provider::{block, budgets as budget_args, fake, use_fake, Reply};

/// A budget no step of the timeline benchmark runs out of.
const BIG: Duration = Duration::from_secs(60);

fn main() {
    let mut args = std::env::args().skip(1);
    let usage = "usage: cargo run --release --example app_bench -- open|continue|append|send|timeline|workbench|quality|memory [FILE] (FILE defaults to $ARBOR_BENCH_FILE)";
    let bench = args.next().unwrap_or_else(|| panic!("{usage}"));
    let file: PathBuf = match args.next() {
        Some(f) => f.into(),
        None => std::env::var_os("ARBOR_BENCH_FILE").unwrap_or_else(|| panic!("{usage}")).into(),
    };
    match bench.as_str() {
        "open" => open(&file),
        "continue" => continue_here(&file),
        "append" => append(&file),
        "send" => send(&file),
        "timeline" => timeline_bench(&file),
        "workbench" => workbench(&file),
        "quality" => quality_bench(&file),
        "memory" => memory(&file),
        _ => panic!("{usage}"),
    }
}

/// Splits the open time of a big session: engine open, graph input, layout, first window.
fn open(file: &Path) {
    let t = std::time::Instant::now();
    let session = session_engine::Session::open(file).unwrap();
    let open = t.elapsed();
    let t = std::time::Instant::now();
    let nodes = view_graph::nodes(&session);
    let input = t.elapsed();
    let t = std::time::Instant::now();
    let layout =
        session_graph::layout(&nodes, session.file_leaf().map(|l| l as u32), &session_graph::LayoutOptions::new());
    let lay = t.elapsed();
    let t = std::time::Instant::now();
    let rows = view_graph::window(&session, &layout, 0, 256);
    let win = t.elapsed();
    println!(
        "entries {} rows {} lanes {}: engine open {:?}, graph input {:?}, layout {:?}, first 256-row window {:?} ({} rows)",
        session.len(),
        layout.len(),
        layout.lanes(),
        open,
        input,
        lay,
        win,
        rows.len()
    );
    // A leaf move ("Continue from here" on 12 entries spread over the session): the default cut
    // of the new leaf, the layout revealing it, and the full preparation that the preview makes.
    let (mut cuts, mut lays, mut preps) = (Vec::new(), Vec::new(), Vec::new());
    let agent = tempfile::tempdir().unwrap();
    for k in 1..=12 {
        let leaf = Some(session.len() * k / 13);
        let t = std::time::Instant::now();
        let cut = budgets::default_cut(&session, leaf, budgets::default_keep_recent(agent.path()));
        cuts.push(t.elapsed().as_secs_f64() * 1e3);
        let mut o = session_graph::LayoutOptions::new();
        o.reveal = cut.map(|c| c as u32);
        let t = std::time::Instant::now();
        std::hint::black_box(session_graph::layout(&nodes, leaf.map(|l| l as u32), &o));
        lays.push(t.elapsed().as_secs_f64() * 1e3);
        let t = std::time::Instant::now();
        let path = session.path(leaf);
        let _ =
            std::hint::black_box(session_engine::compaction::prepare_compaction(&session, &path, &Default::default()));
        preps.push(t.elapsed().as_secs_f64() * 1e3);
    }
    preps.sort_by(f64::total_cmp);
    println!("prepare_compaction median {:.2} ms ({:.2}-{:.2})", preps[6], preps[0], preps[11]);
    cuts.sort_by(f64::total_cmp);
    lays.sort_by(f64::total_cmp);
    println!(
        "leaf move, median of 12 (min-max): default cut {:.2} ms ({:.2}-{:.2}), layout {:.2} ms ({:.2}-{:.2})",
        cuts[6], cuts[0], cuts[11], lays[6], lays[0], lays[11]
    );
}

/// "Continue from here" on a big session, as the UI asks for it (one round trip: the leaf move,
/// the new leaf's selection, the preview and the rows of a 32-row view at the new leaf), on 12
/// entries spread over the session, with its parts timed alone after it.
fn continue_here(file: &Path) {
    let e = env();
    sessions::open(&e.state, file, false).unwrap();
    let n = e.state.with_open(|o| Ok(o.session.len())).unwrap();
    let args = BudgetArgs { budgets: Budgets::default(), context_window: 200_000 };
    let view = arbor_app::view::graph::GraphViewport { top: 0.0, height: 32.0, margin: 48, chunk: 256 };
    let ms = |t: std::time::Instant| t.elapsed().as_secs_f64() * 1e3;
    let mut all: [Vec<f64>; 5] = Default::default();
    for k in 1..=12 {
        let id = e.state.with_open(|o| Ok(o.session.id(n * k / 13).to_string())).unwrap();
        let t = std::time::Instant::now();
        let c = navigate::continue_here(&e.state, &id, &args, Some(&view)).unwrap();
        all[0].push(ms(t));
        let w = c.rows.as_ref().expect("rows at the new leaf");
        let t = std::time::Instant::now();
        graph::window(&e.state, w.start, w.start + w.rows.len() as u32).unwrap();
        all[4].push(ms(t));
        let t = std::time::Instant::now();
        let bytes = serde_json::to_vec(&c).unwrap().len();
        println!(
            "{bytes} bytes as JSON ({:.1} ms), {} context messages",
            ms(t),
            c.selection.as_ref().map_or(0, |s| s.context.messages.len())
        );
        let t = std::time::Instant::now();
        navigate::continue_from(&e.state, &id).unwrap();
        all[1].push(ms(t));
        let leaf = c.navigation.session.leaf_id.unwrap();
        let t = std::time::Instant::now();
        graph::select(&e.state, &leaf, 16384, true).unwrap();
        all[2].push(ms(t));
        let t = std::time::Instant::now();
        budgets::preview(&e.state, 20000, 16384, 200_000, true).unwrap();
        all[3].push(ms(t));
    }
    for (name, v) in ["continue_here", "leaf move alone", "selection alone", "preview alone", "its rows alone"]
        .iter()
        .zip(all.iter_mut())
    {
        v.sort_by(f64::total_cmp);
        println!("{name}: median {:.1} ms ({:.1}-{:.1})", v[6], v[0], v[11]);
    }
}

/// What a write from the app costs on a big session after the append: the label command reads
/// only the appended bytes into the open session (it used to open the whole file again, timed
/// here as "full re-open" for comparison), then lays the graph out again.
fn append(file: &Path) {
    let e = env();
    let dir = e.agent.join("sessions").join("--bench--");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("2025-03-01T09-00-00-000Z_bench.jsonl");
    std::fs::copy(file, &p).unwrap();
    let opened = sessions::open(&e.state, &p, false).unwrap();
    let leaf = opened.leaf_id.clone().expect("the bench session has a leaf");
    let mut label_ms = Vec::new();
    for k in 0..3 {
        let t = std::time::Instant::now();
        let after =
            navigate::set_label(&e.state, &leaf, Some(&format!("bench {k}")), 1_740_000_000_000 + k, None).unwrap();
        label_ms.push(t.elapsed().as_secs_f64() * 1e3);
        assert_eq!(after.entry_count, opened.entry_count + k as u32 + 1, "the label was read into the open session");
    }
    let t = std::time::Instant::now();
    let session = session_engine::Session::open(&p).unwrap();
    let reopen = t.elapsed().as_secs_f64() * 1e3;
    assert_eq!(session.len(), opened.entry_count as usize + 3);
    let t = std::time::Instant::now();
    e.state.with_open(|o| Ok(layout::relayout(&o.session, o.leaf, &o.folding, &mut Default::default()))).unwrap();
    let relayout = t.elapsed().as_secs_f64() * 1e3;
    // A leaf move: the nodes are kept, only the layout runs.
    let t = std::time::Instant::now();
    let rows = e.state.with_open(|o| Ok(layout::relayout(&o.session, o.leaf, &o.folding, &mut o.nodes).len())).unwrap();
    let leaf_move = t.elapsed().as_secs_f64() * 1e3;
    assert!(rows > 0);
    println!(
        "{} entries: set_label (append + read appended bytes + relayout) {label_ms:.1?} ms; full re-open it no longer does {reopen:.1} ms; relayout alone {relayout:.1} ms, with the nodes kept (a leaf move) {leaf_move:.1} ms",
        session.len()
    );
}

/// Arbor's own time when a message is sent on a big session (it is to stay within 50 ms of the
/// provider's). The loopback provider answers at once; its time (from the request's body read to
/// the answer written) is subtracted from each send's wall time. What remains is Arbor's: the
/// automatic-compaction check, the context build, the request body, the two appends and reading
/// them back into the open session, the relayout and the answer.
fn send(file: &Path) {
    let e = env();
    let p = e.dir.join("2025-03-02T09-00-00-000Z_bench.jsonl");
    std::fs::copy(file, &p).unwrap();
    let opened = sessions::open(&e.state, &p, false).unwrap();
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let b2 = bodies.clone();
    let f = fake(move |_, body| {
        b2.lock().unwrap().push(body.len());
        Reply::Sse("ok".into(), 1000)
    });
    // A window far above the session's context: no compaction, only the send.
    use_fake(&e, &f.base, 2_000_000);
    let rounds = std::env::var("ARBOR_BENCH_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(7usize);
    let (mut wall, mut own) = (Vec::new(), Vec::new());
    for k in 0..rounds {
        let before = f.served.lock().unwrap().len();
        let t = std::time::Instant::now();
        let r = block(summarize::send(&e.state, &e.st, &format!("bench {k}"), &budget_args(2_000_000), None)).unwrap();
        let ms = t.elapsed().as_secs_f64() * 1e3;
        assert_eq!(r.reply, "ok");
        assert!(r.compactions.is_empty());
        assert_eq!(
            r.session.entry_count as usize,
            opened.entry_count as usize + 2 * (k + 1),
            "both lines were read into the open session"
        );
        // The server records its time right after its last write; give it that moment.
        let deadline = Instant::now() + Duration::from_secs(2);
        while f.served.lock().unwrap().len() == before && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        let provider: f64 = f.served.lock().unwrap()[before..].iter().map(|d| d.as_secs_f64() * 1e3).sum();
        wall.push(ms);
        own.push(ms - provider);
    }
    // The held session is the file's: a fresh open has the same entries and leaf.
    let fresh = session_engine::Session::open(&p).unwrap();
    let held = sessions::describe(&e.state).unwrap();
    assert_eq!(held.entry_count as usize, fresh.len());
    assert_eq!(held.file_leaf_id.as_deref(), fresh.file_leaf().map(|l| fresh.id(l)));
    let med = |v: &[f64]| {
        let mut s = v.to_vec();
        s.sort_by(f64::total_cmp);
        s[s.len() / 2]
    };
    let r1 = |v: &[f64]| v.iter().map(|x| (x * 10.0).round() / 10.0).collect::<Vec<_>>();
    println!(
        "send on {} entries: Arbor's own time median {:.1} ms (min {:.1}, max {:.1}; all {:?}); wall median {:.1} ms; request body {} bytes",
        opened.entry_count,
        med(&own),
        own.iter().copied().fold(f64::INFINITY, f64::min),
        own.iter().copied().fold(0.0, f64::max),
        r1(&own),
        med(&wall),
        bodies.lock().unwrap().first().copied().unwrap_or(0)
    );
    std::fs::remove_file(&p).unwrap();
}

/// The waterfall's command body on a big session: the open, the warm-up, three timelines, then
/// the parts of one call (path, fill, contributions, points, view, bytes).
fn timeline_bench(file: &Path) {
    let e = env();
    let t = std::time::Instant::now();
    sessions::open(&e.state, file, false).unwrap();
    eprintln!("open {:?}", t.elapsed());
    let cache = TimelineCache::new();
    let t = std::time::Instant::now();
    warm(&e.state, &cache, BIG).unwrap();
    eprintln!("warm {:?}", t.elapsed());
    for _ in 0..3 {
        let t = std::time::Instant::now();
        let v = timeline(&e.state, &cache, None, 200_000, 16_384, BIG).unwrap();
        let a = t.elapsed();
        let bytes = v.to_bytes();
        eprintln!("timeline {a:?}, +bytes {:?} ({} bytes, {} points)", t.elapsed(), bytes.len(), v.head.count);
    }
    // The parts of one call.
    e.state
        .with_open(|o| {
            let session = &o.session;
            let mut c = session_engine::timeline::ContributionCache::new();
            let path = session.path(o.leaf);
            c.fill(session, &path, BIG, 4096);
            for _ in 0..3 {
                let t = std::time::Instant::now();
                let path = session.path(o.leaf);
                let t_path = t.elapsed();
                let done = c.fill(session, &path, BIG, 4096);
                let t_fill = t.elapsed();
                let contribs = c.of_path(session, &path);
                let t_of = t.elapsed();
                let points = session_engine::timeline::timeline_of(session, &path, &contribs);
                let t_pts = t.elapsed();
                let v = timeline_view(session, &points, &contribs, 200_000, 16_384, true, None, o.leaf);
                let t_view = t.elapsed();
                let bytes = v.to_bytes();
                let t_bytes = t.elapsed();
                eprintln!("path {t_path:?} fill {t_fill:?} ({done}) of_path {t_of:?} points {t_pts:?} view {t_view:?} bytes {t_bytes:?} ({})", bytes.len());
            }
            Ok(())
        })
        .unwrap();
}

/// Workbench timings on a big session: get_summary_view on the largest compaction (cold and
/// warm), the diff against the one before it, and the graph's marker facts for every compaction
/// (cold cache, then cached).
fn workbench(file: &Path) {
    let e = env();
    let path = e.dir.join("big.jsonl");
    std::fs::copy(file, &path).unwrap();
    let opened = sessions::open(&e.state, &path, false).unwrap();
    let session = Session::open(&path).unwrap();
    let comps: Vec<usize> = session.compactions().collect();
    let largest = *comps
        .iter()
        .max_by_key(|&&i| session.value(i).str_field("summary").map(str::len).unwrap_or(0))
        .expect("a compaction");
    let id = session.id(largest).to_string();
    let ms = |t: std::time::Instant| t.elapsed().as_secs_f64() * 1000.0;
    let t = std::time::Instant::now();
    let v = summary::view(&e.state, &id).unwrap();
    let cold = ms(t);
    let t = std::time::Instant::now();
    summary::view(&e.state, &id).unwrap();
    let warm = ms(t);
    let t = std::time::Instant::now();
    if let Some(prev) = &v.check.previous_entry_id {
        summary::diff(&e.state, prev, &id).unwrap();
    }
    let diff = ms(t);
    let t = std::time::Instant::now();
    let w = graph::window(&e.state, 0, opened.total_rows.min(5000)).unwrap();
    let first = ms(t);
    let t = std::time::Instant::now();
    let w2 = graph::window(&e.state, 0, opened.total_rows.min(5000)).unwrap();
    let second = ms(t);
    let missing: Vec<String> = w2
        .rows
        .iter()
        .filter(|r| r.kind == GraphRowKind::Compaction && r.facts.is_none())
        .map(|r| r.entry_id.clone())
        .collect();
    let t = std::time::Instant::now();
    let mut left = missing.clone();
    let mut calls = 0;
    while !left.is_empty() {
        let got = summary::markers(&e.state, &left, summary::MARKER_BUDGET).unwrap();
        assert!(!got.is_empty());
        left.retain(|id| !got.iter().any(|g| &g.entry_id == id));
        calls += 1;
    }
    let late = ms(t);
    let t = std::time::Instant::now();
    graph::window(&e.state, 0, opened.total_rows.min(5000)).unwrap();
    let again = ms(t);
    eprintln!(
        "{} entries, {} compactions; largest {id}: {} sections, span {} entries, {}/{} facts, {} dropped",
        session.len(),
        comps.len(),
        v.sections.len(),
        v.span.count,
        v.check.retention.mentioned,
        v.check.retention.total,
        v.check.dropped.len()
    );
    // The engine parts of the view, one by one.
    let text = session.value(largest).str_field("summary").unwrap_or("").to_string();
    let mut parts = Vec::new();
    let t = std::time::Instant::now();
    summary_analysis::parse(&text);
    parts.push(("parse", ms(t)));
    let t = std::time::Instant::now();
    summary_analysis::previous_compaction(&session, largest);
    parts.push(("previous_compaction", ms(t)));
    let t = std::time::Instant::now();
    summary_analysis::span(&session, largest);
    parts.push(("span", ms(t)));
    let t = std::time::Instant::now();
    summary_analysis::retention(&session, largest, &text);
    parts.push(("retention", ms(t)));
    let t = std::time::Instant::now();
    summary_analysis::check(&session, largest);
    parts.push(("check", ms(t)));
    let t = std::time::Instant::now();
    summary_analysis::history(&session, largest);
    parts.push(("history", ms(t)));
    let t = std::time::Instant::now();
    summary_analysis::edit_refusal(&session, largest, session.file_leaf());
    parts.push(("edit_refusal", ms(t)));
    eprintln!("engine parts: {}", parts.iter().map(|(n, m)| format!("{n} {m:.1} ms")).collect::<Vec<_>>().join(", "));
    eprintln!("get_summary_view: {cold:.1} ms cold, {warm:.1} ms again; diff with previous: {diff:.1} ms");
    let filled = w.rows.iter().filter(|r| r.kind == GraphRowKind::Compaction && r.facts.is_some()).count();
    eprintln!(
        "graph window of {} rows: {first:.1} ms with {filled} of {} compaction markers computed in the budget, {second:.1} ms for the next window; summary_markers for the {} left: {late:.1} ms in {calls} calls; all cached: {again:.1} ms",
        w.rows.len(),
        comps.len(),
        missing.len()
    );
}

/// Summary quality on a big session: the workbench's quality panel of the largest compaction
/// (cold: nothing cached), then the background run over every summary (first batch, total,
/// batches), then the run again with graph windows of 200 rows asked from another thread all
/// along (how long a window waits while the run goes: the run takes the session lock only to
/// take its snapshots).
fn quality_bench(file: &Path) {
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let e = env();
    let t = Instant::now();
    let opened = sessions::open(&e.state, file, false).unwrap();
    eprintln!("open {:.0} ms", ms(t.elapsed()));
    let session = Session::open(file).unwrap();
    let largest = session
        .compactions()
        .max_by_key(|&i| summary_analysis::span_count(&session, i))
        .map(|i| session.id(i).to_string())
        .expect("a compaction");
    drop(session);
    let t = Instant::now();
    let v = quality::quality(&e.state, &largest).unwrap();
    eprintln!(
        "quality panel of {largest} (largest span): {:.1} ms ({} probes, {} items, {} unsupported)",
        ms(t.elapsed()),
        v.probes.len(),
        v.citations.len(),
        v.unsupported.len()
    );
    for round in ["alone", "beside graph windows"] {
        // A fresh open: nothing cached.
        sessions::open(&e.state, file, false).unwrap();
        // Per batch: when it came, and whether it held a mark without forgetting (the scores
        // come first, then the costs of forgetting).
        let batches = Arc::new(Mutex::new(Vec::<(Duration, bool)>::new()));
        let b = batches.clone();
        let t0 = Instant::now();
        let sink: arbor_app::state::quality::MarkSink = Arc::new(move |m| {
            b.lock().unwrap().push((t0.elapsed(), m.iter().any(|m| m.forgetting.is_none())));
            true
        });
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let windows = (round != "alone").then(|| {
            let (state, stop) = (e.state.clone(), stop.clone());
            let rows = opened.total_rows;
            std::thread::spawn(move || {
                let mut waits = Vec::new();
                let mut start = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let t = Instant::now();
                    graph::window(&state, start, (start + 200).min(rows)).unwrap();
                    waits.push(ms(t.elapsed()));
                    start = (start + 997) % rows.saturating_sub(200).max(1);
                    std::thread::sleep(Duration::from_millis(16));
                }
                waits.sort_by(f64::total_cmp);
                waits
            })
        });
        let w = std::thread::spawn({
            let state = e.state.clone();
            move || {
                arbor_app::state::background::background_priority();
                quality::warm(&state, sink, quality::SLICE).unwrap()
            }
        })
        .join()
        .unwrap();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let b = batches.lock().unwrap();
        let first = b.first().map(|x| ms(x.0)).unwrap_or(0.0);
        let scores = b.iter().rfind(|x| x.1).map(|x| ms(x.0)).unwrap_or(0.0);
        eprintln!(
            "background run ({round}): {} summaries scored and {} costs of forgetting in {:.0} ms, {} batches; first batch after {first:.0} ms, every score after {scores:.0} ms",
            w.scored,
            w.forgetting,
            w.elapsed_ms,
            b.len()
        );
        if let Some(h) = windows {
            let waits = h.join().unwrap();
            let p = |q: f64| waits[((waits.len() - 1) as f64 * q) as usize];
            eprintln!(
                "  graph windows meanwhile: {} asked, median {:.1} ms, p95 {:.1} ms, max {:.1} ms",
                waits.len(),
                p(0.5),
                p(0.95),
                p(1.0)
            );
        }
    }
}

/// This process's resident memory and its peak in MB (VmRSS, VmHWM), from /proc (Linux).
fn resident() -> (f64, f64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kb = |key: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (kb("VmRSS:") / 1024.0, kb("VmHWM:") / 1024.0)
}

/// What each step of the window's work on a freshly opened session adds to this process's
/// memory: the open, the waterfall's warm-up and answer, the background run of the quality marks,
/// the graph's summary markers of every summary, then clicks and "Continue from here" on 12
/// entries spread over the session. Each line: resident and peak in MB and as a multiple of the
/// file's size.
fn memory(file: &Path) {
    let mb = std::fs::metadata(file).unwrap().len() as f64 / (1 << 20) as f64;
    let report = |step: &str, t: Instant| {
        let (rss, peak) = resident();
        println!(
            "{step:<28} resident {rss:>6.0} MB ({:.2}x)  peak {peak:>6.0} MB ({:.2}x)  {:>7.0} ms",
            rss / mb,
            peak / mb,
            t.elapsed().as_secs_f64() * 1e3
        );
    };
    let t = Instant::now();
    report("start", t);
    let e = env();
    let opened = sessions::open(&e.state, file, false).unwrap();
    report("open", t);
    let t = Instant::now();
    let cache = TimelineCache::new();
    warm(&e.state, &cache, BIG).unwrap();
    timeline(&e.state, &cache, None, 200_000, 16_384, BIG).unwrap();
    report("timeline warm + answer", t);
    let t = Instant::now();
    let sink: arbor_app::state::quality::MarkSink = Arc::new(|_| true);
    quality::warm(&e.state, sink, quality::SLICE).unwrap();
    report("quality marks", t);
    let t = Instant::now();
    let ids: Vec<String> = e
        .state
        .with_open(|o| {
            Ok((0..o.session.len())
                .filter(|&i| arbor_app::view::summary::is_summary(&o.session, i))
                .map(|i| o.session.id(i).to_string())
                .collect())
        })
        .unwrap();
    summary::markers(&e.state, &ids, BIG).unwrap();
    report("summary markers", t);
    let t = Instant::now();
    let args = BudgetArgs { budgets: Budgets::default(), context_window: 200_000 };
    let n = opened.entry_count as usize;
    for k in 1..=12 {
        let id = e.state.with_open(|o| Ok(o.session.id(n * k / 13).to_string())).unwrap();
        graph::select(&e.state, &id, 16384, true).unwrap();
        navigate::continue_here(&e.state, &id, &args, None).unwrap();
    }
    report("12 clicks + Continue", t);
}
