//! Entry detail as typed blocks. The UI renders each block as text nodes (markdown without raw
//! HTML), so session content can never become markup.

use pi_json::{to_pretty, utf16_len, Value};
use serde::Serialize;
use session_engine::blocks::{blocks, Block as ContentBlock};
use session_engine::{Kind, Session};
use specta::Type;

#[derive(Debug, Clone, Serialize, Type)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Block {
    /// Markdown source (rendered without raw HTML).
    Text {
        text: String,
    },
    Thinking {
        text: String,
        chars: u32,
    },
    #[serde(rename_all = "camelCase")]
    ToolCall {
        name: String,
        arguments_json: String,
    },
    #[serde(rename_all = "camelCase")]
    ToolResult {
        tool_name: String,
        text: String,
        chars: u32,
        is_error: bool,
    },
    #[serde(rename_all = "camelCase")]
    Image {
        mime_type: String,
        bytes: u32,
    },
    /// A compaction or branch summary (markdown source).
    Summary {
        title: String,
        text: String,
    },
    /// Small facts: model changes, label targets, file lists.
    Meta {
        text: String,
    },
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
        Value::Str(s) => out.push(Block::Text { text: s.to_string() }),
        Value::Arr(_) => {
            for cb in blocks(Some(content)) {
                let b = cb.value();
                let s = |k: &str| b.str_field(k).unwrap_or("").to_string();
                match cb {
                    ContentBlock::Text(_) => out.push(Block::Text { text: cb.text().unwrap_or("").to_string() }),
                    ContentBlock::Thinking(_) => {
                        let text = cb.thinking().unwrap_or("").to_string();
                        out.push(Block::Thinking { chars: utf16_len(&text) as u32, text })
                    }
                    ContentBlock::ToolCall(_) => out.push(Block::ToolCall {
                        name: cb.tool_name().unwrap_or("").to_string(),
                        arguments_json: cb.arguments().map(to_pretty).unwrap_or_default(),
                    }),
                    ContentBlock::Image(_) => out
                        .push(Block::Image { mime_type: s("mimeType"), bytes: (utf16_len(&s("data")) * 3 / 4) as u32 }),
                    ContentBlock::Other(_) => {
                        out.push(Block::Meta { text: format!("({} block)", b.str_field("type").unwrap_or("")) })
                    }
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

pub fn entry_detail(session: &Session, idx: usize, path: &[usize], leaf: Option<usize>) -> EntryDetail {
    let e = session.entry(idx);
    let v = session.value(idx);
    let str_of = |k: &str| v.str_field(k).unwrap_or("").to_string();
    let mut blocks = Vec::new();
    let role = session.role(idx).map(str::to_string);
    match session.kind(idx) {
        Kind::Message => {
            let m = session.message(idx).unwrap_or(&Value::Null);
            match role.as_deref() {
                Some("toolResult") => {
                    let text = text_of(m.get("content").unwrap_or(&Value::Null));
                    blocks.push(Block::ToolResult {
                        tool_name: m.str_field("toolName").unwrap_or("").to_string(),
                        chars: utf16_len(&text) as u32,
                        text,
                        is_error: m.get("isError").and_then(Value::as_bool).unwrap_or(false),
                    });
                }
                Some("bashExecution") => {
                    let output = m.str_field("output").unwrap_or("").to_string();
                    blocks.push(Block::Meta { text: format!("$ {}", m.str_field("command").unwrap_or("")) });
                    blocks.push(Block::ToolResult {
                        tool_name: "bash".into(),
                        chars: utf16_len(&output) as u32,
                        text: output,
                        is_error: m.num_field("exitCode").is_some_and(|c| c != 0.0),
                    });
                }
                _ => content_blocks(m.get("content").unwrap_or(&Value::Null), &mut blocks),
            }
            if let Some(model) = m.str_field("model") {
                blocks.push(Block::Meta { text: format!("model: {model}") });
            }
        }
        Kind::Compaction => {
            blocks.push(Block::Summary { title: "Compaction summary".into(), text: str_of("summary") });
            let tokens = v.get("tokensBefore").map(pi_json::to_string).unwrap_or_default();
            blocks.push(Block::Meta {
                text: format!("firstKeptEntryId: {} · tokensBefore: {tokens}", str_of("firstKeptEntryId")),
            });
        }
        Kind::BranchSummary => {
            blocks.push(Block::Summary { title: "Branch summary".into(), text: str_of("summary") });
            blocks.push(Block::Meta { text: format!("from: {}", str_of("fromId")) });
        }
        Kind::CustomMessage => content_blocks(v.get("content").unwrap_or(&Value::Null), &mut blocks),
        Kind::Label => {
            blocks.push(Block::Meta { text: format!("label on {}: {}", str_of("targetId"), str_of("label")) })
        }
        Kind::ModelChange => {
            blocks.push(Block::Meta { text: format!("model: {}/{}", str_of("provider"), str_of("modelId")) })
        }
        Kind::ThinkingLevelChange => {
            blocks.push(Block::Meta { text: format!("thinking level: {}", str_of("thinkingLevel")) })
        }
        Kind::SessionInfo => blocks.push(Block::Meta { text: format!("session name: {}", str_of("name")) }),
        Kind::Custom | Kind::Other => blocks.push(Block::Meta { text: format!("{} entry", e.type_name) }),
    }
    EntryDetail {
        id: e.id.to_string(),
        parent_id: e.parent_id.as_deref().map(str::to_string),
        entry_type: e.type_name.to_string(),
        role,
        timestamp: e.timestamp.to_string(),
        label: session.label_of(&e.id).map(str::to_string),
        blocks,
        raw_json: to_pretty(v),
        on_active_path: path.contains(&idx),
        is_leaf: leaf == Some(idx),
    }
}

/// What the UI shows when a node is selected, in one IPC round trip: the entry's detail, the
/// context window of the session's model there, and what the model would see with that node
/// as the leaf (with that window).
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct Selection {
    pub detail: EntryDetail,
    pub window: crate::view::window::ContextWindowView,
    pub context: crate::view::context::ContextView,
}
