//! Secrets in exported entries: each entry's parsed line has its strings redacted
//! (`secrets::redact`) before anything is rendered from it, so the message texts, tool results,
//! tool-call arguments, bash commands and output, summaries, labels and names, and every preview
//! and outline line made from them, show `[redacted: kind]` where a secret was. The session
//! file is not touched: only the parsed copy changes.
//!
//! A finding names its place as the export shows it: the entry, the `field` (a path in the
//! entry's JSON, e.g. `message.content[0].text`, `message.content[1].arguments.command`,
//! `message.output`, `summary`) and `start..end`, UTF-16 code units (JavaScript string indices,
//! as Pi counts) into that string. The export renders those strings verbatim: a text block, a
//! tool result's text, a bash command or output, a summary as they are, a tool-call argument as
//! `name: value` with the value verbatim.
//!
//! What is scanned: every string of the entry but the ones the export never shows (ids,
//! timestamps, types, model names, signatures of thinking blocks, `details`, `usage`, and the
//! base64 `data` of images, which is not a secret and is large). Inside tool-call arguments every
//! string is shown, so every one is scanned, and as `name: value`, so that a value is found by
//! its name (`"password": "…"`) as an assignment in a file would be.

use pi_json::Value;
use session_engine::session::{Kind, Session};

/// One secret in an exported entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SecretFinding {
    /// The entry's index in the session.
    pub entry: usize,
    pub entry_id: String,
    /// Where in the entry's JSON the string is: `message.content[0].text`, `summary`, …
    pub field: String,
    /// The rule's id: `aws-access-key`, `jwt`, `private-key`, `secret-assignment`, …
    pub kind: &'static str,
    /// UTF-16 code units into the field's string.
    pub start: usize,
    pub end: usize,
}

/// Keys outside tool-call arguments whose strings the export never shows: structure, ids,
/// model facts, opaque signatures, Pi's `details`.
const NOT_SHOWN: &[&str] = &[
    "id",
    "parentId",
    "timestamp",
    "type",
    "role",
    "api",
    "provider",
    "model",
    "modelId",
    "stopReason",
    "toolCallId",
    "mimeType",
    "thinkingSignature",
    "textSignature",
    "signature",
    "redacted",
    "details",
    "usage",
    "customType",
    "firstKeptEntryId",
    "fromId",
    "targetId",
    "thinkingLevel",
    "cwd",
    "version",
];

/// The entry's line parsed, with its secrets redacted (unless `keep`), and the findings. A line
/// without any of the rules' keywords is only parsed.
pub(crate) fn entry_value(session: &Session, idx: usize, keep: bool) -> (Value, Vec<SecretFinding>) {
    let raw = session.raw(idx);
    let mut v = pi_json::parse_bytes(&raw).unwrap_or(Value::Null);
    if keep || !secrets::might_contain_json(&raw) {
        return (v, Vec::new());
    }
    let mut found = Vec::new();
    // Entries the export shows whole (as JSON) are scanned whole.
    let shown_in_parts = match session.kind(idx) {
        Kind::Message => matches!(
            v.get("message").and_then(|m| m.str_field("role")),
            Some("user" | "assistant" | "toolResult" | "bashExecution")
        ),
        Kind::Custom | Kind::Other => false,
        _ => true,
    };
    let mut path = String::new();
    walk(&mut v, &mut path, shown_in_parts, false, &mut |field, f, s| {
        found.push(SecretFinding {
            entry: idx,
            entry_id: session.id(idx).to_string(),
            field: field.to_string(),
            kind: f.kind,
            start: pi_json::utf16_len(&s[..f.start]),
            end: pi_json::utf16_len(&s[..f.end]),
        })
    });
    (v, found)
}

/// Redacts the strings of `v` in place; `report(path, finding, original string)` for each.
/// `skip` leaves out the keys the export does not show (false for an entry of unknown type,
/// which the export shows whole); `args` is true inside a tool call's arguments.
fn walk(
    v: &mut Value,
    path: &mut String,
    skip: bool,
    args: bool,
    report: &mut dyn FnMut(&str, &secrets::Finding, &str),
) {
    match v {
        Value::Str(s) => redact_string(s, path, None, report),
        Value::Arr(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                walk(item, path, skip, args, report);
                path.truncate(len);
            }
        }
        Value::Obj(map) => {
            let image = map.get("type").and_then(Value::as_str) == Some("image");
            let tool_call = map.get("type").and_then(Value::as_str) == Some("toolCall");
            for (k, item) in map.0.iter_mut() {
                if !args && skip && (NOT_SHOWN.contains(&k.as_str()) || (image && k == "data")) {
                    continue;
                }
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(k);
                let in_args = args || (tool_call && k == "arguments");
                match item {
                    // An argument is shown as `name: value`: scanned so, the name giving the
                    // value's meaning, and reported in the value.
                    Value::Str(s) if args => redact_string(s, path, Some(k.as_str()), report),
                    _ => walk(item, path, skip, in_args, report),
                }
                path.truncate(len);
            }
        }
        _ => {}
    }
}

/// Redacts one string; with `name`, as the line `name: value` (findings inside the value only).
fn redact_string(
    s: &mut pi_json::Str,
    path: &str,
    name: Option<&str>,
    report: &mut dyn FnMut(&str, &secrets::Finding, &str),
) {
    let found: Vec<secrets::Finding> = match name {
        None => secrets::find(s),
        Some(n) => {
            let line = format!("{n}: {s}");
            let off = n.len() + 2;
            secrets::find(&line)
                .into_iter()
                .filter(|f| f.end > off)
                .map(|f| secrets::Finding { kind: f.kind, start: f.start.max(off) - off, end: f.end - off })
                .collect()
        }
    };
    if found.is_empty() {
        return;
    }
    for f in &found {
        report(path, f, s);
    }
    *s = secrets::apply(s, &found).into();
}

/// A text from outside the entries' values that the export shows (the title, a label, the
/// session's name): redacted unless `keep`, with no report (its entry reports it).
pub(crate) fn text(s: &str, keep: bool) -> std::borrow::Cow<'_, str> {
    if keep || !secrets::might_contain(s.as_bytes()) {
        return s.into();
    }
    secrets::redact(s).0.into()
}
