//! Growth: a summary's tokens against what it replaced and against the summary before it.
//!
//! Tokens are Pi's estimate (UTF-16 characters / 4, rounded up, §9.1). What a compaction
//! replaced is its span's messages plus the previous summary (both leave the context for it);
//! a branch summary replaced its span. Two flags: `notSmaller` when the summary is not smaller
//! than what it replaced, `grew` when it is more than [`GROWTH_LIMIT`] times the previous
//! summary (a chain of summaries that grows instead of condensing).
use serde::Serialize;
use session_engine::compaction::compaction_message;
use session_engine::context::estimate_tokens;
use session_engine::session::Session;

pub const GROWTH_LIMIT: f64 = 1.5;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum GrowthFlag {
    NotSmaller,
    Grew,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Growth {
    pub summary_tokens: f64,
    pub replaced_tokens: f64,
    pub previous_summary_tokens: Option<f64>,
    pub flag: Option<GrowthFlag>,
}

pub fn text_tokens(text: &str) -> f64 {
    (pi_json::utf16_len(text) as f64 / 4.0).ceil()
}

pub(crate) fn growth_over(session: &Session, entries: &[usize], prev_text: Option<&str>, text: &str) -> Growth {
    let summary_tokens = text_tokens(text);
    let previous_summary_tokens = prev_text.map(text_tokens);
    let replaced_tokens =
        entries.iter().filter_map(|&e| compaction_message(session, e)).map(|m| estimate_tokens(&m)).sum::<f64>()
            + previous_summary_tokens.unwrap_or(0.0);
    let flag = if replaced_tokens > 0.0 && summary_tokens >= replaced_tokens {
        Some(GrowthFlag::NotSmaller)
    } else if previous_summary_tokens.is_some_and(|p| p > 0.0 && summary_tokens > GROWTH_LIMIT * p) {
        Some(GrowthFlag::Grew)
    } else {
        None
    };
    Growth { summary_tokens, replaced_tokens, previous_summary_tokens, flag }
}
