//! The JSON parser's fast paths (SWAR string scanning, the member stacks, the integer path,
//! simdutf8) against the obvious parser they replaced, kept here verbatim as `reference`: on
//! many generated texts, valid and broken, both accept the same texts and give the same values,
//! numbers compared bit for bit (`-0`, exponents, long mantissas). The loads built on the parser
//! (single pass, split, scanning) are compared with one another in the engine's
//! `tests/load_equivalence.rs`.

#[path = "support/json_text.rs"]
mod json_text;

use json_text::text;
use pi_json::{Map, Value, MAX_DEPTH};
use proptest::prelude::*;

#[allow(dead_code)]
mod reference {
    //! `pi_json::parse` as it was before the fast paths (commit b531df9).
    use super::{Map, Value, MAX_DEPTH};

    #[derive(Debug)]
    pub struct JsonError {
        pub pos: usize,
        pub msg: &'static str,
    }

    fn standin(surrogate: u16) -> char {
        char::from_u32(0x10F800 + (surrogate as u32 - 0xD800)).unwrap_or('\u{FFFD}')
    }

    fn has_control(s: &[u8]) -> bool {
        s.iter().fold(0u8, |acc, &b| acc | (b < 0x20) as u8) != 0
    }

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
                Some(b'"') => Ok(Value::Str(self.string()?.into())),
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
}

/// Equal values, numbers bit for bit (so `-0` is not `0`), keys and their order alike.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Num(x), Value::Num(y)) => x.to_bits() == y.to_bits(),
        (Value::Arr(x), Value::Arr(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q)),
        (Value::Obj(Map(x)), Value::Obj(Map(y))) => {
            x.len() == y.len() && x.iter().zip(y).all(|((k, p), (l, q))| k == l && same(p, q))
        }
        _ => a == b,
    }
}

fn check(bytes: &[u8]) -> Result<(), TestCaseError> {
    let new = pi_json::parse_bytes(bytes);
    let old = reference::parse_bytes(bytes);
    // The single-pass open takes a parsed line as valid and sends a refused one to the scan: on
    // text the loader hands over (UTF-8, as decoded), the two accept the same lines, but for
    // nesting past MAX_DEPTH, which only the scan (like Pi) accepts.
    if std::str::from_utf8(bytes).is_ok() {
        let scanned = pi_json::scan_line_fast(bytes).is_ok();
        let deep = new.as_ref().is_err_and(|e| e.msg == "nesting too deep");
        prop_assert!(
            scanned == new.is_ok() || (scanned && deep),
            "scan ({scanned}) and parse ({:?}) disagree on {:?}",
            new.as_ref().err(),
            String::from_utf8_lossy(bytes)
        );
    }
    match (&new, &old) {
        (Ok(n), Ok(o)) => {
            prop_assert!(same(n, o), "values differ on {:?}:\n new {n:?}\n old {o:?}", String::from_utf8_lossy(bytes))
        }
        (Err(_), Err(_)) => {}
        _ => prop_assert!(
            false,
            "accepted differently on {:?}: new {new:?}, old {old:?}",
            String::from_utf8_lossy(bytes)
        ),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, .. ProptestConfig::default() })]

    #[test]
    fn the_parser_agrees_with_the_reference(t in text()) {
        check(t.as_bytes())?;
    }

    /// One byte changed, inserted or removed anywhere (broken texts, invalid UTF-8 included).
    #[test]
    fn the_parser_agrees_with_the_reference_on_mutations(t in text(), at in any::<prop::sample::Index>(), op in 0u8..3, byte in prop::sample::select(vec![b'"', b'\\', b'{', b'}', b'[', b']', b',', b':', 0x01, b'\n', b'0', b'-', b'e', 0xff, 0xc3, 0x80])) {
        let mut b = t.into_bytes();
        let k = at.index(b.len() + 1);
        match op {
            0 if k < b.len() => b[k] = byte,
            1 => b.insert(k, byte),
            _ if k < b.len() => { b.remove(k); }
            _ => b.push(byte),
        }
        check(&b)?;
    }
}

/// Nesting at the depth limit and one past it, in objects and arrays.
#[test]
fn the_depth_limit_is_the_reference_limit() {
    for depth in [MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, MAX_DEPTH + 2] {
        let arr = "[".repeat(depth) + &"]".repeat(depth);
        let obj = "{\"a\":".repeat(depth) + "1" + &"}".repeat(depth);
        for t in [arr, obj] {
            assert_eq!(pi_json::parse(&t).is_ok(), reference::parse(&t).is_ok(), "depth {depth}");
        }
    }
}

/// Every line of the conformance corpus and the random oracle sessions parses as before.
#[test]
fn corpus_lines_parse_as_before() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../session-engine/tests/fixtures");
    let mut stack = vec![root];
    let mut lines = 0;
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "jsonl" || x == "json") {
                let bytes = std::fs::read(&p).unwrap();
                for l in bytes.split(|&b| b == b'\n') {
                    check(l).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
                    lines += 1;
                }
            }
        }
    }
    assert!(lines > 1000, "{lines} lines");
}
