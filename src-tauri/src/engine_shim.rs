//! Stand-in for the parts of `session-engine` the app needs, until the engine exports them.
//!
//! Why it exists: the engine (issue 2) was being written at the same time as the app. This module
//! follows pi-session-format.md (§6 loading, §8 context, §9 tokens, §11 cut point, §13.5 navigation)
//! closely enough for the views, and is written as free functions over [`Session`] so each call
//! site can move to `session_engine::…` one function at a time. Known simplifications are marked
//! `SHIM:`. It never writes session files; appends go through [`append_entry`] only.

use serde_json::{Map, Value};
use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug)]
pub struct Entry {
    pub id: String,
    pub parent_id: Option<String>,
    pub entry_type: String,
    pub timestamp: String,
    pub timestamp_ms: i64,
    pub value: Value,
}

#[derive(Debug, Default)]
pub struct Session {
    pub path: PathBuf,
    pub header: Option<Value>,
    pub entries: Vec<Entry>,
    pub by_id: HashMap<String, usize>,
    pub labels: HashMap<String, String>,
    pub diagnostics: Vec<String>,
    pub ends_with_newline: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("cannot read {path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("{0}")]
    Invalid(String),
}

impl Session {
    pub fn open(path: &Path) -> Result<Session, SessionError> {
        let bytes = std::fs::read(path)
            .map_err(|source| SessionError::Io { path: path.display().to_string(), source })?;
        let mut s = Session::from_bytes(&bytes);
        s.path = path.to_path_buf();
        Ok(s)
    }

    pub fn from_bytes(bytes: &[u8]) -> Session {
        let mut s = Session { ends_with_newline: bytes.last() == Some(&b'\n') || bytes.is_empty(), ..Default::default() };
        for (line_no, line) in bytes.split(|b| *b == b'\n').enumerate() {
            if line.iter().all(|b| b.is_ascii_whitespace()) {
                continue;
            }
            let v: Value = match serde_json::from_slice(line) {
                Ok(v) => v,
                Err(e) => {
                    s.diagnostics.push(format!("line {}: skipped, not JSON ({e})", line_no + 1));
                    continue;
                }
            };
            let t = v.get("type").and_then(Value::as_str).unwrap_or("").to_string();
            if s.header.is_none() && s.entries.is_empty() && t == "session" {
                s.header = Some(v);
                continue;
            }
            let Some(id) = v.get("id").and_then(Value::as_str).map(str::to_string) else {
                s.diagnostics.push(format!("line {}: skipped, entry without id", line_no + 1));
                continue;
            };
            let parent_id = v.get("parentId").and_then(Value::as_str).map(str::to_string);
            let timestamp = v.get("timestamp").and_then(Value::as_str).unwrap_or("").to_string();
            let timestamp_ms = parse_iso_ms(&timestamp).unwrap_or(0);
            if t == "label" {
                if let Some(target) = v.get("targetId").and_then(Value::as_str) {
                    match v.get("label").and_then(Value::as_str).filter(|l| !l.is_empty()) {
                        Some(l) => {
                            s.labels.insert(target.to_string(), l.to_string());
                        }
                        None => {
                            s.labels.remove(target);
                        }
                    }
                }
            }
            s.by_id.insert(id.clone(), s.entries.len());
            s.entries.push(Entry { id, parent_id, entry_type: t, timestamp, timestamp_ms, value: v });
        }
        s
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }
    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.by_id.get(id).copied()
    }
    pub fn parent_of(&self, idx: usize) -> Option<usize> {
        let p = self.entries[idx].parent_id.as_deref()?;
        self.index_of(p).filter(|p| *p != idx)
    }
    /// Pi's leaf after loading: the last entry line.
    pub fn file_leaf(&self) -> Option<usize> {
        self.entries.len().checked_sub(1)
    }
    /// Root..leaf, cycle-guarded.
    pub fn path(&self, leaf: Option<usize>) -> Vec<usize> {
        let mut out = Vec::new();
        let mut seen = vec![false; self.entries.len()];
        let mut cur = leaf;
        while let Some(i) = cur {
            if seen[i] {
                break;
            }
            seen[i] = true;
            out.push(i);
            cur = self.parent_of(i);
        }
        out.reverse();
        out
    }
    pub fn name(&self) -> Option<String> {
        self.entries
            .iter()
            .rev()
            .filter(|e| e.entry_type == "session_info")
            .find_map(|e| e.value.get("name").and_then(Value::as_str))
            .map(|n| n.trim().to_string())
            .filter(|n| !n.is_empty())
    }
    pub fn cwd(&self) -> Option<String> {
        self.header.as_ref()?.get("cwd")?.as_str().map(str::to_string)
    }
    pub fn message(&self, idx: usize) -> Option<&Value> {
        let e = &self.entries[idx];
        if e.entry_type == "message" {
            e.value.get("message")
        } else {
            None
        }
    }
    pub fn role(&self, idx: usize) -> Option<&str> {
        self.message(idx)?.get("role")?.as_str()
    }
}

