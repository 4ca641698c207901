//! Scanning appended bytes (a chunk of a session file that starts at a line boundary, after the
//! header) into entries with the loader's rules ([`crate::Session`]), for indexes that follow a
//! file by byte offset instead of loading it whole.
//!
//! Rules, as in the loader:
//! * lines are split on `\n`; a line that is blank by JavaScript's `trim` is skipped;
//! * a line that is not valid JSON is skipped ([`DiagnosticKind::Malformed`], or
//!   [`DiagnosticKind::NulBytes`] for a run of NULs);
//! * valid JSON that is not an object, or an object without a string `id`, is skipped
//!   ([`DiagnosticKind::InvalidEntry`]); a repeated `session` header is ignored
//!   ([`DiagnosticKind::ExtraHeader`]);
//! * invalid UTF-8 is decoded with U+FFFD, as Pi does;
//! * the last line without a trailing `\n` (at the end of the file) is an entry when it is
//!   valid JSON (the loader's `Unterminated`), and *pending* when it is not (an append in
//!   progress, or a torn tail): pending bytes are not consumed, so the caller reads them again
//!   once they are complete.
//!
//! [`scan_catalog`] is the same scan for a session list that a full load follows: its entries
//! ([`CatalogEntry`]) keep only what a list reads, as places in the line, and with `walk` a
//! complete line after the chunk's first valid JSON line is walked for its structure and
//! top-level fields instead of validated, so a malformed line whose brackets and quotes balance
//! can be taken for an entry (see its notes).
//!
//! What this module does not do: the header (the caller has one, from a full load), the v1/v2
//! migration (legacy files are loaded whole), and the id index (the caller keeps it).

use crate::session::load::{entry_fields, EntryFields, NotAnEntry};
use crate::session::{js_is_blank, DiagnosticKind, Kind};
use pi_json::skip::{skip_value, skip_ws};
use pi_json::{Field, RawStr, ScannedLine, Value};
use std::borrow::Cow;

/// One entry line of a chunk.
#[derive(Clone, Debug)]
pub struct ChunkEntry {
    /// Byte range of the line in the chunk (without the `\n`).
    pub start: usize,
    pub end: usize,
    pub kind: Kind,
    pub type_name: String,
    pub id: String,
    pub parent_id: Option<String>,
    pub timestamp: String,
    /// The line had invalid UTF-8 (decoded with U+FFFD).
    pub lossy: bool,
}

/// A line's text as the loader sees it (lossy-decoded when the bytes are not UTF-8).
fn line_text(chunk: &[u8], start: usize, end: usize, lossy: bool) -> Cow<'_, [u8]> {
    let raw = &chunk[start..end];
    if lossy {
        Cow::Owned(String::from_utf8_lossy(raw).into_owned().into_bytes())
    } else {
        Cow::Borrowed(raw)
    }
}

impl ChunkEntry {
    /// The entry's text as the loader sees it (lossy-decoded when the bytes are not UTF-8).
    pub fn text<'a>(&self, chunk: &'a [u8]) -> Cow<'a, [u8]> {
        line_text(chunk, self.start, self.end, self.lossy)
    }
    /// The entry's full JSON (`null` for a line nested deeper than [`pi_json::MAX_DEPTH`], as
    /// [`crate::Session::value`]).
    pub fn value(&self, chunk: &[u8]) -> Value {
        pi_json::parse_bytes(&self.text(chunk)).unwrap_or(Value::Null)
    }
}

/// `message.role` as a session list tells it apart (it counts user and assistant messages and
/// takes the model from assistant ones).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
    Other,
}

impl Role {
    pub fn of(role: &str) -> Role {
        Role::of_bytes(role.as_bytes())
    }
    fn of_bytes(role: &[u8]) -> Role {
        match role {
            b"user" => Role::User,
            b"assistant" => Role::Assistant,
            _ => Role::Other,
        }
    }
}

/// A message's `role` (`None`: absent or not a string), whether it has `content`, and its
/// `timestamp` when a number: [`pi_json::MessageHead`] with the role told apart, not copied.
pub type CatalogHead = (Option<Role>, bool, Option<f64>);

