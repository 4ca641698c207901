//! The newest part of a big session file, read before the whole file: the header line and the
//! last few MiB, loaded with the loader's own rules ([`crate::Session`]), so a window can draw the
//! graph around the leaf while the full open (seconds at a million entries) is still reading.
//!
//! What the tail can say, and what it cannot:
//! * Its entries are the file's last entries, so Pi's leaf (the last entry line) is the tail's.
//! * A parent named by a tail entry and held in the tail is the parent the full load finds: the
//!   id index keeps an id's last line, and the file's last line of any id the tail holds is in
//!   the tail.
//! * A parent that is not in the tail is in the part not read, or nowhere (an orphan of the whole
//!   file): [`Tail::parent_outside`] says so without guessing which.
//! * Labels set in the tail are those of their targets as far as the tail goes; a label entry
//!   before the tail is not seen.
//!
//! The tail starts at a line boundary (after the first `\n` at or after the cut), so its first
//! line is whole; a torn last line (no `\n` at the end, not valid JSON: an append in progress) is
//! skipped as the loader skips it. Files of version 1 or 2 are not read this way: their migration
//! gives ids by position in the whole file.

use crate::session::Session;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

/// The longest header line looked for (a Pi header is a few hundred bytes).
const MAX_HEADER: usize = 1 << 20;

/// The header line and the newest lines of a session file.
pub struct Tail {
    /// The header line followed by the tail's lines, loaded as one small session.
    pub session: Session,
    /// Where the tail's first line starts in the file.
    pub start: u64,
    /// The file's length when it was read.
    pub file_len: u64,
    /// Bytes of the header line, with its `\n`.
    header_len: u64,
}

impl Tail {
    /// Entry `i` names a parent that the tail does not hold: it is among the lines before the
    /// tail, or in no line of the file.
    pub fn parent_outside(&self, i: usize) -> bool {
        let named = self.session.entry(i).parent_id.as_deref().is_some_and(|p| !p.is_empty());
        named && self.session.parent_of(i).is_none()
    }

    /// There are lines between the header and the tail (the tail is not the whole file).
    pub fn has_earlier(&self) -> bool {
        self.start > self.header_len
    }

    /// Where entry `i`'s line starts in the file.
    pub fn file_offset(&self, i: usize) -> u64 {
        self.session.entry(i).start - self.header_len + self.start
    }
}

/// Reads the header line and about the last `max_bytes` of `path`. `None` when the rest of the
/// file after the header fits in `max_bytes` (a full open reads it as fast), when the first line
/// is not a version 3 session header, or when no entry line starts in the last `max_bytes`: the
/// caller then opens the file whole, which decides what it is.
pub fn read_tail(path: &Path, max_bytes: u64) -> io::Result<Option<Tail>> {
    let mut f = File::open(path)?;
    let file_len = f.metadata()?.len();
    let Some(header) = first_line(&mut f)? else { return Ok(None) };
    let header_len = header.len() as u64 + 1;
    let cut = file_len.saturating_sub(max_bytes);
    if cut <= header_len {
        return Ok(None);
    }
    // From one byte before the cut: a line that starts exactly at the cut is kept whole.
    f.seek(SeekFrom::Start(cut - 1))?;
    let mut buf = Vec::with_capacity((file_len - cut + 1) as usize + header.len() + 1);
    (&mut f).take(file_len - cut + 1).read_to_end(&mut buf)?;
    let Some(nl) = memchr::memchr(b'\n', &buf) else { return Ok(None) };
    let start = cut - 1 + nl as u64 + 1;
    // The header goes in front of the tail's lines in the same buffer (one copy of the tail).
    let tail_len = buf.len() - (nl + 1);
    buf.copy_within(nl + 1.., 0);
    buf.truncate(tail_len);
    let mut bytes = header;
    bytes.push(b'\n');
    bytes.append(&mut buf);
    let session = Session::from_bytes(bytes);
    let usable = session.header().is_some() && session.version_in_file() == Some(3.0) && !session.migrated();
    if !usable || session.is_empty() {
        return Ok(None);
    }
    Ok(Some(Tail { session, start, file_len: start + tail_len as u64, header_len }))
}

