//! What the index keeps, computed with `session-engine` (whose rules are Pi's, checked against
//! Pi on the conformance and oracle corpora): loading, legacy migration, the tree, the path to
//! the leaf, the compaction on it, token estimates and usage. Nothing here re-implements a
//! format rule; this module only picks the facts and the searchable text out of the engine's
//! values.
//!
//! * [`catalog`] (phase 1): what Pi's session picker (`SessionManager.list`) gives per session:
//!   id, cwd, name, created, modified, message count, first message, plus the last model.
//! * [`entry_facts`] and [`outcome`] (phase 2): one row per entry with its full-text body, its status against the
//!   leaf, and the session's context estimate, branch count and files read / modified.
use crate::status::EntryStatus;
use pi_json::Value;
use session_engine::blocks::{blocks, Block};
use session_engine::context::{assistant_usage, context_tokens_of_usage, estimate_tokens};
use session_engine::session::{DiagnosticKind, Kind, Session};

/// Full-text body cap per entry (bytes, cut on a char boundary).
pub const MAX_BODY: usize = 8 * 1024;
/// Cap for one tool call's arguments, one tool result, one thinking block inside the body.
pub const MAX_PART: usize = 4 * 1024;
/// Cap for the stored first message.
pub const MAX_FIRST_MESSAGE: usize = 500;

/// A file loaded by the engine, with where indexing stops.
pub struct Loaded {
    pub s: Session,
    /// Bytes indexed: the whole file, or up to a torn (unparseable, unterminated) last line,
    /// which is pending.
    pub offset: u64,
    /// The last indexed line has no trailing `\n` (a valid JSON line: an entry, as Pi loads it).
    /// If the file grows, it is re-read in full (Pi's next append may glue onto that line).
    pub unterminated: bool,
    /// 0 = no JSON object yet (empty or still being written), 1 = accepted header, 2 = rejected
    /// (the first JSON line is not a session header: Pi would not list it).
    pub valid: i64,
    pub bad_lines: i64,
}

/// Load bytes with the engine. v1 files get stable counter ids (`m0000001`, ...), so the index
/// and a reload agree with each other.
pub fn load(buf: Vec<u8>) -> Loaded {
    let len = buf.len() as u64;
    // The engine's migration ids are deterministic, so the app opening this file sees the same ones.
    let session = Session::from_bytes(buf);
    let mut offset = len;
    let mut unterminated = false;
    let mut bad = 0;
    let mut rejected = false;
    for d in session.diagnostics() {
        match d.kind {
            DiagnosticKind::TornTail => offset = d.offset,
            DiagnosticKind::Unterminated => unterminated = true,
            DiagnosticKind::Malformed | DiagnosticKind::NulBytes => bad += 1,
            DiagnosticKind::InvalidEntry => {
                if session.header().is_none() {
                    rejected = true;
                }
                bad += 1;
            }
            _ => {}
        }
    }
    let valid = if session.header().is_some() {
        1
    } else if rejected {
        2
    } else {
        0
    };
    Loaded { s: session, offset, unterminated, valid, bad_lines: bad }
}

/// Phase-1 facts of one session (Pi's session picker, plus the model).
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    pub name: Option<String>,
    pub model: Option<String>,
    pub first_message: Option<String>,
    /// Pi's `modified` rule (§6.6): newest user/assistant message time; None: use the header's.
    pub modified_ms: Option<i64>,
    pub entry_count: i64,
    pub message_count: i64,
    pub compaction_count: i64,
    pub leaf_id: Option<String>,
}

/// Pi's `extractTextContent`: a string, or the text blocks joined with a space.
pub(crate) fn text_content(content: &Value) -> String {
    session_engine::context::text_blocks_joined(content, " ")
}

