//! The context over time (issue 12 §1): for every entry on a path, the tokens Pi would estimate
//! with that entry as the leaf (`estimateContextTokens(buildSessionContext())`: the last valid
//! assistant usage plus the estimates of the messages after it), in one pass over the path.
//!
//! Each entry is read once, into a [`Contribution`] (what it adds to the running estimate: a
//! usage that resets it, or an estimate that adds to it), from a parse that is dropped at once
//! ([`Session::value_transient`]): the pass keeps a few numbers per entry, never the entries'
//! DOMs. The arithmetic pass then keeps what `estimate_context` needs of the context so far:
//! the last valid usage and the sum of the estimates after it. A message extends the context;
//! a compaction replaces it with its summary and the kept entries (from `firstKeptEntryId` up to
//! the compaction), so the work is linear in the path plus the kept spans. The numbers are Pi's,
//! unclamped: negative or absurd usages stay as they are, and a usage Pi would turn into `NaN`
//! is `NaN` here (JSON writes it as `null`).

use crate::context::{assistant_usage, compaction_summary_of, context_message_of, context_tokens_of_usage, estimate_tokens};
use crate::json::Value;
use crate::session::{Kind, Session};
use rustc_hash::FxHashMap;

/// One entry of the path and the context Pi would build with it as the leaf.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// Entry index in the session.
    pub entry: usize,
    /// Pi's `estimateContextTokens(...).tokens` with this entry as the leaf.
    pub context_tokens: f64,
    /// The usage this entry's assistant message reports and Pi counts (`calculateContextTokens`;
    /// not for aborted or errored messages, as in Pi), else None.
    pub usage_tokens: Option<f64>,
    /// The entry is a compaction: the context drops here.
    pub compaction: bool,
    /// `usage.cost.total` of an assistant message that carries it.
    pub cost: Option<f64>,
}

/// What one entry does to the running estimate, read once from its JSON.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Contribution {
    /// A valid assistant usage (`calculateContextTokens`): the estimate restarts from it.
    pub usage: Option<f64>,
    /// `estimateTokens` of the entry's context message (0 when it has none or carries a usage).
    /// For a compaction: its summary message's estimate.
    pub estimate: f64,
    /// `usage.cost.total` of an assistant message that carries a number there.
    pub cost: Option<f64>,
    /// The entry maps to a context message (a compaction's summary counts only at the compaction).
    pub in_context: bool,
    /// What the entry is, for drawing: one of [`KIND_CODES`] (b'o' for anything else).
    pub code: u8,
}

/// The codes of [`Contribution::code`] and what they mean.
pub const KIND_CODES: &[(u8, &str)] = &[
    (b'u', "user"),
    (b'a', "assistant"),
    (b't', "toolResult"),
    (b'e', "bashExecution"),
    (b'm', "custom message"),
    (b'c', "compaction"),
    (b'b', "branch summary"),
    (b'o', "other entry"),
];

fn role_code(m: &Value) -> u8 {
    match m.str_field("role") {
        Some("user") => b'u',
        Some("assistant") => b'a',
        Some("toolResult") => b't',
        Some("bashExecution") => b'e',
        _ => b'o',
    }
}

/// Reads the contribution of entry `idx` without keeping its parse.
pub fn contribution(s: &Session, idx: usize) -> Contribution {
    let kind = s.kind(idx);
    if !matches!(kind, Kind::Message | Kind::CustomMessage | Kind::BranchSummary | Kind::Compaction) {
        return Contribution { code: b'o', ..Contribution::default() };
    }
    let v = s.value_transient(idx);
    if kind == Kind::Compaction {
        return Contribution { usage: None, estimate: estimate_tokens(&compaction_summary_of(&v)), cost: None, in_context: false, code: b'c' };
    }
    let of_message = |m: &Value| {
        let usage = assistant_usage(m).map(context_tokens_of_usage);
        let cost = if m.str_field("role") == Some("assistant") {
            m.get("usage").and_then(|u| u.get("cost")).and_then(|c| c.get("total")).and_then(Value::as_f64)
        } else {
            None
        };
        let estimate = if usage.is_some() { 0.0 } else { estimate_tokens(m) };
        Contribution { usage, estimate, cost, in_context: true, code: role_code(m) }
    };
    if kind == Kind::Message {
        // The message is used in place: `context_message_of` would clone it.
        return match v.get("message") {
            Some(m) => of_message(m),
            None => Contribution { code: b'o', ..Contribution::default() },
        };
    }
    // Custom messages and branch summaries: the timestamp does not count in estimates.
    let code = if kind == Kind::CustomMessage { b'm' } else { b'b' };
    match context_message_of(kind, &v, || Value::Null) {
        Some(m) => Contribution { cost: None, code, ..of_message(&m) },
        None => Contribution { code, ..Contribution::default() },
    }
}

