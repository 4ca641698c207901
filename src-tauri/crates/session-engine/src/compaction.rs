//! Compaction planning (§11), the serialized transcript (§12.1) and the entry Pi writes (§12.3-12.5).
//! Everything here is pure: the app calls it on every slider move.
//!
//! What a compaction appends has one implementation, used by the conformance report's
//! simulation, the summarizer (and through it the CLI and the app): [`plan_compaction`] →
//! [`CompactionJob::summarized`] (or [`CompactionJob::from_hook`]) → [`compaction_entry`].

use crate::blocks::{blocks, Block};
use crate::context::{self, build_context_on_path, estimate_context_refs, estimate_tokens, CompactionSettings};
use crate::entries;
use crate::session::{Kind, Session};
use pi_json::{obj, Map, Value};

pub use crate::context::CompactionSettings as Settings;

/// `{read, written, edited}`, insertion-ordered sets.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FileOps {
    pub read: Vec<String>,
    pub written: Vec<String>,
    pub edited: Vec<String>,
    seen: [rustc_hash::FxHashSet<String>; 3],
}

const READ: usize = 0;
const WRITTEN: usize = 1;
const EDITED: usize = 2;

impl FileOps {
    /// Adds `other`'s paths after this one's, in their order (as if `other`'s calls had been made
    /// on this one afterwards).
    pub(crate) fn merge(&mut self, other: &FileOps) {
        for (which, list) in [(READ, &other.read), (WRITTEN, &other.written), (EDITED, &other.edited)] {
            for p in list {
                self.add(which, p);
            }
        }
    }
    fn add(&mut self, which: usize, v: &str) {
        // Most paths repeat (every summary's details list them again): look before allocating.
        if !self.seen[which].contains(v) && self.seen[which].insert(v.to_string()) {
            match which {
                READ => self.read.push(v.to_string()),
                WRITTEN => self.written.push(v.to_string()),
                _ => self.edited.push(v.to_string()),
            }
        }
    }
}

impl FileOps {
    /// `extractFileOpsFromMessage`: read/write/edit tool calls with a non-empty string `path`.
    pub fn add_tool_calls(&mut self, m: &Value) {
        if m.str_field("role") != Some("assistant") {
            return;
        }
        for b in blocks(m.get("content")) {
            let Block::ToolCall(b) = b else { continue };
            if b.get("name").is_none() {
                continue;
            }
            let Some(args) = b.get("arguments").filter(|a| a.truthy()) else { continue };
            let Some(path) = args.str_field("path").filter(|p| !p.is_empty()) else { continue };
            match b.str_field("name") {
                Some("read") => self.add(READ, path),
                Some("write") => self.add(WRITTEN, path),
                Some("edit") => self.add(EDITED, path),
                _ => {}
            }
        }
    }

    /// Adds a Pi-generated entry's `details.readFiles` / `details.modifiedFiles`.
    pub fn add_details(&mut self, details: &Value) {
        if let Some(Value::Arr(r)) = details.get("readFiles") {
            for f in r {
                match f.as_str() {
                    Some(p) => self.add(READ, p),
                    None => self.add(READ, &context::js_to_string(f)),
                }
            }
        }
        if let Some(Value::Arr(m)) = details.get("modifiedFiles") {
            for f in m {
                match f.as_str() {
                    Some(p) => self.add(EDITED, p),
                    None => self.add(EDITED, &context::js_to_string(f)),
                }
            }
        }
    }

    /// `computeFileLists`: (readFiles, modifiedFiles), each sorted by UTF-16 code units.
    pub fn file_lists(&self) -> (Vec<String>, Vec<String>) {
        let mut modified: Vec<String> = self.edited.clone();
        modified.extend(self.written.iter().filter(|f| !self.seen[EDITED].contains(*f)).cloned());
        let mut read: Vec<String> = self
            .read
            .iter()
            .filter(|f| !self.seen[EDITED].contains(*f) && !self.seen[WRITTEN].contains(*f))
            .cloned()
            .collect();
        pi_json::sort_utf16(&mut read);
        pi_json::sort_utf16(&mut modified);
        (read, modified)
    }
}

