//! Parsing: `JSON.parse`.
//!
//! The bytes are checked as UTF-8 with simdutf8 first. A string's end, its escapes and control
//! characters are found in one SWAR pass (eight bytes a step); an object's members are collected
//! on per-thread stacks reused between parses; integers of up to 15 digits are read without float
//! parsing (exact in `f64`). `tests/parser_equivalence.rs` holds the previous, simpler parser
//! verbatim and checks this one against it.

use crate::key::Key;
use crate::utf16::standin;
use crate::value::{Map, Str, Value};

/// Maximum nesting depth accepted by [`parse`] and by the line scanner.
pub const MAX_DEPTH: usize = 1000;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{msg} at byte {pos}")]
pub struct JsonError {
    pub pos: usize,
    pub msg: &'static str,
}

/// `JSON.parse` on text (leading and trailing JSON whitespace allowed, nothing else).
pub fn parse(text: &str) -> Result<Value, JsonError> {
    let (pairs, items, buf) = SCRATCH.with(|c| std::mem::take(&mut *c.borrow_mut()));
    let mut p = Parser { s: text.as_bytes(), src: text, i: 0, pairs, items, buf };
    p.ws();
    let mut r = p.value(0);
    p.ws();
    if r.is_ok() && p.i != p.s.len() {
        r = Err(p.err("unexpected data after the JSON value"));
    }
    // The stacks are empty after a value (an error may leave members: dropped here). Only
    // modest ones are kept, so one huge line does not pin its size to the thread.
    let Parser { mut pairs, mut items, buf, .. } = p;
    if pairs.capacity() <= SCRATCH_MAX && items.capacity() <= SCRATCH_MAX && buf.capacity() <= SCRATCH_MAX * 64 {
        pairs.clear();
        items.clear();
        SCRATCH.with(|c| *c.borrow_mut() = (pairs, items, buf));
    }
    r
}

/// Most members an object or array stack keeps between parses (see [`SCRATCH`]).
const SCRATCH_MAX: usize = 4096;

/// Object members, array elements and an escape buffer.
type Scratch = (Vec<(Key, Value)>, Vec<Value>, String);

thread_local! {
    /// The parser's member stacks and escape buffer, kept between parses on this thread: a line
    /// of a session is parsed with no allocation but its values' own.
    static SCRATCH: std::cell::RefCell<Scratch> = Default::default();
}

/// Parses bytes, decoding invalid UTF-8 as U+FFFD first (as Node's `readFileSync(…, "utf8")`).
pub fn parse_bytes(bytes: &[u8]) -> Result<Value, JsonError> {
    // simdutf8 answers exactly what `std::str::from_utf8` answers (valid or not), several times
    // faster on non-ASCII text.
    match simdutf8::basic::from_utf8(bytes) {
        Ok(s) => parse(s),
        Err(_) => parse(&String::from_utf8_lossy(bytes)),
    }
}

/// Whether `s` holds a raw control character (not allowed in a JSON string). A fold, not
/// `any`: without the early exit the compiler checks 32 bytes a step.
#[inline]
pub(super) fn has_control(s: &[u8]) -> bool {
    s.iter().fold(0u8, |acc, &b| acc | (b < 0x20) as u8) != 0
}

