//! Entry detail as typed blocks. The UI renders each block as text nodes (markdown without raw
//! HTML), so session content can never become markup.

use crate::engine_shim::{utf16_len, Session};
use serde::Serialize;
use serde_json::Value;
use specta::Type;

#[derive(Debug, Clone, Serialize, Type)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Block {
    /// Markdown source (rendered without raw HTML).
    Text { text: String },
    Thinking { text: String, chars: u32 },
    #[serde(rename_all = "camelCase")]
    ToolCall { name: String, arguments_json: String },
    #[serde(rename_all = "camelCase")]
    ToolResult { tool_name: String, text: String, chars: u32, is_error: bool },
    #[serde(rename_all = "camelCase")]
    Image { mime_type: String, bytes: u32 },
    /// A compaction or branch summary (markdown source).
    Summary { title: String, text: String },
    /// Small facts: model changes, label targets, file lists.
    Meta { text: String },
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct EntryDetail {
    pub id: String,
    pub parent_id: Option<String>,
    pub entry_type: String,
    pub role: Option<String>,
    pub timestamp: String,
    pub label: Option<String>,
    pub blocks: Vec<Block>,
    /// The raw JSON line, pretty-printed (shown as text in a collapsed section).
    pub raw_json: String,
    pub on_active_path: bool,
    pub is_leaf: bool,
}

fn content_blocks(content: &Value, out: &mut Vec<Block>) {
    match content {
        Value::String(s) => out.push(Block::Text { text: s.clone() }),
        Value::Array(items) => {
            for b in items {
                let t = b.get("type").and_then(Value::as_str).unwrap_or("");
                let s = |k: &str| b.get(k).and_then(Value::as_str).unwrap_or("").to_string();
                match t {
                    "text" => out.push(Block::Text { text: s("text") }),
                    "thinking" => {
                        let text = s("thinking");
                        out.push(Block::Thinking { chars: utf16_len(&text) as u32, text })
                    }
                    "toolCall" => out.push(Block::ToolCall {
                        name: s("name"),
                        arguments_json: b
                            .get("arguments")
                            .map(|a| serde_json::to_string_pretty(a).unwrap_or_default())
                            .unwrap_or_default(),
                    }),
                    "image" => out.push(Block::Image {
                        mime_type: s("mimeType"),
                        bytes: (utf16_len(&s("data")) * 3 / 4) as u32,
                    }),
                    _ => out.push(Block::Meta { text: format!("({t} block)") }),
                }
            }
        }
        _ => {}
    }
}

fn text_of(content: &Value) -> String {
    let mut blocks = Vec::new();
    content_blocks(content, &mut blocks);
    blocks
        .into_iter()
        .filter_map(|b| match b {
            Block::Text { text } => Some(text),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn entry_detail(s: &Session, idx: usize, path: &[usize], leaf: Option<usize>) -> EntryDetail {
    let e = &s.entries[idx];
    let v = &e.value;
    let str_of = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let mut blocks = Vec::new();
    let role = s.role(idx).map(str::to_string);
    match e.entry_type.as_str() {
        "message" => {
            let m = s.message(idx).cloned().unwrap_or(Value::Null);
            match role.as_deref() {
                Some("toolResult") => {
                    let text = text_of(m.get("content").unwrap_or(&Value::Null));
                    blocks.push(Block::ToolResult {
                        tool_name: m.get("toolName").and_then(Value::as_str).unwrap_or("").to_string(),
                        chars: utf16_len(&text) as u32,
                        text,
                        is_error: m.get("isError").and_then(Value::as_bool).unwrap_or(false),
                    });
                }
                Some("bashExecution") => {
                    let cmd = m.get("command").and_then(Value::as_str).unwrap_or("");
                    let output = m.get("output").and_then(Value::as_str).unwrap_or("").to_string();
                    blocks.push(Block::Meta { text: format!("$ {cmd}") });
                    blocks.push(Block::ToolResult {
                        tool_name: "bash".into(),
                        chars: utf16_len(&output) as u32,
                        text: output,
                        is_error: m.get("exitCode").and_then(Value::as_i64).is_some_and(|c| c != 0),
                    });
                }
                _ => content_blocks(m.get("content").unwrap_or(&Value::Null), &mut blocks),
            }
            if let Some(model) = m.get("model").and_then(Value::as_str) {
                blocks.push(Block::Meta { text: format!("model: {model}") });
            }
        }
        "compaction" => {
            blocks.push(Block::Summary { title: "Compaction summary".into(), text: str_of("summary") });
            blocks.push(Block::Meta {
                text: format!("firstKeptEntryId: {} · tokensBefore: {}", str_of("firstKeptEntryId"), v.get("tokensBefore").map(|t| t.to_string()).unwrap_or_default()),
            });
        }
        "branch_summary" => {
            blocks.push(Block::Summary { title: "Branch summary".into(), text: str_of("summary") });
            blocks.push(Block::Meta { text: format!("from: {}", str_of("fromId")) });
        }
        "custom_message" => content_blocks(v.get("content").unwrap_or(&Value::Null), &mut blocks),
        "label" => blocks.push(Block::Meta { text: format!("label on {}: {}", str_of("targetId"), str_of("label")) }),
        "model_change" => blocks.push(Block::Meta { text: format!("model: {}/{}", str_of("provider"), str_of("modelId")) }),
        "thinking_level_change" => blocks.push(Block::Meta { text: format!("thinking level: {}", str_of("thinkingLevel")) }),
        "session_info" => blocks.push(Block::Meta { text: format!("session name: {}", str_of("name")) }),
        other => blocks.push(Block::Meta { text: format!("{other} entry") }),
    }
    EntryDetail {
        id: e.id.clone(),
        parent_id: e.parent_id.clone(),
        entry_type: e.entry_type.clone(),
        role,
        timestamp: e.timestamp.clone(),
        label: s.labels.get(&e.id).cloned(),
        blocks,
        raw_json: serde_json::to_string_pretty(v).unwrap_or_default(),
        on_active_path: path.contains(&idx),
        is_leaf: leaf == Some(idx),
    }
}
