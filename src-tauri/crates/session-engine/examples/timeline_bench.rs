//! Times `timeline` on a big session: `cargo run --release -p session-engine --example
//! timeline_bench FILE` (e.g. the 100k-entry file of ../shared/bench/gen-sessions.mjs).
//! Prints the open time, the timeline pass (cold: entries parsed on first use; warm: parsed),
//! and one `build_context` + `estimate_context` at the leaf for scale.
use session_engine::context::{build_context, estimate_context};
use session_engine::timeline::timeline;
use session_engine::Session;
use std::time::Instant;

fn main() {
    let path = std::env::args().nth(1).expect("usage: timeline_bench FILE");
    let t = Instant::now();
    let s = Session::open(std::path::Path::new(&path)).expect("open");
    let open_ms = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    let pts = timeline(&s, s.file_leaf());
    let cold_ms = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    let again = timeline(&s, s.file_leaf());
    let warm_ms = t.elapsed().as_secs_f64() * 1e3;
    assert_eq!(pts, again);
    let t = Instant::now();
    let est = estimate_context(&build_context(&s, s.file_leaf()).agent_messages());
    let one_ms = t.elapsed().as_secs_f64() * 1e3;
    assert_eq!(pts.last().map(|p| p.context_tokens), Some(est.tokens));
    println!(
        "{{\"entries\":{},\"points\":{},\"open_ms\":{open_ms:.1},\"timeline_cold_ms\":{cold_ms:.1},\"timeline_warm_ms\":{warm_ms:.1},\"one_estimate_at_leaf_ms\":{one_ms:.1}}}",
        s.len(),
        pts.len()
    );
}
