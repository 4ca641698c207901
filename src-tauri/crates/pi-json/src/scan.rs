//! The line scanner: validate a whole line as `JSON.parse` would and pick out top-level fields
//! without building a DOM. This is the hot path of loading.
//!
//! As `JSON.parse` builds the object, a repeated key's last value wins: the last `message` and
//! its last `role` are the ones picked. The scan has no depth limit (Pi has none either); a line
//! nested past the parser's `MAX_DEPTH` is accepted here and its value reads as `null`.

use crate::parse::{has_control, parse, parse_bytes, scan_number, JsonError};
use crate::value::Value;

/// A top-level string field found by [`scan_line`]: the byte range of its contents (between the
/// quotes) and whether it contains escapes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RawStr {
    pub start: u32,
    pub end: u32,
    pub escaped: bool,
}

impl RawStr {
    /// The string at bytes `start..end` of its line. The positions are kept in 32 bits (the
    /// scan of a big file's second half holds one per field of every line); a string that ends
    /// 4 GiB or more into its line cannot be held, so its line is refused instead of read at a
    /// wrapped position (Pi cannot read such a line either: its strings stop at 512 MiB).
    pub fn at(start: usize, end: usize, escaped: bool) -> Result<RawStr, JsonError> {
        match (u32::try_from(start), u32::try_from(end)) {
            (Ok(start), Ok(end)) => Ok(RawStr { start, end, escaped }),
            _ => Err(JsonError { pos: start, msg: "a string 4 GiB or more into its line" }),
        }
    }
}

/// What a top-level key held, when it matters for loading.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Field {
    #[default]
    Absent,
    Str(RawStr),
    Null,
    /// Present, but neither a string nor null.
    Other,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct ScannedLine {
    pub is_object: bool,
    /// `message.role` of an object line, read as `JSON.parse` would (the last `message` key and
    /// its last `role` key): `Str` (the fast scanner gives only unescaped ones), `Null` or
    /// `Other` (not a string), `Absent` (no message object, or no role in it). `None` for a line
    /// that is not an object.
    pub role: Option<Field>,
    pub type_: Field,
    pub id: Field,
    pub parent_id: Field,
    pub timestamp: Field,
}

