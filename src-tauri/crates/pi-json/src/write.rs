//! Writing: `JSON.stringify`.
//!
//! Non-ASCII is written raw, as JavaScript does; only `"`, `\\`, control characters and lone
//! surrogates (the stand-ins of `utf16`) are escaped. A string's plain runs are found eight bytes
//! a step and copied whole. Numbers use ECMAScript's shortest round-trip form (`ryu-js`).

use crate::utf16::{units_exact, units_fast, STANDIN_BASE};
use crate::value::Value;
use std::fmt::Write as _;

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
        Value::Obj(m) => {
            2 + m.len().saturating_sub(1)
                + m.0.iter().map(|(k, x)| quoted_utf16_len(k) + 1 + stringified_utf16_len(x)).sum::<usize>()
        }
    }
}

/// The UTF-16 length of a string literal as `JSON.stringify` writes it: the branch-free count
/// ([`units_fast`]) unless a char from U+100000 on needs the exact pass (stand-ins: six units).
fn quoted_utf16_len(s: &str) -> usize {
    2 + units_fast::<true>(s.as_bytes()).unwrap_or_else(|| units_exact::<true>(s))
}

pub fn number_to_string(n: f64) -> String {
    let mut s = String::new();
    write_number(&mut s, n);
    s
}

/// The first index from `i` on whose byte `JSON.stringify` may have to escape: `"`, `\\`, a
/// control character (below 0x20) or 0xF4 (the first byte of a lone-surrogate stand-in, and of
/// other characters from U+100000 on), or `s.len()`. Eight bytes a step, as the parser's
/// `find_special` (the lowest flagged byte of a word is exact).
#[inline]
fn find_escape(s: &[u8], mut i: usize) -> usize {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    while let Some(chunk) = s.get(i..i + 8) {
        let w = u64::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3], chunk[4], chunk[5], chunk[6], chunk[7]]);
        let q = w ^ (LO * b'"' as u64);
        let b = w ^ (LO * b'\\' as u64);
        let f = w ^ (LO * 0xF4);
        let hits = (q.wrapping_sub(LO) & !q)
            | (b.wrapping_sub(LO) & !b)
            | (f.wrapping_sub(LO) & !f)
            | (w.wrapping_sub(LO * 0x20) & !w);
        let m = hits & HI;
        if m != 0 {
            return i + (m.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while let Some(&c) = s.get(i) {
        if c == b'"' || c == b'\\' || c < 0x20 || c == 0xF4 {
            return i;
        }
        i += 1;
    }
    s.len()
}

/// A JSON string literal as `JSON.stringify` writes it. Plain runs are copied whole (a tool
/// call's arguments hold whole files: serializing a branch for its summary spent 80% of its
/// time here going byte by byte).
pub fn write_str(out: &mut String, s: &str) {
    out.reserve(s.len() + 2);
    out.push('"');
    let bytes = s.as_bytes();
    let mut start = 0;
    let mut i = 0;
    loop {
        i = find_escape(bytes, i);
        let Some(&b) = bytes.get(i) else { break };
        let esc: Option<&str> = match b {
            b'"' => Some("\\\""),
            b'\\' => Some("\\\\"),
            b'\n' => Some("\\n"),
            b'\r' => Some("\\r"),
            b'\t' => Some("\\t"),
            0x08 => Some("\\b"),
            0x0C => Some("\\f"),
            0..=0x1F => None,
            _ => {
                // 0xF4: possibly a stand-in (U+10F800.. is F4 8F A0..BF ..).
                if bytes.len() >= i + 4 && bytes[i + 1] == 0x8F && bytes[i + 2] >= 0xA0 {
                    let c = s[i..].chars().next().map(|c| c as u32).unwrap_or(0);
                    out.push_str(&s[start..i]);
                    let _ = write!(out, "\\u{:04x}", 0xD800 + (c - STANDIN_BASE));
                    start = i + 4;
                    i += 4;
                } else {
                    i += 1;
                }
                continue;
            }
        };
        out.push_str(&s[start..i]);
        match esc {
            Some(e) => out.push_str(e),
            None => {
                let _ = write!(out, "\\u{:04x}", b);
            }
        }
        i += 1;
        start = i;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// [`write_str`] as it was, byte by byte: the reference the tests compare it with.
#[cfg(test)]
fn write_str_naive(out: &mut String, s: &str) {
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

#[cfg(test)]
mod tests {
    /// The run-copying writer writes what the byte-by-byte one wrote, for strings mixing every
    /// character it escapes, stand-ins and other characters from U+100000 on (first byte 0xF4),
    /// at every offset within an eight-byte word.
    #[test]
    fn write_str_equals_the_byte_by_byte_writer() {
        let pieces = [
            "a",
            "plain text ",
            "0123456789abcdef",
            "\"",
            "\\",
            "\n",
            "\r",
            "\t",
            "\u{8}",
            "\u{c}",
            "\u{0}",
            "\u{1}",
            "\u{1f}",
            " ",
            "\u{7f}",
            "é",
            "€",
            "😀",
            "\u{100000}",
            "\u{10f7ff}",
            "\u{10f800}",
            "\u{10fbff}",
            "\u{10fc00}",
            "\u{10ffff}",
            "\u{2028}",
            "/",
        ];
        let mut next = crate::testing::xorshift_usize(0xdead_beef_cafe_f00d);
        for _ in 0..20000 {
            let s: String = (0..next() % 12).map(|_| pieces[next() % pieces.len()]).collect();
            let (mut fast, mut naive) = (String::from("x"), String::from("x"));
            super::write_str(&mut fast, &s);
            super::write_str_naive(&mut naive, &s);
            assert_eq!(fast, naive, "{s:?}");
        }
    }

    use super::quoted_utf16_len;
    use crate::utf16::units_exact;
    use crate::*;

    /// The vectorized length equals the exact one and the written literal's UTF-16 length, and
    /// the prefix-skipping comparison equals a char-by-char one, on every kind of character:
    /// escapes, control characters, 2-, 3- and 4-byte chars, lone-surrogate stand-ins.
    #[test]
    fn fast_utf16_length_and_order_equal_the_exact_ones() {
        let pieces = [
            "a",
            "\"",
            "\\",
            "\n",
            "\r",
            "\t",
            "\u{8}",
            "\u{c}",
            "\u{1}",
            "\u{1f}",
            " ",
            "é",
            "€",
            "\u{e000}",
            "\u{ffff}",
            "😀",
            "\u{10000}",
            "z",
            "/",
        ];
        let mut strings = vec![String::new()];
        let mut next = crate::testing::xorshift(0x9E37_79B9_7F4A_7C15);
        for _ in 0..3000 {
            let mut t = String::new();
            let seed = next();
            for k in 0..(seed % 40) {
                t.push_str(pieces[((seed >> (k % 50)) as usize + k as usize) % pieces.len()]);
            }
            strings.push(t);
        }
        // A lone surrogate read from JSON becomes a stand-in char; its literal is six units.
        let lone = parse(r#""x\ud800y""#).unwrap();
        strings.push(lone.as_str().unwrap().to_string());
        for t in &strings {
            assert_eq!(quoted_utf16_len(t), 2 + units_exact::<true>(t), "{t:?}");
            let mut w = String::new();
            write_str(&mut w, t);
            assert_eq!(quoted_utf16_len(t), utf16_len(&w), "{t:?} written as {w:?}");
            assert_eq!(utf16_len(t), crate::utf16::to_utf16(t).len(), "{t:?}");
            assert_eq!(units_exact::<false>(t), utf16_len(t), "{t:?}");
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
        for w in strings.windows(2).chain([
            ["aé".to_string(), "a😀".to_string()].as_slice(),
            ["a\u{ffff}b".to_string(), "a😀".to_string()].as_slice(),
        ]) {
            assert_eq!(cmp_utf16(&w[0], &w[1]), by_chars(&w[0], &w[1]), "{:?} {:?}", w[0], w[1]);
            assert_eq!(cmp_utf16(&w[1], &w[0]), by_chars(&w[1], &w[0]));
            assert_eq!(cmp_utf16(&w[0], &w[0]), std::cmp::Ordering::Equal);
        }
        assert_eq!(
            cmp_utf16("a\u{ffff}", "a😀"),
            std::cmp::Ordering::Greater,
            "UTF-16 puts U+FFFF after a surrogate pair"
        );
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
    fn stringified_length_matches_the_string() {
        for t in [r#"{"a":[1,2.5,"x\"y\n\u0001",null,true,{"b":"é🚀\ud83d"}],"c":{}}"#, "[]", "\"\"", "1e21"] {
            let v = parse(t).unwrap();
            assert_eq!(stringified_utf16_len(&v), utf16_len(&to_string(&v)), "{t}");
        }
    }
}
