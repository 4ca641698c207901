//! JSON with JavaScript semantics: the subset of `JSON.parse` / `JSON.stringify` behaviour that
//! byte compatibility with Pi depends on.
//!
//! * Objects keep their key order; a repeated key keeps its first position and takes the last
//!   value, as `JSON.parse` does.
//! * Numbers are `f64`, parsed with correct rounding and written in ECMAScript's shortest
//!   round-trip form (`1e+21`, `1e-7`, `-0` → `0`); non-finite numbers are written as `null`.
//! * Strings are Rust `String`s. JavaScript strings can hold lone UTF-16 surrogates (Pi's
//!   2000-unit truncation makes them), which a `String` cannot. We carry each lone surrogate
//!   `0xD800 + k` as the stand-in scalar `U+10F800 + k` (the top of plane 16's private use
//!   area). Every UTF-16 helper here counts a stand-in as one code unit, and the writer emits it
//!   as `\udXXX`, so lengths, truncation, sorting and written bytes match Pi. The one known
//!   deviation: real text containing U+10F800..U+10FFFF is treated as lone surrogates.
//! * Nesting deeper than [`MAX_DEPTH`] is an error, never a stack overflow.

use std::fmt::Write as _;

/// Maximum nesting depth accepted by [`parse`] and by the line scanner.
pub const MAX_DEPTH: usize = 1000;

const STANDIN_BASE: u32 = 0x10F800;

#[derive(Clone, Debug, PartialEq, Default)]
pub enum Value {
    #[default]
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    Arr(Vec<Value>),
    Obj(Map),
}

/// An insertion-ordered JSON object.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Map(pub Vec<(String, Value)>);

impl Map {
    pub fn new() -> Self {
        Map(Vec::new())
    }
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
    /// Sets a key: an existing key keeps its position (like assigning a JS property).
    pub fn insert(&mut self, key: impl Into<String>, value: Value) {
        let key = key.into();
        if let Some(slot) = self.0.iter_mut().find(|(k, _)| *k == key) {
            slot.1 = value;
        } else {
            self.0.push((key, value));
        }
    }
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        let pos = self.0.iter().position(|(k, _)| k == key)?;
        Some(self.0.remove(pos).1)
    }
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Value)> {
        self.0.iter().map(|(k, v)| (k, v))
    }
    pub fn len(&self) -> usize {
        self.0.len()
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Value {
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Obj(m) => m.get(key),
            _ => None,
        }
    }
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Num(n) => Some(*n),
            _ => None,
        }
    }
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }
    pub fn as_array(&self) -> Option<&Vec<Value>> {
        match self {
            Value::Arr(a) => Some(a),
            _ => None,
        }
    }
    pub fn as_object(&self) -> Option<&Map> {
        match self {
            Value::Obj(m) => Some(m),
            _ => None,
        }
    }
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }
    /// JavaScript truthiness.
    pub fn truthy(&self) -> bool {
        match self {
            Value::Null => false,
            Value::Bool(b) => *b,
            Value::Num(n) => *n != 0.0 && !n.is_nan(),
            Value::Str(s) => !s.is_empty(),
            Value::Arr(_) | Value::Obj(_) => true,
        }
    }
    /// `get(key)` and then a string, the common case for entry fields.
    pub fn str_field(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(Value::as_str)
    }
    pub fn num_field(&self, key: &str) -> Option<f64> {
        self.get(key).and_then(Value::as_f64)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::Str(s.to_string())
    }
}
impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::Str(s)
    }
}
impl From<f64> for Value {
    fn from(n: f64) -> Self {
        Value::Num(n)
    }
}
impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}

/// Builds an object from `(key, value)` pairs in the given order.
pub fn obj<const N: usize>(pairs: [(&str, Value); N]) -> Value {
    Value::Obj(Map(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()))
}

// ------------------------------------------------------------------------------------------
// UTF-16 helpers
// ------------------------------------------------------------------------------------------

/// The number of UTF-16 code units of `c` (a lone-surrogate stand-in counts as one).
#[inline]
fn units(c: char) -> usize {
    let v = c as u32;
    if v >= STANDIN_BASE {
        1
    } else if v >= 0x10000 {
        2
    } else {
        1
    }
}

