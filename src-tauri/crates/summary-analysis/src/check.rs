//! The drop alarm and the retention probe.
//!
//! **Drop alarm** ([`check`]): the items (and free-text lines) of the previous compaction's
//! Constraints, Done, Key Decisions and Critical Context sections, plus every checked
//! checkbox, that the new summary no longer carries anywhere. "Carried" is fuzzy: some unit of
//! the new summary is [`similar_items`](crate::similar_items) to it, or covers at least 80% of
//! its content words (an item merged into a longer line still counts).
//!
//! **What a split-turn summary owes the next one** ([`owed`]). The part after Pi's
//! `**Turn Context (split turn):**` marker describes the beginning of a turn that was still
//! running at the cut. By the next compaction that turn has finished inside the new span, so
//! the next summary tells its outcome and is not expected to repeat its beginning:
//! 1. "Original Request" and "Context for Suffix" (and any other section of that part whose
//!    role is not Done, Key Decisions or Constraints) are owed nothing: the request is the
//!    history's goal, and the context for the suffix served only the kept suffix.
//! 2. "Early Progress" (and a Key Decisions or Constraints section inside the part) owes only
//!    its lines that state a constraint or a decision ([`states_rule`]: must, never, don't,
//!    decided, chose, instead of, ...): those outlive the turn. Work done in the prefix is
//!    superseded by the turn's outcome in the new span.
//! 3. A checked checkbox of the part is work done in the prefix: rule 2.
//!
//! The same rule decides which of the previous summary's items the check reports as `moved`:
//! an item of the turn part that is owed nothing is expected to be folded into the history, so
//! its new place is not news. The graph's "⚠ n dropped" and `arbor-cli summary check` count
//! [`Check::dropped`], so they follow it too. The retention probe judges a split-turn summary
//! as a whole (a fact only its turn part mentions counts as mentioned); the next compaction's
//! span starts at this one's first kept entry, so the prefix's facts are not asked of it.
//!
//! **Retention probe** ([`retention`]): facts of the span, each with the entry it came from,
//! deduplicated (first occurrence wins):
//! * `path`: `path` arguments of read/write/edit tool calls, and the file lists of branch
//!   summaries inside the span and of the previous compaction (Pi carries those forward).
//!   Mentioned when the summary contains the full path or the file name (at word boundaries).
//! * `command`: `command` arguments of bash tool calls and `bashExecution` messages. Mentioned
//!   when the summary contains the command's leading words (the first two words of its first
//!   line, after a leading `cd DIR &&`).
//! * `error`: the lines that carry the error ([`error_lines`]: `error:` / `error[E…]` / a
//!   leading `error`, a `TS2741` code, `failed`, `panicked`, `fatal`, `exception`, `traceback`,
//!   `not found`, ...; at most 3 per result, trimmed, cut to ~200 characters) of bash output and
//!   of tool results with `isError: true`; an `isError` result without such a line gives its
//!   first non-empty line (see [`tool_error_lines`]). Mentioned when
//!   more than half of their content words (paths left out: they are facts of their own) are in
//!   the summary.
//! * `constraint`: sentences of user messages with must / never / always / don't / do not /
//!   make sure / only / should not / avoid / ensure. Mentioned like errors.

