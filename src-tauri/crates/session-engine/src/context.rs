//! What the model sees: `buildSessionContext` (§8), `convertToLlm` (§8.4), token estimates (§9)
//! and the automatic compaction check (§10).
//!
//! [`build_context`] puts the compaction summary first, then the kept entries from
//! `firstKeptEntryId`, then everything after the compaction (custom messages, non-empty branch
//! summaries); `to_llm` uses Pi's exact wrapper texts; `estimate_tokens` is characters / 4 in
//! UTF-16 units; `estimate_context` is the last valid usage plus the trailing estimates;
//! `should_compact` and `auto_compaction_check` decide as Pi's agent does after a turn.

use crate::blocks::{blocks, Block};
use crate::session::{Kind, Session};
use crate::time::parse_iso_ms;
use pi_json::{obj, Value};
use std::borrow::Cow;

pub const COMPACTION_PREFIX: &str =
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
pub const COMPACTION_SUFFIX: &str = "\n</summary>";
pub const BRANCH_PREFIX: &str =
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
pub const BRANCH_SUFFIX: &str = "</summary>";

/// One message of the context and the entry it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct CtxMessage<'a> {
    pub entry: usize,
    /// A `message` entry's message is borrowed from the session (as Pi's context references its
    /// objects); the messages built from other entries (summaries, custom) are owned.
    pub message: Cow<'a, Value>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    pub provider: Value,
    pub model_id: Value,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Context<'a> {
    pub messages: Vec<CtxMessage<'a>>,
    pub thinking_level: Value,
    pub model: Option<Model>,
    /// The compaction whose summary opens the context, if any.
    pub compaction: Option<usize>,
}

impl Context<'_> {
    pub fn agent_messages(&self) -> Vec<Value> {
        self.messages.iter().map(|m| m.message.clone().into_owned()).collect()
    }
    /// The messages, borrowed: for reading them (a token estimate) without the copy
    /// [`Context::agent_messages`] makes.
    pub fn message_refs(&self) -> Vec<&Value> {
        self.messages.iter().map(|m| &*m.message).collect()
    }
}

fn ts_ms(session: &Session, idx: usize) -> Value {
    match parse_iso_ms(&session.entry(idx).timestamp) {
        Some(ms) => Value::Num(ms as f64),
        None => Value::Num(f64::NAN),
    }
}

fn field(v: &Value, k: &str) -> Value {
    v.get(k).cloned().unwrap_or(Value::Null)
}

/// `{role, ...keys present in v, timestamp?}`: the shape of Pi's `create*Message` helpers.
/// `undefined` values are left out by JSON.stringify; keep that by skipping absent keys.
fn message_of(role: &str, v: &Value, keys: &[&str], ts: Option<Value>) -> Value {
    let mut m = pi_json::Map::new();
    m.insert("role", role.into());
    for k in keys {
        if let Some(x) = v.get(k) {
            m.insert(*k, x.clone());
        }
    }
    if let Some(t) = ts {
        m.insert("timestamp", t);
    }
    Value::Obj(m)
}

const CUSTOM_KEYS: &[&str] = &["customType", "content", "display", "details"];
const BRANCH_KEYS: &[&str] = &["summary", "fromId"];
const COMPACTION_KEYS: &[&str] = &["summary", "tokensBefore"];

/// `createCustomMessage`: `{role, customType, content, display, details?, timestamp}`.
pub fn custom_message(session: &Session, idx: usize) -> Value {
    message_of("custom", session.value(idx), CUSTOM_KEYS, Some(ts_ms(session, idx)))
}

/// `createBranchSummaryMessage`.
pub fn branch_summary_message(session: &Session, idx: usize) -> Value {
    message_of("branchSummary", session.value(idx), BRANCH_KEYS, Some(ts_ms(session, idx)))
}

/// `createCompactionSummaryMessage`.
pub fn compaction_summary_message(session: &Session, idx: usize) -> Value {
    message_of("compactionSummary", session.value(idx), COMPACTION_KEYS, Some(ts_ms(session, idx)))
}

/// The §8.2 context mapping of one entry.
pub fn context_message(session: &Session, idx: usize) -> Option<Value> {
    context_message_of(session.kind(idx), session.value(idx), || ts_ms(session, idx))
}