/// Milliseconds since the epoch for `YYYY-MM-DDTHH:MM:SS(.fff)Z`; `None` for other forms.
pub fn parse_iso_ms(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 19 {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> { s.get(r)?.parse().ok() };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, se) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let mut ms = 0;
    if b.get(19) == Some(&b'.') {
        let frac: String = s[20..].chars().take_while(|c| c.is_ascii_digit()).collect();
        let f3: String = frac.chars().chain("000".chars()).take(3).collect();
        ms = f3.parse().ok()?;
    }
    Some(((days_from_civil(y, mo, d) * 24 + h) * 60 + mi) * 60_000 + se * 1000 + ms)
}

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

/// ISO timestamp as JavaScript's `Date.toISOString()` writes it.
pub fn iso_from_ms(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let rem = ms.rem_euclid(86_400_000);
    let z = days + 719468;
    let era = if z >= 0 { z } else { z - 146096 } / 146097;
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + if m <= 2 { 1 } else { 0 };
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60,
        rem % 1000
    )
}

/// Length in UTF-16 code units, as JavaScript counts.
pub fn utf16_len(s: &str) -> usize {
    s.encode_utf16().count()
}

fn text_of_blocks(content: &Value, kinds: &[&str]) -> usize {
    match content {
        Value::String(s) => utf16_len(s),
        Value::Array(blocks) => blocks
            .iter()
            .map(|b| match b.get("type").and_then(Value::as_str) {
                Some(t) if kinds.contains(&t) => {
                    b.get(t).or_else(|| b.get("text")).and_then(Value::as_str).map(utf16_len).unwrap_or(0)
                }
                _ => 0,
            })
            .sum(),
        _ => 0,
    }
}

/// Token categories of the context view's stacked bar.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Category {
    Summary,
    User,
    AssistantText,
    Thinking,
    ToolCalls,
    ToolResults,
    Other,
}

/// Characters per category for one context message (§9.1); tokens = ceil(total / 4).
pub fn message_chars(msg: &Value) -> Vec<(Category, usize)> {
    let role = msg.get("role").and_then(Value::as_str).unwrap_or("");
    let content = msg.get("content").unwrap_or(&Value::Null);
    match role {
        "user" => vec![(Category::User, text_of_blocks(content, &["text"]))],
        "assistant" => {
            let (mut text, mut thinking, mut calls) = (0, 0, 0);
            if let Value::Array(blocks) = content {
                for b in blocks {
                    match b.get("type").and_then(Value::as_str) {
                        Some("text") => text += b.get("text").and_then(Value::as_str).map(utf16_len).unwrap_or(0),
                        Some("thinking") => {
                            thinking += b.get("thinking").and_then(Value::as_str).map(utf16_len).unwrap_or(0)
                        }
                        Some("toolCall") => {
                            let name = b.get("name").and_then(Value::as_str).map(utf16_len).unwrap_or(0);
                            // SHIM: serde_json's compact form equals JSON.stringify for these values
                            // except for number forms; close enough for an estimate.
                            let args = b.get("arguments").map(|a| utf16_len(&a.to_string())).unwrap_or(0);
                            calls += name + args;
                        }
                        _ => {}
                    }
                }
            }
            vec![(Category::AssistantText, text), (Category::Thinking, thinking), (Category::ToolCalls, calls)]
        }
        "toolResult" | "custom" => {
            let mut n = text_of_blocks(content, &["text"]);
            if let Value::Array(blocks) = content {
                n += 4800 * blocks.iter().filter(|b| b.get("type").and_then(Value::as_str) == Some("image")).count();
            }
            vec![(if role == "toolResult" { Category::ToolResults } else { Category::Other }, n)]
        }
        "bashExecution" => {
            let c = msg.get("command").and_then(Value::as_str).map(utf16_len).unwrap_or(0);
            let o = msg.get("output").and_then(Value::as_str).map(utf16_len).unwrap_or(0);
            vec![(Category::ToolResults, c + o)]
        }
        "branchSummary" | "compactionSummary" => {
            vec![(Category::Summary, msg.get("summary").and_then(Value::as_str).map(utf16_len).unwrap_or(0))]
        }
        _ => vec![],
    }
}