/// `formatFileOperations`.
pub fn file_ops_appendix(read: &[String], modified: &[String]) -> String {
    let mut sections = Vec::new();
    if !read.is_empty() {
        sections.push(format!("<read-files>\n{}\n</read-files>", read.join("\n")));
    }
    if !modified.is_empty() {
        sections.push(format!("<modified-files>\n{}\n</modified-files>", modified.join("\n")));
    }
    if sections.is_empty() {
        String::new()
    } else {
        format!("\n\n{}", sections.join("\n\n"))
    }
}

const TOOL_RESULT_MAX: usize = 2000;

fn truncate_for_summary(text: &str) -> String {
    let len = pi_json::utf16_len(text);
    if len <= TOOL_RESULT_MAX {
        return text.to_string();
    }
    format!(
        "{}\n\n[... {} more characters truncated]",
        pi_json::utf16_prefix(text, TOOL_RESULT_MAX),
        len - TOOL_RESULT_MAX
    )
}

#[cfg(test)]
fn text_of_blocks(content: Option<&Value>) -> String {
    context::user_text(content.unwrap_or(&Value::Null))
}

/// `serializeConversation` over LLM messages (apply [`to_llm`] first).
pub fn serialize_conversation(messages: &[Value]) -> String {
    serialize_llm(messages.iter())
}

/// Writes the parts straight into one buffer, `"\n\n"` between parts, each text written once
/// (no joined copies): a part whose text turns out empty is taken back.
fn serialize_llm<'a>(messages: impl Iterator<Item = &'a Value>) -> String {
    let mut out = String::new();
    // Starts a part: its separator and header; returns where the part began.
    let open = |out: &mut String, header: &str| -> usize {
        let mark = out.len();
        if mark > 0 {
            out.push_str("\n\n");
        }
        out.push_str(header);
        mark
    };
    for m in messages {
        match m.str_field("role") {
            Some("user") => {
                let mark = open(&mut out, "[User]: ");
                let from = out.len();
                write_text_blocks(&mut out, m.get("content"));
                if out.len() == from {
                    out.truncate(mark);
                }
            }
            Some("assistant") => {
                let content = m.get("content");
                // `thinking.join("\n")`, `texts.join("\n")`: a part when there is a block.
                for (header, want) in [("[Assistant thinking]: ", 1u8), ("[Assistant]: ", 0)] {
                    let mut any = false;
                    for b in blocks(content) {
                        let v = match (b, want) {
                            (Block::Thinking(b), 1) => b.get("thinking"),
                            (Block::Text(b), 0) => b.get("text"),
                            _ => continue,
                        };
                        if any {
                            out.push('\n');
                        } else {
                            open(&mut out, header);
                            any = true;
                        }
                        write_js_string(&mut out, v);
                    }
                }
                let mut first = true;
                for b in blocks(content) {
                    let Block::ToolCall(b) = b else { continue };
                    if first {
                        open(&mut out, "[Assistant tool calls]: ");
                        first = false;
                    } else {
                        out.push_str("; ");
                    }
                    write_js_string(&mut out, b.get("name"));
                    out.push('(');
                    if let Some(Value::Obj(a)) = b.get("arguments") {
                        for (j, (k, v)) in a.iter().enumerate() {
                            if j > 0 {
                                out.push_str(", ");
                            }
                            out.push_str(k);
                            out.push('=');
                            pi_json::write_value(&mut out, v);
                        }
                    }
                    out.push(')');
                }
            }
            Some("toolResult") => {
                let mark = open(&mut out, "[Tool result]: ");
                let from = out.len();
                write_text_blocks(&mut out, m.get("content"));
                if out.len() == from {
                    out.truncate(mark);
                } else {
                    truncate_tail_for_summary(&mut out, from);
                }
            }
            _ => {}
        }
    }
    out
}

