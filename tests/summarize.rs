//! The summarizer commands of the app without a window: compaction (offline and through a
//! loopback OpenAI-compatible server), navigation with a branch summary, the composer with
//! automatic compaction, cancel, hooks, and the IPC error kinds. Real files in temp dirs, a
//! real HTTP server on 127.0.0.1 written here.

use arbor_app::commands::keys;
use arbor_app::commands::sessions;
use arbor_app::commands::summarize;
use arbor_app::error::{ErrorKind, IpcError};
use arbor_app::state::app::AppState;
use arbor_app::view::budgets::{BudgetArgs, Budgets};
use arbor_app::view::keys::{HooksView, ModelChoice};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod support;
use support::provider::{block, budgets, fake, use_fake, Reply};
use support::Env;

/// The UI sends the budgets form flat, as the settings commands read and write it, plus the window.
#[test]
fn budget_args_read_the_forms_flat_shape() {
    let b: BudgetArgs = serde_json::from_str(
        r#"{"enabled":false,"reserveTokens":1,"keepRecentTokens":2,"branchReserveTokens":3,"contextWindow":4}"#,
    )
    .unwrap();
    assert_eq!(
        b.budgets,
        Budgets { enabled: false, reserve_tokens: 1, keep_recent_tokens: 2, branch_reserve_tokens: 3 }
    );
    assert_eq!(b.context_window, 4);
    assert!(
        serde_json::from_str::<BudgetArgs>(
            r#"{"enabled":false,"reserveTokens":1,"keepRecentTokens":2,"contextWindow":4}"#
        )
        .is_err(),
        "a missing budget is refused"
    );
}

