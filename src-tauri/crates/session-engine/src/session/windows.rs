//! The open of a big file in windows: its lines are indexed a window at a time, read into one
//! buffer that is used again for the next window, and the session starts with its bytes left in
//! the file (see `bytes`).
//!
//! Reading the file whole and giving its bytes back once indexed kept the memory a session holds
//! open at a fraction of the file, but the open itself still held the whole file for a moment:
//! the app's main process with the 264 MB session peaked at 1.9× the file while it settled at
//! 1.2×. A window holds [`WINDOW_BYTES`] (and the line that crosses its end).
//!
//! The walk is the loader's scan of a big file (big files are scanned at open, not parsed), one
//! window at a time: the same lines, line numbers, diagnostics and entries. Files the scan alone
//! does not decide go to the whole-file open: one that does not start with its header, a header
//! the walk would reject or migrate (an older version), trailing whitespace longer than what a
//! base left in the file keeps of its end, and a read that fails or comes up short (a file cut
//! meanwhile; the whole-file open reports it).
use super::bytes::{FileBytes, KEPT_END_BYTES};
use super::load::{bad_line_diag, read_lines};
use super::whitespace::js_trim_end;
use super::*;
use std::os::unix::fs::FileExt;

/// A window's size. Each window is split between two threads as the whole-file scan splits the
/// file, and its buffer is used again for the next one, so that its pages fault once.
pub(crate) const WINDOW_BYTES: usize = 16 << 20;

/// Where the walk stands between windows.
struct Walk {
    line_no: usize,
    header_seen: bool,
    /// A `\n` follows the trimmed text (its last line is terminated).
    terminated: bool,
}

/// The whole-file open decides this file (see the module's text).
pub(crate) struct WholeFile;

impl Session {
    /// Opens `file` (`len` bytes long) in windows of `window` bytes, each of `parallel_min` bytes
    /// or more scanned on two threads, or says that the whole-file open must do it.
    pub(crate) fn open_in_windows(
        file: std::fs::File,
        len: usize,
        window: usize,
        parallel_min: usize,
    ) -> Result<Session, WholeFile> {
        let window = window.max(1);
        // The end first: the trimmed text's end, and whether a line end follows it.
        let kept_from = len.saturating_sub(KEPT_END_BYTES);
        let mut end = vec![0u8; len - kept_from];
        file.read_exact_at(&mut end, kept_from as u64).map_err(|_| WholeFile)?;
        let t1_in_end = js_trim_end(&end, 0);
        // Trailing whitespace that reaches the kept bytes' start may go on before them (or
        // start inside a character cut there).
        if kept_from > 0 && t1_in_end < 4 {
            return Err(WholeFile);
        }
        let t1 = kept_from + t1_in_end;
        let mut walk = Walk { line_no: 0, header_seen: false, terminated: end[t1_in_end..].contains(&b'\n') };
        let mut session = Session::with_bytes(FileBytes::default());
        session.ends_with_newline = end.last() == Some(&b'\n');
        session.entries.reserve(len / 2048 + 16);
        // `buf[..filled]` holds the file's bytes from `at`: a line cut by the window's end stays
        // for the next window, read after it.
        let mut buf: Vec<u8> = Vec::new();
        let (mut at, mut filled, mut read_to) = (0usize, 0usize, 0usize);
        loop {
            let want = window.min(t1 - read_to);
            buf.resize(filled + want, 0);
            file.read_exact_at(&mut buf[filled..filled + want], read_to as u64).map_err(|_| WholeFile)?;
            filled += want;
            read_to += want;
            let at_end = read_to == t1;
            if at == 0 && buf.first() != Some(&b'{') && filled > 0 {
                // Leading whitespace (or no header): the whole-file open's trim decides.
                return Err(WholeFile);
            }
            // The window's whole lines: up to its last line end, or to the text's end.
            let lines_end = if at_end {
                filled
            } else {
                match memchr::memrchr(b'\n', &buf[..filled]) {
                    Some(nl) => nl,
                    None => continue,
                }
            };
            session.walk_window(&mut walk, &buf[..lines_end], at, at_end, parallel_min)?;
            if at_end {
                break;
            }
            let next = lines_end + 1;
            buf.copy_within(next..filled, 0);
            filled -= next;
            at += next;
        }
        if !walk.header_seen {
            return Err(WholeFile);
        }
        session.lines_seen = walk.line_no;
        session.text_end = t1;
        session.buf = FileBytes::left_in(file, len, end);
        session.finish_index();
        Ok(session)
    }

