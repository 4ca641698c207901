//! What an export shows, shared by both formats: the plan (which entries, in which branch
//! segments, seen, compacted or off the path), the facts at the head, each entry's one-line
//! outline text and its parts (text, folded blocks, facts, summaries), and the [`Renderer`] a
//! format implements. Nothing here writes; `html.rs` and `markdown.rs` write what this gives.

use pi_json::Value;
use session_engine::blocks::{blocks, Block};
use session_engine::context::{self, js_to_string};
use session_engine::session::{Kind, Session};
use std::borrow::Cow;
use std::collections::VecDeque;
use std::io;

/// Where an entry stands relative to the exported leaf.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Status {
    /// On the path and in the model's context (or a settings entry on the path).
    Seen,
    /// On the path, before the governing compaction's kept entries: the model no longer sees it.
    Compacted,
    /// Not on the path to the leaf.
    OffPath,
}

/// One linear run of the tree: a root or a branch off a fork, following one child at a time.
pub(crate) struct Segment {
    pub(crate) entries: Vec<usize>,
    /// The entry this branch forks from.
    pub(crate) from: Option<usize>,
}

pub(crate) struct Plan {
    pub(crate) segments: Vec<Segment>,
    /// Segment of each entry (usize::MAX = not exported).
    pub(crate) seg_of: Vec<usize>,
    pub(crate) status: Vec<Status>,
    /// Path position where the compacted part ends (the first kept entry), with the governing compaction.
    pub(crate) cut: Option<(usize, usize)>,
    pub(crate) leaf: Option<usize>,
}

pub(crate) fn plan(session: &Session, leaf: Option<usize>, whole: bool) -> Plan {
    let n = session.len();
    let path = session.path(leaf);
    let mut status = vec![Status::OffPath; n];
    for &i in &path {
        status[i] = Status::Seen;
    }
    // The governing compaction: the last one on the path; before its kept entries, nothing is seen.
    let mut cut = None;
    if let Some(ci) = path.iter().rposition(|&i| session.kind(i) == Kind::Compaction) {
        let first_kept = session.value(path[ci]).str_field("firstKeptEntryId").map(str::to_string);
        let k = path[..ci].iter().position(|&i| first_kept.as_deref() == Some(session.id(i))).unwrap_or(ci);
        for &i in &path[..k] {
            status[i] = Status::Compacted;
        }
        cut = Some((path.get(k).copied().unwrap_or(path[ci]), path[ci]));
    }
    let mut seg_of = vec![usize::MAX; n];
    let mut segments = Vec::new();
    if !whole {
        for &i in &path {
            seg_of[i] = 0;
        }
        segments.push(Segment { entries: path, from: None });
    } else {
        let mut queue: VecDeque<(usize, Option<usize>)> = VecDeque::new();
        let roots: Vec<usize> = session.roots().iter().map(|&r| r as usize).collect();
        // The root of the active path first.
        for &r in roots
            .iter()
            .filter(|&&r| path.first() == Some(&r))
            .chain(roots.iter().filter(|&&r| path.first() != Some(&r)))
        {
            queue.push_back((r, None));
        }
        while let Some((start, from)) = queue.pop_front() {
            let id = segments.len();
            let mut entries = Vec::new();
            let mut cur = start;
            loop {
                if seg_of[cur] != usize::MAX {
                    break; // a cycle the loader reported; never loop
                }
                seg_of[cur] = id;
                entries.push(cur);
                let ch = session.children(cur);
                if ch.is_empty() {
                    break;
                }
                // Follow the path to the leaf, else the newest child (children are sorted by time).
                let next = ch
                    .iter()
                    .map(|&c| c as usize)
                    .find(|&c| status[c] != Status::OffPath)
                    .unwrap_or(*ch.last().unwrap() as usize);
                for &c in ch {
                    if c as usize != next {
                        queue.push_back((c as usize, Some(cur)));
                    }
                }
                cur = next;
            }
            segments.push(Segment { entries, from });
        }
    }
    Plan { segments, seg_of, status, cut, leaf }
}

