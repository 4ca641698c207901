//! The artifact ledger: a `## Artifacts` section listing the span's paths, commands and errors
//! that the summary does not mention, appended to a summary Arbor writes or reviews.
//!
//! Published evaluations find artifacts (which files were read or changed, what ran, what
//! failed) the part summaries lose most; the ledger carries them in Pi's own text, so Pi loads
//! it and the next compaction's update prompt hands it to the model with the rest of the
//! summary. Order: the most repeated first, then the most recent. Bounded: at most
//! [`MAX_LINES`] lines of at most 160 characters, and a quarter of the summary's size, heading
//! and note included (never less than [`MIN_BUDGET`] characters), so that the ledger adds at
//! most about 25 % to a summary's tokens; only a summary shorter than four times the floor grows
//! more. The bounds were tuned on `summarizer`'s `examples/ledger_bench.rs` (docs/PERFORMANCE.md,
//! "Summary quality"): with the heading outside the budget and a floor of 1,200 characters, the
//! short summaries of the conformance corpus grew by 41 % for 99 % of their artifact probes;
//! 480 gives 91 % for 24 %. The section goes before the file-list appendix; a summary that
//! already has an "Artifacts" section gets the new lines at its end.
use crate::check::{retention_over, FactKind};
use crate::parse::{parse, replace_section};
use rustc_hash::FxHashMap;
use session_engine::blocks::{blocks, Block};
use session_engine::session::{Kind, Session};

pub const MAX_LINES: usize = 40;
pub const MIN_BUDGET: usize = 480;
pub const HEADING: &str = "## Artifacts";
const NOTE: &str = "Files, commands and errors of this part of the session that the summary above does not mention:";

fn clip(t: &str, n: usize) -> String {
    let one = t.lines().next().unwrap_or("").trim();
    match one.char_indices().nth(n) {
        Some((at, _)) => format!("{}…", &one[..at]),
        None if t.trim().lines().count() > 1 => format!("{one} …"),
        None => one.to_string(),
    }
}

/// Occurrences (count, last position) of each path and command in the span, and which paths
/// were modified.
fn occurrences(session: &Session, entries: &[usize]) -> (FxHashMap<String, (usize, usize)>, FxHashMap<String, bool>) {
    let mut occ: FxHashMap<String, (usize, usize)> = FxHashMap::default();
    let mut modified: FxHashMap<String, bool> = FxHashMap::default();
    for (pos, &e) in entries.iter().enumerate() {
        if session.kind(e) != Kind::Message {
            continue;
        }
        // Parsed for this call only (see `probes::collect`).
        let v = session.value_transient(e);
        let Some(m) = v.get("message") else { continue };
        let mut bump = |k: String| {
            let o = occ.entry(k).or_insert((0, pos));
            o.0 += 1;
            o.1 = pos;
        };
        match session.role(e) {
            Some("assistant") => {
                for b in blocks(m.get("content")) {
                    let Block::ToolCall(v) = b else { continue };
                    let arg = |k: &str| v.get("arguments").and_then(|a| a.str_field(k)).map(str::to_string);
                    match v.str_field("name") {
                        Some(n @ ("read" | "write" | "edit")) => {
                            if let Some(p) = arg("path") {
                                *modified.entry(p.clone()).or_default() |= n != "read";
                                bump(p);
                            }
                        }
                        Some("bash") => {
                            if let Some(c) = arg("command") {
                                bump(c.trim().to_string());
                            }
                        }
                        _ => {}
                    }
                }
            }
            Some("bashExecution") => {
                if let Some(c) = m.str_field("command") {
                    bump(c.trim().to_string());
                }
            }
            _ => {}
        }
    }
    (occ, modified)
}

/// The ledger's lines for a span and a summary text (empty when the summary mentions every
/// artifact).
pub(crate) fn ledger_lines(session: &Session, entries: &[usize], prev: Option<usize>, text: &str) -> Vec<String> {
    let facts = retention_over(session, entries, prev, text).facts;
    let (occ, modified) = occurrences(session, entries);
    let mut cands: Vec<(usize, usize, usize, String)> = Vec::new(); // count, last, order, line
    for (order, f) in facts.iter().enumerate() {
        if f.mentioned {
            continue;
        }
        let (count, last) = match f.kind {
            FactKind::Path | FactKind::Command => occ.get(f.text.trim()).copied().unwrap_or((1, 0)),
            FactKind::Error => (1, entries.iter().position(|&e| session.id(e) == f.source_entry_id).unwrap_or(0)),
            FactKind::Constraint => continue,
        };
        let line = match f.kind {
            FactKind::Path => {
                let how = if modified.get(&f.text).copied().unwrap_or(false) { "modified" } else { "read" };
                format!("- {how} `{}`", clip(&f.text, 150))
            }
            FactKind::Command => format!("- ran `{}`", clip(&f.text, 150).replace('`', "'")),
            _ => format!("- error: {}", clip(&f.text, 150)),
        };
        cands.push((count, last, order, line));
    }
    cands.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
    // The heading and the note count against the budget: they are tokens the ledger adds too.
    let budget = (text.len() / 4).max(MIN_BUDGET).saturating_sub(HEADING.len() + NOTE.len() + 4);
    let mut used = 0;
    let mut out = Vec::new();
    for (_, _, _, line) in cands {
        if out.len() == MAX_LINES || used + line.len() + 1 > budget {
            break;
        }
        used += line.len() + 1;
        out.push(line);
    }
    out
}

/// `text` with the ledger added (unchanged when there is nothing to add).
pub(crate) fn with_ledger_over(session: &Session, entries: &[usize], prev: Option<usize>, text: &str) -> String {
    let lines = ledger_lines(session, entries, prev, text);
    add_lines(text, &lines)
}

/// Adds ledger lines to a summary text: into its "Artifacts" section when it has one, else as a
/// new section before the file-list appendix.
pub fn add_lines(text: &str, lines: &[String]) -> String {
    if lines.is_empty() {
        return text.to_string();
    }
    let parsed = parse(text);
    if let Some(i) = parsed.sections.iter().position(|s| s.title.eq_ignore_ascii_case("artifacts")) {
        let sec = &parsed.sections[i];
        let existing = sec.raw.split_once('\n').map(|x| x.1).unwrap_or("").trim_end();
        let mut body = existing.to_string();
        if !body.is_empty() {
            body.push('\n');
        }
        body.push_str(&lines.join("\n"));
        return replace_section(text, i, &body);
    }
    let body_len = text.len() - parsed.appendix_raw.len();
    let body = text[..body_len].trim_end();
    let mut out = String::with_capacity(text.len() + 64 * lines.len());
    out.push_str(body);
    if !body.is_empty() {
        out.push_str("\n\n");
    }
    out.push_str(HEADING);
    out.push('\n');
    out.push_str(NOTE);
    out.push('\n');
    out.push_str(&lines.join("\n"));
    out.push_str(&parsed.appendix_raw);
    out
}