/// One entry line as [`scan_catalog`] gives it: its place, kind and message head, with its `id`
/// and `timestamp` left in the line until asked for. A session list reads the id of one entry
/// per window and the timestamp of few; copying out four strings per entry was a tenth of a
/// cold listing's CPU.
#[derive(Clone, Copy, Debug)]
pub struct CatalogEntry {
    /// Byte range of the line in the chunk (without the `\n`).
    pub start: usize,
    pub end: usize,
    pub kind: Kind,
    /// The line had invalid UTF-8 (decoded with U+FFFD; the places below are in the decoded text).
    pub lossy: bool,
    id: RawStr,
    timestamp: Option<RawStr>,
    /// `message.role`, whether the message has `content`, and its `timestamp` when a number (as
    /// [`pi_json::message_head`] gives them, and `JSON.parse` reads a repeated key: the last),
    /// taken on the way by [`scan_catalog`]'s walk when the top-level `message` is an object
    /// without escaped keys. `None` otherwise: read the line.
    pub message: Option<CatalogHead>,
}

impl CatalogEntry {
    /// The entry's text as the loader sees it (lossy-decoded when the bytes are not UTF-8).
    pub fn text<'a>(&self, chunk: &'a [u8]) -> Cow<'a, [u8]> {
        line_text(chunk, self.start, self.end, self.lossy)
    }
    /// The entry's full JSON, as [`ChunkEntry::value`].
    pub fn value(&self, chunk: &[u8]) -> Value {
        pi_json::parse_bytes(&self.text(chunk)).unwrap_or(Value::Null)
    }
    /// The entry's `id`, decoded as [`ChunkEntry::id`].
    pub fn id(&self, chunk: &[u8]) -> String {
        pi_json::raw_str(&self.text(chunk), self.id)
    }
    /// The entry's top-level `timestamp` as [`ChunkEntry::timestamp`] ("" when absent or not a
    /// string), borrowed from the chunk when it needs no decoding.
    pub fn timestamp<'a>(&self, chunk: &'a [u8]) -> Cow<'a, str> {
        let Some(r) = self.timestamp else { return Cow::Borrowed("") };
        if !self.lossy {
            if let Some(s) = pi_json::raw_str_borrowed(&chunk[self.start..self.end], r) {
                return Cow::Borrowed(s);
            }
        }
        Cow::Owned(pi_json::raw_str(&self.text(chunk), r))
    }
}

/// What [`scan`] (entries [`ChunkEntry`]) or [`scan_catalog`] (entries [`CatalogEntry`]) found.
#[derive(Clone, Debug)]
pub struct Scan<E = ChunkEntry> {
    pub entries: Vec<E>,
    /// Skipped lines: (start offset in the chunk, why).
    pub skipped: Vec<(usize, DiagnosticKind)>,
    /// Bytes handled (complete lines, and an unterminated last line that is valid JSON). The
    /// rest is pending.
    pub consumed: usize,
    /// The last consumed line had no trailing `\n` (see the module notes).
    pub unterminated: bool,
}

impl<E> Default for Scan<E> {
    fn default() -> Self {
        Scan { entries: Vec::new(), skipped: Vec::new(), consumed: 0, unterminated: false }
    }
}

/// Scans `chunk` (starting at a line boundary). `at_eof`: the chunk ends where the file ends,
/// so an unterminated last line that is valid JSON is an entry (otherwise it stays pending).
pub fn scan(chunk: &[u8], at_eof: bool) -> Scan {
    scan_with(chunk, at_eof, false, |start, end, lossy, text, scanned, _| {
        let EntryFields { type_name, id, parent_id, timestamp } = entry_fields(text, scanned)?;
        Ok(ChunkEntry { start, end, kind: Kind::from_type(&type_name), type_name, id, parent_id, timestamp, lossy })
    })
}

/// [`scan`] for a session list that a full load of the same bytes will follow (the library's
/// catalog, then its full-text pass): the same lines, offsets and skips, each entry a
/// [`CatalogEntry`] (nothing copied out of its line).
///
/// With `walk`, lines up to the chunk's first valid JSON line (the one that decides whether the
/// file is a session) and an unterminated last line (pending or an entry) are validated as
/// [`scan`] does; every other line is walked for its structure and top-level `type`, `id` and
/// `timestamp` and its message's head without validating strings, numbers or literals, about
/// twice as fast. A valid line gets exactly [`scan`]'s answer (the walk hands anything it is
/// unsure of, such as an escaped key or field, to the validator). A malformed line whose quotes
/// and brackets balance can be taken for an entry, or for a line that is not one: never the
/// reverse, so such a file has fewer `skipped` lines here than in [`scan`], which is how the
/// full load that follows knows to correct what was listed. Offsets, `consumed` and
/// `unterminated` are always [`scan`]'s.
pub fn scan_catalog(chunk: &[u8], at_eof: bool, walk: bool) -> Scan<CatalogEntry> {
    scan_with(chunk, at_eof, walk, |start, end, lossy, text, scanned, message| {
        let (kind, id, timestamp) = catalog_fields(text, scanned)?;
        Ok(CatalogEntry { start, end, kind, lossy, id, timestamp, message })
    })
}