/// [`context_message`] of an entry known only by its kind and JSON (an appended line the index
/// reads without a session). `ts` gives the timestamp of the custom and summary messages.
pub fn context_message_of(kind: Kind, v: &Value, ts: impl FnOnce() -> Value) -> Option<Value> {
    match kind {
        Kind::Message => v.get("message").cloned(),
        Kind::CustomMessage => Some(message_of("custom", v, CUSTOM_KEYS, Some(ts()))),
        Kind::BranchSummary if v.get("summary").is_some_and(Value::truthy) => {
            Some(message_of("branchSummary", v, BRANCH_KEYS, Some(ts())))
        }
        _ => None,
    }
}

/// [`compaction_summary_message`] of a compaction entry's JSON, without its timestamp (which
/// token estimates do not count).
pub fn compaction_summary_of(v: &Value) -> Value {
    message_of("compactionSummary", v, COMPACTION_KEYS, None)
}

/// `buildSessionContext` for `leaf` (None = before the first entry: empty context).
///
/// Walks up from the leaf and keeps only the entries the context can use: once the newest
/// compaction and the entry it keeps from are passed, the walk goes on (storing nothing) only
/// until the thinking level and the model are known. On a long session the context is a few
/// hundred entries at the end of a path of tens of thousands, which [`build_context_on_path`]
/// would first collect. The result is that of `build_context_on_path(s, &s.path(leaf))`.
pub fn build_context(session: &Session, leaf: Option<usize>) -> Context<'_> {
    let Some(leaf) = leaf else { return build_context_on_path(session, &[]) };
    // A looping parentId chain makes a bounded path with repeats: as Pi states it, on the path.
    if session.has_cycle() {
        return build_context_on_path(session, &session.path(Some(leaf)));
    }
    // The path from the leaf up (leaf first), as far as the context needs it.
    let mut up: Vec<usize> = Vec::new();
    let mut settings = Settings::default();
    // The newest compaction's position in `up`; the entry it keeps from, when that is in the
    // file; where the walk met it.
    let mut comp: Option<usize> = None;
    let mut want: Option<usize> = None;
    let mut kept_at: Option<usize> = None;
    let mut cur = Some(leaf);
    let mut steps = 0;
    while let Some(c) = cur {
        steps += 1;
        if steps > session.len() {
            // A loop the loader did not report (it reports them all): the bounded path.
            return build_context_on_path(session, &session.path(Some(leaf)));
        }
        if comp.is_none() || (want.is_some() && kept_at.is_none()) {
            up.push(c);
            if comp.is_some() && Some(c) == want {
                kept_at = Some(up.len() - 1);
            }
        }
        settings.see(session, c);
        if comp.is_none() && session.kind(c) == Kind::Compaction {
            comp = Some(up.len() - 1);
            match session.value(c).get("firstKeptEntryId").and_then(Value::as_str) {
                // The leaf's id may also be an earlier entry's (the index keeps the later one):
                // Pi compares ids along the path; do that on the whole path.
                Some(id) if id == session.id(leaf) => return build_context_on_path(session, &session.path(Some(leaf))),
                Some(id) => want = session.index_of(id),
                None => {}
            }
        }
        if settings.done() && comp.is_some() && (want.is_none() || kept_at.is_some()) {
            break;
        }
        cur = session.parent_of(c);
    }
    let mut ctx = settings.into_context();
    let order: Vec<usize> = match comp {
        None => up.iter().rev().copied().collect(),
        Some(ci) => {
            let c = up[ci];
            ctx.compaction = Some(c);
            ctx.messages.push(CtxMessage { entry: c, message: Cow::Owned(compaction_summary_message(session, c)) });
            // Kept (from the kept entry to the compaction), then the compaction's descendants
            // down to the leaf; oldest first.
            let kept = kept_at.map_or(&[][..], |k| &up[ci + 1..=k]);
            kept.iter().rev().chain(up[..ci].iter().rev()).copied().collect()
        }
    };
    push_messages(session, &mut ctx, &order);
    ctx
}

/// The settings of a context (thinking level, model), read from the leaf up: the newest entry
/// that sets each one decides.
#[derive(Default)]
struct Settings {
    thinking: Option<Value>,
    model: Option<Model>,
}

