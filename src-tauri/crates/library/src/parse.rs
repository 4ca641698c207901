//! Line parser for the index: one JSONL line in, one small record out.
//!
//! Fast path: a borrowed, typed view (serde with `Cow<str>` and `RawValue`), so a line with no
//! escapes is never copied. Slow path (a line whose shape the typed view refuses, e.g. a number
//! where a string is expected): `serde_json::Value`, keeping the structural fields and every string
//! leaf as searchable text. A line that is not a JSON object is reported as bad, never fatal.
//!
//! The rules for what goes in the text, token estimates (§9.1, UTF-16 lengths) and usage (§9.2)
//! follow pi-session-format.md.
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;

/// Full-text body cap per entry (bytes, cut on a char boundary).
pub const MAX_BODY: usize = 8 * 1024;
/// Cap for one tool call's arguments or one tool result inside the body.
pub const MAX_PART: usize = 4 * 1024;
/// Cap for the stored first message.
pub const MAX_FIRST_MESSAGE: usize = 500;

#[derive(Debug, Clone, Default)]
pub struct Header {
    pub id: String,
    pub cwd: Option<String>,
    pub timestamp: Option<String>,
    pub version: Option<f64>,
    pub parent_session: Option<String>,
}

/// One entry line reduced to what the index keeps.
#[derive(Debug, Clone, Default)]
pub struct EntryRec {
    pub id: String,
    pub parent_id: Option<String>,
    pub ty: String,
    pub role: Option<String>,
    pub timestamp: Option<String>,
    /// compaction only
    pub first_kept: Option<String>,
    /// Does this entry yield a message in the LLM context (§8.2; compaction counts: its summary)?
    pub ctx: bool,
    /// Token estimate of that message (§9.1).
    pub tok: i64,
    /// Usage tokens (§9.2) when the message "has usage".
    pub usage: Option<i64>,
    /// Full-text body (may be empty: no FTS row).
    pub body: String,
    // facts for the session row
    pub name: Option<String>,
    pub model: Option<String>,
    pub modified_ms: Option<i64>,
    pub first_user_text: Option<String>,
    pub files_read: Vec<String>,
    pub files_modified: Vec<String>,
}

#[derive(Debug)]
pub enum Line {
    Blank,
    Header(Header),
    Entry(Box<EntryRec>),
    /// Not JSON, not an object, or an object without a string `id`.
    Bad(&'static str),
}

// ---------- typed borrowed view ----------

#[derive(Deserialize)]
struct L<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(rename = "parentId", borrow, default)]
    parent_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    message: Option<Msg<'a>>,
    #[serde(borrow, default)]
    summary: Option<RawStr<'a>>,
    #[serde(rename = "firstKeptEntryId", borrow, default)]
    first_kept: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    label: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    provider: Option<Cow<'a, str>>,
    #[serde(rename = "modelId", borrow, default)]
    model_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    content: Option<Content<'a>>,
    #[serde(rename = "customType", borrow, default)]
    custom_type: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    cwd: Option<Cow<'a, str>>,
    #[serde(default)]
    version: Option<f64>,
    #[serde(rename = "parentSession", borrow, default)]
    parent_session: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Msg<'a> {
    #[serde(borrow, default)]
    role: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    content: Option<Content<'a>>,
    #[serde(borrow, default)]
    provider: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    model: Option<Cow<'a, str>>,
    #[serde(default)]
    usage: Option<Usage>,
    #[serde(rename = "stopReason", borrow, default)]
    stop_reason: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    timestamp: Option<&'a RawValue>,
    #[serde(rename = "toolName", borrow, default)]
    tool_name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    command: Option<RawStr<'a>>,
    #[serde(borrow, default)]
    output: Option<RawStr<'a>>,
    #[serde(borrow, default)]
    summary: Option<RawStr<'a>>,
}

#[derive(Deserialize, Default)]
struct Usage {
    #[serde(default)]
    input: Option<f64>,
    #[serde(default)]
    output: Option<f64>,
    #[serde(rename = "cacheRead", default)]
    cache_read: Option<f64>,
    #[serde(rename = "cacheWrite", default)]
    cache_write: Option<f64>,
    #[serde(rename = "totalTokens", default)]
    total_tokens: Option<f64>,
}

#[derive(Deserialize)]
struct Block<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    text: Option<RawStr<'a>>,
    #[serde(borrow, default)]
    thinking: Option<RawStr<'a>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
}

