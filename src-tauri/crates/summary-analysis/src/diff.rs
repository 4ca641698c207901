//! Section-aware diff of two summaries.
//!
//! 1. Sections are matched by role (Pi's template sections and their aliases), else by
//!    normalized name; a section only in one summary has all its lines added or removed.
//! 2. The units of a section are its items, then its free-text lines. Within a matched pair,
//!    `similar` aligns the units by their normalized key; units equal up to case, markdown and
//!    punctuation are unchanged (also when reordered).
//! 3. A removed unit whose exact key was added in another section is *moved* (In Progress →
//!    Done), not a removal plus an addition.
//! 4. Left-over removed/added pairs in the same section that are similar (word-set Dice ≥ 0.6)
//!    are *reworded*, with a word-level diff from `similar`.
//! 5. Left-over similar pairs across sections are moved too (reworded on the way).
//!    Placeholders ("(none)", "n/a") are never moved: they are plain additions and removals.
//!
//! Fuzzy pairing is quadratic in the left-over units of a section, so it is skipped above
//! [`FUZZY_LIMIT`] comparisons (the exact steps stay linear); a 1 MB summary diffs quickly.

use crate::parse::{Section, SectionRole, Summary};
use crate::words::{self, SIMILAR};
use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;
use similar::{Algorithm, DiffOp};