impl Settings {
    fn done(&self) -> bool {
        self.thinking.is_some() && self.model.is_some()
    }
    /// Takes what entry `idx` sets, unless a newer entry set it already.
    fn see(&mut self, session: &Session, idx: usize) {
        match session.kind(idx) {
            Kind::ThinkingLevelChange if self.thinking.is_none() => {
                self.thinking = Some(field(session.value(idx), "thinkingLevel"))
            }
            Kind::ModelChange if self.model.is_none() => {
                let v = session.value(idx);
                self.model = Some(Model { provider: field(v, "provider"), model_id: field(v, "modelId") });
            }
            Kind::Message if self.model.is_none() && session.role(idx) == Some("assistant") => {
                if let Some(m) = session.message(idx) {
                    if m.str_field("role") == Some("assistant") {
                        self.model = Some(Model { provider: field(m, "provider"), model_id: field(m, "model") });
                    }
                }
            }
            _ => {}
        }
    }
    fn into_context<'a>(self) -> Context<'a> {
        Context {
            messages: Vec::new(),
            thinking_level: self.thinking.unwrap_or_else(|| Value::Str("off".into())),
            model: self.model,
            compaction: None,
        }
    }
}

/// The context messages of `order`'s entries, in that order (their unparsed message entries
/// parsed ahead, on two threads when they are many bytes).
fn push_messages<'a>(session: &'a Session, ctx: &mut Context<'a>, order: &[usize]) {
    let messages: Vec<usize> = order.iter().copied().filter(|&i| session.kind(i) == Kind::Message).collect();
    session.parse_ahead(&messages);
    for &idx in order {
        let m = match session.kind(idx) {
            Kind::Message => session.value(idx).get("message").map(Cow::Borrowed),
            _ => context_message(session, idx).map(Cow::Owned),
        };
        if let Some(message) = m {
            ctx.messages.push(CtxMessage { entry: idx, message });
        }
    }
}

/// The context for a given root-first path (its last entry is the leaf).
pub fn build_context_on_path<'a>(session: &'a Session, path: &[usize]) -> Context<'a> {
    let mut settings = Settings::default();
    let mut comp_pos: Option<usize> = None;
    for (pos, &idx) in path.iter().enumerate().rev() {
        settings.see(session, idx);
        if comp_pos.is_none() && session.kind(idx) == Kind::Compaction {
            comp_pos = Some(pos);
        }
        if settings.done() && comp_pos.is_some() {
            break;
        }
    }
    let mut ctx = settings.into_context();
    match comp_pos {
        None => push_messages(session, &mut ctx, path),
        Some(ci) => {
            let c = path[ci];
            ctx.compaction = Some(c);
            ctx.messages.push(CtxMessage { entry: c, message: Cow::Owned(compaction_summary_message(session, c)) });
            let first_kept = session.value(c).get("firstKeptEntryId").and_then(Value::as_str);
            let kept_from = first_kept.and_then(|id| kept_position(session, path, ci, id));
            let kept = kept_from.map_or(&[][..], |k| &path[k..ci]);
            let order: Vec<usize> = kept.iter().chain(&path[ci + 1..]).copied().collect();
            push_messages(session, &mut ctx, &order);
        }
    }
    ctx
}

/// Where the compaction at `path[ci]` keeps from: the first entry before it whose id is
/// `first_kept` (Pi compares ids along the path).
///
/// The entries of a path are the id index's entries (each parent is looked up by id), so the
/// entry is found by its index, comparing numbers instead of reading each entry's id from the
/// file's bytes (a cache miss per entry on a long path). Only the leaf can be an earlier
/// duplicate of an id; when its id is the one asked for, the ids are compared as Pi does.
fn kept_position(session: &Session, path: &[usize], ci: usize, first_kept: &str) -> Option<usize> {
    let leaf = *path.last()?;
    if session.id(leaf) == first_kept {
        return path[..ci].iter().position(|&i| session.id(i) == first_kept);
    }
    let want = session.index_of(first_kept)?;
    path[..ci].iter().position(|&i| i == want)
}