/// Phase 1: the picker facts. Cost: one borrowed pass over message lines (role, timestamp), the
/// DOM of the first user message, and a walk back to the last model.
pub fn catalog(l: &Loaded) -> Catalog {
    let session = &l.s;
    let mut c =
        Catalog { entry_count: session.len() as i64, name: session.name().map(str::to_string), ..Default::default() };
    let mut last_activity: Option<f64> = None;
    for i in 0..session.len() {
        match session.kind(i) {
            Kind::Compaction => c.compaction_count += 1,
            Kind::Message => {
                c.message_count += 1;
                // The open recorded every message's role (as JSON.parse reads it): most lines
                // (tool results) are skipped without reading them again.
                let role_now = session.role(i);
                if !matches!(role_now, Some("user" | "assistant")) {
                    continue;
                }
                // The walk's role must be the open's (a repeated `role` key can stop the walk
                // early); else the DOM decides.
                let head = if session.migrated() {
                    None
                } else {
                    pi_json::message_head(&session.raw(i)).filter(|h| h.0.as_deref() == role_now)
                };
                let (role, has_content, ts) = match head {
                    Some(h) => h,
                    None => match session.message(i) {
                        Some(m) => (
                            m.str_field("role").map(str::to_string),
                            m.get("content").is_some(),
                            m.num_field("timestamp"),
                        ),
                        None => continue,
                    },
                };
                if !has_content || !matches!(role.as_deref(), Some("user" | "assistant")) {
                    continue;
                }
                if c.first_message.is_none() && role.as_deref() == Some("user") {
                    let v;
                    let m = if session.migrated() {
                        session.message(i)
                    } else {
                        v = pi_json::parse_bytes(&session.raw(i)).unwrap_or(Value::Null);
                        v.get("message")
                    };
                    if let Some(t) = m.and_then(|m| m.get("content")).map(text_content) {
                        if !t.is_empty() {
                            c.first_message = Some(cut(&t, MAX_FIRST_MESSAGE).to_string());
                        }
                    }
                }
                let t = match ts {
                    Some(t) => Some(t),
                    None => session_engine::time::parse_iso_ms(&session.entry(i).timestamp).map(|x| x as f64),
                };
                if let Some(t) = t {
                    last_activity = Some(last_activity.map_or(t, |x: f64| x.max(t)));
                }
            }
            _ => {}
        }
    }
    c.modified_ms = last_activity.filter(|t| *t > 0.0).map(|t| t as i64);
    c.model = last_model(session);
    c.leaf_id = session.file_leaf().map(|i| session.id(i).to_string());
    c
}

/// The last model in file order: a `model_change`, or an assistant message's provider/model.
fn last_model(session: &Session) -> Option<String> {
    for i in (0..session.len()).rev() {
        match session.kind(i) {
            Kind::ModelChange => {
                let v = session.value(i);
                if let (Some(p), Some(m)) = (v.str_field("provider"), v.str_field("modelId")) {
                    return Some(format!("{p}/{m}"));
                }
            }
            Kind::Message if session.role(i) == Some("assistant") => {
                let m = session.message(i)?;
                if let (Some(p), Some(md)) = (m.str_field("provider"), m.str_field("model")) {
                    return Some(format!("{p}/{md}"));
                }
            }
            _ => {}
        }
    }
    None
}

/// What one entry contributes: its message in the LLM context (§8.2; a compaction: its summary),
/// the token estimate and usage of that message (§9), the searchable text, file paths, and what
/// the cost of forgetting counts ([`act_key`]).
#[derive(Debug, Clone, Default)]
pub struct EntryFacts {
    pub role: Option<String>,
    pub first_kept: Option<String>,
    pub ctx: bool,
    pub tok: i64,
    pub usage: Option<i64>,
    pub body: String,
    pub files_read: Vec<String>,
    pub files_modified: Vec<String>,
    /// The entry's reads, commands and edits in order, as [`act_key`]s (empty for most entries).
    pub acts: Vec<i64>,
    /// A compaction that is an edit or revert of another: the id it names as its origin.
    pub edit_origin: Option<String>,
}

/// What a search hit shows from its entry's line besides the ids the index keeps: the full-text
/// body (for the snippet), the message's role and the entry's timestamp.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineText {
    pub body: String,
    pub role: Option<String>,
    pub timestamp: String,
}

