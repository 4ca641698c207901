//! Continuing a session: Pi's context (after `convertToLlm`) as a text-only conversation.
//!
//! Arbor runs no tools, so tool calls and their results are shown to the model as text inside
//! the turns rather than as structured tool blocks (which every provider would require tool
//! definitions for). Thinking blocks are left out; images become a placeholder.
use crate::provider::{Role, Turn};
use crate::run::wire_text;
use pi_json::Value;
use session_engine::blocks::{blocks, Block};

pub const SYSTEM: &str =
    "You are continuing a coding session that was recorded by the Pi coding agent and is now viewed in Arbor. \
Arbor cannot run tools: earlier tool calls and their results appear as text in the conversation. \
Answer in text; when a step needs a tool, say exactly what to run or change.";

fn text_blocks(content: Option<&Value>, sep: &str) -> String {
    match content {
        Some(Value::Str(s)) => s.to_string(),
        Some(Value::Arr(_)) => blocks(content)
            .filter_map(|b| match b {
                Block::Text(_) => b.text().map(str::to_string),
                Block::Image(_) => Some("[image omitted]".to_string()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join(sep),
        _ => String::new(),
    }
}

fn tool_call_text(b: &Value) -> String {
    let name = b.str_field("name").unwrap_or("tool");
    let args = match b.get("arguments") {
        Some(Value::Obj(m)) => {
            m.0.iter().map(|(k, v)| format!("{k}={}", pi_json::to_string(v))).collect::<Vec<_>>().join(", ")
        }
        _ => String::new(),
    };
    format!("[Tool call] {name}({args})")
}

/// Converts LLM-form messages (engine `to_llm`) into alternating user/assistant turns,
/// starting with the user, without empty turns.
pub fn to_turns(messages: &[Value]) -> Vec<Turn> {
    let mut turns: Vec<Turn> = Vec::new();
    let mut push = |role: Role, text: String| {
        let text = wire_text(text.trim_end());
        if text.trim().is_empty() {
            return;
        }
        match turns.last_mut() {
            Some(last) if last.role == role => {
                last.text.push_str("\n\n");
                last.text.push_str(&text);
            }
            _ => turns.push(Turn { role, text }),
        }
    };
    for m in messages {
        match m.str_field("role") {
            Some("user") => push(Role::User, text_blocks(m.get("content"), "")),
            Some("assistant") => {
                let mut parts = Vec::new();
                for b in blocks(m.get("content")) {
                    match b {
                        Block::Text(_) => parts.push(b.text().unwrap_or("").to_string()),
                        Block::ToolCall(b) => parts.push(tool_call_text(b)),
                        Block::Thinking(_) | Block::Image(_) | Block::Other(_) => {}
                    }
                }
                if m.str_field("stopReason") == Some("error") {
                    if let Some(e) = m.str_field("errorMessage") {
                        parts.push(format!("[The request failed: {e}]"));
                    }
                }
                push(Role::Assistant, parts.join("\n"));
            }
            Some("toolResult") => {
                let name = m.str_field("toolName").unwrap_or("tool");
                let status = if m.get("isError").is_some_and(Value::truthy) { "error" } else { "result" };
                push(Role::User, format!("[Tool {status} from {name}]\n{}", text_blocks(m.get("content"), "")));
            }
            _ => {}
        }
    }
    if turns.first().is_some_and(|t| t.role == Role::Assistant) {
        turns.insert(0, Turn { role: Role::User, text: "(The session starts with the assistant.)".into() });
    }
    turns
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_json::parse;
    #[test]
    fn tool_chain_becomes_alternating_text_turns() {
        let msgs: Vec<Value> = [
            r#"{"role":"assistant","content":[{"type":"text","text":"hello"}]}"#,
            r#"{"role":"user","content":[{"type":"text","text":"fix it"},{"type":"image","data":"x","mimeType":"image/png"}]}"#,
            r#"{"role":"assistant","content":[{"type":"thinking","thinking":"hmm"},{"type":"toolCall","id":"1","name":"read","arguments":{"path":"a.rs","offset":2}}]}"#,
            r#"{"role":"toolResult","toolCallId":"1","toolName":"read","content":[{"type":"text","text":"fn a() {}"}],"isError":false}"#,
            r#"{"role":"user","content":"and test"}"#,
        ]
        .iter()
        .map(|s| parse(s).unwrap())
        .collect();
        let t = to_turns(&msgs);
        let roles: Vec<Role> = t.iter().map(|x| x.role).collect();
        assert_eq!(roles, [Role::User, Role::Assistant, Role::User, Role::Assistant, Role::User]);
        assert_eq!(t[2].text, "fix it[image omitted]");
        assert_eq!(t[3].text, "[Tool call] read(path=\"a.rs\", offset=2)");
        assert_eq!(t[4].text, "[Tool result from read]\nfn a() {}\n\nand test");
        assert!(!t.iter().any(|x| x.text.contains("hmm")));
    }
}