/// A JSON string literal kept raw (with its quotes and escapes): nothing is copied or unescaped
/// unless the text is needed, and its UTF-16 length is computed from the raw bytes.
#[derive(Clone, Copy)]
pub struct RawStr<'a>(&'a str);

impl<'de: 'a, 'a> Deserialize<'de> for RawStr<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let r: &'de RawValue = Deserialize::deserialize(d)?;
        let s = r.get();
        if s.len() >= 2 && s.starts_with('"') {
            Ok(RawStr(s))
        } else {
            Err(de::Error::custom("expected a string"))
        }
    }
}

impl<'a> RawStr<'a> {
    fn inner(&self) -> &'a str {
        &self.0[1..self.0.len() - 1]
    }
    pub fn is_empty(&self) -> bool {
        self.0.len() <= 2
    }
    /// JavaScript `.length` of the decoded string.
    pub fn utf16_len(&self) -> i64 {
        let b = self.inner().as_bytes();
        let mut n = 0i64;
        let mut i = 0;
        while i < b.len() {
            match memchr::memchr(b'\\', &b[i..]) {
                None => {
                    n += utf16_len_bytes(&b[i..]);
                    break;
                }
                Some(k) => {
                    n += utf16_len_bytes(&b[i..i + k]);
                    n += 1; // one escape = one UTF-16 unit (a surrogate pair is two \u escapes)
                    i += k + if b.get(i + k + 1) == Some(&b'u') { 6 } else { 2 };
                }
            }
        }
        n
    }
    /// The decoded text, cut to at most about `cap` bytes (on a char boundary).
    pub fn text(&self, cap: usize) -> Cow<'a, str> {
        let inner = self.inner();
        let head = cut(inner, cap);
        if memchr::memchr(b'\\', head.as_bytes()).is_none() {
            return Cow::Borrowed(head);
        }
        let b = inner.as_bytes();
        let mut out = String::with_capacity(cap.min(inner.len()));
        let mut i = 0;
        while i < b.len() && out.len() < cap {
            match memchr::memchr(b'\\', &b[i..]) {
                None => {
                    out.push_str(&inner[i..]);
                    break;
                }
                Some(k) => {
                    out.push_str(&inner[i..i + k]);
                    i += k;
                    let e = b.get(i + 1).copied().unwrap_or(b'\\');
                    i += 2;
                    match e {
                        b'n' => out.push('\n'),
                        b't' => out.push('\t'),
                        b'r' => out.push('\r'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'u' => {
                            let hex = |at: usize| inner.get(at..at + 4).and_then(|h| u16::from_str_radix(h, 16).ok());
                            let Some(u) = hex(i) else { break };
                            i += 4;
                            let mut units = vec![u];
                            if (0xD800..0xDC00).contains(&u) && inner.get(i..i + 2) == Some("\\u") {
                                if let Some(lo) = hex(i + 2) {
                                    if (0xDC00..0xE000).contains(&lo) {
                                        units.push(lo);
                                        i += 6;
                                    }
                                }
                            }
                            out.extend(char::decode_utf16(units).map(|c| c.unwrap_or('\u{FFFD}')));
                        }
                        other => out.push(other as char),
                    }
                }
            }
        }
        let n = cut(&out, cap).len();
        out.truncate(n);
        Cow::Owned(out)
    }
}

enum Content<'a> {
    Str(Cow<'a, str>),
    Blocks(Vec<Block<'a>>),
}

impl<'de: 'a, 'a> Deserialize<'de> for Content<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Content<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string or an array of content blocks")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Content::Str(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Content::Str(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Content::Str(Cow::Owned(v)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some(b) = seq.next_element::<Block<'de>>()? {
                    out.push(b);
                }
                Ok(Content::Blocks(out))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

#[derive(Deserialize)]
struct PathArg<'a> {
    #[serde(borrow, default)]
    path: Option<Cow<'a, str>>,
}

// ---------- helpers ----------

/// Length in UTF-16 code units of a UTF-8 string (JavaScript `.length`).
pub fn utf16_len(s: &str) -> i64 {
    utf16_len_bytes(s.as_bytes())
}

fn utf16_len_bytes(b: &[u8]) -> i64 {
    let mut n = 0i64;
    for &c in b {
        // every non-continuation byte starts a char; 4-byte chars are two UTF-16 units
        n += ((c & 0xC0) != 0x80) as i64 + (c >= 0xF0) as i64;
    }
    n
}

