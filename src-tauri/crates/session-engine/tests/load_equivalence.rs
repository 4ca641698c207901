//! The loads built on the JSON parser against one another: a small file's single-pass open
//! (each line parsed whole, its second half on another thread) against the scan-then-parse open,
//! and a big file's lazily parsed branch preparation against one made on entries already parsed.
//! The parser itself is checked against its previous version in pi-json's
//! `tests/parser_equivalence.rs`, and its random texts are the ones drawn here too.

mod fuzz_checks;
#[path = "../../pi-json/tests/support/json_text.rs"]
mod json_text;

use json_text::text;
use pi_json::MAX_DEPTH;
use proptest::prelude::*;
use session_engine::{branch, session::EAGER_PARSE_MAX_BYTES, Session};

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
    let kind = prop::sample::select(vec![
        "message",
        "label",
        "session_info",
        "compaction",
        "session",
        "custom",
        "branch_summary",
    ]);
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

/// A big file's branch preparation (entries parsed for the call, messages moved out of their
/// parse) equals the one made on the same entries already parsed (messages copied out of the
/// session's cache), across messages of every role, duplicate `message` keys, escapes, tool
/// results, compactions and branch summaries.
#[test]
fn a_lazy_branch_preparation_equals_a_parsed_one() {
    let mut text =
        String::from(r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#);
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
                format!(
                    r#""type":"message","message":{{"role":"toolResult","toolCallId":"c{k}","content":[{{"type":"text","text":"{}"}}]}}"#,
                    "r".repeat(300)
                )
            }
            3 => format!(
                r#""type":"message","message":{{"role":"user","content":"first"}},"message":{{"role":"assistant","content":[{{"type":"text","text":"second {k}"}}]}}"#
            ),
            4 => format!(
                r#""type":"branch_summary","fromId":"x","summary":"went off {k}","details":{{"readFiles":["a{k}.rs"],"modifiedFiles":["m.rs"]}}"#
            ),
            5 => format!(r#""type":"compaction","summary":"s{k}","firstKeptEntryId":"e0000000","tokensBefore":{k}"#),
            _ => format!(
                r#""type":"message","message":{{"role":"bashExecution","command":"ls {k}","output":"o","exitCode":0}}"#
            ),
        };
        text.push_str(&format!(r#"{{"id":"{id}","parentId":{parent},"timestamp":"{ts}",{body}}}"#));
        text.push('\n');
        parent = format!("\"{id}\"");
    }
    // Padding past the eager limit, on a branch of its own, makes the file lazy.
    text.push_str(&format!(
        r#"{{"type":"custom","id":"pad","parentId":null,"timestamp":"{ts}","data":"{}"}}"#,
        "x".repeat(EAGER_PARSE_MAX_BYTES)
    ));
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

/// The open of a file of 1 to 8 MiB, whose halves are parsed by the threads that read them,
/// equals the load of the same bytes in one pass, wherever the middle falls: on lines that are
/// not UTF-8, not JSON, blank or only whitespace, on long lines and multi-byte text, with
/// whitespace before the header and after the last line.
#[test]
fn an_open_read_and_parsed_in_halves_equals_the_single_pass() {
    let dir = tempfile::tempdir().unwrap();
    let odd: [&[u8]; 6] = [
        b"{\"type\":\"message\",\"id\":\"bad\xff\",\"parentId\":null,\"timestamp\":\"t\",\"message\":{\"role\":\"us\xc3\"}}",
        b"{\"type\":\"message\",\"id\":",
        b"   \t ",
        "\u{a0}\u{2028}".as_bytes(),
        "{\"type\":\"custom\",\"id\":\"é😀\",\"parentId\":\"m0\",\"timestamp\":\"t\",\"data\":\"ü\\n\\u00e9\"}".as_bytes(),
        b"[1,2]",
    ];
    for pad in [0usize, 37, 511, 3001] {
        let mut text: Vec<u8> = b" \n".to_vec();
        text.extend_from_slice(br#"{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/p"}"#);
        text.push(b'\n');
        let mut k = 0;
        while text.len() < (1 << 20) + (1 << 18) {
            if k % 7 == 3 {
                text.extend_from_slice(odd[(k / 7) % odd.len()]);
            } else {
                let body = "x".repeat(if k % 5 == 0 { pad + 4000 } else { 300 + k % 97 });
                let parent = if k == 0 { "null".to_string() } else { format!("\"m{}\"", k - 1) };
                text.extend_from_slice(
                    format!(r#"{{"type":"message","id":"m{k}","parentId":{parent},"timestamp":"t","message":{{"role":"assistant","content":"{body} ö"}}}}"#)
                        .as_bytes(),
                );
            }
            text.push(b'\n');
            k += 1;
        }
        text.extend_from_slice(b"\n \n");
        let f = dir.path().join(format!("s{pad}.jsonl"));
        std::fs::write(&f, &text).unwrap();
        let opened = Session::open(&f).unwrap();
        let single = Session::from_bytes_with_splits(
            text.clone(),
            &mut session_engine::session::CounterIds { prefix: 'm', next: 0 },
            usize::MAX,
            usize::MAX,
        );
        assert!(single.len() > 200 && !single.diagnostics().is_empty(), "pad {pad}");
        fuzz_checks::same_load(&single, &opened);
        // And every split of the bytes near the middle, as the parts' threads would cut them.
        for h in (text.len() / 2..).step_by(997).take(8).chain([text.len() * 11 / 20]) {
            fuzz_checks::same_load(&single, &Session::from_bytes_in_parts(text.clone(), h));
        }
    }
}

/// The windowed open of a big file (lines indexed a window at a time, the bytes left in the
/// file) equals the load of the same bytes, with windows that cut lines, characters and the
/// trailing whitespace anywhere, on one thread or two: malformed, blank, NUL, not UTF-8, CRLF,
/// repeated headers and ids, orphans, labels, a name and a torn last line. What it cannot
/// decide by itself goes to the whole-file open, which gives the same session it always did.
#[test]
fn an_open_in_windows_equals_the_load_of_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let head = r#"{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/p"}"#;
    let mut text: Vec<u8> = format!("{head}\n").into_bytes();
    let odd: [&[u8]; 9] = [
        b"{\"type\":\"message\",\"id\":\"bad\xff\",\"parentId\":\"m1\",\"timestamp\":\"t\",\"message\":{\"role\":\"us\xc3\"}}",
        b"{\"type\":\"message\",\"id\":",
        b"   \t ",
        b"\0\0\0\0",
        "\u{a0}\u{2028}".as_bytes(),
        br#"{"type":"session","version":3,"id":"again"}"#,
        br#"{"type":"label","id":"l","parentId":"m2","timestamp":"t","targetId":"m1","label":"here"}"#,
        br#"{"type":"session_info","id":"n","parentId":"nowhere","timestamp":"t","name":" named "}"#,
        b"[1,2]",
    ];
    for k in 0..120 {
        if k % 9 == 4 {
            text.extend_from_slice(odd[(k / 9) % odd.len()]);
        } else {
            let parent = if k == 0 { "null".to_string() } else { format!("\"m{}\"", k % 5) };
            let body = "é😀".repeat(k % 23) + &"x".repeat(k * 37 % 500);
            text.extend_from_slice(
                format!(r#"{{"type":"message","id":"m{}","parentId":{parent},"timestamp":"t","message":{{"role":"user","content":"{body}"}}}}"#, k % 70)
                    .as_bytes(),
            );
        }
        text.extend_from_slice(if k % 17 == 0 { b"\r\n" } else { b"\n" });
    }
    for (name, tail) in [("torn", &b"{\"type\":\"mess"[..]), ("spaces", &b"\n \t\n\n"[..]), ("bare", &b""[..])] {
        let mut t = text.clone();
        t.extend_from_slice(tail);
        let f = dir.path().join(format!("{name}.jsonl"));
        std::fs::write(&f, &t).unwrap();
        let loaded = Session::from_bytes(t.clone());
        assert!(loaded.len() > 80 && loaded.diagnostics().len() > 10, "{name}");
        for window in [1, 13, 100, 4096, t.len() / 2, t.len() * 2] {
            for parallel_min in [0, 1000, usize::MAX] {
                let w = Session::open_in_windows_of(&f, window, parallel_min)
                    .unwrap_or_else(|| panic!("{name}: window {window} went to the whole-file open"));
                assert!(w.reads_lines_from_file());
                fuzz_checks::same_load(&loaded, &w);
                assert_eq!(
                    session_engine::context::estimate_context(
                        &session_engine::context::build_context(&w, w.file_leaf()).agent_messages()
                    ),
                    session_engine::context::estimate_context(
                        &session_engine::context::build_context(&loaded, loaded.file_leaf()).agent_messages()
                    ),
                    "{name}"
                );
            }
        }
    }
    // Left to the whole-file open: whitespace before the header, an older version, a first
    // line that is not JSON, trailing whitespace past the kept end, an empty file.
    let cases: [(&str, Vec<u8>); 5] = [
        ("leading", [&b" \n"[..], &text].concat()),
        ("v2", [&br#"{"type":"session","version":2,"id":"s","timestamp":"t","cwd":"/p"}"#[..], b"\n", &text].concat()),
        ("broken-first", [&b"{\"type\":\n"[..], &text].concat()),
        ("long-blank-tail", [&text[..], &vec![b' '; 70_000], b"\n"].concat()),
        ("empty", Vec::new()),
    ];
    for (name, t) in cases {
        let f = dir.path().join(format!("{name}.jsonl"));
        std::fs::write(&f, &t).unwrap();
        assert!(Session::open_in_windows_of(&f, 64, 0).is_none(), "{name}");
        let opened = Session::open_leaving_in_file(&f, 0).unwrap();
        fuzz_checks::same_load(&Session::from_bytes(t), &opened);
    }
}
