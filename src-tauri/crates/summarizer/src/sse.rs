//! A small incremental Server-Sent Events decoder (the subset providers use: `event:`,
//! `data:` with multi-line joins, comments, CR/LF/CRLF line ends).

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    pub event: Option<String>,
    pub data: String,
}

#[derive(Default)]
pub struct SseDecoder {
    buf: Vec<u8>,
    event: Option<String>,
    data: Vec<String>,
}

impl SseDecoder {
    pub fn new() -> SseDecoder {
        SseDecoder::default()
    }

    /// Feeds bytes; returns the events completed by them.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        self.buf.extend_from_slice(bytes);
        let mut out = Vec::new();
        while let Some(pos) = self.buf.iter().position(|&b| b == b'\n' || b == b'\r') {
            // A lone '\r' at the very end may be the first half of "\r\n": wait for more bytes.
            if self.buf[pos] == b'\r' && pos + 1 == self.buf.len() {
                break;
            }
            let line: Vec<u8> = self.buf[..pos].to_vec();
            let skip = if self.buf[pos] == b'\r' && self.buf.get(pos + 1) == Some(&b'\n') { 2 } else { 1 };
            self.buf.drain(..pos + skip);
            let line = String::from_utf8_lossy(&line).into_owned();
            if let Some(ev) = self.line(&line) {
                out.push(ev);
            }
        }
        out
    }

    /// True when bytes of an unfinished line or event are pending.
    pub fn has_pending(&self) -> bool {
        !self.buf.iter().all(|b| b.is_ascii_whitespace()) || !self.data.is_empty()
    }

    fn line(&mut self, line: &str) -> Option<SseEvent> {
        if line.is_empty() {
            if self.data.is_empty() && self.event.is_none() {
                return None;
            }
            let ev = SseEvent { event: self.event.take(), data: self.data.join("\n") };
            self.data.clear();
            return Some(ev);
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = match line.find(':') {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(' ').unwrap_or(v))
            }
            None => (line, ""),
        };
        match field {
            "event" => self.event = Some(value.to_string()),
            "data" => self.data.push(value.to_string()),
            _ => {}
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn split_across_chunks_and_crlf() {
        let mut d = SseDecoder::new();
        let mut evs = d.push(b"event: a\r\ndata: {\"x\":");
        assert!(evs.is_empty());
        evs.extend(d.push(b"1}\r"));
        evs.extend(d.push(b"\n\r\n: comment\n\ndata: l1\ndata: l2\n\n"));
        assert_eq!(evs.len(), 2);
        assert_eq!(evs[0], SseEvent { event: Some("a".into()), data: "{\"x\":1}".into() });
        assert_eq!(evs[1].data, "l1\nl2");
        assert!(!d.has_pending());
        d.push(b"data: partial");
        assert!(d.has_pending());
    }
}
