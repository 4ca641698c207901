//! Provider tests against real HTTP servers on 127.0.0.1 (tests/support/loopback.rs), one
//! test per fault of RELIABILITY.md F37–F46 and F53, for each wire format where the fault is
//! format-specific. Timeouts and backoff are short and configurable, so nothing sleeps long.
mod support;
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};
use summarizer::{
    ApiKey, CancellationToken, Client, CompletionRequest, Error, Progress, ProviderConfig, RetryPolicy, Timeouts, Wire,
};
use support::loopback::{ok_answer, ok_answer_as, Fmt, Script, Server, Step, ALL_FMTS};

const CANARY: &str = "sk-canary-0123456789abcdefDEADBEEF";

fn config(fmt: Fmt, server: &Server, stream: bool) -> ProviderConfig {
    let wire = Wire::parse(fmt.provider()).unwrap();
    let mut cfg = ProviderConfig::new(wire, "test-model", Some(ApiKey::new(CANARY)));
    cfg.base_url = if fmt == Fmt::OpenAi { server.base_v1() } else { server.base() };
    cfg.stream = stream;
    cfg.timeouts = Timeouts { connect: Duration::from_secs(2), read_idle: Duration::from_millis(400) };
    cfg.retry = RetryPolicy {
        max_retries: 3,
        base_delay: Duration::from_millis(20),
        max_delay: Duration::from_millis(80),
        max_server_wait: Duration::from_secs(60),
    };
    cfg.context_window = 200_000;
    cfg
}

fn client(fmt: Fmt, server: &Server, stream: bool) -> Client {
    Client::new(config(fmt, server, stream)).unwrap()
}

fn req() -> CompletionRequest {
    CompletionRequest {
        system: "SYSTEM PROMPT".into(),
        prompt: "<conversation>\nhi\n</conversation>".into(),
        max_tokens: 1234,
        ..Default::default()
    }
}

async fn run(c: &Client) -> Result<summarizer::Completion, Error> {
    c.complete(&req(), &CancellationToken::new(), None).await
}

/// F53: no error text, Debug or Display, ever holds the key.
fn assert_no_key(e: &Error) {
    let shown = format!("{e} | {e:?}");
    assert!(!shown.contains(CANARY), "key leaked: {shown}");
    assert!(!shown.contains("0123456789abcdef"), "key fragment leaked: {shown}");
}

#[tokio::test]
async fn each_format_streams_and_answers_whole_with_key_in_headers_only() {
    for fmt in ALL_FMTS {
        for stream in [true, false] {
            let server = Server::start(move |r, _| ok_answer(fmt, r, "## Goal\nShip it ✓")).await;
            let c = client(fmt, &server, stream);
            let got = run(&c).await.unwrap_or_else(|e| panic!("{fmt:?} stream={stream}: {e}"));
            assert_eq!(got.text, "## Goal\nShip it ✓", "{fmt:?} {stream}");
            assert_eq!(got.usage.output, 7);
            assert_eq!(got.attempts, 1);
            let r = &server.requests()[0];
            assert_eq!(r.method, "POST");
            assert!(!r.target.contains(CANARY), "key in URL: {}", r.target);
            let body = r.json();
            match fmt {
                Fmt::OpenAi => {
                    assert_eq!(r.target, "/v1/chat/completions");
                    assert_eq!(r.header("authorization"), Some(format!("Bearer {CANARY}").as_str()));
                    assert_eq!(body["messages"][0]["content"], "SYSTEM PROMPT");
                    assert_eq!(body["max_tokens"], 1234);
                    assert_eq!(body["stream"], stream);
                }
                Fmt::Anthropic => {
                    assert_eq!(r.target, "/v1/messages");
                    assert_eq!(r.header("x-api-key"), Some(CANARY));
                    assert_eq!(r.header("anthropic-version"), Some("2023-06-01"));
                    assert_eq!(body["system"], "SYSTEM PROMPT");
                    assert_eq!(body["max_tokens"], 1234);
                }
                Fmt::Gemini => {
                    let want = if stream {
                        "/v1beta/models/test-model:streamGenerateContent?alt=sse"
                    } else {
                        "/v1beta/models/test-model:generateContent"
                    };
                    assert_eq!(r.target, want);
                    assert_eq!(r.header("x-goog-api-key"), Some(CANARY));
                    assert_eq!(body["generationConfig"]["maxOutputTokens"], 1234);
                    assert_eq!(body["systemInstruction"]["parts"][0]["text"], "SYSTEM PROMPT");
                }
            }
        }
    }
}

