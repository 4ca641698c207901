//! Skipping over JSON by its structure only, without validating it: for readers that take a few
//! fields from a line and jump over the rest (a message's head, the session list's walk).

/// The index of the first byte at or after `i` that is not JSON whitespace.
#[inline]
pub fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// The index after the string whose opening quote is `b[i]`, from quote to quote: a quote after
/// an odd run of backslashes is escaped (so the escapes of code and output, frequent in tool
/// results, cost nothing). `None` when the string does not end.
#[inline]
pub fn skip_str(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    loop {
        let k = j + memchr::memchr(b'"', &b[j..])?;
        let run = b[j..k].iter().rev().take_while(|&&c| c == b'\\').count();
        if run % 2 == 0 {
            return Some(k + 1);
        }
        j = k + 1;
    }
}

/// The index after the value at `b[i]`, by its structure only: strings quote to quote, objects
/// and arrays by bracket depth, anything else up to the next delimiter. `None` when `b[i]` is a
/// delimiter (no value starts there) or the value does not end.
#[inline]
pub fn skip_value(b: &[u8], i: usize) -> Option<usize> {
    match *b.get(i)? {
        b'"' => skip_str(b, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            loop {
                match *b.get(j)? {
                    b'"' => {
                        j = skip_str(b, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
        }
        b',' | b'}' | b']' | b':' => None,
        _ => {
            let mut j = i;
            while j < b.len() && !matches!(b[j], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                j += 1;
            }
            Some(j)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_skipped_by_structure() {
        let s = br#"{"a":"x\"}","b":[1,{"c":"]"}],"d":-1.5e3 ,"e":true}"#;
        assert_eq!(skip_value(s, 0), Some(s.len()));
        assert_eq!(skip_str(s, 5), Some(11), "an escaped quote does not end the string");
        assert_eq!(skip_value(s, 16), Some(29), "brackets inside strings do not count");
        assert_eq!(skip_value(s, 34), Some(40), "a number ends at whitespace");
        assert_eq!(skip_ws(s, 40), 41);
        assert_eq!(skip_value(s, 41), None, "no value starts at a comma");
        assert_eq!(skip_str(br#""a\\"b"#, 0), Some(5), "an even run of backslashes leaves the quote closing");
        assert_eq!(skip_value(br#"{"a":"#, 0), None, "an unfinished object");
    }
}