pub fn estimate_tokens(msg: &Value) -> u64 {
    let chars: usize = message_chars(msg).iter().map(|(_, n)| n).sum();
    chars.div_ceil(4) as u64
}

/// One message of the built context, with the entry it came from (`None` for the summary).
pub struct CtxMessage {
    pub entry: Option<usize>,
    pub message: Value,
}

fn entry_to_message(s: &Session, idx: usize, keep_empty_branch_summary: bool) -> Option<Value> {
    let e = &s.entries[idx];
    match e.entry_type.as_str() {
        "message" => e.value.get("message").cloned(),
        "custom_message" => {
            let mut m = Map::new();
            m.insert("role".into(), "custom".into());
            for k in ["customType", "content", "display", "details"] {
                if let Some(v) = e.value.get(k) {
                    m.insert(k.into(), v.clone());
                }
            }
            m.insert("timestamp".into(), e.timestamp_ms.into());
            Some(Value::Object(m))
        }
        "branch_summary" => {
            let summary = e.value.get("summary").and_then(Value::as_str).unwrap_or("");
            if summary.is_empty() && !keep_empty_branch_summary {
                return None;
            }
            let mut m = Map::new();
            m.insert("role".into(), "branchSummary".into());
            m.insert("summary".into(), summary.into());
            m.insert("fromId".into(), e.value.get("fromId").cloned().unwrap_or(Value::Null));
            m.insert("timestamp".into(), e.timestamp_ms.into());
            Some(Value::Object(m))
        }
        _ => None,
    }
}

/// §8.3: what the model sees when `leaf` is the leaf.
pub fn build_context(s: &Session, leaf: Option<usize>) -> Vec<CtxMessage> {
    let path = s.path(leaf);
    let last_compaction = path.iter().rposition(|i| s.entries[*i].entry_type == "compaction");
    let mut out = Vec::new();
    let push = |out: &mut Vec<CtxMessage>, i: usize| {
        if let Some(m) = entry_to_message(s, i, false) {
            out.push(CtxMessage { entry: Some(i), message: m });
        }
    };
    match last_compaction {
        None => path.iter().for_each(|i| push(&mut out, *i)),
        Some(ci) => {
            let c = &s.entries[path[ci]];
            let mut m = Map::new();
            m.insert("role".into(), "compactionSummary".into());
            m.insert("summary".into(), c.value.get("summary").cloned().unwrap_or(Value::from("")));
            m.insert("tokensBefore".into(), c.value.get("tokensBefore").cloned().unwrap_or(Value::Null));
            m.insert("timestamp".into(), c.timestamp_ms.into());
            out.push(CtxMessage { entry: Some(path[ci]), message: Value::Object(m) });
            let kept = c.value.get("firstKeptEntryId").and_then(Value::as_str);
            if let Some(k) = path[..ci].iter().position(|i| Some(s.entries[*i].id.as_str()) == kept) {
                path[k..ci].iter().for_each(|i| push(&mut out, *i));
            }
            path[ci + 1..].iter().for_each(|i| push(&mut out, *i));
        }
    }
    out
}