#[tokio::test]
async fn f37_429_retry_after_seconds_ms_and_http_date_are_honoured() {
    let cases: Vec<(&str, String, Duration)> = vec![
        ("retry-after", "1".into(), Duration::from_millis(1000)),
        ("retry-after-ms", "300".into(), Duration::from_millis(300)),
        // An HTTP-date 2 s ahead, computed when the server answers (dates have 1 s precision).
        ("retry-after", "DATE+2".into(), Duration::from_millis(900)),
    ];
    for (name, value, min_wait) in cases {
        let v = value.clone();
        let server = Server::start(move |r, n| {
            let v = if v == "DATE+2" {
                httpdate::fmt_http_date(std::time::SystemTime::now() + Duration::from_secs(2))
            } else {
                v.clone()
            };
            if n == 0 {
                Script::response(
                    429,
                    &[(name, &v), ("content-type", "application/json")],
                    r#"{"error":{"type":"rate_limit_error","message":"slow down"}}"#,
                )
            } else {
                ok_answer(Fmt::Anthropic, r, "done")
            }
        })
        .await;
        let c = client(Fmt::Anthropic, &server, true);
        let seen: Arc<std::sync::Mutex<Vec<Duration>>> = Arc::default();
        let s2 = seen.clone();
        let progress: summarizer::ProgressFn = Arc::new(move |p| {
            if let Progress::Retrying { delay, .. } = p {
                s2.lock().unwrap().push(delay);
            }
        });
        let t = Instant::now();
        let got = c.complete(&req(), &CancellationToken::new(), Some(&progress)).await.unwrap();
        let took = t.elapsed();
        assert_eq!(got.text, "done");
        assert_eq!(got.attempts, 2);
        assert_eq!(server.count(), 2);
        assert!(took >= min_wait, "{name}={value}: waited only {took:?}");
        assert!(took < Duration::from_secs(5), "{took:?}");
        let delays = seen.lock().unwrap().clone();
        assert_eq!(delays.len(), 1);
        assert!(delays[0] >= min_wait, "{delays:?}");
    }
}