/// Appends [`context::user_text`] of a content value (the string, or its text blocks joined
/// with "").
fn write_text_blocks(out: &mut String, content: Option<&Value>) {
    match content {
        Some(Value::Str(t)) => out.push_str(t),
        Some(Value::Arr(_)) => {
            for b in blocks(content) {
                if let Block::Text(b) = b {
                    write_js_string(out, b.get("text"));
                }
            }
        }
        _ => {}
    }
}

/// Appends `String(v)` (`"undefined"` when absent).
fn write_js_string(out: &mut String, v: Option<&Value>) {
    match v {
        Some(Value::Str(t)) => out.push_str(t),
        Some(other) => out.push_str(&context::js_to_string(other)),
        None => out.push_str("undefined"),
    }
}

/// [`truncate_for_summary`] of `out[from..]`, in place.
fn truncate_tail_for_summary(out: &mut String, from: usize) {
    // A UTF-16 unit takes at least one byte: a text of at most 2000 bytes is kept whole.
    if out.len() - from <= TOOL_RESULT_MAX {
        return;
    }
    let cut = truncate_for_summary(&out[from..]);
    out.truncate(from);
    out.push_str(&cut);
}

/// The serialization as first written (each part built, then copied in): the reference the
/// one-buffer [`serialize_llm`] is tested against.
#[cfg(test)]
fn serialize_llm_reference<'a>(messages: impl Iterator<Item = &'a Value>) -> String {
    let mut out = String::new();
    let part = |out: &mut String, f: &dyn Fn(&mut String)| {
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        f(out);
    };
    let text_or_undefined = |v: Option<&Value>| v.map(context::js_to_string).unwrap_or_else(|| "undefined".into());
    for m in messages {
        match m.str_field("role") {
            Some("user") => {
                let text = text_of_blocks(m.get("content"));
                if !text.is_empty() {
                    part(&mut out, &|o| {
                        o.push_str("[User]: ");
                        o.push_str(&text);
                    });
                }
            }
            Some("assistant") => {
                let mut texts: Vec<String> = Vec::new();
                let mut thinking: Vec<String> = Vec::new();
                let mut calls: Vec<&Value> = Vec::new();
                for b in blocks(m.get("content")) {
                    match b {
                        Block::Text(b) => texts.push(text_or_undefined(b.get("text"))),
                        Block::Thinking(b) => thinking.push(text_or_undefined(b.get("thinking"))),
                        Block::ToolCall(b) => calls.push(b),
                        Block::Image(_) | Block::Other(_) => {}
                    }
                }
                if !thinking.is_empty() {
                    part(&mut out, &|o| {
                        o.push_str("[Assistant thinking]: ");
                        o.push_str(&thinking.join("\n"));
                    });
                }
                if !texts.is_empty() {
                    part(&mut out, &|o| {
                        o.push_str("[Assistant]: ");
                        o.push_str(&texts.join("\n"));
                    });
                }
                if !calls.is_empty() {
                    part(&mut out, &|o| {
                        o.push_str("[Assistant tool calls]: ");
                        for (i, b) in calls.iter().enumerate() {
                            if i > 0 {
                                o.push_str("; ");
                            }
                            o.push_str(&text_or_undefined(b.get("name")));
                            o.push('(');
                            if let Some(Value::Obj(a)) = b.get("arguments") {
                                for (j, (k, v)) in a.iter().enumerate() {
                                    if j > 0 {
                                        o.push_str(", ");
                                    }
                                    o.push_str(k);
                                    o.push('=');
                                    pi_json::write_value(o, v);
                                }
                            }
                            o.push(')');
                        }
                    });
                }
            }
            Some("toolResult") => {
                let text = text_of_blocks(m.get("content"));
                if !text.is_empty() {
                    part(&mut out, &|o| {
                        o.push_str("[Tool result]: ");
                        o.push_str(&truncate_for_summary(&text));
                    });
                }
            }
            _ => {}
        }
    }
    out
}

