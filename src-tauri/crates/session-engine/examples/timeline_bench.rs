//! Times `timeline` on a big session: `cargo run --release -p session-engine --example
//! timeline_bench FILE` (e.g. the 100k-entry file of `scripts/gen-sessions.mjs --entries 100000
//! --seed 42`).
//! Prints the open time, the timeline pass (twice: the pass keeps no parse, so both read the
//! entries), one `build_context` + `estimate_context` at the leaf for scale, and the resident
//! memory (Linux `VmHWM`, the peak) after the open and after the timeline passes.
use session_engine::context::{build_context, estimate_context};
use session_engine::timeline::timeline;
use session_engine::Session;
use std::time::Instant;

fn main() {
    let path = std::env::args().nth(1).expect("usage: timeline_bench FILE");
    let t = Instant::now();
    let session = Session::open(std::path::Path::new(&path)).expect("open");
    let open_ms = t.elapsed().as_secs_f64() * 1e3;
    let peak_open_mb = peak_rss_mb();
    let t = Instant::now();
    let pts = timeline(&session, session.file_leaf());
    let cold_ms = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    let again = timeline(&session, session.file_leaf());
    let warm_ms = t.elapsed().as_secs_f64() * 1e3;
    let peak_timeline_mb = peak_rss_mb();
    // NaN points (absurd usages) are equal for this check.
    assert!(
        pts.len() == again.len()
            && pts
                .iter()
                .zip(&again)
                .all(|(a, b)| a.entry == b.entry && a.context_tokens.to_bits() == b.context_tokens.to_bits())
    );
    let t = Instant::now();
    let est = estimate_context(&build_context(&session, session.file_leaf()).agent_messages());
    let one_ms = t.elapsed().as_secs_f64() * 1e3;
    assert_eq!(pts.last().map(|p| p.context_tokens), Some(est.tokens));
    println!(
        "{{\"entries\":{},\"points\":{},\"open_ms\":{open_ms:.1},\"timeline_cold_ms\":{cold_ms:.1},\"timeline_warm_ms\":{warm_ms:.1},\"one_estimate_at_leaf_ms\":{one_ms:.1},\"peak_rss_after_open_mb\":{peak_open_mb:.0},\"peak_rss_after_timeline_mb\":{peak_timeline_mb:.0}}}",
        session.len(),
        pts.len()
    );
}

/// The peak resident set so far (`VmHWM` in /proc/self/status), in MB; NaN elsewhere.
fn peak_rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}