    /// The lines of one window, `text` (the file's bytes from `at`, ending at a line end or at
    /// the trimmed text's end when `at_end`), as the loader's walk meets them.
    fn walk_window(
        &mut self,
        walk: &mut Walk,
        text: &[u8],
        at: usize,
        at_end: bool,
        parallel_min: usize,
    ) -> Result<(), WholeFile> {
        let all_utf8 = simdutf8::basic::from_utf8(text).is_ok();
        let to = text.len();
        // As the whole-file scan: the second half's lines are validated on another thread.
        let split = if to > 0 && to >= parallel_min {
            memchr::memchr(b'\n', &text[to / 2..]).map(|o| to / 2 + o).filter(|&sp| sp < to)
        } else {
            None
        };
        std::thread::scope(|scope| {
            let mut worker = split.map(|sp| {
                scope.spawn(move || read_lines(text, sp + 1, to, all_utf8, 2, |l, _, _| pi_json::scan_line_fast(l)))
            });
            let mut pre: Option<std::vec::IntoIter<Result<pi_json::ScannedLine, pi_json::JsonError>>> = None;
            let mut pos = 0;
            while pos <= to {
                let nl = memchr::memchr(b'\n', &text[pos..to]).map(|o| pos + o).unwrap_or(to);
                walk.line_no += 1;
                let line = &text[pos..nl];
                let line_start = pos;
                pos = nl + 1;
                let is_last = at_end && nl >= to;
                if js_is_blank(line) {
                    if nl >= to {
                        break;
                    }
                    continue;
                }
                self.non_empty_lines += 1;
                let line_no = walk.line_no;
                let text = self.utf8_text(line, all_utf8, line_no, at + line_start);
                let text: &[u8] = &text;
                let scanned = match split {
                    Some(sp) if line_start > sp => {
                        if pre.is_none() {
                            let done = worker.take().map(|h| h.join().unwrap_or_default()).unwrap_or_default();
                            pre = Some(done.into_iter());
                        }
                        pre.as_mut().and_then(Iterator::next).unwrap_or_else(|| pi_json::scan_line_fast(text))
                    }
                    _ => pi_json::scan_line_fast(text),
                };
                let scanned = match scanned {
                    Ok(sc) => sc,
                    // The header must be the first line, whole: else the whole-file open.
                    Err(_) if !walk.header_seen => return Err(WholeFile),
                    Err(e) => {
                        self.malformed_lines.push(line_no);
                        let torn = is_last && !walk.terminated;
                        let (kind, msg) = bad_line_diag(line, torn.then_some(at + line_start), &e);
                        self.diag(line_no, at + line_start, kind, msg);
                        if nl >= to {
                            break;
                        }
                        continue;
                    }
                };
                if !walk.header_seen {
                    walk.header_seen = true;
                    self.take_header(text)?;
                } else {
                    let unterminated = is_last && !walk.terminated;
                    self.add_entry_line(text, &scanned, at + line_start, at + nl, line_no, unterminated);
                }
                if nl >= to {
                    break;
                }
            }
            // A window whose lines all came before the split still joins its worker.
            if let Some(h) = worker.take() {
                let _ = h.join();
            }
            Ok(())
        })
    }

    /// The header, as the loader takes it; one it would reject or migrate is the whole-file
    /// open's.
    fn take_header(&mut self, text: &[u8]) -> Result<(), WholeFile> {
        let v = pi_json::parse_bytes(text).map_err(|_| WholeFile)?;
        if v.str_field("type") != Some("session") || v.str_field("id").is_none() {
            return Err(WholeFile);
        }
        let version = v.num_field("version");
        let ver = version.unwrap_or(1.0);
        if ver < CURRENT_VERSION as f64 {
            return Err(WholeFile);
        }
        if ver > CURRENT_VERSION as f64 {
            self.read_only = Some(ReadOnly::Newer { version: pi_json::number_to_string(ver) });
        }
        self.version_in_file = version;
        self.header = Some(Header::of_value(&v));
        Ok(())
    }
}
