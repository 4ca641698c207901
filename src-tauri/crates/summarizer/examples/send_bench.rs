//! What sending one message costs on a big session beyond the provider's time (a loopback model
//! that answers at once), with the time of one full open of the file for comparison:
//! `cargo run --release -p summarizer --example send_bench FILE` (e.g. the 100k-entry file of
//! `scripts/gen-sessions.mjs --entries 100000 --seed 42`). The file is copied first, so the three
//! sends do not grow it.
// The tests' loopback model and client, shared rather than copied.
#[path = "../tests/support/mod.rs"]
mod support;

use session_engine::context::CompactionSettings;
use summarizer::run::{Backend, RunOptions};
use summarizer::session_ops::{continue_session, ContinueOptions};
use summarizer::CancellationToken;
use support::loopback::{ok_answer, Fmt, Server};

#[tokio::main]
async fn main() {
    let src = std::env::args().nth(1).expect("usage: send_bench FILE");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("big.jsonl");
    std::fs::copy(&src, &file).unwrap();
    let t = std::time::Instant::now();
    let session = session_engine::Session::open(&file).unwrap();
    let open = t.elapsed().as_secs_f64() * 1e3;
    let n = session.len();
    drop(session);
    let server = Server::start(|r, _| ok_answer(Fmt::Anthropic, r, "Noted.")).await;
    // Compaction off and a window no session reaches: only the send itself is timed.
    let opts = ContinueOptions {
        settings: CompactionSettings { enabled: false, reserve_tokens: 16384.0, keep_recent_tokens: 2000.0 },
        context_window: 10_000_000,
        max_tokens: 4096,
        run: RunOptions { record_extras: false, ..RunOptions::default() },
    };
    let mut ms = Vec::new();
    for _ in 0..3 {
        let t = std::time::Instant::now();
        let done = continue_session(
            &file,
            None,
            "One more thing.",
            &support::anthropic_client(&server),
            &Backend::Offline,
            &opts,
            &CancellationToken::new(),
            None,
        )
        .await
        .unwrap();
        ms.push(t.elapsed().as_secs_f64() * 1e3);
        assert_eq!(done.reply, "Noted.");
    }
    let lines = std::fs::read_to_string(&file).unwrap().lines().count();
    assert_eq!(lines, n + 1 + 6, "header, the entries, three user and three assistant messages");
    println!(
        "{n} entries: continue_session (loopback answers at once) {ms:.1?} ms; one full open of the file {open:.1} ms"
    );
}
