//! Context view: what the model would see if a given entry were the leaf, with per-message token
//! estimates and totals per category for the stacked bar.

use pi_json::Value;
use serde::Serialize;
use session_engine::context::{build_context, estimate_chars, estimate_context, estimate_tokens, Context};
use session_engine::Session;
use specta::Type;

/// A message's estimated characters by category: the engine's own parts of the estimate
/// ([`estimate_chars`]), so the categories add up to Pi's estimate by construction.
pub fn message_chars(m: &Value) -> Vec<(TokenCategory, usize)> {
    let Some(c) = estimate_chars(m) else { return Vec::new() };
    let parts = [
        (TokenCategory::Summary, c.summary),
        (TokenCategory::User, c.user),
        (TokenCategory::AssistantText, c.assistant_text),
        (TokenCategory::Thinking, c.thinking),
        (TokenCategory::ToolCalls, c.tool_calls),
        (TokenCategory::ToolResults, c.tool_results),
        (TokenCategory::Other, c.other),
    ];
    parts.into_iter().filter(|&(_, n)| n > 0.0).map(|(k, n)| (k, n as usize)).collect()
}

/// Where the characters of a context message go (the engine's `EstimateChars` parts).
#[derive(Debug, Clone, Copy, Serialize, Type, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum TokenCategory {
    Summary,
    User,
    AssistantText,
    Thinking,
    ToolCalls,
    ToolResults,
    Other,
}

const ORDER: [TokenCategory; 7] = [
    TokenCategory::Summary,
    TokenCategory::User,
    TokenCategory::AssistantText,
    TokenCategory::Thinking,
    TokenCategory::ToolCalls,
    TokenCategory::ToolResults,
    TokenCategory::Other,
];

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct ContextMessage {
    pub entry_id: Option<String>,
    /// user, assistant, toolResult, compactionSummary, branchSummary, custom, bashExecution.
    pub role: String,
    pub tokens: u32,
    pub preview: String,
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct CategoryTokens {
    pub category: TokenCategory,
    pub tokens: u32,
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct ContextView {
    pub leaf_id: Option<String>,
    /// `provider/modelId` in effect at this leaf (so the user can pick its context window).
    pub model: Option<String>,
    /// Thinking level in effect at this leaf.
    pub thinking_level: String,
    pub messages: Vec<ContextMessage>,
    pub categories: Vec<CategoryTokens>,
    /// Σ chars/4 over the messages (what the bar shows).
    pub estimated_tokens: u32,
    /// Pi's context estimate (§9.3: last usage + trailing estimate).
    pub context_tokens: u32,
    pub context_window: u32,
    pub reserve_tokens: u32,
    /// contextWindow − reserveTokens.
    pub threshold: u32,
    pub over_threshold: bool,
}

pub fn context_view(
    session: &Session,
    leaf: Option<usize>,
    context_window: u32,
    reserve_tokens: u32,
    enabled: bool,
) -> ContextView {
    context_view_of(session, leaf, &build_context(session, leaf), context_window, reserve_tokens, enabled)
}

/// [`context_view`] of a context the caller already built for `leaf`.
pub fn context_view_of(
    session: &Session,
    leaf: Option<usize>,
    ctx: &Context,
    context_window: u32,
    reserve_tokens: u32,
    enabled: bool,
) -> ContextView {
    let mut totals = [0u64; 7];
    let mut messages = Vec::with_capacity(ctx.messages.len());
    for m in &ctx.messages {
        let mut chars_by_cat = message_chars(&m.message);
        if chars_by_cat.is_empty() {
            chars_by_cat.push((TokenCategory::Other, 0));
        }
        // Split the message's ceil(chars/4) across its categories in proportion to their chars.
        let tokens = estimate_tokens(&m.message) as u64;
        let chars: usize = chars_by_cat.iter().map(|(_, n)| n).sum();
        let mut left = tokens;
        for (k, (cat, n)) in chars_by_cat.iter().enumerate() {
            let share = if k + 1 == chars_by_cat.len() {
                left
            } else if chars == 0 {
                0
            } else {
                tokens * *n as u64 / chars as u64
            };
            left -= share.min(left);
            let pos = ORDER.iter().position(|c| c == cat).unwrap_or(6);
            totals[pos] += share;
        }
        let role = m.message.str_field("role").unwrap_or("").to_string();
        let preview = if role == "compactionSummary" {
            super::one_line(m.message.str_field("summary").unwrap_or(""), 140)
        } else {
            super::graph::entry_title(session, m.entry).1
        };
        messages.push(ContextMessage {
            entry_id: Some(session.id(m.entry).to_string()),
            role,
            tokens: tokens as u32,
            preview,
        });
    }
    let context_tokens = estimate_context(&ctx.agent_messages()).tokens as u64;
    let threshold = context_window.saturating_sub(reserve_tokens);
    ContextView {
        leaf_id: leaf.map(|l| session.id(l).to_string()),
        model: ctx.model.as_ref().map(|m| {
            format!(
                "{}/{}",
                session_engine::context::js_to_string(&m.provider),
                session_engine::context::js_to_string(&m.model_id)
            )
        }),
        thinking_level: session_engine::context::js_to_string(&ctx.thinking_level),
        messages,
        categories: ORDER.iter().zip(totals).map(|(c, t)| CategoryTokens { category: *c, tokens: t as u32 }).collect(),
        estimated_tokens: totals.iter().sum::<u64>() as u32,
        context_tokens: context_tokens as u32,
        context_window,
        reserve_tokens,
        threshold,
        over_threshold: enabled && context_tokens > threshold as u64,
    }
}
