use super::{leaf_arg, open_session, preview, CmdResult};
use pi_json::Value;
use session_engine::blocks::{blocks, Block};
use session_engine::context::{build_context, estimate_context, estimate_tokens, should_compact};
use std::fmt::Write as _;

/// A readable text of one agent message, for the listing.
pub fn message_text(m: &Value) -> String {
    match m.str_field("role") {
        Some("user") | Some("custom") | Some("toolResult") => {
            session_engine::context::user_text(m.get("content").unwrap_or(&Value::Null))
        }
        Some("assistant") => {
            let mut parts = Vec::new();
            for b in blocks(m.get("content")) {
                match b {
                    Block::Text(_) => parts.push(b.text().unwrap_or("").to_string()),
                    Block::Thinking(_) => parts.push(format!("(thinking) {}", b.thinking().unwrap_or(""))),
                    Block::ToolCall(_) => parts.push(format!(
                        "→ {}({})",
                        b.tool_name().unwrap_or("?"),
                        b.arguments().map(pi_json::to_string).unwrap_or_default()
                    )),
                    Block::Image(_) | Block::Other(_) => {}
                }
            }
            parts.join(" ")
        }
        Some("bashExecution") => session_engine::context::bash_text(m),
        Some("compactionSummary") | Some("branchSummary") => m.str_field("summary").unwrap_or("").to_string(),
        _ => String::new(),
    }
}

pub fn run(a: crate::ContextArgs) -> CmdResult {
    let session = open_session(&a.file)?;
    let leaf = leaf_arg(&session, a.leaf.as_deref())?;
    let ctx = build_context(&session, leaf);
    let agent = ctx.agent_messages();
    let est = estimate_context(&agent);
    // The threshold Pi compacts at: the session model's window (Pi's models.json, then its
    // table) and Pi's settings files, unless flags say otherwise.
    let resolved = super::session_window(&session, leaf);
    let window = a.context_window.unwrap_or(resolved.tokens);
    let window_source = if a.context_window.is_some() { "--context-window".to_string() } else { resolved.label() };
    let mut settings = super::navigate::pi_settings(&session).compaction();
    if let Some(r) = a.reserve_tokens {
        settings.reserve_tokens = r as f64;
    }
    let reserve = settings.reserve_tokens;
    let mut out = String::new();
    let model = ctx
        .model
        .as_ref()
        .map(|m| {
            format!(
                "{}/{}",
                session_engine::context::js_to_string(&m.provider),
                session_engine::context::js_to_string(&m.model_id)
            )
        })
        .unwrap_or_else(|| "(none)".into());
    let _ = writeln!(
        out,
        "Context at {} — {} messages, model {model}, thinking {}",
        leaf.map(|l| session.id(l).to_string()).unwrap_or_else(|| "(before the first entry)".into()),
        agent.len(),
        session_engine::context::js_to_string(&ctx.thinking_level)
    );
    for (i, m) in ctx.messages.iter().enumerate() {
        let role = m.message.str_field("role").unwrap_or("?");
        let label = match role {
            "compactionSummary" => "SUMMARY (compaction)".to_string(),
            "branchSummary" => "SUMMARY (branch)".to_string(),
            r => r.to_string(),
        };
        let _ = writeln!(out, "{:>4}  {:<22} {}  ~{} tok", i, label, session.id(m.entry), estimate_tokens(&m.message));
        let _ = writeln!(out, "      {}", preview(&message_text(&m.message), 160));
    }
    let threshold = window as f64 - reserve;
    let _ = writeln!(
        out,
        "\nTokens: {} (usage {} + trailing estimate {}); threshold {} (window {} − reserve {}); {}\nWindow: {window_source}",
        est.tokens,
        est.usage_tokens,
        est.trailing_tokens,
        threshold,
        window,
        reserve,
        if should_compact(est.tokens, window as f64, &settings) { "OVER the threshold: Pi would compact" } else { "under the threshold" }
    );
    print!("{out}");
    Ok(())
}
