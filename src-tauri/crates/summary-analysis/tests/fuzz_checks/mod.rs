//! The summary fuzz targets' checks (`session-engine/fuzz/fuzz_targets/summary.rs` and
//! `summary_diff.rs` include this file by path), so that a crashing input replays exactly in the
//! crate's normal tests (tests/fuzz_regressions.rs). Each function panics when the parser or
//! the diff breaks an invariant on `data`.
#![allow(dead_code)] // each including crate uses a different part

use summary_analysis::{diff, parse, print, replace_section};

/// The summary parser: `print(parse(t)) == t` for every text, the parse is deterministic, and
/// so is the round trip of the two halves of the input (split at a point its first byte picks).
/// Kept to the parser so it runs fast enough for long runs; `summary_diff` covers the rest.
pub fn summary(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let a = parse(text);
    assert_eq!(print(&a), text);
    assert_eq!(a, parse(text));
    let (x, y) = split(data, text);
    assert_eq!(print(&parse(x)), x);
    assert_eq!(print(&parse(y)), y);
}

/// What is built on the parse: `diff` between the two halves of the input does not panic, a text
/// diffed with itself is empty, and `replace_section` never panics.
pub fn summary_diff(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let a = parse(text);
    let (x, y) = split(data, text);
    let (px, py) = (parse(x), parse(y));
    let _ = diff(&px, &py);
    let _ = diff(&py, &px);
    assert!(diff(&a, &a).is_empty(), "a summary differs from itself");
    for i in 0..a.sections.len().min(4) {
        let _ = replace_section(text, i, y);
    }
}

/// The input split in two at a char boundary chosen by its first byte.
fn split<'a>(data: &[u8], text: &'a str) -> (&'a str, &'a str) {
    let mut at = data.first().map(|&b| b as usize * text.len() / 256).unwrap_or(0);
    while !text.is_char_boundary(at) {
        at += 1;
    }
    text.split_at(at)
}
