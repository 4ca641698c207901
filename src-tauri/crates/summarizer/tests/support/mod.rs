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
