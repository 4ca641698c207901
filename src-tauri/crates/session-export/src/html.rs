//! The HTML format: one self-contained page. Session content is only ever an escaped text node
//! (`esc`); no attribute carries it, the page has no script and no external URL, and its
//! Content-Security-Policy is `default-src 'none'; style-src 'unsafe-inline'`.

use crate::plan::{parts_of, status_note, Part, Renderer, Status};
use pi_json::Value;
use session_engine::session::{Kind, Session};
use std::io::{self, Write};
use summary_analysis::Marker;

const STYLE: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d1f23;background:#fafafa}\
.page{max-width:62rem;margin:0 auto;padding:1rem 1.5rem}\
nav{border:1px solid #ddd;background:#fff;padding:.5rem 1rem;margin:1rem 0;font-size:13px}\
@media (min-width:72rem){.page{max-width:none;display:grid;grid-template-columns:22rem minmax(0,60rem);gap:0 1.5rem}\
.top{grid-column:1/3}nav{grid-column:1;position:sticky;top:.5rem;align-self:start;max-height:calc(100vh - 1rem);overflow:auto;margin:0}\
main{grid-column:2}}\
nav ol{margin:.25rem 0;padding-left:1.5rem}nav a{color:#1a56b0;text-decoration:none}\
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem}dl.facts dt{font-weight:600}dl.facts dd{margin:0}\
section.branch{border-top:3px solid #888;margin-top:2rem}\
article{background:#fff;border:1px solid #e2e2e2;border-left:4px solid #bbb;margin:.6rem 0;padding:.4rem .8rem}\
article.user{border-left-color:#2e7d32}article.assistant{border-left-color:#1565c0}article.toolResult{border-left-color:#8e24aa}\
article.compaction,article.branch-summary{border-left-color:#ef6c00;background:#fff8ef}\
article.gone{opacity:.6}article.off{background:#f4f4f4}\
article header{font-size:12px;color:#555}article header b{color:#111;font-size:13px}\
.note{font-size:12px;color:#a33;margin-left:.5rem}.meta{font-size:12px;color:#555;margin:.2rem 0}\
pre{white-space:pre-wrap;overflow-wrap:anywhere;margin:.3rem 0;font:13px/1.4 ui-monospace,monospace}\
pre.text{font:14px/1.45 system-ui,sans-serif}\
details>summary{cursor:pointer;color:#333}\
.cut{margin:1rem 0;padding:.4rem;border:2px dashed #ef6c00;color:#8a3b00;text-align:center}\
.forks{font-size:12px;margin:.2rem 0 .6rem 1rem}\
.sec h4{margin:.5rem 0 .2rem}.sec ul{margin:.2rem 0;padding-left:1.4rem}\
@media (prefers-color-scheme:dark){body{background:#16181c;color:#e4e6ea}nav,article{background:#1f2227;border-color:#333}\
article.off{background:#1a1c20}article.compaction,article.branch-summary{background:#2a2118}nav a{color:#7fb0ff}\
article header,.meta,details>summary{color:#b0b4ba}article header b{color:#f0f0f0}.cut{color:#ffb36b}.note{color:#ff8a80}}";

pub(crate) struct Html<'w> {
    pub(crate) w: &'w mut dyn Write,
    /// Secrets are kept (else a label's are redacted like the entries' texts).
    pub(crate) keep: bool,
}

/// Writes `s` as HTML text with `&`, `<` and `>` escaped (memchr finds them). Session data is
/// only ever written as text, never inside an attribute, so quotes need no escaping.
fn esc(w: &mut dyn Write, s: &str) -> io::Result<()> {
    let b = s.as_bytes();
    let mut last = 0;
    for i in memchr::memchr3_iter(b'&', b'<', b'>', b) {
        w.write_all(&b[last..i])?;
        w.write_all(match b[i] {
            b'&' => b"&amp;",
            b'<' => b"&lt;",
            _ => b"&gt;",
        })?;
        last = i + 1;
    }
    w.write_all(&b[last..])
}

impl Html<'_> {
    fn summary(&mut self, text: &str) -> io::Result<()> {
        let p = summary_analysis::parse(text);
        write!(self.w, "<div class=\"sec\">")?;
        for sec in &p.sections {
            if !sec.title.is_empty() {
                write!(self.w, "<h4>")?;
                esc(self.w, &sec.name)?;
                write!(self.w, "</h4>")?;
            }
            if !sec.text.is_empty() {
                write!(self.w, "<pre class=\"text\">")?;
                esc(self.w, &sec.text)?;
                write!(self.w, "</pre>")?;
            }
            if !sec.items.is_empty() {
                write!(self.w, "<ul>")?;
                for it in &sec.items {
                    let mark = match (it.marker, it.checked) {
                        (Marker::Checkbox, Some(true)) => "☑ ",
                        (Marker::Checkbox, _) => "☐ ",
                        _ => "",
                    };
                    write!(self.w, "<li style=\"margin-left:{}rem\">{mark}", it.depth as u32)?;
                    esc(self.w, &it.text)?;
                    write!(self.w, "</li>")?;
                }
                write!(self.w, "</ul>")?;
            }
        }
        if !p.read_files.is_empty() || !p.modified_files.is_empty() {
            write!(
                self.w,
                "<details><summary>files: {} read, {} modified</summary><pre>",
                p.read_files.len(),
                p.modified_files.len()
            )?;
            for f in &p.read_files {
                write!(self.w, "read      ")?;
                esc(self.w, f)?;
                writeln!(self.w)?;
            }
            for f in &p.modified_files {
                write!(self.w, "modified  ")?;
                esc(self.w, f)?;
                writeln!(self.w)?;
            }
            write!(self.w, "</pre></details>")?;
        }
        write!(self.w, "<details><summary>raw summary text</summary><pre>")?;
        esc(self.w, text)?;
        write!(self.w, "</pre></details></div>")
    }
}

impl Renderer for Html<'_> {
    fn begin(&mut self, title: &str, facts: &[(String, String)]) -> io::Result<()> {
        write!(
            self.w,
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\
<meta name=\"referrer\" content=\"no-referrer\"><meta name=\"viewport\" content=\"width=device-width\"><title>"
        )?;
        esc(self.w, title)?;
        write!(self.w, "</title><style>{STYLE}</style></head><body><div class=\"page\"><header class=\"top\"><h1>")?;
        esc(self.w, title)?;
        write!(self.w, "</h1><dl class=\"facts\">")?;
        for (k, v) in facts {
            write!(self.w, "<dt>")?;
            esc(self.w, k)?;
            write!(self.w, "</dt><dd>")?;
            esc(self.w, v)?;
            write!(self.w, "</dd>")?;
        }
        write!(self.w, "</dl></header>")
    }
    fn outline_begin(&mut self) -> io::Result<()> {
        write!(self.w, "<nav><b>Outline</b>")
    }
    fn outline_segment_begin(&mut self, k: usize, label: &str, open: bool) -> io::Result<()> {
        write!(self.w, "<details{}><summary><a href=\"#b{k}\">", if open { " open" } else { "" })?;
        esc(self.w, label)?;
        write!(self.w, "</a></summary><ol>")
    }
    fn outline_item(&mut self, idx: usize, text: &str, st: Status) -> io::Result<()> {
        write!(self.w, "<li><a href=\"#e{idx}\">")?;
        esc(self.w, text)?;
        write!(self.w, "</a>")?;
        if st == Status::Compacted {
            write!(self.w, "<span class=\"note\">compacted</span>")?;
        }
        write!(self.w, "</li>")
    }
    fn outline_segment_end(&mut self) -> io::Result<()> {
        write!(self.w, "</ol></details>")
    }
    fn outline_end(&mut self) -> io::Result<()> {
        writeln!(self.w, "</nav><main>")
    }
    fn segment_begin(&mut self, k: usize, label: &str, from: Option<usize>) -> io::Result<()> {
        write!(self.w, "<section class=\"branch\" id=\"b{k}\"><h2>")?;
        esc(self.w, label)?;
        write!(self.w, "</h2>")?;
        if let Some(f) = from {
            write!(self.w, "<p class=\"meta\">forks from <a href=\"#e{f}\">this entry</a></p>")?;
        }
        writeln!(self.w)
    }
    fn cut_marker(&mut self, comp: usize) -> io::Result<()> {
        write!(
            self.w,
            "<div class=\"cut\">▲ Everything above is compacted: the model no longer sees it; <a href=\"#e{comp}\">the compaction's summary</a> stands for it. ▼ Kept from here.</div>"
        )
    }
    fn entry(&mut self, session: &Session, idx: usize, v: &Value, st: Status) -> io::Result<()> {
        let (role, parts) = parts_of(session, idx, v);
        let class = match session.kind(idx) {
            Kind::Message => match role.as_str() {
                "user" | "assistant" | "toolResult" | "bashExecution" => role.as_str(),
                _ => "message",
            },
            Kind::Compaction => "compaction",
            Kind::BranchSummary => "branch-summary",
            _ => "meta-entry",
        };
        let extra = match st {
            Status::Seen => "",
            Status::Compacted => " gone",
            Status::OffPath => " off",
        };
        write!(self.w, "<article class=\"{class}{extra}\" id=\"e{idx}\"><header><a href=\"#e{idx}\">#</a> <b>")?;
        esc(self.w, &role)?;
        write!(self.w, "</b> · ")?;
        esc(self.w, &session.entry(idx).timestamp)?;
        write!(self.w, " · ")?;
        esc(self.w, session.id(idx))?;
        if let Some(l) = session.label_of(session.id(idx)) {
            write!(self.w, " · label: ")?;
            esc(self.w, &crate::redaction::text(l, self.keep))?;
        }
        if let Some(n) = status_note(st) {
            write!(self.w, "<span class=\"note\">{n}</span>")?;
        }
        write!(self.w, "</header>")?;
        for part in parts {
            match part {
                Part::Text(t) => {
                    write!(self.w, "<pre class=\"text\">")?;
                    esc(self.w, t)?;
                    write!(self.w, "</pre>")?;
                }
                Part::Folded { title, body } => {
                    write!(self.w, "<details><summary>")?;
                    esc(self.w, &title)?;
                    write!(self.w, "</summary><pre>")?;
                    esc(self.w, &body)?;
                    write!(self.w, "</pre></details>")?;
                }
                Part::Meta(m) => {
                    write!(self.w, "<p class=\"meta\">")?;
                    esc(self.w, &m)?;
                    write!(self.w, "</p>")?;
                }
                Part::Summary(t) => self.summary(t)?,
            }
        }
        writeln!(self.w, "</article>")
    }
    fn forks(&mut self, segs: &[usize]) -> io::Result<()> {
        write!(self.w, "<p class=\"forks\">↳ branches here:")?;
        for k in segs {
            write!(self.w, " <a href=\"#b{k}\">branch {k}</a>")?;
        }
        write!(self.w, "</p>")
    }
    fn segment_end(&mut self) -> io::Result<()> {
        writeln!(self.w, "</section>")
    }
    fn raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.w.write_all(bytes)
    }
    fn end(&mut self) -> io::Result<()> {
        writeln!(self.w, "</main></div></body></html>")
    }
}