/// `serializeConversation(convertToLlm(messages))`, without copying the verbatim messages.
pub fn serialize_agent_messages<'a>(messages: impl IntoIterator<Item = &'a Value>) -> String {
    let converted: Vec<std::borrow::Cow<'_, Value>> = messages.into_iter().filter_map(context::to_llm_cow).collect();
    serialize_llm(converted.iter().map(|c| c.as_ref()))
}

/// The compaction mapping of one entry (§11.5): like the context mapping, but a
/// `branch_summary` always yields a message and a `compaction` yields nothing.
pub fn compaction_message(session: &Session, idx: usize) -> Option<Value> {
    match session.kind(idx) {
        Kind::Message => session.value(idx).get("message").cloned(),
        Kind::CustomMessage => Some(context::custom_message(session, idx)),
        Kind::BranchSummary => Some(context::branch_summary_message(session, idx)),
        _ => None,
    }
}

fn is_valid_cut_point(session: &Session, idx: usize) -> bool {
    match session.kind(idx) {
        Kind::Message => matches!(
            session.role(idx),
            Some("bashExecution" | "custom" | "branchSummary" | "compactionSummary" | "user" | "assistant")
        ),
        Kind::BranchSummary | Kind::CustomMessage => true,
        _ => false,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CutPoint {
    /// Positions in the path.
    pub first_kept: usize,
    pub turn_start: Option<usize>,
    pub is_split_turn: bool,
}

/// `findCutPoint` over `path[start..end]` (positions into `path`).
pub fn find_cut_point(session: &Session, path: &[usize], start: usize, end: usize, keep_recent: f64) -> CutPoint {
    let cut_points: Vec<usize> = (start..end).filter(|&p| is_valid_cut_point(session, path[p])).collect();
    if cut_points.is_empty() {
        return CutPoint { first_kept: start, turn_start: None, is_split_turn: false };
    }
    let mut acc = 0.0;
    let mut cut = cut_points[0];
    for p in (start..end).rev() {
        let idx = path[p];
        if session.kind(idx) != Kind::Message {
            continue;
        }
        acc += session.message(idx).map(estimate_tokens).unwrap_or(0.0);
        if acc >= keep_recent {
            // The first cut point at or after p (cut points are sorted).
            let k = cut_points.partition_point(|&c| c < p);
            if k < cut_points.len() {
                cut = cut_points[k];
            }
            break;
        }
    }
    while cut > start {
        let prev = session.kind(path[cut - 1]);
        if prev == Kind::Compaction || prev == Kind::Message {
            break;
        }
        cut -= 1;
    }
    let is_user = session.kind(path[cut]) == Kind::Message && session.role(path[cut]) == Some("user");
    let turn_start = if is_user { None } else { find_turn_start(session, path, cut, start) };
    CutPoint { first_kept: cut, turn_start, is_split_turn: !is_user && turn_start.is_some() }
}

/// `findTurnStartIndex`.
pub fn find_turn_start(session: &Session, path: &[usize], from: usize, start: usize) -> Option<usize> {
    (start..=from).rev().find(|&p| {
        let idx = path[p];
        match session.kind(idx) {
            Kind::BranchSummary | Kind::CustomMessage => true,
            Kind::Message => matches!(session.role(idx), Some("user" | "bashExecution")),
            _ => false,
        }
    })
}

/// A message chosen for a summary, with the entry it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct PlannedMessage {
    pub entry: usize,
    pub message: Value,
}

#[derive(Clone, Debug, PartialEq)]
pub struct CompactionPreparation {
    pub first_kept_entry_id: String,
    /// Position of the first kept entry in the path.
    pub first_kept_position: usize,
    pub boundary_start: usize,
    pub previous_compaction: Option<usize>,
    pub messages_to_summarize: Vec<PlannedMessage>,
    pub turn_prefix_messages: Vec<PlannedMessage>,
    pub is_split_turn: bool,
    pub turn_start: Option<usize>,
    pub tokens_before: f64,
    pub previous_summary: Option<Value>,
    pub file_ops: FileOps,
    pub read_files: Vec<String>,
    pub modified_files: Vec<String>,
    pub settings: CompactionSettings,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The last path entry is a compaction ("Already compacted").
    LastEntryIsCompaction,
    /// No entry to keep: an empty path ("Nothing to compact (session too small)").
    NoFirstKeptEntry,
}

impl Refusal {
    pub fn reason(self) -> &'static str {
        match self {
            Refusal::LastEntryIsCompaction => "lastEntryIsCompaction",
            Refusal::NoFirstKeptEntry => "noFirstKeptEntry",
        }
    }
    pub fn message(self) -> &'static str {
        match self {
            Refusal::LastEntryIsCompaction => "Already compacted: the leaf is a compaction entry. Continue the conversation first, or pick another leaf.",
            Refusal::NoFirstKeptEntry => "Nothing to compact (session too small).",
        }
    }
}

