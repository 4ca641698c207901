//! Export: a session, a branch or the context at a node, as Markdown or as one self-contained
//! HTML file, streamed to any writer.
//!
//! The seam: an export reads a loaded [`Session`] and writes to the `Write` it is given. It
//! writes no session file and opens none (the caller reads the file and creates the target,
//! through `session_engine::store::write_new_file`), and knows nothing of Tauri, specta, HTTP or
//! SQLite. It depends on `session-engine`, `pi-json` and `summary-analysis` (a summary's
//! sections); none of them depends on it.
//!
//! Session content is untrusted. In HTML every piece of it is a text node, escaped (`& < >`);
//! no attribute ever carries session data (anchors are `e<entry index>`), the page has no
//! script, no external URL and a Content-Security-Policy of `default-src 'none'` with inline
//! styles only. In Markdown every message body is a fenced block whose fence is longer than any
//! backtick run in it, and every inline piece (ids, names, summary items) has its punctuation
//! backslash-escaped, so no renderer turns it into HTML or links.
//!
//! Secrets stay home: by default every entry's strings are redacted (`secrets::redact`, see
//! `redaction.rs`) before anything is rendered from them, and [`Stats::secrets`] lists what was
//! redacted where; [`find_secrets`] gives the same list before anything is written, and
//! [`Options::keep_secrets`] keeps them.
//!
//! The output streams: each entry's line is parsed on its own (the session's DOM cache is not
//! filled) and written before the next one, so a 264 MB session is held once, as its bytes.
//!
//! The files: `plan.rs` what is exported and the parts both formats show, `html.rs` and
//! `markdown.rs` the two formats, `redaction.rs` the secrets, and this file the driver (the
//! outline, the body rendered in chunks on two threads, the context scope).

mod html;
mod markdown;
mod plan;
mod redaction;

pub use redaction::SecretFinding;

use html::Html;
use markdown::Md;
use plan::{content_text, head_facts, outline_text, plan, preview, segment_label, Plan, Renderer, Status};
use session_engine::context::{build_context, estimate_context};
use session_engine::session::{Kind, Session};
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

/// How to export.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Write secrets as they are. Off by default: an export is made to leave the machine.
    pub keep_secrets: bool,
}

/// What an export wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub entries: usize,
    pub branches: usize,
    /// The secrets redacted, in output order (empty with `keep_secrets`).
    pub secrets: Vec<SecretFinding>,
}

/// The secrets an export of `scope` would redact, in output order, without writing anything:
/// the list the user sees before choosing to export (and to keep them or not).
pub fn find_secrets(session: &Session, scope: Scope) -> Vec<SecretFinding> {
    let entries: Vec<usize> = match scope {
        Scope::Context { leaf } => build_context(session, leaf).messages.iter().map(|m| m.entry).collect(),
        Scope::Session { leaf } | Scope::Branch { leaf } => {
            let p = plan(session, leaf, matches!(scope, Scope::Session { .. }));
            p.segments.iter().flat_map(|s| s.entries.iter().copied()).collect()
        }
    };
    // Most lines hold no keyword and cost one pass over their bytes; the others are parsed and
    // scanned on two threads, like the export's body.
    let half = entries.len() / 2;
    let scan = |part: &[usize]| -> Vec<SecretFinding> {
        part.iter().flat_map(|&i| redaction::entry_value(session, i, false).1).collect()
    };
    std::thread::scope(|sc| {
        let second = sc.spawn(|| scan(&entries[half..]));
        let mut out = scan(&entries[..half]);
        match second.join() {
            Ok(rest) => out.extend(rest),
            Err(panic) => std::panic::resume_unwind(panic),
        }
        out
    })
}

/// Streams the export to `w`, secrets redacted. `progress(done, total)` is called every few
/// hundred entries with bytes of the session read so far.
pub fn export(
    session: &Session,
    scope: Scope,
    format: Format,
    title: &str,
    w: &mut dyn Write,
    progress: &mut dyn FnMut(u64, u64),
) -> io::Result<Stats> {
    export_with(session, scope, format, Options::default(), title, w, progress)
}

