//! The JSON parser's fast paths (SWAR string scanning, the member stacks, the integer path,
//! simdutf8, the single-pass open) against the obvious parser they replaced, kept here verbatim
//! as `reference`: on many generated texts, valid and broken, both accept the same texts and
//! give the same values, numbers compared bit for bit (`-0`, exponents, long mantissas).

mod fuzz_checks;

use proptest::prelude::*;
use session_engine::json::{self, Map, Value, MAX_DEPTH};

#[allow(dead_code)]
mod reference {
    //! `json::parse` as it was before the fast paths (commit b531df9).
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
}

/// Equal values, numbers bit for bit (so `-0` is not `0`), keys and their order alike.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Num(x), Value::Num(y)) => x.to_bits() == y.to_bits(),
        (Value::Arr(x), Value::Arr(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q)),
        (Value::Obj(Map(x)), Value::Obj(Map(y))) => x.len() == y.len() && x.iter().zip(y).all(|((k, p), (l, q))| k == l && same(p, q)),
        _ => a == b,
    }
}

fn check(bytes: &[u8]) -> Result<(), TestCaseError> {
    let new = json::parse_bytes(bytes);
    let old = reference::parse_bytes(bytes);
    // The single-pass open takes a parsed line as valid and sends a refused one to the scan: on
    // text the loader hands over (UTF-8, as decoded), the two accept the same lines, but for
    // nesting past MAX_DEPTH, which only the scan (like Pi) accepts.
    if std::str::from_utf8(bytes).is_ok() {
        let scanned = json::scan_line_fast(bytes).is_ok();
        let deep = new.as_ref().is_err_and(|e| e.msg == "nesting too deep");
        prop_assert!(
            scanned == new.is_ok() || (scanned && deep),
            "scan ({scanned}) and parse ({:?}) disagree on {:?}",
            new.as_ref().err(),
            String::from_utf8_lossy(bytes)
        );
    }
    match (&new, &old) {
        (Ok(n), Ok(o)) => prop_assert!(same(n, o), "values differ on {:?}:\n new {n:?}\n old {o:?}", String::from_utf8_lossy(bytes)),
        (Err(_), Err(_)) => {}
        _ => prop_assert!(false, "accepted differently on {:?}: new {new:?}, old {old:?}", String::from_utf8_lossy(bytes)),
    }
    Ok(())
}

/// String contents: plain runs of every length (the scanner works eight bytes a step), the
/// characters that end a run (quotes, backslashes, raw control characters), valid and broken
/// escapes, surrogate pairs and lone surrogates, multi-byte UTF-8.
fn string_body() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        6 => "[a-zA-Z0-9 ]{0,20}",
        2 => "[é€ß🚀\u{7f}\u{10f800}~]{1,3}",
        1 => Just("\\\"".to_string()),
        1 => Just("\\\\".to_string()),
        1 => prop::sample::select(vec!["\\n", "\\t", "\\r", "\\b", "\\f", "\\/"]).prop_map(str::to_string),
        1 => any::<u16>().prop_map(|u| format!("\\u{u:04x}")),
        1 => prop::sample::select(vec![0xd800u16, 0xdbff, 0xdc00, 0xdfff, 0xd83d, 0xde80]).prop_map(|u| format!("\\u{u:04X}")),
        // Invalid inside a JSON string.
        1 => prop::sample::select(vec!["\n", "\u{1}", "\u{1f}", "\t", "\\x", "\\u12", "\\uZZZZ", "\"", "\\"]).prop_map(str::to_string),
    ];
    prop::collection::vec(piece, 0..8).prop_map(|v| v.concat())
}

fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (any::<bool>(), "[1-9][0-9]{0,19}").prop_map(|(n, d)| format!("{}{d}", if n { "-" } else { "" })),
        1 => prop::sample::select(vec!["0", "-0", "-0.0", "0e5", "1e400", "-1e-400", "123456789012345", "1234567890123456", "9007199254740993", "01", "-", "1.", ".5", "1e", "1e+", "2E-3"]).prop_map(str::to_string),
        2 => (any::<bool>(), "[0-9]{1,4}", "[0-9]{1,18}", proptest::option::of((prop::sample::select(vec!["e", "E", "e+", "e-"]), "[0-9]{1,3}")))
            .prop_map(|(n, i, f, e)| format!("{}{}.{f}{}", if n { "-" } else { "" }, i.trim_start_matches('0').chars().next().map_or("0".to_string(), |_| i.trim_start_matches('0').to_string()), e.map_or(String::new(), |(e, x)| format!("{e}{x}")))),
    ]
}

