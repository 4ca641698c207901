//! The probe score: questions made from a summary's span, each answered or not by the summary
//! text alone. Offline and deterministic; the rules are the documentation (FORMAT.md §9.4).
//!
//! Four kinds, weighted equally in the overall score (a kind with no probe is left out of it):
//! * **recall**: exact values the user or the tools produced. From user messages and from the
//!   output of bash and of tools other than `read` (file contents are not values anyone
//!   produced): numbers with a unit (`342 ms`, `1.5 GB`, `12 %`, `3×`), versions (`v1.2`,
//!   `0.73.1`), flags (`--keep-recent`), commit-like ids (7–40 hex characters with a digit and a
//!   letter), issue numbers (`#123`) and names in backticks. Tool output gives values from its
//!   last 20 lines only (results come last) and never from progress lines (`Compiling …`,
//!   `Downloaded …`); at most 3 values per entry, the 20 most recent in all. Answered when the
//!   value, normalized (lowercase, thousands separators and the space before a unit dropped,
//!   `percent` → `%`, `×` → `x`), is in the normalized summary at word boundaries.
//! * **artifact**: the paths read and modified, the commands run and the errors seen (the
//!   retention probe's path, command and error facts; see [`crate::check`]): a path is answered
//!   by its full path or its file name, a command by its first two words, an error by more than
//!   half of its content words.
//! * **decision**: sentences of user and assistant text that state a decision or a rule
//!   ([`crate::check::states_rule`]: decided, chose, instead of, we'll use, don't, never, must…),
//!   the 20 most recent. Answered when more than half of the sentence's content words are in
//!   the summary (paraphrase keeps most content words).
//! * **continuation**: the last user request of the span, and what the agent was doing at the
//!   cut (the last tool call of the span's last assistant message: its path or command; else
//!   the last sentence of its text). The request is answered when at least 40 % of its content
//!   words are in the summary (a request is long and the summary restates it briefly); the
//!   work in progress like an artifact.
use crate::check::{retention_over, states_rule, FactKind};
use crate::words;
use pi_json::Value;
use rustc_hash::FxHashSet;
use serde::Serialize;
use session_engine::blocks::{blocks, Block};
use session_engine::context;
use session_engine::session::{Kind, Session};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "camelCase")]
pub enum ProbeKind {
    Recall,
    Artifact,
    Decision,
    Continuation,
}