/// [`export`] with options.
pub fn export_with(
    session: &Session,
    scope: Scope,
    format: Format,
    opts: Options,
    title: &str,
    w: &mut dyn Write,
    progress: &mut dyn FnMut(u64, u64),
) -> io::Result<Stats> {
    let keep = opts.keep_secrets;
    let mut out = renderer(format, keep, w);
    let total = session.file_len();
    let title = redaction::text(title, keep);
    match scope {
        Scope::Context { leaf } => export_context(session, leaf, &title, keep, out.as_mut()),
        Scope::Session { leaf } | Scope::Branch { leaf } => {
            let whole = matches!(scope, Scope::Session { .. });
            let p = plan(session, leaf, whole);
            let what = if whole { "Session" } else { "Branch" };
            out.begin(&title, &head_facts(session, &p, what, keep))?;
            // The outline: one block per branch, its notable entries as links.
            out.outline_begin()?;
            // A user or bash message has `"user"` or `"bashExecution"` in its line: only those
            // lines are asked for their role (a line writing the role with \u escapes, which Pi
            // never does, is left out of the outline, not of the export).
            let user = memchr::memmem::Finder::new(b"\"user\"");
            let bash = memchr::memmem::Finder::new(b"\"bashExecution\"");
            let maybe = |i: usize| {
                let raw = session.raw(i);
                user.find(&raw).is_some() || bash.find(&raw).is_some()
            };
            for (k, seg) in p.segments.iter().enumerate() {
                let label = segment_label(session, &p, k);
                out.outline_segment_begin(k, &label, k == 0)?;
                for &i in &seg.entries {
                    let interesting = match session.kind(i) {
                        Kind::Message => maybe(i) && matches!(session.role(i), Some("user" | "bashExecution")),
                        Kind::Compaction | Kind::BranchSummary | Kind::SessionInfo => true,
                        _ => false,
                    };
                    if !interesting && session.label_of(session.id(i)).is_none() {
                        continue;
                    }
                    // Found again, and reported, when its entry is written.
                    let (v, _) = redaction::entry_value(session, i, keep);
                    let mut text =
                        outline_text(session, i, &v).unwrap_or_else(|| session.entry(i).type_name.to_string());
                    if let Some(l) = session.label_of(session.id(i)) {
                        text = format!("[{}] {text}", preview(&redaction::text(l, keep), 40));
                    }
                    out.outline_item(i, &text, p.status[i])?;
                }
                out.outline_segment_end()?;
            }
            out.outline_end()?;
            let (done, secrets) = body(session, &p, format, keep, out.as_mut(), total, progress, CHUNK_ITEMS)?;
            out.end()?;
            progress(total, total);
            Ok(Stats { entries: done, branches: p.segments.len(), secrets })
        }
    }
}