/// The contributions of the entries of `path`, in path order; big paths are read on a few
/// threads (each entry is independent).
pub fn contributions(s: &Session, path: &[usize]) -> Vec<Contribution> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8);
    if threads < 2 || path.len() < 4096 {
        return path.iter().map(|&i| contribution(s, i)).collect();
    }
    let mut out = vec![Contribution::default(); path.len()];
    let chunk = path.len().div_ceil(threads);
    std::thread::scope(|scope| {
        for (dst, src) in out.chunks_mut(chunk).zip(path.chunks(chunk)) {
            scope.spawn(move || {
                for (d, &i) in dst.iter_mut().zip(src) {
                    *d = contribution(s, i);
                }
            });
        }
    });
    out
}

/// The running estimate: Pi's `usageTokens` (of the last message with a valid usage) and the
/// sum of the estimates of the messages after it (all messages when none has a usage).
#[derive(Clone, Copy, Debug, Default)]
struct Running {
    usage: f64,
    trailing: f64,
}

impl Running {
    fn push(&mut self, c: &Contribution) {
        if !c.in_context {
            return;
        }
        match c.usage {
            Some(u) => {
                self.usage = u;
                self.trailing = 0.0;
            }
            None => self.trailing += c.estimate,
        }
    }
    fn tokens(&self) -> f64 {
        self.usage + self.trailing
    }
}

/// The points of the path from the root to `leaf` (empty for None).
pub fn timeline(s: &Session, leaf: Option<usize>) -> Vec<Point> {
    timeline_on_path(s, &s.path(leaf))
}

/// The points of a root-first path.
pub fn timeline_on_path(s: &Session, path: &[usize]) -> Vec<Point> {
    let contribs = contributions(s, path);
    timeline_of(s, path, &contribs)
}

/// The points of a root-first path whose entries' contributions are `contribs` (same order and
/// length; e.g. kept by a caller that asks for several paths of one session).
pub fn timeline_of(s: &Session, path: &[usize], contribs: &[Contribution]) -> Vec<Point> {
    assert_eq!(path.len(), contribs.len(), "one contribution per path entry");
    // buildSessionContext finds the kept entries by the first path position whose id is
    // firstKeptEntryId, before the compaction.
    let mut first_pos: FxHashMap<&str, usize> = FxHashMap::default();
    let mut out = Vec::with_capacity(path.len());
    let mut r = Running::default();
    for (pos, &idx) in path.iter().enumerate() {
        first_pos.entry(s.id(idx)).or_insert(pos);
        let c = &contribs[pos];
        let compaction = s.kind(idx) == Kind::Compaction;
        if compaction {
            r = Running::default();
            r.trailing = c.estimate;
            let kept = first_kept(s, idx).and_then(|id| first_pos.get(id.as_str()).copied()).filter(|&k| k < pos);
            if let Some(k) = kept {
                // Kept entries before the compaction: earlier compactions among them add nothing.
                for kc in &contribs[k..pos] {
                    r.push(kc);
                }
            }
        } else {
            r.push(c);
        }
        out.push(Point { entry: idx, context_tokens: r.tokens(), usage_tokens: c.usage, compaction, cost: c.cost });
    }
    out
}

/// `firstKeptEntryId` of a compaction entry (read without keeping the entry's parse).
fn first_kept(s: &Session, idx: usize) -> Option<String> {
    s.value_transient(idx).get("firstKeptEntryId").and_then(Value::as_str).map(str::to_owned)
}

/// Contributions kept between calls (a caller charting several paths of one session, or the
/// same path after an append), by entry index, each checked against its entry's id and line
/// length before use. Filling reads missing entries a step at a time, so a caller can bound how
/// long one call holds the session.
#[derive(Default)]
pub struct ContributionCache {
    entries: Vec<Option<(u64, u32, Contribution)>>,
}

