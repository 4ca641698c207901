//! UTF-16 helpers: JavaScript string lengths, slicing and sorting, and the lone-surrogate
//! stand-ins.

pub(super) const STANDIN_BASE: u32 = 0x10F800;

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

/// The UTF-16 units of UTF-8 `bytes` in one branch-free pass the compiler vectorizes: a char's
/// first byte counts 1, a continuation byte 0, a 4-byte char's first byte 2, and with `ESCAPED`
/// every character `JSON.stringify` escapes adds its escape's extra length (`\n` one, `\u001f`
/// five). `None` when a char from U+100000 on is there (first byte 0xF4: the lone-surrogate
/// stand-ins live there, and they count otherwise): the caller takes its exact pass then.
pub(crate) fn units_fast<const ESCAPED: bool>(bytes: &[u8]) -> Option<usize> {
    // Bitwise (not short-circuit) tests and a narrow accumulator per block: no branch per byte.
    #[inline(always)]
    fn share<const ESCAPED: bool>(b: u8) -> u8 {
        let lead = (b < 0x80) as u8 | (b >= 0xC0) as u8;
        let four = (b >= 0xF0) as u8;
        if !ESCAPED {
            return lead + four;
        }
        let short = (b == b'"') as u8
            | (b == b'\\') as u8
            | (b == b'\n') as u8
            | (b == b'\r') as u8
            | (b == b'\t') as u8
            | (b == 0x08) as u8
            | (b == 0x0C) as u8;
        let long = (b < 0x20) as u8 & (short ^ 1);
        lead + four + short + 5 * long
    }
    let mut units = 0usize;
    let mut high = 0u8;
    for block in bytes.chunks(8192) {
        // At most 6 per byte: 49,152 fits in a u16.
        let mut n = 0u16;
        let mut f4 = 0u8;
        for &b in block {
            n += share::<ESCAPED>(b) as u16;
            f4 |= (b == 0xF4) as u8;
        }
        units += n as usize;
        high |= f4;
    }
    (high == 0).then_some(units)
}

/// JavaScript `.length`.
pub fn utf16_len(s: &str) -> usize {
    units_fast::<false>(s.as_bytes()).unwrap_or_else(|| units_exact::<false>(s))
}

/// The exact count, char by char, for strings [`units_fast`] hands over: a stand-in is one
/// unit, or with `ESCAPED` the six units of its `\udXXX`; another char from U+10000 on is two.
pub(crate) fn units_exact<const ESCAPED: bool>(s: &str) -> usize {
    s.chars()
        .map(|c| match c as u32 {
            v if v >= STANDIN_BASE && ESCAPED => 6,
            v if v >= STANDIN_BASE => 1,
            v if v >= 0x10000 => 2,
            _ if !ESCAPED => 1,
            0x22 | 0x5C | 0x0A | 0x0D | 0x09 | 0x08 | 0x0C => 2,
            v if v < 0x20 => 6,
            _ => 1,
        })
        .sum()
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

pub(super) fn standin(surrogate: u16) -> char {
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

/// Sorts by [`cmp_utf16`] (JavaScript's default sort). When no string holds a character at or
/// above U+E000 (no UTF-8 byte 0xEE or above), UTF-16 order is byte order and the plain byte
/// sort runs (about four times faster on file lists, where every comparison walks a long shared
/// prefix). Equal strings are indistinguishable, so stability does not matter.
pub fn sort_utf16(v: &mut [String]) {
    if v.iter().all(|s| s.bytes().all(|b| b < 0xEE)) {
        v.sort_unstable();
    } else {
        v.sort_by(|a, b| cmp_utf16(a, b));
    }
}

#[cfg(test)]
mod tests {
    use crate::*;

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

    /// The byte-sort shortcut gives the order of the UTF-16 comparison, on lists with and
    /// without characters at or above U+E000 (private use, U+FFFF, pairs, stand-ins).
    #[test]
    fn sort_utf16_is_the_utf16_sort() {
        let alphabet = [
            "a",
            "b",
            "src/",
            "z",
            "é",
            "\u{7ff}",
            "\u{800}",
            "\u{d7ff}",
            "\u{e000}",
            "ﬁ",
            "\u{ffff}",
            "😀",
            "𝔘",
            "\u{10f800}",
            "\u{10fbff}",
            "/",
        ];
        let mut next = crate::testing::xorshift_usize(0x9e37_79b9_7f4a_7c15);
        for round in 0..2000 {
            // Half the lists stay below U+E000 (the shortcut), half may not.
            let pool = if round % 2 == 0 { &alphabet[..8] } else { &alphabet[..] };
            let mut v: Vec<String> =
                (0..next() % 12).map(|_| (0..next() % 6).map(|_| pool[next() % pool.len()]).collect()).collect();
            let mut want = v.clone();
            want.sort_by(|a, b| cmp_utf16(a, b));
            super::sort_utf16(&mut v);
            assert_eq!(v, want);
        }
    }

    #[test]
    fn utf16_sort_differs_from_code_point_sort() {
        let mut v = vec!["src/ﬁle.ts", "src/𝔘nicode.ts"];
        v.sort_by(|a, b| cmp_utf16(a, b));
        assert_eq!(v, vec!["src/𝔘nicode.ts", "src/ﬁle.ts"]);
    }
}