fn renderer<'w>(format: Format, keep: bool, w: &'w mut dyn Write) -> Box<dyn Renderer + 'w> {
    match format {
        Format::Html => Box::new(Html { w, keep }),
        Format::Markdown => Box::new(Md { w, keep }),
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

/// Writes the segments (every entry, in order) and returns how many entries were written, with
/// the secrets redacted from them.
///
/// The parse and the rendering are most of an export's time and each entry's output depends
/// only on the session and the plan, so the body is cut into chunks that two threads render
/// into buffers (this one the even chunks, a second one the odd chunks, at most two chunks
/// ahead); this thread writes them in order. The output is byte for byte the same as rendering
/// one entry after the other. A write error (a full disk, a cancel) stops both threads.
#[allow(clippy::too_many_arguments)]
fn body(
    session: &Session,
    p: &Plan,
    format: Format,
    keep: bool,
    out: &mut dyn Renderer,
    total: u64,
    progress: &mut dyn FnMut(u64, u64),
    chunk_items: usize,
) -> io::Result<(usize, Vec<SecretFinding>)> {
    let mut items = Vec::with_capacity(session.len() + 2 * p.segments.len());
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
        bytes += item_bytes(session, it);
        if n + 1 - from >= chunk_items.max(1) || bytes >= 1 << 20 {
            chunks.push((&items[from..=n], bytes));
            (from, bytes) = (n + 1, 0);
        }
    }
    if from < items.len() {
        chunks.push((&items[from..], bytes));
    }
    type Rendered = (Vec<u8>, Vec<SecretFinding>);
    let render = |chunk: &[Item]| -> io::Result<Rendered> {
        let mut buf = Vec::with_capacity(1 << 20);
        let mut found = Vec::new();
        let mut r = renderer(format, keep, &mut buf);
        for &item in chunk {
            render_item(session, p, keep, r.as_mut(), item, &mut found)?;
        }
        drop(r);
        Ok((buf, found))
    };
    let entries = p.segments.iter().map(|seg| seg.entries.len()).sum();
    let mut secrets = Vec::new();
    std::thread::scope(|sc| -> io::Result<()> {
        let (tx, rx) = std::sync::mpsc::sync_channel::<io::Result<Rendered>>(2);
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
            let (buf, found) = if j % 2 == 0 {
                render(c)?
            } else {
                rx.recv().map_err(|_| io::Error::other("the export's second thread stopped"))??
            };
            out.raw(&buf)?;
            secrets.extend(found);
            done_bytes += bytes;
            if done_bytes - reported >= 1 << 20 || j + 1 == chunks.len() {
                reported = done_bytes;
                progress(done_bytes.min(total), total);
            }
        }
        Ok(())
    })?;
    Ok((entries, secrets))
}

/// Bytes of the session line behind an item (progress counts these).
fn item_bytes(session: &Session, it: &Item) -> u64 {
    match *it {
        Item::Entry { idx, .. } => session.entry(idx).end - session.entry(idx).start + 1,
        _ => 0,
    }
}

fn render_item(
    session: &Session,
    p: &Plan,
    keep: bool,
    out: &mut dyn Renderer,
    item: Item,
    found: &mut Vec<SecretFinding>,
) -> io::Result<()> {
    match item {
        Item::SegmentBegin(k) => out.segment_begin(k, &segment_label(session, p, k), p.segments[k].from),
        Item::SegmentEnd => out.segment_end(),
        Item::Entry { k, idx: i } => {
            if let Some((first_kept, comp)) = p.cut {
                if i == first_kept && p.status[i] != Status::Compacted && first_kept != comp {
                    out.cut_marker(comp)?;
                }
            }
            let (v, secrets) = redaction::entry_value(session, i, keep);
            found.extend(secrets);
            out.entry(session, i, &v, p.status[i])?;
            // Branches that start here.
            let forks: Vec<usize> = session
                .children(i)
                .iter()
                .map(|&c| p.seg_of[c as usize])
                .filter(|&t| t != k && t != usize::MAX)
                .collect();
            if !forks.is_empty() {
                out.forks(&forks)?;
            }
            Ok(())
        }
    }
}

