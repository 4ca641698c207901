//! The summary workbench on the largest compaction of a session file (the workbench's benchmark):
//! parse, diff against its previous compaction, and the retention probe, each the median of
//! N runs (the retention probe's first, cold run is reported too: it parses the span's entries,
//! which later runs find cached). Opening the file is not timed.
//!
//!   cargo run --release -p summary-analysis --example summary_bench -- FILE [RUNS]
//!
//! Prints a readable report, then one JSON line.
use session_engine::Session;
use std::path::Path;
use std::time::Instant;
use summary_analysis::{check, diff, parse, previous_compaction, retention, span};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn time<T>(runs: usize, mut f: impl FnMut() -> T) -> (f64, f64, T) {
    let mut times = Vec::with_capacity(runs);
    let mut last = None;
    for _ in 0..runs {
        let t = Instant::now();
        let out = std::hint::black_box(f());
        times.push(t.elapsed().as_secs_f64() * 1e3);
        last = Some(out);
    }
    let first = times[0];
    (first, median(times), last.expect("at least one run"))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(file) = args.get(1) else {
        eprintln!("usage: summary_bench FILE [RUNS]");
        std::process::exit(2);
    };
    let runs: usize = args.get(2).and_then(|r| r.parse().ok()).unwrap_or(21).max(1);
    let t = Instant::now();
    let session = Session::open(Path::new(file)).expect("open");
    let open_ms = t.elapsed().as_secs_f64() * 1e3;
    let Some(idx) = session.compactions().max_by_key(|&i| summary_analysis::summary_text(&session, i).len()) else {
        eprintln!("{file}: no compaction entry");
        std::process::exit(2);
    };
    let text = summary_analysis::summary_text(&session, idx).to_string();
    let prev = previous_compaction(&session, idx);
    let prev_text = prev.map(|p| summary_analysis::summary_text(&session, p).to_string()).unwrap_or_default();
    let sp = span(&session, idx);

    let (_, parse_ms, parsed) = time(runs, || parse(&text));
    let prev_parsed = parse(&prev_text);
    let (_, diff_ms, d) = time(runs, || diff(&prev_parsed, &parsed));
    let (ret_cold, ret_ms, r) = time(runs, || retention(&session, idx, &text));
    let (_, check_ms, c) = time(runs, || check(&session, idx));
    let total = parse_ms + diff_ms + ret_ms;
    let (_, span_ms, _) = time(runs, || span(&session, idx));
    let (_, prevc_ms, _) = time(runs, || previous_compaction(&session, idx));

    let items: usize = parsed.sections.iter().map(|x| x.items.len()).sum();
    println!("file {file}: {} entries, opened in {open_ms:.0} ms (not counted)", session.len());
    println!(
        "largest compaction {} ({} bytes, {} sections, {items} items); previous {}; span {} entries",
        session.id(idx),
        text.len(),
        parsed.sections.len(),
        prev.map(|p| session.id(p)).unwrap_or("none"),
        sp.entry_ids.len()
    );
    println!("median of {runs} runs:");
    println!("  parse      {parse_ms:>8.3} ms");
    println!("  diff       {diff_ms:>8.3} ms  ({} moved, {} section diffs)", d.moved.len(), d.sections.len());
    println!(
        "  retention  {ret_ms:>8.3} ms  (first, cold run {ret_cold:.3} ms; {}/{} facts mentioned)",
        r.mentioned, r.total
    );
    println!("    of which span {span_ms:.3} ms, previous_compaction {prevc_ms:.3} ms");
    println!("  together   {total:>8.3} ms  (target < 20 ms)");
    println!(
        "  check      {check_ms:>8.3} ms  (parse both + drop alarm + moved + retention; {} dropped)",
        c.dropped.len()
    );
    // Stress: the same text repeated to 1 MB (many sections and items), parsed and diffed
    // against a variant with every tenth line changed.
    let mut big = String::new();
    let mut k = 0;
    while big.len() < 1 << 20 {
        k += 1;
        big.push_str(&text.replace("## ", &format!("## {k} ")));
        big.push('\n');
    }
    let variant: String = big
        .lines()
        .enumerate()
        .map(|(i, l)| if i % 10 == 3 { format!("{l} (changed)\n") } else { format!("{l}\n") })
        .collect();
    let (_, big_parse_ms, bp) = time(5, || parse(&big));
    let bv = parse(&variant);
    let (_, big_diff_ms, _) = time(5, || diff(&bp, &bv));
    let big_items: usize = bp.sections.iter().map(|x| x.items.len()).sum();
    println!(
        "  1 MB stress ({} bytes, {} sections, {big_items} items): parse {big_parse_ms:.1} ms, diff {big_diff_ms:.1} ms (median of 5)",
        big.len(),
        bp.sections.len()
    );
    println!(
        "{{\"op\":\"summary\",\"entry\":\"{}\",\"bytes\":{},\"spanEntries\":{},\"runs\":{runs},\"parseMs\":{parse_ms:.3},\"diffMs\":{diff_ms:.3},\"retentionMs\":{ret_ms:.3},\"retentionColdMs\":{ret_cold:.3},\"totalMs\":{total:.3},\"checkMs\":{check_ms:.3},\"facts\":{},\"mentioned\":{}}}",
        session.id(idx),
        text.len(),
        sp.entry_ids.len(),
        r.total,
        r.mentioned
    );
}
