//! Bringing back into context an entry the model no longer sees (compacted away, or on a branch
//! that was left): one Pi `custom_message` entry at the leaf (`customType` [`CUSTOM_TYPE`],
//! `display: true`, `details: {sources: [{entryId, where}]}`) whose content is the entries' text,
//! each under a one-line header saying where and when it came from. Pi's context maps a
//! `custom_message` to a `custom` message in place (§8.2), so Pi sends it to the model and Arbor's
//! context view shows it where Pi puts it.
//!
//! Pure planning: the caller writes the entry (the store's planned append) and passes a
//! `redact` function for the text (secrets stay home): it returns the text to bring back and the
//! secrets it found, which the plan lists per entry whether they were redacted or kept, so the
//! person sees them before anything is written.
//!
//! Refused, with a sentence: an entry the model already sees at the leaf (in its own place, or
//! brought back by an earlier recall still in context), an entry that is not a
//! message or a summary, and a read-only (version 1 or 2) session. A long text (a tool result,
//! a command's output) is cut to `max_chars` with a marker saying how much was left out.
use crate::blocks::{blocks, Block};
use crate::context::{self, build_context, estimate_context, should_compact, CompactionSettings};
use crate::session::{Kind, Session};
use pi_json::{Map, Value};

pub const CUSTOM_TYPE: &str = "arbor-recall";
/// The default cut for one entry's text.
pub const DEFAULT_MAX_CHARS: usize = 8000;

#[derive(Debug, Clone, PartialEq)]
pub struct RecallPlan {
    /// The entries brought back, in the order given.
    pub sources: Vec<(String, &'static str)>,
    /// The custom message's content.
    pub text: String,
    /// Pi's estimate of the new message (chars / 4, rounded up).
    pub tokens: f64,
    /// The context at the leaf before and after.
    pub context_tokens: f64,
    pub context_tokens_after: f64,
    /// `contextWindow - reserveTokens`; `crosses_threshold` when the context with the message is
    /// past it (compaction is then due: Pi compacts before the next prompt).
    pub threshold: f64,
    pub crosses_threshold: bool,
    /// Entries whose text was cut to `max_chars`.
    pub cut: Vec<String>,
    /// The secrets `redact` found, by entry, in the order given.
    pub secrets: Vec<RecallSecret>,
}

/// A secret in an entry's text (bytes `start..end` of the text before the cut), as the caller's
/// `redact` reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecallSecret {
    pub entry_id: String,
    /// The rule that found it, e.g. `github-token`.
    pub kind: String,
    pub start: usize,
    pub end: usize,
}

/// The caller's secrets pass over one entry's text: the text to bring back (redacted, or as it
/// was when the person chose to keep secrets) and what it found, as `(kind, start, end)`.
pub type Redact<'a> = &'a dyn Fn(&str) -> (String, Vec<(String, usize, usize)>);

fn cut(text: &str, max: usize) -> (String, bool) {
    match text.char_indices().nth(max) {
        None => (text.to_string(), false),
        Some((at, _)) => {
            let left = text[at..].chars().count();
            (format!("{}\n[… {left} more characters not brought back]", &text[..at]), true)
        }
    }
}

fn tool_call_text(b: &Value) -> String {
    let args = b.get("arguments").map(pi_json::to_string).unwrap_or_default();
    format!("[tool call] {}({args})", b.str_field("name").unwrap_or("tool"))
}