use crate::chain::{edit_origin, previous_compaction, summary_text};
use crate::diff::{self, units, Moved};
use crate::parse::{parse, Section, SectionRole, Summary};
use crate::span::span_indices;
use crate::words;
use pi_json::Value;
use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;
use session_engine::blocks::{blocks, Block};
use session_engine::context;
use session_engine::session::{Kind, Session};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum FactKind {
    Path,
    Command,
    Error,
    Constraint,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Fact {
    pub kind: FactKind,
    pub text: String,
    pub source_entry_id: String,
    pub mentioned: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Retention {
    pub facts: Vec<Fact>,
    pub mentioned: usize,
    pub total: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Dropped {
    /// The previous summary's section name.
    pub section: String,
    /// The previous summary's wording.
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Check {
    pub entry_id: String,
    pub previous_entry_id: Option<String>,
    pub dropped: Vec<Dropped>,
    pub moved: Vec<Moved>,
    pub retention: Retention,
}

/// The summary a summary is compared with by default (the workbench's Diff button,
/// `arbor-cli summary diff` without `--from`):
/// * an edit or revert: its original (the chain's origin), so the diff shows what the user changed;
/// * a compaction: the compaction before it on its path ([`previous_compaction`]);
/// * a branch summary: the summary before it on its path, compaction or branch summary.
///
/// None when there is no such summary (the first compaction of a path, a branch summary with no
/// summary above it, a non-summary entry).
pub fn diff_base(session: &Session, idx: usize) -> Option<usize> {
    if idx >= session.len() {
        return None;
    }
    match session.kind(idx) {
        Kind::Compaction => edit_origin(session, idx).or_else(|| previous_compaction(session, idx)),
        Kind::BranchSummary => {
            let mut cur = session.parent_of(idx);
            let mut steps = 0;
            while let Some(c) = cur {
                if c == idx || steps > session.len() {
                    return None; // a cycle
                }
                if matches!(session.kind(c), Kind::Compaction | Kind::BranchSummary) {
                    return Some(c);
                }
                steps += 1;
                cur = session.parent_of(c);
            }
            None
        }
        _ => None,
    }
}

const WATCHED: [SectionRole; 4] =
    [SectionRole::Constraints, SectionRole::Done, SectionRole::Decisions, SectionRole::CriticalContext];

/// Roles of a split turn's part whose rule-stating lines outlive the turn (rule 2 above).
const TURN_OWING: [SectionRole; 3] = [SectionRole::Constraints, SectionRole::Done, SectionRole::Decisions];

const DECISION_WORDS: &[&str] = &[
    "decided",
    "decide",
    "decision",
    "chose",
    "chosen",
    "choose",
    "instead of",
    "we'll use",
    "will use",
    "switched to",
    "settled on",
    "opted",
    "prefer",
    "rather than",
];

/// Whether a line states a constraint or a decision (the words of [`constraint_sentences`] and
/// [`DECISION_WORDS`], at word boundaries, case-insensitive).
pub fn states_rule(text: &str) -> bool {
    let lower = text.to_lowercase().replace('\u{2019}', "'");
    CONSTRAINT_WORDS.iter().chain(DECISION_WORDS).any(|w| has_word(&lower, w))
}

/// Whether the next compaction must carry this unit (an item's text, or a free-text line) of
/// the previous summary's section `sec`; `checked` is the item's checkbox state.
pub fn owed(sec: &Section, text: &str, checked: Option<bool>) -> bool {
    if sec.turn_prefix {
        return (TURN_OWING.contains(&sec.role) || checked == Some(true)) && states_rule(text);
    }
    WATCHED.contains(&sec.role) || checked == Some(true)
}

/// Items of `prev` that the next summary owes ([`owed`]) and `new` does not carry.
pub fn dropped_items(prev: &Summary, new: &Summary) -> Vec<Dropped> {
    // The new summary's units, with an inverted index word → units, so each candidate is
    // compared only with the units that share a word with it.
    let carriers: Vec<FxHashSet<String>> =
        new.sections.iter().flat_map(|s| units(s).into_iter().map(words::word_set)).collect();
    let keys: FxHashSet<String> = new.sections.iter().flat_map(|s| units(s).into_iter().map(words::key)).collect();
    let mut index: FxHashMap<&str, Vec<u32>> = FxHashMap::default();
    for (ci, cw) in carriers.iter().enumerate() {
        for w in cw {
            index.entry(w.as_str()).or_default().push(ci as u32);
        }
    }
    // Work budget for pathological inputs (one word in every line of a huge summary): past it,
    // only exact (normalized) matches count as carried.
    let mut budget: usize = 20_000_000;
    let mut out = Vec::new();
    let mut seen: FxHashSet<String> = FxHashSet::default();
    let mut common: FxHashMap<u32, u32> = FxHashMap::default();
    for sec in &prev.sections {
        let mut cands: Vec<&str> = Vec::new();
        for it in &sec.items {
            if owed(sec, &it.text, it.checked) {
                cands.push(&it.text);
            }
        }
        cands.extend(sec.text.split('\n').filter(|l| !l.trim().is_empty() && owed(sec, l, None)));
        for c in cands {
            if words::is_placeholder(c) {
                continue;
            }
            let key = words::key(c);
            if !seen.insert(key.clone()) {
                continue;
            }
            let mut carried = keys.contains(&key);
            let ws = words::word_set(c);
            if !carried && !ws.is_empty() {
                common.clear();
                for w in &ws {
                    if let Some(list) = index.get(w.as_str()) {
                        budget = budget.saturating_sub(list.len());
                        if budget == 0 {
                            break;
                        }
                        for &ci in list {
                            *common.entry(ci).or_insert(0) += 1;
                        }
                    }
                }
                carried = common.iter().any(|(&ci, &n)| {
                    let cw = carriers[ci as usize].len();
                    let n = n as f64;
                    2.0 * n / (ws.len() + cw) as f64 >= words::SIMILAR || (ws.len() >= 2 && n / ws.len() as f64 >= 0.8)
                });
            }
            if !carried {
                out.push(Dropped { section: sec.name.clone(), text: c.to_string() });
            }
        }
    }
    out
}

/// Items of `prev` that `new` carries in another section, less those of a split turn's part
/// that the next summary did not owe (folding them into the history is the expected path).
pub fn moved_items(prev: &Summary, new: &Summary) -> Vec<Moved> {
    let mut moved = diff::diff(prev, new).moved;
    moved.retain(|m| match prev.sections.iter().find(|s| s.name == m.from) {
        Some(sec) if sec.turn_prefix => {
            let checked = sec.items.iter().find(|it| it.text == m.text).and_then(|it| it.checked);
            owed(sec, &m.text, checked)
        }
        _ => true,
    });
    moved
}

/// Drop alarm, moved items and retention of the summary at `idx`.
///
/// The drop alarm is a compaction's: against [`previous_compaction`] (for an edit or revert, the
/// compaction its origin replaced). A branch summary replaces no summary, so it has no previous
/// entry, no drops and no moves, only its retention.
pub fn check(session: &Session, idx: usize) -> Check {
    let text = if idx < session.len() { summary_text(session, idx) } else { "" };
    let new = parse(text);
    let prev = if idx < session.len() && session.kind(idx) == Kind::Compaction {
        previous_compaction(session, idx)
    } else {
        None
    };
    let (dropped, moved) = match prev {
        Some(p) => {
            let old = parse(summary_text(session, p));
            (dropped_items(&old, &new), moved_items(&old, &new))
        }
        None => (Vec::new(), Vec::new()),
    };
    Check {
        entry_id: if idx < session.len() { session.id(idx).to_string() } else { String::new() },
        previous_entry_id: prev.map(|p| session.id(p).to_string()),
        dropped,
        moved,
        retention: retention(session, idx, text),
    }
}

struct Probe<'a> {
    lower: String,
    /// `lower` with runs of whitespace folded to one space.
    squeezed: String,
    /// Path-like tokens of the summary (lowercase) and their file names, for O(1) path lookups.
    path_tokens: FxHashSet<String>,
    file_names: FxHashSet<String>,
    words: FxHashSet<String>,
    seen: FxHashSet<(FactKind, String)>,
    facts: Vec<Fact>,
    _t: std::marker::PhantomData<&'a ()>,
}

/// Characters of a path token; anything else separates tokens in the summary.
fn is_path_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | '\\' | '~' | '@' | '+')
}

fn file_name(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}

fn boundary_ok(hay: &str, at: usize, len: usize) -> bool {
    let is_word = |c: char| c.is_alphanumeric() || c == '_' || c == '-';
    !hay[..at].chars().next_back().is_some_and(is_word) && !hay[at + len..].chars().next().is_some_and(is_word)
}

fn contains_bounded(hay: &str, needle: &str) -> bool {
    if needle.is_empty() {
        return false;
    }
    let mut from = 0;
    while let Some(p) = hay[from..].find(needle) {
        let at = from + p;
        if boundary_ok(hay, at, needle.len()) {
            return true;
        }
        from = at + needle[..].chars().next().map(char::len_utf8).unwrap_or(1);
        if from >= hay.len() {
            break;
        }
    }
    false
}

impl Probe<'_> {
    fn add(&mut self, kind: FactKind, text: &str, source: &str) {
        let text = text.trim();
        if text.is_empty() {
            return;
        }
        let key = match kind {
            FactKind::Path | FactKind::Command => text.to_string(),
            _ => words::key(text),
        };
        if !self.seen.insert((kind, key)) {
            return;
        }
        let mentioned = match kind {
            FactKind::Path => {
                let lower = text.to_lowercase();
                let name = file_name(&lower);
                if lower.chars().all(is_path_char) {
                    self.path_tokens.contains(&lower) || (!name.is_empty() && self.file_names.contains(name))
                } else {
                    contains_bounded(&self.lower, &lower) || (!name.is_empty() && contains_bounded(&self.lower, name))
                }
            }
            FactKind::Command => {
                let lead = leading_words(text).to_lowercase();
                contains_bounded(&self.squeezed, &lead)
            }
            FactKind::Error | FactKind::Constraint => {
                // Paths in the line are facts of their own; they do not make the line mentioned.
                let ws = words::word_set(&without_paths(text));
                let sig: Vec<&String> = ws.iter().filter(|w| !w.chars().all(|c| c.is_ascii_digit())).collect();
                !sig.is_empty() && sig.iter().filter(|w| self.words.contains(w.as_str())).count() * 2 > sig.len()
            }
        };
        self.facts.push(Fact { kind, text: text.to_string(), source_entry_id: source.to_string(), mentioned });
    }
}