impl CompactionPreparation {
    pub fn agent_messages_to_summarize(&self) -> Vec<Value> {
        self.messages_to_summarize.iter().map(|m| m.message.clone()).collect()
    }
    pub fn agent_turn_prefix(&self) -> Vec<Value> {
        self.turn_prefix_messages.iter().map(|m| m.message.clone()).collect()
    }
    pub fn serialized_history(&self) -> String {
        serialize_agent_messages(self.messages_to_summarize.iter().map(|m| &m.message))
    }
    pub fn serialized_turn_prefix(&self) -> String {
        serialize_agent_messages(self.turn_prefix_messages.iter().map(|m| &m.message))
    }
    pub fn appendix(&self) -> String {
        file_ops_appendix(&self.read_files, &self.modified_files)
    }
    /// Whether the history needs an LLM call (Pi skips it on a split turn with nothing before).
    pub fn needs_history_call(&self) -> bool {
        !(self.is_split_turn && !self.turn_prefix_messages.is_empty() && self.messages_to_summarize.is_empty())
    }
    pub fn needs_prefix_call(&self) -> bool {
        self.is_split_turn && !self.turn_prefix_messages.is_empty()
    }
    /// Tokens in the messages to summarize and in the kept part (for the live preview).
    pub fn tokens_summarized(&self) -> f64 {
        self.messages_to_summarize
            .iter()
            .chain(self.turn_prefix_messages.iter())
            .map(|m| estimate_tokens(&m.message))
            .sum()
    }
}

/// The newest compaction on `path` (its position) and where its kept part starts: the position of
/// its `firstKeptEntryId`, or the entry after it when that id is not on the path; 0 without one.
fn compaction_boundary(session: &Session, path: &[usize]) -> (Option<usize>, usize) {
    let Some(p) = path.iter().rposition(|&i| session.kind(i) == Kind::Compaction) else { return (None, 0) };
    let fk = session.value(path[p]).get("firstKeptEntryId").and_then(Value::as_str);
    (Some(p), path.iter().position(|&i| Some(session.id(i)) == fk).unwrap_or(p + 1))
}

/// A cut at `first_kept` keeps an entry with an id ([`prepare_compaction`] refuses otherwise).
fn keeps_an_entry(session: &Session, path: &[usize], first_kept: usize) -> bool {
    first_kept < path.len() && !session.id(path[first_kept]).is_empty()
}

