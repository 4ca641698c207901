//! Providers over reqwest: OpenAI-compatible chat completions, Anthropic Messages and Gemini
//! `generateContent`, streaming (SSE) or not, with read-idle timeouts, classified errors,
//! jittered retries and cancellation.
//!
//! Architecture Invariant: a `Completion` is returned only for an answer that is complete
//! (the wire format's end marker or stop reason was seen), has a normal stop reason, and has
//! non-empty text. Everything else is an `Error`, so callers never append partial text.
//!
//! Keys travel in headers only (`Authorization`, `x-api-key`, `x-goog-api-key`), never in URLs,
//! and every error text goes through `secret::scrub`.
//!
//! The parts: the shared client, retries and body reading here; one file per wire format
//! (`openai`, `anthropic`, `gemini`: request body, stream events, whole answers, stop reasons
//! and usage); `classify` turns HTTP statuses and error bodies into `Error`s.

mod anthropic;
mod classify;
mod gemini;
mod openai;
mod types;

use crate::error::{Error, Result};
use crate::overflow::is_silent_overflow;
use crate::retry::server_hint;
use crate::secret::{scrub, ApiKey};
use crate::sse::SseDecoder;
use anthropic::anthropic_event;
use classify::{classify_status, error_chain, looks_like_html, reqwest_error, stream_error};
use gemini::gemini_chunk;
use openai::openai_chunk;
use serde_json::Value;
use std::time::{Duration, SystemTime};
use tokio_util::sync::CancellationToken;
use types::{Acc, Failure, Stop};
pub use types::{
    Completion, CompletionRequest, Progress, ProgressFn, ProviderConfig, Role, Timeouts, Turn, Usage, Wire,
};

/// Cloning is cheap (the HTTP client is shared): the composer's automatic compactions use a
/// clone of the chat client instead of building a second one (root certificates, key lookup).
#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    cfg: ProviderConfig,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").field("cfg", &self.cfg).finish()
    }
}