fn export_context(
    session: &Session,
    leaf: Option<usize>,
    title: &str,
    keep: bool,
    out: &mut dyn Renderer,
) -> io::Result<Stats> {
    let ctx = build_context(session, leaf);
    let msgs = ctx.agent_messages();
    let est = estimate_context(&msgs);
    let mut facts = vec![("Export".to_string(), "Context".to_string())];
    if let Some(l) = leaf {
        facts.push(("Leaf".into(), session.id(l).into()));
    }
    facts.push(("Messages".into(), msgs.len().to_string()));
    facts.push(("Context (Pi's estimate)".into(), format!("{} tokens", pi_json::number_to_string(est.tokens))));
    if let Some(c) = ctx.compaction {
        let path_len = session.path(leaf).len();
        let in_ctx: std::collections::HashSet<usize> = ctx.messages.iter().map(|m| m.entry).collect();
        let gone = session.path(leaf).iter().take_while(|&&i| !in_ctx.contains(&i) && i != c).count();
        facts.push((
            "Compacted".into(),
            format!(
                "compaction {} summarizes {gone} of the {path_len} entries on the path, which the model no longer sees",
                session.id(c)
            ),
        ));
    }
    out.begin(title, &facts)?;
    out.outline_begin()?;
    out.outline_segment_begin(0, "Context messages", true)?;
    // Each entry once, redacted: the outline's previews and the body come from the same copy.
    let values: Vec<(pi_json::Value, Vec<SecretFinding>)> =
        ctx.messages.iter().map(|m| redaction::entry_value(session, m.entry, keep)).collect();
    for (m, (v, _)) in ctx.messages.iter().zip(&values) {
        let text = match m.message.str_field("role") {
            Some("user") => {
                let content = v.get("message").and_then(|m| m.get("content"));
                format!("user: {}", preview(&content_text(content), 80))
            }
            Some(r) => r.to_string(),
            None => "message".into(),
        };
        out.outline_item(m.entry, &text, Status::Seen)?;
    }
    out.outline_segment_end()?;
    out.outline_end()?;
    out.segment_begin(0, "What the model sees", None)?;
    let mut secrets = Vec::new();
    for (m, (v, found)) in ctx.messages.iter().zip(values) {
        // The entry itself: a message, or the summary / custom message the context shows.
        out.entry(session, m.entry, &v, Status::Seen)?;
        secrets.extend(found);
    }
    out.segment_end()?;
    out.end()?;
    Ok(Stats { entries: ctx.messages.len(), branches: 1, secrets })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The body as it was written before the two threads: one item after the other, one renderer.
    fn sequential(session: &Session, p: &Plan, format: Format) -> Vec<u8> {
        let mut buf = Vec::new();
        let mut r = renderer(format, false, &mut buf);
        let mut found = Vec::new();
        for (k, seg) in p.segments.iter().enumerate() {
            render_item(session, p, false, r.as_mut(), Item::SegmentBegin(k), &mut found).unwrap();
            for &idx in &seg.entries {
                render_item(session, p, false, r.as_mut(), Item::Entry { k, idx }, &mut found).unwrap();
            }
            render_item(session, p, false, r.as_mut(), Item::SegmentEnd, &mut found).unwrap();
        }
        drop(r);
        buf
    }

    /// Chunked on two threads, the body is byte for byte the sequential one, whatever the chunk
    /// size, on sessions with branches, compactions, labels and images; progress ends at the total.
    #[test]
    fn two_thread_body_equals_the_sequential_body() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../session-engine/tests/fixtures/conformance");
        let mut tried = 0;
        for name in [
            "branch-simple-siblings",
            "branch-summaries-in-context",
            "basic-labels-and-names",
            "basic-images",
            "compaction-first-kept-on-other-branch",
            "branch-deep-budget",
        ] {
            let session = Session::open(&dir.join(format!("{name}.jsonl"))).unwrap();
            for whole in [true, false] {
                let p = plan(&session, session.file_leaf(), whole);
                for format in [Format::Html, Format::Markdown] {
                    let want = sequential(&session, &p, format);
                    assert!(!want.is_empty(), "{name}");
                    for chunk in [1, 2, 3, 7, 256] {
                        let mut buf = Vec::new();
                        let mut r = renderer(format, false, &mut buf);
                        let mut last = (0, 0);
                        let (n, _) = body(
                            &session,
                            &p,
                            format,
                            false,
                            r.as_mut(),
                            session.file_len(),
                            &mut |d, t| last = (d, t),
                            chunk,
                        )
                        .unwrap();
                        drop(r);
                        assert_eq!(n, p.segments.iter().map(|g| g.entries.len()).sum::<usize>(), "{name}");
                        assert!(
                            buf == want,
                            "{name} {format:?} whole={whole} chunk={chunk}: the output differs from the sequential one"
                        );
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
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../session-engine/tests/fixtures/conformance");
        let session = Session::open(&dir.join("branch-summaries-in-context.jsonl")).unwrap();
        let p = plan(&session, session.file_leaf(), true);
        let mut w = Fails(2);
        let mut r = renderer(Format::Html, false, &mut w);
        let e = body(&session, &p, Format::Html, false, r.as_mut(), session.file_len(), &mut |_, _| {}, 1).unwrap_err();
        assert_eq!(e.to_string(), "disk full");
    }
}