/// The entry's text and what it is ("user message", "tool result of bash", …).
fn entry_text(session: &Session, i: usize) -> Option<(String, String)> {
    let v = session.value(i);
    match session.kind(i) {
        Kind::Compaction => Some(("compaction summary".into(), v.str_field("summary").unwrap_or("").to_string())),
        Kind::BranchSummary => Some(("branch summary".into(), v.str_field("summary").unwrap_or("").to_string())),
        Kind::CustomMessage => Some((
            format!("{} message", v.str_field("customType").unwrap_or("custom")),
            context::text_blocks_joined(v.get("content").unwrap_or(&Value::Null), "\n"),
        )),
        Kind::Message => {
            let m = session.message(i)?;
            match session.role(i)? {
                "user" => Some(("user message".into(), context::user_text(m.get("content").unwrap_or(&Value::Null)))),
                "assistant" => {
                    let parts: Vec<String> = blocks(m.get("content"))
                        .filter_map(|b| match b {
                            Block::Text(_) => b.text().map(str::to_string),
                            Block::ToolCall(v) => Some(tool_call_text(v)),
                            _ => None,
                        })
                        .collect();
                    Some(("assistant message".into(), parts.join("\n")))
                }
                "toolResult" => Some((
                    format!("tool result of {}", m.str_field("toolName").unwrap_or("a tool")),
                    context::text_blocks_joined(m.get("content").unwrap_or(&Value::Null), "\n"),
                )),
                "bashExecution" => Some((
                    "command the user ran".into(),
                    format!("$ {}\n{}", m.str_field("command").unwrap_or(""), m.str_field("output").unwrap_or("")),
                )),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Plans bringing `ids` back at `leaf`. `redact` runs over each entry's text before it is cut.
pub fn plan_recall(
    session: &Session,
    leaf: Option<usize>,
    ids: &[usize],
    max_chars: usize,
    settings: &CompactionSettings,
    context_window: f64,
    redact: Redact,
) -> Result<RecallPlan, String> {
    if let Some(why) = session.read_only_reason() {
        return Err(format!("this session is read-only, so nothing can be brought back: {why}"));
    }
    if ids.is_empty() {
        return Err("pick at least one entry to bring back".into());
    }
    let ctx = build_context(session, leaf);
    // What the model sees: the context's entries, and what earlier recalls in it brought back.
    let mut seen: std::collections::HashSet<usize> = ctx.messages.iter().map(|m| m.entry).collect();
    for m in &ctx.messages {
        let v = session.value(m.entry);
        if session.kind(m.entry) == Kind::CustomMessage && v.str_field("customType") == Some(CUSTOM_TYPE) {
            let sources = v.get("details").and_then(|d| d.get("sources")).and_then(Value::as_array);
            for s in sources.into_iter().flatten() {
                if let Some(i) = s.str_field("entryId").and_then(|id| session.index_of(id)) {
                    seen.insert(i);
                }
            }
        }
    }
    let on_path: std::collections::HashSet<usize> = session.path(leaf).into_iter().collect();
    let mut parts = Vec::new();
    let mut sources = Vec::new();
    let mut cut_ids = Vec::new();
    let mut found = Vec::new();
    for &i in ids {
        let id = session.id(i);
        if seen.contains(&i) {
            return Err(format!("the model already sees entry {id} at the leaf, so there is nothing to bring back"));
        }
        let Some((what, text)) = entry_text(session, i) else {
            return Err(format!(
                "entry {id} is a {} entry, which has no text to bring back; pick a message or a summary",
                session.entry(i).type_name
            ));
        };
        let place: &'static str = if on_path.contains(&i) { "compacted away" } else { "on a branch that was left" };
        let (text, secrets) = redact(&text);
        found.extend(secrets.into_iter().map(|(kind, start, end)| RecallSecret {
            entry_id: id.to_string(),
            kind,
            start,
            end,
        }));
        let (body, was_cut) = cut(&text, max_chars);
        if was_cut {
            cut_ids.push(id.to_string());
        }
        parts
            .push(format!("[Brought back by Arbor: {what} {id} from {}, {place}]\n{body}", session.entry(i).timestamp));
        sources.push((id.to_string(), place));
    }
    let text = parts.join("\n\n");
    let tokens = (pi_json::utf16_len(&text) as f64 / 4.0).ceil();
    let mut messages = ctx.agent_messages();
    let context_tokens = estimate_context(&messages).tokens;
    let mut m = Map::new();
    m.insert("role", Value::Str("custom".into()));
    m.insert("content", Value::from(text.as_str()));
    messages.push(Value::Obj(m));
    let context_tokens_after = estimate_context(&messages).tokens;
    let threshold = context_window - settings.reserve_tokens;
    Ok(RecallPlan {
        sources,
        text,
        tokens,
        context_tokens,
        context_tokens_after,
        threshold,
        crosses_threshold: should_compact(context_tokens_after, context_window, settings),
        cut: cut_ids,
        secrets: found,
    })
}

/// The `custom_message` entry of a plan.
pub fn recall_entry(plan: &RecallPlan, id: &str, parent: Option<&str>, timestamp: &str) -> Value {
    let sources: Vec<Value> = plan
        .sources
        .iter()
        .map(|(id, place)| {
            let mut s = Map::new();
            s.insert("entryId", Value::from(id.as_str()));
            s.insert("where", Value::Str((*place).into()));
            Value::Obj(s)
        })
        .collect();
    let mut details = Map::new();
    details.insert("sources", Value::Arr(sources));
    crate::entries::custom_message(
        id,
        parent,
        timestamp,
        CUSTOM_TYPE,
        Value::from(plan.text.as_str()),
        true,
        Some(Value::Obj(details)),
    )
}