/// The hash of what a search shows from an entry's line ([`LineText`]) that the index keeps
/// (`entries.bh`): neither the full-text table nor the entry row keeps a copy of these, so a hit
/// reads the entry's line again at its offset, and shows them only when that line still gives
/// these very values (a file rewritten since indexing gives a hit without them rather than
/// wrong ones). 32 bits of a word-at-a-time multiply-xor hash (cheap next to the full-text
/// insert of the same bytes), stable across builds.
pub fn text_hash(body: &str, role: Option<&str>, timestamp: &str) -> i64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    // each part with its length first, so that no two different triples hash as one text
    let mix = |mut h: u64, b: &[u8]| {
        h = (h.rotate_left(5) ^ b.len() as u64).wrapping_mul(K);
        let mut words = b.chunks_exact(8);
        for w in &mut words {
            let x = u64::from_le_bytes(w.try_into().unwrap_or_default());
            h = (h.rotate_left(5) ^ x).wrapping_mul(K);
        }
        let mut last = [0u8; 8];
        last[..words.remainder().len()].copy_from_slice(words.remainder());
        (h.rotate_left(5) ^ u64::from_le_bytes(last)).wrapping_mul(K)
    };
    let mut h = mix(K, body.as_bytes());
    h = match role {
        Some(r) => mix(h ^ 1, r.as_bytes()),
        None => (h.rotate_left(5) ^ 2).wrapping_mul(K),
    };
    h = mix(h, timestamp.as_bytes());
    ((h ^ (h >> 32)) & 0xffff_ffff) as i64
}

/// What a hit shows from one entry line, read again from its file: the line as the chunk
/// scanner decodes it (invalid UTF-8 replaced), its type and [`entry_facts`] (body, role), and
/// its `timestamp` as the loader reads it (not a string: empty). (A legacy file's entries are
/// migrated in memory first: theirs come from the engine's load instead.)
pub fn line_text(line: &[u8]) -> LineText {
    let text = String::from_utf8_lossy(line);
    let v = pi_json::parse_bytes(text.as_bytes()).unwrap_or(Value::Null);
    let kind = Kind::from_type(v.str_field("type").unwrap_or(""));
    let f = entry_facts(kind, &v);
    LineText { body: f.body, role: f.role, timestamp: v.str_field("timestamp").unwrap_or_default().to_string() }
}

/// What an act is, in the two low bits of its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Act {
    /// A `read` tool call's path.
    Read = 1,
    /// A `bash` tool call's command, or a `bashExecution` message's.
    Run = 2,
    /// A `write` or `edit` tool call (what was written does not matter).
    Edit = 3,
}