/// A content value's text: the string itself, or its text blocks joined with `sep` (Pi's
/// `extractTextContent` uses " ", the user-message text ""); a non-string `text` reads as
/// JavaScript's `String(text)`.
pub fn text_blocks_joined(content: &Value, sep: &str) -> String {
    match content {
        Value::Str(s) => s.to_string(),
        Value::Arr(_) => blocks(Some(content))
            .filter_map(|b| match b {
                Block::Text(b) => Some(match b.get("text") {
                    Some(Value::Str(t)) => t.to_string(),
                    Some(other) => js_to_string(other),
                    None => "undefined".into(),
                }),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join(sep),
        _ => String::new(),
    }
}

/// JavaScript `String(value)` for the values that can appear in template literals here.
pub fn js_to_string(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Num(n) => {
            if n.is_nan() {
                "NaN".into()
            } else if n.is_infinite() {
                if *n > 0.0 {
                    "Infinity".into()
                } else {
                    "-Infinity".into()
                }
            } else {
                pi_json::number_to_string(*n)
            }
        }
        Value::Str(s) => s.to_string(),
        Value::Arr(a) => {
            a.iter().map(|x| if x.is_null() { String::new() } else { js_to_string(x) }).collect::<Vec<_>>().join(",")
        }
        Value::Obj(_) => "[object Object]".into(),
    }
}

/// The user-visible text of a user message's content (string, or text blocks joined with "").
pub fn user_text(content: &Value) -> String {
    text_blocks_joined(content, "")
}

/// `bashExecutionToText`.
pub fn bash_text(m: &Value) -> String {
    let cmd = m.get("command").map(js_to_string).unwrap_or_else(|| "undefined".into());
    let mut t = format!("Ran `{cmd}`\n");
    match m.get("output") {
        Some(o) if o.truthy() => t.push_str(&format!("```\n{}\n```", js_to_string(o))),
        _ => t.push_str("(no output)"),
    }
    if m.get("cancelled").is_some_and(Value::truthy) {
        t.push_str("\n\n(command cancelled)");
    } else if let Some(code) = m.get("exitCode") {
        if !code.is_null() && !matches!(code, Value::Num(n) if *n == 0.0) {
            t.push_str(&format!("\n\nCommand exited with code {}", js_to_string(code)));
        }
    }
    if m.get("truncated").is_some_and(Value::truthy) {
        if let Some(p) = m.get("fullOutputPath").filter(|p| p.truthy()) {
            t.push_str(&format!("\n\n[Output truncated. Full output: {}]", js_to_string(p)));
        }
    }
    t
}

fn text_block(text: String) -> Value {
    obj([("type", "text".into()), ("text", Value::from(text))])
}

fn user_msg(content: Value, ts: Option<&Value>) -> Value {
    let mut m = pi_json::Map::new();
    m.insert("role", "user".into());
    m.insert("content", content);
    if let Some(t) = ts {
        m.insert("timestamp", t.clone());
    }
    Value::Obj(m)
}

/// `convertToLlm` of one message, borrowing the ones it passes through unchanged.
pub fn to_llm_cow(m: &Value) -> Option<std::borrow::Cow<'_, Value>> {
    match m.str_field("role")? {
        "user" | "assistant" | "toolResult" => Some(std::borrow::Cow::Borrowed(m)),
        _ => to_llm_one(m).map(std::borrow::Cow::Owned),
    }
}

/// `convertToLlm` of one message (None = dropped).
pub fn to_llm_one(m: &Value) -> Option<Value> {
    let role = m.str_field("role")?;
    let ts = m.get("timestamp");
    match role {
        "user" | "assistant" | "toolResult" => Some(m.clone()),
        "bashExecution" => {
            if m.get("excludeFromContext").is_some_and(Value::truthy) {
                None
            } else {
                Some(user_msg(Value::Arr(vec![text_block(bash_text(m))]), ts))
            }
        }
        "custom" => {
            let content = match m.get("content") {
                Some(Value::Str(s)) => Value::Arr(vec![text_block(s.to_string())]),
                Some(other) => other.clone(),
                None => Value::Null,
            };
            // `content: undefined` is left out by JSON.stringify.
            let mut out = pi_json::Map::new();
            out.insert("role", "user".into());
            if m.get("content").is_some() {
                out.insert("content", content);
            }
            if let Some(t) = ts {
                out.insert("timestamp", t.clone());
            }
            Some(Value::Obj(out))
        }
        "branchSummary" => {
            let s = m.get("summary").map(js_to_string).unwrap_or_else(|| "undefined".into());
            Some(user_msg(Value::Arr(vec![text_block(format!("{BRANCH_PREFIX}{s}{BRANCH_SUFFIX}"))]), ts))
        }
        "compactionSummary" => {
            let s = m.get("summary").map(js_to_string).unwrap_or_else(|| "undefined".into());
            Some(user_msg(Value::Arr(vec![text_block(format!("{COMPACTION_PREFIX}{s}{COMPACTION_SUFFIX}"))]), ts))
        }
        _ => None,
    }
}