/// The first index from `i` on whose byte ends a plain run of string contents: `"`, `\\` or a
/// raw control character (below 0x20), or `s.len()`. Eight bytes a step (SWAR): in a word, the
/// lowest flagged byte of each test is exact (a borrow only flags bytes above a true hit), so
/// the lowest flagged byte of the three tests is the first special byte. Most runs in session
/// text are 10 to 100 bytes long (escaped newlines and quotes end them); on those this one pass
/// beat memchr's vector search plus a separate pass for control characters (and unrolling to
/// sixteen bytes a step gained nothing).
#[inline]
pub(super) fn find_special(s: &[u8], mut i: usize) -> usize {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    while let Some(chunk) = s.get(i..i + 8) {
        let w = u64::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3], chunk[4], chunk[5], chunk[6], chunk[7]]);
        let q = w ^ (LO * b'"' as u64);
        let b = w ^ (LO * b'\\' as u64);
        let hits = (q.wrapping_sub(LO) & !q) | (b.wrapping_sub(LO) & !b) | (w.wrapping_sub(LO * 0x20) & !w);
        let m = hits & HI;
        if m != 0 {
            return i + (m.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while let Some(&c) = s.get(i) {
        if c == b'"' || c == b'\\' || c < 0x20 {
            return i;
        }
        i += 1;
    }
    s.len()
}

/// The obvious form of [`find_special`], which tests compare it with.
#[cfg(test)]
pub(super) fn find_special_naive(s: &[u8], i: usize) -> usize {
    s[i..].iter().position(|&c| c == b'"' || c == b'\\' || c < 0x20).map_or(s.len(), |k| i + k)
}

struct Parser<'a> {
    s: &'a [u8],
    src: &'a str,
    i: usize,
    /// Members of the objects being parsed, innermost last: an object's members are collected
    /// here and moved into a `Vec` of exactly their number when it closes (one allocation
    /// instead of a growing one per object).
    pairs: Vec<(Key, Value)>,
    /// The same for array elements.
    items: Vec<Value>,
    /// A string with escapes is decoded here and copied out at its exact length (growing a
    /// fresh String through a long text reallocated it many times).
    buf: String,
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
                self.ws();
                if self.s.get(self.i) == Some(&b'}') {
                    self.i += 1;
                    return Ok(Value::Obj(Map::new()));
                }
                // (On an error the parser is dropped with whatever these stacks hold.)
                let base = self.pairs.len();
                // Which first bytes (mod 64) keys of this object began with: a key whose first
                // byte is new cannot repeat one, and skips the search for a duplicate.
                let mut firsts = 0u64;
                loop {
                    self.ws();
                    if self.s.get(self.i) != Some(&b'"') {
                        return Err(self.err("expected a string key"));
                    }
                    let k = self.key()?;
                    self.ws();
                    if self.s.get(self.i) != Some(&b':') {
                        return Err(self.err("expected ':'"));
                    }
                    self.i += 1;
                    self.ws();
                    let v = self.value(depth + 1)?;
                    let bit = 1u64 << (k.as_bytes().first().map_or(0, |&c| c & 63));
                    // A repeated key keeps its first position and takes the last value.
                    match if firsts & bit != 0 { self.pairs[base..].iter_mut().find(|(q, _)| *q == k) } else { None } {
                        Some(slot) => slot.1 = v,
                        None => {
                            firsts |= bit;
                            self.pairs.push((k, v));
                        }
                    }
                    self.ws();
                    match self.s.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b'}') => {
                            self.i += 1;
                            // A new Vec of exactly the members, moved in one copy (a drain
                            // collected them one by one); the stack keeps its capacity.
                            let m: Vec<(Key, Value)> = self.pairs.split_off(base);
                            return Ok(Value::Obj(Map(m)));
                        }
                        _ => return Err(self.err("expected ',' or '}'")),
                    }
                }
            }
            Some(b'[') => {
                self.i += 1;
                self.ws();
                if self.s.get(self.i) == Some(&b']') {
                    self.i += 1;
                    return Ok(Value::Arr(Vec::new()));
                }
                let base = self.items.len();
                loop {
                    self.ws();
                    let v = self.value(depth + 1)?;
                    self.items.push(v);
                    self.ws();
                    match self.s.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b']') => {
                            self.i += 1;
                            let a: Vec<Value> = self.items.split_off(base);
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
        // Integers of up to 15 digits are exact in an f64: no float parsing needed.
        let (neg, digits) = match self.s[start] {
            b'-' => (true, &self.s[start + 1..end]),
            _ => (false, &self.s[start..end]),
        };
        if digits.len() <= 15 && digits.iter().all(u8::is_ascii_digit) {
            let n = digits.iter().fold(0u64, |acc, &d| acc * 10 + (d - b'0') as u64) as f64;
            return Ok(Value::Num(if neg { -n } else { n }));
        }
        let text = &self.src[start..end];
        text.parse::<f64>().map(Value::Num).map_err(|_| self.err("invalid number"))
    }
    /// An object's key: [`Parser::string`], without an allocation for a key Pi writes.
    fn key(&mut self) -> Result<Key, JsonError> {
        // self.s[self.i] == b'"'
        let start = self.i + 1;
        let j = find_special(self.s, start);
        if self.s.get(j) == Some(&b'"') {
            self.i = j + 1;
            return Ok(Key::new(&self.src[start..j]));
        }
        self.string().map(|s| Key::new(&s))
    }
    fn string(&mut self) -> Result<Str, JsonError> {
        // self.s[self.i] == b'"'
        self.i += 1;
        let start = self.i;
        // Fast path: no escapes.
        let j = find_special(self.s, start);
        match self.s.get(j) {
            Some(b'"') => {
                self.i = j + 1;
                Ok(Str::new(&self.src[start..j]))
            }
            Some(b'\\') => self.string_slow(),
            Some(_) => {
                self.i = j;
                Err(self.err("control character in string"))
            }
            None => {
                self.i = j;
                Err(self.err("unterminated string"))
            }
        }
    }
    fn string_slow(&mut self) -> Result<Str, JsonError> {
        // Decodes straight into a String; only \u escapes need UTF-16 thinking (pairs combine,
        // a lone surrogate becomes its stand-in).
        let mut out = std::mem::take(&mut self.buf);
        out.clear();
        let mut seg_start = self.i;
        let mut pending_high: Option<u16> = None;
        loop {
            let j = find_special(self.s, self.i);
            match self.s.get(j) {
                None => {
                    self.i = j;
                    return Err(self.err("unterminated string"));
                }
                Some(&c) if c < 0x20 => {
                    self.i = j;
                    return Err(self.err("control character in string"));
                }
                _ => {}
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
                let decoded = Str::new(out.as_str());
                self.buf = out;
                return Ok(decoded);
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
pub(super) fn scan_number(s: &[u8], mut i: usize) -> Option<usize> {
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

#[cfg(test)]
mod tests {
    use crate::*;

    /// The SWAR scan finds what a byte-by-byte search finds, from every start, for every
    /// special byte at every position of a word and around it (bytes above 0x7f and just above
    /// 0x20 included, where a borrow could fool a word test).
    #[test]
    fn find_special_is_the_naive_search() {
        use super::{find_special, find_special_naive};
        let fill = [b'a', b' ', b'!', 0x21, 0x5b, 0x5d, 0x7f, 0x80, 0xc3, 0xff, 0x23, 0x5c ^ 0x80, 0x22 ^ 0x80];
        let special = [b'"', b'\\', 0x00, 0x01, 0x1f, b'\n'];
        let mut next = crate::testing::xorshift(0x2545_f491_4f6c_dd1d);
        for len in (0..80).chain([200, 1000]) {
            for _ in 0..if len > 100 { 20 } else { 200 } {
                let mut s: Vec<u8> = (0..len).map(|_| fill[next() as usize % fill.len()]).collect();
                for _ in 0..(next() % 4) {
                    if len > 0 {
                        let at = next() as usize % len;
                        s[at] = special[next() as usize % special.len()];
                    }
                }
                for i in 0..=len {
                    assert_eq!(find_special(&s, i), find_special_naive(&s, i), "{s:?} from {i}");
                }
            }
        }
    }

    #[test]
    fn duplicate_keys_keep_first_position_and_last_value() {
        let v = parse(r#"{"a":1,"b":2,"a":3}"#).unwrap();
        assert_eq!(to_string(&v), r#"{"a":3,"b":2}"#);
        // The same for keys Pi writes (held by number), one of them spelled with an escape.
        let v = parse(r#"{"type":1,"id":2,"t\u0079pe":3,"typ":4}"#).unwrap();
        assert_eq!(to_string(&v), r#"{"type":3,"id":2,"typ":4}"#);
    }

    #[test]
    fn strings_round_trip_with_js_escapes() {
        let src = r#""a\"b\\c\n\u0001\u2028é🚀\/""#;
        let v = parse(src).unwrap();
        assert_eq!(to_string(&v), "\"a\\\"b\\\\c\\n\\u0001\u{2028}é🚀/\"");
    }

    /// String values of up to 24 bytes (Pi's ids, timestamps, roles and types among them) are
    /// held inline, with no allocation of their own; longer ones on the heap. Either way a value
    /// reads and writes as the text parsed, whether the source spelled it plainly or with
    /// escapes, in ASCII, in multi-byte UTF-8 or with a lone surrogate's stand-in.
    #[test]
    fn short_strings_are_inline_and_read_as_parsed() {
        for unit in ["a", "é", "🚀", r"\u00e9", r"\n", r"\ud800"] {
            for n in 0..30 {
                let src = format!("\"{}\"", unit.repeat(n));
                let v = parse(&src).unwrap();
                let Value::Str(s) = &v else { panic!("{src}: {v:?}") };
                let want = match unit {
                    "\\u00e9" => "é".repeat(n),
                    "\\n" => "\n".repeat(n),
                    "\\ud800" => '\u{10F800}'.to_string().repeat(n),
                    plain => plain.repeat(n),
                };
                assert_eq!(s.as_str(), want, "{src}");
                assert_eq!(s.is_heap_allocated(), want.len() > 24, "{src}: {} bytes", want.len());
                assert_eq!(to_string(&v), to_string(&Value::from(want.as_str())), "{src}");
            }
        }
    }
}