impl Client {
    pub fn new(mut cfg: ProviderConfig) -> Result<Client> {
        while cfg.base_url.ends_with('/') {
            cfg.base_url.pop();
        }
        if !(cfg.base_url.starts_with("http://") || cfg.base_url.starts_with("https://")) {
            return Err(Error::Config(format!(
                "base URL `{}` must start with http:// or https:// (e.g. {})",
                cfg.base_url,
                cfg.wire.default_base_url()
            )));
        }
        if cfg.base_url.contains('?') || cfg.base_url.contains('#') {
            return Err(Error::Config(
                "the base URL must not contain `?` or `#`; keys go in headers, never in URLs".into(),
            ));
        }
        let model_ok =
            !cfg.model.is_empty() && cfg.model.chars().all(|c| c.is_ascii_alphanumeric() || "-._:/@".contains(c));
        if !model_ok {
            return Err(Error::Config(format!(
                "model id `{}` is empty or has characters a model id cannot have",
                cfg.model
            )));
        }
        if cfg.key.as_ref().is_some_and(|k| reqwest::header::HeaderValue::from_str(k.expose()).is_err()) {
            return Err(Error::Config(
                "the API key contains characters that cannot go in an HTTP header; set it again".into(),
            ));
        }
        let http = reqwest::Client::builder()
            .connect_timeout(cfg.timeouts.connect)
            .read_timeout(cfg.timeouts.read_idle)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("arbor-summarizer/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| Error::Config(format!("could not build the HTTP client: {}", e.without_url())))?;
        Ok(Client { http, cfg })
    }

    pub fn config(&self) -> &ProviderConfig {
        &self.cfg
    }

    /// The endpoint URL (never contains the key).
    pub fn url(&self) -> String {
        let base = &self.cfg.base_url;
        match self.cfg.wire {
            Wire::OpenAi => format!("{base}/chat/completions"),
            Wire::Anthropic => format!("{base}/v1/messages"),
            Wire::Gemini => {
                let model = self.cfg.model.strip_prefix("models/").unwrap_or(&self.cfg.model);
                if self.cfg.stream {
                    format!("{base}/v1beta/models/{model}:streamGenerateContent?alt=sse")
                } else {
                    format!("{base}/v1beta/models/{model}:generateContent")
                }
            }
        }
    }

    fn body(&self, req: &CompletionRequest) -> Value {
        let single = [Turn { role: Role::User, text: req.prompt.clone() }];
        let turns: &[Turn] = if req.turns.is_empty() { &single } else { &req.turns };
        let role = |t: &Turn, assistant: &'static str| if t.role == Role::User { "user" } else { assistant };
        match self.cfg.wire {
            Wire::OpenAi => openai::body(&self.cfg, req, turns, role),
            Wire::Anthropic => anthropic::body(&self.cfg, req, turns, role),
            Wire::Gemini => gemini::body(&self.cfg, req, turns, role),
        }
    }

    fn request(&self, req: &CompletionRequest) -> reqwest::RequestBuilder {
        let mut rb = self
            .http
            .post(self.url())
            .header("content-type", "application/json")
            .header("accept", if self.cfg.stream { "text/event-stream" } else { "application/json" });
        let key = self.cfg.key.as_ref().map(|k| k.expose());
        match self.cfg.wire {
            Wire::OpenAi => {
                if let Some(k) = key {
                    rb = rb.bearer_auth(k);
                }
            }
            Wire::Anthropic => {
                rb = rb.header("anthropic-version", "2023-06-01");
                if let Some(k) = key {
                    rb = rb.header("x-api-key", k);
                }
            }
            Wire::Gemini => {
                if let Some(k) = key {
                    rb = rb.header("x-goog-api-key", k);
                }
            }
        }
        rb.body(self.body(req).to_string())
    }

    /// Sends the request with retries. Cancellation is honoured during the request and during
    /// backoff sleeps; dropping the in-flight future closes the connection.
    pub async fn complete(
        &self,
        req: &CompletionRequest,
        cancel: &CancellationToken,
        progress: Option<&ProgressFn>,
    ) -> Result<Completion> {
        let policy = &self.cfg.retry;
        let mut attempt: u32 = 0;
        loop {
            if cancel.is_cancelled() {
                return Err(Error::Cancelled);
            }
            if let Some(p) = progress {
                p(Progress::Attempt { attempt: attempt + 1 });
            }
            let outcome = tokio::select! {
                biased;
                _ = cancel.cancelled() => return Err(Error::Cancelled),
                r = self.attempt(req, progress) => r,
            };
            let (err, hint) = match outcome {
                Ok(mut c) => {
                    c.attempts = attempt + 1;
                    return Ok(c);
                }
                Err(f) => (f.error, f.hint),
            };
            let err = with_attempts(err, attempt + 1);
            if !err.is_retryable() || attempt >= policy.max_retries {
                return Err(err);
            }
            let delay = match hint {
                Some(h) => policy.hinted(h),
                None => policy.backoff(attempt),
            };
            if let Some(p) = progress {
                p(Progress::Retrying { attempt: attempt + 1, delay, reason: err.to_string() });
            }
            tokio::select! {
                biased;
                _ = cancel.cancelled() => return Err(Error::Cancelled),
                _ = tokio::time::sleep(delay) => {}
            }
            attempt += 1;
        }
    }

    async fn attempt(
        &self,
        req: &CompletionRequest,
        progress: Option<&ProgressFn>,
    ) -> std::result::Result<Completion, Failure> {
        let idle = self.cfg.timeouts.read_idle;
        let key = self.cfg.key.as_ref();
        let send = self.request(req).send();
        let resp = match tokio::time::timeout(self.cfg.timeouts.connect + idle, send).await {
            Err(_) => {
                return Err(Error::Timeout {
                    what: "waiting for the response headers",
                    after: self.cfg.timeouts.connect + idle,
                }
                .into())
            }
            Ok(Err(e)) => return Err(reqwest_error(e, key, "sending the request", &self.cfg.timeouts).into()),
            Ok(Ok(r)) => r,
        };
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let content_type = headers.get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_ascii_lowercase();
        let mut reader = BodyReader { resp, idle, cap: self.cfg.max_response_bytes, read: 0, key };
        if !(200..300).contains(&status) {
            let body = reader.read_prefix(64 * 1024).await.unwrap_or_default();
            let hint = server_hint(&headers, SystemTime::now());
            return Err(classify_status(
                status,
                &headers,
                &content_type,
                &body,
                key,
                self.cfg.wire,
                &self.cfg.retry,
                hint,
            ));
        }
        if content_type.contains("text/html") {
            return Err(Error::HtmlPage { status }.into());
        }
        let mut acc = Acc::default();
        if content_type.contains("text/event-stream") {
            let mut dec = SseDecoder::new();
            let mut last_chars = 0usize;
            while let Some(chunk) = reader.next().await? {
                for ev in dec.push(&chunk) {
                    if acc.done {
                        break;
                    }
                    self.on_event(&mut acc, ev.event.as_deref(), &ev.data, key)?;
                }
                if let Some(p) = progress {
                    if acc.text.len() != last_chars {
                        let delta = acc.text[last_chars..].to_string();
                        last_chars = acc.text.len();
                        p(Progress::Text { chars: last_chars, delta });
                    }
                }
                if acc.done {
                    break;
                }
            }
            if !acc.done {
                // Gemini's stream has no end marker: the last chunk carries `finishReason`.
                // OpenAI-compatible servers end with `[DONE]`, but a seen finish_reason also
                // means the text is whole.
                let clean_end = !dec.has_pending();
                if !(acc.stop.is_some() && clean_end) {
                    return Err(Error::Incomplete {
                        detail: if acc.stop.is_some() {
                            "a partial event was left at the end".into()
                        } else {
                            "no end-of-answer marker".into()
                        },
                    }
                    .into());
                }
            }
        } else {
            let body = reader.read_all().await?;
            let v: Value = serde_json::from_slice(&body).map_err(|e| {
                if looks_like_html(&body) {
                    Error::HtmlPage { status }
                } else {
                    Error::Invalid { detail: format!("the body is not JSON: {e}") }
                }
            })?;
            self.on_full(&mut acc, &v, key)?;
        }
        self.finish(acc, req.max_tokens).map_err(Failure::from)
    }

    fn on_event(
        &self,
        acc: &mut Acc,
        event: Option<&str>,
        data: &str,
        key: Option<&ApiKey>,
    ) -> std::result::Result<(), Failure> {
        let data = data.trim();
        if data.is_empty() {
            return Ok(());
        }
        if self.cfg.wire == Wire::OpenAi && data == "[DONE]" {
            acc.done = true;
            return Ok(());
        }
        let v: Value = serde_json::from_str(data)
            .map_err(|e| Error::Invalid { detail: format!("malformed JSON in a stream event ({e})") })?;
        if event == Some("error")
            || v.get("error").is_some_and(|e| !e.is_null())
            || v.get("type").and_then(Value::as_str) == Some("error")
        {
            return Err(stream_error(&v, key).into());
        }
        match self.cfg.wire {
            Wire::OpenAi => openai_chunk(acc, &v),
            Wire::Anthropic => anthropic_event(acc, &v),
            Wire::Gemini => gemini_chunk(acc, &v),
        }
        Ok(())
    }

    fn on_full(&self, acc: &mut Acc, v: &Value, key: Option<&ApiKey>) -> std::result::Result<(), Failure> {
        if v.get("error").is_some_and(|e| !e.is_null()) {
            return Err(stream_error(v, key).into());
        }
        match self.cfg.wire {
            Wire::OpenAi => openai::full(acc, v)?,
            Wire::Anthropic => anthropic::full(acc, v)?,
            Wire::Gemini => gemini::full(acc, v)?,
        }
        acc.done = true;
        Ok(())
    }

    fn finish(&self, acc: Acc, max_tokens: u32) -> Result<Completion> {
        let u = &acc.usage;
        match acc.stop {
            Some(Stop::MaxTokens) => {
                if is_silent_overflow(false, true, u.input, u.cache_read, u.output, self.cfg.context_window) {
                    return Err(Error::Overflow {
                        message: "the provider filled the context window with the input (length stop, no output)"
                            .into(),
                    });
                }
                return Err(Error::MaxTokens { limit: max_tokens });
            }
            Some(Stop::Refused(r)) => return Err(Error::Refused { reason: r }),
            Some(Stop::Ok) | None => {}
        }
        if is_silent_overflow(true, false, u.input, u.cache_read, u.output, self.cfg.context_window) {
            return Err(Error::Overflow {
                message: format!(
                    "usage reports {} input tokens, above the {}-token window",
                    u.input + u.cache_read,
                    self.cfg.context_window
                ),
            });
        }
        if acc.text.trim().is_empty() {
            return Err(Error::Empty);
        }
        Ok(Completion { text: acc.text, usage: acc.usage, attempts: 0 })
    }
}

fn with_attempts(err: Error, n: u32) -> Error {
    match err {
        Error::Http { status, message, request_id, retryable, .. } => {
            Error::Http { status, message, request_id, attempts: n, retryable }
        }
        e => e,
    }
}

/// Reads a response body with a per-read idle timeout and a size cap.
struct BodyReader<'a> {
    resp: reqwest::Response,
    idle: Duration,
    cap: usize,
    read: usize,
    key: Option<&'a ApiKey>,
}

