//! JavaScript's whitespace rules (`trim`), as Pi applies them to lines and names.

/// Per-line trimming rules of JavaScript's `String.prototype.trim`.
pub fn is_js_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}' | '\u{2028}' | '\u{2029}' | '\u{202F}' | '\u{205F}' | '\u{3000}' | '\u{FEFF}'
    )
}

/// Empty after JavaScript's `trim()` (Pi skips such lines silently).
pub(crate) fn js_is_blank(line: &[u8]) -> bool {
    // Only the first byte that is not ASCII whitespace matters: ASCII means not blank, and a
    // non-ASCII start is decoded only as far as it stays whitespace.
    match line.iter().position(|b| !matches!(b, b' ' | b'\t' | b'\r' | 0x0B | 0x0C)) {
        None => true,
        Some(i) if line[i] < 0x80 => false,
        Some(i) => js_trim_start(&line[i..]) == line.len() - i,
    }
}

/// JavaScript's `String.prototype.trim` (Pi trims session names with it).
pub fn js_trim(s: &str) -> &str {
    s.trim_matches(is_js_space)
}

/// Byte length of the JS-whitespace prefix of `buf`.
pub(super) fn js_trim_start(buf: &[u8]) -> usize {
    let mut i = 0;
    while i < buf.len() {
        let b = buf[i];
        if matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0B | 0x0C) {
            i += 1;
            continue;
        }
        if b < 0x80 {
            break;
        }
        let rest = &buf[i..buf.len().min(i + 4)];
        let c = match std::str::from_utf8(rest) {
            Ok(s) => s.chars().next(),
            Err(e) => std::str::from_utf8(&rest[..e.valid_up_to()]).ok().and_then(|s| s.chars().next()),
        };
        match c {
            Some(c) if is_js_space(c) => i += c.len_utf8(),
            _ => break,
        }
    }
    i
}

pub(super) fn js_trim_end(buf: &[u8], start: usize) -> usize {
    let mut end = buf.len();
    while end > start {
        let b = buf[end - 1];
        if matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0B | 0x0C) {
            end -= 1;
            continue;
        }
        if b < 0x80 {
            break;
        }
        // Find the start of the last UTF-8 sequence.
        let mut s = end - 1;
        while s > start && (buf[s] & 0xC0) == 0x80 && end - s < 4 {
            s -= 1;
        }
        match std::str::from_utf8(&buf[s..end]).ok().and_then(|t| t.chars().next()) {
            Some(c) if is_js_space(c) => end = s,
            _ => break,
        }
    }
    end
}