fn id_hash(id: &str) -> u64 {
    use std::hash::BuildHasher;
    rustc_hash::FxBuildHasher.hash_one(id)
}

impl ContributionCache {
    pub fn new() -> ContributionCache {
        ContributionCache::default()
    }
    /// The kept contribution of entry `i`, if it is still that entry's.
    pub fn get(&self, s: &Session, i: usize) -> Option<Contribution> {
        let &(h, len, c) = self.entries.get(i)?.as_ref()?;
        (len as usize == s.raw(i).len() && h == id_hash(s.id(i))).then_some(c)
    }
    /// Reads the missing entries of `path`, `step` at a time, until done or `budget` is spent
    /// (at least one step). True when every entry of the path is kept.
    pub fn fill(&mut self, s: &Session, path: &[usize], budget: std::time::Duration, step: usize) -> bool {
        let t = std::time::Instant::now();
        if self.entries.len() < s.len() {
            self.entries.resize(s.len(), None);
        }
        let missing: Vec<usize> = path.iter().copied().filter(|&i| self.get(s, i).is_none()).collect();
        let mut done = 0;
        for chunk in missing.chunks(step.max(1)) {
            for (&i, c) in chunk.iter().zip(contributions(s, chunk)) {
                self.entries[i] = Some((id_hash(s.id(i)), s.raw(i).len() as u32, c));
            }
            done += chunk.len();
            if t.elapsed() >= budget {
                break;
            }
        }
        done == missing.len()
    }
    /// The contributions of `path`, from the cache where kept, read now where not.
    pub fn of_path(&self, s: &Session, path: &[usize]) -> Vec<Contribution> {
        path.iter().map(|&i| self.get(s, i).unwrap_or_else(|| contribution(s, i))).collect()
    }
    /// How many entries of `path` are kept.
    pub fn kept(&self, s: &Session, path: &[usize]) -> usize {
        path.iter().filter(|&&i| self.get(s, i).is_some()).count()
    }
}

/// A timeline in a few flat columns, for a compact transfer: ids joined by `\n` (an id holding
/// a newline is sent as an empty string: it cannot be selected from the chart), one kind code
/// per point, and the numbers as little-endian `f64`s in base64. The estimate is dense (one per
/// point); the reported usage and the cost exist on assistant messages only, so they are sparse:
/// the values, and their path positions (as f64s) in `*_at`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Encoded {
    pub ids: String,
    pub kinds: String,
    pub context_tokens: String,
    pub usage_tokens: String,
    pub usage_at: String,
    pub cost: String,
    pub cost_at: String,
    pub compactions: Vec<u32>,
}