/// The text without path-like words (`src/a.rs`, `render.ts`).
fn without_paths(text: &str) -> String {
    let is_path = |w: &str| {
        let w = w.trim_matches(|c: char| !c.is_alphanumeric());
        w.contains('/')
            || w.contains('\\')
            || w.rsplit_once('.').is_some_and(|(a, b)| {
                !a.is_empty()
                    && !b.is_empty()
                    && b.len() <= 5
                    && b.chars().all(|c| c.is_ascii_alphanumeric())
                    && !b.chars().all(|c| c.is_ascii_digit())
            })
    };
    text.split_whitespace().filter(|w| !is_path(w)).collect::<Vec<_>>().join(" ")
}

/// The first two words of a command's first line, after a leading `cd DIR &&`.
pub fn leading_words(command: &str) -> String {
    let first = command.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
    let mut rest = first;
    if rest.starts_with("cd ") {
        if let Some(p) = rest.find("&&") {
            rest = rest[p + 2..].trim_start();
        }
    }
    rest.split_whitespace().take(2).collect::<Vec<_>>().join(" ")
}

const CONSTRAINT_WORDS: &[&str] = &[
    "must",
    "never",
    "always",
    "don't",
    "dont",
    "do not",
    "make sure",
    "only",
    "should not",
    "shouldn't",
    "avoid",
    "ensure",
    "mustn't",
];
const ERROR_WORDS: &[&str] = &[
    "failed",
    "failure",
    "panicked",
    "fatal",
    "exception",
    "traceback",
    "cannot find",
    "not found",
    "no such file",
    "permission denied",
    "segmentation fault",
];