impl ProbeKind {
    pub const ALL: [ProbeKind; 4] =
        [ProbeKind::Recall, ProbeKind::Artifact, ProbeKind::Decision, ProbeKind::Continuation];
    pub fn as_str(self) -> &'static str {
        match self {
            ProbeKind::Recall => "recall",
            ProbeKind::Artifact => "artifact",
            ProbeKind::Decision => "decision",
            ProbeKind::Continuation => "continuation",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Probe {
    pub kind: ProbeKind,
    pub question: String,
    pub expected: String,
    pub source_entry_id: String,
    pub answered: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KindScore {
    pub probes: usize,
    pub answered: usize,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ByKind {
    pub recall: KindScore,
    pub artifact: KindScore,
    pub decision: KindScore,
    pub continuation: KindScore,
}

impl ByKind {
    pub fn get(&self, k: ProbeKind) -> KindScore {
        match k {
            ProbeKind::Recall => self.recall,
            ProbeKind::Artifact => self.artifact,
            ProbeKind::Decision => self.decision,
            ProbeKind::Continuation => self.continuation,
        }
    }
    fn get_mut(&mut self, k: ProbeKind) -> &mut KindScore {
        match k {
            ProbeKind::Recall => &mut self.recall,
            ProbeKind::Artifact => &mut self.artifact,
            ProbeKind::Decision => &mut self.decision,
            ProbeKind::Continuation => &mut self.continuation,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Score {
    /// 0..1: the mean of the kinds' answered shares, over the kinds that have probes (None when
    /// the span gives no probe at all).
    pub score: Option<f64>,
    pub by_kind: ByKind,
    pub probes: Vec<Probe>,
}

impl Score {
    pub fn from_probes(probes: Vec<Probe>) -> Score {
        let mut by_kind = ByKind::default();
        for p in &probes {
            let k = by_kind.get_mut(p.kind);
            k.probes += 1;
            k.answered += usize::from(p.answered);
        }
        let shares: Vec<f64> = ProbeKind::ALL
            .iter()
            .map(|&k| by_kind.get(k))
            .filter(|k| k.probes > 0)
            .map(|k| k.answered as f64 / k.probes as f64)
            .collect();
        let score = (!shares.is_empty()).then(|| round3(shares.iter().sum::<f64>() / shares.len() as f64));
        Score { score, by_kind, probes }
    }
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

const MAX_RECALL: usize = 20;
const MAX_DECISION: usize = 20;
const RECALL_PER_ENTRY: usize = 3;
const OUTPUT_TAIL_LINES: usize = 20;
const MAX_SENTENCE_CHARS: usize = 300;

const UNITS: &[&str] = &[
    "ms", "s", "sec", "secs", "seconds", "us", "µs", "ns", "min", "mins", "minutes", "h", "hours", "b", "bytes", "kb",
    "mb", "gb", "tb", "kib", "mib", "gib", "%", "x", "tokens", "lines", "entries", "files", "tests", "req/s", "rps",
    "qps", "fps", "px", "k", "m", "loc", "mb/s", "gb/s", "ops/s",
];

const PROGRESS_HEADS: &[&str] = &[
    "compiling",
    "downloaded",
    "downloading",
    "checking",
    "fresh",
    "updating",
    "installing",
    "collecting",
    "fetching",
    "resolving",
    "locking",
    "adding",
];

/// The normalized form values and the summary are compared in: lowercase, `1,000` → `1000`,
/// `342 ms` → `342ms`, `percent` → `%`, `×` → `x`.
pub(crate) fn normalize_values(text: &str) -> String {
    let lower = text.to_lowercase().replace('×', "x").replace(" percent", "%").replace("percent", "%");
    let chars: Vec<char> = lower.chars().collect();
    let mut out = String::with_capacity(lower.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        // Thousands separator between digits: 1,000 → 1000.
        if c == ',' && i > 0 && chars[i - 1].is_ascii_digit() && chars.get(i + 1).is_some_and(char::is_ascii_digit) {
            let run = chars[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
            if run == 3 {
                i += 1;
                continue;
            }
        }
        // A space between a number and its unit.
        if c == ' ' && i > 0 && chars[i - 1].is_ascii_digit() {
            let rest: String = chars[i + 1..].iter().take(8).collect();
            let word: String =
                rest.chars().take_while(|c| !c.is_whitespace() && !matches!(c, ',' | ';' | ')' | '(')).collect();
            let word = word.trim_end_matches(['.', ':']);
            if UNITS.contains(&word) {
                i += 1;
                continue;
            }
        }
        out.push(c);
        i += 1;
    }
    out
}

fn trim_token(t: &str) -> &str {
    t.trim_matches(|c: char| matches!(c, ',' | ';' | ':' | '(' | ')' | '[' | ']' | '"' | '\'' | '{' | '}' | '<' | '>'))
        .trim_end_matches('.')
}

fn is_version(t: &str) -> bool {
    let (v, body) = match t.strip_prefix('v') {
        Some(b) => (true, b),
        None => (false, t),
    };
    let core = body.split(['-', '+']).next().unwrap_or("");
    let parts: Vec<&str> = core.split('.').collect();
    parts.iter().all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
        && (parts.len() >= 3 || (v && parts.len() == 2))
}

fn is_hex_id(t: &str) -> bool {
    (7..=40).contains(&t.len())
        && t.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        && t.chars().any(|c| c.is_ascii_digit())
        && t.chars().any(|c| c.is_ascii_alphabetic())
}

fn is_number(t: &str) -> bool {
    let t = t.trim_start_matches(['-', '+', '~']);
    !t.is_empty()
        && t.chars().next().is_some_and(|c| c.is_ascii_digit())
        && t.chars().all(|c| c.is_ascii_digit() || c == '.' || c == ',')
}

/// The values of a line (see the module docs), in order.
pub(crate) fn line_values(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    // Names in backticks.
    let mut rest = line;
    while let Some(a) = rest.find('`') {
        let after = &rest[a + 1..];
        let Some(b) = after.find('`') else { break };
        let name = after[..b].trim();
        if (2..=60).contains(&name.chars().count()) {
            out.push(name.to_string());
        }
        rest = &after[b + 1..];
    }
    let toks: Vec<&str> = line.split_whitespace().collect();
    for (i, raw) in toks.iter().enumerate() {
        let t = trim_token(raw);
        if t.is_empty() || t.contains('`') {
            continue;
        }
        if let Some(flag) = t.strip_prefix("--") {
            let name = flag.split('=').next().unwrap_or("");
            if name.len() >= 2
                && name.starts_with(|c: char| c.is_ascii_lowercase())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            {
                out.push(format!("--{name}"));
            }
            continue;
        }
        if is_version(t) || is_hex_id(t) {
            out.push(t.to_string());
            continue;
        }
        if t.starts_with('#') && t.len() > 1 && t[1..].chars().all(|c| c.is_ascii_digit()) {
            out.push(t.to_string());
            continue;
        }
        // A number with its unit, attached ("342ms", "12%", "3×") or as the next word.
        let lower = t.to_lowercase().replace('×', "x");
        let digits_end = lower.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == ',')).unwrap_or(lower.len());
        if digits_end > 0
            && digits_end < lower.len()
            && is_number(&lower[..digits_end])
            && UNITS.contains(&&lower[digits_end..])
        {
            out.push(t.to_string());
            continue;
        }
        if is_number(t) && t.chars().filter(char::is_ascii_digit).count() >= 1 {
            if let Some(next) = toks.get(i + 1) {
                let u = trim_token(next).to_lowercase();
                if UNITS.contains(&u.as_str()) || u == "percent" {
                    out.push(format!("{t} {}", trim_token(next)));
                }
            }
        }
    }
    out
}

fn is_progress_line(line: &str) -> bool {
    let first = line.split_whitespace().next().unwrap_or("").to_ascii_lowercase();
    PROGRESS_HEADS.contains(&first.as_str())
}

/// Values of a tool's output: its last lines, progress lines left out.
fn output_values(text: &str) -> Vec<(String, String)> {
    // From the end: a long output is not split whole to find its last lines.
    let mut lines: Vec<&str> = text.lines().rev().filter(|l| !l.trim().is_empty()).take(OUTPUT_TAIL_LINES).collect();
    lines.reverse();
    let mut out = Vec::new();
    for l in &lines {
        if l.len() > 2000 || is_progress_line(l.trim()) {
            continue;
        }
        for v in line_values(l) {
            out.push((v, l.trim().to_string()));
        }
    }
    out
}

fn text_values(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for l in text.lines() {
        if l.len() > 2000 {
            continue;
        }
        for v in line_values(l) {
            out.push((v, l.trim().to_string()));
        }
    }
    out
}

fn clip(t: &str, n: usize) -> String {
    match t.char_indices().nth(n) {
        Some((at, _)) => format!("{}…", t[..at].trim_end()),
        None => t.to_string(),
    }
}

/// The line with the value blanked out, as the question's context.
fn blank(line: &str, value: &str) -> String {
    let l = clip(line, 160);
    match l.find(value) {
        Some(p) => format!("{}___{}", &l[..p], &l[p + value.len()..]),
        None => l,
    }
}

/// Sentences of a text (split at . ! ? followed by space, and at newlines).
fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c == '\n' {
            if !cur.trim().is_empty() {
                out.push(cur.trim().to_string());
            }
            cur.clear();
            continue;
        }
        cur.push(c);
        if matches!(c, '.' | '!' | '?' | '。') && chars.get(i + 1).is_none_or(|n| n.is_whitespace()) {
            if !cur.trim().is_empty() {
                out.push(cur.trim().to_string());
            }
            cur.clear();
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

/// The last sentence of a text (the last line's last sentence), without splitting it all.
fn last_sentence(text: &str) -> Option<&str> {
    let line = text.lines().rev().map(str::trim).find(|l| !l.is_empty())?;
    let body = line.trim_end_matches(['.', '!', '?', '。']);
    let start = body.rfind(['.', '!', '?', '。']).map_or(0, |p| p + body[p..].chars().next().map_or(1, char::len_utf8));
    Some(line[start..].trim())
}

/// The summary, prepared once for all probes.
pub(crate) struct Answers {
    values: String,
    words: FxHashSet<String>,
}

impl Answers {
    pub(crate) fn new(summary: &str) -> Answers {
        Answers { values: normalize_values(summary), words: words::all_words(summary) }
    }
    fn has_value(&self, v: &str) -> bool {
        let n = normalize_values(v);
        contains_bounded(&self.values, &n)
    }
    /// The share of `text`'s significant words (content words, not pure numbers) in the summary.
    fn word_share(&self, text: &str) -> Option<f64> {
        let ws = words::word_set(text);
        let sig: Vec<&String> = ws.iter().filter(|w| !w.chars().all(|c| c.is_ascii_digit())).collect();
        if sig.is_empty() {
            return None;
        }
        Some(sig.iter().filter(|w| self.words.contains(w.as_str())).count() as f64 / sig.len() as f64)
    }
}

fn contains_bounded(hay: &str, needle: &str) -> bool {
    if needle.is_empty() {
        return false;
    }
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let mut from = 0;
    while let Some(p) = hay[from..].find(needle) {
        let at = from + p;
        // A dot between word characters continues a value ("0.73" is not in "0.73.1").
        let mut back = hay[..at].chars().rev();
        let b1 = back.next();
        let glued_before = b1.is_some_and(is_word) || (b1 == Some('.') && back.next().is_some_and(is_word));
        let mut fwd = hay[at + needle.len()..].chars();
        let a1 = fwd.next();
        let glued_after = a1.is_some_and(is_word) || (a1 == Some('.') && fwd.next().is_some_and(is_word));
        let before_ok = !glued_before || !needle.starts_with(is_word);
        let after_ok = !glued_after || !needle.ends_with(is_word);
        if before_ok && after_ok {
            return true;
        }
        from = at + needle.chars().next().map(char::len_utf8).unwrap_or(1);
    }
    false
}

/// Everything the span gives, in one pass.
struct Collected {
    recall: Vec<(String, String, String, &'static str)>, // value, line, source id, who
    decisions: Vec<(String, String, &'static str)>,      // sentence, source id, who
    last_request: Option<(String, String)>,
    last_work: Option<(String, String, bool)>, // expected, source, is an artifact (path/command)
    modified: FxHashSet<String>,
}

fn collect(session: &Session, entries: &[usize]) -> Collected {
    let mut c = Collected {
        recall: Vec::new(),
        decisions: Vec::new(),
        last_request: None,
        last_work: None,
        modified: FxHashSet::default(),
    };
    for &e in entries {
        if session.kind(e) != Kind::Message {
            continue;
        }
        let id = session.id(e);
        // Parsed for this call only: the app scores every summary of a session in the background,
        // and spans together cover the whole path, so cached parses would keep a DOM of most of
        // a big file in memory for good (a small file is parsed whole at open anyway).
        let v = session.value_transient(e);
        let Some(m) = v.get("message") else { continue };
        match session.role(e) {
            Some("user") => {
                let text = context::user_text(m.get("content").unwrap_or(&Value::Null));
                for (v, l) in text_values(&text).into_iter().take(RECALL_PER_ENTRY) {
                    c.recall.push((v, l, id.to_string(), "the user"));
                }
                let rules = if states_rule(&text) { sentences(&text) } else { Vec::new() };
                for s in rules {
                    if states_rule(&s) {
                        c.decisions.push((clip(&s, MAX_SENTENCE_CHARS), id.to_string(), "the user"));
                    }
                }
                if !text.trim().is_empty() {
                    c.last_request = Some((clip(text.trim(), MAX_SENTENCE_CHARS), id.to_string()));
                }
            }
            Some("assistant") => {
                let mut text = String::new();
                let mut last_call: Option<String> = None;
                for b in blocks(m.get("content")) {
                    match b {
                        Block::Text(_) => {
                            text.push_str(b.text().unwrap_or(""));
                            text.push('\n');
                        }
                        Block::ToolCall(b) => {
                            let args = b.get("arguments");
                            let arg = |k: &str| args.and_then(|a| a.str_field(k)).map(str::to_string);
                            match b.str_field("name") {
                                Some(n @ ("write" | "edit")) => {
                                    if let Some(p) = arg("path") {
                                        c.modified.insert(p.clone());
                                        last_call =
                                            Some(format!("{} {p}", if n == "write" { "writing" } else { "editing" }));
                                    }
                                }
                                Some("read") => last_call = arg("path").map(|p| format!("reading {p}")),
                                Some("bash") => {
                                    last_call = arg("command").map(|p| format!("running {}", clip(p.trim(), 200)))
                                }
                                Some(n) => last_call = Some(format!("calling {n}")),
                                None => {}
                            }
                        }
                        _ => {}
                    }
                }
                // Most assistant texts state no rule: one scan of the whole text first.
                let rules = if states_rule(&text) { sentences(&text) } else { Vec::new() };
                for s in rules {
                    if states_rule(&s) && !s.ends_with('?') {
                        c.decisions.push((clip(&s, MAX_SENTENCE_CHARS), id.to_string(), "the assistant"));
                    }
                }
                c.last_work = match last_call {
                    Some(w) => Some((w, id.to_string(), true)),
                    None => last_sentence(&text).map(|s| (clip(s, MAX_SENTENCE_CHARS), id.to_string(), false)),
                }
                .or(c.last_work.take());
            }
            Some("toolResult") => {
                if m.str_field("toolName") == Some("read") {
                    continue;
                }
                let text = context::text_blocks_joined(m.get("content").unwrap_or(&Value::Null), "\n");
                let tool = m.str_field("toolName").unwrap_or("a tool");
                let who = if tool == "bash" { "a command's output" } else { "a tool's result" };
                for (v, l) in output_values(&text).into_iter().take(RECALL_PER_ENTRY) {
                    c.recall.push((v, l, id.to_string(), who));
                }
            }
            Some("bashExecution") => {
                if let Some(o) = m.str_field("output") {
                    for (v, l) in output_values(o).into_iter().take(RECALL_PER_ENTRY) {
                        c.recall.push((v, l, id.to_string(), "a command's output"));
                    }
                }
            }
            _ => {}
        }
    }
    c
}

/// The probes of a span (entries in path order; `prev` the compaction whose file lists Pi
/// carries forward) judged against `summary`.
pub(crate) fn probes_over(session: &Session, entries: &[usize], prev: Option<usize>, summary: &str) -> Vec<Probe> {
    let answers = Answers::new(summary);
    let c = collect(session, entries);
    let mut out = Vec::new();

    // Recall: the most recent values, each value once.
    let mut seen = FxHashSet::default();
    let mut recall = Vec::new();
    for (v, line, src, who) in c.recall.iter().rev() {
        if recall.len() == MAX_RECALL {
            break;
        }
        if !seen.insert(normalize_values(v)) {
            continue;
        }
        recall.push(Probe {
            kind: ProbeKind::Recall,
            question: format!("What exact value did {who} give in “{}”?", blank(line, v)),
            expected: v.clone(),
            source_entry_id: src.clone(),
            answered: answers.has_value(v),
        });
    }
    recall.reverse();
    out.extend(recall);

    // Artifacts and user rules: the retention probe's facts.
    let retention = retention_over(session, entries, prev, summary);
    let mut decided: FxHashSet<String> = FxHashSet::default();
    for f in retention.facts {
        let (kind, question) = match f.kind {
            FactKind::Path => {
                let how = if c.modified.contains(&f.text) { "modified" } else { "read" };
                (
                    ProbeKind::Artifact,
                    format!("Which file was {how}, at `{}`?", f.text.rsplit('/').next().unwrap_or(&f.text)),
                )
            }
            FactKind::Command => {
                (ProbeKind::Artifact, "Which command was run here, and with what outcome?".to_string())
            }
            FactKind::Error => (ProbeKind::Artifact, "What error was seen?".to_string()),
            FactKind::Constraint => {
                decided.insert(words::key(&f.text));
                (ProbeKind::Decision, "What rule did the user set?".to_string())
            }
        };
        out.push(Probe { kind, question, expected: f.text, source_entry_id: f.source_entry_id, answered: f.mentioned });
    }
    // Decisions: sentences that state one, the most recent first, past the user rules above.
    let mut decisions = Vec::new();
    for (s, src, who) in c.decisions.iter().rev() {
        if decisions.len() == MAX_DECISION {
            break;
        }
        // A user rule is already a probe (from the retention facts above); each sentence once.
        if !decided.insert(words::key(s)) {
            continue;
        }
        let answered = answers.word_share(s).is_some_and(|x| x > 0.5);
        decisions.push(Probe {
            kind: ProbeKind::Decision,
            question: format!("What did {who} decide about “{}”?", clip(s, 48)),
            expected: s.clone(),
            source_entry_id: src.clone(),
            answered,
        });
    }
    decisions.reverse();
    out.extend(decisions);

    // Continuation.
    if let Some((req, src)) = &c.last_request {
        out.push(Probe {
            kind: ProbeKind::Continuation,
            question: "What was the user's last request before the cut?".to_string(),
            expected: req.clone(),
            source_entry_id: src.clone(),
            answered: answers.word_share(req).is_some_and(|x| x >= 0.4),
        });
    }
    if let Some((work, src, artifact)) = &c.last_work {
        let answered = if *artifact {
            let target = work.split_once(' ').map(|(_, t)| t).unwrap_or(work);
            if work.starts_with("running ") {
                let lead = crate::check::leading_words(target).to_lowercase();
                contains_bounded(&answers.values, &normalize_values(&lead))
            } else if work.starts_with("calling ") {
                answers.word_share(target).is_some_and(|x| x > 0.5)
            } else {
                let name = target.rsplit('/').next().unwrap_or(target).to_lowercase();
                contains_bounded(&answers.values, &name)
            }
        } else {
            answers.word_share(work).is_some_and(|x| x > 0.5)
        };
        out.push(Probe {
            kind: ProbeKind::Continuation,
            question: "What was the agent doing at the cut?".to_string(),
            expected: work.clone(),
            source_entry_id: src.clone(),
            answered,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_of_a_line() {
        assert_eq!(line_values("p95 latency: 342 ms, was 1,200ms"), vec!["342 ms", "1,200ms"]);
        assert_eq!(line_values("use `serde_json` with --keep-recent=20000"), vec!["serde_json", "--keep-recent"]);
        assert_eq!(line_values("pi v0.73.1 at commit 4f2a9c1e"), vec!["v0.73.1", "4f2a9c1e"]);
        assert_eq!(line_values("fixes #123, 12 percent faster, 3× smaller"), vec!["#123", "12 percent", "3×"]);
        // Plain numbers, words and decimals without a unit are not values.
        assert!(line_values("there were 3 things and 1.5 of them").is_empty());
        assert!(line_values("deadbeef is a word, abcdefg too").is_empty(), "{:?}", line_values("deadbeef"));
    }

    #[test]
    fn normalized_values_match_formats() {
        let a = Answers::new("The p95 is now 342ms (was 1200 ms); 12% faster, 3x smaller, pi 0.73.1.");
        for v in ["342 ms", "1,200ms", "12 percent", "3×", "0.73.1"] {
            assert!(a.has_value(v), "{v}");
        }
        for v in ["34 ms", "342 s", "0.73", "13%"] {
            assert!(!a.has_value(v), "{v} must not count");
        }
    }

    #[test]
    fn last_sentence_of_a_text() {
        assert_eq!(last_sentence("First. Then the build.\nNext I run the tests。最後です。"), Some("最後です。"));
        assert_eq!(last_sentence("one line only"), Some("one line only"));
        assert_eq!(last_sentence("a. b!\n\n"), Some("b!"));
    }

    #[test]
    fn progress_lines_give_no_values() {
        let out = "   Compiling serde v1.0.210\n   Compiling foo v0.1.0\ntest result: ok. 42 tests passed; finished in 3.2s\n";
        let v: Vec<String> = output_values(out).into_iter().map(|(v, _)| v).collect();
        assert_eq!(v, vec!["42 tests", "3.2s"]);
    }
}
