//! One view of a message's content blocks (Pi's `text`, `thinking`, `toolCall` and `image`), so
//! the walks over them (context estimate, compaction's file operations and serialization, export,
//! the library's index, the summarizers, the CLI and the graph's titles) match on a type instead
//! of comparing `type` strings each on their own.
//!
//! The view keeps each block's own values unconverted (`&Value`): callers that follow Pi's
//! JavaScript for odd shapes (a non-string `text`, a missing `name`) still see exactly what the
//! line holds.

use pi_json::Value;

/// A content block by its `type`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Block<'a> {
    Text(&'a Value),
    Thinking(&'a Value),
    ToolCall(&'a Value),
    Image(&'a Value),
    /// Another `type`, no `type`, or not an object.
    Other(&'a Value),
}

impl<'a> Block<'a> {
    pub fn of(b: &'a Value) -> Block<'a> {
        match b.str_field("type") {
            Some("text") => Block::Text(b),
            Some("thinking") => Block::Thinking(b),
            Some("toolCall") => Block::ToolCall(b),
            Some("image") => Block::Image(b),
            _ => Block::Other(b),
        }
    }
    /// The block's JSON object, whatever its type.
    pub fn value(self) -> &'a Value {
        match self {
            Block::Text(b) | Block::Thinking(b) | Block::ToolCall(b) | Block::Image(b) | Block::Other(b) => b,
        }
    }
    /// A text block's `text`, when it is a string.
    pub fn text(self) -> Option<&'a str> {
        match self {
            Block::Text(b) => b.str_field("text"),
            _ => None,
        }
    }
    /// A thinking block's `thinking`, when it is a string.
    pub fn thinking(self) -> Option<&'a str> {
        match self {
            Block::Thinking(b) => b.str_field("thinking"),
            _ => None,
        }
    }
    /// A tool call's `name`, when it is a string.
    pub fn tool_name(self) -> Option<&'a str> {
        match self {
            Block::ToolCall(b) => b.str_field("name"),
            _ => None,
        }
    }
    /// A tool call's `arguments`, as written.
    pub fn arguments(self) -> Option<&'a Value> {
        match self {
            Block::ToolCall(b) => b.get("arguments"),
            _ => None,
        }
    }
}

/// The blocks of a `content` array (none for a string, a missing or another kind of content).
pub fn blocks(content: Option<&Value>) -> impl Iterator<Item = Block<'_>> {
    let list: &[Value] = match content {
        Some(Value::Arr(a)) => a,
        _ => &[],
    };
    list.iter().map(Block::of)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_json::parse;

    #[test]
    fn blocks_are_typed_by_their_type_field_and_keep_their_values() {
        let v = parse(
            r#"[{"type":"text","text":"hi"},{"type":"thinking","thinking":"hmm"},{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a.rs"}},
                {"type":"image","mimeType":"image/png","data":"AA=="},{"type":"text","text":7},{"type":"video"},"plain",{"text":"no type"}]"#,
        )
        .unwrap();
        let b: Vec<Block> = blocks(Some(&v)).collect();
        assert_eq!(b.len(), 8);
        assert_eq!((b[0].text(), b[1].thinking(), b[2].tool_name()), (Some("hi"), Some("hmm"), Some("read")));
        assert_eq!(b[2].arguments().and_then(|a| a.str_field("path")), Some("a.rs"));
        assert!(matches!(b[3], Block::Image(i) if i.str_field("mimeType") == Some("image/png")));
        assert!(
            matches!(b[4], Block::Text(_)) && b[4].text().is_none(),
            "a non-string text is a text block without a str"
        );
        assert!(matches!((b[5], b[6], b[7]), (Block::Other(_), Block::Other(_), Block::Other(_))));
        assert_eq!(b[6].value(), &Value::Str("plain".into()));
        assert_eq!((b[0].thinking(), b[1].text(), b[0].tool_name(), b[0].arguments()), (None, None, None, None));
        assert_eq!(blocks(Some(&Value::Str("text".into()))).count(), 0);
        assert_eq!(blocks(None).count(), 0);
    }
}
