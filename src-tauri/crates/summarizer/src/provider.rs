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
use crate::error::{Error, Result};
use crate::overflow::{is_overflow_message, is_silent_overflow};
use crate::retry::{server_hint, should_retry_header, RetryPolicy};
use crate::secret::{scrub, ApiKey};
use crate::sse::SseDecoder;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tokio_util::sync::CancellationToken;

/// The three wire formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Wire {
    /// OpenAI-compatible chat completions; base URL ends in `/v1`.
    OpenAi,
    /// Anthropic Messages; base URL is the host.
    Anthropic,
    /// Google Gemini `generateContent`; base URL is the host.
    Gemini,
}

impl Wire {
    pub fn parse(name: &str) -> Option<Wire> {
        match name.to_ascii_lowercase().as_str() {
            "openai" | "openai-compatible" | "openrouter" | "ollama" | "groq" | "vllm" | "lmstudio" => Some(Wire::OpenAi),
            "anthropic" => Some(Wire::Anthropic),
            "gemini" | "google" => Some(Wire::Gemini),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Wire::OpenAi => "openai",
            Wire::Anthropic => "anthropic",
            Wire::Gemini => "gemini",
        }
    }
    /// Pi's `api` field for an assistant message from this wire format.
    pub fn pi_api(self) -> &'static str {
        match self {
            Wire::OpenAi => "openai-completions",
            Wire::Anthropic => "anthropic-messages",
            Wire::Gemini => "google-generative-ai",
        }
    }
    pub fn default_base_url(self) -> &'static str {
        match self {
            Wire::OpenAi => "https://api.openai.com/v1",
            Wire::Anthropic => "https://api.anthropic.com",
            Wire::Gemini => "https://generativelanguage.googleapis.com",
        }
    }
    /// The environment variable the CLI reads when the keyring has no key.
    pub fn env_var(self) -> &'static str {
        match self {
            Wire::OpenAi => "OPENAI_API_KEY",
            Wire::Anthropic => "ANTHROPIC_API_KEY",
            Wire::Gemini => "GEMINI_API_KEY",
        }
    }
}

/// Timeouts. There is deliberately no total deadline: a long summary that keeps streaming is
/// fine; a connection that goes quiet is not.
#[derive(Debug, Clone)]
pub struct Timeouts {
    pub connect: Duration,
    /// Longest silence allowed between response bytes (and before the headers).
    pub read_idle: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts { connect: Duration::from_secs(10), read_idle: Duration::from_secs(60) }
    }
}

#[derive(Debug, Clone)]
pub struct ProviderConfig {
    pub wire: Wire,
    /// Without a trailing slash; see `Wire` for each convention.
    pub base_url: String,
    pub model: String,
    pub key: Option<ApiKey>,
    pub stream: bool,
    pub timeouts: Timeouts,
    pub retry: RetryPolicy,
    /// Cap on the bytes read from one response.
    pub max_response_bytes: usize,
    /// The model's context window, for the silent-overflow check (0 = unknown).
    pub context_window: u64,
}

impl ProviderConfig {
    pub fn new(wire: Wire, model: impl Into<String>, key: Option<ApiKey>) -> ProviderConfig {
        ProviderConfig {
            wire,
            base_url: wire.default_base_url().to_string(),
            model: model.into(),
            key,
            stream: true,
            timeouts: Timeouts::default(),
            retry: RetryPolicy::default(),
            max_response_bytes: 8 * 1024 * 1024,
            context_window: 0,
        }
    }
}

/// One request: a system prompt and a single user text (summaries), or a whole conversation
/// in `turns` (continuing a session; then `prompt` is ignored).
#[derive(Debug, Clone, Default)]
pub struct CompletionRequest {
    pub system: String,
    pub prompt: String,
    pub max_tokens: u32,
    pub turns: Vec<Turn>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
}

/// A text-only conversation turn. Consecutive turns alternate roles and start with the user
/// (see `chat::to_turns`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Turn {
    pub role: Role,
    pub text: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Usage {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
}

impl Usage {
    pub fn add(&mut self, other: &Usage) {
        self.input += other.input;
        self.output += other.output;
        self.cache_read += other.cache_read;
        self.cache_write += other.cache_write;
    }
}

#[derive(Debug, Clone)]
pub struct Completion {
    pub text: String,
    pub usage: Usage,
    pub attempts: u32,
}

