//! OpenAI-compatible chat completions.

use super::types::{num, Acc, CompletionRequest, Failure, ProviderConfig, Stop, Turn, Usage};
use crate::error::Error;
use serde_json::{json, Value};

/// The request body (`messages` with the system prompt first).
pub(super) fn body(
    cfg: &ProviderConfig,
    req: &CompletionRequest,
    turns: &[Turn],
    role: impl Fn(&Turn, &'static str) -> &'static str,
) -> Value {
    let mut messages = vec![json!({"role": "system", "content": req.system})];
    messages.extend(turns.iter().map(|t| json!({"role": role(t, "assistant"), "content": t.text})));
    let mut b = json!({
        "model": cfg.model,
        "messages": messages,
        "stream": cfg.stream,
    });
    // OpenAI's own API rejects `max_tokens` for its newer models; compatible servers
    // (Ollama, vLLM, LM Studio, Groq, OpenRouter) all take `max_tokens`.
    b[openai_max_tokens_field(&cfg.base_url)] = json!(req.max_tokens);
    if cfg.stream {
        b["stream_options"] = json!({"include_usage": true});
    }
    b
}

/// A whole (non-streamed) answer.
pub(super) fn full(acc: &mut Acc, v: &Value) -> std::result::Result<(), Failure> {
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
    Ok(())
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

fn openai_usage(u: &Value) -> Usage {
    let cached = num(u.pointer("/prompt_tokens_details/cached_tokens"));
    Usage {
        input: num(u.get("prompt_tokens")).saturating_sub(cached),
        output: num(u.get("completion_tokens")),
        cache_read: cached,
        cache_write: 0,
    }
}

pub(super) fn openai_chunk(acc: &mut Acc, v: &Value) {
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