/// One line of text for outlines: whitespace folded, control and bidi characters replaced.
pub(crate) fn preview(text: &str, max: usize) -> String {
    let mut out = String::new();
    let mut count = 0;
    for w in text.split_whitespace() {
        if count >= max {
            out.push('…');
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        for c in w.chars() {
            if count >= max {
                break;
            }
            let bad = c.is_control()
                || ('\u{202A}'..='\u{202E}').contains(&c)
                || ('\u{2066}'..='\u{2069}').contains(&c)
                || c == '\u{200B}';
            out.push(if bad { '�' } else { c });
            count += 1;
        }
    }
    out
}

pub(crate) fn content_text(content: Option<&Value>) -> Cow<'_, str> {
    match content {
        Some(Value::Str(s)) => Cow::Borrowed(s),
        // The common tool result: one text block, shown without a copy.
        Some(Value::Arr(list)) if list.len() == 1 && Block::of(&list[0]).text().is_some() => {
            Cow::Borrowed(Block::of(&list[0]).text().unwrap_or(""))
        }
        Some(Value::Arr(_)) => blocks(content)
            .filter_map(|b| match b {
                Block::Text(b) => Some(
                    b.get("text")
                        .map(|t| t.as_str().map(str::to_string).unwrap_or_else(|| js_to_string(t)))
                        .unwrap_or_default(),
                ),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n")
            .into(),
        _ => Cow::Borrowed(""),
    }
}

/// The outline line of an entry, or None when it is not worth a line.
pub(crate) fn outline_text(session: &Session, idx: usize, v: &Value) -> Option<String> {
    let text = match session.kind(idx) {
        Kind::Message => {
            let m = v.get("message")?;
            match m.str_field("role") {
                Some("user") => format!("user: {}", preview(&content_text(m.get("content")), 80)),
                Some("bashExecution") => format!("$ {}", preview(m.str_field("command").unwrap_or(""), 80)),
                _ => return None,
            }
        }
        Kind::Compaction => format!("compaction: {}", preview(v.str_field("summary").unwrap_or(""), 60)),
        Kind::BranchSummary => format!("branch summary: {}", preview(v.str_field("summary").unwrap_or(""), 60)),
        Kind::SessionInfo => format!("renamed: {}", preview(v.str_field("name").unwrap_or(""), 60)),
        _ => return None,
    };
    Some(text)
}

pub(crate) fn head_facts(session: &Session, p: &Plan, what: &str, keep: bool) -> Vec<(String, String)> {
    let mut f = Vec::new();
    f.push(("Export".into(), what.into()));
    if let Some(h) = session.header() {
        f.push(("Session id".into(), h.id.clone()));
        if let Some(c) = &h.cwd {
            f.push(("Working directory".into(), c.clone()));
        }
        if let Some(t) = &h.timestamp {
            f.push(("Started".into(), t.clone()));
        }
    }
    if let Some(n) = session.name() {
        f.push(("Name".into(), crate::redaction::text(n, keep).into_owned()));
    }
    f.push(("Entries".into(), session.len().to_string()));
    f.push(("Branches".into(), p.segments.len().to_string()));
    if let Some(l) = p.leaf {
        f.push(("Leaf".into(), session.id(l).into()));
    }
    if let Some((first_kept, comp)) = p.cut {
        let gone = p.status.iter().filter(|&&x| x == Status::Compacted).count();
        f.push((
            "Compacted".into(),
            format!(
                "{gone} entries before {} are summarized by compaction {}",
                session.id(first_kept),
                session.id(comp)
            ),
        ));
    }
    f
}

pub(crate) fn segment_label(session: &Session, p: &Plan, k: usize) -> String {
    let seg = &p.segments[k];
    let n = seg.entries.len();
    match seg.from {
        None if k == 0 && p.leaf.is_some() => format!("Active path · {n} entries"),
        None => format!("Root {} · {n} entries", session.id(seg.entries[0])),
        Some(f) => format!("Branch {k} from {} · {n} entries", session.id(f)),
    }
}

pub(crate) trait Renderer {
    fn begin(&mut self, title: &str, facts: &[(String, String)]) -> io::Result<()>;
    fn outline_begin(&mut self) -> io::Result<()>;
    fn outline_segment_begin(&mut self, k: usize, label: &str, open: bool) -> io::Result<()>;
    fn outline_item(&mut self, idx: usize, text: &str, st: Status) -> io::Result<()>;
    fn outline_segment_end(&mut self) -> io::Result<()>;
    fn outline_end(&mut self) -> io::Result<()>;
    fn segment_begin(&mut self, k: usize, label: &str, from: Option<usize>) -> io::Result<()>;
    fn cut_marker(&mut self, comp: usize) -> io::Result<()>;
    fn entry(&mut self, session: &Session, idx: usize, v: &Value, st: Status) -> io::Result<()>;
    fn forks(&mut self, segs: &[usize]) -> io::Result<()>;
    fn segment_end(&mut self) -> io::Result<()>;
    fn end(&mut self) -> io::Result<()>;
    /// Bytes another renderer of the same format produced.
    fn raw(&mut self, bytes: &[u8]) -> io::Result<()>;
}

/// The pieces of an entry both formats show, in order.
pub(crate) enum Part<'a> {
    /// Prose (a message's text).
    Text(&'a str),
    /// A collapsed block: summary line and its body (verbatim).
    Folded { title: String, body: Cow<'a, str> },
    /// A one-line fact.
    Meta(String),
    /// A summary's sections.
    Summary(&'a str),
}

fn pretty(v: &Value) -> String {
    pi_json::to_string(v)
}

/// Tool-call arguments, readably: one `key: value` per argument, string values as they are (a
/// written file's content with its real line breaks), other values as JSON.
fn tool_args(v: &Value) -> String {
    let Value::Obj(m) = v else { return pretty(v) };
    let mut out = String::new();
    for (k, x) in m.iter() {
        out.push_str(k);
        out.push(':');
        match x {
            Value::Str(s) if s.contains('\n') => {
                out.push('\n');
                out.push_str(s);
            }
            Value::Str(s) => {
                out.push(' ');
                out.push_str(s);
            }
            other => {
                out.push(' ');
                out.push_str(&pretty(other));
            }
        }
        out.push('\n');
    }
    out
}

/// The role line and the parts of an entry.
pub(crate) fn parts_of<'a>(session: &'a Session, idx: usize, v: &'a Value) -> (String, Vec<Part<'a>>) {
    let mut parts = Vec::new();
    let kind = session.kind(idx);
    let title = match kind {
        Kind::Message => {
            let Some(m) = v.get("message") else { return ("message".into(), parts) };
            let role = m.str_field("role").unwrap_or("message");
            match role {
                "user" => {
                    push_content(&mut parts, m.get("content"));
                }
                "assistant" => {
                    for b in blocks(m.get("content")) {
                        match b {
                            Block::Text(_) => {
                                if let Some(t) = b.text() {
                                    parts.push(Part::Text(t));
                                }
                            }
                            Block::Thinking(_) => parts.push(Part::Folded {
                                title: "thinking".into(),
                                body: Cow::Borrowed(b.thinking().unwrap_or("")),
                            }),
                            Block::ToolCall(_) => parts.push(Part::Folded {
                                title: format!("tool call: {}", preview(b.tool_name().unwrap_or("?"), 60)),
                                body: b.arguments().map(tool_args).unwrap_or_default().into(),
                            }),
                            Block::Image(v) | Block::Other(v) => {
                                if let Some(other) = v.str_field("type") {
                                    parts.push(Part::Meta(format!("[{} block]", preview(other, 30))));
                                }
                            }
                        }
                    }
                    let mut meta = Vec::new();
                    if let Some(model) = m.str_field("model") {
                        meta.push(format!("model {}", preview(model, 60)));
                    }
                    if let Some(u) = context::assistant_usage(m) {
                        meta.push(format!(
                            "usage {} tokens",
                            pi_json::number_to_string(context::context_tokens_of_usage(u))
                        ));
                        if let Some(c) = u.get("cost").and_then(|c| c.get("total")).and_then(Value::as_f64) {
                            meta.push(format!("cost ${}", pi_json::number_to_string(c)));
                        }
                    }
                    if let Some(r) = m.str_field("stopReason").filter(|r| *r != "stop" && *r != "toolUse") {
                        meta.push(format!("stop: {}", preview(r, 30)));
                    }
                    if let Some(e) = m.str_field("errorMessage") {
                        meta.push(format!("error: {}", preview(e, 200)));
                    }
                    if !meta.is_empty() {
                        parts.push(Part::Meta(meta.join(" · ")));
                    }
                }
                "toolResult" => {
                    let err = if m.get("isError").is_some_and(Value::truthy) { " (error)" } else { "" };
                    let mut body = content_text(m.get("content"));
                    for b in blocks(m.get("content")) {
                        if let Block::Image(b) = b {
                            body.to_mut().push_str(&format!("\n[image {}]", b.str_field("mimeType").unwrap_or("")));
                        }
                    }
                    parts.push(Part::Folded {
                        title: format!("tool result: {}{err}", preview(m.str_field("toolName").unwrap_or("?"), 60)),
                        body,
                    });
                }
                "bashExecution" => {
                    parts.push(Part::Folded {
                        title: format!("$ {}", preview(m.str_field("command").unwrap_or(""), 100)),
                        body: Cow::Borrowed(m.str_field("output").unwrap_or("")),
                    });
                }
                _ => parts.push(Part::Folded { title: "message".into(), body: pretty(m).into() }),
            }
            role.to_string()
        }
        Kind::CustomMessage => {
            push_content(&mut parts, v.get("content"));
            format!("custom message ({})", v.str_field("customType").unwrap_or("?"))
        }
        Kind::Compaction => {
            parts.push(Part::Meta(format!(
                "compaction · tokens before: {} · first kept entry: {}",
                v.get("tokensBefore").map(js_to_string).unwrap_or_default(),
                v.str_field("firstKeptEntryId").unwrap_or("(none)")
            )));
            parts.push(Part::Summary(v.str_field("summary").unwrap_or("")));
            "compaction".into()
        }
        Kind::BranchSummary => {
            parts.push(Part::Meta(format!("summary of the branch left at {}", v.str_field("fromId").unwrap_or("?"))));
            parts.push(Part::Summary(v.str_field("summary").unwrap_or("")));
            "branch summary".into()
        }
        Kind::Label => {
            let t = v.str_field("targetId").unwrap_or("?");
            match v.get("label").and_then(Value::as_str) {
                Some(l) => parts.push(Part::Meta(format!("label on {t}: {l}"))),
                None => parts.push(Part::Meta(format!("label on {t} cleared"))),
            }
            "label".into()
        }
        Kind::SessionInfo => {
            parts.push(Part::Meta(format!("session named: {}", v.str_field("name").unwrap_or(""))));
            "session name".into()
        }
        Kind::ModelChange => {
            parts.push(Part::Meta(format!(
                "model: {} / {}",
                v.str_field("provider").unwrap_or("?"),
                v.str_field("modelId").unwrap_or("?")
            )));
            "model change".into()
        }
        Kind::ThinkingLevelChange => {
            parts.push(Part::Meta(format!("thinking level: {}", v.str_field("thinkingLevel").unwrap_or("?"))));
            "thinking level".into()
        }
        _ => {
            // The line as written, unless secrets were redacted from it: then the redacted copy.
            let raw = session.raw(idx);
            let body = if pi_json::parse_bytes(&raw).ok().as_ref() == Some(v) {
                match raw {
                    std::borrow::Cow::Borrowed(b) => String::from_utf8_lossy(b),
                    std::borrow::Cow::Owned(b) => String::from_utf8_lossy(&b).into_owned().into(),
                }
            } else {
                pretty(v).into()
            };
            parts.push(Part::Folded { title: "entry data".into(), body });
            session.entry(idx).type_name.to_string()
        }
    };
    (title, parts)
}

fn push_content<'a>(parts: &mut Vec<Part<'a>>, content: Option<&'a Value>) {
    match content {
        Some(Value::Str(t)) => parts.push(Part::Text(t)),
        Some(Value::Arr(_)) => {
            for b in blocks(content) {
                match b {
                    Block::Text(_) => {
                        if let Some(t) = b.text() {
                            parts.push(Part::Text(t));
                        }
                    }
                    Block::Image(v) => {
                        parts.push(Part::Meta(format!("[image {}]", v.str_field("mimeType").unwrap_or(""))))
                    }
                    Block::Thinking(v) | Block::ToolCall(v) | Block::Other(v) => {
                        if let Some(other) = v.str_field("type") {
                            parts.push(Part::Meta(format!("[{} block]", preview(other, 30))));
                        }
                    }
                }
            }
        }
        _ => {}
    }
}

pub(crate) fn status_note(st: Status) -> Option<&'static str> {
    match st {
        Status::Seen => None,
        Status::Compacted => Some("compacted: the model no longer sees this"),
        Status::OffPath => Some("not on the active path"),
    }
}
