//! The context over time (the Timeline tab's waterfall): for every entry on a path, the tokens
//! Pi would estimate with that entry as the leaf (`estimateContextTokens(buildSessionContext())`:
//! the last valid assistant usage plus the estimates of the messages after it), in one pass over
//! the path.
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

use crate::context::{
    assistant_usage, compaction_summary_of, context_message_of, context_tokens_of_usage, estimate_tokens,
};
use crate::session::{Kind, Session};
use pi_json::Value;
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
pub fn contribution(session: &Session, idx: usize) -> Contribution {
    let kind = session.kind(idx);
    if !matches!(kind, Kind::Message | Kind::CustomMessage | Kind::BranchSummary | Kind::Compaction) {
        return Contribution { code: b'o', ..Contribution::default() };
    }
    let v = session.value_transient(idx);
    if kind == Kind::Compaction {
        return Contribution {
            usage: None,
            estimate: estimate_tokens(&compaction_summary_of(&v)),
            cost: None,
            in_context: false,
            code: b'c',
        };
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
pub fn contributions(session: &Session, path: &[usize]) -> Vec<Contribution> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8);
    if threads < 2 || path.len() < 4096 {
        return path.iter().map(|&i| contribution(session, i)).collect();
    }
    let mut out = vec![Contribution::default(); path.len()];
    let chunk = path.len().div_ceil(threads);
    std::thread::scope(|scope| {
        for (dst, src) in out.chunks_mut(chunk).zip(path.chunks(chunk)) {
            scope.spawn(move || {
                for (d, &i) in dst.iter_mut().zip(src) {
                    *d = contribution(session, i);
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
pub fn timeline(session: &Session, leaf: Option<usize>) -> Vec<Point> {
    timeline_on_path(session, &session.path(leaf))
}

/// The points of a root-first path.
pub fn timeline_on_path(session: &Session, path: &[usize]) -> Vec<Point> {
    let contribs = contributions(session, path);
    timeline_of(session, path, &contribs)
}

/// The points of a root-first path whose entries' contributions are `contribs` (same order and
/// length; e.g. kept by a caller that asks for several paths of one session).
pub fn timeline_of(session: &Session, path: &[usize], contribs: &[Contribution]) -> Vec<Point> {
    assert_eq!(path.len(), contribs.len(), "one contribution per path entry");
    // buildSessionContext finds the kept entries by the first path position whose id is
    // firstKeptEntryId, before the compaction. Only the ids some compaction keeps from are
    // looked up (a map of every id on a 77k-entry path was a third of the pass).
    let kept_ids: Vec<(usize, Option<String>)> = path
        .iter()
        .enumerate()
        .filter(|&(_, &idx)| session.kind(idx) == Kind::Compaction)
        .map(|(pos, &idx)| (pos, first_kept(session, idx)))
        .collect();
    let mut first_pos: FxHashMap<&str, usize> =
        kept_ids.iter().filter_map(|(_, id)| id.as_deref()).map(|id| (id, usize::MAX)).collect();
    if !first_pos.is_empty() {
        for (pos, &idx) in path.iter().enumerate() {
            if let Some(p) = first_pos.get_mut(session.id(idx)) {
                if *p == usize::MAX {
                    *p = pos;
                }
            }
        }
    }
    let mut kept_of = kept_ids.iter().map(|(pos, id)| (*pos, id.as_deref().and_then(|id| first_pos.get(id).copied())));
    let mut out = Vec::with_capacity(path.len());
    let mut r = Running::default();
    for (pos, &idx) in path.iter().enumerate() {
        let c = &contribs[pos];
        let compaction = session.kind(idx) == Kind::Compaction;
        if compaction {
            r = Running::default();
            r.trailing = c.estimate;
            let kept = kept_of.next().filter(|&(p, _)| p == pos).and_then(|(_, k)| k).filter(|&k| k < pos);
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
fn first_kept(session: &Session, idx: usize) -> Option<String> {
    session.value_transient(idx).get("firstKeptEntryId").and_then(Value::as_str).map(str::to_owned)
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
    pub fn get(&self, session: &Session, i: usize) -> Option<Contribution> {
        let &(h, len, c) = self.entries.get(i)?.as_ref()?;
        (len as usize == session.raw_len(i) && h == id_hash(session.id(i))).then_some(c)
    }
    /// Reads the missing entries of `path`, `step` at a time, until done or `budget` is spent
    /// (at least one step). True when every entry of the path is kept.
    pub fn fill(&mut self, session: &Session, path: &[usize], budget: std::time::Duration, step: usize) -> bool {
        let t = std::time::Instant::now();
        if self.entries.len() < session.len() {
            self.entries.resize(session.len(), None);
        }
        let missing: Vec<usize> = path.iter().copied().filter(|&i| self.get(session, i).is_none()).collect();
        let mut done = 0;
        for chunk in missing.chunks(step.max(1)) {
            for (&i, c) in chunk.iter().zip(contributions(session, chunk)) {
                self.entries[i] = Some((id_hash(session.id(i)), session.raw_len(i) as u32, c));
            }
            done += chunk.len();
            if t.elapsed() >= budget {
                break;
            }
        }
        done == missing.len()
    }
    /// The contributions of `path` once every entry is kept: one pass over the path finds the
    /// kept ones and reads the missing ones `step` at a time until done or `budget` is spent (at
    /// least one step). None when some are still missing (call again).
    pub fn fill_path(
        &mut self,
        session: &Session,
        path: &[usize],
        budget: std::time::Duration,
        step: usize,
    ) -> Option<Vec<Contribution>> {
        let t = std::time::Instant::now();
        if self.entries.len() < session.len() {
            self.entries.resize(session.len(), None);
        }
        let mut out = Vec::with_capacity(path.len());
        let mut missing = Vec::new();
        for (pos, &i) in path.iter().enumerate() {
            match self.get(session, i) {
                Some(c) => out.push(c),
                None => {
                    out.push(Contribution::default());
                    missing.push(pos);
                }
            }
        }
        let mut done = 0;
        for chunk in missing.chunks(step.max(1)) {
            let idx: Vec<usize> = chunk.iter().map(|&pos| path[pos]).collect();
            for ((&pos, &i), c) in chunk.iter().zip(&idx).zip(contributions(session, &idx)) {
                self.entries[i] = Some((id_hash(session.id(i)), session.raw_len(i) as u32, c));
                out[pos] = c;
            }
            done += chunk.len();
            if done < missing.len() && t.elapsed() >= budget {
                return None;
            }
        }
        Some(out)
    }
    /// The contributions of `path`, from the cache where kept, read now where not.
    pub fn of_path(&self, session: &Session, path: &[usize]) -> Vec<Contribution> {
        path.iter().map(|&i| self.get(session, i).unwrap_or_else(|| contribution(session, i))).collect()
    }
    /// How many entries of `path` are kept.
    pub fn kept(&self, session: &Session, path: &[usize]) -> usize {
        path.iter().filter(|&&i| self.get(session, i).is_some()).count()
    }
}

/// A timeline in a few flat columns, for a compact binary transfer: the ids' bytes one after the
/// other with the end of each, one kind code per point, and the numbers as `f64`s. The estimate
/// is dense (one per point); the reported usage and the cost exist on assistant messages only,
/// so they are sparse: the values, and their path positions in `*_at`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Encoded {
    /// The ids of the path's entries, concatenated.
    pub ids: String,
    /// The end (byte offset into `ids`) of each id.
    pub id_ends: Vec<u32>,
    pub kinds: Vec<u8>,
    pub context_tokens: Vec<f64>,
    pub usage_tokens: Vec<f64>,
    pub usage_at: Vec<u32>,
    pub cost: Vec<f64>,
    pub cost_at: Vec<u32>,
    pub compactions: Vec<u32>,
}

impl Encoded {
    /// The id of point `i`.
    pub fn id(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.id_ends[i - 1] as usize };
        &self.ids[start..self.id_ends[i] as usize]
    }
}

/// Encodes `points` (with their contributions' codes) for [`Encoded`].
pub fn encode(session: &Session, points: &[Point], contribs: &[Contribution]) -> Encoded {
    let n = points.len();
    let mut e = Encoded {
        ids: String::with_capacity(n * 9),
        id_ends: Vec::with_capacity(n),
        kinds: Vec::with_capacity(n),
        context_tokens: Vec::with_capacity(n),
        ..Encoded::default()
    };
    for (pos, (p, k)) in points.iter().zip(contribs).enumerate() {
        e.ids.push_str(session.id(p.entry));
        e.id_ends.push(e.ids.len() as u32);
        e.kinds.push(k.code);
        e.context_tokens.push(p.context_tokens);
        if let Some(x) = p.usage_tokens {
            e.usage_tokens.push(x);
            e.usage_at.push(pos as u32);
        }
        if let Some(x) = p.cost {
            e.cost.push(x);
            e.cost_at.push(pos as u32);
        }
        if p.compaction {
            e.compactions.push(pos as u32);
        }
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::{build_context, estimate_context};

    fn load(text: &str) -> Session {
        Session::from_bytes(text.as_bytes().to_vec())
    }

    /// The pass equals `estimate_context(build_context(leaf))` at every entry of every path.
    fn agrees_everywhere(session: &Session) -> usize {
        let mut checked = 0;
        for leaf in 0..session.len() {
            let pts = timeline(session, Some(leaf));
            let path = session.path(Some(leaf));
            assert_eq!(pts.len(), path.len());
            // Each point against the full computation at that point's leaf.
            for p in &pts {
                let want = estimate_context(&build_context(session, Some(p.entry)).agent_messages()).tokens;
                let same = p.context_tokens == want || (p.context_tokens.is_nan() && want.is_nan());
                assert!(same, "entry {}: timeline {} vs build_context {}", session.id(p.entry), p.context_tokens, want);
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
            let session = Session::open(&p).unwrap();
            if session.len() > 400 {
                // The big cases: every leaf would be quadratic in the check itself; take the file leaf.
                let pts = timeline(&session, session.file_leaf());
                let want = estimate_context(&build_context(&session, session.file_leaf()).agent_messages()).tokens;
                assert_eq!(
                    pts.last().map(|p| p.context_tokens),
                    Some(want).filter(|_| session.file_leaf().is_some()),
                    "{}",
                    p.display()
                );
                continue;
            }
            total += agrees_everywhere(&session);
            cases += 1;
        }
        assert!(cases > 30 && total > 1000, "only {cases} cases, {total} points");
    }

    #[test]
    fn the_cache_matches_a_fresh_pass_and_the_columns_the_points() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/conformance");
        let session = Session::open(&dir.join("compaction-repeated.jsonl")).unwrap();
        let path = session.path(session.file_leaf());
        let mut cache = ContributionCache::new();
        // One entry per step with no time: one step per call.
        let mut calls = 0;
        while !cache.fill(&session, &path, std::time::Duration::ZERO, 1) {
            calls += 1;
        }
        assert_eq!(calls + 1, path.len());
        assert_eq!(cache.kept(&session, &path), path.len());
        let contribs = cache.of_path(&session, &path);
        assert_eq!(contribs, contributions(&session, &path));
        // fill_path: the same numbers, kept or read one step per call.
        assert_eq!(cache.fill_path(&session, &path, std::time::Duration::ZERO, 1).as_ref(), Some(&contribs));
        let mut fresh = ContributionCache::new();
        let mut calls = 1;
        let got = loop {
            match fresh.fill_path(&session, &path, std::time::Duration::ZERO, 1) {
                Some(c) => break c,
                None => calls += 1,
            }
        };
        assert_eq!(calls, path.len());
        assert_eq!(got, contribs);
        let pts = timeline_of(&session, &path, &contribs);
        let e = encode(&session, &pts, &contribs);
        assert_eq!((0..path.len()).map(|i| e.id(i)).collect::<Vec<_>>(), session.path_ids(session.file_leaf()));
        assert_eq!(e.kinds.len(), path.len());
        assert_eq!(e.compactions.len(), e.kinds.iter().filter(|&&k| k == b'c').count());
        assert!(e.compactions.len() >= 2);
        assert!(e.context_tokens.iter().zip(&pts).all(|(a, p)| a.to_bits() == p.context_tokens.to_bits()));
        assert_eq!(e.usage_at.len(), pts.iter().filter(|p| p.usage_tokens.is_some()).count());
        for (&at, &u) in e.usage_at.iter().zip(&e.usage_tokens) {
            assert_eq!(pts[at as usize].usage_tokens, Some(u));
        }
    }

    const H: &str = r#"{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#;

    #[test]
    fn absurd_numbers_do_not_panic_and_follow_pi() {
        let big = "x".repeat(40_000_000);
        let line_d = format!(
            r#"{{"type":"message","id":"d","parentId":"c","timestamp":"2025-01-01T00:00:04.000Z","message":{{"role":"user","content":"{big}"}}}}"#
        );
        let session = load(&format!(
            "{H}\n{}\n{}\n{}\n{}\n{}\n",
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}}"#,
            r#"{"type":"message","id":"b","parentId":"a","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"assistant","content":[],"usage":{"input":-500,"output":-1,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"total":-3}},"stopReason":"stop"}}"#,
            r#"{"type":"message","id":"c","parentId":"b","timestamp":"2025-01-01T00:00:03.000Z","message":{"role":"assistant","content":[],"usage":{"totalTokens":"lots"},"stopReason":"stop"}}"#,
            line_d,
            r#"{"type":"message","id":"e","parentId":"d","timestamp":"2025-01-01T00:00:05.000Z","message":{"role":"assistant","content":[],"usage":{"input":1e300,"output":1e300,"cacheRead":0,"cacheWrite":0},"stopReason":"stop"}}"#,
        ));
        let pts = timeline(&session, session.file_leaf());
        assert_eq!(pts.len(), 5);
        assert_eq!(pts[0].context_tokens, 1.0);
        assert_eq!(pts[1].context_tokens, -501.0, "a negative usage is Pi's number, not clamped");
        assert_eq!(pts[1].usage_tokens, Some(-501.0));
        assert_eq!(pts[1].cost, Some(-3.0));
        assert!(pts[2].context_tokens.is_nan(), "Pi adds a string: NaN");
        assert!(pts[3].context_tokens.is_nan());
        assert_eq!(pts[4].context_tokens, 2e300);
        // The JSON writer turns NaN into null, never `NaN`.
        assert_eq!(pi_json::to_string(&Value::Num(pts[2].context_tokens)), "null");
        agrees_everywhere(&session);
    }

    #[test]
    fn a_compaction_drops_to_its_summary_and_kept_entries() {
        let session = load(&format!(
            "{H}\n{}\n{}\n{}\n{}\n{}\n",
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}}"#,
            r#"{"type":"message","id":"b","parentId":"a","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"user","content":"bbbbbbbb"}}"#,
            r#"{"type":"message","id":"c","parentId":"b","timestamp":"2025-01-01T00:00:03.000Z","message":{"role":"user","content":"cccc"}}"#,
            r#"{"type":"compaction","id":"k","parentId":"c","timestamp":"2025-01-01T00:00:04.000Z","summary":"ssssssss","firstKeptEntryId":"b","tokensBefore":15}"#,
            r#"{"type":"message","id":"d","parentId":"k","timestamp":"2025-01-01T00:00:05.000Z","message":{"role":"user","content":"dddd"}}"#,
        ));
        let pts = timeline(&session, session.file_leaf());
        let t: Vec<f64> = pts.iter().map(|p| p.context_tokens).collect();
        // 10, +2, +1; then summary 2 + kept b 2 + c 1; then +1.
        assert_eq!(t, [10.0, 12.0, 13.0, 5.0, 6.0]);
        assert_eq!(pts.iter().map(|p| p.compaction).collect::<Vec<_>>(), [false, false, false, true, false]);
        agrees_everywhere(&session);
    }
}
