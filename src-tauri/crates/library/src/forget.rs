//! The cost of forgetting, summed per session: for every compaction, the files the agent read
//! again and the commands it ran again after it because the summary did not carry them.
//!
//! The rule is `summary_analysis::quality::forgetting`'s, per compaction: the window is the path
//! below the compaction up to the next one (the leaf's path when the compaction is on it, else
//! the newest child at each step); "before the cut" is the path from the root to the first kept
//! entry (of the edit's origin, for an edit or revert); the cost is the distinct paths given to
//! `read` and commands run (tool calls or `bashExecution`, trimmed) in the window that were read
//! or run before the cut. `tests/engine_agreement.rs` checks that [`sum`] equals the sum of that
//! function over every compaction, on the conformance, oracle and generated sessions.
//!
//! It is computed here rather than by calling that function per compaction because each call
//! walks the compaction's whole path and parses its tool calls: for the 216 compactions of the
//! 264 MB bench session that took 3.6 s, most of what indexing the whole file takes. Here one
//! walk of the tree numbers the entries so that "is an ancestor of" is two comparisons, and each
//! window's keys are looked up among the entries that carry them (30-80 ms for that session).
//! Acts are the keys of [`crate::analyze::act_key`], stored per entry, so a skeleton of the
//! stored rows is enough: nothing is re-read.
//!
//! After an append, the sum is kept current without re-reading anything. A linear append at the
//! leaf (no compaction in it) can only extend the window of the last compaction on the leaf's
//! path: an earlier compaction's window ends at the next one, and one off that path is not above
//! the leaf, so its newest-child window does not reach the new entries. What that window can
//! still add is kept as the session's *open* keys: the paths read and commands run before that
//! compaction's cut that its window has not repeated yet. An appended act whose key is open adds
//! one and closes it ([`extend`]). Any other append recomputes the sum from the stored rows.
use crate::analyze::{act_keys, act_of, Act};
use session_engine::session::{Kind, Session};
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// FNV-1a for the maps here: their keys are act keys (already hashes) and entry ids of a few
/// bytes, from the user's own files; SipHash's defence against chosen collisions buys nothing.
#[derive(Default)]
struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 { 0xcbf29ce484222325 } else { self.0 };
        for &b in bytes {
            h ^= b as u64;
            h = h.wrapping_mul(0x100000001b3);
        }
        self.0 = h;
    }
}

type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<Fnv>>;
type FastSet<K> = HashSet<K, BuildHasherDefault<Fnv>>;

/// What [`sum`] reads of each entry besides the tree.
pub trait Rows {
    /// The entry's act keys as stored ([`crate::analyze::acts_blob`]; empty: none).
    fn acts(&self, i: usize) -> &[u8];
    /// A compaction's `firstKeptEntryId`.
    fn first_kept(&self, i: usize) -> Option<&str>;
    /// A compaction that edits or reverts another: the id of its origin.
    fn edit_origin(&self, i: usize) -> Option<&str>;
}

/// A session's cost of forgetting.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sum {
    /// Files re-read plus commands re-run, summed over the compactions.
    pub cost: i64,
    /// The compactions summed over.
    pub compactions: i64,
    /// What a linear append can still add.
    pub open: Open,
}

/// What a linear append at the leaf can add to a session's cost (see the module doc).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Open {
    /// Nothing: no compaction is on the leaf's path.
    #[default]
    Nothing,
    /// One for each appended act whose key is one of these (sorted).
    Keys(Vec<i64>),
    /// Anything: a compaction's path runs into a `parentId` cycle, and the engine walks such a
    /// path up to as many steps as the file has entries, so every append can move its cut.
    /// The sum is recomputed at each append.
    Recompute,
}

/// [`Open::Recompute`] as stored (keys are 8 bytes each: no set of keys is 5 bytes long).
const RECOMPUTE: &[u8] = b"cycle";

/// The keys that count (reads and runs; an edit counts for nothing here).
fn counted<'a>(rows: &'a impl Rows, e: usize) -> impl Iterator<Item = i64> + 'a {
    act_keys(rows.acts(e)).filter(|&k| act_of(k) != Act::Edit)
}

/// The forest of `parent_of` (the links every path follows), numbered in one depth-first walk:
/// `a` is `b` or above it when `tin[a] <= tin[b] && tout[b] <= tout[a]`. An entry whose chain
/// runs into a cycle is not reached (`tin == u32::MAX`); its paths are walked literally.
struct Tree {
    tin: Vec<u32>,
    tout: Vec<u32>,
    depth: Vec<u32>,
}