/// JavaScript `.length`.
pub fn utf16_len(s: &str) -> usize {
    // Fast path: ASCII bytes are one unit each; only multi-byte sequences need decoding.
    let bytes = s.as_bytes();
    let mut n = 0usize;
    let mut i = 0usize;
    while i < bytes.len() {
        let b = bytes[i];
        if b < 0x80 {
            n += 1;
            i += 1;
        } else if b < 0xE0 {
            n += 1;
            i += 2;
        } else if b < 0xF0 {
            n += 1;
            i += 3;
        } else {
            // 4-byte sequence: U+10000.. (2 units) unless a stand-in (U+10F800.., 1 unit).
            let c = s[i..].chars().next().map(|c| c as u32).unwrap_or(0);
            n += if c >= STANDIN_BASE { 1 } else { 2 };
            i += 4;
        }
    }
    n
}

/// The UTF-16 code units of `s`, with stand-ins turned back into lone surrogates.
pub fn to_utf16(s: &str) -> Vec<u16> {
    let mut out = Vec::with_capacity(s.len());
    for c in s.chars() {
        let v = c as u32;
        if v >= STANDIN_BASE {
            out.push((0xD800 + (v - STANDIN_BASE)) as u16);
        } else {
            let mut buf = [0u16; 2];
            out.extend_from_slice(c.encode_utf16(&mut buf));
        }
    }
    out
}

/// Decodes UTF-16 into a `String`, carrying lone surrogates as stand-ins.
pub fn from_utf16(units16: &[u16]) -> String {
    let mut out = String::with_capacity(units16.len());
    for r in char::decode_utf16(units16.iter().copied()) {
        match r {
            Ok(c) => out.push(c),
            Err(e) => out.push(standin(e.unpaired_surrogate())),
        }
    }
    out
}

fn standin(surrogate: u16) -> char {
    // Safe: 0x10F800 + (0..0x800) is at most 0x10FFFF, a valid scalar value.
    char::from_u32(STANDIN_BASE + (surrogate as u32 - 0xD800)).unwrap_or('\u{FFFD}')
}

/// JavaScript `s.slice(0, n)` on UTF-16 units (may split a surrogate pair, as JS does).
pub fn utf16_prefix(s: &str, n: usize) -> String {
    let mut taken = 0usize;
    for (byte_idx, c) in s.char_indices() {
        let u = units(c);
        if taken + u > n {
            if taken < n {
                // A pair split in the middle: keep its high surrogate alone.
                let mut out = s[..byte_idx].to_string();
                let mut buf = [0u16; 2];
                c.encode_utf16(&mut buf);
                out.push(standin(buf[0]));
                return out;
            }
            return s[..byte_idx].to_string();
        }
        taken += u;
    }
    s.to_string()
}

/// JavaScript's default `Array.prototype.sort()` comparison: by UTF-16 code units.
pub fn cmp_utf16(a: &str, b: &str) -> std::cmp::Ordering {
    // Equal prefixes compare the same in both encodings; only the first differing char matters,
    // and there its first UTF-16 unit decides (two different chars never share both units).
    fn units(c: char) -> (u16, u16) {
        let v = c as u32;
        if v >= STANDIN_BASE {
            ((0xD800 + (v - STANDIN_BASE)) as u16, 0)
        } else if v >= 0x10000 {
            let w = v - 0x10000;
            ((0xD800 + (w >> 10)) as u16, (0xDC00 + (w & 0x3FF)) as u16)
        } else {
            (v as u16, 0)
        }
    }
    // Skip the common byte prefix at once (eight bytes a step), back to the start of the char
    // it ends in.
    let (ab, bb) = (a.as_bytes(), b.as_bytes());
    let mut common = 0;
    for (x, y) in ab.chunks_exact(8).zip(bb.chunks_exact(8)) {
        if x != y {
            break;
        }
        common += 8;
    }
    common += ab[common..].iter().zip(&bb[common..]).take_while(|(x, y)| x == y).count();
    let mut from = common;
    while !a.is_char_boundary(from) {
        from -= 1;
    }
    // Below U+E000 (first bytes under 0xEE) UTF-16 orders as UTF-8 bytes do.
    let lead = |s: &[u8]| s.get(from).copied().unwrap_or(0);
    if lead(ab) < 0xEE && lead(bb) < 0xEE {
        return ab[common..].cmp(&bb[common..]);
    }
    let mut ai = a[from..].chars();
    let mut bi = b[from..].chars();
    loop {
        match (ai.next(), bi.next()) {
            (None, None) => return std::cmp::Ordering::Equal,
            (None, Some(_)) => return std::cmp::Ordering::Less,
            (Some(_), None) => return std::cmp::Ordering::Greater,
            (Some(x), Some(y)) if x == y => continue,
            (Some(x), Some(y)) => return units(x).cmp(&units(y)),
        }
    }
}