/// Above this many candidate pairs, fuzzy matching is skipped.
pub const FUZZY_LIMIT: usize = 250_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum WordOp {
    Equal,
    Insert,
    Delete,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WordChange {
    pub op: WordOp,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Reworded {
    pub from: String,
    pub to: String,
    pub words: Vec<WordChange>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SectionDiff {
    /// The section's `name` (in the newer summary when it is in both).
    pub title: String,
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub unchanged: Vec<String>,
    /// Fuzzy-matched pairs; not also listed in added/removed.
    pub reworded: Vec<Reworded>,
    /// The free text differs.
    pub text_changed: bool,
    /// The section's name in the older summary, when it is there.
    pub from_title: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Moved {
    pub text: String,
    /// Section names.
    pub from: String,
    pub to: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SummaryDiff {
    pub sections: Vec<SectionDiff>,
    pub moved: Vec<Moved>,
    pub files_added: Vec<String>,
    pub files_removed: Vec<String>,
}

impl SummaryDiff {
    /// Nothing changed at all.
    pub fn is_empty(&self) -> bool {
        self.moved.is_empty()
            && self.files_added.is_empty()
            && self.files_removed.is_empty()
            && self
                .sections
                .iter()
                .all(|s| s.added.is_empty() && s.removed.is_empty() && s.reworded.is_empty() && !s.text_changed)
    }
}

/// Fuzzy "same item": normalized word-set similarity (lowercase, punctuation and markdown
/// stripped, stopwords out, light stemming), Dice ≥ 0.6. Two texts without content words are
/// the same when their normalized keys are.
pub fn similar_items(a: &str, b: &str) -> bool {
    let (wa, wb) = (words::word_set(a), words::word_set(b));
    if wa.is_empty() || wb.is_empty() {
        return words::key(a) == words::key(b);
    }
    words::dice(&wa, &wb) >= SIMILAR
}

/// The units of a section: items, then free-text lines.
pub(crate) fn units(sec: &Section) -> Vec<&str> {
    let mut u: Vec<&str> = sec.items.iter().map(|i| i.text.as_str()).collect();
    u.extend(sec.text.split('\n').filter(|l| !l.trim().is_empty()));
    u
}

fn norm_name(name: &str) -> String {
    words::key(name)
}

/// Pairs each section of `to` with one of `from`: by role, else by normalized name.
fn match_sections(from: &Summary, to: &Summary) -> Vec<Option<usize>> {
    let mut used = vec![false; from.sections.len()];
    let mut out = vec![None; to.sections.len()];
    let mut by_name: FxHashMap<String, Vec<usize>> = FxHashMap::default();
    for (i, s) in from.sections.iter().enumerate() {
        by_name.entry(norm_name(&s.name)).or_default().push(i);
    }
    // Pass 1: same role (not Other), same part (history / turn prefix); in order, each once.
    let mut by_role: FxHashMap<(SectionRole, bool), (Vec<usize>, usize)> = FxHashMap::default();
    for (i, f) in from.sections.iter().enumerate() {
        if f.role != SectionRole::Other {
            by_role.entry((f.role, f.turn_prefix)).or_default().0.push(i);
        }
    }
    for (j, t) in to.sections.iter().enumerate() {
        if t.role == SectionRole::Other {
            continue;
        }
        if let Some((list, next)) = by_role.get_mut(&(t.role, t.turn_prefix)) {
            if let Some(&i) = list.get(*next) {
                *next += 1;
                used[i] = true;
                out[j] = Some(i);
            }
        }
    }
    // Pass 2: same normalized name (a cursor per name: linear).
    let mut cursor: FxHashMap<String, usize> = FxHashMap::default();
    for (j, t) in to.sections.iter().enumerate() {
        if out[j].is_some() {
            continue;
        }
        let name = norm_name(&t.name);
        if let Some(cands) = by_name.get(&name) {
            let c = cursor.entry(name).or_insert(0);
            while *c < cands.len() && used[cands[*c]] {
                *c += 1;
            }
            if let Some(&i) = cands.get(*c) {
                used[i] = true;
                out[j] = Some(i);
            }
        }
    }
    out
}

/// The word-level changes from `a` to `b`.
pub fn word_changes(a: &str, b: &str) -> Vec<WordChange> {
    let d = similar::TextDiff::configure().algorithm(Algorithm::Myers).diff_words(a, b);
    let mut out: Vec<WordChange> = Vec::new();
    for c in d.iter_all_changes() {
        let op = match c.tag() {
            similar::ChangeTag::Equal => WordOp::Equal,
            similar::ChangeTag::Insert => WordOp::Insert,
            similar::ChangeTag::Delete => WordOp::Delete,
        };
        match out.last_mut() {
            Some(last) if last.op == op => last.text.push_str(c.value()),
            _ => out.push(WordChange { op, text: c.value().to_string() }),
        }
    }
    out
}

struct Side<'a> {
    sec: usize,
    text: &'a str,
    key: String,
    done: bool,
}

/// The section-aware diff from `from` (older) to `to` (newer).
pub fn diff(from: &Summary, to: &Summary) -> SummaryDiff {
    let pairs = match_sections(from, to);
    // One SectionDiff per `to` section, then per unmatched `from` section.
    let mut out: Vec<SectionDiff> = Vec::new();
    // Index of the SectionDiff for each from/to section.
    let mut from_slot = vec![usize::MAX; from.sections.len()];
    let mut to_slot = vec![usize::MAX; to.sections.len()];
    for (j, t) in to.sections.iter().enumerate() {
        to_slot[j] = out.len();
        if let Some(i) = pairs[j] {
            from_slot[i] = out.len();
        }
        out.push(SectionDiff {
            title: t.name.clone(),
            added: Vec::new(),
            removed: Vec::new(),
            unchanged: Vec::new(),
            reworded: Vec::new(),
            text_changed: pairs[j]
                .map(|i| words::key(&from.sections[i].text) != words::key(&t.text))
                .unwrap_or(!t.text.trim().is_empty()),
            from_title: pairs[j].map(|i| from.sections[i].name.clone()),
        });
    }
    for (i, f) in from.sections.iter().enumerate() {
        if from_slot[i] == usize::MAX {
            from_slot[i] = out.len();
            out.push(SectionDiff {
                title: f.name.clone(),
                added: Vec::new(),
                removed: Vec::new(),
                unchanged: Vec::new(),
                reworded: Vec::new(),
                text_changed: !f.text.trim().is_empty(),
                from_title: Some(f.name.clone()),
            });
        }
    }

    // Removed and added candidates, with the slot they belong to.
    let mut removed: Vec<Side> = Vec::new();
    let mut added: Vec<Side> = Vec::new();
    let mut paired_from = vec![false; from.sections.len()];
    for (j, t) in to.sections.iter().enumerate() {
        let slot = to_slot[j];
        let tu = units(t);
        let tk: Vec<String> = tu.iter().map(|u| words::key(u)).collect();
        match pairs[j] {
            None => {
                for (u, k) in tu.into_iter().zip(tk) {
                    added.push(Side { sec: slot, text: u, key: k, done: false });
                }
            }
            Some(i) => {
                paired_from[i] = true;
                let fu = units(&from.sections[i]);
                let fk: Vec<String> = fu.iter().map(|u| words::key(u)).collect();
                let mut rem: Vec<Side> = Vec::new();
                let mut add: Vec<Side> = Vec::new();
                for op in similar::capture_diff_slices(Algorithm::Myers, &fk, &tk) {
                    match op {
                        DiffOp::Equal { new_index, len, .. } => {
                            out[slot].unchanged.extend(tu[new_index..new_index + len].iter().map(|u| u.to_string()));
                        }
                        DiffOp::Delete { old_index, old_len, .. } => {
                            for o in old_index..old_index + old_len {
                                rem.push(Side { sec: slot, text: fu[o], key: fk[o].clone(), done: false });
                            }
                        }
                        DiffOp::Insert { new_index, new_len, .. } => {
                            for n in new_index..new_index + new_len {
                                add.push(Side { sec: slot, text: tu[n], key: tk[n].clone(), done: false });
                            }
                        }
                        DiffOp::Replace { old_index, old_len, new_index, new_len } => {
                            for o in old_index..old_index + old_len {
                                rem.push(Side { sec: slot, text: fu[o], key: fk[o].clone(), done: false });
                            }
                            for n in new_index..new_index + new_len {
                                add.push(Side { sec: slot, text: tu[n], key: tk[n].clone(), done: false });
                            }
                        }
                    }
                }
                // Reordered but equal: unchanged.
                let mut by_key: FxHashMap<&str, Vec<usize>> = FxHashMap::default();
                for (k, a) in add.iter().enumerate() {
                    by_key.entry(a.key.as_str()).or_default().push(k);
                }
                let mut taken = vec![false; add.len()];
                for r in rem.iter_mut() {
                    if let Some(list) = by_key.get_mut(r.key.as_str()) {
                        if let Some(k) = list.pop() {
                            taken[k] = true;
                            r.done = true;
                        }
                    }
                }
                for (k, a) in add.iter().enumerate() {
                    if taken[k] {
                        out[slot].unchanged.push(a.text.to_string());
                    }
                }
                removed.extend(rem.into_iter().filter(|r| !r.done));
                added.extend(add.into_iter().enumerate().filter(|(k, _)| !taken[*k]).map(|(_, a)| a));
            }
        }
    }
    for (i, f) in from.sections.iter().enumerate() {
        if !paired_from[i] {
            for u in units(f) {
                removed.push(Side { sec: from_slot[i], text: u, key: words::key(u), done: false });
            }
        }
    }

    let mut moved: Vec<Moved> = Vec::new();
    // Cross-section exact moves.
    let mut add_by_key: FxHashMap<&str, Vec<usize>> = FxHashMap::default();
    for (k, a) in added.iter().enumerate().rev() {
        add_by_key.entry(a.key.as_str()).or_default().push(k);
    }
    let mut pairs_exact: Vec<(usize, usize)> = Vec::new();
    for (ri, r) in removed.iter().enumerate() {
        // "(none)" leaving one section and appearing in another is not a move.
        if r.key.is_empty() || words::is_placeholder(r.text) {
            continue;
        }
        if let Some(list) = add_by_key.get_mut(r.key.as_str()) {
            if let Some(pos) = list.iter().rposition(|&k| added[k].sec != r.sec) {
                let k = list.remove(pos);
                pairs_exact.push((ri, k));
            }
        }
    }
    for (ri, k) in pairs_exact {
        removed[ri].done = true;
        added[k].done = true;
        moved.push(Moved {
            text: added[k].text.to_string(),
            from: out[removed[ri].sec].title.clone(),
            to: out[added[k].sec].title.clone(),
        });
    }

    // Fuzzy pairs: same section → reworded; other section → moved.
    let rsets: Vec<FxHashSet<String>> =
        removed.iter().map(|r| if r.done { FxHashSet::default() } else { words::word_set(r.text) }).collect();
    let asets: Vec<FxHashSet<String>> =
        added.iter().map(|a| if a.done { FxHashSet::default() } else { words::word_set(a.text) }).collect();
    let live_r = removed.iter().filter(|r| !r.done).count();
    let live_a = added.iter().filter(|a| !a.done).count();
    if live_r.saturating_mul(live_a) <= FUZZY_LIMIT {
        for same_section in [true, false] {
            for ri in 0..removed.len() {
                if removed[ri].done || rsets[ri].is_empty() {
                    continue;
                }
                let mut best: Option<(f64, usize)> = None;
                for (k, a) in added.iter().enumerate() {
                    if a.done
                        || asets[k].is_empty()
                        || (a.sec == removed[ri].sec) != same_section
                        || (!same_section && words::is_placeholder(a.text))
                    {
                        continue;
                    }
                    let d = words::dice(&rsets[ri], &asets[k]);
                    if d >= SIMILAR && best.is_none_or(|(b, _)| d > b) {
                        best = Some((d, k));
                    }
                }
                if let Some((_, k)) = best {
                    removed[ri].done = true;
                    added[k].done = true;
                    if same_section {
                        let (f, t) = (removed[ri].text, added[k].text);
                        out[added[k].sec].reworded.push(Reworded {
                            from: f.to_string(),
                            to: t.to_string(),
                            words: word_changes(f, t),
                        });
                    } else {
                        moved.push(Moved {
                            text: added[k].text.to_string(),
                            from: out[removed[ri].sec].title.clone(),
                            to: out[added[k].sec].title.clone(),
                        });
                    }
                }
            }
        }
    }
    for r in removed.iter().filter(|r| !r.done) {
        out[r.sec].removed.push(r.text.to_string());
    }
    for a in added.iter().filter(|a| !a.done) {
        out[a.sec].added.push(a.text.to_string());
    }

    let files = |s: &Summary| -> Vec<String> {
        let mut seen = FxHashSet::default();
        s.read_files.iter().chain(s.modified_files.iter()).filter(|f| seen.insert(f.as_str())).cloned().collect()
    };
    let (ff, tf) = (files(from), files(to));
    let (fs, ts): (FxHashSet<&str>, FxHashSet<&str>) =
        (ff.iter().map(String::as_str).collect(), tf.iter().map(String::as_str).collect());
    SummaryDiff {
        sections: out,
        moved,
        files_added: tf.iter().filter(|f| !fs.contains(f.as_str())).cloned().collect(),
        files_removed: ff.iter().filter(|f| !ts.contains(f.as_str())).cloned().collect(),
    }
}
