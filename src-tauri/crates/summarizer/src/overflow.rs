//! Context-overflow classification with Pi's pattern set (pi-ai 0.73.1 `utils/overflow.js`),
//! so an overflow is recognised in each provider's wording and never retried unchanged.
use regex::RegexSet;
use std::sync::OnceLock;

const OVERFLOW: &[&str] = &[
    r"(?i)prompt is too long",                                  // Anthropic
    r"(?i)request_too_large",                                   // Anthropic 413
    r"(?i)input is too long for requested model",               // Bedrock
    r"(?i)exceeds the context window",                          // OpenAI
    r"(?i)input token count.*exceeds the maximum",              // Gemini
    r"(?i)maximum prompt length is \d+",                        // xAI
    r"(?i)reduce the length of the messages",                   // Groq
    r"(?i)maximum context length is \d+ tokens",                // OpenRouter, vLLM
    r"(?i)exceeds the limit of \d+",                            // Copilot
    r"(?i)exceeds the available context size",                  // llama.cpp
    r"(?i)greater than the context length",                     // LM Studio
    r"(?i)context window exceeds limit",                        // MiniMax
    r"(?i)exceeded model token limit",                          // Kimi
    r"(?i)too large for model with \d+ maximum context length", // Mistral
    r"(?i)model_context_window_exceeded",                       // z.ai
    r"(?i)prompt too long; exceeded (?:max )?context length",   // Ollama
    r"(?i)context[_ ]length[_ ]exceeded",
    r"(?i)too many tokens",
    r"(?i)token limit exceeded",
    r"(?i)^4(?:00|13)\s*(?:status code)?\s*\(no body\)", // Cerebras
];

const NOT_OVERFLOW: &[&str] =
    &[r"(?i)^(Throttling error|Service unavailable):", r"(?i)rate limit", r"(?i)too many requests"];

fn sets() -> &'static (RegexSet, RegexSet) {
    static SETS: OnceLock<(RegexSet, RegexSet)> = OnceLock::new();
    // The patterns are literals checked by the unit tests below, so they always compile.
    SETS.get_or_init(|| {
        (
            RegexSet::new(OVERFLOW).expect("overflow patterns compile"),
            RegexSet::new(NOT_OVERFLOW).expect("non-overflow patterns compile"),
        )
    })
}

/// True when an error message means "the input does not fit the model's context".
pub fn is_overflow_message(message: &str) -> bool {
    let (yes, no) = sets();
    !no.is_match(message) && yes.is_match(message)
}

/// Pi's silent-overflow rules for a *successful* answer (§10.2 of the format spec).
pub fn is_silent_overflow(
    stop_ok: bool,
    stop_length: bool,
    input: u64,
    cache_read: u64,
    output: u64,
    context_window: u64,
) -> bool {
    if context_window == 0 {
        return false;
    }
    let used = input + cache_read;
    (stop_ok && used > context_window) || (stop_length && output == 0 && (used as f64) >= context_window as f64 * 0.99)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn provider_wordings() {
        for m in [
            "prompt is too long: 213000 tokens > 200000 maximum",
            "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
            "Your input exceeds the context window of this model",
            "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
            "Please reduce the length of the messages or completion.",
            "413 (no body)",
            "context_length_exceeded",
        ] {
            assert!(is_overflow_message(m), "{m}");
        }
        for m in ["Rate limit reached: too many tokens per minute", "overloaded", "Too Many Requests"] {
            assert!(!is_overflow_message(m), "{m}");
        }
    }
    #[test]
    fn silent() {
        assert!(is_silent_overflow(true, false, 190_000, 20_000, 10, 200_000));
        assert!(!is_silent_overflow(true, false, 100, 0, 10, 200_000));
        assert!(is_silent_overflow(false, true, 199_000, 0, 0, 200_000));
    }
}
