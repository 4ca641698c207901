//! Citations: each summary item (list item, or free-text line) linked to the span entries that
//! support it, and the items nothing supports.
//!
//! An entry supports an item by the item's content words it contains, each word weighted by
//! how rare it is in the span (`ln(1 + N / df)`, N entries, df of them containing the word), as
//! a share of the item's total weight (a word the span never has weighs `ln(1 + N)`). The best
//! [`MAX_SOURCES`] entries of the span with a share of at least [`SUPPORT`] are its sources; the
//! previous summary, when it supports the item too, is listed after them (the text Pi carries
//! forward). An item of at least three
//! content words with no source is *unsupported*: nothing in what it summarized says it, a
//! possible invention. Headings, placeholders ("(none)") and the file-list appendix are not items.
//!
//! What an entry says: user text; assistant text, tool-call names and string arguments; tool
//! results; bash command and output; summaries and custom messages. Long texts count by their
//! first 16 KB and last 4 KB (where commands put their results), which keeps citing the largest
//! compaction of a 100k-entry session within a few milliseconds.
use crate::chain::summary_text;
use crate::diff::units;
use crate::parse::parse;
use crate::words;
use pi_json::Value;
use rustc_hash::FxHashMap;
use serde::Serialize;
use session_engine::blocks::{blocks, Block};
use session_engine::context;
use session_engine::session::{Kind, Session};