/// The key of one act, as the index stores it: the tag in the two low bits, the rest a 64-bit
/// FNV-1a of the trimmed text. `summary_analysis::quality::forgetting` compares paths and
/// commands trimmed and exactly; equal texts give equal keys, and a bash command of kilobytes
/// costs 8 bytes in the index. (A collision of two different paths in 62 bits is not a concern
/// for a count.)
pub fn act_key(act: Act, text: &str) -> i64 {
    if act == Act::Edit {
        return Act::Edit as i64;
    }
    let mut h: u64 = 0xcbf29ce484222325;
    for &x in text.trim().as_bytes() {
        h ^= x as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    ((h & !3) | act as u64) as i64
}

/// The kind of act a key stands for ([`act_key`]).
pub fn act_of(key: i64) -> Act {
    match key & 3 {
        1 => Act::Read,
        2 => Act::Run,
        _ => Act::Edit,
    }
}

/// The context message an entry maps to (the engine's mapping, on a value instead of a loaded
/// session: for appended lines), with a compaction's summary message; no timestamps (token
/// estimates do not count them).
fn context_message_of(kind: Kind, v: &Value) -> Option<Value> {
    match kind {
        Kind::Compaction => Some(session_engine::context::compaction_summary_of(v)),
        k => session_engine::context::context_message_of(k, v, || Value::Null),
    }
}

/// Facts of one entry from its full JSON.
pub fn entry_facts(kind: Kind, v: &Value) -> EntryFacts {
    let mut f = EntryFacts::default();
    if let Some(m) = context_message_of(kind, v) {
        f.ctx = true;
        let t = estimate_tokens(&m);
        f.tok = if t.is_finite() { t as i64 } else { 0 };
        f.usage = assistant_usage(&m).map(context_tokens_of_usage).filter(|u| u.is_finite()).map(|u| u as i64);
    }
    if kind == Kind::Compaction {
        f.first_kept = v.str_field("firstKeptEntryId").map(str::to_string);
        // what `summary_analysis::edit_origin` reads: an edit is judged as its origin
        let details = v.get("details");
        if details.and_then(|d| d.str_field("editKind")).is_some() {
            f.edit_origin = details.and_then(|d| d.str_field("editOrigin")).map(str::to_string);
        }
    }
    let mut b = Body(String::new());
    match kind {
        Kind::Message => {
            if let Some(m) = v.get("message") {
                f.role = m.str_field("role").map(str::to_string);
                message_body(m, &mut b, &mut f);
            }
        }
        Kind::CustomMessage => {
            if let Some(c) = v.get("content") {
                content_body(c, &mut b, MAX_BODY);
            }
            if let Some(t) = v.str_field("customType") {
                b.push(t, 200);
            }
        }
        Kind::Compaction | Kind::BranchSummary => {
            if let Some(t) = v.str_field("summary") {
                b.push(t, MAX_BODY);
            }
        }
        Kind::SessionInfo => {
            if let Some(t) = v.str_field("name") {
                b.push(t.trim(), 500);
            }
        }
        Kind::Label => {
            if let Some(t) = v.str_field("label") {
                b.push(t, 500);
            }
        }
        _ => {}
    }
    f.body = b.0;
    f
}

fn message_body(m: &Value, b: &mut Body, f: &mut EntryFacts) {
    match m.str_field("role") {
        Some("user") => {
            if let Some(c) = m.get("content") {
                content_body(c, b, MAX_BODY);
            }
        }
        Some("assistant") => match m.get("content") {
            Some(Value::Arr(_)) => {
                for bl in blocks(m.get("content")) {
                    match bl {
                        Block::Text(_) => {
                            if let Some(t) = bl.text() {
                                b.push(t, MAX_BODY);
                            }
                        }
                        Block::Thinking(_) => {
                            if let Some(t) = bl.thinking() {
                                b.push(t, MAX_PART);
                            }
                        }
                        Block::ToolCall(bl) => {
                            let name = bl.str_field("name").unwrap_or("");
                            b.push(name, 200);
                            // the acts `summary_analysis::quality::forgetting` counts, read as it
                            // reads them
                            let arg = |k: &str| bl.get("arguments").and_then(|a| a.str_field(k));
                            match name {
                                "read" => f.acts.extend(arg("path").map(|p| act_key(Act::Read, p))),
                                "bash" => f.acts.extend(arg("command").map(|c| act_key(Act::Run, c))),
                                "write" | "edit" => f.acts.push(act_key(Act::Edit, "")),
                                _ => {}
                            }
                            if let Some(a) = bl.get("arguments") {
                                let mut t = String::new();
                                leaves(a, &mut t, MAX_PART);
                                b.push(&t, MAX_PART);
                                if let Some(p) = a.str_field("path").filter(|p| !p.is_empty()) {
                                    match name {
                                        "read" => f.files_read.push(p.to_string()),
                                        "write" | "edit" => f.files_modified.push(p.to_string()),
                                        _ => {}
                                    }
                                }
                            }
                        }
                        Block::Image(_) | Block::Other(_) => {}
                    }
                }
            }
            Some(other) => content_body(other, b, MAX_BODY),
            None => {}
        },
        Some("toolResult" | "custom") => {
            if let Some(t) = m.str_field("toolName") {
                b.push(t, 200);
            }
            if let Some(c) = m.get("content") {
                content_body(c, b, MAX_PART);
            }
        }
        Some("bashExecution") => {
            f.acts.extend(m.str_field("command").map(|c| act_key(Act::Run, c)));
            for k in ["command", "output"] {
                if let Some(t) = m.str_field(k) {
                    b.push(t, MAX_PART);
                }
            }
        }
        Some("branchSummary" | "compactionSummary") => {
            if let Some(t) = m.str_field("summary") {
                b.push(t, MAX_BODY);
            }
        }
        _ => {
            let mut t = String::new();
            leaves(m, &mut t, MAX_PART);
            b.push(&t, MAX_PART);
        }
    }
}

/// Text of a content value: a string, the text blocks of an array, or (odd shapes) every string
/// leaf, so nothing written in a session is unsearchable.
fn content_body(c: &Value, b: &mut Body, cap: usize) {
    match c {
        Value::Str(s) => b.push(s, cap),
        Value::Arr(_) => {
            for t in blocks(Some(c)).filter_map(Block::text) {
                b.push(t, cap);
            }
        }
        other => {
            let mut t = String::new();
            leaves(other, &mut t, cap);
            b.push(&t, cap);
        }
    }
}

/// Keys and scalar leaves, space separated, up to `cap` bytes (tool-call arguments: the
/// tokenizer sees real words, never `\n`-glued ones).
fn leaves(v: &Value, out: &mut String, cap: usize) {
    if out.len() >= cap {
        return;
    }
    let push = |s: &str, out: &mut String| {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(cut(s, cap.saturating_sub(out.len())));
    };
    match v {
        Value::Str(s) => push(s, out),
        Value::Num(n) => push(&pi_json::number_to_string(*n), out),
        Value::Bool(x) => push(if *x { "true" } else { "false" }, out),
        Value::Null => {}
        Value::Arr(a) => a.iter().for_each(|x| leaves(x, out, cap)),
        Value::Obj(m) => {
            for (k, x) in m.iter() {
                push(k, out);
                leaves(x, out, cap);
            }
        }
    }
}

struct Body(String);
impl Body {
    fn push(&mut self, s: &str, cap: usize) {
        if s.is_empty() {
            return;
        }
        let room = MAX_BODY.saturating_sub(self.0.len() + 1);
        if room == 0 {
            return;
        }
        if !self.0.is_empty() {
            self.0.push('\n');
        }
        self.0.push_str(cut(s, cap.min(room)));
    }
}

pub(crate) use session_engine::session::js_trim;

/// Cut `s` to at most `max` bytes on a char boundary.
pub fn cut(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut i = max;
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    &s[..i]
}

/// Where the entries stand relative to the leaf, and the context estimate there.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    /// One status per entry, in file order.
    pub status: Vec<EntryStatus>,
    /// Usage part of the context estimate (§9.3), if a message with usage is in the context.
    pub ctx_usage: Option<i64>,
    /// Estimated tokens of the context messages after that usage (or all of them).
    pub ctx_trailing: i64,
    /// Tips of the tree (entries nothing points at; 1 for a linear session).
    pub branches: i64,
}

