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
        if self.stale || self.read_only.is_some() || !self.ends_with_newline() || self.buf.is_empty() {
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
        if tail[..] != self.buf[(old - probe) as usize..] {
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
        // and the text now ends at `end`. Only whitespace appended: nothing changes.
        let end = js_trim_end(&self.buf, self.text_end);
        if end <= self.text_end {
            return Ok(Extend::Added(0));
        }
        // The old tail (after `text_end`) now belongs to the last line read, up to its `\n`,
        // and to blank lines, as in a fresh load of the longer file.
        let tail = &self.buf[self.text_end..old_len];
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
                let whole = String::from_utf8_lossy(&self.buf[d.offset as usize..last_end as usize]).into_owned();
                if let Err(e) = pi_json::scan_line_fast(whole.as_bytes()) {
                    (d.kind, d.message) = whole_line_diag(whole.as_bytes(), &e);
                }
            }
        }
        self.lines_seen += memchr::memchr_iter(b'\n', &tail[first_nl.min(tail.len())..]).count().saturating_sub(1);
        let first_new = self.entries.len();
        let mut pos = old_len;
        while pos < end {
            let nl = memchr::memchr(b'\n', &self.buf[pos..end]).map(|o| pos + o).unwrap_or(end);
            let line_start = pos;
            pos = nl + 1;
            let line = self.buf[line_start..nl].to_vec();
            self.lines_seen += 1;
            let line_no = self.lines_seen;
            if js_is_blank(&line) {
                continue;
            }
            self.non_empty_lines += 1;
            let text = self.utf8_text(&line, all_utf8, line_no, line_start);
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
            if self.missing_parents.contains(&self.entries[i].id)
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
                self.missing_parents.insert(e.parent_id.clone().unwrap_or_default());
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