impl Tree {
    fn new(session: &Session) -> Tree {
        let n = session.len();
        let mut start = vec![0u32; n + 1];
        for i in 0..n {
            if let Some(p) = session.parent_of(i) {
                start[p + 1] += 1;
            }
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut kids = vec![0u32; start[n] as usize];
        for i in 0..n {
            if let Some(p) = session.parent_of(i) {
                kids[fill[p] as usize] = i as u32;
                fill[p] += 1;
            }
        }
        let mut t = Tree { tin: vec![u32::MAX; n], tout: vec![0; n], depth: vec![0; n] };
        let mut clock = 0u32;
        let mut stack: Vec<(usize, u32)> = Vec::new();
        for root in (0..n).filter(|&i| session.parent_of(i).is_none()) {
            t.tin[root] = clock;
            clock += 1;
            stack.push((root, start[root]));
            while let Some((node, next)) = stack.last_mut() {
                let node = *node;
                if *next < start[node + 1] {
                    let child = kids[*next as usize] as usize;
                    *next += 1;
                    t.tin[child] = clock;
                    clock += 1;
                    t.depth[child] = t.depth[node] + 1;
                    stack.push((child, start[child]));
                } else {
                    t.tout[node] = clock;
                    stack.pop();
                }
            }
        }
        t
    }

    fn reached(&self, i: usize) -> bool {
        self.tin[i] != u32::MAX
    }

    /// `a` is `b` or one of its ancestors (both reached).
    fn above(&self, a: usize, b: usize) -> bool {
        self.tin[a] <= self.tin[b] && self.tout[b] <= self.tout[a]
    }
}

/// Whether `o` is on the parent chain above `c`, walked as `summary_analysis::edit_origin`
/// walks it (bounded by the entry count, for cycles).
fn walk_finds(session: &Session, o: usize, c: usize) -> bool {
    let mut cur = session.parent_of(c);
    let mut steps = 0;
    while let Some(x) = cur {
        if x == o {
            return true;
        }
        steps += 1;
        if steps > session.len() {
            return false;
        }
        cur = session.parent_of(x);
    }
    false
}

/// The compaction whose first kept entry places `c`'s cut: its origin when `c` is an edit or
/// revert of a compaction above it, else `c`.
fn origin(session: &Session, rows: &impl Rows, tree: &Tree, c: usize) -> usize {
    let Some(o) = rows.edit_origin(c).and_then(|id| session.index_of(id)) else { return c };
    if o == c || session.kind(o) != Kind::Compaction {
        return c;
    }
    let above = if tree.reached(c) { tree.above(o, c) } else { walk_finds(session, o, c) };
    if above {
        o
    } else {
        c
    }
}

/// The window after compaction `c`: the leaf's path below it when it is on that path, else the
/// newest child (in file order) at each step; up to the next compaction.
fn window(session: &Session, c: usize, leaf_path: &[usize], leaf_pos: &[u32]) -> Vec<usize> {
    if leaf_pos[c] != u32::MAX {
        let below = &leaf_path[leaf_pos[c] as usize + 1..];
        let end = below.iter().position(|&i| session.kind(i) == Kind::Compaction).unwrap_or(below.len());
        return below[..end].to_vec();
    }
    let mut out = Vec::new();
    let mut cur = c;
    while let Some(&next) = session.children(cur).iter().max() {
        let next = next as usize;
        if out.len() > session.len() || session.kind(next) == Kind::Compaction {
            break;
        }
        out.push(next);
        cur = next;
    }
    out
}

/// The entries before `c`'s cut, walked literally (`c`'s chain runs into a cycle, or the open
/// keys of one compaction): the path to `c` up to its first entry whose id is `kept`, else all
/// of the path but `c`.
fn before_literal(session: &Session, c: usize, kept: Option<&str>) -> Vec<usize> {
    let mut path = session.path(Some(c));
    let cut = kept.and_then(|k| path.iter().position(|&i| session.id(i) == k)).unwrap_or(path.len().saturating_sub(1));
    path.truncate(cut);
    path
}

/// The sum over `session`'s compactions. `session` holds the tree (the file's own session, or a
/// skeleton of its rows); `rows` the acts, first kept entries and edit origins.
pub fn sum(session: &Session, rows: &impl Rows) -> Sum {
    let compactions: Vec<usize> = (0..session.len()).filter(|&i| session.kind(i) == Kind::Compaction).collect();
    if compactions.is_empty() {
        return Sum::default();
    }
    let tree = Tree::new(session);
    let leaf_path = session.path(session.file_leaf());
    let mut leaf_pos = vec![u32::MAX; session.len()];
    for (p, &i) in leaf_path.iter().enumerate().rev() {
        leaf_pos[i] = p as u32; // the first place on the path, as `position` finds it
    }
    let last = leaf_path.iter().rev().copied().find(|&i| session.kind(i) == Kind::Compaction);
    // the entries that read or ran each key, and the entries of each id a cut is placed at
    let mut by_key: FastMap<i64, Vec<u32>> = FastMap::default();
    for e in 0..session.len() {
        for k in counted(rows, e) {
            by_key.entry(k).or_default().push(e as u32);
        }
    }
    let origins: Vec<usize> = compactions.iter().map(|&c| origin(session, rows, &tree, c)).collect();
    let mut by_id: FastMap<&str, Vec<u32>> =
        origins.iter().filter_map(|&o| rows.first_kept(o)).map(|k| (k, vec![])).collect();
    for e in 0..session.len() {
        if let Some(v) = by_id.get_mut(session.id(e)) {
            v.push(e as u32);
        }
    }
    let mut s = Sum { compactions: compactions.len() as i64, ..Default::default() };
    for (&c, &o) in compactions.iter().zip(&origins) {
        let kept = rows.first_kept(o);
        let win = window(session, c, &leaf_path, &leaf_pos);
        // before the cut: the entries above the first kept entry (the shallowest entry of that
        // id on the path to `c`), or above `c` when there is none
        let literal: Option<FastSet<i64>> = (!tree.reached(c))
            .then(|| before_literal(session, c, kept).into_iter().flat_map(|e| counted(rows, e)).collect());
        let cut = kept
            .and_then(|k| by_id.get(k))
            .and_then(|v| {
                v.iter()
                    .map(|&x| x as usize)
                    .filter(|&x| tree.reached(x) && tree.above(x, c))
                    .min_by_key(|&x| tree.depth[x])
            })
            .unwrap_or(c);
        let before = |k: i64| match &literal {
            Some(set) => set.contains(&k),
            None => by_key.get(&k).is_some_and(|v| {
                v.iter().any(|&e| e as usize != cut && tree.reached(e as usize) && tree.above(e as usize, cut))
            }),
        };
        let mut seen = FastSet::default();
        for &e in &win {
            for k in counted(rows, e) {
                if seen.insert(k) && before(k) {
                    s.cost += 1;
                }
            }
        }
        if literal.is_some() {
            s.open = Open::Recompute;
        } else if Some(c) == last && s.open != Open::Recompute {
            let mut open: Vec<i64> = before_literal(session, c, kept)
                .into_iter()
                .flat_map(|e| counted(rows, e))
                .filter(|k| !seen.contains(k))
                .collect();
            open.sort_unstable();
            open.dedup();
            s.open = Open::Keys(open);
        }
    }
    s
}

/// [`Sum::open`] as stored: NULL, the keys (8 bytes each, little-endian), or [`RECOMPUTE`].
pub fn open_blob(open: &Open) -> Option<Vec<u8>> {
    match open {
        Open::Nothing => None,
        Open::Keys(k) => Some(k.iter().flat_map(|k| k.to_le_bytes()).collect()),
        Open::Recompute => Some(RECOMPUTE.to_vec()),
    }
}

/// Whether a stored [`Sum::open`] says to recompute the sum at every append.
pub fn must_recompute(open_blob: Option<&[u8]>) -> bool {
    open_blob == Some(RECOMPUTE)
}

/// A linear append's act keys against the stored open keys: how much the cost grows, and the
/// keys still open. Each open key counts once (the window's re-reads are distinct paths).
pub fn extend(open_blob: &[u8], appended: impl Iterator<Item = i64>) -> (i64, Vec<i64>) {
    let mut open: Vec<i64> = act_keys(open_blob).collect();
    let mut added = 0;
    for k in appended {
        if let Ok(at) = open.binary_search(&k) {
            open.remove(at);
            added += 1;
        }
    }
    (added, open)
}