/// Validates `line` as a complete JSON text and records the top-level `type`, `id`, `parentId`
/// and `timestamp` fields and `message.role` (last occurrence wins, as in `JSON.parse`).
/// Iterative, with no depth limit: V8's `JSON.parse` accepts any nesting, so Pi loads such a
/// line.
pub fn scan_line(s: &[u8]) -> Result<ScannedLine, JsonError> {
    let mut out = ScannedLine::default();
    let mut i = 0usize;
    let n = s.len();
    let ws = |i: &mut usize| {
        while *i < n && matches!(s[*i], b' ' | b'\t' | b'\n' | b'\r') {
            *i += 1;
        }
    };
    ws(&mut i);
    // Stack of open containers: true = object, false = array.
    let mut stack: Vec<bool> = Vec::new();
    // Which key's value comes next (0 none; top level: 1 type, 2 id, 3 parentId, 4 timestamp,
    // 5 message; in the message object: 6 role).
    let mut pending_key: u8 = 0;
    // The object open at depth 2 is the top-level `message` value.
    let mut in_message = false;
    let err = |pos: usize, msg: &'static str| JsonError { pos, msg };
    if i < n && s[i] == b'{' {
        out.is_object = true;
        out.role = Some(Field::Absent);
    }
    // Which keys matter at the current depth (see `read_key`).
    let level = |stack: &[bool], in_message: bool| match stack.len() {
        1 => 1,
        2 if in_message => 2,
        _ => 0,
    };
    // State machine: expecting a value.
    'value: loop {
        if i >= n {
            return Err(err(i, "unexpected end of JSON"));
        }
        let depth_top = stack.len() == 1 && stack[0];
        // A value of interest: a top-level field, or the message's role.
        let key = if depth_top || (in_message && stack.len() == 2) { pending_key } else { 0 };
        match s[i] {
            b'{' => {
                i += 1;
                ws(&mut i);
                record(&mut out, key, Field::Other);
                if i < n && s[i] == b'}' {
                    i += 1;
                } else {
                    stack.push(true);
                    if stack.len() == 2 {
                        in_message = key == 5;
                    }
                    // Expect a key.
                    pending_key = read_key(s, &mut i, level(&stack, in_message))?;
                    continue 'value;
                }
            }
            b'[' => {
                record(&mut out, key, Field::Other);
                i += 1;
                ws(&mut i);
                if i < n && s[i] == b']' {
                    i += 1;
                } else {
                    stack.push(false);
                    continue 'value;
                }
            }
            b'"' => {
                let start = i + 1;
                let (end, escaped) = skip_string(s, i)?;
                if key != 0 {
                    let f = Field::Str(RawStr::at(start, end - 1, escaped)?);
                    record(&mut out, key, f);
                }
                i = end;
            }
            b't' | b'f' | b'n' => {
                let (word, field): (&[u8], Field) = match s[i] {
                    b't' => (b"true", Field::Other),
                    b'f' => (b"false", Field::Other),
                    _ => (b"null", Field::Null),
                };
                if !s[i..].starts_with(word) {
                    return Err(err(i, "unexpected literal"));
                }
                i += word.len();
                record(&mut out, key, field);
            }
            b'-' | b'0'..=b'9' => {
                i = scan_number(s, i).ok_or_else(|| err(i, "invalid number"))?;
                record(&mut out, key, Field::Other);
            }
            _ => return Err(err(i, "unexpected character")),
        }
        // After a value: close containers or continue with the next element.
        loop {
            ws(&mut i);
            match stack.last().copied() {
                None => {
                    if i != n {
                        return Err(err(i, "unexpected data after the JSON value"));
                    }
                    return Ok(out);
                }
                Some(is_obj) => {
                    if i >= n {
                        return Err(err(i, "unexpected end of JSON"));
                    }
                    match s[i] {
                        b',' => {
                            i += 1;
                            ws(&mut i);
                            if is_obj {
                                pending_key = read_key(s, &mut i, level(&stack, in_message))?;
                            }
                            continue 'value;
                        }
                        b'}' if is_obj => {
                            i += 1;
                            stack.pop();
                            if stack.len() < 2 {
                                in_message = false;
                            }
                        }
                        b']' if !is_obj => {
                            i += 1;
                            stack.pop();
                        }
                        _ => return Err(err(i, "expected ',' or a closing bracket")),
                    }
                }
            }
        }
    }
}

/// Records the value `f` of the key `key` (see `pending_key` in [`scan_line`]). A `message`
/// value starts with no role: a string or an empty object has none, and an object's role is
/// recorded as its keys are read (the last one wins).
#[inline]
fn record(out: &mut ScannedLine, key: u8, f: Field) {
    match key {
        1 => out.type_ = f,
        2 => out.id = f,
        3 => out.parent_id = f,
        4 => out.timestamp = f,
        5 => out.role = Some(Field::Absent),
        6 => out.role = Some(f),
        _ => {}
    }
}