/// An error line: one of [`ERROR_WORDS`], or "error" as a message ("error:", "error[E0425]",
/// "TypeError: …", a line starting with "error") rather than a name (`Result<(), Error>`).
fn is_error_line(lower: &str) -> bool {
    if ERROR_WORDS.iter().any(|w| has_word(lower, w)) {
        return !lower.contains("0 failed") && !lower.contains("0 errors");
    }
    lower.starts_with("error")
        || lower.contains("error:")
        || lower.contains("exception:")
        || lower.contains("error[")
        || lower.contains("[error]")
        || lower.contains(" error ")
}

fn has_word(lower: &str, w: &str) -> bool {
    let mut from = 0;
    // memmem's SIMD search: this runs for every rule word over whole assistant texts.
    while let Some(p) = memchr::memmem::find(&lower.as_bytes()[from..], w.as_bytes()) {
        let at = from + p;
        let before = lower[..at].chars().next_back();
        let after = lower[at + w.len()..].chars().next();
        if !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric) {
            return true;
        }
        from = at + w.len();
    }
    false
}

/// Sentences of a user text that state a constraint.
pub fn constraint_sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut flush = |cur: &mut String| {
        let t = cur.trim();
        if !t.is_empty() {
            let lower = t.to_lowercase().replace('\u{2019}', "'");
            if CONSTRAINT_WORDS.iter().any(|w| has_word(&lower, w)) {
                out.push(t.to_string());
            }
        }
        cur.clear();
    };
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c == '\n' {
            flush(&mut cur);
            continue;
        }
        cur.push(c);
        if matches!(c, '.' | '!' | '?' | '。' | '！' | '？') && chars.get(i + 1).is_none_or(|n| n.is_whitespace()) {
            flush(&mut cur);
        }
    }
    flush(&mut cur);
    out
}

