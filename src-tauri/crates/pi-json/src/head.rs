//! `message.role`, whether `content` is there and a numeric `message.timestamp`, read by walking
//! a line the loader already validated: what a session picker needs from every message without a
//! DOM (the library's phase 1). A member of the engine's reader family beside `scan`: `None`
//! sends the caller to the DOM whenever the walk is unsure.
//!
//! One known difference from the DOM: a repeated `role` after a first one that does not count
//! (not a string) is missed by the streamed catalog; it only changes a picker count.

use crate::skip::{skip_str, skip_value, skip_ws};

/// `message.role`, whether `content` is present, and `message.timestamp` when it is a number:
/// what Pi's picker needs from every message, read without building the DOM.
///
/// The line was already validated by the engine's loader (it is an entry of the session), so
/// this only walks its structure: strings are skipped with `memchr`, and the walk stops as soon
/// as the role shows the message does not count (tool results: half of the bytes). `None`: the
/// line needs the DOM (an escaped key or role, a `message` that is not an object, a repeated
/// `message` key). Known limit: a repeated `role` key after a non-counting first one is not seen.
/// (role, `content` present, numeric timestamp)
pub type MessageHead = (Option<String>, bool, Option<f64>);

/// One step through an object's members, from just after `{` or after a member's value.
enum Member<'a> {
    /// A key, and the index of its value.
    Key(&'a [u8], usize),
    /// The closing brace; the index after it.
    End(usize),
}

/// `None`: the line needs the DOM (an escaped key, or not the shape expected).
fn next_member(b: &[u8], mut i: usize) -> Option<Member<'_>> {
    loop {
        i = skip_ws(b, i);
        match b.get(i)? {
            b'}' => return Some(Member::End(i + 1)),
            b',' => {
                i += 1;
                continue;
            }
            b'"' => {}
            _ => return None,
        }
        let (key, esc, after) = read_str(b, i)?;
        if esc {
            return None;
        }
        i = skip_ws(b, after);
        if b.get(i) != Some(&b':') {
            return None;
        }
        return Some(Member::Key(key, skip_ws(b, i + 1)));
    }
}

pub fn message_head(b: &[u8]) -> Option<MessageHead> {
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    let mut found: Option<MessageHead> = None;
    loop {
        let key = match next_member(b, i)? {
            Member::End(_) => return found,
            Member::Key(key, at) => {
                i = at;
                key
            }
        };
        if key == b"message" {
            if found.is_some() {
                return None; // a repeated key: JSON.parse keeps the last; let the DOM decide
            }
            let (head, end) = message_object(b, i)?;
            if end == usize::MAX {
                return Some(head); // stopped early (the message does not count)
            }
            found = Some(head);
            i = end;
        } else {
            i = skip_value(b, i)?;
        }
    }
}

/// Reads the message object at `b[i]`. Returns the facts and the index after the object, or
/// `usize::MAX` when the walk stopped early.
fn message_object(b: &[u8], mut i: usize) -> Option<(MessageHead, usize)> {
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    let (mut role, mut content, mut ts) = (None, false, None);
    loop {
        let key = match next_member(b, i)? {
            Member::End(end) => return Some(((role, content, ts), end)),
            Member::Key(key, at) => {
                i = at;
                key
            }
        };
        match key {
            b"role" => {
                if b.get(i) == Some(&b'"') {
                    let (r, esc, after) = read_str(b, i)?;
                    if esc {
                        return None;
                    }
                    let r = std::str::from_utf8(r).ok()?;
                    let counts = matches!(r, "user" | "assistant");
                    role = Some(r.to_string());
                    if !counts {
                        return Some(((role, content, ts), usize::MAX));
                    }
                    i = after;
                } else {
                    role = None;
                    i = skip_value(b, i)?;
                }
            }
            b"content" => {
                content = true;
                i = skip_value(b, i)?;
            }
            b"timestamp" => {
                let end = skip_value(b, i)?;
                let t = std::str::from_utf8(&b[i..end]).ok()?.trim_end();
                ts = if t.starts_with(|c: char| c == '-' || c.is_ascii_digit()) { t.parse::<f64>().ok() } else { None };
                i = end;
            }
            _ => i = skip_value(b, i)?,
        }
    }
}

/// The string at `b[i]` (a quote): (its raw bytes, whether it has escapes, index after it).
#[inline]
fn read_str(b: &[u8], i: usize) -> Option<(&[u8], bool, usize)> {
    let end = skip_str(b, i)?;
    let raw = &b[i + 1..end - 1];
    Some((raw, memchr::memchr(b'\\', raw).is_some(), end))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse_bytes, Value};

    /// The structural head reader agrees with the DOM on every message line of the corpus.
    #[test]
    fn message_head_agrees_with_the_dom() {
        let base = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../session-engine/tests/fixtures");
        let mut lines: Vec<Vec<u8>> = vec![
            br#"{"type":"message","message":{"role":"user","content":"a \"b\" \\","timestamp":17}}"#.to_vec(),
            br#"{"message":{"content":[{"t":"x]}"}],"role":"assistant","timestamp":-1.5e3},"type":"message"}"#.to_vec(),
            br#"{"message":{"role":"toolResult","content":null,"timestamp":"no"}}"#.to_vec(),
            br#"{"message":{"role":"user","timestamp":"2025"}}"#.to_vec(),
            br#"{"message":{"role":"user"},"message":{"role":"assistant","content":1}}"#.to_vec(),
            br#"{"message":{"r\u006fle":"user","content":1}}"#.to_vec(),
            br#"{ "message" : { "role" : "assistant" , "content" : [ ] , "timestamp" : 5 } }"#.to_vec(),
        ];
        let mut n = 0;
        for sub in ["conformance", "random"] {
            for e in std::fs::read_dir(base.join(sub)).unwrap().flatten() {
                if e.path().extension().is_some_and(|x| x == "jsonl") {
                    let text = std::fs::read(e.path()).unwrap();
                    lines.extend(
                        text.split(|&c| c == b'\n')
                            .filter(|l| l.windows(9).any(|w| w == b"\"message\""))
                            .map(<[u8]>::to_vec),
                    );
                }
            }
        }
        for l in &lines {
            let Ok(v) = parse_bytes(l) else { continue };
            let Some(m) = v.get("message") else { continue };
            let role = m.str_field("role").map(str::to_string);
            let want = (role.clone(), m.get("content").is_some(), m.get("timestamp").and_then(Value::as_f64));
            if let Some(got) = message_head(l) {
                n += 1;
                if matches!(role.as_deref(), Some("user" | "assistant")) {
                    assert_eq!(got, want, "{}", String::from_utf8_lossy(l));
                } else {
                    assert_eq!(got.0, want.0, "{}", String::from_utf8_lossy(l));
                }
            }
        }
        assert!(n > 500, "{n}");
        assert!(message_head(br#"{"message":{"role":"user"},"message":{"role":"assistant","content":1}}"#).is_none());
        assert!(message_head(br#"{"message":{"r\u006fle":"user","content":1}}"#).is_none());
    }
}