fn usage_tokens(msg: &Value) -> Option<u64> {
    if msg.get("role").and_then(Value::as_str) != Some("assistant") {
        return None;
    }
    let stop = msg.get("stopReason").and_then(Value::as_str);
    if matches!(stop, Some("aborted") | Some("error")) {
        return None;
    }
    let u = msg.get("usage").filter(|u| !u.is_null())?;
    let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
    let total = n("totalTokens");
    Some(if total > 0 { total } else { n("input") + n("output") + n("cacheRead") + n("cacheWrite") })
}

/// §9.3: (tokens, usage tokens, trailing tokens).
pub fn estimate_context(messages: &[Value]) -> (u64, u64, u64) {
    match messages.iter().rposition(|m| usage_tokens(m).is_some()) {
        None => {
            let t = messages.iter().map(estimate_tokens).sum();
            (t, 0, t)
        }
        Some(u) => {
            let usage = usage_tokens(&messages[u]).unwrap_or(0);
            let trailing: u64 = messages[u + 1..].iter().map(estimate_tokens).sum();
            (usage + trailing, usage, trailing)
        }
    }
}

pub struct CompactionPreview {
    pub first_kept: usize,
    pub is_split_turn: bool,
    pub tokens_before: u64,
    /// Estimated tokens of the messages that would be summarized (history + turn prefix).
    pub tokens_to_summarize: u64,
    /// Estimated tokens of the kept tail.
    pub tokens_kept: u64,
}

fn valid_cut(s: &Session, i: usize) -> bool {
    let e = &s.entries[i];
    match e.entry_type.as_str() {
        "message" => matches!(
            s.role(i),
            Some("user" | "assistant" | "bashExecution" | "custom" | "branchSummary" | "compactionSummary")
        ),
        "branch_summary" | "custom_message" => true,
        _ => false,
    }
}

/// §11: the cut point for the path ending at `leaf`, without any LLM call. `Err` is Pi's refusal.
pub fn prepare_compaction(s: &Session, leaf: Option<usize>, keep_recent_tokens: u64) -> Result<CompactionPreview, String> {
    let path = s.path(leaf);
    let Some(&last) = path.last() else { return Err("The session is empty.".into()) };
    if s.entries[last].entry_type == "compaction" {
        return Err("Already compacted: the last entry on this path is a compaction.".into());
    }
    let prev = path.iter().rposition(|i| s.entries[*i].entry_type == "compaction");
    let start = match prev {
        None => 0,
        Some(p) => {
            let kept = s.entries[path[p]].value.get("firstKeptEntryId").and_then(Value::as_str);
            path.iter().position(|i| Some(s.entries[*i].id.as_str()) == kept).unwrap_or(p + 1)
        }
    };
    let end = path.len();
    let cuts: Vec<usize> = (start..end).filter(|i| valid_cut(s, path[*i])).collect();
    let mut cut = cuts.first().copied().unwrap_or(start);
    if !cuts.is_empty() {
        let mut acc = 0u64;
        for i in (start..end).rev() {
            if s.entries[path[i]].entry_type != "message" {
                continue;
            }
            acc += s.message(path[i]).map(estimate_tokens).unwrap_or(0);
            if acc >= keep_recent_tokens {
                if let Some(c) = cuts.iter().find(|c| **c >= i) {
                    cut = *c;
                }
                break;
            }
        }
    }
    while cut > start {
        let t = s.entries[path[cut - 1]].entry_type.as_str();
        if t == "compaction" || t == "message" {
            break;
        }
        cut -= 1;
    }
    let is_user = s.entries[path[cut]].entry_type == "message" && s.role(path[cut]) == Some("user");
    let turn_start = if is_user {
        None
    } else {
        (start..=cut).rev().find(|i| {
            let e = &s.entries[path[*i]];
            e.entry_type == "branch_summary"
                || e.entry_type == "custom_message"
                || (e.entry_type == "message" && matches!(s.role(path[*i]), Some("user" | "bashExecution")))
        })
    };
    let to_tokens = |r: std::ops::Range<usize>| -> u64 {
        path[r].iter().filter_map(|i| entry_to_message(s, *i, true)).map(|m| estimate_tokens(&m)).sum()
    };
    let history_end = turn_start.unwrap_or(cut);
    let mut tokens_to_summarize = to_tokens(start..history_end);
    if let Some(ts) = turn_start {
        tokens_to_summarize += to_tokens(ts..cut);
    }
    let ctx: Vec<Value> = build_context(s, Some(last)).into_iter().map(|m| m.message).collect();
    Ok(CompactionPreview {
        first_kept: path[cut],
        is_split_turn: turn_start.is_some(),
        tokens_before: estimate_context(&ctx).0,
        tokens_to_summarize,
        tokens_kept: to_tokens(cut..end),
    })
}

