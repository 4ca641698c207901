//! Pi as the real client of the writes `continue_session` makes: a reply, the
//! automatic compaction at the threshold (before sending and after the reply), and the
//! composer's overflow retry (compact, then send again). Each result is handed to Pi itself
//! (tests/pi/pi-check.mjs through the shared support module of arbor-cli's tests): Pi loads it
//! with no skipped line, agrees with Arbor on leaf, context and token estimate, appends to it,
//! and Arbor reads Pi's append.
#[path = "../../cli/tests/support/pi.rs"]
mod pi;
mod support;

use session_engine::context::CompactionSettings;
use std::path::Path;
use summarizer::run::{Backend, RunOptions};
use summarizer::session_ops::{continue_session, ContinueOptions};
use summarizer::CancellationToken;
use support::loopback::{ok_answer, Fmt, Script, Server};

fn opts(window: u64) -> ContinueOptions {
    ContinueOptions {
        settings: CompactionSettings { enabled: true, reserve_tokens: 16384.0, keep_recent_tokens: 2000.0 },
        context_window: window,
        max_tokens: 4096,
        run: RunOptions::default(),
    }
}

fn appended_types(file: &Path, before: usize) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap();
    assert!(text.ends_with('\n'));
    text.lines()
        .skip(before)
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["type"].as_str().unwrap().to_string())
        .collect()
}

fn line_count(file: &Path) -> usize {
    std::fs::read_to_string(file).unwrap().lines().count()
}

/// The Pi checks on the file after a `continue_session`; `leaf` is the last id Arbor wrote.
fn check(case: &str, file: &Path, leaf: &str) -> Option<pi::View> {
    if !pi::pi_or_skip(case) {
        return None;
    }
    let v = pi::assert_pi_agrees(file, None);
    assert_eq!(v.leaf_id.as_deref(), Some(leaf), "{case}: Pi's leaf");
    pi::assert_arbor_reads_pi_append(file);
    Some(v)
}

#[tokio::test]
async fn reply() {
    let dir = tempfile::tempdir().unwrap();
    let file = support::copy_case(dir.path(), "basic-tool-chain");
    let n0 = line_count(&file);
    let server = Server::start(|r, _| ok_answer(Fmt::Anthropic, r, "Here is the plan ✓")).await;
    let done = continue_session(
        &file,
        None,
        "What next?",
        &support::anthropic_client(&server),
        &Backend::Offline,
        &opts(200_000),
        &CancellationToken::new(),
        None,
    )
    .await
    .unwrap();
    assert!(done.compactions.is_empty());
    assert_eq!(appended_types(&file, n0), ["message", "message"]);
    let Some(v) = check("reply", &file, &done.assistant_entry_id) else { return };
    let n = v.messages.len();
    assert_eq!((v.messages[n - 2].role.as_str(), v.messages[n - 2].text.as_str()), ("user", "What next?"));
    assert_eq!((v.messages[n - 1].role.as_str(), v.messages[n - 1].text.as_str()), ("assistant", "Here is the plan ✓"));
    // Arbor's usage is Pi's usage: the estimate starts from the reply's totalTokens (127).
    assert_eq!(v.tokens.1, 127.0);
}

#[tokio::test]
async fn automatic_compaction_at_the_threshold() {
    let dir = tempfile::tempdir().unwrap();
    let file = support::copy_case(dir.path(), "basic-simple-chat");
    let n0 = line_count(&file);
    let server = Server::start(|r, _| ok_answer(Fmt::Anthropic, r, "short reply")).await;
    // Window 16500 - reserve 16384 = 116: the fixture's last usage and the reply's (127) cross it.
    let done = continue_session(
        &file,
        None,
        "next",
        &support::anthropic_client(&server),
        &Backend::Offline,
        &opts(16_500),
        &CancellationToken::new(),
        None,
    )
    .await
    .unwrap();
    let reasons: Vec<&str> = done.compactions.iter().map(|c| c.reason.as_str()).collect();
    assert_eq!(reasons, ["threshold", "threshold"]);
    assert_eq!(appended_types(&file, n0), ["compaction", "message", "message", "compaction"]);
    let Some(v) = check("automatic_compaction_at_the_threshold", &file, &done.compactions[1].done.entry_id) else {
        return;
    };
    assert_eq!(v.messages[0].role, "compactionSummary", "Pi's context opens with the second compaction's summary");
}

#[tokio::test]
async fn overflow_compacts_and_retries() {
    let dir = tempfile::tempdir().unwrap();
    let file = support::copy_case(dir.path(), "basic-tool-chain");
    let n0 = line_count(&file);
    let server = Server::start(|r, n| {
        if n == 0 {
            Script::json(
                400,
                &serde_json::json!({"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 250000 tokens > 200000 maximum"}}),
            )
        } else {
            ok_answer(Fmt::Anthropic, r, "fits now")
        }
    })
    .await;
    let done = continue_session(
        &file,
        None,
        "continue",
        &support::anthropic_client(&server),
        &Backend::Offline,
        &opts(200_000),
        &CancellationToken::new(),
        None,
    )
    .await
    .unwrap();
    assert_eq!(server.count(), 2, "one retry");
    assert_eq!(done.compactions.len(), 1);
    assert_eq!(done.compactions[0].reason.as_str(), "overflow");
    assert_eq!(appended_types(&file, n0), ["message", "compaction", "message"]);
    let Some(v) = check("overflow_compacts_and_retries", &file, &done.assistant_entry_id) else { return };
    assert_eq!(v.messages[0].role, "compactionSummary");
    let last = v.messages.last().unwrap();
    assert_eq!((last.role.as_str(), last.text.as_str()), ("assistant", "fits now"));
}

/// The composer on a session already held (`continue_on`, as the app sends): another writer
/// appends a label to the user message while the model answers; the held session reads it, the
/// reply keeps the parent its request was built at. Pi loads the result and agrees.
#[tokio::test]
async fn reply_on_a_held_session_with_an_append_meanwhile() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let file = support::copy_case(dir.path(), "basic-tool-chain");
    let n0 = line_count(&file);
    let f2 = file.clone();
    let server = Server::start(move |r, _| {
        let text = std::fs::read_to_string(&f2).unwrap();
        let user: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
        let user = user["id"].as_str().unwrap();
        let label =
            session_engine::entries::label("feed0004", Some(user), "2025-03-01T10:00:00.000Z", user, Some("asked"));
        let mut f = std::fs::OpenOptions::new().append(true).open(&f2).unwrap();
        f.write_all(format!("{}\n", session_engine::entries::line(&label)).as_bytes()).unwrap();
        ok_answer(Fmt::Anthropic, r, "Answered meanwhile")
    })
    .await;
    let host = summarizer::session_ops::FileHost::open(&file).unwrap();
    let done = summarizer::session_ops::continue_on(
        &host,
        None,
        "What next?",
        &support::anthropic_client(&server),
        &Backend::Offline,
        &opts(200_000),
        &CancellationToken::new(),
        None,
    )
    .await
    .unwrap();
    assert_eq!(appended_types(&file, n0), ["message", "label", "message"]);
    assert_eq!(
        host.into_session().len(),
        session_engine::Session::open(&file).unwrap().len(),
        "the held session read all three lines"
    );
    let Some(v) = check("reply_on_a_held_session_with_an_append_meanwhile", &file, &done.assistant_entry_id) else {
        return;
    };
    let last = v.messages.last().unwrap();
    assert_eq!((last.role.as_str(), last.text.as_str()), ("assistant", "Answered meanwhile"));
}