// ------------------------------------------------------------------------------------------
// Writing: JSON.stringify
// ------------------------------------------------------------------------------------------

/// `JSON.stringify(value)`.
pub fn to_string(v: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, v);
    out
}

pub fn write_value(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Num(n) => write_number(out, *n),
        Value::Str(s) => write_str(out, s),
        Value::Arr(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, x);
            }
            out.push(']');
        }
        Value::Obj(m) => {
            out.push('{');
            for (i, (k, x)) in m.0.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_str(out, k);
                out.push(':');
                write_value(out, x);
            }
            out.push('}');
        }
    }
}

/// ECMAScript `Number.prototype.toString()`; non-finite numbers as JSON's `null`.
pub fn write_number(out: &mut String, n: f64) {
    if !n.is_finite() {
        out.push_str("null");
    } else if n == 0.0 {
        out.push('0');
    } else {
        let mut buf = ryu_js::Buffer::new();
        out.push_str(buf.format_finite(n));
    }
}

/// `JSON.stringify(v).length` without building the string.
pub fn stringified_utf16_len(v: &Value) -> usize {
    match v {
        Value::Null => 4,
        Value::Bool(true) => 4,
        Value::Bool(false) => 5,
        Value::Num(n) => number_to_string(*n).len(),
        Value::Str(s) => quoted_utf16_len(s),
        Value::Arr(a) => 2 + a.len().saturating_sub(1) + a.iter().map(stringified_utf16_len).sum::<usize>(),
        Value::Obj(m) => 2 + m.len().saturating_sub(1) + m.0.iter().map(|(k, x)| quoted_utf16_len(k) + 1 + stringified_utf16_len(x)).sum::<usize>(),
    }
}

/// The UTF-16 length of a string literal as `JSON.stringify` writes it.
///
/// One branch-free pass the compiler vectorizes: each byte adds its share of units (a char's
/// first byte 1, a continuation byte 0, a 4-byte char's first byte 2, an escaped character its
/// escape's extra length). Only a string with a char from U+100000 on (first byte 0xF4, where
/// the lone-surrogate stand-ins live, written as six units) takes the exact pass.
fn quoted_utf16_len(s: &str) -> usize {
    let bytes = s.as_bytes();
    // Bitwise (not short-circuit) tests and a narrow accumulator per block: no branch per byte.
    #[inline(always)]
    fn share(b: u8) -> u8 {
        let lead = (b < 0x80) as u8 | (b >= 0xC0) as u8;
        let four = (b >= 0xF0) as u8;
        let short =
            (b == b'"') as u8 | (b == b'\\') as u8 | (b == b'\n') as u8 | (b == b'\r') as u8 | (b == b'\t') as u8 | (b == 0x08) as u8 | (b == 0x0C) as u8;
        let long = (b < 0x20) as u8 & (short ^ 1);
        lead + four + short + 5 * long
    }
    let mut units = 0usize;
    let mut astral = 0u8;
    for block in bytes.chunks(8192) {
        // At most 6 per byte: 49,152 fits in a u16.
        let mut n = 0u16;
        let mut four = 0u8;
        for &b in block {
            n += share(b) as u16;
            four |= (b == 0xF4) as u8;
        }
        units += n as usize;
        astral |= four;
    }
    if astral == 0 {
        return 2 + units;
    }
    quoted_utf16_len_exact(bytes)
}