impl BodyReader<'_> {
    async fn next(&mut self) -> std::result::Result<Option<bytes::Bytes>, Failure> {
        match tokio::time::timeout(self.idle, self.resp.chunk()).await {
            Err(_) => Err(Error::Timeout { what: "the stream stalled (no bytes)", after: self.idle }.into()),
            Ok(Err(e)) => {
                if e.is_timeout() {
                    return Err(Error::Timeout { what: "the stream stalled (no bytes)", after: self.idle }.into());
                }
                Err(Error::Incomplete { detail: scrub(&error_chain(&e.without_url()), self.key) }.into())
            }
            Ok(Ok(None)) => Ok(None),
            Ok(Ok(Some(b))) => {
                self.read += b.len();
                if self.read > self.cap {
                    return Err(Error::ResponseTooLarge { limit: self.cap }.into());
                }
                Ok(Some(b))
            }
        }
    }

    async fn read_all(&mut self) -> std::result::Result<Vec<u8>, Failure> {
        let mut out = Vec::new();
        while let Some(b) = self.next().await? {
            out.extend_from_slice(&b);
        }
        Ok(out)
    }

    /// Reads at most `limit` bytes (for error bodies; the rest is dropped).
    async fn read_prefix(&mut self, limit: usize) -> std::result::Result<Vec<u8>, Failure> {
        let mut out = Vec::new();
        while out.len() < limit {
            match self.next().await? {
                Some(b) => out.extend_from_slice(&b),
                None => break,
            }
        }
        out.truncate(limit);
        Ok(out)
    }
}