fn ceil4(chars: i64) -> i64 {
    (chars + 3) / 4
}

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

struct Body(String, bool);
impl Body {
    fn push_raw(&mut self, r: &RawStr, cap: usize) {
        if self.1 && !r.is_empty() && self.0.len() + 1 < MAX_BODY {
            let t = r.text(cap.min(MAX_BODY));
            self.push(&t, cap);
        }
    }
    fn push(&mut self, s: &str, cap: usize) {
        if s.is_empty() || !self.1 {
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

/// Raw JSON (tool-call arguments) made readable for the tokenizer: `\n`, `\t`, `\r` become
/// spaces and `\"`, `\\`, `\/` their character, so `"a\nfoo"` gives the word `foo`, not `nfoo`.
fn loose_unescape(raw: &str) -> Cow<'_, str> {
    if !raw.contains('\\') {
        return Cow::Borrowed(raw);
    }
    let mut out = String::with_capacity(raw.len());
    let mut it = raw.chars();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some('n' | 't' | 'r' | 'b' | 'f') => out.push(' '),
            Some(o) => out.push(o),
            None => {}
        }
    }
    Cow::Owned(out)
}

/// Parse an ISO-8601 UTC timestamp (`YYYY-MM-DDTHH:MM:SS(.mmm)Z`) to epoch milliseconds.
pub fn iso_to_ms(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 19 {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let mut v = 0i64;
        for &c in &b[r] {
            if !c.is_ascii_digit() {
                return None;
            }
            v = v * 10 + (c - b'0') as i64;
        }
        Some(v)
    };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let mut ms = 0;
    if b.len() >= 23 && b[19] == b'.' {
        ms = num(20..23)?;
    }
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) {
        return None;
    }
    // days from civil (Howard Hinnant)
    let y2 = if mo <= 2 { y - 1 } else { y };
    let era = if y2 >= 0 { y2 } else { y2 - 399 } / 400;
    let yoe = y2 - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146097 + doe - 719468;
    Some(((days * 24 + h) * 60 + mi) * 60_000 + sec * 1000 + ms)
}

fn content_text(c: &Content, body: &mut Body, cap: usize) -> (i64, i64) {
    // returns (text chars in UTF-16, image count)
    match c {
        Content::Str(s) => {
            body.push(s, cap);
            (utf16_len(s), 0)
        }
        Content::Blocks(bs) => {
            let (mut chars, mut images) = (0, 0);
            for b in bs {
                match b.ty.as_deref() {
                    Some("text") => {
                        if let Some(t) = &b.text {
                            body.push_raw(t, cap);
                            chars += t.utf16_len();
                        }
                    }
                    Some("image") => images += 1,
                    _ => {}
                }
            }
            (chars, images)
        }
    }
}

fn first_text(c: &Content) -> String {
    match c {
        Content::Str(s) => cut(s, MAX_FIRST_MESSAGE).to_string(),
        Content::Blocks(bs) => {
            let mut out = String::new();
            for b in bs {
                if b.ty.as_deref() == Some("text") {
                    if let Some(t) = &b.text {
                        if !out.is_empty() {
                            out.push(' ');
                        }
                        out.push_str(&t.text(MAX_FIRST_MESSAGE + 4));
                        if out.len() > MAX_FIRST_MESSAGE {
                            break;
                        }
                    }
                }
            }
            cut(&out, MAX_FIRST_MESSAGE).to_string()
        }
    }
}

fn s(c: &Option<Cow<str>>) -> Option<String> {
    c.as_ref().map(|c| c.to_string())
}

// ---------- entry points ----------

/// Parse one line (without its `\n`), with its full-text body.
pub fn parse_line(line: &[u8]) -> Line {
    parse_line_with(line, true)
}

/// Parse one line; `with_body: false` skips building the full-text body (catalog pass).
pub fn parse_line_with(line: &[u8], with_body: bool) -> Line {
    let trimmed = trim(line);
    if trimmed.is_empty() {
        return Line::Blank;
    }
    match serde_json::from_slice::<L>(trimmed) {
        Ok(l) => from_typed(l, with_body),
        Err(_) => match serde_json::from_slice::<serde_json::Value>(trimmed) {
            Ok(v) => from_value(v, with_body),
            Err(_) => Line::Bad("not valid JSON"),
        },
    }
}