fn quoted_utf16_len_exact(bytes: &[u8]) -> usize {
    let mut n = 2usize;
    let mut i = 0usize;
    while i < bytes.len() {
        let b = bytes[i];
        if b < 0x80 {
            n += match b {
                b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0C => 2,
                0..=0x1F => 6,
                _ => 1,
            };
            i += 1;
        } else if b < 0xE0 {
            n += 1;
            i += 2;
        } else if b < 0xF0 {
            n += 1;
            i += 3;
        } else {
            // Astral: two units; a stand-in is written as the six units \udXXX.
            let standin = b == 0xF4 && bytes.get(i + 1) == Some(&0x8F) && bytes.get(i + 2).is_some_and(|&c| c >= 0xA0);
            n += if standin { 6 } else { 2 };
            i += 4;
        }
    }
    n
}

pub fn number_to_string(n: f64) -> String {
    let mut s = String::new();
    write_number(&mut s, n);
    s
}

/// A JSON string literal as `JSON.stringify` writes it.
pub fn write_str(out: &mut String, s: &str) {
    out.reserve(s.len() + 2);
    out.push('"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let esc: Option<&str> = match b {
            b'"' => Some("\\\""),
            b'\\' => Some("\\\\"),
            b'\n' => Some("\\n"),
            b'\r' => Some("\\r"),
            b'\t' => Some("\\t"),
            0x08 => Some("\\b"),
            0x0C => Some("\\f"),
            0..=0x1F => None,
            0xF4 => {
                // Possibly a stand-in (U+10F800.. is F4 8F A0..BF ..).
                if bytes.len() >= i + 4 && bytes[i + 1] == 0x8F && bytes[i + 2] >= 0xA0 {
                    let c = s[i..].chars().next().map(|c| c as u32).unwrap_or(0);
                    out.push_str(&s[start..i]);
                    let _ = write!(out, "\\u{:04x}", 0xD800 + (c - STANDIN_BASE));
                    start = i + 4;
                }
                continue;
            }
            _ => continue,
        };
        out.push_str(&s[start..i]);
        match esc {
            Some(e) => out.push_str(e),
            None => {
                let _ = write!(out, "\\u{:04x}", b);
            }
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

pub fn quote(s: &str) -> String {
    let mut out = String::new();
    write_str(&mut out, s);
    out
}

// ------------------------------------------------------------------------------------------
// Parsing: JSON.parse
// ------------------------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{msg} at byte {pos}")]
pub struct JsonError {
    pub pos: usize,
    pub msg: &'static str,
}

/// `JSON.parse` on text (leading and trailing JSON whitespace allowed, nothing else).
pub fn parse(text: &str) -> Result<Value, JsonError> {
    let mut p = Parser { s: text.as_bytes(), src: text, i: 0 };
    p.ws();
    let v = p.value(0)?;
    p.ws();
    if p.i != p.s.len() {
        return Err(p.err("unexpected data after the JSON value"));
    }
    Ok(v)
}

/// Parses bytes, decoding invalid UTF-8 as U+FFFD first (as Node's `readFileSync(…, "utf8")`).
pub fn parse_bytes(bytes: &[u8]) -> Result<Value, JsonError> {
    match std::str::from_utf8(bytes) {
        Ok(s) => parse(s),
        Err(_) => parse(&String::from_utf8_lossy(bytes)),
    }
}

/// Whether `s` holds a raw control character (not allowed in a JSON string). A fold, not
/// `any`: without the early exit the compiler checks 32 bytes a step.
#[inline]
fn has_control(s: &[u8]) -> bool {
    s.iter().fold(0u8, |acc, &b| acc | (b < 0x20) as u8) != 0
}

struct Parser<'a> {
    s: &'a [u8],
    src: &'a str,
    i: usize,
}

impl<'a> Parser<'a> {
    fn err(&self, msg: &'static str) -> JsonError {
        JsonError { pos: self.i, msg }
    }
    #[inline]
    fn ws(&mut self) {
        while self.i < self.s.len() && matches!(self.s[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }
    fn value(&mut self, depth: usize) -> Result<Value, JsonError> {
        if depth > MAX_DEPTH {
            return Err(self.err("nesting too deep"));
        }
        match self.s.get(self.i) {
            None => Err(self.err("unexpected end of JSON")),
            Some(b'{') => {
                self.i += 1;
                let mut m = Map::new();
                self.ws();
                if self.s.get(self.i) == Some(&b'}') {
                    self.i += 1;
                    return Ok(Value::Obj(m));
                }
                loop {
                    self.ws();
                    if self.s.get(self.i) != Some(&b'"') {
                        return Err(self.err("expected a string key"));
                    }
                    let k = self.string()?;
                    self.ws();
                    if self.s.get(self.i) != Some(&b':') {
                        return Err(self.err("expected ':'"));
                    }
                    self.i += 1;
                    self.ws();
                    let v = self.value(depth + 1)?;
                    m.insert(k, v);
                    self.ws();
                    match self.s.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b'}') => {
                            self.i += 1;
                            return Ok(Value::Obj(m));
                        }
                        _ => return Err(self.err("expected ',' or '}'")),
                    }
                }
            }
            Some(b'[') => {
                self.i += 1;
                let mut a = Vec::new();
                self.ws();
                if self.s.get(self.i) == Some(&b']') {
                    self.i += 1;
                    return Ok(Value::Arr(a));
                }
                loop {
                    self.ws();
                    a.push(self.value(depth + 1)?);
                    self.ws();
                    match self.s.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b']') => {
                            self.i += 1;
                            return Ok(Value::Arr(a));
                        }
                        _ => return Err(self.err("expected ',' or ']'")),
                    }
                }
            }
            Some(b'"') => Ok(Value::Str(self.string()?)),
            Some(b't') => self.lit("true", Value::Bool(true)),
            Some(b'f') => self.lit("false", Value::Bool(false)),
            Some(b'n') => self.lit("null", Value::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(self.err("unexpected character")),
        }
    }
    fn lit(&mut self, word: &'static str, v: Value) -> Result<Value, JsonError> {
        if self.s[self.i..].starts_with(word.as_bytes()) {
            self.i += word.len();
            Ok(v)
        } else {
            Err(self.err("unexpected literal"))
        }
    }
    fn number(&mut self) -> Result<Value, JsonError> {
        let start = self.i;
        let end = scan_number(self.s, self.i).ok_or_else(|| self.err("invalid number"))?;
        self.i = end;
        let text = &self.src[start..end];
        text.parse::<f64>().map(Value::Num).map_err(|_| self.err("invalid number"))
    }
    fn string(&mut self) -> Result<String, JsonError> {
        // self.s[self.i] == b'"'
        self.i += 1;
        let start = self.i;
        // Fast path: no escapes.
        let Some(off) = memchr::memchr3(b'"', b'\\', 0x0A, &self.s[self.i..]) else {
            return Err(self.err("unterminated string"));
        };
        let j = self.i + off;
        match self.s[j] {
            b'"' => {
                if has_control(&self.s[start..j]) {
                    self.i = j;
                    return Err(self.err("control character in string"));
                }
                self.i = j + 1;
                Ok(self.src[start..j].to_string())
            }
            b'\n' => {
                self.i = j;
                Err(self.err("control character in string"))
            }
            _ => {
                self.i = start;
                self.string_slow()
            }
        }
    }
    fn string_slow(&mut self) -> Result<String, JsonError> {
        // Decodes straight into a String; only \u escapes need UTF-16 thinking (pairs combine,
        // a lone surrogate becomes its stand-in).
        let mut out = String::with_capacity(16);
        let mut seg_start = self.i;
        let mut pending_high: Option<u16> = None;
        loop {
            let Some(off) = memchr::memchr2(b'"', b'\\', &self.s[self.i..]) else {
                return Err(self.err("unterminated string"));
            };
            let j = self.i + off;
            if has_control(&self.s[seg_start..j]) {
                self.i = j;
                return Err(self.err("control character in string"));
            }
            if j > seg_start {
                if let Some(h) = pending_high.take() {
                    out.push(standin(h));
                }
                out.push_str(&self.src[seg_start..j]);
            }
            self.i = j + 1;
            if self.s[j] == b'"' {
                if let Some(h) = pending_high.take() {
                    out.push(standin(h));
                }
                return Ok(out);
            }
            let Some(&e) = self.s.get(self.i) else {
                return Err(self.err("unterminated escape"));
            };
            self.i += 1;
            let simple = match e {
                b'"' => Some('"'),
                b'\\' => Some('\\'),
                b'/' => Some('/'),
                b'b' => Some('\u{08}'),
                b'f' => Some('\u{0C}'),
                b'n' => Some('\n'),
                b'r' => Some('\r'),
                b't' => Some('\t'),
                b'u' => None,
                _ => return Err(self.err("bad escape")),
            };
            match simple {
                Some(c) => {
                    if let Some(h) = pending_high.take() {
                        out.push(standin(h));
                    }
                    out.push(c);
                }
                None => {
                    let h = self.s.get(self.i..self.i + 4).ok_or_else(|| self.err("bad \\u escape"))?;
                    if !h.iter().all(|c| c.is_ascii_hexdigit()) {
                        return Err(self.err("bad \\u escape"));
                    }
                    // Safe: four ASCII hex digits.
                    let cu = u16::from_str_radix(std::str::from_utf8(h).unwrap_or("0"), 16).unwrap_or(0);
                    self.i += 4;
                    match (pending_high.take(), cu) {
                        (Some(hi), 0xDC00..=0xDFFF) => {
                            let c = 0x10000 + (((hi as u32) - 0xD800) << 10) + (cu as u32 - 0xDC00);
                            out.push(char::from_u32(c).unwrap_or('\u{FFFD}'));
                        }
                        (prev, 0xD800..=0xDBFF) => {
                            if let Some(p) = prev {
                                out.push(standin(p));
                            }
                            pending_high = Some(cu);
                        }
                        (prev, 0xDC00..=0xDFFF) => {
                            if let Some(p) = prev {
                                out.push(standin(p));
                            }
                            out.push(standin(cu));
                        }
                        (prev, _) => {
                            if let Some(p) = prev {
                                out.push(standin(p));
                            }
                            out.push(char::from_u32(cu as u32).unwrap_or('\u{FFFD}'));
                        }
                    }
                }
            }
            seg_start = self.i;
        }
    }
}

