//! Anthropic Messages.

use super::types::{Acc, CompletionRequest, Failure, ProviderConfig, Stop, Turn, Usage};
use crate::error::Error;
use serde_json::{json, Value};

/// The request body.
pub(super) fn body(
    cfg: &ProviderConfig,
    req: &CompletionRequest,
    turns: &[Turn],
    role: impl Fn(&Turn, &'static str) -> &'static str,
) -> Value {
    json!({
        "model": cfg.model,
        "max_tokens": req.max_tokens,
        "system": req.system,
        "messages": turns.iter().map(|t| json!({"role": role(t, "assistant"), "content": [{"type": "text", "text": t.text}]})).collect::<Vec<_>>(),
        "stream": cfg.stream,
    })
}

/// A whole (non-streamed) answer.
pub(super) fn full(acc: &mut Acc, v: &Value) -> std::result::Result<(), Failure> {
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
    Ok(())
}

fn anthropic_stop(r: &str) -> Stop {
    match r {
        "max_tokens" => Stop::MaxTokens,
        "refusal" => Stop::Refused("refusal".into()),
        "model_context_window_exceeded" => Stop::MaxTokens,
        _ => Stop::Ok,
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

pub(super) fn anthropic_event(acc: &mut Acc, v: &Value) {
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
