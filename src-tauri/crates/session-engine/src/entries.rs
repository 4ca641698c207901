//! New entries, written in Pi's key order with `JSON.stringify` semantics (§2, §4).
//! Ids and timestamps are arguments: the engine never reads the clock or draws ids itself.

use pi_json::{Map, Value};

fn base(type_: &str, id: &str, parent: Option<&str>, timestamp: &str) -> Map {
    let mut m = Map::new();
    m.insert("type", type_.into());
    m.insert("id", id.into());
    m.insert("parentId", parent.map(Value::from).unwrap_or(Value::Null));
    m.insert("timestamp", timestamp.into());
    m
}

/// Serializes an entry object as one JSONL line (without the trailing `\n`).
pub fn line(v: &Value) -> String {
    pi_json::to_string(v)
}

pub fn header(id: &str, timestamp: &str, cwd: &str, parent_session: Option<&str>) -> Value {
    let mut m = Map::new();
    m.insert("type", "session".into());
    m.insert("version", Value::Num(crate::session::CURRENT_VERSION as f64));
    m.insert("id", id.into());
    m.insert("timestamp", timestamp.into());
    m.insert("cwd", cwd.into());
    if let Some(p) = parent_session {
        m.insert("parentSession", p.into());
    }
    Value::Obj(m)
}

pub fn message(id: &str, parent: Option<&str>, timestamp: &str, message: Value) -> Value {
    let mut m = base("message", id, parent, timestamp);
    m.insert("message", message);
    Value::Obj(m)
}

#[allow(clippy::too_many_arguments)]
pub fn compaction(
    id: &str,
    parent: Option<&str>,
    timestamp: &str,
    summary: &str,
    first_kept_entry_id: &str,
    tokens_before: f64,
    details: Option<Value>,
    from_hook: bool,
) -> Value {
    let mut m = base("compaction", id, parent, timestamp);
    m.insert("summary", summary.into());
    m.insert("firstKeptEntryId", first_kept_entry_id.into());
    m.insert("tokensBefore", Value::Num(tokens_before));
    if let Some(d) = details {
        m.insert("details", d);
    }
    m.insert("fromHook", Value::Bool(from_hook));
    Value::Obj(m)
}

/// A `branch_summary` whose parent is the new leaf; `fromId` is that same id, or `"root"`.
pub fn branch_summary(
    id: &str,
    new_leaf: Option<&str>,
    timestamp: &str,
    summary: &str,
    details: Option<Value>,
    from_hook: bool,
) -> Value {
    let mut m = base("branch_summary", id, new_leaf, timestamp);
    m.insert("fromId", new_leaf.unwrap_or("root").into());
    m.insert("summary", summary.into());
    if let Some(d) = details {
        m.insert("details", d);
    }
    m.insert("fromHook", Value::Bool(from_hook));
    Value::Obj(m)
}

/// A `label` entry; `None` clears the label (the key is left out, as Pi does for `undefined`).
pub fn label(id: &str, parent: Option<&str>, timestamp: &str, target_id: &str, label: Option<&str>) -> Value {
    let mut m = base("label", id, parent, timestamp);
    m.insert("targetId", target_id.into());
    if let Some(l) = label {
        m.insert("label", l.into());
    }
    Value::Obj(m)
}

pub fn session_info(id: &str, parent: Option<&str>, timestamp: &str, name: &str) -> Value {
    let mut m = base("session_info", id, parent, timestamp);
    m.insert("name", name.trim().into());
    Value::Obj(m)
}

pub fn model_change(id: &str, parent: Option<&str>, timestamp: &str, provider: &str, model_id: &str) -> Value {
    let mut m = base("model_change", id, parent, timestamp);
    m.insert("provider", provider.into());
    m.insert("modelId", model_id.into());
    Value::Obj(m)
}

pub fn thinking_level_change(id: &str, parent: Option<&str>, timestamp: &str, level: &str) -> Value {
    let mut m = base("thinking_level_change", id, parent, timestamp);
    m.insert("thinkingLevel", level.into());
    Value::Obj(m)
}

/// Pi's `appendCustomMessageEntry`: `{type, customType, content, display, details, id, parentId,
/// timestamp}` in Pi's key order (`details` left out when None, as `JSON.stringify` drops an
/// undefined value).
pub fn custom_message(
    id: &str,
    parent: Option<&str>,
    timestamp: &str,
    custom_type: &str,
    content: Value,
    display: bool,
    details: Option<Value>,
) -> Value {
    let mut m = Map::new();
    m.insert("type", Value::Str("custom_message".into()));
    m.insert("customType", Value::Str(custom_type.into()));
    m.insert("content", content);
    m.insert("display", Value::Bool(display));
    if let Some(d) = details {
        m.insert("details", d);
    }
    m.insert("id", Value::Str(id.into()));
    m.insert("parentId", parent.map_or(Value::Null, |p| Value::Str(p.into())));
    m.insert("timestamp", Value::Str(timestamp.into()));
    Value::Obj(m)
}
