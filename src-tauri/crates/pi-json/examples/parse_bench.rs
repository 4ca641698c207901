//! Throughput of Arbor's `JSON.parse` ([`pi_json::parse_bytes`]) over every line of a file,
//! for tuning the parser (compare with `rs-limit value|simd-value FILE`).
//!
//!   parse_bench FILE [ROUNDS]   prints {"bytes","lines","firstMs","bestMs","mbS"}: the first round (a
//!                               fresh heap, as at open) and the best of ROUNDS (default 5)
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(file) = args.get(1) else {
        eprintln!("usage: parse_bench FILE [ROUNDS]");
        std::process::exit(2);
    };
    let rounds: usize = args.get(2).and_then(|r| r.parse().ok()).unwrap_or(5);
    let buf = std::fs::read(file).expect("read");
    let lines: Vec<&[u8]> = buf.split(|&b| b == b'\n').filter(|l| !l.is_empty()).collect();
    let mut best = f64::MAX;
    let mut first = 0.0;
    let mut ok = 0usize;
    for r in 0..rounds {
        let t = Instant::now();
        ok = 0;
        for l in &lines {
            if let Ok(v) = pi_json::parse_bytes(l) {
                ok += v.as_object().map_or(0, |o| o.len().min(1));
                drop(std::hint::black_box(v));
            }
        }
        let el = t.elapsed().as_secs_f64() * 1e3;
        if r == 0 {
            first = el;
        }
        best = best.min(el);
    }
    println!(
        "{{\"bytes\":{},\"lines\":{},\"objects\":{ok},\"firstMs\":{first:.3},\"bestMs\":{best:.3},\"mbS\":{:.1}}}",
        buf.len(),
        lines.len(),
        buf.len() as f64 / 1e6 / (best / 1e3)
    );
}