/// Scans a JSON number starting at `i`; returns its end.
#[inline]
fn scan_number(s: &[u8], mut i: usize) -> Option<usize> {
    if s.get(i) == Some(&b'-') {
        i += 1;
    }
    match s.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            while matches!(s.get(i), Some(b'0'..=b'9')) {
                i += 1;
            }
        }
        _ => return None,
    }
    if s.get(i) == Some(&b'.') {
        i += 1;
        if !matches!(s.get(i), Some(b'0'..=b'9')) {
            return None;
        }
        while matches!(s.get(i), Some(b'0'..=b'9')) {
            i += 1;
        }
    }
    if matches!(s.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(s.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !matches!(s.get(i), Some(b'0'..=b'9')) {
            return None;
        }
        while matches!(s.get(i), Some(b'0'..=b'9')) {
            i += 1;
        }
    }
    Some(i)
}

// ------------------------------------------------------------------------------------------
// The line scanner: validate a whole line as `JSON.parse` would and pick out top-level fields
// without building a DOM. This is the hot path of loading.
// ------------------------------------------------------------------------------------------

/// A top-level string field found by [`scan_line`]: the byte range of its contents (between the
/// quotes) and whether it contains escapes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RawStr {
    pub start: u32,
    pub end: u32,
    pub escaped: bool,
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
    /// `message.role` as the fast path read it: `Some(Field::Str)` (unescaped) or
    /// `Some(Field::Absent)` (no message object, or no role in it); `None` when not read (the
    /// exact scanner does not look at it).
    pub role: Option<Field>,
    pub type_: Field,
    pub id: Field,
    pub parent_id: Field,
    pub timestamp: Field,
}