/// Where a compaction planned now on `path` would cut: the position of its first kept entry,
/// exactly [`prepare_compaction`]'s `first_kept_position`, or `None` where it refuses. Only the
/// cut is computed (no context, token total or messages), so a leaf move can give the cut that
/// the Budgets panel will preview its graph row before the preview asks.
pub fn first_kept_position(session: &Session, path: &[usize], keep_recent_tokens: f64) -> Option<usize> {
    if path.last().is_some_and(|&last| session.kind(last) == Kind::Compaction) {
        return None;
    }
    let (_, boundary_start) = compaction_boundary(session, path);
    let cut = find_cut_point(session, path, boundary_start, path.len(), keep_recent_tokens);
    keeps_an_entry(session, path, cut.first_kept).then_some(cut.first_kept)
}

/// `prepareCompaction(path, settings)` (§11).
pub fn prepare_compaction(
    session: &Session,
    path: &[usize],
    settings: &CompactionSettings,
) -> Result<CompactionPreparation, Refusal> {
    if let Some(&last) = path.last() {
        if session.kind(last) == Kind::Compaction {
            return Err(Refusal::LastEntryIsCompaction);
        }
    }
    let (prev, boundary_start) = compaction_boundary(session, path);
    let previous_summary = prev.and_then(|p| session.value(path[p]).get("summary").cloned());
    let end = path.len();
    let ctx = build_context_on_path(session, path);
    let tokens_before = estimate_context_refs(&ctx.message_refs()).tokens;
    let cut = find_cut_point(session, path, boundary_start, end, settings.keep_recent_tokens);
    if !keeps_an_entry(session, path, cut.first_kept) {
        return Err(Refusal::NoFirstKeptEntry);
    }
    let first_kept_entry_id = session.id(path[cut.first_kept]).to_string();
    let history_end = if cut.is_split_turn { cut.turn_start.unwrap_or(cut.first_kept) } else { cut.first_kept };
    let collect = |from: usize, to: usize| -> Vec<PlannedMessage> {
        (from..to)
            .filter_map(|p| compaction_message(session, path[p]).map(|m| PlannedMessage { entry: path[p], message: m }))
            .collect()
    };
    let messages_to_summarize = collect(boundary_start, history_end);
    let turn_prefix_messages =
        if cut.is_split_turn { collect(cut.turn_start.unwrap_or(cut.first_kept), cut.first_kept) } else { Vec::new() };
    let mut ops = FileOps::default();
    if let Some(p) = prev {
        let v = session.value(path[p]);
        if !v.get("fromHook").is_some_and(Value::truthy) {
            if let Some(d) = v.get("details").filter(|d| d.truthy()) {
                ops.add_details(d);
            }
        }
    }
    for m in messages_to_summarize.iter().chain(turn_prefix_messages.iter()) {
        ops.add_tool_calls(&m.message);
    }
    let (read_files, modified_files) = ops.file_lists();
    Ok(CompactionPreparation {
        first_kept_entry_id,
        first_kept_position: cut.first_kept,
        boundary_start,
        previous_compaction: prev.map(|p| path[p]),
        messages_to_summarize,
        turn_prefix_messages,
        is_split_turn: cut.is_split_turn,
        turn_start: cut.turn_start,
        tokens_before,
        previous_summary,
        file_ops: ops,
        read_files,
        modified_files,
        settings: *settings,
    })
}

/// Pi's split-turn separator (§12.3), byte-exact.
pub const SPLIT_TURN_SEPARATOR: &str = "\n\n---\n\n**Turn Context (split turn):**\n\n";
/// Pi's history text when a split turn has nothing before it (§12.3).
pub const NO_PRIOR_HISTORY: &str = "No prior history.";

/// The summary text Pi writes: history (or the literal "No prior history." when a split turn
/// has nothing before it), the split-turn context, then the file-list appendix.
pub fn merge_summary(prep: &CompactionPreparation, history: Option<&str>, prefix: Option<&str>) -> String {
    let mut summary = if prep.needs_prefix_call() {
        let h = if prep.messages_to_summarize.is_empty() { NO_PRIOR_HISTORY } else { history.unwrap_or("") };
        format!("{h}{SPLIT_TURN_SEPARATOR}{}", prefix.unwrap_or(""))
    } else {
        history.unwrap_or("").to_string()
    };
    summary.push_str(&prep.appendix());
    summary
}

