//! Export (issue 12 §2): a session, a branch or the context at a node, as Markdown or as one
//! self-contained HTML file.
//!
//! Session content is untrusted. In HTML every piece of it is a text node, escaped (`& < > " '`);
//! no attribute ever carries session data (anchors are `e<entry index>`), the page has no
//! script, no external URL and a Content-Security-Policy of `default-src 'none'` with inline
//! styles only. In Markdown every message body is a fenced block whose fence is longer than any
//! backtick run in it, and every inline piece (ids, names, summary items) has its punctuation
//! backslash-escaped, so no renderer turns it into HTML or links.
//!
//! The output streams: each entry's line is parsed on its own (the session's DOM cache is not
//! filled) and written before the next one, so a 264 MB session is held once, as its bytes.

use crate::blocks::{blocks, Block};
use crate::context::{build_context, estimate_context, js_to_string};
use crate::json::{self, Value};
use crate::session::{Kind, Session};
use crate::summary::{self, Marker};
use std::borrow::Cow;
use std::collections::VecDeque;
use std::io::{self, Write};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Markdown,
    Html,
}

/// What to export.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The whole tree: the active path (to `leaf`) first, then every other branch.
    Session { leaf: Option<usize> },
    /// The path from the root to `leaf`.
    Branch { leaf: Option<usize> },
    /// The messages the model gets with `leaf` as the leaf (`buildSessionContext`).
    Context { leaf: Option<usize> },
}

/// What an export wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub entries: usize,
    pub branches: usize,
}

/// Where an entry stands relative to the exported leaf.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    /// On the path and in the model's context (or a settings entry on the path).
    Seen,
    /// On the path, before the governing compaction's kept entries: the model no longer sees it.
    Compacted,
    /// Not on the path to the leaf.
    OffPath,
}

/// One linear run of the tree: a root or a branch off a fork, following one child at a time.
struct Segment {
    entries: Vec<usize>,
    /// The entry this branch forks from.
    from: Option<usize>,
}

struct Plan {
    segments: Vec<Segment>,
    /// Segment of each entry (usize::MAX = not exported).
    seg_of: Vec<usize>,
    status: Vec<Status>,
    /// Path position where the compacted part ends (the first kept entry), with the governing compaction.
    cut: Option<(usize, usize)>,
    leaf: Option<usize>,
}

