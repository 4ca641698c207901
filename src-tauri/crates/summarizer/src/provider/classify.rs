//! Errors: HTTP statuses, error bodies and events, transport failures.

use super::types::{Failure, Timeouts, Wire};
use crate::error::Error;
use crate::overflow::is_overflow_message;
use crate::retry::{should_retry_header, RetryPolicy};
use crate::secret::{scrub, ApiKey};
use serde_json::Value;
use std::time::Duration;

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

pub(super) fn stream_error(v: &Value, key: Option<&ApiKey>) -> Error {
    let message = scrub(&error_message(v).unwrap_or_else(|| "unknown error event".into()), key);
    if is_overflow_message(&message) {
        return Error::Overflow { message };
    }
    let lower = message.to_ascii_lowercase();
    let retryable =
        ["overloaded", "api_error", "rate_limit", "internal", "unavailable", "timeout", "server_error", "503", "500"]
            .iter()
            .any(|p| lower.contains(p));
    Error::StreamError { message, retryable }
}

pub(super) fn looks_like_html(body: &[u8]) -> bool {
    let head = String::from_utf8_lossy(&body[..body.len().min(512)]).trim_start().to_ascii_lowercase();
    head.starts_with("<!doctype html")
        || head.starts_with("<html")
        || head.starts_with("<head")
        || head.starts_with("<body")
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
pub(super) fn classify_status(
    status: u16,
    headers: &reqwest::header::HeaderMap,
    content_type: &str,
    body: &[u8],
    key: Option<&ApiKey>,
    wire: Wire,
    policy: &RetryPolicy,
    hint: Option<Duration>,
) -> Failure {
    let request_id = ["x-request-id", "request-id", "x-goog-request-id", "cf-ray"]
        .iter()
        .find_map(|h| headers.get(*h).and_then(|v| v.to_str().ok()).map(str::to_string));
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
                    return Failure {
                        error: Error::RetryTooLong { wait: h, cap: policy.max_server_wait, message },
                        hint: None,
                    };
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

pub(super) fn reqwest_error(e: reqwest::Error, key: Option<&ApiKey>, what: &str, t: &Timeouts) -> Error {
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

pub(super) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(inner) = src {
        s.push_str(": ");
        s.push_str(&inner.to_string());
        src = inner.source();
    }
    s
}
