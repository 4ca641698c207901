//! The Markdown format. Every message body is a fenced block whose fence is longer than any
//! backtick run in it (`md_fence`), and every inline piece has its ASCII punctuation
//! backslash-escaped (`md_inline`), so no renderer turns session content into HTML or links.

use crate::plan::{parts_of, status_note, Part, Renderer, Status};
use pi_json::Value;
use session_engine::session::Session;
use std::io::{self, Write};
use summary_analysis::Marker;

pub(crate) struct Md<'w> {
    pub(crate) w: &'w mut dyn Write,
    /// Secrets are kept (else a label's are redacted like the entries' texts).
    pub(crate) keep: bool,
}

/// Inline text: one line, every ASCII punctuation character backslash-escaped, so nothing in it
/// becomes markup, HTML or a link.
fn md_inline(w: &mut dyn Write, s: &str) -> io::Result<()> {
    let mut buf = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' | '\r' => buf.push(' '),
            c if c.is_ascii_punctuation() => {
                buf.push('\\');
                buf.push(c);
            }
            c => buf.push(c),
        }
    }
    w.write_all(buf.as_bytes())
}

/// A fenced block that no content can close: the fence is longer than any backtick run in it.
fn md_fence(w: &mut dyn Write, info: &str, body: &str) -> io::Result<()> {
    let bytes = body.as_bytes();
    let mut longest = 0;
    let mut from = 0;
    while let Some(i) = memchr::memchr(b'`', &bytes[from..]) {
        let start = from + i;
        let run = bytes[start..].iter().take_while(|&&c| c == b'`').count();
        longest = longest.max(run);
        from = start + run;
    }
    let fence = "`".repeat((longest + 1).max(3));
    writeln!(w, "{fence}{info}")?;
    w.write_all(body.as_bytes())?;
    if !body.ends_with('\n') {
        writeln!(w)?;
    }
    writeln!(w, "{fence}\n")
}

impl Renderer for Md<'_> {
    fn begin(&mut self, title: &str, facts: &[(String, String)]) -> io::Result<()> {
        write!(self.w, "# ")?;
        md_inline(self.w, title)?;
        writeln!(self.w, "\n")?;
        for (k, v) in facts {
            write!(self.w, "- **")?;
            md_inline(self.w, k)?;
            write!(self.w, ":** ")?;
            md_inline(self.w, v)?;
            writeln!(self.w)?;
        }
        writeln!(self.w)
    }
    fn outline_begin(&mut self) -> io::Result<()> {
        writeln!(self.w, "## Outline\n")
    }
    fn outline_segment_begin(&mut self, k: usize, label: &str, _open: bool) -> io::Result<()> {
        write!(self.w, "- [")?;
        md_inline(self.w, label)?;
        writeln!(self.w, "](#b{k})")
    }
    fn outline_item(&mut self, idx: usize, text: &str, st: Status) -> io::Result<()> {
        write!(self.w, "  - [")?;
        md_inline(self.w, text)?;
        write!(self.w, "](#e{idx})")?;
        if st == Status::Compacted {
            write!(self.w, " *(compacted)*")?;
        }
        writeln!(self.w)
    }
    fn outline_segment_end(&mut self) -> io::Result<()> {
        Ok(())
    }
    fn outline_end(&mut self) -> io::Result<()> {
        writeln!(self.w)
    }
    fn segment_begin(&mut self, k: usize, label: &str, from: Option<usize>) -> io::Result<()> {
        write!(self.w, "<a id=\"b{k}\"></a>\n\n## ")?;
        md_inline(self.w, label)?;
        writeln!(self.w, "\n")?;
        if let Some(f) = from {
            writeln!(self.w, "Forks from [this entry](#e{f}).\n")?;
        }
        Ok(())
    }
    fn cut_marker(&mut self, comp: usize) -> io::Result<()> {
        writeln!(self.w, "---\n\n**▲ Everything above is compacted: the model no longer sees it; [the compaction's summary](#e{comp}) stands for it. ▼ Kept from here.**\n\n---\n")
    }
    fn entry(&mut self, session: &Session, idx: usize, v: &Value, st: Status) -> io::Result<()> {
        let (role, parts) = parts_of(session, idx, v);
        write!(self.w, "<a id=\"e{idx}\"></a>\n\n### ")?;
        md_inline(self.w, &role)?;
        write!(self.w, " · ")?;
        md_inline(self.w, &session.entry(idx).timestamp)?;
        write!(self.w, " · ")?;
        md_inline(self.w, session.id(idx))?;
        if let Some(l) = session.label_of(session.id(idx)) {
            write!(self.w, " · label: ")?;
            md_inline(self.w, &crate::redaction::text(l, self.keep))?;
        }
        if let Some(n) = status_note(st) {
            write!(self.w, " *({n})*")?;
        }
        writeln!(self.w, "\n")?;
        for part in parts {
            match part {
                Part::Text(t) => md_fence(self.w, "text", t)?,
                Part::Folded { title, body } => {
                    write!(self.w, "**")?;
                    md_inline(self.w, &title)?;
                    writeln!(self.w, "**\n")?;
                    md_fence(self.w, "", &body)?;
                }
                Part::Meta(m) => {
                    write!(self.w, "*")?;
                    md_inline(self.w, &m)?;
                    writeln!(self.w, "*\n")?;
                }
                Part::Summary(t) => {
                    let p = summary_analysis::parse(t);
                    for sec in &p.sections {
                        if !sec.title.is_empty() {
                            write!(self.w, "#### ")?;
                            md_inline(self.w, &sec.name)?;
                            writeln!(self.w, "\n")?;
                        }
                        if !sec.text.is_empty() {
                            md_fence(self.w, "text", &sec.text)?;
                        }
                        for it in &sec.items {
                            let mark = match (it.marker, it.checked) {
                                (Marker::Checkbox, Some(true)) => "\\[x\\] ",
                                (Marker::Checkbox, _) => "\\[ \\] ",
                                _ => "",
                            };
                            write!(self.w, "{}- {mark}", "  ".repeat(it.depth as usize))?;
                            md_inline(self.w, &it.text)?;
                            writeln!(self.w)?;
                        }
                        if !sec.items.is_empty() {
                            writeln!(self.w)?;
                        }
                    }
                    if !p.read_files.is_empty() || !p.modified_files.is_empty() {
                        let mut files = String::new();
                        for f in &p.read_files {
                            files.push_str(&format!("read      {f}\n"));
                        }
                        for f in &p.modified_files {
                            files.push_str(&format!("modified  {f}\n"));
                        }
                        md_fence(self.w, "text", &files)?;
                    }
                }
            }
        }
        Ok(())
    }
    fn forks(&mut self, segs: &[usize]) -> io::Result<()> {
        write!(self.w, "↳ branches here:")?;
        for k in segs {
            write!(self.w, " [branch {k}](#b{k})")?;
        }
        writeln!(self.w, "\n")
    }
    fn segment_end(&mut self) -> io::Result<()> {
        Ok(())
    }
    fn raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.w.write_all(bytes)
    }
    fn end(&mut self) -> io::Result<()> {
        Ok(())
    }
}