/// [`entry_fields`]' decision and the entry's kind, with the `id` and `timestamp` left in place.
fn catalog_fields(text: &[u8], scanned: &ScannedLine) -> Result<(Kind, RawStr, Option<RawStr>), NotAnEntry> {
    if !scanned.is_object {
        return Err(NotAnEntry::NotObject);
    }
    let kind = match scanned.type_ {
        Field::Str(r) if !r.escaped => match &text[r.start as usize..r.end as usize] {
            b"session" => return Err(NotAnEntry::Header),
            t => std::str::from_utf8(t).map_or(Kind::Other, Kind::from_type),
        },
        Field::Str(r) => match pi_json::raw_str(text, r).as_str() {
            "session" => return Err(NotAnEntry::Header),
            t => Kind::from_type(t),
        },
        _ => Kind::Other,
    };
    let Field::Str(id) = scanned.id else { return Err(NotAnEntry::NoId) };
    let timestamp = match scanned.timestamp {
        Field::Str(r) => Some(r),
        _ => None,
    };
    Ok((kind, id, timestamp))
}

/// The scan's line loop. `make` turns a line that is JSON (start, end, lossy, its text, its
/// top-level fields, the message head the walk took) into an entry, or says why it is none.
fn scan_with<E>(
    chunk: &[u8],
    at_eof: bool,
    lazy: bool,
    mut make: impl FnMut(usize, usize, bool, &[u8], &ScannedLine, Option<CatalogHead>) -> Result<E, NotAnEntry>,
) -> Scan<E> {
    let mut out = Scan::default();
    // [`scan_catalog`]: walk instead of validate, once a line was valid JSON
    let mut walk = false;
    let mut pos = 0usize;
    while pos < chunk.len() {
        let (end, terminated) = match memchr::memchr(b'\n', &chunk[pos..]) {
            Some(o) => (pos + o, true),
            None => (chunk.len(), false),
        };
        let line = &chunk[pos..end];
        let start = pos;
        let next = if terminated { end + 1 } else { end };
        if js_is_blank(line) {
            if terminated {
                out.consumed = next;
            }
            pos = next;
            continue;
        }
        if !terminated && !at_eof {
            break;
        }
        // simdutf8 answers what `std::str::from_utf8` answers, faster (5 % of a cold listing).
        let lossy = simdutf8::basic::from_utf8(line).is_err();
        let owned;
        let text: &[u8] = if lossy {
            owned = String::from_utf8_lossy(line).into_owned().into_bytes();
            &owned
        } else {
            line
        };
        let walked = if walk && terminated && !lossy { walk_line(line) } else { None };
        let (walked, message) = match walked {
            Some((s, m)) => (Some(s), m),
            None => (None, None),
        };
        let scanned = match walked.map_or_else(|| pi_json::scan_line_fast(text), Ok) {
            Ok(s) => s,
            Err(_) => {
                if !terminated {
                    break; // pending: an append in progress or a torn tail
                }
                let kind = if line.iter().all(|&b| b == 0 || b == b'\r') {
                    DiagnosticKind::NulBytes
                } else {
                    DiagnosticKind::Malformed
                };
                out.skipped.push((start, kind));
                out.consumed = next;
                pos = next;
                continue;
            }
        };
        out.consumed = next;
        out.unterminated = !terminated;
        pos = next;
        walk = lazy;
        match make(start, end, lossy, text, &scanned, message) {
            Ok(e) => out.entries.push(e),
            Err(why) => out.skipped.push((start, why.kind())),
        }
    }
    out
}

