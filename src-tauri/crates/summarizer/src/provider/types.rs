//! The provider layer's shared types: the wire formats, the configuration, a request and its
//! answer, progress, and the accumulator each wire format's parser fills. They sit below both
//! `mod.rs` (the client) and the per-format files, so neither imports the other in a circle.

use crate::error::Error;
use crate::retry::RetryPolicy;
use crate::secret::ApiKey;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

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
            "openai" | "openai-compatible" | "openrouter" | "ollama" | "groq" | "vllm" | "lmstudio" => {
                Some(Wire::OpenAi)
            }
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

/// An attempt's error with the server's retry hint, if any.
pub(super) struct Failure {
    pub(super) error: Error,
    pub(super) hint: Option<Duration>,
}

impl From<Error> for Failure {
    fn from(error: Error) -> Failure {
        Failure { error, hint: None }
    }
}

#[derive(Default)]
pub(super) struct Acc {
    pub(super) text: String,
    pub(super) usage: Usage,
    pub(super) stop: Option<Stop>,
    pub(super) done: bool,
}

pub(super) enum Stop {
    Ok,
    MaxTokens,
    Refused(String),
}

pub(super) fn num(v: Option<&Value>) -> u64 {
    v.and_then(Value::as_u64).unwrap_or(0)
}