/// The file's first line without its `\n` (`None` when it has no `\n` within [`MAX_HEADER`]).
fn first_line(f: &mut File) -> io::Result<Option<Vec<u8>>> {
    let mut line = Vec::new();
    let mut chunk = [0u8; 4096];
    while line.len() < MAX_HEADER {
        let n = f.read(&mut chunk)?;
        if n == 0 {
            return Ok(None);
        }
        if let Some(nl) = memchr::memchr(b'\n', &chunk[..n]) {
            line.extend_from_slice(&chunk[..nl]);
            return Ok(Some(line));
        }
        line.extend_from_slice(&chunk[..n]);
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entries;
    use crate::testing::xorshift_usize;
    use pi_json::Value;
    use std::io::Write;

    fn user(text: &str) -> Value {
        let mut m = pi_json::Map::new();
        m.insert("role", "user".into());
        m.insert("content", text.into());
        Value::Obj(m)
    }

    /// A session of `n` entries whose last quarter branches often (each entry's parent is one of
    /// the last few entries, sometimes none: an extra root), with labels and a branch summary
    /// near the end.
    fn branching_session(n: usize, seed: u64) -> Vec<u8> {
        let mut next = xorshift_usize(seed);
        let mut lines = vec![entries::line(&entries::header("s", "2026-01-01T00:00:00.000Z", "/p", None))];
        let mut ids: Vec<String> = Vec::new();
        for i in 0..n {
            let id = format!("e{i:05}");
            let ts = format!("2026-01-01T00:{:02}:{:02}.000Z", (i / 60) % 60, i % 60);
            let parent = if ids.is_empty() || (i > n * 3 / 4 && next().is_multiple_of(17)) {
                None
            } else if i > n * 3 / 4 {
                Some(ids[ids.len() - 1 - next() % ids.len().min(6)].clone())
            } else {
                ids.last().cloned()
            };
            let v = match next() % 11 {
                0 if !ids.is_empty() => {
                    entries::label(&id, parent.as_deref(), &ts, &ids[next() % ids.len()], Some("mark"))
                }
                1 => entries::branch_summary(&id, parent.as_deref(), &ts, "left a branch", None, false),
                _ => entries::message(&id, parent.as_deref(), &ts, user(&"x".repeat(next() % 200))),
            };
            lines.push(entries::line(&v));
            ids.push(id);
        }
        let mut out = lines.join("\n").into_bytes();
        out.push(b'\n');
        out
    }

    fn write(bytes: &[u8]) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(bytes).unwrap();
        f.flush().unwrap();
        f
    }

    /// What the window draws before the full open must hold in the full open: every entry of the
    /// tail, each parent link inside the tail, a parent outside the tail only where the full
    /// file's parent line is before the tail (or missing), the same leaf and the same labels.
    fn check_against_full(tail: &Tail, full: &Session) {
        let t = &tail.session;
        assert!(!t.is_empty());
        for i in 0..t.len() {
            let id = t.id(i);
            let fi = full.index_of(id).unwrap_or_else(|| panic!("{id} is in the tail but not in the file"));
            assert_eq!(full.entry(fi).start, tail.file_offset(i), "{id}: the tail's line is not the file's");
            match t.parent_of(i) {
                Some(p) => assert_eq!(full.parent_of(fi).map(|x| full.id(x)), Some(t.id(p)), "{id}'s parent"),
                None if tail.parent_outside(i) => {
                    if let Some(fp) = full.parent_of(fi) {
                        assert!(full.entry(fp).start < tail.start, "{id}'s parent is in the tail's range");
                    }
                }
                None => assert_eq!(full.parent_of(fi), None, "{id} is a root in the tail only"),
            }
            if let Some(l) = t.label_of(id) {
                assert_eq!(full.label_of(id), Some(l), "{id}'s label");
            }
        }
        assert_eq!(t.file_leaf().map(|l| t.id(l)), full.file_leaf().map(|l| full.id(l)), "the leaf");
    }

    #[test]
    fn every_kind_of_cut_of_a_branching_session_shows_only_what_the_full_load_has() {
        let bytes = branching_session(300, 7);
        let f = write(&bytes);
        let full = Session::open(f.path()).unwrap();
        let len = bytes.len() as u64;
        let header_len = bytes.iter().position(|&b| b == b'\n').unwrap() as u64 + 1;
        let last_start = bytes[..bytes.len() - 1].iter().rposition(|&b| b == b'\n').unwrap() as u64 + 1;
        // Cuts just before, at and just after every line start, and every 53rd byte between.
        let mut cuts: Vec<u64> = (0..len).filter(|&c| c % 53 == 0).collect();
        for (i, _) in bytes.iter().enumerate().filter(|(_, &b)| b == b'\n') {
            cuts.extend([i as u64, i as u64 + 1, i as u64 + 2]);
        }
        let mut checked = 0;
        for cut in cuts.into_iter().filter(|&c| c < len) {
            let max = len - cut;
            let tail = read_tail(f.path(), max).unwrap();
            // A tail exactly when an entry line starts in the last `max` bytes and the rest of
            // the file after the header does not fit in them.
            assert_eq!(tail.is_some(), len - last_start <= max && max < len - header_len, "cut at {cut}");
            if let Some(tail) = tail {
                assert!(tail.has_earlier());
                check_against_full(&tail, &full);
                checked += 1;
            }
        }
        assert!(checked > 300, "only {checked} cuts gave a tail");
    }

    #[test]
    fn a_torn_last_line_is_skipped_as_the_full_load_skips_it() {
        let mut bytes = branching_session(200, 11);
        bytes.extend_from_slice(br#"{"type":"message","id":"torn","parentId":"e00199","mess"#);
        let f = write(&bytes);
        let full = Session::open(f.path()).unwrap();
        let tail = read_tail(f.path(), 4096).unwrap().expect("a tail");
        assert_eq!(tail.session.index_of("torn"), None);
        assert_eq!(full.index_of("torn"), None);
        assert_eq!(tail.session.id(tail.session.file_leaf().unwrap()), "e00199");
        check_against_full(&tail, &full);
    }

    #[test]
    fn a_cut_at_a_line_start_keeps_that_line() {
        let bytes = branching_session(50, 3);
        let f = write(&bytes);
        // The cut exactly at the last line's start.
        let last_start = bytes[..bytes.len() - 1].iter().rposition(|&b| b == b'\n').unwrap() + 1;
        let tail = read_tail(f.path(), (bytes.len() - last_start) as u64).unwrap().expect("a tail");
        assert_eq!(tail.start, last_start as u64);
        assert_eq!(tail.session.len(), 1);
        assert_eq!(tail.session.id(0), "e00049");
    }

    #[test]
    fn small_files_and_files_that_are_not_sessions_get_no_tail() {
        let bytes = branching_session(50, 5);
        let f = write(&bytes);
        assert!(read_tail(f.path(), bytes.len() as u64).unwrap().is_none(), "the whole file fits");
        let not_pi =
            write(b"{\"hello\":1}\n{\"type\":\"message\",\"id\":\"a\"}\n{\"type\":\"message\",\"id\":\"b\"}\n");
        assert!(read_tail(not_pi.path(), 20).unwrap().is_none(), "no session header");
        let v2 = String::from_utf8(bytes.clone()).unwrap().replacen("\"version\":3", "\"version\":2", 1);
        let old = write(v2.as_bytes());
        assert!(read_tail(old.path(), 2000).unwrap().is_none(), "a version 2 file migrates whole");
    }
}
