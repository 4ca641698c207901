//! Reading what Pi appended since a session was loaded.

use super::load::whole_line_diag;
use super::whitespace::js_trim_end;
use super::*;

impl Session {
    /// Reads what Pi appended since this session was loaded and adds it, in time proportional
    /// to the new bytes. Only complete lines are taken; a partial last line waits for the next
    /// call. Returns the number of new entries.
    ///
    /// When the file no longer extends what was loaded (truncated, rewritten or replaced), or
    /// the new lines change earlier resolution (a repeated id, a cycle), or the session is not a
    /// plain current-version file, it returns [`Extend::Reload`]: the caller opens the file
    /// again; this `Session` may then hold part of the new lines and should be dropped.
    pub fn extend_from_file(&mut self, path: &Path) -> Result<Extend, OpenError> {
        use std::io::{Read, Seek, SeekFrom};
        let p = path.display().to_string();
        if self.stale
            || self.buf.changed()
            || self.read_only.is_some()
            || !self.ends_with_newline()
            || self.buf.is_empty()
        {
            return Ok(Extend::Reload);
        }
        let io = |e: std::io::Error| OpenError::Io { path: p.clone(), source: e };
        let mut f = std::fs::File::open(path).map_err(io)?;
        let len = f.metadata().map_err(io)?.len();
        let old = self.buf.len() as u64;
        if len < old {
            return Ok(Extend::Reload);
        }
        // The bytes we hold must still be there: compare the last 4 KiB.
        let probe = old.min(4096);
        let mut tail = vec![0u8; probe as usize];
        f.seek(SeekFrom::Start(old - probe)).map_err(io)?;
        f.read_exact(&mut tail).map_err(io)?;
        // (Of a big file, these bytes stay in memory after the open: see `bytes`.)
        let Ok(held) = self.buf.copy_range((old - probe) as usize, old as usize) else {
            return Ok(Extend::Reload);
        };
        if tail != held {
            return Ok(Extend::Reload);
        }
        let mut new = Vec::with_capacity((len - old) as usize);
        f.read_to_end(&mut new).map_err(io)?;
        let Some(last_nl) = memchr::memrchr(b'\n', &new) else { return Ok(Extend::Added(0)) };
        new.truncate(last_nl + 1);
        let all_utf8 = simdutf8::basic::from_utf8(&new).is_ok();
        let old_len = self.buf.len();
        self.buf.extend_from_slice(&new);
        // Pi trims the whole file: what the loader (and each extend) read ends at `text_end`,
        // and the text now ends at `end`. Only whitespace appended: nothing changes. (What was
        // held ends with `\n`, so no whitespace character spans the old bytes and the new.)
        let new_end = js_trim_end(&new, 0);
        if new_end == 0 {
            return Ok(Extend::Added(0));
        }
        let end = old_len + new_end;
        // The old tail (after `text_end`) now belongs to the last line read, up to its `\n`,
        // and to blank lines, as in a fresh load of the longer file.
        let Ok(tail) = self.buf.copy_range(self.text_end, old_len) else {
            self.stale = true;
            return Ok(Extend::Reload);
        };
        let tail = &tail[..];
        let first_nl = memchr::memchr(b'\n', tail).unwrap_or(tail.len());
        if tail[..first_nl].iter().any(|b| !matches!(b, b' ' | b'\t' | b'\r')) {
            // Whitespace JSON does not allow (U+00A0, U+2028, a BOM, ...): trimmed, the last line
            // parsed; whole, it may not. Only a fresh load knows.
            self.stale = true;
            return Ok(Extend::Reload);
        }
        let last_line = self.lines_seen;
        let last_end = (self.text_end + first_nl) as u64;
        if let Some(e) = self.entries.last_mut().filter(|e| e.line as usize == last_line) {
            e.end = last_end;
        }
        if self.malformed_lines.last() == Some(&last_line) {
            // Its diagnostic speaks of the trimmed line; say it again of the whole line.
            if let Some(d) =
                self.diagnostics.iter_mut().rev().find(|d| {
                    d.line == last_line && matches!(d.kind, DiagnosticKind::Malformed | DiagnosticKind::NulBytes)
                })
            {
                let line = self.buf.slice(d.offset as usize, last_end as usize).unwrap_or_default();
                let whole = String::from_utf8_lossy(&line).into_owned();
                if let Err(e) = pi_json::scan_line_fast(whole.as_bytes()) {
                    (d.kind, d.message) = whole_line_diag(whole.as_bytes(), &e);
                }
            }
        }
        self.lines_seen += memchr::memchr_iter(b'\n', &tail[first_nl.min(tail.len())..]).count().saturating_sub(1);
        let first_new = self.entries.len();
        // The new lines, all in `new` (which starts at `old_len` in the file).
        let mut pos = old_len;
        while pos < end {
            let nl = memchr::memchr(b'\n', &new[pos - old_len..new_end]).map(|o| pos + o).unwrap_or(end);
            let line_start = pos;
            pos = nl + 1;
            let line = &new[line_start - old_len..nl - old_len];
            self.lines_seen += 1;
            let line_no = self.lines_seen;
            if js_is_blank(line) {
                continue;
            }
            self.non_empty_lines += 1;
            let text = self.utf8_text(line, all_utf8, line_no, line_start);
            match pi_json::scan_line_fast(&text) {
                Ok(scanned) => self.add_entry_line(&text, &scanned, line_start, nl, line_no, false),
                Err(e) => {
                    self.malformed_lines.push(line_no);
                    let (kind, msg) = whole_line_diag(&text, &e);
                    self.diag(line_no, line_start, kind, msg);
                }
            }
        }
        // Index the new entries; anything that would change how earlier entries resolve means
        // a full load.
        let n = self.entries.len();
        for i in first_new..n {
            // A repeated id, or the parent an earlier orphan was waiting for.
            if self.missing_parents.contains(self.entries[i].id.as_str())
                || self.by_id.insert(self.entries[i].id.clone(), i as u32).is_some()
            {
                self.stale = true;
                return Ok(Extend::Reload);
            }
        }
        for i in first_new..n {
            let par = match self.entries[i].parent_id.as_deref() {
                Some(p) if !p.is_empty() => self.by_id.get(p).copied().unwrap_or(NONE),
                _ => NONE,
            };
            self.parent.push(par);
            if par == NONE && self.entries[i].parent_id.as_deref().is_some_and(|p| !p.is_empty()) {
                let e = &self.entries[i];
                self.missing_parents.insert(e.parent_id.as_deref().unwrap_or_default().into());
                let msg = format!(
                    "entry {} has parent {} which is not in the file; shown as an extra root",
                    e.id,
                    e.parent_id.as_deref().unwrap_or("")
                );
                let (l, o) = (e.line as usize, e.start as usize);
                self.diag(l, o, DiagnosticKind::Orphan, msg);
            }
        }
        for i in first_new..n {
            // New entries can only loop among themselves (old ones already resolve to a root).
            let mut cur = i;
            let mut steps = 0;
            while cur >= first_new {
                match self.parent_of(cur) {
                    Some(p) => cur = p,
                    None => break,
                }
                steps += 1;
                if steps > n - first_new {
                    self.stale = true;
                    return Ok(Extend::Reload);
                }
            }
        }
        for i in first_new..n {
            self.apply_label_or_name(i);
        }
        self.children = OnceLock::new();
        self.text_end = end;
        Ok(Extend::Added(n - first_new))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn line(k: usize, parent: Option<usize>) -> String {
        let p = parent.map_or("null".to_string(), |p| format!("\"e{p}\""));
        format!(
            r#"{{"type":"message","id":"e{k}","parentId":{p},"timestamp":"2025-01-01T00:00:01.000Z","message":{{"role":"user","content":"{k} é"}}}}"#
        )
    }

    /// A session read while a clone of it is alive (the app's snapshot for a background reader):
    /// the appended lines go to its own tail, the clone keeps what it had, both still share the
    /// bytes read at open, and the grown session reads as a fresh open of the file.
    #[test]
    fn appends_while_a_clone_holds_the_bytes_leave_them_shared() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("s.jsonl");
        let mut text = String::from(
            r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#,
        );
        text.push('\n');
        for k in 0..50 {
            text.push_str(&line(k, k.checked_sub(1)));
            text.push('\n');
        }
        std::fs::write(&f, &text).unwrap();
        let mut session = Session::open(&f).unwrap();
        let snapshot = session.clone();
        for round in 0..3 {
            let mut file = std::fs::OpenOptions::new().append(true).open(&f).unwrap();
            for k in 50 + round * 10..60 + round * 10 {
                writeln!(file, "{}", line(k, Some(k - 1))).unwrap();
            }
            drop(file);
            assert_eq!(session.extend_from_file(&f).unwrap(), Extend::Added(10));
        }
        assert!(session.buf.same_base(&snapshot.buf), "the bytes read at open were copied");
        assert_eq!(snapshot.len(), 50);
        assert_eq!(snapshot.raw(49), line(49, Some(48)).as_bytes());
        let fresh = Session::open(&f).unwrap();
        assert_eq!(session.len(), 80);
        assert_eq!(session.file_len(), fresh.file_len());
        for i in 0..fresh.len() {
            assert_eq!(session.raw(i), fresh.raw(i), "entry {i}");
            assert_eq!(session.parent_of(i), fresh.parent_of(i), "entry {i}");
            assert_eq!(session.role(i), fresh.role(i), "entry {i}");
            assert_eq!(session.value(i), fresh.value(i), "entry {i}");
        }
        assert_eq!(session.path(session.file_leaf()).len(), 80);
    }
}