/// Reads `"key" :` (with whitespace) and leaves `i` at the value. Returns which key it was, by
/// `level`: 1 the top-level object (`type`, `id`, `parentId`, `timestamp`, `message`), 2 the
/// message object (`role`), 0 elsewhere (none).
#[inline]
fn read_key(s: &[u8], i: &mut usize, level: u8) -> Result<u8, JsonError> {
    let n = s.len();
    while *i < n && matches!(s[*i], b' ' | b'\t' | b'\n' | b'\r') {
        *i += 1;
    }
    if *i >= n || s[*i] != b'"' {
        return Err(JsonError { pos: *i, msg: "expected a string key" });
    }
    let start = *i + 1;
    let (end, escaped) = skip_string(s, *i)?;
    let key = &s[start..end - 1];
    let which = |k: &[u8]| match (level, k) {
        (1, b"type") => 1,
        (1, b"id") => 2,
        (1, b"parentId") => 3,
        (1, b"timestamp") => 4,
        (1, b"message") => 5,
        (2, b"role") => 6,
        _ => 0,
    };
    let which = if level == 0 {
        0
    } else if !escaped {
        which(key)
    } else {
        // Rare: an escaped key such as "\u0069d". Decode to be exact.
        let decoded = parse(std::str::from_utf8(&s[start - 1..end]).unwrap_or("\"\""))
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        which(decoded.as_bytes())
    };
    *i = end;
    while *i < n && matches!(s[*i], b' ' | b'\t' | b'\n' | b'\r') {
        *i += 1;
    }
    if *i >= n || s[*i] != b':' {
        return Err(JsonError { pos: *i, msg: "expected ':'" });
    }
    *i += 1;
    while *i < n && matches!(s[*i], b' ' | b'\t' | b'\n' | b'\r') {
        *i += 1;
    }
    Ok(which)
}

/// Skips a string starting at the opening quote `s[i]`; returns (index after the closing quote,
/// whether it had escapes). Validates escapes and rejects raw control characters.
#[inline]
fn skip_string(s: &[u8], i: usize) -> Result<(usize, bool), JsonError> {
    let mut j = i + 1;
    let mut escaped = false;
    loop {
        let Some(off) = memchr::memchr2(b'"', b'\\', &s[j..]) else {
            return Err(JsonError { pos: j, msg: "unterminated string" });
        };
        let k = j + off;
        // Raw control characters are not allowed in JSON strings.
        if has_control(&s[j..k]) {
            return Err(JsonError { pos: k, msg: "control character in string" });
        }
        if s[k] == b'"' {
            return Ok((k + 1, escaped));
        }
        escaped = true;
        match s.get(k + 1) {
            Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => j = k + 2,
            Some(b'u') => {
                let h = s.get(k + 2..k + 6).ok_or(JsonError { pos: k, msg: "bad \\u escape" })?;
                if !h.iter().all(|c| c.is_ascii_hexdigit()) {
                    return Err(JsonError { pos: k, msg: "bad \\u escape" });
                }
                j = k + 6;
            }
            _ => return Err(JsonError { pos: k, msg: "bad escape" }),
        }
    }
}

/// The fast path of [`scan_line`]: serde_json validates the line (it skips everything but the
/// four fields) about twice as fast as the general scanner. serde accepts nothing that
/// `JSON.parse` rejects; whatever it refuses (a duplicate key, a non-string `id`, a lone
/// surrogate, deep nesting, a non-object) goes to [`scan_line`], which decides exactly.
pub fn scan_line_fast(s: &[u8]) -> Result<ScannedLine, JsonError> {
    #[derive(serde::Deserialize)]
    struct Lite<'a> {
        #[serde(rename = "type", borrow, default)]
        ty: Option<&'a str>,
        #[serde(borrow, default)]
        id: Option<&'a str>,
        #[serde(rename = "parentId", borrow, default)]
        parent_id: Option<&'a str>,
        #[serde(borrow, default)]
        timestamp: Option<&'a str>,
        // Read on the way (serde walks the message object anyway to skip it), so that a role
        // costs no second pass over the line later. A message that is neither an object nor
        // null, or a role that is not a plain string, sends the line to the exact scanner.
        #[serde(borrow, default)]
        message: Option<LiteMessage<'a>>,
    }
    #[derive(serde::Deserialize)]
    struct LiteMessage<'a> {
        #[serde(borrow, default)]
        role: Option<&'a str>,
    }
    let first = s.iter().position(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'));
    if first.is_some_and(|i| s[i] == b'{') {
        if let Ok(l) = serde_json::from_slice::<Lite>(s) {
            // Borrowed strings have no escapes (serde refuses to borrow one with escapes, and the
            // exact scanner takes over): their bytes are in the line.
            let mut out = ScannedLine { is_object: true, role: Some(Field::Absent), ..Default::default() };
            let role = l.message.and_then(|m| m.role);
            for (f, slot) in [
                (l.ty, &mut out.type_),
                (l.id, &mut out.id),
                (l.parent_id, &mut out.parent_id),
                (l.timestamp, &mut out.timestamp),
            ] {
                if let Some(b) = f {
                    let start = b.as_ptr() as usize - s.as_ptr() as usize;
                    *slot = Field::Str(RawStr::at(start, start + b.len(), false)?);
                }
            }
            if let Some(b) = role {
                let start = b.as_ptr() as usize - s.as_ptr() as usize;
                out.role = Some(Field::Str(RawStr::at(start, start + b.len(), false)?));
            }
            // `null` and absent both read as None here; the loader treats them alike.
            return Ok(out);
        }
    }
    scan_line(s)
}