/// `convertToLlm`.
pub fn to_llm(messages: &[Value]) -> Vec<Value> {
    messages.iter().filter_map(to_llm_one).collect()
}

fn len16(v: Option<&Value>) -> f64 {
    match v {
        Some(Value::Str(s)) => pi_json::utf16_len(s) as f64,
        // `undefined.length` would throw in Pi; count nothing.
        _ => 0.0,
    }
}

/// Where the characters of one message's estimate come from (§9.1), by part. The parts are
/// the estimate's own counts: [`estimate_tokens`] is `ceil(total / 4)` of this, so views that
/// split a context by kind add up to Pi's estimate by construction.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EstimateChars {
    /// `branchSummary` and `compactionSummary` messages.
    pub summary: f64,
    pub user: f64,
    pub assistant_text: f64,
    pub thinking: f64,
    /// Tool-call names and `JSON.stringify(arguments)`.
    pub tool_calls: f64,
    /// `toolResult` content (images 4800 each) and `bashExecution` command + output.
    pub tool_results: f64,
    /// `custom` messages' content.
    pub other: f64,
}

impl EstimateChars {
    pub fn total(&self) -> f64 {
        self.summary
            + self.user
            + self.assistant_text
            + self.thinking
            + self.tool_calls
            + self.tool_results
            + self.other
    }
}

/// The characters a message's estimate counts, by part; `None` for a role Pi counts as 0.
pub fn estimate_chars(m: &Value) -> Option<EstimateChars> {
    let mut c = EstimateChars::default();
    // Text blocks (truthy text) and images (4800 characters each, where they count).
    let content = |image: f64| -> f64 {
        match m.get("content") {
            Some(Value::Str(s)) => pi_json::utf16_len(s) as f64,
            Some(Value::Arr(_)) => {
                let mut n = 0.0;
                for b in blocks(m.get("content")) {
                    match b {
                        Block::Text(b) if b.get("text").is_some_and(Value::truthy) => n += len16(b.get("text")),
                        Block::Image(_) => n += image,
                        _ => {}
                    }
                }
                n
            }
            _ => 0.0,
        }
    };
    match m.str_field("role") {
        Some("user") => c.user = content(0.0),
        Some("assistant") => {
            for b in blocks(m.get("content")) {
                match b {
                    Block::Text(b) => c.assistant_text += len16(b.get("text")),
                    Block::Thinking(b) => c.thinking += len16(b.get("thinking")),
                    Block::ToolCall(b) => {
                        c.tool_calls += len16(b.get("name"));
                        c.tool_calls += match b.get("arguments") {
                            Some(a) => pi_json::stringified_utf16_len(a) as f64,
                            None => 0.0,
                        };
                    }
                    Block::Image(_) | Block::Other(_) => {}
                }
            }
        }
        Some("toolResult") => c.tool_results = content(4800.0),
        Some("custom") => c.other = content(4800.0),
        Some("bashExecution") => c.tool_results = len16(m.get("command")) + len16(m.get("output")),
        Some("branchSummary" | "compactionSummary") => c.summary = len16(m.get("summary")),
        _ => return None,
    }
    Some(c)
}

/// `estimateTokens`: ceil(chars / 4), chars in UTF-16 units (§9.1).
pub fn estimate_tokens(m: &Value) -> f64 {
    estimate_chars(m).map_or(0.0, |c| (c.total() / 4.0).ceil())
}

/// The usage of an assistant message that counts (§9.2), if any.
pub fn assistant_usage(m: &Value) -> Option<&Value> {
    if m.str_field("role") != Some("assistant") {
        return None;
    }
    let stop = m.str_field("stopReason");
    if stop == Some("aborted") || stop == Some("error") {
        return None;
    }
    m.get("usage").filter(|u| u.truthy())
}

fn num(v: &Value, k: &str) -> f64 {
    match v.get(k) {
        Some(Value::Num(n)) => *n,
        Some(Value::Null) => 0.0,
        Some(Value::Bool(b)) => *b as u8 as f64,
        _ => f64::NAN,
    }
}

