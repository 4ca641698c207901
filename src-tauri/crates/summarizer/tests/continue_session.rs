//! Continuing a session against a loopback model: the reply is appended with
//! usage; an overflow compacts and retries once (never when compaction is off); the threshold
//! check compacts before sending and after the reply.
mod support;
use serde_json::Value as J;
use session_engine::context::CompactionSettings;
use std::path::Path;
use summarizer::run::{Backend, RunOptions};
use summarizer::session_ops::{continue_session, ContinueOptions};
use summarizer::{CancellationToken, Error};
use support::loopback::{ok_answer, Fmt, Script, Server};

fn opts(enabled: bool, window: u64) -> ContinueOptions {
    ContinueOptions {
        settings: CompactionSettings { enabled, reserve_tokens: 16384.0, keep_recent_tokens: 2000.0 },
        context_window: window,
        max_tokens: 4096,
        run: RunOptions { record_extras: false, ..RunOptions::default() },
    }
}

fn lines(p: &Path) -> Vec<J> {
    std::fs::read_to_string(p).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[tokio::test]
async fn reply_is_appended_with_usage_after_the_user_message() {
    let dir = tempfile::tempdir().unwrap();
    let file = support::copy_case(dir.path(), "basic-simple-chat");
    let before = lines(&file);
    let old_leaf = before.last().unwrap()["id"].as_str().unwrap().to_string();
    let server = Server::start(|r, _| ok_answer(Fmt::Anthropic, r, "Here is the plan.")).await;
    let done = continue_session(
        &file,
        None,
        "What next?",
        &support::anthropic_client(&server),
        &Backend::Offline,
        &opts(true, 200_000),
        &CancellationToken::new(),
        None,
    )
    .await
    .unwrap();
    assert!(done.compactions.is_empty());
    let after = lines(&file);
    assert_eq!(after.len(), before.len() + 2);
    let user = &after[after.len() - 2];
    let asst = &after[after.len() - 1];
    assert_eq!(user["parentId"], old_leaf.as_str());
    assert_eq!(user["message"]["content"][0]["text"], "What next?");
    assert_eq!(asst["parentId"], user["id"]);
    assert_eq!(asst["message"]["content"][0]["text"], "Here is the plan.");
    assert_eq!(asst["message"]["api"], "anthropic-messages");
    assert_eq!(asst["message"]["usage"]["input"], 120);
    assert_eq!(asst["message"]["usage"]["totalTokens"], 127);
    assert_eq!(asst["message"]["stopReason"], "stop");
    // The request: Arbor's system prompt, alternating turns, our text last.
    let body = server.requests()[0].json();
    assert_eq!(body["system"], summarizer::chat::SYSTEM);
    let msgs = body["messages"].as_array().unwrap();
    assert!(msgs.len() >= 3);
    for w in msgs.windows(2) {
        assert_ne!(w[0]["role"], w[1]["role"], "roles alternate");
    }
    assert_eq!(msgs[0]["role"], "user");
    assert!(msgs.last().unwrap()["content"][0]["text"].as_str().unwrap().ends_with("What next?"));
}

#[tokio::test]
async fn overflow_compacts_and_retries_once() {
    let dir = tempfile::tempdir().unwrap();
    let file = support::copy_case(dir.path(), "basic-tool-chain");
    let n0 = lines(&file).len();
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
        &opts(true, 200_000),
        &CancellationToken::new(),
        None,
    )
    .await
    .unwrap();
    assert_eq!(server.count(), 2, "one retry");
    assert_eq!(done.compactions.len(), 1);
    assert_eq!(done.compactions[0].reason.as_str(), "overflow");
    let after = lines(&file);
    assert_eq!(after.len(), n0 + 3, "user, compaction, assistant");
    let (user, comp, asst) = (&after[n0], &after[n0 + 1], &after[n0 + 2]);
    assert_eq!(comp["type"], "compaction");
    assert_eq!(comp["parentId"], user["id"]);
    assert_eq!(asst["parentId"], comp["id"]);
    assert_eq!(asst["message"]["content"][0]["text"], "fits now");
    // The retried request starts from the summary and still ends with the user's text.
    let body = server.requests()[1].json();
    let first = body["messages"][0]["content"][0]["text"].as_str().unwrap();
    assert!(
        first.starts_with(
            "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
        ),
        "{first}"
    );
    assert!(body["messages"].as_array().unwrap().last().unwrap()["content"][0]["text"]
        .as_str()
        .unwrap()
        .ends_with("continue"));

    // A second overflow after the compaction: a clear error, no second compaction.
    let file2 = support::copy_case(dir.path(), "basic-simple-chat");
    let server = Server::start(|_, _| {
        Script::json(400, &serde_json::json!({"error":{"type":"invalid_request_error","message":"prompt is too long"}}))
    })
    .await;
    let e = continue_session(
        &file2,
        None,
        "go",
        &support::anthropic_client(&server),
        &Backend::Offline,
        &opts(true, 200_000),
        &CancellationToken::new(),
        None,
    )
    .await
    .unwrap_err();
    assert!(matches!(e, Error::Overflow { .. }) && e.to_string().contains("after one automatic compaction"), "{e}");
    assert_eq!(server.count(), 2);
}

#[tokio::test]
async fn overflow_with_compaction_disabled_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = support::copy_case(dir.path(), "basic-simple-chat");
    let n0 = lines(&file).len();
    let server = Server::start(|_, _| {
        Script::json(
            400,
            &serde_json::json!({"error":{"message":"This model's maximum context length is 8192 tokens"}}),
        )
    })
    .await;
    let e = continue_session(
        &file,
        None,
        "go",
        &support::anthropic_client(&server),
        &Backend::Offline,
        &opts(false, 200_000),
        &CancellationToken::new(),
        None,
    )
    .await
    .unwrap_err();
    assert!(matches!(e, Error::OverflowCompactionDisabled { .. }), "{e:?}");
    assert!(e.to_string().contains("compact now"));
    assert_eq!(e.kind(), "overflowCompactionDisabled");
    let after = lines(&file);
    assert_eq!(after.len(), n0 + 1, "only the user message (as Pi)");
    assert!(after.iter().all(|l| l["type"] != "compaction"));
}

#[tokio::test]
async fn threshold_compacts_before_sending_and_after_the_reply() {
    let dir = tempfile::tempdir().unwrap();
    let file = support::copy_case(dir.path(), "basic-simple-chat");
    let n0 = lines(&file).len();
    let server = Server::start(|r, _| ok_answer(Fmt::Anthropic, r, "short reply")).await;
    // Window 16500 - reserve 16384 = 116: the fixture's last usage and the reply's (127) cross it.
    let done = continue_session(
        &file,
        None,
        "next",
        &support::anthropic_client(&server),
        &Backend::Offline,
        &opts(true, 16_500),
        &CancellationToken::new(),
        None,
    )
    .await
    .unwrap();
    let reasons: Vec<&str> = done.compactions.iter().map(|c| c.reason.as_str()).collect();
    assert_eq!(reasons, ["threshold", "threshold"]);
    let after = lines(&file);
    let types: Vec<&str> = after[n0..].iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["compaction", "message", "message", "compaction"]);
    // Disabled: no automatic compaction at all.
    let file2 = support::copy_case(dir.path(), "basic-user-only");
    let n2 = lines(&file2).len();
    continue_session(
        &file2,
        None,
        "next",
        &support::anthropic_client(&server),
        &Backend::Offline,
        &opts(false, 16_500),
        &CancellationToken::new(),
        None,
    )
    .await
    .unwrap();
    assert_eq!(lines(&file2).len(), n2 + 2);
}
