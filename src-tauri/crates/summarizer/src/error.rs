//! One error type for everything a summarizer run can hit. Every message says what happened
//! and what to do; none contains a key (see `secret::scrub`).
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("the request is larger than the model's context window ({message}); compact more aggressively (smaller keep-recent budget) or pick a model with a larger window")]
    Overflow { message: String },
    #[error("the conversation no longer fits the model's context window ({message}) and automatic compaction is off (compaction.enabled = false); compact now, then send again")]
    OverflowCompactionDisabled { message: String },
    #[error("quota or spend limit reached ({message}); check the provider's billing page, then try again later")]
    Quota { message: String },
    #[error("rate limited and the provider asks to wait {}s, longer than the {}s Arbor waits; try again later", .wait.as_secs(), .cap.as_secs())]
    RetryTooLong { wait: Duration, cap: Duration, message: String },
    #[error("the API key was rejected (HTTP 401): set a valid key for {provider}")]
    Unauthorized { provider: String },
    #[error("the key has no access to this model (HTTP 403: {message}); check the model id and the key's permissions")]
    Forbidden { message: String },
    #[error("the request is too large for the provider (HTTP 413: {message}); compact with a smaller budget")]
    TooLarge { message: String },
    #[error("HTTP {status} from the provider after {attempts} attempt(s): {message}{}; the provider may be overloaded, try again later", request_id_suffix(.request_id))]
    Http { status: u16, message: String, request_id: Option<String>, attempts: u32, retryable: bool },
    #[error("the provider sent an HTML page instead of an API answer (HTTP {status}); check the base URL")]
    HtmlPage { status: u16 },
    #[error("timed out: {what} took longer than {}ms; the provider or network is stalled, try again", .after.as_millis())]
    Timeout { what: &'static str, after: Duration },
    #[error("the answer stream ended before it was complete ({detail}); nothing was written, try again")]
    Incomplete { detail: String },
    #[error("the provider reported an error in the middle of the answer: {message}; nothing was written")]
    StreamError { message: String, retryable: bool },
    #[error("the provider's answer could not be read ({detail}); nothing was written")]
    Invalid { detail: String },
    #[error("the answer hit the output limit ({limit} tokens) and was cut off; nothing was written, raise the reserve tokens or shorten the input")]
    MaxTokens { limit: u32 },
    #[error("the model returned an empty answer; nothing was written, try again or pick another model")]
    Empty,
    #[error("the model refused or was blocked ({reason}); nothing was written")]
    Refused { reason: String },
    #[error("the answer is larger than {limit} bytes; stopped reading, nothing was written")]
    ResponseTooLarge { limit: usize },
    #[error("cancelled; nothing was written")]
    Cancelled,
    #[error("network error: {0}; check the base URL and your connection")]
    Network(String),
    #[error("{0}")]
    Config(String),
    #[error("keyring: {0}")]
    Keyring(String),
    #[error("hook `{command}` failed: {message}")]
    Hook { command: String, message: String },
    #[error("hook cancelled the operation")]
    HookCancelled,
    #[error("session: {0}")]
    Session(String),
}

fn request_id_suffix(id: &Option<String>) -> String {
    match id {
        Some(id) => format!(" (request id {id})"),
        None => String::new(),
    }
}

impl Error {
    /// Whether another attempt of the same request may succeed.
    pub fn is_retryable(&self) -> bool {
        match self {
            Error::Http { retryable, .. } => *retryable,
            Error::StreamError { retryable, .. } => *retryable,
            Error::Timeout { .. } | Error::Incomplete { .. } | Error::Network(_) => true,
            _ => false,
        }
    }

    /// A short stable tag, for the UI to branch on.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::Overflow { .. } => "overflow",
            Error::OverflowCompactionDisabled { .. } => "overflowCompactionDisabled",
            Error::Quota { .. } => "quota",
            Error::RetryTooLong { .. } => "retryTooLong",
            Error::Unauthorized { .. } => "unauthorized",
            Error::Forbidden { .. } => "forbidden",
            Error::TooLarge { .. } => "tooLarge",
            Error::Http { .. } => "http",
            Error::HtmlPage { .. } => "htmlPage",
            Error::Timeout { .. } => "timeout",
            Error::Incomplete { .. } => "incomplete",
            Error::StreamError { .. } => "streamError",
            Error::Invalid { .. } => "invalid",
            Error::MaxTokens { .. } => "maxTokens",
            Error::Empty => "empty",
            Error::Refused { .. } => "refused",
            Error::ResponseTooLarge { .. } => "responseTooLarge",
            Error::Cancelled => "cancelled",
            Error::Network(_) => "network",
            Error::Config(_) => "config",
            Error::Keyring(_) => "keyring",
            Error::Hook { .. } => "hook",
            Error::HookCancelled => "hookCancelled",
            Error::Session(_) => "session",
        }
    }
}

pub type Result<T> = std::result::Result<T, Error>;