/// `calculateContextTokens`: `totalTokens || input + output + cacheRead + cacheWrite`.
pub fn context_tokens_of_usage(u: &Value) -> f64 {
    match u.get("totalTokens") {
        Some(t) if t.truthy() => match t {
            Value::Num(n) => *n,
            _ => f64::NAN,
        },
        _ => num(u, "input") + num(u, "output") + num(u, "cacheRead") + num(u, "cacheWrite"),
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    pub tokens: f64,
    pub usage_tokens: f64,
    pub trailing_tokens: f64,
    pub last_usage_index: Option<usize>,
}

/// `estimateContextTokens` (§9.3).
pub fn estimate_context(messages: &[Value]) -> Estimate {
    estimate_context_of(messages)
}

/// [`estimate_context`] of borrowed messages (a context's own, [`Context::message_refs`]):
/// the same figure without copying every message first.
pub fn estimate_context_refs(messages: &[&Value]) -> Estimate {
    estimate_context_of(messages)
}

fn estimate_context_of<M: std::borrow::Borrow<Value>>(messages: &[M]) -> Estimate {
    let last = messages.iter().rposition(|m| assistant_usage(m.borrow()).is_some());
    match last {
        None => {
            let t: f64 = messages.iter().map(|m| estimate_tokens(m.borrow())).sum();
            Estimate { tokens: t, usage_tokens: 0.0, trailing_tokens: t, last_usage_index: None }
        }
        Some(u) => {
            let usage = context_tokens_of_usage(assistant_usage(messages[u].borrow()).unwrap_or(&Value::Null));
            let trailing: f64 = messages[u + 1..].iter().map(|m| estimate_tokens(m.borrow())).sum();
            Estimate {
                tokens: usage + trailing,
                usage_tokens: usage,
                trailing_tokens: trailing,
                last_usage_index: Some(u),
            }
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CompactionSettings {
    pub enabled: bool,
    pub reserve_tokens: f64,
    pub keep_recent_tokens: f64,
}

impl Default for CompactionSettings {
    fn default() -> Self {
        CompactionSettings { enabled: true, reserve_tokens: 16384.0, keep_recent_tokens: 20000.0 }
    }
}

/// `shouldCompact` (§10.1): strictly greater than `window - reserve`, and only when enabled.
pub fn should_compact(context_tokens: f64, context_window: f64, s: &CompactionSettings) -> bool {
    s.enabled && context_tokens > context_window - s.reserve_tokens
}

fn overflow_patterns() -> &'static (regex::RegexSet, regex::RegexSet) {
    static P: std::sync::OnceLock<(regex::RegexSet, regex::RegexSet)> = std::sync::OnceLock::new();
    P.get_or_init(|| {
        // Pi-ai 0.73.1's OVERFLOW_PATTERNS and NON_OVERFLOW_PATTERNS (utils/overflow.js).
        let over = regex::RegexSet::new([
            r"(?i)prompt is too long",
            r"(?i)request_too_large",
            r"(?i)input is too long for requested model",
            r"(?i)exceeds the context window",
            r"(?i)input token count.*exceeds the maximum",
            r"(?i)maximum prompt length is \d+",
            r"(?i)reduce the length of the messages",
            r"(?i)maximum context length is \d+ tokens",
            r"(?i)exceeds the limit of \d+",
            r"(?i)exceeds the available context size",
            r"(?i)greater than the context length",
            r"(?i)context window exceeds limit",
            r"(?i)exceeded model token limit",
            r"(?i)too large for model with \d+ maximum context length",
            r"(?i)model_context_window_exceeded",
            r"(?i)prompt too long; exceeded (?:max )?context length",
            r"(?i)context[_ ]length[_ ]exceeded",
            r"(?i)too many tokens",
            r"(?i)token limit exceeded",
            r"(?i)^4(?:00|13)\s*(?:status code)?\s*\(no body\)",
        ])
        .expect("static patterns compile");
        let non = regex::RegexSet::new([
            r"(?i)^(Throttling error|Service unavailable):",
            r"(?i)rate limit",
            r"(?i)too many requests",
        ])
        .expect("static patterns compile");
        (over, non)
    })
}

/// Whether an error text reads as a context overflow (Pi's pattern set).
pub fn is_overflow_text(text: &str) -> bool {
    let (over, non) = overflow_patterns();
    !non.is_match(text) && over.is_match(text)
}

/// pi-ai's `isContextOverflow` for an assistant message.
pub fn is_context_overflow(m: &Value, context_window: f64) -> bool {
    let stop = m.str_field("stopReason");
    if stop == Some("error") {
        if let Some(Value::Str(e)) = m.get("errorMessage") {
            if !e.is_empty() && is_overflow_text(e) {
                return true;
            }
        }
    }
    let usage = m.get("usage").cloned().unwrap_or(Value::Null);
    let input = num(&usage, "input") + num(&usage, "cacheRead");
    if context_window > 0.0 && stop == Some("stop") && input > context_window {
        return true;
    }
    if context_window > 0.0 && stop == Some("length") && num(&usage, "output") == 0.0 && input >= context_window * 0.99
    {
        return true;
    }
    false
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AutoCompaction {
    Threshold,
    Overflow,
}

impl AutoCompaction {
    pub fn as_str(self) -> &'static str {
        match self {
            AutoCompaction::Threshold => "threshold",
            AutoCompaction::Overflow => "overflow",
        }
    }
}

/// The model the check runs against (`this.model`).
#[derive(Clone, Debug)]
pub struct CurrentModel {
    pub provider: String,
    pub id: String,
    pub context_window: f64,
}

/// Pi's `_checkCompaction` decision (§10.2) for `assistant` in `ctx` (whose path is `path`).
/// `skip_aborted` is true after a run (check a) and false before a prompt (check b).
pub fn auto_compaction_check(
    session: &Session,
    path: &[usize],
    ctx_messages: &[Value],
    assistant: &Value,
    model: Option<&CurrentModel>,
    settings: &CompactionSettings,
    skip_aborted: bool,
) -> Option<AutoCompaction> {
    if !settings.enabled {
        return None;
    }
    if skip_aborted && assistant.str_field("stopReason") == Some("aborted") {
        return None;
    }
    let window = model.map(|m| m.context_window).unwrap_or(0.0);
    let same_model = model.is_some_and(|m| {
        assistant.str_field("provider") == Some(m.provider.as_str())
            && assistant.str_field("model") == Some(m.id.as_str())
    });
    let latest_compaction_ms = path
        .iter()
        .rev()
        .find(|&&i| session.kind(i) == Kind::Compaction)
        .map(|&i| parse_iso_ms(&session.entry(i).timestamp).map(|v| v as f64).unwrap_or(f64::NAN));
    let assistant_ts = num(assistant, "timestamp");
    if let Some(c) = latest_compaction_ms {
        if assistant_ts <= c {
            return None;
        }
    }
    if same_model && is_context_overflow(assistant, window) {
        return Some(AutoCompaction::Overflow);
    }
    let tokens = if assistant.str_field("stopReason") == Some("error") {
        let est = estimate_context(ctx_messages);
        let u = est.last_usage_index?;
        let usage_msg = &ctx_messages[u];
        if let Some(c) = latest_compaction_ms {
            if usage_msg.str_field("role") == Some("assistant") && num(usage_msg, "timestamp") <= c {
                return None;
            }
        }
        est.tokens
    } else {
        context_tokens_of_usage(assistant.get("usage").unwrap_or(&Value::Null))
    };
    should_compact(tokens, window, settings).then_some(AutoCompaction::Threshold)
}

/// The last assistant message of a context (Pi's `_findLastAssistantMessage`).
pub fn last_assistant(messages: &[Value]) -> Option<&Value> {
    messages.iter().rev().find(|m| m.str_field("role") == Some("assistant"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The context walked up from the leaf equals the context on the leaf's path, for every leaf
    /// of random forests of messages, settings changes and compactions whose first kept entry
    /// is before them on the path, after them, themselves, elsewhere in the file, missing, or a
    /// repeated id (the leaf's own included); with orphans, duplicate ids and parentId loops.
    #[test]
    fn the_walk_up_context_is_the_context_on_the_path() {
        let mut next = crate::testing::xorshift_usize(0x9e37_79b9_7f4a_7c15);
        let (mut leaves, mut with_compaction, mut kept) = (0, 0, 0);
        for round in 0..300 {
            let n = 1 + next() % 60;
            let id = |k: usize| format!("e{k}");
            let mut text = String::from(
                r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#,
            );
            text.push('\n');
            for k in 0..n {
                let parent = match next() % 12 {
                    0 => "null".to_string(),
                    1 => "\"missing\"".to_string(),
                    // A loop now and then (an entry naming a later one).
                    2 if round % 7 == 0 => format!("\"{}\"", id(next() % n)),
                    _ if k > 0 => format!("\"{}\"", id(k - 1 - next() % k.min(3))),
                    _ => "null".to_string(),
                };
                // A repeated id now and then.
                let me = if k > 2 && next().is_multiple_of(15) { id(next() % k) } else { id(k) };
                let body = match next() % 10 {
                    0 => r#""type":"thinking_level_change","thinkingLevel":"high""#.to_string(),
                    1 => r#""type":"model_change","provider":"p","modelId":"m""#.to_string(),
                    2 | 3 => {
                        let first_kept = match next() % 5 {
                            0 => "\"missing\"".to_string(),
                            1 => "7".to_string(),
                            _ => format!("\"{}\"", id(next() % n)),
                        };
                        format!(
                            r#""type":"compaction","summary":"c{k}","firstKeptEntryId":{first_kept},"tokensBefore":5"#
                        )
                    }
                    4 => format!(r#""type":"custom_message","customType":"x","content":"c{k}","display":true"#),
                    5 => format!(r#""type":"branch_summary","fromId":"x","summary":"b{k}""#),
                    6 => r#""type":"label","targetId":"e0","label":"l""#.to_string(),
                    7 => format!(
                        r#""type":"message","message":{{"role":"assistant","provider":"q{k}","model":"m{k}","content":[]}}"#
                    ),
                    _ => format!(r#""type":"message","message":{{"role":"user","content":"u{k}"}}"#),
                };
                text.push_str(&format!(
                    r#"{{"id":"{me}","parentId":{parent},"timestamp":"2025-01-01T00:00:01.000Z",{body}}}"#
                ));
                text.push('\n');
            }
            let session = Session::from_bytes(text.into_bytes());
            for leaf in 0..session.len() {
                let path = session.path(Some(leaf));
                let on_path = build_context_on_path(&session, &path);
                assert_eq!(build_context(&session, Some(leaf)), on_path, "round {round}, leaf {leaf}");
                leaves += 1;
                with_compaction += usize::from(on_path.compaction.is_some());
                kept += usize::from(on_path.compaction.is_some() && on_path.messages.len() > 1);
            }
            assert_eq!(build_context(&session, None), build_context_on_path(&session, &[]));
        }
        assert!(leaves > 5000 && with_compaction > 1000 && kept > 500, "{leaves} {with_compaction} {kept}");
    }

    /// The estimate of borrowed messages is the estimate of their copies: with a usage to start
    /// from (the last valid one, an aborted one after it not counting), and with none.
    #[test]
    fn the_estimate_of_borrowed_messages_is_the_estimate_of_copies() {
        let msgs: Vec<Value> = [
            r#"{"role":"user","content":"hello there"}"#,
            r#"{"role":"assistant","content":[{"type":"text","text":"hi"}],"usage":{"input":100,"output":20,"cacheRead":0,"cacheWrite":0,"totalTokens":120}}"#,
            r#"{"role":"user","content":"a longer question about the file src/main.rs"}"#,
            r#"{"role":"assistant","stopReason":"aborted","content":[{"type":"text","text":"partial answer"}],"usage":{"totalTokens":999}}"#,
            r#"{"role":"toolResult","toolCallId":"t","content":[{"type":"text","text":"output of the tool"}]}"#,
        ]
        .iter()
        .map(|t| pi_json::parse(t).unwrap())
        .collect();
        for n in 0..=msgs.len() {
            let owned = estimate_context(&msgs[..n]);
            let refs: Vec<&Value> = msgs[..n].iter().collect();
            assert_eq!(estimate_context_refs(&refs), owned, "first {n} messages");
        }
        let all = estimate_context(&msgs);
        assert_eq!((all.usage_tokens, all.last_usage_index), (120.0, Some(1)));
        assert!(all.trailing_tokens > 0.0 && estimate_context(&msgs[..1]).last_usage_index.is_none());
    }
}
