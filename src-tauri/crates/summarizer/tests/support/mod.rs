pub mod loopback;

/// A token that cancels itself `ms` milliseconds from now (needs a running Tokio runtime).
#[allow(dead_code)] // not every test crate that includes `support` cancels
pub fn cancel_after(ms: u64) -> summarizer::CancellationToken {
    let cancel = summarizer::CancellationToken::new();
    let c2 = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
        c2.cancel();
    });
    cancel
}

/// A copy of conformance case `name` in `dir`, to write on.
#[allow(dead_code)] // not every test crate that includes `support` writes sessions
pub fn copy_case(dir: &std::path::Path, name: &str) -> std::path::PathBuf {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("../session-engine/tests/fixtures/conformance/{name}.jsonl"));
    let p = dir.join(format!("{name}.jsonl"));
    std::fs::copy(src, &p).unwrap();
    p
}

/// An Anthropic-wire client of the loopback `server`: no retries, a 5 s read-idle timeout.
#[allow(dead_code)] // not every test crate that includes `support` talks to a model
pub fn anthropic_client(server: &loopback::Server) -> summarizer::Client {
    let mut cfg = summarizer::ProviderConfig::new(
        summarizer::Wire::Anthropic,
        "test-model",
        Some(summarizer::ApiKey::new("sk-test")),
    );
    cfg.base_url = server.base();
    cfg.timeouts.read_idle = std::time::Duration::from_secs(5);
    cfg.retry.max_retries = 0;
    summarizer::Client::new(cfg).unwrap()
}
