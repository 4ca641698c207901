//! Where each entry stands relative to the file's leaf (Pi's rules, pi-session-format.md §6.4,
//! §6.5, §8.3, §9.3):
//! - leaf = last entry line; the path = parentId links through the id index (a later duplicate id
//!   replaces the earlier one), stopping at a missing parent; a cycle guard stops loops;
//! - `in_context`: on the path, and not before the last compaction's `firstKeptEntryId`;
//! - `compacted`: on the path, before the last compaction on the path and before its
//!   `firstKeptEntryId` (all of the part before the compaction when that id is not found there);
//! - `abandoned`: not on the path (including earlier lines whose id a later duplicate replaced).
//!
//! TODO(engine): when `session_engine` exposes path/compaction helpers over a light node list,
//! call them here so the rules live in one place. The engine was not available when this was
//! written; the rules here are checked by the tests below against the spec's vectors.
use std::collections::HashMap;

pub const IN_CONTEXT: i64 = 0;
pub const COMPACTED: i64 = 1;
pub const ABANDONED: i64 = 2;

pub fn status_name(s: i64) -> &'static str {
    match s {
        IN_CONTEXT => "in_context",
        COMPACTED => "compacted",
        _ => "abandoned",
    }
}

#[derive(Debug, Clone, Default)]
pub struct Node {
    pub id: String,
    pub parent_id: Option<String>,
    pub is_compaction: bool,
    pub first_kept: Option<String>,
    pub ctx: bool,
    pub tok: i64,
    pub usage: Option<i64>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    /// One status per node, in the input order.
    pub status: Vec<i64>,
    pub leaf: Option<usize>,
    /// Usage part of the context estimate (§9.3), if a message with usage is in context.
    pub ctx_usage: Option<i64>,
    /// Estimated tokens of the context messages after that usage (or all of them).
    pub ctx_trailing: i64,
    /// Number of tips (entries no other entry points at): 1 for a linear session.
    pub branches: i64,
    pub path_len: usize,
}

impl Outcome {
    pub fn tokens(&self) -> i64 {
        self.ctx_usage.unwrap_or(0) + self.ctx_trailing
    }
}

pub fn classify(nodes: &[Node]) -> Outcome {
    let n = nodes.len();
    let mut out = Outcome { status: vec![ABANDONED; n], ..Default::default() };
    if n == 0 {
        return out;
    }
    let mut by_id: HashMap<&str, usize> = HashMap::with_capacity(n);
    for (i, nd) in nodes.iter().enumerate() {
        by_id.insert(nd.id.as_str(), i);
    }
    // tips: winners of the id index that no winner points at
    let mut has_child = vec![false; n];
    for (&_, &i) in by_id.iter() {
        if let Some(p) = nodes[i].parent_id.as_deref() {
            if let Some(&pi) = by_id.get(p) {
                if pi != i {
                    has_child[pi] = true;
                }
            }
        }
    }
    out.branches = by_id.values().filter(|&&i| !has_child[i]).count() as i64;

    let leaf = n - 1;
    out.leaf = Some(leaf);
    let mut seen = vec![false; n];
    let mut path = Vec::new();
    let mut cur = Some(leaf);
    while let Some(i) = cur {
        if seen[i] {
            break; // cycle guard
        }
        seen[i] = true;
        path.push(i);
        cur = nodes[i].parent_id.as_deref().and_then(|p| by_id.get(p).copied());
    }
    path.reverse();
    out.path_len = path.len();

    let ci = path.iter().rposition(|&i| nodes[i].is_compaction);
    let mut ctx_msgs: Vec<(i64, Option<i64>)> = Vec::new();
    for &i in &path {
        out.status[i] = IN_CONTEXT;
    }
    match ci {
        None => {
            for &i in &path {
                if nodes[i].ctx {
                    ctx_msgs.push((nodes[i].tok, nodes[i].usage));
                }
            }
        }
        Some(ci) => {
            let c = &nodes[path[ci]];
            let fk = c.first_kept.as_deref().and_then(|f| path[..ci].iter().position(|&i| nodes[i].id == f));
            let kept_from = fk.unwrap_or(ci);
            for &i in &path[..kept_from] {
                out.status[i] = COMPACTED;
            }
            ctx_msgs.push((c.tok, None));
            for &i in path[kept_from..ci].iter().chain(path[ci + 1..].iter()) {
                if nodes[i].ctx {
                    ctx_msgs.push((nodes[i].tok, nodes[i].usage));
                }
            }
        }
    }
    let (u, t) = estimate(&ctx_msgs);
    out.ctx_usage = u;
    out.ctx_trailing = t;
    out
}

/// §9.3 over (estimate, usage) pairs.
pub fn estimate(msgs: &[(i64, Option<i64>)]) -> (Option<i64>, i64) {
    match msgs.iter().rposition(|m| m.1.is_some()) {
        None => (None, msgs.iter().map(|m| m.0).sum()),
        Some(u) => (msgs[u].1, msgs[u + 1..].iter().map(|m| m.0).sum()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(id: &str, parent: Option<&str>) -> Node {
        Node { id: id.into(), parent_id: parent.map(Into::into), ctx: true, tok: 10, ..Default::default() }
    }
    fn comp(id: &str, parent: &str, fk: &str) -> Node {
        Node { id: id.into(), parent_id: Some(parent.into()), is_compaction: true, first_kept: Some(fk.into()), ctx: true, tok: 5, ..Default::default() }
    }

    #[test]
    fn linear_session_is_all_in_context() {
        let o = classify(&[n("a", None), n("b", Some("a")), n("c", Some("b"))]);
        assert_eq!(o.status, vec![0, 0, 0]);
        assert_eq!(o.branches, 1);
        assert_eq!(o.tokens(), 30);
    }

    #[test]
    fn compaction_marks_entries_before_first_kept() {
        let o = classify(&[n("a", None), n("b", Some("a")), n("c", Some("b")), comp("k", "c", "b"), n("d", Some("k"))]);
        assert_eq!(o.status, vec![COMPACTED, 0, 0, 0, 0]);
        assert_eq!(o.tokens(), 5 + 10 + 10 + 10);
    }

    #[test]
    fn first_kept_missing_compacts_everything_before() {
        let o = classify(&[n("a", None), n("b", Some("a")), comp("k", "b", "zz"), n("d", Some("k"))]);
        assert_eq!(o.status, vec![COMPACTED, COMPACTED, 0, 0]);
        assert_eq!(o.tokens(), 15);
    }

    #[test]
    fn abandoned_branch_and_duplicates() {
        // b and c are siblings; leaf is c -> b abandoned; a later duplicate of "a" replaces it
        let o = classify(&[n("a", None), n("b", Some("a")), n("c", Some("a"))]);
        assert_eq!(o.status, vec![0, ABANDONED, 0]);
        assert_eq!(o.branches, 2);
        let o = classify(&[n("a", None), n("a", None), n("c", Some("a"))]);
        assert_eq!(o.status, vec![ABANDONED, 0, 0]);
    }

    #[test]
    fn cycle_does_not_hang() {
        let o = classify(&[n("a", Some("b")), n("b", Some("a"))]);
        assert_eq!(o.status, vec![0, 0]);
    }

    #[test]
    fn usage_then_trailing() {
        let mut a = n("a", None);
        a.usage = Some(1000);
        let o = classify(&[n("u", None), Node { parent_id: Some("u".into()), ..a }, n("t", Some("a"))]);
        assert_eq!(o.ctx_usage, Some(1000));
        assert_eq!(o.tokens(), 1010);
    }
}