pub const MAX_SOURCES: usize = 3;
pub const SUPPORT: f64 = 0.35;
const HEAD: usize = 16 * 1024;
const TAIL: usize = 4 * 1024;

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Source {
    pub entry_id: String,
    pub score: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Cited {
    pub section: String,
    pub text: String,
    pub sources: Vec<Source>,
    /// No source, and at least three content words.
    pub unsupported: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Citations {
    pub items: Vec<Cited>,
}

impl Citations {
    pub fn unsupported(&self) -> impl Iterator<Item = &Cited> {
        self.items.iter().filter(|c| c.unsupported)
    }
}

fn bounded(t: &str) -> (&str, &str) {
    if t.len() <= HEAD + TAIL {
        return (t, "");
    }
    let mut h = HEAD;
    while !t.is_char_boundary(h) {
        h -= 1;
    }
    let mut s = t.len() - TAIL;
    while !t.is_char_boundary(s) {
        s += 1;
    }
    (&t[..h], &t[s..])
}

/// Calls `f` with each text an entry says (see the module docs).
fn entry_texts(session: &Session, e: usize, f: &mut dyn FnMut(&str)) {
    let mut each = |t: &str| {
        let (a, b) = bounded(t);
        f(a);
        if !b.is_empty() {
            f(b);
        }
    };
    match session.kind(e) {
        Kind::BranchSummary | Kind::Compaction => each(summary_text(session, e)),
        Kind::CustomMessage => {
            let v = session.value_transient(e);
            each(&context::text_blocks_joined(v.get("content").unwrap_or(&Value::Null), "\n"));
        }
        Kind::Message => {
            // Parsed for this call only (see `probes::collect`).
            let v = session.value_transient(e);
            let Some(m) = v.get("message") else { return };
            match session.role(e) {
                Some("user") => each(&context::user_text(m.get("content").unwrap_or(&Value::Null))),
                Some("assistant") => {
                    for b in blocks(m.get("content")) {
                        match b {
                            Block::Text(_) => each(b.text().unwrap_or("")),
                            Block::ToolCall(v) => {
                                each(v.str_field("name").unwrap_or(""));
                                if let Some(Value::Obj(args)) = v.get("arguments") {
                                    for (_, a) in args.iter() {
                                        if let Some(s) = a.as_str() {
                                            each(s);
                                        }
                                    }
                                }
                            }
                            _ => {}
                        }
                    }
                }
                Some("bashExecution") => {
                    each(m.str_field("command").unwrap_or(""));
                    each(m.str_field("output").unwrap_or(""));
                }
                Some(_) => each(&context::text_blocks_joined(m.get("content").unwrap_or(&Value::Null), "\n")),
                None => {}
            }
        }
        _ => {}
    }
}

/// Citations of `text` against the span `entries` and the previous summary `prev`.
pub(crate) fn cite_over(session: &Session, entries: &[usize], prev: Option<usize>, text: &str) -> Citations {
    let parsed = parse(text);
    // The items and the summary's vocabulary.
    let mut vocab: FxHashMap<String, u32> = FxHashMap::default();
    let mut items: Vec<(String, String, Vec<u32>)> = Vec::new();
    for sec in &parsed.sections {
        for u in units(sec) {
            let u = u.trim();
            if u.is_empty() || words::is_placeholder(u) || u.starts_with("**Turn Context") || u == "---" {
                continue;
            }
            let mut ids: Vec<u32> = words::word_set(u)
                .into_iter()
                .map(|w| {
                    let n = vocab.len() as u32;
                    *vocab.entry(w).or_insert(n)
                })
                .collect();
            ids.sort_unstable();
            items.push((sec.name.clone(), u.to_string(), ids));
        }
    }
    // Which entries hold which vocabulary words. Sources: the span's entries, then `prev`.
    let sources: Vec<usize> = entries.iter().copied().chain(prev).collect();
    let mut postings: Vec<Vec<u32>> = vec![Vec::new(); vocab.len()];
    let mut last_seen: Vec<u32> = vec![u32::MAX; vocab.len()];
    for (si, &e) in sources.iter().enumerate() {
        let si = si as u32;
        entry_texts(session, e, &mut |t| {
            words::for_each_word(t, |w| {
                if let Some(&id) = vocab.get(w) {
                    if last_seen[id as usize] != si {
                        last_seen[id as usize] = si;
                        postings[id as usize].push(si);
                    }
                }
            })
        });
    }
    let n = entries.len().max(1) as f64;
    let idf: Vec<f64> = postings
        .iter()
        .map(|p| {
            let df = p.iter().filter(|&&s| (s as usize) < entries.len()).count();
            if df == 0 {
                (1.0 + n).ln()
            } else {
                (1.0 + n / df as f64).ln()
            }
        })
        .collect();
    let prev_si = prev.map(|_| entries.len() as u32);
    let mut out = Vec::with_capacity(items.len());
    let mut acc: FxHashMap<u32, f64> = FxHashMap::default();
    for (section, text, ids) in items {
        acc.clear();
        let total: f64 = ids.iter().map(|&w| idf[w as usize]).sum();
        for &w in &ids {
            for &s in &postings[w as usize] {
                *acc.entry(s).or_default() += idf[w as usize];
            }
        }
        let mut ranked: Vec<(u32, f64)> = acc
            .iter()
            .map(|(&s, &v)| (s, if total > 0.0 { v / total } else { 0.0 }))
            .filter(|&(_, v)| v >= SUPPORT)
            .collect();
        // The span's own entries first (where the item came from), the previous summary after
        // them (what Pi carried forward).
        let from_prev = prev_si.is_some_and(|p| ranked.iter().any(|r| r.0 == p));
        ranked.retain(|r| Some(r.0) != prev_si);
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked.truncate(MAX_SOURCES);
        if from_prev {
            let p = prev_si.expect("from_prev");
            let v = acc[&p] / total;
            ranked.push((p, v));
        }
        let sources: Vec<Source> = ranked
            .iter()
            .map(|&(s, v)| Source {
                entry_id: session.id(sources[s as usize]).to_string(),
                score: (v * 100.0).round() / 100.0,
            })
            .collect();
        let unsupported = sources.is_empty() && ids.len() >= 3 && !from_prev;
        out.push(Cited { section, text, sources, unsupported });
    }
    Citations { items: out }
}

#[cfg(test)]
mod tests {
    #[test]
    fn bounded_keeps_char_boundaries() {
        let t = "é".repeat(20_000);
        let (a, b) = super::bounded(&t);
        assert!(a.len() <= super::HEAD && b.len() <= super::TAIL + 1);
    }
}