fn ws() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["", "", "", " ", "\n", "\t \r\n"])
}

/// A JSON-ish text: mostly valid, with keys drawn from a few names so objects repeat keys.
fn text() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        3 => string_body().prop_map(|s| format!("\"{s}\"")),
        3 => number(),
        1 => prop::sample::select(vec!["true", "false", "null", "tru", "nul"]).prop_map(str::to_string),
    ];
    leaf.prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            (prop::collection::vec((inner.clone(), ws()), 0..8))
                .prop_map(|v| format!("[{}]", v.into_iter().map(|(x, w)| format!("{w}{x}{w}")).collect::<Vec<_>>().join(","))),
            (prop::collection::vec((prop::sample::select(vec!["id", "type", "a", "ab", "", "role", "@", "\\u0069d", "A"]), inner, ws()), 0..8))
                .prop_map(|v| format!("{{{}}}", v.into_iter().map(|(k, x, w)| format!("{w}\"{k}\"{w}:{w}{x}{w}")).collect::<Vec<_>>().join(","))),
        ]
    })
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

/// A session line: an entry object with the loader's fields (as strings or not, repeated,
/// escaped), a message with a role, or any generated text.
fn entry_line() -> impl Strategy<Value = String> {
    let field = |name: &'static str| {
        prop_oneof![
            3 => prop::sample::select(vec!["a", "b", "c", "d", r"\u0061", ""]).prop_map(move |v| format!("\"{name}\":\"{v}\"")),
            1 => prop::sample::select(vec!["null", "1", "{}", "[\"a\"]", "true"]).prop_map(move |v| format!("\"{name}\":{v}")),
            1 => Just(String::new()),
        ]
    };
    let role = prop::sample::select(vec![
        r#""message":{"role":"user","content":"hi"}"#,
        r#""message":{"role":"assistant","content":[{"type":"text","text":"x"}]}"#,
        r#""message":{"role":"toolResult","toolCallId":"t","content":[]}"#,
        r#""message":{"role":"us\u0065r"}"#,
        r#""message":{"role":"other"}"#,
        r#""message":{"role":1}"#,
        r#""message":"m""#,
        r#""message":null"#,
        r#""message":{"role":"user"},"message":{"role":"custom"}"#,
        r#""targetId":"a","label":"l""#,
        r#""name":" n ""#,
        "",
    ]);
    let kind = prop::sample::select(vec!["message", "label", "session_info", "compaction", "session", "custom", "branch_summary"]);
    prop_oneof![
        6 => (kind, field("id"), field("parentId"), field("timestamp"), role, text(), field("id"))
            .prop_map(|(k, id, p, t, r, x, id2)| {
                let parts: Vec<String> = [format!("\"type\":\"{k}\""), id, p, t, r.to_string(), format!("\"x\":{x}"), id2].into_iter().filter(|f| !f.is_empty()).collect();
                format!("{{{}}}", parts.join(","))
            }),
        1 => text(),
        1 => prop::sample::select(vec!["", "  \t", "\r", "\u{a0}"]).prop_map(str::to_string),
        1 => Just("[".repeat(MAX_DEPTH + 5) + &"]".repeat(MAX_DEPTH + 5)),
        1 => Just(format!("{{\"type\":\"custom\",\"id\":\"deep\",\"x\":{}1{}}}", "[".repeat(MAX_DEPTH + 5), "]".repeat(MAX_DEPTH + 5))),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, .. ProptestConfig::default() })]

    /// A small file's single-pass open (each line parsed whole) gives what the scan-then-parse
    /// open gives: entries, fields, parents, roles, values, labels, name, header, diagnostics
    /// (the loader check of the fuzz target, which loads both ways).
    #[test]
    fn the_single_pass_open_equals_the_scanning_open(lines in prop::collection::vec(entry_line(), 0..12), header in 0u8..4, tail in 0u8..3, bad in any::<Option<prop::sample::Index>>()) {
        let head = match header {
            0 => r#"{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/p"}"#,
            1 => r#"{"type":"session","version":2,"id":"s","timestamp":"t","cwd":"/p"}"#,
            2 => r#"{"type":"session","id":"s"}"#,
            _ => "",
        };
        let mut text = format!("{head}\n{}", lines.join("\n"));
        match tail {
            0 => text.push('\n'),
            1 => text.push_str("\n{\"type\":\"mess"),
            _ => {}
        }
        // Sometimes a byte that is not UTF-8 (the line is decoded with U+FFFD).
        let mut bytes = text.into_bytes();
        if let Some(at) = bad {
            let k = at.index(bytes.len() + 1);
            bytes.insert(k, 0xff);
        }
        fuzz_checks::loader(&bytes);
    }
}