fn trim(mut b: &[u8]) -> &[u8] {
    // BOM, then ASCII whitespace (\r from CRLF)
    if b.starts_with(&[0xEF, 0xBB, 0xBF]) {
        b = &b[3..];
    }
    while let [first, rest @ ..] = b {
        if first.is_ascii_whitespace() {
            b = rest;
        } else {
            break;
        }
    }
    while let [rest @ .., last] = b {
        if last.is_ascii_whitespace() {
            b = rest;
        } else {
            break;
        }
    }
    b
}

fn from_typed(l: L, with_body: bool) -> Line {
    let ty = l.ty.as_deref().unwrap_or("");
    if ty == "session" {
        return match l.id {
            Some(id) => Line::Header(Header {
                id: id.into_owned(),
                cwd: s(&l.cwd),
                timestamp: s(&l.timestamp),
                version: l.version,
                parent_session: s(&l.parent_session),
            }),
            None => Line::Bad("session header without a string id"),
        };
    }
    let Some(id) = l.id else {
        return Line::Bad("entry without a string id");
    };
    let mut e = EntryRec {
        id: id.into_owned(),
        parent_id: s(&l.parent_id),
        ty: ty.to_string(),
        timestamp: s(&l.timestamp),
        ..Default::default()
    };
    let mut body = Body(String::new(), with_body);
    let entry_ms = l.timestamp.as_deref().and_then(iso_to_ms);
    match ty {
        "message" => {
            if let Some(m) = &l.message {
                fill_message(m, &mut e, &mut body, entry_ms);
            }
        }
        "custom_message" => {
            e.ctx = true;
            if let Some(c) = &l.content {
                let (chars, images) = content_text(c, &mut body, MAX_BODY);
                e.tok = ceil4(chars + 4800 * images);
            }
            if let Some(ct) = &l.custom_type {
                body.push(ct, 200);
            }
        }
        "compaction" => {
            e.ctx = true;
            e.first_kept = s(&l.first_kept);
            if let Some(sm) = &l.summary {
                e.tok = ceil4(sm.utf16_len());
                body.push_raw(sm, MAX_BODY);
            }
        }
        "branch_summary" => {
            if let Some(sm) = &l.summary {
                if !sm.is_empty() {
                    e.ctx = true;
                    e.tok = ceil4(sm.utf16_len());
                    body.push_raw(sm, MAX_BODY);
                }
            }
        }
        "session_info" => {
            let n = l.name.as_deref().map(str::trim).unwrap_or("");
            e.name = Some(n.to_string());
            body.push(n, 500);
        }
        "label" => {
            if let Some(lb) = &l.label {
                body.push(lb, 500);
            }
        }
        "model_change" => {
            if let (Some(p), Some(m)) = (&l.provider, &l.model_id) {
                e.model = Some(format!("{p}/{m}"));
            }
        }
        _ => {}
    }
    e.body = body.0;
    Line::Entry(Box::new(e))
}