/// Progress for the UI ("rate limited, retrying in 3 s", streamed characters).
#[derive(Debug, Clone)]
pub enum Progress {
    Attempt {
        attempt: u32,
    },
    Retrying {
        attempt: u32,
        delay: Duration,
        reason: String,
    },
    /// Streamed text so far: its length in bytes and the newly arrived piece.
    Text {
        chars: usize,
        delta: String,
    },
    /// `Text` of one summary call, tagged by `run` with the summary it produces, since a split
    /// turn streams two calls at once.
    SummaryText {
        call: crate::offline::Kind,
        chars: usize,
        delta: String,
    },
}

pub type ProgressFn = Arc<dyn Fn(Progress) + Send + Sync>;

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
            return Err(Error::Config(format!("base URL `{}` must start with http:// or https:// (e.g. {})", cfg.base_url, cfg.wire.default_base_url())));
        }
        if cfg.base_url.contains('?') || cfg.base_url.contains('#') {
            return Err(Error::Config("the base URL must not contain `?` or `#`; keys go in headers, never in URLs".into()));
        }
        let model_ok = !cfg.model.is_empty() && cfg.model.chars().all(|c| c.is_ascii_alphanumeric() || "-._:/@".contains(c));
        if !model_ok {
            return Err(Error::Config(format!("model id `{}` is empty or has characters a model id cannot have", cfg.model)));
        }
        if cfg.key.as_ref().is_some_and(|k| reqwest::header::HeaderValue::from_str(k.expose()).is_err()) {
            return Err(Error::Config("the API key contains characters that cannot go in an HTTP header; set it again".into()));
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
            Wire::OpenAi => {
                let mut messages = vec![json!({"role": "system", "content": req.system})];
                messages.extend(turns.iter().map(|t| json!({"role": role(t, "assistant"), "content": t.text})));
                let mut b = json!({
                    "model": self.cfg.model,
                    "messages": messages,
                    "stream": self.cfg.stream,
                });
                // OpenAI's own API rejects `max_tokens` for its newer models; compatible servers
                // (Ollama, vLLM, LM Studio, Groq, OpenRouter) all take `max_tokens`.
                b[openai_max_tokens_field(&self.cfg.base_url)] = json!(req.max_tokens);
                if self.cfg.stream {
                    b["stream_options"] = json!({"include_usage": true});
                }
                b
            }
            Wire::Anthropic => json!({
                "model": self.cfg.model,
                "max_tokens": req.max_tokens,
                "system": req.system,
                "messages": turns.iter().map(|t| json!({"role": role(t, "assistant"), "content": [{"type": "text", "text": t.text}]})).collect::<Vec<_>>(),
                "stream": self.cfg.stream,
            }),
            Wire::Gemini => json!({
                "systemInstruction": {"parts": [{"text": req.system}]},
                "contents": turns.iter().map(|t| json!({"role": role(t, "model"), "parts": [{"text": t.text}]})).collect::<Vec<_>>(),
                "generationConfig": {"maxOutputTokens": req.max_tokens},
            }),
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
    pub async fn complete(&self, req: &CompletionRequest, cancel: &CancellationToken, progress: Option<&ProgressFn>) -> Result<Completion> {
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

    async fn attempt(&self, req: &CompletionRequest, progress: Option<&ProgressFn>) -> std::result::Result<Completion, Failure> {
        let idle = self.cfg.timeouts.read_idle;
        let key = self.cfg.key.as_ref();
        let send = self.request(req).send();
        let resp = match tokio::time::timeout(self.cfg.timeouts.connect + idle, send).await {
            Err(_) => return Err(Error::Timeout { what: "waiting for the response headers", after: self.cfg.timeouts.connect + idle }.into()),
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
            return Err(classify_status(status, &headers, &content_type, &body, key, self.cfg.wire, &self.cfg.retry, hint));
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
                        detail: if acc.stop.is_some() { "a partial event was left at the end".into() } else { "no end-of-answer marker".into() },
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

    fn on_event(&self, acc: &mut Acc, event: Option<&str>, data: &str, key: Option<&ApiKey>) -> std::result::Result<(), Failure> {
        let data = data.trim();
        if data.is_empty() {
            return Ok(());
        }
        if self.cfg.wire == Wire::OpenAi && data == "[DONE]" {
            acc.done = true;
            return Ok(());
        }
        let v: Value = serde_json::from_str(data).map_err(|e| Error::Invalid { detail: format!("malformed JSON in a stream event ({e})") })?;
        if event == Some("error") || v.get("error").is_some_and(|e| !e.is_null()) || v.get("type").and_then(Value::as_str) == Some("error") {
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
            Wire::OpenAi => {
                if let Some(choice) = v.pointer("/choices/0") {
                    if let Some(t) = choice.pointer("/message/content").and_then(Value::as_str) {
                        acc.text.push_str(t);
                    }
                    if let Some(r) = choice.get("finish_reason").and_then(Value::as_str) {
                        acc.stop = Some(openai_stop(r));
                    }
                }
                if let Some(u) = v.get("usage") {
                    acc.usage = openai_usage(u);
                }
                if acc.stop.is_none() {
                    return Err(Error::Invalid { detail: "no choices/finish_reason in the answer".into() }.into());
                }
            }
            Wire::Anthropic => {
                if let Some(blocks) = v.get("content").and_then(Value::as_array) {
                    for b in blocks {
                        if b.get("type").and_then(Value::as_str) == Some("text") {
                            acc.text.push_str(b.get("text").and_then(Value::as_str).unwrap_or(""));
                        }
                    }
                }
                if let Some(u) = v.get("usage") {
                    anthropic_usage(&mut acc.usage, u);
                }
                match v.get("stop_reason").and_then(Value::as_str) {
                    Some(r) => acc.stop = Some(anthropic_stop(r)),
                    None => return Err(Error::Invalid { detail: "no stop_reason in the answer".into() }.into()),
                }
            }
            Wire::Gemini => {
                gemini_chunk(acc, v);
                if acc.stop.is_none() {
                    return Err(Error::Invalid { detail: "no finishReason in the answer".into() }.into());
                }
            }
        }
        acc.done = true;
        Ok(())
    }

    fn finish(&self, acc: Acc, max_tokens: u32) -> Result<Completion> {
        let u = &acc.usage;
        match acc.stop {
            Some(Stop::MaxTokens) => {
                if is_silent_overflow(false, true, u.input, u.cache_read, u.output, self.cfg.context_window) {
                    return Err(Error::Overflow { message: "the provider filled the context window with the input (length stop, no output)".into() });
                }
                return Err(Error::MaxTokens { limit: max_tokens });
            }
            Some(Stop::Refused(r)) => return Err(Error::Refused { reason: r }),
            Some(Stop::Ok) | None => {}
        }
        if is_silent_overflow(true, false, u.input, u.cache_read, u.output, self.cfg.context_window) {
            return Err(Error::Overflow {
                message: format!("usage reports {} input tokens, above the {}-token window", u.input + u.cache_read, self.cfg.context_window),
            });
        }
        if acc.text.trim().is_empty() {
            return Err(Error::Empty);
        }
        Ok(Completion { text: acc.text, usage: acc.usage, attempts: 0 })
    }
}

/// An attempt's error with the server's retry hint, if any.
struct Failure {
    error: Error,
    hint: Option<Duration>,
}

impl From<Error> for Failure {
    fn from(error: Error) -> Failure {
        Failure { error, hint: None }
    }
}

fn with_attempts(err: Error, n: u32) -> Error {
    match err {
        Error::Http { status, message, request_id, retryable, .. } => Error::Http { status, message, request_id, attempts: n, retryable },
        e => e,
    }
}

#[derive(Default)]
struct Acc {
    text: String,
    usage: Usage,
    stop: Option<Stop>,
    done: bool,
}

enum Stop {
    Ok,
    MaxTokens,
    Refused(String),
}

fn openai_max_tokens_field(base_url: &str) -> &'static str {
    let host = base_url.split("://").nth(1).unwrap_or("").split(['/', ':']).next().unwrap_or("");
    if host == "api.openai.com" {
        "max_completion_tokens"
    } else {
        "max_tokens"
    }
}

fn openai_stop(r: &str) -> Stop {
    match r {
        "length" => Stop::MaxTokens,
        "content_filter" => Stop::Refused("content filter".into()),
        _ => Stop::Ok,
    }
}

fn anthropic_stop(r: &str) -> Stop {
    match r {
        "max_tokens" => Stop::MaxTokens,
        "refusal" => Stop::Refused("refusal".into()),
        "model_context_window_exceeded" => Stop::MaxTokens,
        _ => Stop::Ok,
    }
}

fn gemini_stop(r: &str) -> Stop {
    match r {
        "STOP" | "FINISH_REASON_UNSPECIFIED" => Stop::Ok,
        "MAX_TOKENS" => Stop::MaxTokens,
        other => Stop::Refused(other.to_string()),
    }
}

fn num(v: Option<&Value>) -> u64 {
    v.and_then(Value::as_u64).unwrap_or(0)
}

fn openai_usage(u: &Value) -> Usage {
    let cached = num(u.pointer("/prompt_tokens_details/cached_tokens"));
    Usage { input: num(u.get("prompt_tokens")).saturating_sub(cached), output: num(u.get("completion_tokens")), cache_read: cached, cache_write: 0 }
}

fn openai_chunk(acc: &mut Acc, v: &Value) {
    if let Some(choice) = v.pointer("/choices/0") {
        if let Some(t) = choice.pointer("/delta/content").and_then(Value::as_str) {
            acc.text.push_str(t);
        }
        if let Some(r) = choice.get("finish_reason").and_then(Value::as_str) {
            acc.stop = Some(openai_stop(r));
        }
    }
    if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
        acc.usage = openai_usage(u);
    }
}

fn anthropic_usage(usage: &mut Usage, u: &Value) {
    if let Some(n) = u.get("input_tokens").and_then(Value::as_u64) {
        usage.input = n;
    }
    if let Some(n) = u.get("output_tokens").and_then(Value::as_u64) {
        usage.output = n;
    }
    if let Some(n) = u.get("cache_read_input_tokens").and_then(Value::as_u64) {
        usage.cache_read = n;
    }
    if let Some(n) = u.get("cache_creation_input_tokens").and_then(Value::as_u64) {
        usage.cache_write = n;
    }
}

fn anthropic_event(acc: &mut Acc, v: &Value) {
    match v.get("type").and_then(Value::as_str) {
        Some("message_start") => {
            if let Some(u) = v.pointer("/message/usage") {
                anthropic_usage(&mut acc.usage, u);
            }
        }
        Some("content_block_start") if v.pointer("/content_block/type").and_then(Value::as_str) == Some("text") => {
            acc.text.push_str(v.pointer("/content_block/text").and_then(Value::as_str).unwrap_or(""));
        }
        Some("content_block_delta") if v.pointer("/delta/type").and_then(Value::as_str) == Some("text_delta") => {
            acc.text.push_str(v.pointer("/delta/text").and_then(Value::as_str).unwrap_or(""));
        }
        Some("message_delta") => {
            if let Some(r) = v.pointer("/delta/stop_reason").and_then(Value::as_str) {
                acc.stop = Some(anthropic_stop(r));
            }
            if let Some(u) = v.get("usage") {
                anthropic_usage(&mut acc.usage, u);
            }
        }
        Some("message_stop") => acc.done = true,
        _ => {}
    }
}

fn gemini_chunk(acc: &mut Acc, v: &Value) {
    if let Some(reason) = v.pointer("/promptFeedback/blockReason").and_then(Value::as_str) {
        acc.stop = Some(Stop::Refused(format!("prompt blocked: {reason}")));
    }
    if let Some(c) = v.pointer("/candidates/0") {
        if let Some(parts) = c.pointer("/content/parts").and_then(Value::as_array) {
            for p in parts {
                if p.get("thought").and_then(Value::as_bool) == Some(true) {
                    continue;
                }
                if let Some(t) = p.get("text").and_then(Value::as_str) {
                    acc.text.push_str(t);
                }
            }
        }
        if let Some(r) = c.get("finishReason").and_then(Value::as_str) {
            acc.stop = Some(gemini_stop(r));
        }
    }
    if let Some(u) = v.get("usageMetadata") {
        let cached = num(u.get("cachedContentTokenCount"));
        acc.usage = Usage {
            input: num(u.get("promptTokenCount")).saturating_sub(cached),
            output: num(u.get("candidatesTokenCount")) + num(u.get("thoughtsTokenCount")),
            cache_read: cached,
            cache_write: 0,
        };
    }
}

/// The `error` object's message in any of the three formats.
fn error_message(v: &Value) -> Option<String> {
    let e = v.get("error")?;
    if let Some(s) = e.as_str() {
        return Some(s.to_string());
    }
    let msg = e.get("message").and_then(Value::as_str).unwrap_or("");
    let kind = e
        .get("type")
        .or_else(|| e.get("code"))
        .or_else(|| e.get("status"))
        .map(|k| match k {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .unwrap_or_default();
    Some(match (kind.is_empty(), msg.is_empty()) {
        (true, _) => msg.to_string(),
        (false, true) => kind,
        (false, false) => format!("{kind}: {msg}"),
    })
}

fn stream_error(v: &Value, key: Option<&ApiKey>) -> Error {
    let message = scrub(&error_message(v).unwrap_or_else(|| "unknown error event".into()), key);
    if is_overflow_message(&message) {
        return Error::Overflow { message };
    }
    let lower = message.to_ascii_lowercase();
    let retryable =
        ["overloaded", "api_error", "rate_limit", "internal", "unavailable", "timeout", "server_error", "503", "500"].iter().any(|p| lower.contains(p));
    Error::StreamError { message, retryable }
}

fn looks_like_html(body: &[u8]) -> bool {
    let head = String::from_utf8_lossy(&body[..body.len().min(512)]).trim_start().to_ascii_lowercase();
    head.starts_with("<!doctype html") || head.starts_with("<html") || head.starts_with("<head") || head.starts_with("<body")
}

const QUOTA_PATTERNS: &[&str] = &[
    "insufficient_quota",
    "enforced_spend_limit",
    "billing_hard_limit",
    "exceeded your current quota",
    "credit balance is too low",
    "spend limit",
    "billing_not_active",
];

#[allow(clippy::too_many_arguments)] // one call site; a struct would only rename the arguments
fn classify_status(
    status: u16,
    headers: &reqwest::header::HeaderMap,
    content_type: &str,
    body: &[u8],
    key: Option<&ApiKey>,
    wire: Wire,
    policy: &RetryPolicy,
    hint: Option<Duration>,
) -> Failure {
    let request_id =
        ["x-request-id", "request-id", "x-goog-request-id", "cf-ray"].iter().find_map(|h| headers.get(*h).and_then(|v| v.to_str().ok()).map(str::to_string));
    let html = content_type.contains("text/html") || looks_like_html(body);
    let text = String::from_utf8_lossy(body);
    let message = if html {
        "an HTML error page".to_string()
    } else {
        match serde_json::from_slice::<Value>(body).ok().as_ref().and_then(error_message) {
            Some(m) => m,
            None if text.trim().is_empty() => format!("{status} (no body)"),
            None => text.chars().take(500).collect(),
        }
    };
    let message = scrub(&message, key);
    let lower = message.to_ascii_lowercase();
    let error = if !html && is_overflow_message(&message) {
        Error::Overflow { message }
    } else if QUOTA_PATTERNS.iter().any(|p| lower.contains(p)) {
        Error::Quota { message }
    } else if status == 401 {
        Error::Unauthorized { provider: wire.name().into() }
    } else if status == 403 {
        Error::Forbidden { message }
    } else if status == 413 {
        Error::TooLarge { message }
    } else {
        let transient = matches!(status, 408 | 409 | 429) || status >= 500;
        let retryable = match should_retry_header(headers) {
            Some(forced) => forced,
            None => transient,
        };
        if retryable {
            if let Some(h) = hint {
                if h > policy.max_server_wait {
                    return Failure { error: Error::RetryTooLong { wait: h, cap: policy.max_server_wait, message }, hint: None };
                }
            }
        }
        if html && !retryable {
            Error::HtmlPage { status }
        } else {
            Error::Http { status, message, request_id, attempts: 1, retryable }
        }
    };
    Failure { error, hint }
}

fn reqwest_error(e: reqwest::Error, key: Option<&ApiKey>, what: &str, t: &Timeouts) -> Error {
    let timeout = e.is_timeout();
    let connect = e.is_connect();
    let text = scrub(&error_chain(&e.without_url()), key);
    if timeout || text.contains("timed out") {
        return if connect || text.contains("connect") {
            Error::Timeout { what: "connecting to the provider", after: t.connect }
        } else {
            Error::Timeout { what: "waiting for the provider", after: t.read_idle }
        };
    }
    Error::Network(format!("{what}: {text}"))
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(inner) = src {
        s.push_str(": ");
        s.push_str(&inner.to_string());
        src = inner.source();
    }
    s
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

#[cfg(test)]
mod tests {
    #[test]
    fn max_tokens_field_follows_the_server() {
        assert_eq!(super::openai_max_tokens_field("https://api.openai.com/v1"), "max_completion_tokens");
        assert_eq!(super::openai_max_tokens_field("http://127.0.0.1:11434/v1"), "max_tokens");
        assert_eq!(super::openai_max_tokens_field("https://openrouter.ai/api/v1"), "max_tokens");
        assert_eq!(super::openai_max_tokens_field("https://api.openai.com.evil.example/v1"), "max_tokens");
    }
}