fn lines(p: &PathBuf) -> Vec<serde_json::Value> {
    std::fs::read_to_string(p).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn ipc(e: arbor_app::error::AppError) -> IpcError {
    e.into()
}

#[test]
fn default_is_offline_and_compacts_with_instructions() {
    let e = Env::with_demo();
    let c = keys::config(&e.st).unwrap();
    assert!(c.offline && c.choice.provider == "offline");
    assert!(c.models.iter().any(|m| m.id == "gpt-4o-mini" && m.context_window == 128_000));
    let before = lines(&e.file).len();
    let leaf_before = sessions::describe(&e.state).unwrap().leaf_id.unwrap();
    let r = block(summarize::compact(&e.state, &e.st, &budgets(24000), Some("Keep the file paths"), None)).unwrap();
    let after = lines(&e.file);
    assert_eq!(after.len(), before + 1, "one compaction line appended");
    let last = after.last().unwrap();
    assert_eq!(last["type"], "compaction");
    assert_eq!(last["parentId"], serde_json::json!(leaf_before));
    assert_eq!(last["id"], serde_json::json!(r.entry_id));
    assert_eq!(last["details"]["offline"], true, "{}", last["details"]);
    assert!(r.offline && r.tokens_after < r.tokens_before, "{} -> {}", r.tokens_before, r.tokens_after);
    assert_eq!(r.session.leaf_id.as_deref(), Some(r.entry_id.as_str()), "the new compaction is the leaf");
    assert!(last["summary"].as_str().unwrap().contains("## Goal"));
}

#[test]
fn compaction_through_a_model_streams_and_cancel_appends_nothing() {
    let e = Env::with_demo();
    let f =
        fake(
            |_, body| {
                if body.contains("STALL") {
                    Reply::Stall
                } else {
                    Reply::Sse("## Goal\nModel summary one".into(), 100)
                }
            },
        );
    use_fake(&e, &f.base, 32000);
    let chunks = Arc::new(Mutex::new(String::new()));
    let c2 = chunks.clone();
    let progress: summarizer::ProgressFn = Arc::new(move |p| {
        if let summarizer::Progress::SummaryText { delta, .. } = p {
            c2.lock().unwrap().push_str(&delta);
        }
    });
    // A compaction that stalls; cancel it: it stops quickly and nothing is appended.
    let before = std::fs::read(&e.file).unwrap();
    let st = &e.st;
    let (res, cancelled_at, returned_at) = std::thread::scope(|sc| {
        let canceller = sc.spawn(|| {
            std::thread::sleep(Duration::from_millis(500));
            let ok = st.cancel_run();
            (ok, Instant::now())
        });
        let res = block(summarize::compact(&e.state, st, &budgets(32000), Some("STALL"), None));
        let returned_at = Instant::now();
        let (ok, at) = canceller.join().unwrap();
        assert!(ok, "a run was registered when cancel came");
        (res, at, returned_at)
    });
    let stopped_in = returned_at.saturating_duration_since(cancelled_at);
    let err = ipc(res.unwrap_err());
    assert_eq!(err.kind, ErrorKind::Cancelled, "{err:?}");
    assert!(stopped_in < Duration::from_millis(150), "cancel took {stopped_in:?}");
    eprintln!("cancel stopped the run in {stopped_in:?}");
    assert_eq!(std::fs::read(&e.file).unwrap(), before, "nothing appended after cancel");
    assert!(!st.cancel_run(), "the run is no longer registered");
    let r =
        block(summarize::compact(&e.state, &e.st, &budgets(32000), Some("focus on tests"), Some(progress))).unwrap();
    assert!(!r.offline);
    assert!(r.summary.starts_with("## Goal\nModel summary one"), "{}", r.summary);
    assert!(chunks.lock().unwrap().contains("Model summary one"), "progress streamed the text");
    assert!(
        f.reqs.lock().unwrap().iter().any(|(b, _)| b.contains("focus on tests")),
        "the instructions reach the model"
    );
}

/// A user message on another branch than the leaf's.
fn other_branch_target(e: &Env) -> String {
    let session = session_engine::Session::open(&e.file).unwrap();
    let leaf = session.file_leaf();
    let active: std::collections::HashSet<usize> = session.path(leaf).into_iter().collect();
    let idx = (0..session.len())
        .rev()
        .find(|i| !active.contains(i) && session.role(*i) == Some("user") && session.parent_of(*i).is_some())
        .expect("the demo has a user message off the active path");
    session.id(idx).to_string()
}

#[test]
fn navigate_with_and_without_summary() {
    let e = Env::with_demo();
    let target = other_branch_target(&e);
    let before = lines(&e.file).len();
    // Without a summary: nothing written, the leaf moves (to the user message's parent).
    let r = block(summarize::navigate(&e.state, &e.st, &target, false, None, &budgets(24000), None)).unwrap();
    assert_eq!(lines(&e.file).len(), before);
    assert!(r.summary_entry_id.is_none() && r.navigation.composer_text.is_some());
    assert!(r.navigation.session.leaf_moved);
    // Back to the file's leaf, then with a summary (offline) and instructions.
    let file_leaf = r.navigation.session.file_leaf_id.clone().unwrap();
    let back = block(summarize::navigate(&e.state, &e.st, &file_leaf, false, None, &budgets(24000), None)).unwrap();
    let left_from = back.navigation.session.leaf_id.clone().unwrap();
    let r =
        block(summarize::navigate(&e.state, &e.st, &target, true, Some("mention the paths"), &budgets(24000), None))
            .unwrap();
    let after = lines(&e.file);
    assert_eq!(after.len(), before + 1, "one branch_summary appended");
    let last = after.last().unwrap();
    assert_eq!(last["type"], "branch_summary");
    let session = session_engine::Session::open(&e.file).unwrap();
    let target_parent =
        session.parent_of(session.index_of(&target).unwrap()).map(|p| session.id(p).to_string()).unwrap();
    assert_eq!(last["fromId"], serde_json::json!(target_parent), "Pi's fromId: the branch point");
    assert_eq!(last["parentId"], serde_json::json!(target_parent));
    assert_ne!(left_from, target_parent);
    assert_eq!(Some(last["id"].as_str().unwrap()), r.summary_entry_id.as_deref());
    assert_eq!(r.navigation.session.leaf_id, r.summary_entry_id, "the summary is the new leaf");
    assert!(!r.navigation.session.leaf_moved, "Pi's leaf is the summary too");
    assert!(r.offline);
}

#[test]
fn failed_summary_cancels_the_navigation() {
    let e = Env::with_demo();
    // A closed port: the summary fails, so the navigation must not happen.
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!("http://{}/v1", l.local_addr().unwrap());
    drop(l);
    use_fake(&e, &dead, 32000);
    let target = other_branch_target(&e);
    let bytes = std::fs::read(&e.file).unwrap();
    let leaf = sessions::describe(&e.state).unwrap().leaf_id;
    let err = ipc(block(summarize::navigate(&e.state, &e.st, &target, true, None, &budgets(32000), None)).unwrap_err());
    assert_eq!(err.kind, ErrorKind::Provider, "{err:?}");
    assert!(err.message.contains("network") || err.message.contains("connect"), "{}", err.message);
    assert_eq!(std::fs::read(&e.file).unwrap(), bytes, "nothing written");
    assert_eq!(sessions::describe(&e.state).unwrap().leaf_id, leaf, "the leaf did not move");
}

#[test]
fn composer_appends_reply_and_compacts_automatically() {
    let e = Env::with_demo();
    // Request 1 is the chat; the reply reports a context near the window, so the threshold is
    // crossed after the reply and a compaction follows (request 2).
    let f = fake(|n, _| match n {
        1 => Reply::Sse("Here is my answer.".into(), 30000),
        _ => Reply::Sse("## Goal\nAuto summary".into(), 100),
    });
    use_fake(&e, &f.base, 32000);
    let err = ipc(block(summarize::send(&e.state, &e.st, "   ", &budgets(32000), None)).unwrap_err());
    assert_eq!(err.kind, ErrorKind::Invalid, "{err:?}");
    let before = lines(&e.file).len();
    let r = block(summarize::send(&e.state, &e.st, "What next?", &budgets(32000), None)).unwrap();
    let after = lines(&e.file);
    assert_eq!(r.reply, "Here is my answer.");
    let types: Vec<_> = after[before..].iter().map(|l| l["type"].as_str().unwrap().to_string()).collect();
    assert_eq!(types, ["message", "message", "compaction"], "user, assistant, automatic compaction");
    assert_eq!(after[before]["message"]["role"], "user");
    let a = &after[before + 1]["message"];
    assert_eq!(a["role"], "assistant");
    assert_eq!(a["usage"]["input"], 30000);
    assert_eq!(a["usage"]["output"], 9);
    assert_eq!(r.compactions.len(), 1);
    assert_eq!(r.compactions[0].reason, arbor_app::view::summarize::AutoCompactionReason::Threshold);
    assert_eq!(r.context_window, 32000, "the catalog's window");
    let chat_body: serde_json::Value = serde_json::from_str(&f.reqs.lock().unwrap()[0].0).unwrap();
    let msgs = chat_body["messages"].as_array().unwrap();
    assert!(msgs.last().unwrap()["content"].to_string().contains("What next?"));
    assert_eq!(r.session.leaf_id.as_deref(), Some(r.compactions[0].entry_id.as_str()));
}

#[test]
fn overflow_with_compaction_disabled_is_a_clear_error() {
    let e = Env::with_demo();
    let body = r#"{"error":{"message":"This model's maximum context length is 32000 tokens. However, your messages resulted in 50000 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}"#;
    let raw = format!("HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}", body.len());
    let f = fake(move |_, _| Reply::Raw(raw.clone()));
    let base = f.base.clone();
    use_fake(&e, &base, 32000);
    let mut b = budgets(32000);
    b.budgets.enabled = false;
    let err = ipc(block(summarize::send(&e.state, &e.st, "hello", &b, None)).unwrap_err());
    assert_eq!(err.kind, ErrorKind::CompactionDisabled, "{err:?}");
    assert!(err.hint.contains("Compact now"), "{}", err.hint);
}

#[test]
fn offline_cannot_answer_and_says_what_to_do() {
    let e = Env::with_demo();
    let err = ipc(block(summarize::send(&e.state, &e.st, "hello", &budgets(24000), None)).unwrap_err());
    assert_eq!(err.kind, ErrorKind::Refused);
    assert!(err.message.contains("choose a model provider"), "{}", err.message);
}

#[test]
fn hooks_round_trip_and_a_cancelling_hook_writes_nothing() {
    let e = Env::with_demo();
    let h = keys::hooks(&e.st).unwrap();
    assert!(h.before_compact.is_none());
    let script = e.tmp.path().join("cancel-hook.sh");
    std::fs::write(&script, "#!/bin/sh\ncat >/dev/null\necho '{\"cancel\": true}'\n").unwrap();
    let saved = keys::save_hooks(
        &e.st,
        &HooksView {
            before_compact: Some(format!("sh {}", script.display())),
            before_navigate: None,
            timeout_ms: 5000,
            branch_summary_max_tokens: Some(4096),
            artifact_ledger: false,
            path: None,
        },
    )
    .unwrap();
    assert_eq!(saved.before_compact.as_deref(), Some(format!("sh {}", script.display()).as_str()));
    assert_eq!(saved.branch_summary_max_tokens, Some(4096));
    let bytes = std::fs::read(&e.file).unwrap();
    let err = ipc(block(summarize::compact(&e.state, &e.st, &budgets(24000), None, None)).unwrap_err());
    assert_eq!(err.kind, ErrorKind::Hook, "{err:?}");
    assert_eq!(std::fs::read(&e.file).unwrap(), bytes);
}

#[test]
fn model_choice_is_checked_and_keys_never_travel_back() {
    let e = Env::with_demo();
    assert!(keys::save_choice(&e.st, &ModelChoice { provider: "openai".into(), model: None, base_url: None }).is_err());
    assert!(keys::save_choice(
        &e.st,
        &ModelChoice { provider: "nope".into(), model: Some("x".into()), base_url: None }
    )
    .is_err());
    assert!(keys::set_key("nope", "sk-x").is_err());
    // The key-state DTO has no field that could carry a key.
    let ks = serde_json::to_value(keys::key_state("openai")).unwrap();
    let fields: Vec<_> = ks.as_object().unwrap().keys().cloned().collect();
    assert_eq!(fields, ["provider", "stored", "problem"]);
}

/// Real Secret Service: store, ask, delete. Outside a D-Bus session (a plain `cargo test`) the
/// test runs itself again under scripts/with-secret-service.sh, which starts a private bus with
/// an unlocked gnome-keyring, so the real keyring is checked however the suite is started.
#[test]
fn keys_in_the_real_keyring() {
    const NAME: &str = "keys_in_the_real_keyring";
    if std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_none() {
        assert!(
            std::env::var_os("ARBOR_KEYRING_RERUN").is_none(),
            "scripts/with-secret-service.sh started no D-Bus session"
        );
        let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/with-secret-service.sh");
        let o = std::process::Command::new("bash")
            .arg(&script)
            .arg(std::env::current_exe().unwrap())
            .args([NAME, "--exact", "--test-threads=1"])
            .env("ARBOR_KEYRING_RERUN", "1")
            .output()
            .unwrap();
        let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
        assert!(
            o.status.success() && out.contains(&format!("test {NAME} ... ok")),
            "{NAME} under {} failed (scripts/setup.sh installs dbus and gnome-keyring):\n{out}{err}",
            script.display()
        );
        return;
    }
    let e = Env::with_demo();
    let status = e.st.keyring_status();
    assert!(status.ok, "{status:?}");
    let k = keys::set_key("gemini", "gm-app-test-secret-123").unwrap();
    assert!(k.stored);
    assert!(!serde_json::to_string(&k).unwrap().contains("gm-app-test"));
    let k = keys::delete_key("gemini").unwrap();
    assert!(!k.stored);
}

#[test]
fn overflow_compacts_and_retries_once() {
    let e = Env::with_demo();
    let chats = Arc::new(Mutex::new(0usize));
    let c2 = chats.clone();
    let overflow = r#"{"error":{"message":"This model's maximum context length is 32000 tokens. However, your messages resulted in 50000 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}"#;
    let raw =
        format!("HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{overflow}", overflow.len());
    let f = fake(move |_, body| {
        if body.contains("You are continuing a coding session") {
            let mut n = c2.lock().unwrap();
            *n += 1;
            if *n == 1 {
                return Reply::Raw(raw.clone());
            }
            return Reply::Sse("Answer after compaction.".into(), 1000);
        }
        Reply::Sse("## Goal\nOverflow summary".into(), 100)
    });
    use_fake(&e, &f.base, 32000);
    let before = lines(&e.file).len();
    let r = block(summarize::send(&e.state, &e.st, "Go on", &budgets(32000), None)).unwrap();
    assert_eq!(*chats.lock().unwrap(), 2, "the chat was retried once");
    assert_eq!(r.compactions.len(), 1);
    assert_eq!(r.compactions[0].reason, arbor_app::view::summarize::AutoCompactionReason::Overflow);
    let types: Vec<_> = lines(&e.file)[before..].iter().map(|l| l["type"].as_str().unwrap().to_string()).collect();
    assert_eq!(types, ["message", "compaction", "message"], "user, compaction, reply");
    assert_eq!(r.reply, "Answer after compaction.");
}

fn anthropic_sse(text: &str) -> String {
    let ev = |name: &str, data: serde_json::Value| format!("event: {name}\ndata: {data}\n\n");
    let mut out = String::from("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n");
    out += &ev(
        "message_start",
        serde_json::json!({"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"usage":{"input_tokens":500,"output_tokens":1}}}),
    );
    out += &ev(
        "content_block_start",
        serde_json::json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
    );
    out += &ev(
        "content_block_delta",
        serde_json::json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":text}}),
    );
    out += &ev("content_block_stop", serde_json::json!({"type":"content_block_stop","index":0}));
    out += &ev(
        "message_delta",
        serde_json::json!({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":20}}),
    );
    out += &ev("message_stop", serde_json::json!({"type":"message_stop"}));
    out
}

#[test]
fn anthropic_wire_and_retry_progress() {
    let e = Env::with_demo();
    // First request: 429 with retry-after 1 s; then Anthropic SSE answers.
    let f = fake(|n, _| {
        if n == 1 {
            let body = r#"{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}"#;
            return Reply::Raw(format!(
                "HTTP/1.1 429 Too Many Requests\r\ncontent-type: application/json\r\nretry-after: 1\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            ));
        }
        Reply::Raw(anthropic_sse("## Goal\nAnthropic summary"))
    });
    let host = f.base.trim_end_matches("/v1").to_string();
    keys::save_choice(
        &e.st,
        &ModelChoice { provider: "anthropic".into(), model: Some("claude-haiku-4-5".into()), base_url: Some(host) },
    )
    .unwrap();
    let c = keys::config(&e.st).unwrap();
    assert_eq!(c.context_window, Some(200_000), "built-in catalog window");
    let events = Arc::new(Mutex::new(Vec::new()));
    let ev2 = events.clone();
    let progress: summarizer::ProgressFn = Arc::new(move |p| ev2.lock().unwrap().push(format!("{p:?}")));
    let mut b = budgets(200_000);
    b.budgets.keep_recent_tokens = 20_000; // one summary call (no split turn), so the retry is the first request's
    let r = block(summarize::compact(&e.state, &e.st, &b, None, Some(progress))).unwrap();
    assert!(r.summary.starts_with("## Goal\nAnthropic summary"), "{}", r.summary);
    assert_eq!(r.summarizer, "anthropic claude-haiku-4-5");
    let ev = events.lock().unwrap();
    assert!(ev.iter().any(|e| e.starts_with("Retrying")), "{ev:?}");
    assert!(f.reqs.lock().unwrap().len() >= 2);
    let last = lines(&e.file).pop().unwrap();
    assert_eq!(last["details"]["summarizer"]["provider"], "anthropic");
}

/// Bytes this process has read so far (every `read` call, page cache or not): a full read of a
/// session file shows up as its size.
fn bytes_read() -> u64 {
    let io = std::fs::read_to_string("/proc/self/io").unwrap();
    io.lines().find_map(|l| l.strip_prefix("rchar: ")).unwrap().trim().parse().unwrap()
}

/// The demo session with a big abandoned branch (about 9 MB off its first entry), and one last
/// line (a label) back on the demo's path, so the context at the leaf stays the demo's.
fn big_demo(e: &Env) -> PathBuf {
    let demo = std::str::from_utf8(sessions::DEMO_SESSION).unwrap();
    let entries: Vec<serde_json::Value> =
        demo.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect();
    let first = entries[1]["id"].as_str().unwrap().to_string();
    let session = session_engine::Session::open(&e.file).unwrap();
    let leaf = session.id(session.file_leaf().unwrap()).to_string();
    let mut out = demo.trim_end().to_string();
    let mut parent = first;
    for k in 0..800 {
        let id = format!("b{k:07x}");
        let text = format!("abandoned {k} ").repeat(800);
        let line = serde_json::json!({"type":"message","id":id,"parentId":parent,"timestamp":"2025-03-01T10:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":text}],"timestamp":1740823200000u64}});
        out.push('\n');
        out.push_str(&line.to_string());
        parent = id;
    }
    let label = serde_json::json!({"type":"label","id":"c0000001","parentId":leaf,"timestamp":"2025-03-01T11:00:00.000Z","targetId":leaf,"label":"back"});
    out.push('\n');
    out.push_str(&label.to_string());
    out.push('\n');
    let p = e.file.with_file_name("2025-03-01T10-00-00-000Z_big.jsonl");
    std::fs::write(&p, out).unwrap();
    p
}

/// Entries (id, parent) in file order, the file's leaf and length.
type Shape = (Vec<(String, Option<String>)>, Option<String>, u64);

fn shape(session: &session_engine::Session) -> Shape {
    let ids = (0..session.len())
        .map(|i| (session.id(i).to_string(), session.parent_of(i).map(|p| session.id(p).to_string())))
        .collect();
    (ids, session.file_leaf().map(|l| session.id(l).to_string()), session.file_len())
}

fn held_shape(state: &AppState) -> Shape {
    state.with_open(|o| Ok(shape(&o.session))).unwrap()
}

/// No re-reading, so that a send on a big session costs what it appends: a send works on the
/// session the app holds. The file is not read again (the bytes read during the send are a small
/// part of it), and afterwards the held session is exactly what a fresh open of the file gives.
#[test]
fn send_reads_only_what_it_appends_and_leaves_the_held_session_equal_to_the_file() {
    let e = Env::with_demo();
    let big = big_demo(&e);
    let size = std::fs::metadata(&big).unwrap().len();
    assert!(size > 8_000_000, "{size}");
    sessions::open(&e.state, &big, false).unwrap();
    let f = fake(|_, _| Reply::Sse("Answered.".into(), 1000));
    use_fake(&e, &f.base, 200_000);
    let read0 = bytes_read();
    let r = block(summarize::send(&e.state, &e.st, "Go on", &budgets(200_000), None)).unwrap();
    let read = bytes_read() - read0;
    assert!(read < size / 4, "the send read {read} bytes of a {size}-byte session: the file was read again");
    assert_eq!(r.reply, "Answered.");
    let fresh = session_engine::Session::open(&big).unwrap();
    assert_eq!(held_shape(&e.state), shape(&fresh), "the held session has the file's entries, leaf and length");
    assert_eq!(r.session.leaf_id.as_deref(), Some(r.assistant_entry_id.as_str()));
    assert_eq!(r.session.entry_count as usize, fresh.len());
    let body: serde_json::Value = serde_json::from_str(&f.reqs.lock().unwrap()[0].0).unwrap();
    assert!(!body.to_string().contains("abandoned 1 "), "the context is the leaf's path, not the abandoned branch");
    // A compaction and a navigation with a summary work on the held session the same way.
    let read0 = bytes_read();
    let c = block(summarize::compact(&e.state, &e.st, &budgets(200_000), None, None)).unwrap();
    let read = bytes_read() - read0;
    assert!(read < size / 4, "the compaction read {read} bytes of a {size}-byte session");
    assert_eq!(held_shape(&e.state), shape(&session_engine::Session::open(&big).unwrap()));
    assert_eq!(c.session.leaf_id.as_deref(), Some(c.entry_id.as_str()));
}

/// Another session opened while the model answers: the send stops with a clear error, nothing
/// more is written to the first file (its user message stays, as after any failed request), and
/// the session now open is left as it is.
#[test]
fn a_session_opened_during_the_reply_stops_the_send_with_nothing_more_written() {
    let e = Env::with_demo();
    let other = e.file.with_file_name("2025-03-04T09-00-00-000Z_other.jsonl");
    std::fs::write(&other, sessions::DEMO_SESSION).unwrap();
    let (got_tx, got_rx) = std::sync::mpsc::channel::<()>();
    let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
    let (got_tx, go_rx) = (Mutex::new(got_tx), Mutex::new(go_rx));
    let f = fake(move |_, _| {
        got_tx.lock().unwrap().send(()).unwrap();
        go_rx.lock().unwrap().recv_timeout(Duration::from_secs(10)).unwrap();
        Reply::Sse("Too late.".into(), 1000)
    });
    use_fake(&e, &f.base, 32000);
    let before = lines(&e.file).len();
    let other_bytes = std::fs::read(&other).unwrap();
    let (state, other_path) = (&e.state, other.as_path());
    let res = std::thread::scope(|sc| {
        sc.spawn(move || {
            got_rx.recv_timeout(Duration::from_secs(10)).unwrap();
            // The user clicks another session in the picker while the model answers.
            sessions::open(state, other_path, false).unwrap();
            go_tx.send(()).unwrap();
        });
        block(summarize::send(state, &e.st, "Anyone there?", &budgets(32000), None))
    });
    let err = ipc(res.unwrap_err());
    assert_eq!(err.kind, ErrorKind::Refused, "{err:?}");
    assert!(err.message.contains("another session was opened"), "{}", err.message);
    let after = lines(&e.file);
    assert_eq!(after.len(), before + 1, "only the user message, written before the request");
    assert_eq!(after[before]["message"]["role"], "user");
    assert_eq!(std::fs::read(&other).unwrap(), other_bytes, "the other session was not written to");
    let now = sessions::describe(&e.state).unwrap();
    assert_eq!(now.path, other.display().to_string(), "the session opened meanwhile stays open");
    assert_eq!(held_shape(&e.state), shape(&session_engine::Session::open(&other).unwrap()));
}

/// "Compact up to here": the preview and the compaction keep from the chosen entry (the file gains
/// one compaction line whose `firstKeptEntryId` is it; the context then opens with the summary
/// and goes on from it); an entry that is no valid cut point is refused, naming valid ones, and
/// the file's bytes stay as they were.
#[test]
fn compact_up_to_here_keeps_from_the_chosen_entry_or_refuses_with_valid_points() {
    use session_engine::Session;
    let e = Env::with_demo();
    let session = Session::open(&e.file).unwrap();
    let leaf = session.file_leaf();
    let path = session.path(leaf);
    let valid = pi_review::cut::valid_cut_positions(&session, &path);
    assert!(valid.len() >= 3, "the demo's active path has cut points: {valid:?}");
    // A cut well before where the keep-recent budget would put it: most of the path stays.
    let chosen_pos = valid[valid.len() / 2];
    let chosen = session.id(path[chosen_pos]).to_string();
    let tool_result = path[chosen_pos..]
        .iter()
        .find(|&&i| session.role(i) == Some("toolResult"))
        .map(|&i| session.id(i).to_string())
        .expect("a tool result on the active path after the cut");
    let other_branch = other_branch_target(&e);
    drop(session);

    // Refused: a tool result, and an entry of another branch. Nothing is written.
    let before = std::fs::read(&e.file).unwrap();
    for bad in [&tool_result, &other_branch] {
        let p = summarize::preview_here(&e.state, &budgets(24000), bad).unwrap();
        assert!(p.plan.is_none(), "{bad}: {p:?}");
        let r = p.refusal.expect("a refusal");
        assert!(!r.nearest.is_empty(), "{bad}: the refusal names valid points: {r:?}");
        let session = Session::open(&e.file).unwrap();
        for c in &r.nearest {
            let pos =
                path.iter().position(|&i| session.id(i) == c.entry_id).expect("a named point is on the active path");
            assert!(valid.contains(&pos), "{} is a valid cut point", c.entry_id);
        }
        let err = ipc(block(summarize::compact_here(&e.state, &e.st, &budgets(24000), bad, None, None)).unwrap_err());
        assert_eq!(err.kind, ErrorKind::Refused, "{err:?}");
        assert!(err.message.contains("nearest valid cut points"), "{}", err.message);
        assert_eq!(std::fs::read(&e.file).unwrap(), before, "{bad}: nothing written");
    }
    let p = summarize::preview_here(&e.state, &budgets(24000), &tool_result).unwrap();
    assert!(p.refusal.unwrap().message.contains("tool result"));

    // The preview of a valid point: what is summarized, what stays, the context after.
    let p = summarize::preview_here(&e.state, &budgets(24000), &chosen).unwrap();
    assert!(p.refusal.is_none(), "{p:?}");
    let plan = p.plan.unwrap();
    assert!(plan.summarized_messages > 0 && plan.summarized_tokens > 0, "{plan:?}");
    assert_eq!(plan.kept_entries as usize, path.len() - chosen_pos);
    assert!(plan.kept_tokens > 0 && plan.kept_tokens < plan.tokens_before, "{plan:?}");
    assert!(plan.messages_after >= 2);
    assert_eq!(std::fs::read(&e.file).unwrap(), before, "a preview writes nothing");

    // Compact: one compaction line, kept from the chosen entry.
    let n = lines(&e.file).len();
    let r = block(summarize::compact_here(&e.state, &e.st, &budgets(24000), &chosen, None, None)).unwrap();
    let after = lines(&e.file);
    assert_eq!(after.len(), n + 1, "one line appended");
    let last = after.last().unwrap();
    assert_eq!(last["type"], "compaction");
    assert_eq!(last["id"], serde_json::json!(r.entry_id));
    assert_eq!(last["firstKeptEntryId"], serde_json::json!(chosen));
    assert_eq!(r.session.leaf_id.as_deref(), Some(r.entry_id.as_str()));
    // The file, read again as Pi would: the summary, then the chosen entry and what follows.
    let session = Session::open(&e.file).unwrap();
    let ctx = session_engine::context::build_context(&session, session.file_leaf());
    assert_eq!(ctx.messages[0].message.str_field("role"), Some("compactionSummary"));
    assert_eq!(session.id(ctx.messages[1].entry), chosen, "the context goes on from the chosen entry");
    assert_eq!(ctx.messages.len() as u32, plan.messages_after, "the preview's context after");
}