fn fill_message(m: &Msg, e: &mut EntryRec, body: &mut Body, entry_ms: Option<i64>) {
    let role = m.role.as_deref().unwrap_or("");
    e.role = Some(role.to_string());
    e.ctx = true;
    match role {
        "user" => {
            if let Some(c) = &m.content {
                let (chars, _) = content_text(c, body, MAX_BODY);
                e.tok = ceil4(chars);
                e.first_user_text = Some(first_text(c));
            } else {
                e.first_user_text = Some(String::new());
            }
        }
        "assistant" => {
            let mut chars = 0;
            if let Some(Content::Blocks(bs)) = &m.content {
                for b in bs {
                    match b.ty.as_deref() {
                        Some("text") => {
                            if let Some(t) = &b.text {
                                body.push_raw(t, MAX_BODY);
                                chars += t.utf16_len();
                            }
                        }
                        Some("thinking") => {
                            if let Some(t) = &b.thinking {
                                body.push_raw(t, MAX_PART);
                                chars += t.utf16_len();
                            }
                        }
                        Some("toolCall") => {
                            let name = b.name.as_deref().unwrap_or("");
                            let args = b.arguments.map(|r| r.get()).unwrap_or("");
                            // JSON.stringify(arguments): the raw text is compact when Pi wrote it
                            chars += utf16_len(name) + if args.is_empty() { 0 } else { utf16_len(args) };
                            body.push(name, 200);
                            if body.1 {
                                body.push(&loose_unescape(cut(args, MAX_PART)), MAX_PART);
                            }
                            if matches!(name, "read" | "write" | "edit") {
                                if let Some(r) = b.arguments {
                                    if let Ok(PathArg { path: Some(p) }) = serde_json::from_str::<PathArg>(r.get()) {
                                        if !p.is_empty() {
                                            if name == "read" {
                                                e.files_read.push(p.into_owned());
                                            } else {
                                                e.files_modified.push(p.into_owned());
                                            }
                                        }
                                    }
                                }
                            }
                        }
                        _ => {}
                    }
                }
            } else if let Some(Content::Str(t)) = &m.content {
                body.push(t, MAX_BODY);
            }
            e.tok = ceil4(chars);
            if let (Some(p), Some(md)) = (&m.provider, &m.model) {
                e.model = Some(format!("{p}/{md}"));
            }
            let bad_stop = matches!(m.stop_reason.as_deref(), Some("aborted") | Some("error"));
            if let Some(u) = &m.usage {
                if !bad_stop {
                    let total = u.total_tokens.unwrap_or(0.0);
                    let v = if total != 0.0 {
                        total
                    } else {
                        u.input.unwrap_or(0.0) + u.output.unwrap_or(0.0) + u.cache_read.unwrap_or(0.0) + u.cache_write.unwrap_or(0.0)
                    };
                    e.usage = Some(v as i64);
                }
            }
        }
        "toolResult" | "custom" => {
            if let Some(tn) = &m.tool_name {
                body.push(tn, 200);
            }
            if let Some(c) = &m.content {
                let (chars, images) = content_text(c, body, MAX_PART);
                e.tok = ceil4(chars + 4800 * images);
            }
        }
        "bashExecution" => {
            let mut chars = 0;
            if let Some(c) = &m.command {
                body.push_raw(c, MAX_PART);
                chars += c.utf16_len();
            }
            if let Some(o) = &m.output {
                body.push_raw(o, MAX_PART);
                chars += o.utf16_len();
            }
            e.tok = ceil4(chars);
        }
        "branchSummary" | "compactionSummary" => {
            if let Some(sm) = &m.summary {
                body.push_raw(sm, MAX_BODY);
                e.tok = ceil4(sm.utf16_len());
            }
        }
        _ => {}
    }
    if role == "user" || role == "assistant" {
        let ts = m.timestamp.and_then(|r| r.get().parse::<f64>().ok()).map(|v| v as i64);
        e.modified_ms = ts.or(entry_ms);
    }
}

