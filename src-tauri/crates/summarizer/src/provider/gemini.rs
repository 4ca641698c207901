//! Google Gemini `generateContent`.

use super::types::{num, Acc, CompletionRequest, Failure, ProviderConfig, Stop, Turn, Usage};
use crate::error::Error;
use serde_json::{json, Value};

/// The request body (the model goes in the URL, see `Client::url`).
pub(super) fn body(
    _cfg: &ProviderConfig,
    req: &CompletionRequest,
    turns: &[Turn],
    role: impl Fn(&Turn, &'static str) -> &'static str,
) -> Value {
    json!({
        "systemInstruction": {"parts": [{"text": req.system}]},
        "contents": turns.iter().map(|t| json!({"role": role(t, "model"), "parts": [{"text": t.text}]})).collect::<Vec<_>>(),
        "generationConfig": {"maxOutputTokens": req.max_tokens},
    })
}

/// A whole (non-streamed) answer.
pub(super) fn full(acc: &mut Acc, v: &Value) -> std::result::Result<(), Failure> {
    gemini_chunk(acc, v);
    if acc.stop.is_none() {
        return Err(Error::Invalid { detail: "no finishReason in the answer".into() }.into());
    }
    Ok(())
}

fn gemini_stop(r: &str) -> Stop {
    match r {
        "STOP" | "FINISH_REASON_UNSPECIFIED" => Stop::Ok,
        "MAX_TOKENS" => Stop::MaxTokens,
        other => Stop::Refused(other.to_string()),
    }
}

pub(super) fn gemini_chunk(acc: &mut Acc, v: &Value) {
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