/// `details` as Pi writes it: `{readFiles, modifiedFiles}`.
pub fn file_details(read: &[String], modified: &[String]) -> Value {
    obj([
        ("readFiles", Value::Arr(read.iter().map(|f| Value::from(f.as_str())).collect())),
        ("modifiedFiles", Value::Arr(modified.iter().map(|f| Value::from(f.as_str())).collect())),
    ])
}

/// Pi's `details` followed by Arbor's extra keys (`usage`, `tokensAfter`, `summarizer`, ...).
/// Pi reads only `readFiles` and `modifiedFiles`, so the extras come after them.
pub fn details_with_extras(details: Value, extras: Vec<(&str, Value)>) -> Value {
    let mut d = match details {
        Value::Obj(m) => m,
        _ => Map::new(),
    };
    for (k, v) in extras {
        d.insert(k, v);
    }
    Value::Obj(d)
}

/// Everything a compaction needs, detached from the session (owned, so it can cross awaits).
#[derive(Clone, Debug, PartialEq)]
pub struct CompactionJob {
    /// The leaf compacted at; the entry's parent.
    pub leaf_id: Option<String>,
    pub prep: CompactionPreparation,
    /// The context messages kept after the compaction (for `tokensAfter`).
    pub kept_messages: Vec<Value>,
}

/// What a compaction entry says: from the model's answers or from a hook.
#[derive(Clone, Debug, PartialEq)]
pub struct CompactionSummary {
    pub summary: String,
    pub first_kept_entry_id: String,
    pub tokens_before: f64,
    pub details: Option<Value>,
    pub from_hook: bool,
}

/// Plans a manual compaction at `leaf` (None = before the first entry), with Pi's refusals.
pub fn plan_compaction(
    session: &Session,
    leaf: Option<usize>,
    settings: &CompactionSettings,
) -> Result<CompactionJob, Refusal> {
    let path = session.path(leaf);
    let prep = prepare_compaction(session, &path, settings)?;
    let kept_messages =
        path[prep.first_kept_position..].iter().filter_map(|&i| context::context_message(session, i)).collect();
    Ok(CompactionJob { leaf_id: leaf.map(|l| session.id(l).to_string()), prep, kept_messages })
}

impl CompactionJob {
    /// The summary Pi writes from the model's answers (history first, then the turn prefix;
    /// `None` for a call that was not needed) with Pi's `{readFiles, modifiedFiles}`.
    pub fn summarized(&self, history: Option<&str>, prefix: Option<&str>) -> CompactionSummary {
        let p = &self.prep;
        CompactionSummary {
            summary: merge_summary(p, history, prefix),
            first_kept_entry_id: p.first_kept_entry_id.clone(),
            tokens_before: p.tokens_before,
            details: Some(file_details(&p.read_files, &p.modified_files)),
            from_hook: false,
        }
    }

    /// A hook's replacement: its summary, and the planned cut and size where it gave none.
    pub fn from_hook(
        &self,
        summary: String,
        first_kept_entry_id: Option<String>,
        tokens_before: Option<f64>,
        details: Option<Value>,
    ) -> CompactionSummary {
        CompactionSummary {
            summary,
            first_kept_entry_id: first_kept_entry_id.unwrap_or_else(|| self.prep.first_kept_entry_id.clone()),
            tokens_before: tokens_before.unwrap_or(self.prep.tokens_before),
            details,
            from_hook: true,
        }
    }