/// Slow path for lines the typed view refuses: keep structure, search every string leaf.
fn from_value(v: serde_json::Value, with_body: bool) -> Line {
    use serde_json::Value;
    let Value::Object(map) = v else {
        return Line::Bad("valid JSON but not an object");
    };
    let ty = map.get("type").and_then(Value::as_str).unwrap_or("");
    let Some(id) = map.get("id").and_then(Value::as_str) else {
        return Line::Bad(if ty == "session" { "session header without a string id" } else { "entry without a string id" });
    };
    if ty == "session" {
        return Line::Header(Header {
            id: id.to_string(),
            cwd: map.get("cwd").and_then(Value::as_str).map(String::from),
            timestamp: map.get("timestamp").and_then(Value::as_str).map(String::from),
            version: map.get("version").and_then(Value::as_f64),
            parent_session: map.get("parentSession").and_then(Value::as_str).map(String::from),
        });
    }
    let mut body = Body(String::new(), true);
    fn walk(v: &Value, body: &mut Body) {
        match v {
            Value::String(s) => body.push(s, MAX_PART),
            Value::Array(a) => a.iter().for_each(|x| walk(x, body)),
            Value::Object(o) => o.iter().filter(|(k, _)| !matches!(k.as_str(), "id" | "parentId" | "timestamp" | "type" | "data")).for_each(|(_, x)| walk(x, body)),
            _ => {}
        }
    }
    for k in ["message", "summary", "content", "name", "label"] {
        if let Some(x) = map.get(k) {
            walk(x, &mut body);
        }
    }
    let role = map.get("message").and_then(|m| m.get("role")).and_then(Value::as_str).map(String::from);
    let ctx = match ty {
        "message" | "custom_message" | "compaction" => true,
        "branch_summary" => map.get("summary").and_then(Value::as_str).is_some_and(|s| !s.is_empty()),
        _ => false,
    };
    Line::Entry(Box::new(EntryRec {
        id: id.to_string(),
        parent_id: map.get("parentId").and_then(Value::as_str).map(String::from),
        ty: ty.to_string(),
        role,
        timestamp: map.get("timestamp").and_then(Value::as_str).map(String::from),
        first_kept: map.get("firstKeptEntryId").and_then(Value::as_str).map(String::from),
        ctx,
        tok: ceil4(utf16_len(&body.0)),
        body: if with_body { body.0 } else { String::new() },
        ..Default::default()
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_lengths_match_javascript() {
        assert_eq!(utf16_len("abc"), 3);
        assert_eq!(utf16_len("é"), 1);
        assert_eq!(utf16_len("🚀"), 2);
        assert_eq!(utf16_len("e\u{301}"), 2);
    }

    #[test]
    fn iso_parses_to_epoch_ms() {
        assert_eq!(iso_to_ms("1970-01-01T00:00:00.000Z"), Some(0));
        assert_eq!(iso_to_ms("2025-03-01T09:00:02.500Z"), Some(1740819602500));
        assert_eq!(iso_to_ms("garbage"), None);
    }

    #[test]
    fn assistant_line_gives_text_tokens_usage_and_files() {
        let line = br#"{"type":"message","id":"a1","parentId":"u1","timestamp":"2025-03-01T09:00:02.500Z","message":{"role":"assistant","content":[{"type":"text","text":"hello \"world\""},{"type":"toolCall","id":"t","name":"read","arguments":{"path":"src/x.rs"}}],"provider":"p","model":"m","usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":0},"stopReason":"toolUse","timestamp":1740819602600}}"#;
        let Line::Entry(e) = parse_line(line) else { panic!("not an entry") };
        assert_eq!(e.id, "a1");
        assert_eq!(e.parent_id.as_deref(), Some("u1"));
        assert!(e.body.contains("hello \"world\""));
        assert!(e.body.contains("src/x.rs"));
        assert_eq!(loose_unescape(r#"{"content":"fn a()\n{\n  \"x\"\n}"}"#), "{\"content\":\"fn a() {   \"x\" }\"}");
        assert_eq!(e.usage, Some(3));
        assert_eq!(e.files_read, vec!["src/x.rs".to_string()]);
        assert_eq!(e.model.as_deref(), Some("p/m"));
        assert_eq!(e.modified_ms, Some(1740819602600));
        // "hello \"world\"" = 13 chars, "read" 4, {"path":"src/x.rs"} 19 -> 36 -> 9
        assert_eq!(e.tok, 9);
    }

    #[test]
    fn odd_lines_are_bad_or_slow_path_not_panics() {
        assert!(matches!(parse_line(b"[1,2]"), Line::Bad(_)));
        assert!(matches!(parse_line(b"{\"type\":\"message\""), Line::Bad(_)));
        assert!(matches!(parse_line(b"{\"type\":\"message\",\"id\":5}"), Line::Bad(_)));
        assert!(matches!(parse_line(b"   \r"), Line::Blank));
        // content of an unexpected type: typed view refuses, slow path keeps it searchable
        let Line::Entry(e) = parse_line(br#"{"type":"message","id":"x","parentId":null,"message":{"role":"user","content":{"weird":"needle"}}}"#) else { panic!() };
        assert!(e.body.contains("needle"));
    }

    #[test]
    fn raw_strings_decode_and_measure_like_javascript() {
        let check = |json: &str| {
            let raw: RawStr = serde_json::from_str(json).unwrap();
            let decoded: String = serde_json::from_str(json).unwrap();
            assert_eq!(raw.utf16_len(), decoded.encode_utf16().count() as i64, "{json}");
            assert_eq!(raw.text(10_000), decoded, "{json}");
            // a cut never splits a char and never exceeds the cap
            for cap in 0..decoded.len() + 2 {
                let t = raw.text(cap);
                assert!(t.len() <= cap && decoded.starts_with(&*t), "{json} cap {cap}: {t:?}");
            }
        };
        check(r#""plain""#);
        check(r#""a\nb\t\"q\" \\ \/ end""#);
        check(r#""\u00e9t\u00E9 \ud83d\ude80 rocket""#);
        check(r#""é🚀 raw utf8""#);
        check(r#""""#);
        // a lone surrogate: JavaScript counts 1 unit; we show U+FFFD
        let raw: RawStr = serde_json::from_str(r#""x\ud83dy""#).unwrap();
        assert_eq!(raw.utf16_len(), 3);
        assert_eq!(raw.text(100), "x\u{FFFD}y");
    }
}
