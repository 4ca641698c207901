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
//! What this module does not do: the header (the caller has one, from a full load), the v1/v2
//! migration (legacy files are loaded whole), and the id index (the caller keeps it).

use crate::session::load::{entry_fields, EntryFields};
use crate::session::{js_is_blank, DiagnosticKind, Kind};
use pi_json::Value;
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

impl ChunkEntry {
    /// The entry's text as the loader sees it (lossy-decoded when the bytes are not UTF-8).
    pub fn text<'a>(&self, chunk: &'a [u8]) -> Cow<'a, [u8]> {
        let raw = &chunk[self.start..self.end];
        if self.lossy {
            Cow::Owned(String::from_utf8_lossy(raw).into_owned().into_bytes())
        } else {
            Cow::Borrowed(raw)
        }
    }
    /// The entry's full JSON (`null` for a line nested deeper than [`pi_json::MAX_DEPTH`], as
    /// [`crate::Session::value`]).
    pub fn value(&self, chunk: &[u8]) -> Value {
        pi_json::parse_bytes(&self.text(chunk)).unwrap_or(Value::Null)
    }
}

/// What [`scan`] found.
#[derive(Clone, Debug, Default)]
pub struct Scan {
    pub entries: Vec<ChunkEntry>,
    /// Skipped lines: (start offset in the chunk, why).
    pub skipped: Vec<(usize, DiagnosticKind)>,
    /// Bytes handled (complete lines, and an unterminated last line that is valid JSON). The
    /// rest is pending.
    pub consumed: usize,
    /// The last consumed line had no trailing `\n` (see the module notes).
    pub unterminated: bool,
}

/// Scans `chunk` (starting at a line boundary). `at_eof`: the chunk ends where the file ends,
/// so an unterminated last line that is valid JSON is an entry (otherwise it stays pending).
pub fn scan(chunk: &[u8], at_eof: bool) -> Scan {
    let mut out = Scan::default();
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
        let scanned = match pi_json::scan_line_fast(text) {
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
        let EntryFields { type_name, id, parent_id, timestamp } = match entry_fields(text, &scanned) {
            Ok(f) => f,
            Err(why) => {
                out.skipped.push((start, why.kind()));
                continue;
            }
        };
        out.entries.push(ChunkEntry {
            start,
            end,
            kind: Kind::from_type(&type_name),
            type_name,
            id,
            parent_id,
            timestamp,
            lossy,
        });
    }
    out
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
            assert_eq!(&body.as_bytes()[e.start..e.end], session.raw(i));
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
}