/// The top-level fields a session list reads from an object line (`type`, `id`, `timestamp`),
/// found by walking its structure (strings skipped from quote to quote with `memchr`) as
/// [`pi_json::scan_line_fast`] reads them from a valid line: a repeated key's last value wins,
/// as in `JSON.parse`. `None` hands the line to the validator: not an object, unbalanced,
/// something after the object, or an escaped top-level key or escaped `type`, `id` or
/// `timestamp` (rare; the validator decodes them). Also the message's head (see
/// [`CatalogEntry::message`]).
fn walk_line(s: &[u8]) -> Option<(ScannedLine, Option<CatalogHead>)> {
    let mut out = ScannedLine { is_object: true, role: Some(Field::Absent), ..Default::default() };
    let mut message = None;
    let mut i = skip_ws(s, 0);
    if s.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    loop {
        i = skip_ws(s, i);
        match *s.get(i)? {
            b'}' => break,
            b',' => {
                i += 1;
                continue;
            }
            b'"' => {}
            _ => return None,
        }
        let (key_end, escaped) = str_end(s, i)?;
        if escaped {
            return None;
        }
        let key = &s[i + 1..key_end - 1];
        let is_message = key == b"message";
        let slot = match key {
            b"type" => Some(&mut out.type_),
            b"id" => Some(&mut out.id),
            b"timestamp" => Some(&mut out.timestamp),
            _ => None,
        };
        i = skip_ws(s, key_end);
        if s.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(s, i + 1);
        let end = if is_message {
            let (end, head) = walk_message(s, i)?;
            message = head;
            end
        } else {
            skip_value(s, i)?
        };
        if let Some(slot) = slot {
            *slot = match s[i] {
                b'"' => {
                    let (_, escaped) = str_end(s, i)?;
                    if escaped {
                        return None;
                    }
                    Field::Str(RawStr::at(i + 1, end - 1, false).ok()?)
                }
                _ if &s[i..end] == b"null" => Field::Null,
                _ => Field::Other,
            };
        }
        i = end;
    }
    (skip_ws(s, i + 1) == s.len()).then_some((out, message))
}

/// The index after the `message` value at `s[i]`, and its head when it is an object whose keys
/// have no escapes (`None`: the caller reads the line).
fn walk_message(s: &[u8], mut i: usize) -> Option<(usize, Option<CatalogHead>)> {
    if *s.get(i)? != b'{' {
        return Some((skip_value(s, i)?, None));
    }
    i += 1;
    let (mut role, mut content, mut ts, mut sure) = (None, false, None, true);
    loop {
        i = skip_ws(s, i);
        match *s.get(i)? {
            b'}' => return Some((i + 1, sure.then_some((role, content, ts)))),
            b',' => {
                i += 1;
                continue;
            }
            b'"' => {}
            _ => return None,
        }
        let (key_end, escaped) = str_end(s, i)?;
        let key = &s[i + 1..key_end - 1];
        sure &= !escaped;
        i = skip_ws(s, key_end);
        if s.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(s, i + 1);
        let end = skip_value(s, i)?;
        match key {
            _ if escaped => {}
            b"role" => {
                role = None;
                if s[i] == b'"' {
                    let (_, escaped) = str_end(s, i)?;
                    sure &= !escaped;
                    role = Some(Role::of_bytes(&s[i + 1..end - 1]));
                }
            }
            b"content" => content = true,
            b"timestamp" => {
                // as `message_head` reads it
                let t = std::str::from_utf8(&s[i..end]).ok()?.trim_end();
                ts = if t.starts_with(|c: char| c == '-' || c.is_ascii_digit()) { t.parse::<f64>().ok() } else { None };
            }
            _ => {}
        }
        i = end;
    }
}