#[tokio::test]
async fn f38_long_retry_after_quota_and_should_retry_false_are_not_retried() {
    // retry-after 3600 s is above the 60 s cap: fail at once with "try later".
    let server = Server::start(|_, _| {
        Script::response(429, &[("retry-after", "3600")], r#"{"error":{"message":"rate limited"}}"#)
    })
    .await;
    let t = Instant::now();
    let e = run(&client(Fmt::OpenAi, &server, true)).await.unwrap_err();
    assert!(matches!(e, Error::RetryTooLong { .. }), "{e:?}");
    assert!(e.to_string().contains("3600s"), "{e}");
    assert_eq!(server.count(), 1);
    assert!(t.elapsed() < Duration::from_secs(1));

    for body in [
        json!({"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","code":"insufficient_quota"}}),
        json!({"error":{"type":"invalid_request_error","message":"enforced_spend_limit_reached"}}),
    ] {
        let b = body.clone();
        let server = Server::start(move |_, _| Script::json(429, &b)).await;
        let e = run(&client(Fmt::OpenAi, &server, true)).await.unwrap_err();
        assert!(matches!(e, Error::Quota { .. }), "{e:?}");
        assert_eq!(server.count(), 1, "quota errors are never retried");
    }

    let server =
        Server::start(|_, _| Script::response(503, &[("x-should-retry", "false")], r#"{"error":{"message":"nope"}}"#))
            .await;
    let e = run(&client(Fmt::Anthropic, &server, true)).await.unwrap_err();
    assert!(matches!(e, Error::Http { status: 503, retryable: false, .. }), "{e:?}");
    assert_eq!(server.count(), 1);
}

#[tokio::test]
async fn f39_5xx_retried_up_to_the_limit_then_overloaded_with_request_id() {
    for status in [500u16, 502, 503, 504, 529, 408] {
        let server = Server::start(move |_, _| {
            Script::response(
                status,
                &[("x-request-id", "req_abc123"), ("content-type", "application/json")],
                r#"{"error":{"type":"overloaded_error","message":"Overloaded"}}"#,
            )
        })
        .await;
        let e = run(&client(Fmt::Anthropic, &server, true)).await.unwrap_err();
        assert_eq!(server.count(), 4, "status {status}: 1 try + 3 retries");
        match &e {
            Error::Http { status: s, request_id, attempts, .. } => {
                assert_eq!(*s, status);
                assert_eq!(request_id.as_deref(), Some("req_abc123"));
                assert_eq!(*attempts, 4);
            }
            other => panic!("{other:?}"),
        }
        assert!(e.to_string().contains("req_abc123") && e.to_string().contains("overloaded"), "{e}");
    }
    // Transient then fine.
    let server = Server::start(|r, n| {
        if n < 2 {
            Script::response(502, &[], "bad gateway")
        } else {
            ok_answer(Fmt::Gemini, r, "ok now")
        }
    })
    .await;
    let got = run(&client(Fmt::Gemini, &server, true)).await.unwrap();
    assert_eq!((got.text.as_str(), got.attempts), ("ok now", 3));
}

#[tokio::test]
async fn f40_overflow_in_each_providers_wording_is_classified_and_never_retried() {
    let bodies = [
        (
            Fmt::Anthropic,
            400,
            json!({"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}),
        ),
        (
            Fmt::Anthropic,
            413,
            json!({"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}),
        ),
        (
            Fmt::OpenAi,
            400,
            json!({"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}),
        ),
        (
            Fmt::OpenAi,
            400,
            json!({"error":{"message":"Your input exceeds the context window of this model.","type":"invalid_request_error"}}),
        ),
        (
            Fmt::Gemini,
            400,
            json!({"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}),
        ),
    ];
    for (fmt, status, body) in bodies {
        let b = body.clone();
        let server = Server::start(move |_, _| Script::json(status, &b)).await;
        let e = run(&client(fmt, &server, true)).await.unwrap_err();
        assert!(matches!(e, Error::Overflow { .. }), "{fmt:?}: {e:?}");
        assert!(!e.is_retryable());
        assert_eq!(server.count(), 1);
    }
    // Silent overflow: a "successful" answer whose usage is above the window.
    let server = Server::start(|_, _| {
        Script::json(200, &json!({"choices":[{"message":{"content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":250000,"completion_tokens":3}}))
    })
    .await;
    let e = run(&client(Fmt::OpenAi, &server, false)).await.unwrap_err();
    assert!(matches!(e, Error::Overflow { .. }), "{e:?}");
    // Rate-limit wording that mentions tokens is *not* overflow.
    let server = Server::start(|r, n| {
        if n == 0 {
            Script::json(429, &json!({"error":{"message":"Rate limit reached: too many tokens per minute"}}))
        } else {
            ok_answer(Fmt::OpenAi, r, "fine")
        }
    })
    .await;
    assert_eq!(run(&client(Fmt::OpenAi, &server, true)).await.unwrap().text, "fine");
}

#[tokio::test]
async fn f41_401_403_413_are_not_retried_and_never_echo_the_key() {
    for (status, want) in [(401u16, "unauthorized"), (403, "forbidden"), (413, "tooLarge")] {
        let body = format!(
            r#"{{"error":{{"message":"Incorrect API key provided: {CANARY}. Find your key at https://example"}}}}"#
        );
        let server =
            Server::start(move |_, _| Script::response(status, &[("content-type", "application/json")], &body)).await;
        let e = run(&client(Fmt::OpenAi, &server, true)).await.unwrap_err();
        assert_eq!(e.kind(), want, "{e:?}");
        assert_eq!(server.count(), 1);
        assert_no_key(&e);
    }
}

#[tokio::test]
async fn f42_no_headers_and_mid_stream_stall_fail_within_the_idle_timeout() {
    // Headers never come.
    let server = Server::start(|_, _| Script(vec![Step::Hang])).await;
    let mut cfg = config(Fmt::OpenAi, &server, true);
    cfg.retry.max_retries = 0;
    let c = Client::new(cfg).unwrap();
    let t = Instant::now();
    let e = run(&c).await.unwrap_err();
    assert!(matches!(e, Error::Timeout { .. }), "{e:?}");
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());

    // Stream starts, then stalls: partial text is discarded.
    for fmt in ALL_FMTS {
        let server = Server::start(move |_, _| {
            let mut s = ok_answer_as(fmt, true, "partial text here", "stop");
            s.0.truncate(2); // head + first event
            s.then(Step::Hang)
        })
        .await;
        let mut cfg = config(fmt, &server, true);
        cfg.retry.max_retries = 0;
        let t = Instant::now();
        let e = run(&Client::new(cfg).unwrap()).await.unwrap_err();
        assert!(matches!(e, Error::Timeout { .. }), "{fmt:?}: {e:?}");
        let took = t.elapsed();
        assert!(took >= Duration::from_millis(390) && took < Duration::from_secs(3), "{took:?}");
    }

    // A slow but steady stream is fine: idle timeout, not a total deadline.
    let server = Server::start(|_, _| {
        let mut s = Script::sse_head(200);
        for i in 0..6 {
            s = s
                .then(Step::Sleep(Duration::from_millis(150)))
                .data(&json!({"choices":[{"delta":{"content":format!("w{i} ")},"finish_reason":null}]}).to_string());
        }
        s.data(&json!({"choices":[{"delta":{},"finish_reason":"stop"}]}).to_string()).data("[DONE]")
    })
    .await;
    let deltas: Arc<std::sync::Mutex<Vec<String>>> = Arc::default();
    let d2 = deltas.clone();
    let progress: summarizer::ProgressFn = Arc::new(move |p| {
        if let Progress::Text { delta, .. } = p {
            d2.lock().unwrap().push(delta);
        }
    });
    let got =
        client(Fmt::OpenAi, &server, true).complete(&req(), &CancellationToken::new(), Some(&progress)).await.unwrap();
    assert_eq!(got.text, "w0 w1 w2 w3 w4 w5 ");
    let deltas = deltas.lock().unwrap().clone();
    assert_eq!(deltas.concat(), got.text, "streamed pieces add up to the answer");
    assert!(deltas.len() >= 6, "{deltas:?}");
}

#[tokio::test]
async fn f43_truncated_streams_are_incomplete_in_each_format() {
    for fmt in ALL_FMTS {
        let server = Server::start(move |_, _| {
            let mut s = ok_answer_as(fmt, true, "half of a summary", "stop");
            // Drop the end marker(s): OpenAI loses finish+usage+[DONE], Anthropic loses
            // message_delta+message_stop, Gemini loses the chunk with finishReason.
            let keep = match fmt {
                Fmt::OpenAi => 3,
                Fmt::Anthropic => 6,
                Fmt::Gemini => 2,
            };
            s.0.truncate(keep);
            s
        })
        .await;
        let mut cfg = config(fmt, &server, true);
        cfg.retry.max_retries = 1;
        let e = run(&Client::new(cfg).unwrap()).await.unwrap_err();
        assert!(matches!(e, Error::Incomplete { .. }), "{fmt:?}: {e:?}");
        assert_eq!(server.count(), 2, "a truncated stream is transient: retried once");
    }
    // A body shorter than its content-length (connection cut).
    let server = Server::start(|_, _| {
        Script(vec![Step::Write(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 500\r\n\r\n{\"choices\":[".to_vec(),
        )])
    })
    .await;
    let mut cfg = config(Fmt::OpenAi, &server, false);
    cfg.retry.max_retries = 0;
    let e = run(&Client::new(cfg).unwrap()).await.unwrap_err();
    assert!(matches!(e, Error::Incomplete { .. }), "{e:?}");
}

#[tokio::test]
async fn f43_error_event_after_200() {
    let server = Server::start(|_, _| {
        Script::sse_head(200)
            .event("message_start", &json!({"type":"message_start","message":{"usage":{"input_tokens":5}}}).to_string())
            .event(
                "content_block_delta",
                &json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"so far"}})
                    .to_string(),
            )
            .event(
                "error",
                &json!({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}).to_string(),
            )
    })
    .await;
    let mut cfg = config(Fmt::Anthropic, &server, true);
    cfg.retry.max_retries = 2;
    let e = run(&Client::new(cfg).unwrap()).await.unwrap_err();
    assert!(matches!(e, Error::StreamError { retryable: true, .. }), "{e:?}");
    assert_eq!(server.count(), 3);

    for fmt in [Fmt::OpenAi, Fmt::Gemini] {
        let server = Server::start(|_, _| {
            Script::sse_head(200)
                .data(r#"{"choices":[{"delta":{"content":"x"}}],"candidates":[{"content":{"parts":[{"text":"x"}]}}]}"#)
                .data(r#"{"error":{"message":"invalid request: bad field","code":400}}"#)
        })
        .await;
        let e = run(&client(fmt, &server, true)).await.unwrap_err();
        assert!(matches!(e, Error::StreamError { retryable: false, .. }), "{fmt:?} {e:?}");
        assert_eq!(server.count(), 1);
    }
}

#[tokio::test]
async fn f43_malformed_sse_json_and_html_pages() {
    for fmt in ALL_FMTS {
        let server = Server::start(|_, _| Script::sse_head(200).data("{\"choices\": [ {oops").data("[DONE]")).await;
        let e = run(&client(fmt, &server, true)).await.unwrap_err();
        assert!(matches!(e, Error::Invalid { .. }), "{fmt:?}: {e:?}");
    }
    // HTML with 200 (captive portal, wrong base URL): not an answer.
    let html = "<!DOCTYPE html><html><body><h1>Welcome</h1></body></html>";
    let server = Server::start(move |_, _| Script::response(200, &[("content-type", "text/html")], html)).await;
    let e = run(&client(Fmt::Gemini, &server, false)).await.unwrap_err();
    assert!(matches!(e, Error::HtmlPage { status: 200 }), "{e:?}");
    // HTML 502 from a proxy: transient, retried, then fine.
    let server = Server::start(move |r, n| {
        if n == 0 {
            Script::response(502, &[("content-type", "text/html")], html)
        } else {
            ok_answer(Fmt::Anthropic, r, "ok")
        }
    })
    .await;
    assert_eq!(run(&client(Fmt::Anthropic, &server, false)).await.unwrap().text, "ok");
    // HTML 404: wrong base URL, not retried.
    let server = Server::start(move |_, _| Script::response(404, &[("content-type", "text/html")], html)).await;
    let e = run(&client(Fmt::OpenAi, &server, true)).await.unwrap_err();
    assert!(matches!(e, Error::HtmlPage { status: 404 }), "{e:?}");
    assert!(e.to_string().contains("base URL"));
    assert_eq!(server.count(), 1);
}

#[tokio::test]
async fn f44_max_tokens_stop_empty_answer_and_refusal_are_errors() {
    for fmt in ALL_FMTS {
        for stream in [true, false] {
            let server = Server::start(move |_, _| ok_answer_as(fmt, stream, "cut off mid-sent", "length")).await;
            let e = run(&client(fmt, &server, stream)).await.unwrap_err();
            assert!(matches!(e, Error::MaxTokens { limit: 1234 }), "{fmt:?} {stream}: {e:?}");

            let server = Server::start(move |_, _| ok_answer_as(fmt, stream, "  \n", "stop")).await;
            let e = run(&client(fmt, &server, stream)).await.unwrap_err();
            assert!(matches!(e, Error::Empty), "{fmt:?} {stream}: {e:?}");
        }
    }
    let server = Server::start(|_, _| ok_answer_as(Fmt::Gemini, true, "no", "SAFETY")).await;
    assert!(matches!(run(&client(Fmt::Gemini, &server, true)).await.unwrap_err(), Error::Refused { .. }));
    let server = Server::start(|_, _| ok_answer_as(Fmt::Anthropic, false, "I can't", "refusal")).await;
    assert!(matches!(run(&client(Fmt::Anthropic, &server, false)).await.unwrap_err(), Error::Refused { .. }));
}

#[tokio::test]
async fn f45_cancel_during_request_and_during_backoff_stops_fast() {
    // During the request.
    let server = Server::start(|_, _| Script::sse_head(200).then(Step::Hang)).await;
    let mut cfg = config(Fmt::OpenAi, &server, true);
    cfg.timeouts.read_idle = Duration::from_secs(30);
    let c = Client::new(cfg).unwrap();
    let cancel = support::cancel_after(200);
    let t = Instant::now();
    let e = c.complete(&req(), &cancel, None).await.unwrap_err();
    assert!(matches!(e, Error::Cancelled), "{e:?}");
    let took = t.elapsed();
    assert!(took < Duration::from_millis(300), "stopped {took:?} after start, cancel was at 200 ms");

    // During the backoff sleep: the server asks for 30 s.
    let server = Server::start(|_, _| Script::response(429, &[("retry-after", "30")], "{}")).await;
    let c = client(Fmt::Gemini, &server, true);
    let cancel = support::cancel_after(150);
    let t = Instant::now();
    let e = c.complete(&req(), &cancel, None).await.unwrap_err();
    assert!(matches!(e, Error::Cancelled), "{e:?}");
    assert!(t.elapsed() < Duration::from_millis(250), "{:?}", t.elapsed());
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(server.count(), 1, "no further retries after cancel");
}

#[tokio::test]
async fn f46_endless_or_huge_body_is_capped() {
    let server = Server::start(|_, _| {
        Script::sse_head(200).then(Step::Forever(
            br#"data: {"choices":[{"delta":{"content":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}}]}

"#
            .to_vec(),
        ))
    })
    .await;
    let mut cfg = config(Fmt::OpenAi, &server, true);
    cfg.max_response_bytes = 256 * 1024;
    let e = run(&Client::new(cfg).unwrap()).await.unwrap_err();
    assert!(matches!(e, Error::ResponseTooLarge { limit: 262144 }), "{e:?}");
    assert_eq!(server.count(), 1, "too large is not retried");

    let server = Server::start(|_, _| Script::sse_head(200).then(Step::Forever(vec![b'x'; 8192]))).await;
    let mut cfg = config(Fmt::Gemini, &server, false);
    cfg.max_response_bytes = 64 * 1024;
    let e = run(&Client::new(cfg).unwrap()).await.unwrap_err();
    assert!(matches!(e, Error::ResponseTooLarge { .. }), "{e:?}");
}

#[tokio::test]
async fn f53_canary_key_never_appears_in_errors_or_debug() {
    // Connection refused: reqwest's error would carry the URL; keys are never in it anyway.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    for fmt in ALL_FMTS {
        let wire = Wire::parse(fmt.provider()).unwrap();
        let mut cfg = ProviderConfig::new(wire, "m", Some(ApiKey::new(CANARY)));
        cfg.base_url = format!("http://127.0.0.1:{port}");
        cfg.retry.max_retries = 0;
        let c = Client::new(cfg).unwrap();
        assert!(!format!("{c:?}").contains(CANARY));
        assert!(!c.url().contains(CANARY));
        let e = run(&c).await.unwrap_err();
        assert!(matches!(e, Error::Network(_)), "{e:?}");
        assert_no_key(&e);
    }
    // Error bodies and error events that echo the key.
    let body = format!(r#"{{"error":{{"message":"key {CANARY} is not valid for model"}}}}"#);
    let b2 = body.clone();
    let server = Server::start(move |_, _| Script::response(400, &[], &b2)).await;
    let e = run(&client(Fmt::Gemini, &server, true)).await.unwrap_err();
    assert_no_key(&e);
    let server = Server::start(move |_, _| Script::sse_head(200).event("error", &body)).await;
    let e = run(&client(Fmt::Anthropic, &server, true)).await.unwrap_err();
    assert_no_key(&e);
    // A base URL with a query string (e.g. `?key=`) is refused before any request.
    let mut cfg = ProviderConfig::new(Wire::Gemini, "m", Some(ApiKey::new(CANARY)));
    cfg.base_url = format!("http://127.0.0.1:{port}/?key={CANARY}");
    let e = Client::new(cfg).unwrap_err();
    assert!(matches!(e, Error::Config(_)));
}

#[tokio::test]
async fn f42_connect_blackhole_fails_within_the_connect_timeout() {
    // A listener that never accepts, with a full accept queue: the kernel drops further SYNs,
    // so a new connect hangs like a blackholed host.
    let sock = tokio::net::TcpSocket::new_v4().unwrap();
    sock.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = sock.local_addr().unwrap();
    let _listener = sock.listen(0).unwrap();
    let mut fillers = Vec::new();
    for _ in 0..8 {
        match tokio::time::timeout(Duration::from_millis(200), tokio::net::TcpStream::connect(addr)).await {
            Ok(Ok(s)) => fillers.push(s),
            _ => break,
        }
    }
    let mut cfg = ProviderConfig::new(Wire::OpenAi, "m", Some(ApiKey::new(CANARY)));
    cfg.base_url = format!("http://{addr}/v1");
    cfg.timeouts = Timeouts { connect: Duration::from_millis(300), read_idle: Duration::from_secs(30) };
    cfg.retry.max_retries = 0;
    let t = Instant::now();
    let e = run(&Client::new(cfg).unwrap()).await.unwrap_err();
    let took = t.elapsed();
    assert!(matches!(e, Error::Timeout { what: "connecting to the provider", .. }), "{e:?}");
    assert!(e.to_string().contains("300ms"), "{e}");
    assert!(took >= Duration::from_millis(290) && took < Duration::from_secs(2), "connect took {took:?}");
    assert_no_key(&e);
}