/// Statuses, estimate and branch count of a session whose per-entry (ctx, tok, usage) are
/// known. The path is the engine's (`Session::path` from the file's leaf); the compaction and
/// kept part are those of `context::build_context_on_path`: the last compaction on the path,
/// and the entries from its `firstKeptEntryId` (on the path before it) up to it.
pub fn outcome(session: &Session, facts: &[(bool, i64, Option<i64>)]) -> Outcome {
    let n = session.len();
    let mut o = Outcome { status: vec![EntryStatus::Abandoned; n], ..Default::default() };
    o.branches =
        (0..n).filter(|&i| session.index_of(session.id(i)) == Some(i) && session.children(i).is_empty()).count() as i64;
    let path = session.path(session.file_leaf());
    for &i in &path {
        o.status[i] = EntryStatus::InContext;
    }
    let ci = path.iter().rposition(|&i| session.kind(i) == Kind::Compaction);
    // the context's messages in order, as (tok, usage)
    let mut msgs: Vec<(i64, Option<i64>)> = Vec::new();
    let push = |i: usize, msgs: &mut Vec<(i64, Option<i64>)>| {
        let (ctx, tok, usage) = facts[i];
        if ctx {
            msgs.push((tok, usage));
        }
    };
    match ci {
        None => path.iter().for_each(|&i| push(i, &mut msgs)),
        Some(ci) => {
            let c = path[ci];
            let fk = facts_first_kept(session, c);
            let kept_from =
                fk.as_deref().and_then(|f| path[..ci].iter().position(|&i| session.id(i) == f)).unwrap_or(ci);
            for &i in &path[..kept_from] {
                o.status[i] = EntryStatus::Compacted;
            }
            msgs.push((facts[c].1, None));
            path[kept_from..ci].iter().chain(path[ci + 1..].iter()).for_each(|&i| push(i, &mut msgs));
        }
    }
    // §9.3 (estimateContextTokens) over the known per-message estimates
    match msgs.iter().rposition(|m| m.1.is_some()) {
        None => o.ctx_trailing = msgs.iter().map(|m| m.0).sum(),
        Some(u) => {
            o.ctx_usage = msgs[u].1;
            o.ctx_trailing = msgs[u + 1..].iter().map(|m| m.0).sum();
        }
    }
    o
}