/// A TypeScript diagnostic code (`TS2741`, `TS18003`) as a word of the line.
fn has_ts_code(line: &str) -> bool {
    let b = line.as_bytes();
    let mut from = 0;
    while let Some(p) = memchr::memmem::find(&b[from..], b"TS") {
        let at = from + p;
        let digits = b[at + 2..].iter().take_while(|c| c.is_ascii_digit()).count();
        let before_ok = at == 0 || !b[at - 1].is_ascii_alphanumeric();
        let after_ok = b.get(at + 2 + digits).is_none_or(|c| !c.is_ascii_alphanumeric());
        if (4..=5).contains(&digits) && before_ok && after_ok {
            return true;
        }
        from = at + 2;
    }
    false
}

/// Longest error fact, in characters (longer lines are cut and end with "…").
const MAX_ERROR_CHARS: usize = 200;

fn clip(t: &str) -> String {
    match t.char_indices().nth(MAX_ERROR_CHARS) {
        Some((at, _)) => format!("{}…", t[..at].trim_end()),
        None => t.to_string(),
    }
}

/// The lines of a command's output or tool result that carry an error (at most 3), trimmed and
/// cut to about 200 characters: "error" as a message (`error:`, `error[E0425]`, `TypeError: …`,
/// a line starting with it), a TypeScript code (`TS2741`), or one of the failure words
/// (failed, panicked, fatal, exception, traceback, not found, ...). Build banners and other
/// output around them (`> app@1.0.0 build`, `> tsc -p .`) are not errors.
pub fn error_lines(output: &str) -> Vec<String> {
    // All keywords are ASCII: an ASCII-lowercased copy keeps the byte offsets, and a text
    // without any keyword (most output) is skipped after a few SIMD scans.
    let lower = output.to_ascii_lowercase();
    let lb = lower.as_bytes();
    if !ERROR_WORDS.iter().chain(["error"].iter()).any(|w| memchr::memmem::find(lb, w.as_bytes()).is_some())
        && memchr::memmem::find(output.as_bytes(), b"TS").is_none()
    {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut pos = 0;
    for line in output.split_inclusive('\n') {
        let start = pos;
        pos += line.len();
        let t = line.trim();
        if t.is_empty() || t.len() > 4000 {
            continue; // a blob (minified code, JSON), not an error line
        }
        let lead = line.len() - line.trim_start().len();
        let l = &lower[start + lead..start + lead + t.len()];
        if is_error_line(l) || has_ts_code(t) {
            out.push(clip(t));
            if out.len() == 3 {
                break;
            }
        }
    }
    out
}

fn first_line(t: &str) -> &str {
    t.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("")
}

/// The error facts of a tool result marked `isError`: its error lines, else its first non-empty
/// line (an error message without a keyword, e.g. "Could not find the text to replace").
pub fn tool_error_lines(text: &str) -> Vec<String> {
    let lines = error_lines(text);
    if !lines.is_empty() {
        return lines;
    }
    let l = first_line(text);
    if l.is_empty() {
        Vec::new()
    } else {
        vec![clip(l)]
    }
}

fn file_list_values(details: &Value, key: &str) -> Vec<String> {
    details
        .get(key)
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|f| f.as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

/// The retention probe of the summary at `idx`, judged against `summary_text` (the entry's own
/// text, or an alternative the UI wants to compare).
pub fn retention(session: &Session, idx: usize, summary_text: &str) -> Retention {
    let p = probe(summary_text);
    if idx >= session.len() {
        return Retention { facts: Vec::new(), mentioned: 0, total: 0 };
    }
    let (entries, _, _) = span_indices(session, idx);
    let prev = if session.kind(idx) == Kind::Compaction { previous_compaction(session, idx) } else { None };
    retention_over_probe(session, &entries, prev, p)
}

fn probe(summary_text: &str) -> Probe<'static> {
    let lower = summary_text.to_lowercase();
    let mut path_tokens = FxHashSet::default();
    let mut file_names = FxHashSet::default();
    for tok in lower.split(|c: char| !is_path_char(c)) {
        let tok = tok.trim_end_matches('.');
        if tok.is_empty() {
            continue;
        }
        file_names.insert(file_name(tok).to_string());
        path_tokens.insert(tok.to_string());
    }
    Probe {
        path_tokens,
        file_names,
        squeezed: lower.split_whitespace().collect::<Vec<_>>().join(" "),
        lower,
        words: words::all_words(summary_text),
        seen: FxHashSet::default(),
        facts: Vec::new(),
        _t: std::marker::PhantomData,
    }
}

/// The retention probe over explicit span entries: `prev` is the compaction whose file lists
/// Pi carries forward (a draft not yet in the file has its span and previous compaction
/// computed by [`crate::draft`]).
pub(crate) fn retention_over(
    session: &Session,
    entries: &[usize],
    prev: Option<usize>,
    summary_text: &str,
) -> Retention {
    let p = probe(summary_text);
    retention_over_probe(session, entries, prev, p)
}

fn retention_over_probe(session: &Session, entries: &[usize], prev: Option<usize>, mut p: Probe<'_>) -> Retention {
    if let Some(prev) = prev {
        let v = session.value(prev);
        if !v.get("fromHook").is_some_and(Value::truthy) {
            if let Some(d) = v.get("details") {
                let id = session.id(prev).to_string();
                for f in file_list_values(d, "readFiles").into_iter().chain(file_list_values(d, "modifiedFiles")) {
                    p.add(FactKind::Path, &f, &id);
                }
            }
        }
    }
    for &e in entries {
        let id = session.id(e);
        match session.kind(e) {
            Kind::BranchSummary => {
                if let Some(d) = session.value_transient(e).get("details") {
                    for f in file_list_values(d, "readFiles").into_iter().chain(file_list_values(d, "modifiedFiles")) {
                        p.add(FactKind::Path, &f, id);
                    }
                }
            }
            Kind::Message => {
                let role = session.role(e);
                // Parsed for this call only (see `quality::probes::collect`).
                let v = session.value_transient(e);
                let Some(m) = v.get("message") else { continue };
                match role {
                    Some("assistant") => {
                        for b in blocks(m.get("content")) {
                            let Block::ToolCall(b) = b else { continue };
                            let Some(args) = b.get("arguments") else { continue };
                            match b.str_field("name") {
                                Some("read" | "write" | "edit") => {
                                    if let Some(path) = args.str_field("path") {
                                        p.add(FactKind::Path, path, id);
                                    }
                                }
                                Some("bash") => {
                                    if let Some(c) = args.str_field("command") {
                                        p.add(FactKind::Command, c, id);
                                    }
                                }
                                _ => {}
                            }
                        }
                    }
                    Some("toolResult") => {
                        let text = context::text_blocks_joined(m.get("content").unwrap_or(&Value::Null), "\n");
                        if m.get("isError").is_some_and(Value::truthy) {
                            for l in tool_error_lines(&text) {
                                p.add(FactKind::Error, &l, id);
                            }
                        } else if m.str_field("toolName") == Some("bash") {
                            for l in error_lines(&text) {
                                p.add(FactKind::Error, &l, id);
                            }
                        }
                    }
                    Some("bashExecution") => {
                        if let Some(c) = m.str_field("command") {
                            p.add(FactKind::Command, c, id);
                        }
                        if let Some(o) = m.str_field("output") {
                            for l in error_lines(o) {
                                p.add(FactKind::Error, &l, id);
                            }
                        }
                    }
                    Some("user") => {
                        let text = context::user_text(m.get("content").unwrap_or(&Value::Null));
                        for c in constraint_sentences(&text) {
                            let c: String = c.chars().take(400).collect();
                            p.add(FactKind::Constraint, &c, id);
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    let mentioned = p.facts.iter().filter(|f| f.mentioned).count();
    let total = p.facts.len();
    Retention { facts: p.facts, mentioned, total }
}