/// Decodes a [`RawStr`] of `line` into a `String`.
pub fn raw_str(line: &[u8], r: RawStr) -> String {
    let bytes = &line[r.start as usize..r.end as usize];
    if !r.escaped {
        return String::from_utf8_lossy(bytes).into_owned();
    }
    let quoted = &line[r.start as usize - 1..r.end as usize + 1];
    parse_bytes(quoted)
        .ok()
        .and_then(|v| match v {
            Value::Str(s) => Some(s.into_string()),
            _ => None,
        })
        .unwrap_or_default()
}

/// Borrowed view of a [`RawStr`] when it needs no decoding.
pub fn raw_str_borrowed(line: &[u8], r: RawStr) -> Option<&str> {
    if r.escaped {
        return None;
    }
    std::str::from_utf8(&line[r.start as usize..r.end as usize]).ok()
}

#[cfg(test)]
mod tests {
    use crate::*;

    /// Positions past 4 GiB into a line are refused, not wrapped to a small one (which would
    /// read another part of the line as the entry's id).
    #[test]
    fn raw_str_positions_past_4_gib_are_refused() {
        let r = RawStr::at(7, 15, true).unwrap();
        assert_eq!((r.start, r.end, r.escaped), (7, 15, true));
        let top = u32::MAX as usize;
        assert_eq!(RawStr::at(top - 8, top, false).unwrap().end, u32::MAX);
        for (start, end) in [(5usize << 30, (5usize << 30) + 8), (top - 3, top + 5), (top + 1, top + 1)] {
            let e = RawStr::at(start, end, false).unwrap_err();
            assert_eq!(e.pos, start);
        }
    }

    #[test]
    fn scanner_agrees_with_parser() {
        let good = [
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","x":[1,{"y":"z"}]}"#,
            "  {\"id\" : \"b\" , \"parentId\":\"a\"}\r",
            "[]",
            "42",
            r#"{"a":{"id":"inner"},"id":"outer"}"#,
        ];
        for g in good {
            assert!(scan_line(g.as_bytes()).is_ok(), "{g}");
            assert!(parse(g).is_ok(), "{g}");
        }
        let bad = ["{", "{\"a\":1,}", "{\"a\" 1}", "\"x", "{\"a\":tru}", "{}{}", "{\"a\":\"b\nc\"}", "[1,]", "01"];
        for b in bad {
            assert!(scan_line(b.as_bytes()).is_err(), "{b}");
            assert!(parse(b).is_err(), "{b}");
        }
        let l = scan_line(br#"{"a":{"id":"inner"},"id":"outer","parentId":null}"#).unwrap();
        let line = br#"{"a":{"id":"inner"},"id":"outer","parentId":null}"#;
        match l.id {
            Field::Str(r) => assert_eq!(raw_str(line, r), "outer"),
            other => panic!("{other:?}"),
        }
        assert_eq!(l.parent_id, Field::Null);
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let deep = "[".repeat(100_000) + &"]".repeat(100_000);
        // Like V8, the scanner accepts any depth; the DOM parser refuses past MAX_DEPTH.
        assert!(scan_line(deep.as_bytes()).is_ok());
        assert!(parse(&deep).is_err());
    }
}
