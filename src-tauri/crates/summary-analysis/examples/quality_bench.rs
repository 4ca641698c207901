//! Scoring and citing the largest compaction of a session, offline (the figure the summary
//! quality benchmark reports): `cargo run --release -p summary-analysis --example quality_bench FILE`.
use session_engine::session::Session;
use std::time::Instant;

fn main() {
    let path = std::env::args().nth(1).expect("usage: quality_bench FILE.jsonl");
    let session = Session::open(std::path::Path::new(&path)).expect("open");
    let largest = session
        .compactions()
        .max_by_key(|&i| summary_analysis::span_count(&session, i))
        .expect("the session has no compaction");
    let text = summary_analysis::summary_text(&session, largest).to_string();
    let span = summary_analysis::span_count(&session, largest);
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..21 {
        let t = Instant::now();
        let score = summary_analysis::score(&session, largest, &text);
        let cites = summary_analysis::citations(&session, largest, &text);
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        last = Some((score, cites));
    }
    times.sort_by(f64::total_cmp);
    // The parts, for finding where the time goes.
    let part = |f: &dyn Fn()| {
        let mut t: Vec<f64> = (0..11)
            .map(|_| {
                let s = Instant::now();
                f();
                s.elapsed().as_secs_f64() * 1000.0
            })
            .collect();
        t.sort_by(f64::total_cmp);
        t[5]
    };
    let s_ms = part(&|| {
        summary_analysis::score(&session, largest, &text);
    });
    let c_ms = part(&|| {
        summary_analysis::citations(&session, largest, &text);
    });
    let r_ms = part(&|| {
        summary_analysis::retention(&session, largest, &text);
    });
    eprintln!("parts (median): score {s_ms:.2} ms (of which the retention facts {r_ms:.2} ms), cite {c_ms:.2} ms");
    let (score, cites) = last.unwrap();
    println!(
        "compaction {} (span {span} entries, summary {} chars): score {:?}, {} probes, {} items, {} unsupported; score + cite median {:.2} ms, min {:.2} ms (21 rounds, the first one cold)",
        session.id(largest),
        text.len(),
        score.score,
        score.probes.len(),
        cites.items.len(),
        cites.unsupported().count(),
        times[10],
        times[0]
    );
}