/// Encodes `points` (with their contributions' codes) for [`Encoded`].
pub fn encode(s: &Session, points: &[Point], contribs: &[Contribution]) -> Encoded {
    let n = points.len();
    let mut ids = String::with_capacity(n * 9);
    let mut kinds = String::with_capacity(n);
    let mut t = Vec::with_capacity(n);
    let (mut u, mut u_at, mut c, mut c_at) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut compactions = Vec::new();
    for (pos, (p, k)) in points.iter().zip(contribs).enumerate() {
        if pos > 0 {
            ids.push('\n');
        }
        let id = s.id(p.entry);
        if !id.contains('\n') {
            ids.push_str(id);
        }
        kinds.push(k.code as char);
        t.push(p.context_tokens);
        if let Some(x) = p.usage_tokens {
            u.push(x);
            u_at.push(pos as f64);
        }
        if let Some(x) = p.cost {
            c.push(x);
            c_at.push(pos as f64);
        }
        if p.compaction {
            compactions.push(pos as u32);
        }
    }
    Encoded {
        ids,
        kinds,
        context_tokens: base64_f64(&t),
        usage_tokens: base64_f64(&u),
        usage_at: base64_f64(&u_at),
        cost: base64_f64(&c),
        cost_at: base64_f64(&c_at),
        compactions,
    }
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 (with padding) of the little-endian bytes of `xs`.
pub fn base64_f64(xs: &[f64]) -> String {
    let bytes: Vec<u8> = xs.iter().flat_map(|x| x.to_le_bytes()).collect();
    let mut out = Vec::with_capacity(bytes.len().div_ceil(3) * 4);
    for ch in bytes.chunks(3) {
        let b = [ch[0], *ch.get(1).unwrap_or(&0), *ch.get(2).unwrap_or(&0)];
        let v = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        out.push(B64[(v >> 18) as usize & 63]);
        out.push(B64[(v >> 12) as usize & 63]);
        out.push(if ch.len() > 1 { B64[(v >> 6) as usize & 63] } else { b'=' });
        out.push(if ch.len() > 2 { B64[v as usize & 63] } else { b'=' });
    }
    String::from_utf8(out).expect("base64 is ASCII")
}

/// The inverse of [`base64_f64`] (for tests and tools); None on malformed input.
pub fn f64s_from_base64(text: &str) -> Option<Vec<f64>> {
    let val = |c: u8| B64.iter().position(|&x| x == c).map(|p| p as u32);
    let t = text.as_bytes();
    if !t.len().is_multiple_of(4) {
        return None;
    }
    let mut bytes = Vec::with_capacity(t.len() / 4 * 3);
    for q in t.chunks(4) {
        let pad = q.iter().rev().take_while(|&&c| c == b'=').count();
        let mut v = 0u32;
        for &c in &q[..4 - pad] {
            v = (v << 6) | val(c)?;
        }
        v <<= 6 * pad as u32;
        let b = [(v >> 16) as u8, (v >> 8) as u8, v as u8];
        bytes.extend_from_slice(&b[..3 - pad]);
    }
    if !bytes.len().is_multiple_of(8) {
        return None;
    }
    Some(bytes.chunks(8).map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes"))).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::{build_context, estimate_context};

    fn load(text: &str) -> Session {
        Session::from_bytes(text.as_bytes().to_vec())
    }

    /// The pass equals `estimate_context(build_context(leaf))` at every entry of every path.
    fn agrees_everywhere(s: &Session) -> usize {
        let mut checked = 0;
        for leaf in 0..s.len() {
            let pts = timeline(s, Some(leaf));
            let path = s.path(Some(leaf));
            assert_eq!(pts.len(), path.len());
            // Each point against the full computation at that point's leaf.
            for p in &pts {
                let want = estimate_context(&build_context(s, Some(p.entry)).agent_messages()).tokens;
                let same = p.context_tokens == want || (p.context_tokens.is_nan() && want.is_nan());
                assert!(same, "entry {}: timeline {} vs build_context {}", s.id(p.entry), p.context_tokens, want);
                checked += 1;
            }
        }
        checked
    }

    #[test]
    fn equals_the_full_estimate_at_every_leaf_of_every_corpus_case() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/conformance");
        let mut total = 0;
        let mut cases = 0;
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().and_then(|x| x.to_str()) != Some("jsonl") {
                continue;
            }
            let s = Session::open(&p).unwrap();
            if s.len() > 400 {
                // The big cases: every leaf would be quadratic in the check itself; take the file leaf.
                let pts = timeline(&s, s.file_leaf());
                let want = estimate_context(&build_context(&s, s.file_leaf()).agent_messages()).tokens;
                assert_eq!(pts.last().map(|p| p.context_tokens), Some(want).filter(|_| s.file_leaf().is_some()), "{}", p.display());
                continue;
            }
            total += agrees_everywhere(&s);
            cases += 1;
        }
        assert!(cases > 30 && total > 1000, "only {cases} cases, {total} points");
    }

    #[test]
    fn base64_round_trips_and_the_cache_matches_a_fresh_pass() {
        let xs = [0.0, -501.0, f64::NAN, 2e300, 1.5, f64::INFINITY, 10_000_001.0];
        for n in 0..xs.len() {
            let back = f64s_from_base64(&base64_f64(&xs[..n])).unwrap();
            assert_eq!(back.len(), n);
            assert!(back.iter().zip(&xs).all(|(a, b)| a.to_bits() == b.to_bits()));
        }
        assert_eq!(base64_f64(&[1.0]), "AAAAAAAA8D8=");
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/conformance");
        let s = Session::open(&dir.join("compaction-repeated.jsonl")).unwrap();
        let path = s.path(s.file_leaf());
        let mut cache = ContributionCache::new();
        // One entry per step with no time: one step per call.
        let mut calls = 0;
        while !cache.fill(&s, &path, std::time::Duration::ZERO, 1) {
            calls += 1;
        }
        assert_eq!(calls + 1, path.len());
        assert_eq!(cache.kept(&s, &path), path.len());
        let contribs = cache.of_path(&s, &path);
        assert_eq!(contribs, contributions(&s, &path));
        let pts = timeline_of(&s, &path, &contribs);
        let e = encode(&s, &pts, &contribs);
        assert_eq!(e.ids.split('\n').collect::<Vec<_>>(), s.path_ids(s.file_leaf()));
        assert_eq!(e.kinds.len(), path.len());
        assert_eq!(e.compactions.len(), e.kinds.bytes().filter(|&k| k == b'c').count());
        let t = f64s_from_base64(&e.context_tokens).unwrap();
        assert!(t.iter().zip(&pts).all(|(a, p)| a.to_bits() == p.context_tokens.to_bits()));
    }

    const H: &str = r#"{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#;

    #[test]
    fn absurd_numbers_do_not_panic_and_follow_pi() {
        let big = "x".repeat(40_000_000);
        let line_d =
            format!(r#"{{"type":"message","id":"d","parentId":"c","timestamp":"2025-01-01T00:00:04.000Z","message":{{"role":"user","content":"{big}"}}}}"#);
        let s = load(&format!(
            "{H}\n{}\n{}\n{}\n{}\n{}\n",
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}}"#,
            r#"{"type":"message","id":"b","parentId":"a","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"assistant","content":[],"usage":{"input":-500,"output":-1,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"total":-3}},"stopReason":"stop"}}"#,
            r#"{"type":"message","id":"c","parentId":"b","timestamp":"2025-01-01T00:00:03.000Z","message":{"role":"assistant","content":[],"usage":{"totalTokens":"lots"},"stopReason":"stop"}}"#,
            line_d,
            r#"{"type":"message","id":"e","parentId":"d","timestamp":"2025-01-01T00:00:05.000Z","message":{"role":"assistant","content":[],"usage":{"input":1e300,"output":1e300,"cacheRead":0,"cacheWrite":0},"stopReason":"stop"}}"#,
        ));
        let pts = timeline(&s, s.file_leaf());
        assert_eq!(pts.len(), 5);
        assert_eq!(pts[0].context_tokens, 1.0);
        assert_eq!(pts[1].context_tokens, -501.0, "a negative usage is Pi's number, not clamped");
        assert_eq!(pts[1].usage_tokens, Some(-501.0));
        assert_eq!(pts[1].cost, Some(-3.0));
        assert!(pts[2].context_tokens.is_nan(), "Pi adds a string: NaN");
        assert!(pts[3].context_tokens.is_nan());
        assert_eq!(pts[4].context_tokens, 2e300);
        // The JSON writer turns NaN into null, never `NaN`.
        assert_eq!(crate::json::to_string(&Value::Num(pts[2].context_tokens)), "null");
        agrees_everywhere(&s);
    }

    #[test]
    fn a_compaction_drops_to_its_summary_and_kept_entries() {
        let s = load(&format!(
            "{H}\n{}\n{}\n{}\n{}\n{}\n",
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}}"#,
            r#"{"type":"message","id":"b","parentId":"a","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"user","content":"bbbbbbbb"}}"#,
            r#"{"type":"message","id":"c","parentId":"b","timestamp":"2025-01-01T00:00:03.000Z","message":{"role":"user","content":"cccc"}}"#,
            r#"{"type":"compaction","id":"k","parentId":"c","timestamp":"2025-01-01T00:00:04.000Z","summary":"ssssssss","firstKeptEntryId":"b","tokensBefore":15}"#,
            r#"{"type":"message","id":"d","parentId":"k","timestamp":"2025-01-01T00:00:05.000Z","message":{"role":"user","content":"dddd"}}"#,
        ));
        let pts = timeline(&s, s.file_leaf());
        let t: Vec<f64> = pts.iter().map(|p| p.context_tokens).collect();
        // 10, +2, +1; then summary 2 + kept b 2 + c 1; then +1.
        assert_eq!(t, [10.0, 12.0, 13.0, 5.0, 6.0]);
        assert_eq!(pts.iter().map(|p| p.compaction).collect::<Vec<_>>(), [false, false, false, true, false]);
        agrees_everywhere(&s);
    }
}