fn plan(s: &Session, leaf: Option<usize>, whole: bool) -> Plan {
    let n = s.len();
    let path = s.path(leaf);
    let mut status = vec![Status::OffPath; n];
    for &i in &path {
        status[i] = Status::Seen;
    }
    // The governing compaction: the last one on the path; before its kept entries, nothing is seen.
    let mut cut = None;
    if let Some(ci) = path.iter().rposition(|&i| s.kind(i) == Kind::Compaction) {
        let first_kept = s.value(path[ci]).str_field("firstKeptEntryId").map(str::to_string);
        let k = path[..ci].iter().position(|&i| first_kept.as_deref() == Some(s.id(i))).unwrap_or(ci);
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
        let roots: Vec<usize> = s.roots().iter().map(|&r| r as usize).collect();
        // The root of the active path first.
        for &r in roots.iter().filter(|&&r| path.first() == Some(&r)).chain(roots.iter().filter(|&&r| path.first() != Some(&r))) {
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
                let ch = s.children(cur);
                if ch.is_empty() {
                    break;
                }
                // Follow the path to the leaf, else the newest child (children are sorted by time).
                let next = ch.iter().map(|&c| c as usize).find(|&c| status[c] != Status::OffPath).unwrap_or(*ch.last().unwrap() as usize);
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

/// A parsed entry line (parsed again here, never cached in the session).
fn entry_value(s: &Session, idx: usize) -> Value {
    json::parse_bytes(s.raw(idx)).unwrap_or(Value::Null)
}

/// One line of text for outlines: whitespace folded, control and bidi characters replaced.
fn preview(text: &str, max: usize) -> String {
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
            let bad = c.is_control() || ('\u{202A}'..='\u{202E}').contains(&c) || ('\u{2066}'..='\u{2069}').contains(&c) || c == '\u{200B}';
            out.push(if bad { '�' } else { c });
            count += 1;
        }
    }
    out
}

fn content_text(content: Option<&Value>) -> Cow<'_, str> {
    match content {
        Some(Value::Str(s)) => Cow::Borrowed(s),
        // The common tool result: one text block, shown without a copy.
        Some(Value::Arr(list)) if list.len() == 1 && Block::of(&list[0]).text().is_some() => Cow::Borrowed(Block::of(&list[0]).text().unwrap_or("")),
        Some(Value::Arr(_)) => blocks(content)
            .filter_map(|b| match b {
                Block::Text(b) => Some(b.get("text").map(|t| t.as_str().map(str::to_string).unwrap_or_else(|| js_to_string(t))).unwrap_or_default()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n")
            .into(),
        _ => Cow::Borrowed(""),
    }
}

/// The outline line of an entry, or None when it is not worth a line.
fn outline_text(s: &Session, idx: usize, v: &Value) -> Option<String> {
    let text = match s.kind(idx) {
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

/// Streams the export to `w`. `progress(done, total)` is called every few hundred entries with
/// bytes of the session read so far.
pub fn export(s: &Session, scope: Scope, format: Format, title: &str, w: &mut dyn Write, progress: &mut dyn FnMut(u64, u64)) -> io::Result<Stats> {
    let mut out = renderer(format, w);
    let total = s.file_len();
    match scope {
        Scope::Context { leaf } => export_context(s, leaf, title, out.as_mut()),
        Scope::Session { leaf } | Scope::Branch { leaf } => {
            let whole = matches!(scope, Scope::Session { .. });
            let p = plan(s, leaf, whole);
            let what = if whole { "Session" } else { "Branch" };
            out.begin(title, &head_facts(s, &p, what))?;
            // The outline: one block per branch, its notable entries as links.
            out.outline_begin()?;
            // A user or bash message has `"user"` or `"bashExecution"` in its line: only those
            // lines are asked for their role (a line writing the role with \u escapes, which Pi
            // never does, is left out of the outline, not of the export).
            let user = memchr::memmem::Finder::new(b"\"user\"");
            let bash = memchr::memmem::Finder::new(b"\"bashExecution\"");
            let maybe = |i: usize| user.find(s.raw(i)).is_some() || bash.find(s.raw(i)).is_some();
            for (k, seg) in p.segments.iter().enumerate() {
                let label = segment_label(s, &p, k);
                out.outline_segment_begin(k, &label, k == 0)?;
                for &i in &seg.entries {
                    let interesting = match s.kind(i) {
                        Kind::Message => maybe(i) && matches!(s.role(i), Some("user" | "bashExecution")),
                        Kind::Compaction | Kind::BranchSummary | Kind::SessionInfo => true,
                        _ => false,
                    };
                    if !interesting && s.label_of(s.id(i)).is_none() {
                        continue;
                    }
                    let v = entry_value(s, i);
                    let mut text = outline_text(s, i, &v).unwrap_or_else(|| s.entry(i).type_name.to_string());
                    if let Some(l) = s.label_of(s.id(i)) {
                        text = format!("[{}] {text}", preview(l, 40));
                    }
                    out.outline_item(i, &text, p.status[i])?;
                }
                out.outline_segment_end()?;
            }
            out.outline_end()?;
            let done = body(s, &p, format, out.as_mut(), total, progress, CHUNK_ITEMS)?;
            out.end()?;
            progress(total, total);
            Ok(Stats { entries: done, branches: p.segments.len() })
        }
    }
}

fn renderer<'w>(format: Format, w: &'w mut dyn Write) -> Box<dyn Renderer + 'w> {
    match format {
        Format::Html => Box::new(Html { w }),
        Format::Markdown => Box::new(Md { w }),
    }
}

/// One piece of the export's body, in output order.
#[derive(Clone, Copy)]
enum Item {
    SegmentBegin(usize),
    /// An entry of segment `k`: with the cut marker before it and the forks after it.
    Entry {
        k: usize,
        idx: usize,
    },
    SegmentEnd,
}

/// Items per chunk: enough that handing a chunk to the other thread costs nothing next to
/// rendering it, few enough that progress and Cancel stay prompt (chunks also end at 1 MiB of
/// session lines).
const CHUNK_ITEMS: usize = 256;

/// Writes the segments (every entry, in order) and returns how many entries were written.
///
/// The parse and the rendering are most of an export's time and each entry's output depends
/// only on the session and the plan, so the body is cut into chunks that two threads render
/// into buffers (this one the even chunks, a second one the odd chunks, at most two chunks
/// ahead); this thread writes them in order. The output is byte for byte the same as rendering
/// one entry after the other. A write error (a full disk, a cancel) stops both threads.
fn body(
    s: &Session,
    p: &Plan,
    format: Format,
    out: &mut dyn Renderer,
    total: u64,
    progress: &mut dyn FnMut(u64, u64),
    chunk_items: usize,
) -> io::Result<usize> {
    let mut items = Vec::with_capacity(s.len() + 2 * p.segments.len());
    for (k, seg) in p.segments.iter().enumerate() {
        items.push(Item::SegmentBegin(k));
        items.extend(seg.entries.iter().map(|&idx| Item::Entry { k, idx }));
        items.push(Item::SegmentEnd);
    }
    // A chunk ends after `chunk_items` items or 1 MiB of session lines, whichever comes first;
    // each with its bytes of session lines, for progress.
    let mut chunks: Vec<(&[Item], u64)> = Vec::new();
    let (mut from, mut bytes) = (0, 0u64);
    for (n, it) in items.iter().enumerate() {
        bytes += item_bytes(s, it);
        if n + 1 - from >= chunk_items.max(1) || bytes >= 1 << 20 {
            chunks.push((&items[from..=n], bytes));
            (from, bytes) = (n + 1, 0);
        }
    }
    if from < items.len() {
        chunks.push((&items[from..], bytes));
    }
    let render = |chunk: &[Item]| -> io::Result<Vec<u8>> {
        let mut buf = Vec::with_capacity(1 << 20);
        let mut r = renderer(format, &mut buf);
        for &item in chunk {
            render_item(s, p, r.as_mut(), item)?;
        }
        drop(r);
        Ok(buf)
    };
    let entries = p.segments.iter().map(|seg| seg.entries.len()).sum();
    std::thread::scope(|sc| -> io::Result<()> {
        let (tx, rx) = std::sync::mpsc::sync_channel::<io::Result<Vec<u8>>>(2);
        if chunks.len() > 1 {
            let chunks = &chunks;
            let render = &render;
            sc.spawn(move || {
                for (c, _) in chunks.iter().skip(1).step_by(2) {
                    // The receiver is gone when the writer stopped: stop too.
                    if tx.send(render(c)).is_err() {
                        break;
                    }
                }
            });
        } else {
            drop(tx);
        }
        let mut done_bytes = 0u64;
        let mut reported = 0u64;
        for (j, &(c, bytes)) in chunks.iter().enumerate() {
            let buf = if j % 2 == 0 { render(c)? } else { rx.recv().map_err(|_| io::Error::other("the export's second thread stopped"))?? };
            out.raw(&buf)?;
            done_bytes += bytes;
            if done_bytes - reported >= 1 << 20 || j + 1 == chunks.len() {
                reported = done_bytes;
                progress(done_bytes.min(total), total);
            }
        }
        Ok(())
    })?;
    Ok(entries)
}

/// Bytes of the session line behind an item (progress counts these).
fn item_bytes(s: &Session, it: &Item) -> u64 {
    match *it {
        Item::Entry { idx, .. } => s.entry(idx).end - s.entry(idx).start + 1,
        _ => 0,
    }
}

fn render_item(s: &Session, p: &Plan, out: &mut dyn Renderer, item: Item) -> io::Result<()> {
    match item {
        Item::SegmentBegin(k) => out.segment_begin(k, &segment_label(s, p, k), p.segments[k].from),
        Item::SegmentEnd => out.segment_end(),
        Item::Entry { k, idx: i } => {
            if let Some((first_kept, comp)) = p.cut {
                if i == first_kept && p.status[i] != Status::Compacted && first_kept != comp {
                    out.cut_marker(comp)?;
                }
            }
            let v = entry_value(s, i);
            out.entry(s, i, &v, p.status[i])?;
            // Branches that start here.
            let forks: Vec<usize> = s.children(i).iter().map(|&c| p.seg_of[c as usize]).filter(|&t| t != k && t != usize::MAX).collect();
            if !forks.is_empty() {
                out.forks(&forks)?;
            }
            Ok(())
        }
    }
}

fn head_facts(s: &Session, p: &Plan, what: &str) -> Vec<(String, String)> {
    let mut f = Vec::new();
    f.push(("Export".into(), what.into()));
    if let Some(h) = s.header() {
        f.push(("Session id".into(), h.id.clone()));
        if let Some(c) = &h.cwd {
            f.push(("Working directory".into(), c.clone()));
        }
        if let Some(t) = &h.timestamp {
            f.push(("Started".into(), t.clone()));
        }
    }
    if let Some(n) = s.name() {
        f.push(("Name".into(), n.into()));
    }
    f.push(("Entries".into(), s.len().to_string()));
    f.push(("Branches".into(), p.segments.len().to_string()));
    if let Some(l) = p.leaf {
        f.push(("Leaf".into(), s.id(l).into()));
    }
    if let Some((first_kept, comp)) = p.cut {
        let gone = p.status.iter().filter(|&&x| x == Status::Compacted).count();
        f.push(("Compacted".into(), format!("{gone} entries before {} are summarized by compaction {}", s.id(first_kept), s.id(comp))));
    }
    f
}

fn segment_label(s: &Session, p: &Plan, k: usize) -> String {
    let seg = &p.segments[k];
    let n = seg.entries.len();
    match seg.from {
        None if k == 0 && p.leaf.is_some() => format!("Active path · {n} entries"),
        None => format!("Root {} · {n} entries", s.id(seg.entries[0])),
        Some(f) => format!("Branch {k} from {} · {n} entries", s.id(f)),
    }
}

fn export_context(s: &Session, leaf: Option<usize>, title: &str, out: &mut dyn Renderer) -> io::Result<Stats> {
    let ctx = build_context(s, leaf);
    let msgs = ctx.agent_messages();
    let est = estimate_context(&msgs);
    let mut facts = vec![("Export".to_string(), "Context".to_string())];
    if let Some(l) = leaf {
        facts.push(("Leaf".into(), s.id(l).into()));
    }
    facts.push(("Messages".into(), msgs.len().to_string()));
    facts.push(("Context (Pi's estimate)".into(), format!("{} tokens", json::number_to_string(est.tokens))));
    if let Some(c) = ctx.compaction {
        let path_len = s.path(leaf).len();
        let in_ctx: std::collections::HashSet<usize> = ctx.messages.iter().map(|m| m.entry).collect();
        let gone = s.path(leaf).iter().take_while(|&&i| !in_ctx.contains(&i) && i != c).count();
        facts.push((
            "Compacted".into(),
            format!("compaction {} summarizes {gone} of the {path_len} entries on the path, which the model no longer sees", s.id(c)),
        ));
    }
    out.begin(title, &facts)?;
    out.outline_begin()?;
    out.outline_segment_begin(0, "Context messages", true)?;
    for m in &ctx.messages {
        let text = match m.message.str_field("role") {
            Some("user") => format!("user: {}", preview(&content_text(m.message.get("content")), 80)),
            Some(r) => r.to_string(),
            None => "message".into(),
        };
        out.outline_item(m.entry, &text, Status::Seen)?;
    }
    out.outline_segment_end()?;
    out.outline_end()?;
    out.segment_begin(0, "What the model sees", None)?;
    for m in &ctx.messages {
        // The entry itself: a message, or the summary / custom message the context shows.
        out.entry(s, m.entry, s.value(m.entry), Status::Seen)?;
    }
    out.segment_end()?;
    out.end()?;
    Ok(Stats { entries: ctx.messages.len(), branches: 1 })
}

// ---- Rendering --------------------------------------------------------------------------------

trait Renderer {
    fn begin(&mut self, title: &str, facts: &[(String, String)]) -> io::Result<()>;
    fn outline_begin(&mut self) -> io::Result<()>;
    fn outline_segment_begin(&mut self, k: usize, label: &str, open: bool) -> io::Result<()>;
    fn outline_item(&mut self, idx: usize, text: &str, st: Status) -> io::Result<()>;
    fn outline_segment_end(&mut self) -> io::Result<()>;
    fn outline_end(&mut self) -> io::Result<()>;
    fn segment_begin(&mut self, k: usize, label: &str, from: Option<usize>) -> io::Result<()>;
    fn cut_marker(&mut self, comp: usize) -> io::Result<()>;
    fn entry(&mut self, s: &Session, idx: usize, v: &Value, st: Status) -> io::Result<()>;
    fn forks(&mut self, segs: &[usize]) -> io::Result<()>;
    fn segment_end(&mut self) -> io::Result<()>;
    fn end(&mut self) -> io::Result<()>;
    /// Bytes another renderer of the same format produced.
    fn raw(&mut self, bytes: &[u8]) -> io::Result<()>;
}

/// The pieces of an entry both formats show, in order.
enum Part<'a> {
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
    json::to_string(v)
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
fn parts_of<'a>(s: &'a Session, idx: usize, v: &'a Value) -> (String, Vec<Part<'a>>) {
    let mut parts = Vec::new();
    let kind = s.kind(idx);
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
                            Block::Thinking(_) => parts.push(Part::Folded { title: "thinking".into(), body: Cow::Borrowed(b.thinking().unwrap_or("")) }),
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
                    if let Some(u) = crate::context::assistant_usage(m) {
                        meta.push(format!("usage {} tokens", json::number_to_string(crate::context::context_tokens_of_usage(u))));
                        if let Some(c) = u.get("cost").and_then(|c| c.get("total")).and_then(Value::as_f64) {
                            meta.push(format!("cost ${}", json::number_to_string(c)));
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
                    parts.push(Part::Folded { title: format!("tool result: {}{err}", preview(m.str_field("toolName").unwrap_or("?"), 60)), body });
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
            parts.push(Part::Meta(format!("model: {} / {}", v.str_field("provider").unwrap_or("?"), v.str_field("modelId").unwrap_or("?"))));
            "model change".into()
        }
        Kind::ThinkingLevelChange => {
            parts.push(Part::Meta(format!("thinking level: {}", v.str_field("thinkingLevel").unwrap_or("?"))));
            "thinking level".into()
        }
        _ => {
            parts.push(Part::Folded { title: "entry data".into(), body: String::from_utf8_lossy(s.raw(idx)) });
            s.entry(idx).type_name.to_string()
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
                    Block::Image(v) => parts.push(Part::Meta(format!("[image {}]", v.str_field("mimeType").unwrap_or("")))),
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

fn status_note(st: Status) -> Option<&'static str> {
    match st {
        Status::Seen => None,
        Status::Compacted => Some("compacted: the model no longer sees this"),
        Status::OffPath => Some("not on the active path"),
    }
}

// ---- HTML -------------------------------------------------------------------------------------

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

struct Html<'w> {
    w: &'w mut dyn Write,
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
        let p = summary::parse(text);
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
            write!(self.w, "<details><summary>files: {} read, {} modified</summary><pre>", p.read_files.len(), p.modified_files.len())?;
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
    fn entry(&mut self, s: &Session, idx: usize, v: &Value, st: Status) -> io::Result<()> {
        let (role, parts) = parts_of(s, idx, v);
        let class = match s.kind(idx) {
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
        esc(self.w, &s.entry(idx).timestamp)?;
        write!(self.w, " · ")?;
        esc(self.w, s.id(idx))?;
        if let Some(l) = s.label_of(s.id(idx)) {
            write!(self.w, " · label: ")?;
            esc(self.w, l)?;
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

// ---- Markdown ---------------------------------------------------------------------------------

struct Md<'w> {
    w: &'w mut dyn Write,
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
    fn entry(&mut self, s: &Session, idx: usize, v: &Value, st: Status) -> io::Result<()> {
        let (role, parts) = parts_of(s, idx, v);
        write!(self.w, "<a id=\"e{idx}\"></a>\n\n### ")?;
        md_inline(self.w, &role)?;
        write!(self.w, " · ")?;
        md_inline(self.w, &s.entry(idx).timestamp)?;
        write!(self.w, " · ")?;
        md_inline(self.w, s.id(idx))?;
        if let Some(l) = s.label_of(s.id(idx)) {
            write!(self.w, " · label: ")?;
            md_inline(self.w, l)?;
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
                    let p = summary::parse(t);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The body as it was written before the two threads: one item after the other, one renderer.
    fn sequential(s: &Session, p: &Plan, format: Format) -> Vec<u8> {
        let mut buf = Vec::new();
        let mut r = renderer(format, &mut buf);
        for (k, seg) in p.segments.iter().enumerate() {
            render_item(s, p, r.as_mut(), Item::SegmentBegin(k)).unwrap();
            for &idx in &seg.entries {
                render_item(s, p, r.as_mut(), Item::Entry { k, idx }).unwrap();
            }
            render_item(s, p, r.as_mut(), Item::SegmentEnd).unwrap();
        }
        drop(r);
        buf
    }

    /// Chunked on two threads, the body is byte for byte the sequential one, whatever the chunk
    /// size, on sessions with branches, compactions, labels and images; progress ends at the total.
    #[test]
    fn two_thread_body_equals_the_sequential_body() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/conformance");
        let mut tried = 0;
        for name in [
            "branch-simple-siblings",
            "branch-summaries-in-context",
            "basic-labels-and-names",
            "basic-images",
            "compaction-first-kept-on-other-branch",
            "branch-deep-budget",
        ] {
            let s = Session::open(&dir.join(format!("{name}.jsonl"))).unwrap();
            for whole in [true, false] {
                let p = plan(&s, s.file_leaf(), whole);
                for format in [Format::Html, Format::Markdown] {
                    let want = sequential(&s, &p, format);
                    assert!(!want.is_empty(), "{name}");
                    for chunk in [1, 2, 3, 7, 256] {
                        let mut buf = Vec::new();
                        let mut r = renderer(format, &mut buf);
                        let mut last = (0, 0);
                        let n = body(&s, &p, format, r.as_mut(), s.file_len(), &mut |d, t| last = (d, t), chunk).unwrap();
                        drop(r);
                        assert_eq!(n, p.segments.iter().map(|g| g.entries.len()).sum::<usize>(), "{name}");
                        assert!(buf == want, "{name} {format:?} whole={whole} chunk={chunk}: the output differs from the sequential one");
                        assert!(last.0 > 0 && last.0 <= last.1, "{name}: progress {last:?}");
                        tried += 1;
                    }
                }
            }
        }
        assert_eq!(tried, 6 * 2 * 2 * 5);
    }

    /// A writer that fails stops the export with its error, also when the second thread is ahead.
    #[test]
    fn a_failing_writer_stops_both_threads() {
        struct Fails(usize);
        impl Write for Fails {
            fn write(&mut self, b: &[u8]) -> io::Result<usize> {
                if self.0 == 0 {
                    return Err(io::Error::other("disk full"));
                }
                self.0 -= 1;
                Ok(b.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/conformance");
        let s = Session::open(&dir.join("branch-summaries-in-context.jsonl")).unwrap();
        let p = plan(&s, s.file_leaf(), true);
        let mut w = Fails(2);
        let mut r = renderer(Format::Html, &mut w);
        let e = body(&s, &p, Format::Html, r.as_mut(), s.file_len(), &mut |_, _| {}, 1).unwrap_err();
        assert_eq!(e.to_string(), "disk full");
    }
}