fn facts_first_kept(session: &Session, c: usize) -> Option<String> {
    session.value(c).str_field("firstKeptEntryId").map(str::to_string)
}

/// Act keys as the index stores them: 8 bytes each, little-endian (`None`: no act).
pub fn acts_blob(acts: &[i64]) -> Option<Vec<u8>> {
    (!acts.is_empty()).then(|| acts.iter().flat_map(|k| k.to_le_bytes()).collect())
}

/// The keys of an [`acts_blob`].
pub fn act_keys(blob: &[u8]) -> impl Iterator<Item = i64> + '_ {
    blob.chunks_exact(8).map(|c| i64::from_le_bytes(c.try_into().unwrap_or_default()))
}

/// A stand-in session made of the stored rows (type, id, parentId, firstKeptEntryId): loaded by
/// the engine, it gives the same tree, path and compaction as the file, without re-reading it.
pub fn skeleton<'a>(
    rows: impl ExactSizeIterator<Item = (&'a str, Option<&'a str>, &'a str, Option<&'a str>)>,
) -> Session {
    let mut text = String::with_capacity(rows.len() * 96 + 128);
    text.push_str("{\"type\":\"session\",\"version\":3,\"id\":\"skeleton\",\"timestamp\":\"1970-01-01T00:00:00.000Z\",\"cwd\":\"\"}\n");
    for (id, parent, ty, fk) in rows {
        text.push_str("{\"type\":");
        pi_json::write_str(&mut text, ty);
        text.push_str(",\"id\":");
        pi_json::write_str(&mut text, id);
        text.push_str(",\"parentId\":");
        match parent {
            Some(p) => pi_json::write_str(&mut text, p),
            None => text.push_str("null"),
        }
        text.push_str(",\"timestamp\":\"1970-01-01T00:00:00.000Z\"");
        if let Some(f) = fk {
            text.push_str(",\"firstKeptEntryId\":");
            pi_json::write_str(&mut text, f);
        }
        text.push_str("}\n");
    }
    Session::from_bytes(text.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A repeated `role` key: JSON.parse (and Pi's picker) takes the last one. The structural walk
    /// stops at the first, non-counting one; the open's role decides, and the DOM gives the facts.
    #[test]
    fn a_repeated_role_key_counts_as_the_last_one() {
        let text = concat!(
            r#"{"type":"session","version":3,"id":"5e551011","timestamp":"2025-03-01T09:00:00.000Z","cwd":"/p"}"#,
            "\n",
            r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2025-03-01T09:00:01.000Z","message":{"role":"toolResult","role":"user","content":"the real first message","timestamp":1740819700000}}"#,
            "\n",
            r#"{"type":"message","id":"a2","parentId":"a1","timestamp":"2025-03-01T09:00:02.000Z","message":{"role":"user","role":"toolResult","content":"not a user message","timestamp":1740819900000}}"#,
            "\n",
        );
        let c = catalog(&load(text.as_bytes().to_vec()));
        assert_eq!(c.first_message.as_deref(), Some("the real first message"));
        assert_eq!(c.modified_ms, Some(1740819700000), "the tool result's time does not count");
        assert_eq!(c.message_count, 2);
    }
}