/// Text of a user message (string, or its text blocks joined with ""), for the composer.
pub fn user_text(msg: &Value) -> String {
    match msg.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

/// §13.5 step 3: where the leaf goes when the user navigates to `target`, and the text that goes
/// back to the composer.
pub fn plan_navigation(s: &Session, target: usize) -> (Option<usize>, Option<String>) {
    let e = &s.entries[target];
    let is_user = e.entry_type == "message" && s.role(target) == Some("user");
    if is_user || e.entry_type == "custom_message" {
        let text = if is_user {
            s.message(target).map(user_text).unwrap_or_default()
        } else {
            user_text(&e.value)
        };
        (s.parent_of(target), Some(text))
    } else {
        (Some(target), None)
    }
}

/// Append one entry line. Refuses when the file does not end with a newline (a torn last line),
/// because appending would glue the new entry to it. Never rewrites existing bytes.
pub fn append_entry(path: &Path, entry: &Value) -> Result<(), SessionError> {
    let io = |source| SessionError::Io { path: path.display().to_string(), source };
    let mut f = OpenOptions::new().append(true).read(true).open(path).map_err(io)?;
    let len = f.metadata().map_err(io)?.len();
    if len > 0 {
        use std::io::{Read, Seek, SeekFrom};
        let mut last = [0u8; 1];
        f.seek(SeekFrom::Start(len - 1)).map_err(io)?;
        f.read_exact(&mut last).map_err(io)?;
        if last[0] != b'\n' {
            return Err(SessionError::Invalid(
                "the session file ends with an incomplete line; Arbor will not append to it".into(),
            ));
        }
    }
    let mut line = serde_json::to_string(entry).map_err(|e| SessionError::Invalid(e.to_string()))?;
    line.push('\n');
    f.write_all(line.as_bytes()).map_err(io)?;
    f.sync_data().map_err(io)
}

/// A `label` entry in Pi's key order; `label: None` clears (the key is omitted, as
/// `JSON.stringify` drops `undefined`).
pub fn label_entry(id: &str, parent: Option<&str>, now_ms: i64, target: &str, label: Option<&str>) -> Value {
    let mut m = Map::new();
    m.insert("type".into(), "label".into());
    m.insert("id".into(), id.into());
    m.insert("parentId".into(), parent.map(Value::from).unwrap_or(Value::Null));
    m.insert("timestamp".into(), iso_from_ms(now_ms).into());
    m.insert("targetId".into(), target.into());
    if let Some(l) = label {
        m.insert("label".into(), l.into());
    }
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_round_trip() {
        let ms = parse_iso_ms("2025-03-01T09:11:22.833Z").unwrap();
        assert_eq!(iso_from_ms(ms), "2025-03-01T09:11:22.833Z");
        assert_eq!(parse_iso_ms("1970-01-01T00:00:01Z"), Some(1000));
    }

    #[test]
    fn navigation_to_user_message_moves_to_parent() {
        let s = Session::from_bytes(
            br#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}
{"type":"message","id":"u1","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"hi "},{"type":"text","text":"there"}]}}
{"type":"message","id":"a1","parentId":"u1","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hello"}]}}
"#,
        );
        assert_eq!(plan_navigation(&s, 0), (None, Some("hi there".into())));
        assert_eq!(plan_navigation(&s, 1), (Some(1), None));
    }
}
