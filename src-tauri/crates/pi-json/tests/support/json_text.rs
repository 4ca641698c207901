//! Random JSON-ish texts for the parser's tests: pi-json's `parser_equivalence.rs` and the
//! engine's `load_equivalence.rs` include this file by path, so both draw the same texts.
#![allow(dead_code)] // each including test crate uses a different part
use proptest::prelude::*;

/// String contents: plain runs of every length (the scanner works eight bytes a step), the
/// characters that end a run (quotes, backslashes, raw control characters), valid and broken
/// escapes, surrogate pairs and lone surrogates, multi-byte UTF-8.
pub fn string_body() -> impl Strategy<Value = String> {
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

pub fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (any::<bool>(), "[1-9][0-9]{0,19}").prop_map(|(n, d)| format!("{}{d}", if n { "-" } else { "" })),
        1 => prop::sample::select(vec!["0", "-0", "-0.0", "0e5", "1e400", "-1e-400", "123456789012345", "1234567890123456", "9007199254740993", "01", "-", "1.", ".5", "1e", "1e+", "2E-3"]).prop_map(str::to_string),
        2 => (any::<bool>(), "[0-9]{1,4}", "[0-9]{1,18}", proptest::option::of((prop::sample::select(vec!["e", "E", "e+", "e-"]), "[0-9]{1,3}")))
            .prop_map(|(n, i, f, e)| format!("{}{}.{f}{}", if n { "-" } else { "" }, i.trim_start_matches('0').chars().next().map_or("0".to_string(), |_| i.trim_start_matches('0').to_string()), e.map_or(String::new(), |(e, x)| format!("{e}{x}")))),
    ]
}

pub fn ws() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["", "", "", " ", "\n", "\t \r\n"])
}

/// A JSON-ish text: mostly valid, with keys drawn from a few names so objects repeat keys.
pub fn text() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        3 => string_body().prop_map(|s| format!("\"{s}\"")),
        3 => number(),
        1 => prop::sample::select(vec!["true", "false", "null", "tru", "nul"]).prop_map(str::to_string),
    ];
    leaf.prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            (prop::collection::vec((inner.clone(), ws()), 0..8)).prop_map(|v| format!(
                "[{}]",
                v.into_iter().map(|(x, w)| format!("{w}{x}{w}")).collect::<Vec<_>>().join(",")
            )),
            (prop::collection::vec(
                (prop::sample::select(vec!["id", "type", "a", "ab", "", "role", "@", "\\u0069d", "A"]), inner, ws()),
                0..8
            ))
            .prop_map(|v| format!(
                "{{{}}}",
                v.into_iter().map(|(k, x, w)| format!("{w}\"{k}\"{w}:{w}{x}{w}")).collect::<Vec<_>>().join(",")
            )),
        ]
    })
}