/// Nesting at the depth limit and one past it, in objects and arrays.
#[test]
fn the_depth_limit_is_the_reference_limit() {
    for depth in [MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, MAX_DEPTH + 2] {
        let arr = "[".repeat(depth) + &"]".repeat(depth);
        let obj = "{\"a\":".repeat(depth) + "1" + &"}".repeat(depth);
        for t in [arr, obj] {
            assert_eq!(json::parse(&t).is_ok(), reference::parse(&t).is_ok(), "depth {depth}");
        }
    }
}

/// Every line of the conformance corpus and the random oracle sessions parses as before.
#[test]
fn corpus_lines_parse_as_before() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
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

/// A big file's branch preparation (entries parsed for the call, messages moved out of their
/// parse) equals the one made on the same entries already parsed (messages copied out of the
/// session's cache), across messages of every role, duplicate `message` keys, escapes, tool
/// results, compactions and branch summaries.
#[test]
fn a_lazy_branch_preparation_equals_a_parsed_one() {
    use session_engine::{branch, session::EAGER_PARSE_MAX_BYTES, Session};
    let mut text = String::from(r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#);
    text.push('\n');
    let ts = "2025-01-01T00:00:01.000Z";
    let mut parent = "null".to_string();
    for k in 0..400 {
        let id = format!("e{k:07}");
        let body = match k % 7 {
            0 => format!(r#""type":"message","message":{{"role":"user","content":"ask {k} \"q\" é😀\n"}}"#),
            1 => format!(
                r#""type":"message","message":{{"role":"assistant","content":[{{"type":"text","text":"t{k}"}},{{"type":"toolCall","id":"c{k}","name":"read","arguments":{{"path":"src/f{}.rs"}}}}]}}"#,
                k % 13
            ),
            2 => {
                format!(r#""type":"message","message":{{"role":"toolResult","toolCallId":"c{k}","content":[{{"type":"text","text":"{}"}}]}}"#, "r".repeat(300))
            }
            3 => format!(
                r#""type":"message","message":{{"role":"user","content":"first"}},"message":{{"role":"assistant","content":[{{"type":"text","text":"second {k}"}}]}}"#
            ),
            4 => format!(r#""type":"branch_summary","fromId":"x","summary":"went off {k}","details":{{"readFiles":["a{k}.rs"],"modifiedFiles":["m.rs"]}}"#),
            5 => format!(r#""type":"compaction","summary":"s{k}","firstKeptEntryId":"e0000000","tokensBefore":{k}"#),
            _ => format!(r#""type":"message","message":{{"role":"bashExecution","command":"ls {k}","output":"o","exitCode":0}}"#),
        };
        text.push_str(&format!(r#"{{"id":"{id}","parentId":{parent},"timestamp":"{ts}",{body}}}"#));
        text.push('\n');
        parent = format!("\"{id}\"");
    }
    // Padding past the eager limit, on a branch of its own, makes the file lazy.
    text.push_str(&format!(r#"{{"type":"custom","id":"pad","parentId":null,"timestamp":"{ts}","data":"{}"}}"#, "x".repeat(EAGER_PARSE_MAX_BYTES)));
    text.push('\n');
    let lazy = Session::from_bytes(text.clone().into_bytes());
    let parsed = Session::from_bytes(text.into_bytes());
    for i in 0..parsed.len() {
        parsed.value(i);
    }
    let leaf = lazy.index_of("e0000399");
    let all: Vec<usize> = lazy.path(leaf);
    for budget in [0.0, 500.0, 3000.0] {
        let a = branch::prepare_branch_entries(&lazy, &all, budget);
        let b = branch::prepare_branch_entries(&parsed, &all, budget);
        assert!(a.messages.len() > 10 || budget > 0.0, "{} messages", a.messages.len());
        assert_eq!(a, b, "budget {budget}");
        assert_eq!(a.serialized(), b.serialized());
    }
    for &i in &all {
        assert_eq!(branch::branch_message(&lazy, i), branch::branch_message(&parsed, i), "entry {i}");
    }
}
