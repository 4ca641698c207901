//! Context view: what the model would see if a given entry were the leaf, with per-message token
//! estimates and totals per category for the stacked bar.

use crate::engine_shim::{build_context, estimate_context, estimate_tokens, message_chars, Category, Session};
use serde::Serialize;
use serde_json::Value;
use specta::Type;

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

impl From<Category> for TokenCategory {
    fn from(c: Category) -> Self {
        match c {
            Category::Summary => TokenCategory::Summary,
            Category::User => TokenCategory::User,
            Category::AssistantText => TokenCategory::AssistantText,
            Category::Thinking => TokenCategory::Thinking,
            Category::ToolCalls => TokenCategory::ToolCalls,
            Category::ToolResults => TokenCategory::ToolResults,
            Category::Other => TokenCategory::Other,
        }
    }
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

pub fn context_view(s: &Session, leaf: Option<usize>, context_window: u32, reserve_tokens: u32, enabled: bool) -> ContextView {
    let ctx = build_context(s, leaf);
    let mut totals = [0u64; 7];
    let mut messages = Vec::with_capacity(ctx.len());
    for m in &ctx {
        let mut chars_by_cat = message_chars(&m.message);
        if chars_by_cat.is_empty() {
            chars_by_cat.push((Category::Other, 0));
        }
        // Split the message's ceil(chars/4) across its categories in proportion to their chars.
        let tokens = estimate_tokens(&m.message);
        let chars: usize = chars_by_cat.iter().map(|(_, n)| n).sum();
        let mut left = tokens;
        for (k, (cat, n)) in chars_by_cat.iter().enumerate() {
            let share = if k + 1 == chars_by_cat.len() { left } else if chars == 0 { 0 } else { tokens * *n as u64 / chars as u64 };
            left -= share.min(left);
            let pos = ORDER.iter().position(|c| *c == TokenCategory::from(*cat)).unwrap_or(6);
            totals[pos] += share;
        }
        let role = m.message.get("role").and_then(Value::as_str).unwrap_or("").to_string();
        let preview = match m.entry {
            Some(i) if role != "compactionSummary" => super::graph::entry_title(s, i).1,
            _ => super::one_line(m.message.get("summary").and_then(Value::as_str).unwrap_or(""), 140),
        };
        messages.push(ContextMessage {
            entry_id: m.entry.map(|i| s.entries[i].id.clone()),
            role,
            tokens: tokens as u32,
            preview,
        });
    }
    let values: Vec<Value> = ctx.into_iter().map(|m| m.message).collect();
    let (context_tokens, _, _) = estimate_context(&values);
    let threshold = context_window.saturating_sub(reserve_tokens);
    ContextView {
        leaf_id: leaf.map(|l| s.entries[l].id.clone()),
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