/// The index after the string whose opening quote is `s[i]`, and whether it holds a backslash.
#[inline]
fn str_end(s: &[u8], i: usize) -> Option<(usize, bool)> {
    let mut j = i + 1;
    let mut escaped = false;
    loop {
        let k = j + memchr::memchr2(b'"', b'\\', &s[j..])?;
        if s[k] == b'"' {
            return Some((k + 1, escaped));
        }
        escaped = true;
        j = k + 2; // the escaped byte (a quote or a backslash among them) is not a delimiter
        if j > s.len() {
            return None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Session;

    const H: &str = r#"{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#;

    #[test]
    fn chunk_entries_match_the_loader() {
        let body = concat!(
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"t1","message":{"role":"user","content":"hi"}}"#,
            "\n   \n{not json\n[1,2]\n",
            r#"{"type":"session","id":"again"}"#,
            "\n",
            r#"{"type":"custom","id":"b","parentId":"a","timestamp":"t2"}"#,
            "\n",
            r#"{"type":"label","id":"c","parentId":"b","timestamp":"t3","targetId":"a","label":"x"}"#
        );
        let session = Session::from_bytes(format!("{H}\n{body}").into_bytes());
        let c = scan(body.as_bytes(), true);
        assert_eq!(c.entries.len(), session.len());
        for (i, e) in c.entries.iter().enumerate() {
            assert_eq!(e.id, session.id(i));
            assert_eq!(e.kind, session.kind(i));
            assert_eq!(e.parent_id.as_deref(), session.entry(i).parent_id.as_deref());
            assert_eq!(&body.as_bytes()[e.start..e.end], &*session.raw(i));
        }
        assert_eq!(c.consumed, body.len());
        assert!(c.unterminated);
        assert_eq!(c.skipped.len(), 3);
    }

    #[test]
    fn a_torn_tail_is_pending_and_a_complete_one_only_at_eof() {
        let full = r#"{"type":"custom","id":"b","parentId":null,"timestamp":"t2"}"#;
        let torn = format!("{full}\n{}", &full[..20]);
        let c = scan(torn.as_bytes(), true);
        assert_eq!((c.entries.len(), c.consumed, c.unterminated), (1, full.len() + 1, false));
        let c = scan(full.as_bytes(), false);
        assert_eq!((c.entries.len(), c.consumed), (0, 0));
        let c = scan(b"\n\n", true);
        assert_eq!((c.entries.len(), c.consumed), (0, 2));
    }

    /// `scan_catalog` gives `scan`'s answer on every valid line (conformance, random-oracle,
    /// real Pi and fuzz sessions, and lines that send the walk to the validator), and where they
    /// differ, only because its walk took a malformed line for an entry or a non-entry; without
    /// the walk it gives `scan`'s answer on every line.
    #[test]
    fn the_catalog_walk_agrees_with_the_scan_on_valid_lines() {
        let extra = concat!(
            r#"{"type":"session","version":3,"id":"s1","timestamp":"t","cwd":"/p"}"#,
            "\n",
            r#"{"type":"custom","id":"a\"b","parentId":null,"timestamp":"t\u0031"}"#,
            "\n",
            r#"{"id":"x","type":"custom","id":"y","parentId":"p","parentId":null}"#,
            "\n",
            r#"{"t\u0079pe":"message","id":"q","type":"label"}"#,
            "\n",
            r#"{"type":"custom","id":5}"#,
            "\n",
            r#" {"type":"custom","id":"z","parentId":{"a":"}"},"timestamp":["\\\"]"],"n":-1.5e3} "#,
            "\n",
            r#"{"type":"session","id":"h2"}"#,
            "\n",
            r#"{"type":"custom","id":"v"} x"#,
            "\n",
            r#"{"type":"message","id":"m","message":{"role":"user","content":"say \\"}}"#,
            "\n",
            r#"{"type":"message","id":"m2","message":{"role":"toolResult","role":"user","content":1,"timestamp":-1.5e3}}"#,
            "\n",
            r#"{"type":"message","id":"m3","message":{"role":"user","timestamp":5,"timestamp":"x"},"message":{"r\u006fle":"user"}}"#,
            "\n",
            r#"{"type":"message","id":"m4","message":{"role":"us\u0065r","content":[]},"message":{"role":"assistant","content":null}}"#,
            "\n",
            r#"{"type":"message","id":"m5","message":{"content":{"role":"x"},"role":null},"message":[]}"#,
            "\n",
            r#"{"type":"message","id":"n","parentId":"m","n":tru}"#,
            "\n",
            r#"{"type":"custom","id":"o",}"#,
            "\n[1]\n\"s\"\n{}\n{\"id\":\"\u{1}\"}\n",
            r#"{"type":"custom","id":"last"}"#
        );
        let base = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let mut files = vec![extra.as_bytes().to_vec()];
        for sub in ["conformance", "random", "real-pi", "fuzz", "differential"] {
            let Ok(dir) = std::fs::read_dir(base.join(sub)) else { continue };
            for e in dir.flatten() {
                if e.path().extension().is_some_and(|x| x == "jsonl") {
                    files.push(std::fs::read(e.path()).unwrap());
                }
            }
        }
        assert!(files.len() > 80, "{}", files.len());
        let (mut walked_lines, mut differ, mut heads) = (0, 0, 0);
        for f in &files {
            for at_eof in [true, false] {
                let (exact, walked) = (scan(f, at_eof), scan_catalog(f, at_eof, true));
                let validated = scan_catalog(f, at_eof, false);
                assert_eq!((exact.consumed, exact.unterminated), (walked.consumed, walked.unterminated));
                let malformed: Vec<usize> = exact
                    .skipped
                    .iter()
                    .filter(|(_, k)| matches!(k, DiagnosticKind::Malformed | DiagnosticKind::NulBytes))
                    .map(|x| x.0)
                    .collect();
                let key = |e: &ChunkEntry| (e.start, e.end, e.kind, e.id.clone(), e.timestamp.clone());
                let key_c = |e: &CatalogEntry| (e.start, e.end, e.kind, e.id(f), e.timestamp(f).into_owned());
                // without the walk: every entry and every skipped line as the scan's
                assert_eq!(
                    validated.entries.iter().map(key_c).collect::<Vec<_>>(),
                    exact.entries.iter().map(key).collect::<Vec<_>>()
                );
                assert_eq!(
                    (&validated.skipped, validated.consumed, validated.unterminated),
                    (&exact.skipped, exact.consumed, exact.unterminated)
                );
                assert!(validated.entries.iter().all(|e| e.message.is_none()), "only the walk takes heads");
                let mut w = walked.entries.iter().peekable();
                for e in &exact.entries {
                    while let Some(x) = w.next_if(|x| x.start < e.start) {
                        assert!(malformed.contains(&x.start), "an entry the scan does not see: {:?}", key_c(x));
                        differ += 1;
                    }
                    assert_eq!(w.next().map(key_c), Some(key(e)));
                }
                for x in w {
                    assert!(malformed.contains(&x.start), "an entry the scan does not see: {:?}", key_c(x));
                    differ += 1;
                }
                // the message head taken on the way is the DOM's (a line nested too deep for
                // the DOM: the engine's structural reader's)
                for e in walked.entries.iter().filter(|e| !malformed.contains(&e.start)) {
                    let Some(head) = &e.message else { continue };
                    let v = e.value(f);
                    let want = match v.get("message") {
                        Some(m) => (
                            m.str_field("role").map(Role::of),
                            m.get("content").is_some(),
                            m.get("timestamp").and_then(Value::as_f64),
                        ),
                        None => {
                            let (role, content, ts) = pi_json::message_head(&f[e.start..e.end]).unwrap();
                            (role.as_deref().map(Role::of), content, ts)
                        }
                    };
                    assert_eq!(head, &want, "{}", String::from_utf8_lossy(&f[e.start..e.end]));
                    heads += 1;
                }
                for s in &walked.skipped {
                    assert!(exact.skipped.contains(s) || malformed.contains(&s.0), "{s:?}");
                }
                for s in &exact.skipped {
                    if !walked.skipped.contains(s) {
                        assert!(malformed.contains(&s.0), "{s:?}");
                    }
                }
                walked_lines += walked.entries.len();
            }
        }
        assert!(walked_lines > 10_000, "{walked_lines}");
        assert!(heads > 5_000, "{heads}");
        assert!(differ >= 2, "the malformed lines of the extra file are taken for entries: {differ}");
        // the extra file: `n` (a bad literal), `o` (a trailing comma) and a raw control character
        // in a string are entries to the walk
        let x = extra.as_bytes();
        let (exact, walked) = (scan(x, true), scan_catalog(x, true, true));
        let ids = exact.entries.iter().map(|e| e.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids, ["a\"b", "y", "q", "z", "m", "m2", "m3", "m4", "m5", "last"]);
        let ids = walked.entries.iter().map(|e| e.id(x)).collect::<Vec<_>>();
        assert_eq!(ids, ["a\"b", "y", "q", "z", "m", "m2", "m3", "m4", "m5", "n", "o", "\u{1}", "last"]);
        let head = |i: usize| walked.entries[i].message;
        assert_eq!(head(5), Some((Some(Role::User), true, Some(-1500.0))), "the last role");
        assert_eq!(head(6), None, "the last message has an escaped key");
        assert_eq!(head(7), Some((Some(Role::Assistant), true, None)));
        assert_eq!(head(8), None, "the last message is not an object");
        assert_eq!(exact.entries[1].parent_id, None, "the last parentId wins");
        assert_eq!(
            (exact.entries[2].kind, walked.entries[2].kind),
            (Kind::Label, Kind::Label),
            "an escaped key is read by the validator"
        );
        assert_eq!(exact.skipped.len(), walked.skipped.len() + 3);
    }
}