/// Validates `line` as a complete JSON text and records the top-level `type`, `id`, `parentId`
/// and `timestamp` fields (last occurrence wins, as in `JSON.parse`). Iterative, with no depth
/// limit: V8's `JSON.parse` accepts any nesting, so Pi loads such a line.
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
    // Which top-level key's value comes next (0 none, 1 type, 2 id, 3 parentId, 4 timestamp).
    let mut pending_key: u8 = 0;
    let err = |pos: usize, msg: &'static str| JsonError { pos, msg };
    if i < n && s[i] == b'{' {
        out.is_object = true;
    }
    // State machine: expecting a value.
    'value: loop {
        if i >= n {
            return Err(err(i, "unexpected end of JSON"));
        }
        let depth_top = stack.len() == 1 && stack[0];
        match s[i] {
            b'{' => {
                i += 1;
                ws(&mut i);
                if i < n && s[i] == b'}' {
                    i += 1;
                    if depth_top {
                        record(&mut out, pending_key, Field::Other);
                    }
                } else {
                    if depth_top {
                        record(&mut out, pending_key, Field::Other);
                    }
                    stack.push(true);
                    // Expect a key.
                    pending_key = read_key(s, &mut i, stack.len() == 1)?;
                    continue 'value;
                }
            }
            b'[' => {
                if depth_top {
                    record(&mut out, pending_key, Field::Other);
                }
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
                if depth_top && pending_key != 0 {
                    let f = Field::Str(RawStr { start: start as u32, end: (end - 1) as u32, escaped });
                    record(&mut out, pending_key, f);
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
                if depth_top {
                    record(&mut out, pending_key, field);
                }
            }
            b'-' | b'0'..=b'9' => {
                i = scan_number(s, i).ok_or_else(|| err(i, "invalid number"))?;
                if depth_top {
                    record(&mut out, pending_key, Field::Other);
                }
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
                                pending_key = read_key(s, &mut i, stack.len() == 1)?;
                            }
                            continue 'value;
                        }
                        b'}' if is_obj => {
                            i += 1;
                            stack.pop();
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

#[inline]
fn record(out: &mut ScannedLine, key: u8, f: Field) {
    match key {
        1 => out.type_ = f,
        2 => out.id = f,
        3 => out.parent_id = f,
        4 => out.timestamp = f,
        _ => {}
    }
}

/// Reads `"key" :` (with whitespace) and leaves `i` at the value. Returns which top-level key it
/// was (only when `top`).
#[inline]
fn read_key(s: &[u8], i: &mut usize, top: bool) -> Result<u8, JsonError> {
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
    let which = if top && !escaped {
        match key {
            b"type" => 1,
            b"id" => 2,
            b"parentId" => 3,
            b"timestamp" => 4,
            _ => 0,
        }
    } else if top && escaped {
        // Rare: an escaped key such as "\u0069d". Decode to be exact.
        let decoded = parse(std::str::from_utf8(&s[start - 1..end]).unwrap_or("\"\"")).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
        match decoded.as_str() {
            "type" => 1,
            "id" => 2,
            "parentId" => 3,
            "timestamp" => 4,
            _ => 0,
        }
    } else {
        0
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
        // costs no second pass over the line later. A message that is not an object or a role
        // that is not a plain string sends the line to the exact scanner, which leaves it.
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
            for (f, slot) in [(l.ty, &mut out.type_), (l.id, &mut out.id), (l.parent_id, &mut out.parent_id), (l.timestamp, &mut out.timestamp)] {
                if let Some(b) = f {
                    let start = b.as_ptr() as usize - s.as_ptr() as usize;
                    *slot = Field::Str(RawStr { start: start as u32, end: (start + b.len()) as u32, escaped: false });
                }
            }
            if let Some(b) = role {
                let start = b.as_ptr() as usize - s.as_ptr() as usize;
                out.role = Some(Field::Str(RawStr { start: start as u32, end: (start + b.len()) as u32, escaped: false }));
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
            Value::Str(s) => Some(s),
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
    use super::*;

    /// The vectorized length equals the exact one and the written literal's UTF-16 length, and
    /// the prefix-skipping comparison equals a char-by-char one, on every kind of character:
    /// escapes, control characters, 2-, 3- and 4-byte chars, lone-surrogate stand-ins.
    #[test]
    fn fast_utf16_length_and_order_equal_the_exact_ones() {
        let pieces =
            ["a", "\"", "\\", "\n", "\r", "\t", "\u{8}", "\u{c}", "\u{1}", "\u{1f}", " ", "é", "€", "\u{e000}", "\u{ffff}", "😀", "\u{10000}", "z", "/"];
        let mut strings = vec![String::new()];
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..3000 {
            let mut t = String::new();
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            for k in 0..(seed % 40) {
                t.push_str(pieces[((seed >> (k % 50)) as usize + k as usize) % pieces.len()]);
            }
            strings.push(t);
        }
        // A lone surrogate read from JSON becomes a stand-in char; its literal is six units.
        let lone = parse(r#""x\ud800y""#).unwrap();
        strings.push(lone.as_str().unwrap().to_string());
        for t in &strings {
            assert_eq!(quoted_utf16_len(t), quoted_utf16_len_exact(t.as_bytes()), "{t:?}");
            let mut w = String::new();
            write_str(&mut w, t);
            assert_eq!(quoted_utf16_len(t), utf16_len(&w), "{t:?} written as {w:?}");
        }
        assert_eq!(quoted_utf16_len(lone.as_str().unwrap()), 2 + 1 + 6 + 1);
        let by_chars = |a: &str, b: &str| {
            let u = |c: char| -> Vec<u16> {
                let mut buf = [0u16; 2];
                c.encode_utf16(&mut buf).to_vec()
            };
            let ua: Vec<u16> = a.chars().flat_map(u).collect();
            let ub: Vec<u16> = b.chars().flat_map(u).collect();
            ua.cmp(&ub)
        };
        for w in strings.windows(2).chain([["aé".to_string(), "a😀".to_string()].as_slice(), ["a\u{ffff}b".to_string(), "a😀".to_string()].as_slice()]) {
            assert_eq!(cmp_utf16(&w[0], &w[1]), by_chars(&w[0], &w[1]), "{:?} {:?}", w[0], w[1]);
            assert_eq!(cmp_utf16(&w[1], &w[0]), by_chars(&w[1], &w[0]));
            assert_eq!(cmp_utf16(&w[0], &w[0]), std::cmp::Ordering::Equal);
        }
        assert_eq!(cmp_utf16("a\u{ffff}", "a😀"), std::cmp::Ordering::Greater, "UTF-16 puts U+FFFF after a surrogate pair");
    }

    #[test]
    fn numbers_are_written_like_javascript() {
        for (text, want) in [
            ("1", "1"),
            ("1.0", "1"),
            ("-0", "0"),
            ("1e21", "1e+21"),
            ("1e-7", "1e-7"),
            ("0.000001", "0.000001"),
            ("123456789012345678901", "123456789012345680000"),
            ("1.5", "1.5"),
            ("1E400", "null"),
        ] {
            let v = parse(text).unwrap();
            assert_eq!(to_string(&v), want, "{text}");
        }
    }

    #[test]
    fn duplicate_keys_keep_first_position_and_last_value() {
        let v = parse(r#"{"a":1,"b":2,"a":3}"#).unwrap();
        assert_eq!(to_string(&v), r#"{"a":3,"b":2}"#);
    }

    #[test]
    fn strings_round_trip_with_js_escapes() {
        let src = r#""a\"b\\c\n\u0001\u2028é🚀\/""#;
        let v = parse(src).unwrap();
        assert_eq!(to_string(&v), "\"a\\\"b\\\\c\\n\\u0001\u{2028}é🚀/\"");
    }

    #[test]
    fn lone_surrogates_survive_and_count_as_one_unit() {
        let v = parse(r#""x\ud83d""#).unwrap();
        let s = v.as_str().unwrap();
        assert_eq!(utf16_len(s), 2);
        assert_eq!(to_string(&v), r#""x\ud83d""#);
        // Truncating inside a pair leaves the high surrogate alone.
        let cut = utf16_prefix("ab🚀", 3);
        assert_eq!(utf16_len(&cut), 3);
        assert_eq!(quote(&cut), r#""ab\ud83d""#);
        // A valid pair written as escapes becomes the real character.
        assert_eq!(parse(r#""\ud83d\ude80""#).unwrap().as_str(), Some("🚀"));
    }

    #[test]
    fn utf16_sort_differs_from_code_point_sort() {
        let mut v = vec!["src/ﬁle.ts", "src/𝔘nicode.ts"];
        v.sort_by(|a, b| cmp_utf16(a, b));
        assert_eq!(v, vec!["src/𝔘nicode.ts", "src/ﬁle.ts"]);
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
    fn stringified_length_matches_the_string() {
        for t in [r#"{"a":[1,2.5,"x\"y\n\u0001",null,true,{"b":"é🚀\ud83d"}],"c":{}}"#, "[]", "\"\"", "1e21"] {
            let v = parse(t).unwrap();
            assert_eq!(stringified_utf16_len(&v), utf16_len(&to_string(&v)), "{t}");
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let deep = "[".repeat(100_000) + &"]".repeat(100_000);
        // Like V8, the scanner accepts any depth; the DOM parser refuses past MAX_DEPTH.
        assert!(scan_line(deep.as_bytes()).is_ok());
        assert!(parse(&deep).is_err());
    }
}