    /// The estimated context right after the compaction: the summary message plus the kept
    /// messages, each estimated as Pi estimates a message (Arbor's `tokensAfter`).
    pub fn tokens_after(&self, summary: &str, tokens_before: f64) -> f64 {
        let m = obj([
            ("role", "compactionSummary".into()),
            ("summary", summary.into()),
            ("tokensBefore", Value::Num(tokens_before)),
        ]);
        estimate_tokens(&m) + self.kept_messages.iter().map(estimate_tokens).sum::<f64>()
    }
}

/// The `compaction` entry, a child of the job's leaf, in Pi's key order.
pub fn compaction_entry(job: &CompactionJob, c: &CompactionSummary, id: &str, timestamp: &str) -> Value {
    entries::compaction(
        id,
        job.leaf_id.as_deref(),
        timestamp,
        &c.summary,
        &c.first_kept_entry_id,
        c.tokens_before,
        c.details.clone(),
        c.from_hook,
    )
}

/// Output limits Pi uses for the two summary calls.
pub fn history_max_tokens(reserve: f64) -> f64 {
    (0.8 * reserve).floor()
}
pub fn prefix_max_tokens(reserve: f64) -> f64 {
    (0.5 * reserve).floor()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one-buffer serialization equals the reference (each part built, then joined) on random
    /// messages: every role, string and block contents, empty texts (a user or tool-result part
    /// left out, an assistant part kept), non-string texts, thinking, names and arguments, tool
    /// results around the 2000-unit cut with multi-byte and surrogate-pair characters at it.
    #[test]
    fn the_one_buffer_serialization_is_the_reference() {
        let mut next = crate::testing::xorshift_usize(0x51ed_2701_f00d_cafe);
        let texts = ["", "hi", "a\nb", "é", "🚀", "\"q\""];
        let long = |n: usize, c: &str| -> String { "x".repeat(n) + &c.repeat(3) };
        let mut any_cut = false;
        for round in 0..400 {
            let mut messages = Vec::new();
            for _ in 0..(1 + next() % 6) {
                let text = |next: &mut dyn FnMut() -> usize| -> String {
                    match next() % 8 {
                        0 => format!(
                            r#""{}""#,
                            long(1990 + next() % 20, ["é", "🚀", "a", "\u{2028}"][next() % 4]).replace('\n', "\\n")
                        ),
                        1 => "7".into(),
                        2 => "null".into(),
                        _ => pi_json::quote(texts[next() % texts.len()]),
                    }
                };
                let block = |next: &mut dyn FnMut() -> usize| -> String {
                    match next() % 7 {
                        0 => format!(r#"{{"type":"text","text":{}}}"#, text(next)),
                        1 => r#"{"type":"text"}"#.into(),
                        2 => format!(r#"{{"type":"thinking","thinking":{}}}"#, text(next)),
                        3 => {
                            r#"{"type":"toolCall","name":"read","arguments":{"path":"a.rs","n":1.5,"o":{"x":[1,"é"]}}}"#
                                .into()
                        }
                        4 => r#"{"type":"toolCall","arguments":"no object"}"#.into(),
                        5 => r#"{"type":"image","data":"AA=="}"#.into(),
                        _ => r#""plain""#.into(),
                    }
                };
                let content = match next() % 4 {
                    0 => text(&mut next),
                    1 => "null".into(),
                    _ => format!("[{}]", (0..next() % 5).map(|_| block(&mut next)).collect::<Vec<_>>().join(",")),
                };
                let role = ["user", "assistant", "toolResult", "custom", "bashExecution"][next() % 5];
                messages.push(pi_json::parse(&format!(r#"{{"role":"{role}","content":{content}}}"#)).unwrap());
            }
            let (one, reference) = (serialize_llm(messages.iter()), serialize_llm_reference(messages.iter()));
            assert_eq!(one, reference, "round {round}: {}", pi_json::to_string(&Value::Arr(messages.clone())));
            any_cut |= one.contains("more characters truncated]");
        }
        assert!(any_cut);
    }
}
