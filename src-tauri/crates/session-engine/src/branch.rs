//! Tree navigation and branch summaries (§13).
//!
//! What a navigation appends has one implementation, used by the conformance report's
//! simulation, the summarizer (and through it the CLI and the app): [`plan_navigation`] →
//! [`BranchPreparation::summary`] (or a hook's [`BranchSummary`]) → [`navigation_entries`].
//!
//! * [`collect_branch_entries`] walks up once from the old leaf, stopping at the first of the
//!   target's ancestors; Pi's common-ancestor walk is used only on files with a `parentId` cycle.
//! * [`prepare_branch_entries`] takes entries newest first under the budget, with Pi's 90 % rule
//!   for summaries; from 4096 entries the summaries' file operations are gathered on a second
//!   thread. File lists sort with `sort_utf16` (as bytes below U+E000).
//! * [`navigation_target`]: a user-message or `custom_message` target moves the leaf to its
//!   parent and returns the text for the editor; `NavigationJob::leaf_after` is the leaf once
//!   the entries are appended.

use crate::compaction::{file_details, serialize_agent_messages, FileOps};
use crate::context::{self, estimate_tokens};
use crate::entries;
use crate::session::{DiagnosticKind, Kind, Session};
use pi_json::Value;

pub const BRANCH_SUMMARY_PREAMBLE: &str =
    "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n";
pub const NO_CONTENT: &str = "No content to summarize";

#[derive(Clone, Debug, PartialEq)]
pub struct BranchCollection {
    pub common_ancestor: Option<usize>,
    /// Entries between the old leaf and the common ancestor, oldest first.
    pub entries: Vec<usize>,
}

/// `collectEntriesForBranchSummary(oldLeaf, target)` (§13.1). Linear in the two paths.
pub fn collect_branch_entries(session: &Session, old_leaf: Option<usize>, target: usize) -> BranchCollection {
    let Some(old) = old_leaf else {
        return BranchCollection { common_ancestor: None, entries: Vec::new() };
    };
    if session.diagnostics().iter().any(|d| d.kind == DiagnosticKind::Cycle) {
        return collect_by_common_ancestor(session, old, target);
    }
    // A tree (no parentId cycle): the common ancestor is the first of the old leaf's ancestors
    // that is also the target's, so one walk up from the old leaf finds it and collects the
    // entries on the way (the old leaf's path is the long one: 77k entries on the bench's
    // oldest branch, walked once instead of twice).
    let mut on_target = vec![0u64; session.len().div_ceil(64)];
    let mut cur = Some(target);
    while let Some(c) = cur {
        if on_target[c / 64] & (1 << (c % 64)) != 0 {
            break;
        }
        on_target[c / 64] |= 1 << (c % 64);
        cur = session.parent_of(c);
    }
    let mut entries = Vec::new();
    let mut cur = Some(old);
    let mut ca = None;
    while let Some(c) = cur {
        if on_target[c / 64] & (1 << (c % 64)) != 0 {
            ca = Some(c);
            break;
        }
        entries.push(c);
        cur = session.parent_of(c);
    }
    entries.reverse();
    BranchCollection { common_ancestor: ca, entries }
}

/// [`collect_branch_entries`] as Pi states it (the common ancestor, then the walk up to it),
/// bounded on files whose parentId links loop.
fn collect_by_common_ancestor(session: &Session, old: usize, target: usize) -> BranchCollection {
    let ca = session.common_ancestor(old, target);
    let mut entries = Vec::new();
    let mut cur = Some(old);
    while let Some(c) = cur {
        if Some(c) == ca || entries.len() > session.len() {
            break;
        }
        entries.push(c);
        cur = session.parent_of(c);
    }
    entries.reverse();
    BranchCollection { common_ancestor: ca, entries }
}

/// The branch mapping of one entry: tool results skipped, compactions as summaries.
pub fn branch_message(session: &Session, idx: usize) -> Option<Value> {
    match session.kind(idx) {
        Kind::Message => {
            // Tool results are skipped: learn the role without parsing their (often large) body.
            if session.role(idx) == Some("toolResult") {
                return None;
            }
            // A big file's entry not parsed yet is parsed for this call and its message moved
            // out (no copy of a DOM the session would keep); a parsed one is copied.
            let m = match session.value_transient(idx) {
                std::borrow::Cow::Borrowed(v) => v.get("message")?.clone(),
                std::borrow::Cow::Owned(Value::Obj(m)) => m.0.into_iter().find(|(k, _)| k == "message")?.1,
                std::borrow::Cow::Owned(_) => return None,
            };
            if m.str_field("role") == Some("toolResult") {
                None
            } else {
                Some(m)
            }
        }
        Kind::CustomMessage => Some(context::custom_message(session, idx)),
        Kind::BranchSummary => Some(context::branch_summary_message(session, idx)),
        Kind::Compaction => Some(context::compaction_summary_message(session, idx)),
        _ => None,
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct BranchPreparation {
    /// Selected messages, oldest first, with their entries.
    pub messages: Vec<(usize, Value)>,
    pub total_tokens: f64,
    pub file_ops: FileOps,
    pub read_files: Vec<String>,
    pub modified_files: Vec<String>,
}

impl BranchPreparation {
    pub fn agent_messages(&self) -> Vec<Value> {
        self.messages.iter().map(|(_, m)| m.clone()).collect()
    }
    pub fn serialized(&self) -> String {
        serialize_agent_messages(self.messages.iter().map(|(_, m)| m))
    }
    pub fn appendix(&self) -> String {
        crate::compaction::file_ops_appendix(&self.read_files, &self.modified_files)
    }
    /// Whether the summary needs a model call: with no message selected Pi writes
    /// "No content to summarize" without one.
    pub fn needs_call(&self) -> bool {
        !self.messages.is_empty()
    }
    /// The summary Pi writes: preamble + the model's text + the file appendix with
    /// `{readFiles, modifiedFiles}`, or (`None`, no call made) "No content to summarize" with
    /// empty file lists (§13.5 step 2).
    pub fn summary(&self, llm_text: Option<&str>) -> BranchSummary {
        match llm_text {
            Some(t) => BranchSummary {
                summary: branch_summary_text(self, t),
                details: Some(file_details(&self.read_files, &self.modified_files)),
                from_hook: false,
            },
            None => BranchSummary {
                summary: NO_CONTENT.to_string(),
                details: Some(file_details(&[], &[])),
                from_hook: false,
            },
        }
    }
}

/// What a `branch_summary` entry says: from the model's answer or from a hook.
#[derive(Clone, Debug, PartialEq)]
pub struct BranchSummary {
    pub summary: String,
    pub details: Option<Value>,
    pub from_hook: bool,
}

/// `prepareBranchEntries(entries, budget)` (§13.2); budget 0 = unlimited.
pub fn prepare_branch_entries(session: &Session, entries: &[usize], budget: f64) -> BranchPreparation {
    prepare_branch_entries_with(session, entries, budget, PARALLEL_MIN_ENTRIES)
}

/// From this many entries on, the file operations of the branch's summaries are gathered on a
/// second thread while this one picks the messages (the summaries of a long branch are parsed
/// for it: 162 of them on the 100k-entry bench session's oldest branch).
const PARALLEL_MIN_ENTRIES: usize = 4096;

/// Pi's first pass: the file operations of every Pi-written branch summary among `entries`, even
/// those the budget leaves out.
fn summaries_file_ops(session: &Session, entries: &[usize]) -> FileOps {
    let mut ops = FileOps::default();
    for &e in entries {
        if session.kind(e) == Kind::BranchSummary {
            let v = session.value(e);
            if !v.get("fromHook").is_some_and(Value::truthy) {
                if let Some(d) = v.get("details").filter(|d| d.truthy()) {
                    ops.add_details(d);
                }
            }
        }
    }
    ops
}

/// Entries (newest first) a thread parses at a time for the picking (see
/// [`prepare_branch_entries_with`]).
const PICK_CHUNK: usize = 32;

/// A run of [`PICK_CHUNK`] entries of the picking, parsed by whichever thread claims it.
#[derive(Default)]
struct PickChunk {
    /// 0 unclaimed, 1 claimed, 2 parsed (in `messages`).
    state: std::sync::atomic::AtomicU8,
    /// The message entries' [`branch_message`]s, by position in the run (None for the others).
    messages: std::sync::Mutex<Vec<Option<Value>>>,
}

/// The runs of a branch's entries, newest first, which the picking reads in order while a second
/// thread parses ahead: the picking's parses (most of its time on a long branch) are shared by
/// the two threads.
struct PickChunks<'a> {
    s: &'a Session,
    entries: &'a [usize],
    chunks: Vec<PickChunk>,
    /// Set when the picking is done: the helper stops parsing.
    stop: std::sync::atomic::AtomicBool,
}

impl<'a> PickChunks<'a> {
    fn new(session: &'a Session, entries: &'a [usize]) -> Self {
        let n = entries.len().div_ceil(PICK_CHUNK);
        PickChunks {
            s: session,
            entries,
            chunks: (0..n).map(|_| PickChunk::default()).collect(),
            stop: Default::default(),
        }
    }
    /// The entry at newest-first position `p`.
    fn entry(&self, p: usize) -> usize {
        self.entries[self.entries.len() - 1 - p]
    }
    fn claim(&self, c: usize) -> bool {
        use std::sync::atomic::Ordering;
        self.chunks[c].state.compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire).is_ok()
    }
    /// Parses run `c` (claimed); None when the picking stopped meanwhile.
    fn parse(&self, c: usize) -> Option<Vec<Option<Value>>> {
        let end = ((c + 1) * PICK_CHUNK).min(self.entries.len());
        let mut out = Vec::with_capacity(PICK_CHUNK);
        for p in c * PICK_CHUNK..end {
            if self.stop.load(std::sync::atomic::Ordering::Relaxed) {
                return None;
            }
            let e = self.entry(p);
            out.push(if self.s.kind(e) == Kind::Message { branch_message(self.s, e) } else { None });
        }
        Some(out)
    }
    fn store(&self, c: usize, messages: Vec<Option<Value>>) {
        *self.chunks[c].messages.lock().unwrap_or_else(|e| e.into_inner()) = messages;
        self.chunks[c].state.store(2, std::sync::atomic::Ordering::Release);
    }
    /// The helper: parses the first unclaimed runs until the picking stops.
    fn help(&self) {
        for c in 0..self.chunks.len() {
            if self.stop.load(std::sync::atomic::Ordering::Relaxed) {
                return;
            }
            if self.claim(c) {
                match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.parse(c))) {
                    Ok(Some(m)) => self.store(c, m),
                    Ok(None) => return,
                    // Given back: the picking parses it itself (and meets the panic there).
                    Err(_) => {
                        self.chunks[c].state.store(0, std::sync::atomic::Ordering::Release);
                        return;
                    }
                }
            }
        }
    }
    /// Run `c`'s messages for the picking: parsed here when unclaimed; when the helper is on it,
    /// this thread parses a later run meanwhile.
    fn take(&self, c: usize) -> Vec<Option<Value>> {
        use std::sync::atomic::Ordering;
        let mut ahead = c + 1;
        loop {
            if self.claim(c) {
                return self.parse(c).unwrap_or_default();
            }
            if self.chunks[c].state.load(Ordering::Acquire) == 2 {
                break;
            }
            if ahead < self.chunks.len().min(c + 4) {
                if self.claim(ahead) {
                    let m = self.parse(ahead).unwrap_or_default();
                    self.store(ahead, m);
                }
                ahead += 1;
            } else {
                std::thread::yield_now();
            }
        }
        std::mem::take(&mut *self.chunks[c].messages.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// [`prepare_branch_entries`], on two threads from `parallel_min` entries on: the first pass on
/// the helper while this thread starts the picking, then the helper parses the picking's entries
/// ahead of it. What is picked and the file operations are the same either way: the tool calls'
/// operations are added after the summaries', in the order Pi adds them.
pub(crate) fn prepare_branch_entries_with(
    session: &Session,
    entries: &[usize],
    budget: f64,
    parallel_min: usize,
) -> BranchPreparation {
    // Newest first, until the budget is spent; `message(p)` gives the message at newest-first
    // position p.
    let pick = |ops: &mut FileOps, message: &mut dyn FnMut(usize) -> Option<Value>| {
        let mut picked: Vec<(usize, Value)> = Vec::new();
        let mut total = 0.0;
        for p in 0..entries.len() {
            let e = entries[entries.len() - 1 - p];
            let Some(m) = message(p) else { continue };
            ops.add_tool_calls(&m);
            let t = estimate_tokens(&m);
            if budget > 0.0 && total + t > budget {
                if matches!(session.kind(e), Kind::Compaction | Kind::BranchSummary) && total < budget * 0.9 {
                    picked.push((e, m));
                    total += t;
                }
                break;
            }
            picked.push((e, m));
            total += t;
        }
        (picked, total)
    };
    let (ops, mut picked, total) = if entries.len() >= parallel_min {
        // Whichever thread claims the first pass does it: on a busy machine, where the helper may
        // not run before the picking is done, this thread does it itself instead of waiting.
        let claimed = std::sync::atomic::AtomicBool::new(false);
        let claim = || !claimed.swap(true, std::sync::atomic::Ordering::AcqRel);
        let chunks = PickChunks::new(session, entries);
        std::thread::scope(|sc| {
            let first = sc.spawn(|| {
                let ops = claim().then(|| summaries_file_ops(session, entries));
                chunks.help();
                ops
            });
            let mut tool_ops = FileOps::default();
            let mut run: Vec<Option<Value>> = Vec::new();
            let mut message = |p: usize| {
                if p.is_multiple_of(PICK_CHUNK) {
                    run = chunks.take(p / PICK_CHUNK);
                    run.reverse();
                }
                let pre = run.pop().flatten();
                let e = chunks.entry(p);
                if session.kind(e) == Kind::Message {
                    pre
                } else {
                    branch_message(session, e)
                }
            };
            let (picked, total) = pick(&mut tool_ops, &mut message);
            chunks.stop.store(true, std::sync::atomic::Ordering::Relaxed);
            let mut ops = match claim() {
                true => summaries_file_ops(session, entries),
                false => first.join().unwrap_or_else(|e| std::panic::resume_unwind(e)).unwrap_or_default(),
            };
            ops.merge(&tool_ops);
            (ops, picked, total)
        })
    } else {
        let mut ops = summaries_file_ops(session, entries);
        let (picked, total) = pick(&mut ops, &mut |p| branch_message(session, entries[entries.len() - 1 - p]));
        (ops, picked, total)
    };
    picked.reverse();
    let (read_files, modified_files) = ops.file_lists();
    BranchPreparation { messages: picked, total_tokens: total, file_ops: ops, read_files, modified_files }
}

/// `(contextWindow || 128000) - branchSummary.reserveTokens`.
pub fn branch_budget(context_window: f64, reserve: f64) -> f64 {
    let w = if context_window == 0.0 || context_window.is_nan() { 128000.0 } else { context_window };
    w - reserve
}

/// The summary text Pi writes for a branch: preamble, the model's text, the file appendix.
pub fn branch_summary_text(prep: &BranchPreparation, llm_text: &str) -> String {
    format!("{BRANCH_SUMMARY_PREAMBLE}{llm_text}{}", prep.appendix())
}

/// Where the leaf goes when navigating to `target` (§13.5 step 3).
#[derive(Clone, Debug, PartialEq)]
pub struct NavigationTarget {
    /// The new leaf (None = before the first entry).
    pub new_leaf: Option<usize>,
    /// The new leaf's id as Pi records it (the target's `parentId`, possibly dangling).
    pub new_leaf_id: Option<String>,
    /// Text for the composer when the target is a user message or custom message.
    pub editor_text: Option<String>,
}

pub fn navigation_target(session: &Session, target: usize) -> NavigationTarget {
    let v = session.value(target);
    let to_parent = match session.kind(target) {
        Kind::Message => session.role(target) == Some("user"),
        Kind::CustomMessage => true,
        _ => false,
    };
    if to_parent {
        let text = match session.kind(target) {
            Kind::Message => {
                context::user_text(v.get("message").and_then(|m| m.get("content")).unwrap_or(&Value::Null))
            }
            _ => context::user_text(v.get("content").unwrap_or(&Value::Null)),
        };
        let pid = session.entry(target).parent_id.as_deref().map(str::to_string);
        NavigationTarget {
            new_leaf: session.parent_of(target),
            new_leaf_id: pid.filter(|p| !p.is_empty()),
            editor_text: Some(text),
        }
    } else {
        NavigationTarget {
            new_leaf: Some(target),
            new_leaf_id: Some(session.id(target).to_string()),
            editor_text: None,
        }
    }
}

/// Everything a navigation needs, detached from the session (owned, so it can cross awaits).
#[derive(Clone, Debug, PartialEq)]
pub struct NavigationJob {
    pub old_leaf_id: Option<String>,
    pub target_id: String,
    /// Nothing to do: the target is the current leaf.
    pub no_op: bool,
    /// Where the leaf goes (Pi: the parent of a user/custom-message target).
    pub new_leaf_id: Option<String>,
    pub editor_text: Option<String>,
    /// Entries on the branch being left (empty: nothing to summarize).
    pub branch_entry_ids: Vec<String>,
    /// The selected messages under the budget (only when a summary is asked for and the
    /// branch left is not empty).
    pub prep: Option<BranchPreparation>,
}

/// Plans Pi's `navigateTree` from `old_leaf` to `target` (§13.5 steps 1-3). `budget` limits the
/// selected branch messages (0 = unlimited).
pub fn plan_navigation(
    session: &Session,
    old_leaf: Option<usize>,
    target: usize,
    summarize: bool,
    budget: f64,
) -> NavigationJob {
    let nav = navigation_target(session, target);
    let mut job = NavigationJob {
        old_leaf_id: old_leaf.map(|o| session.id(o).to_string()),
        target_id: session.id(target).to_string(),
        no_op: old_leaf == Some(target),
        new_leaf_id: nav.new_leaf_id,
        editor_text: nav.editor_text,
        branch_entry_ids: Vec::new(),
        prep: None,
    };
    if job.no_op {
        return job;
    }
    let coll = collect_branch_entries(session, old_leaf, target);
    job.branch_entry_ids = coll.entries.iter().map(|&i| session.id(i).to_string()).collect();
    if summarize && !coll.entries.is_empty() {
        job.prep = Some(prepare_branch_entries(session, &coll.entries, budget));
    }
    job
}

impl NavigationJob {
    /// The leaf after appending `appended` (the last appended entry, else the new leaf; the
    /// old leaf for a no-op).
    pub fn leaf_after(&self, appended: &[Value]) -> Option<String> {
        if self.no_op {
            return self.old_leaf_id.clone();
        }
        appended.last().and_then(|e| e.str_field("id")).map(str::to_string).or_else(|| self.new_leaf_id.clone())
    }
}

/// The lines a navigation appends, in order (§13.5 steps 4-5): the `branch_summary` when there is
/// a non-empty summary, then a `label` of it; without one, a `label` of the target as a child of
/// the new leaf. An empty label is no label. `new_id` draws fresh ids. Without a summary or a
/// label nothing is appended: the leaf move is in memory only, as in Pi.
pub fn navigation_entries(
    job: &NavigationJob,
    summary: Option<&BranchSummary>,
    label: Option<&str>,
    timestamp: &str,
    mut new_id: impl FnMut() -> String,
) -> Vec<Value> {
    if job.no_op {
        return Vec::new();
    }
    let label = label.filter(|l| !l.is_empty());
    let mut out = Vec::new();
    match summary.filter(|b| !b.summary.is_empty()) {
        Some(b) => {
            let id = new_id();
            out.push(entries::branch_summary(
                &id,
                job.new_leaf_id.as_deref(),
                timestamp,
                &b.summary,
                b.details.clone(),
                b.from_hook,
            ));
            if let Some(l) = label {
                out.push(entries::label(&new_id(), Some(&id), timestamp, &id, Some(l)));
            }
        }
        None => {
            if let Some(l) = label {
                out.push(entries::label(&new_id(), job.new_leaf_id.as_deref(), timestamp, &job.target_id, Some(l)));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one-walk collection equals Pi's (common ancestor, then the walk up to it) for every
    /// pair of entries of random forests: the target an ancestor, a descendant, the leaf itself,
    /// on another root, under an orphan.
    #[test]
    fn the_one_walk_collection_equals_the_common_ancestor_walk() {
        let mut next = crate::testing::xorshift_usize(0x1234_5678_9abc_def1);
        let mut pairs = 0;
        for _ in 0..60 {
            let n = 1 + next() % 40;
            let mut text = String::from(r#"{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/p"}"#);
            text.push('\n');
            for k in 0..n {
                let parent = match next() % 10 {
                    0 => "null".to_string(),
                    1 => "\"missing\"".to_string(),
                    _ if k > 0 => format!("\"e{}\"", next() % k),
                    _ => "null".to_string(),
                };
                text.push_str(&format!(r#"{{"type":"custom","id":"e{k}","parentId":{parent},"timestamp":"t"}}"#));
                text.push('\n');
            }
            let session = Session::from_bytes(text.into_bytes());
            assert!(!session.diagnostics().iter().any(|d| d.kind == DiagnosticKind::Cycle));
            for old in 0..session.len() {
                for target in 0..session.len() {
                    assert_eq!(
                        collect_branch_entries(&session, Some(old), target),
                        collect_by_common_ancestor(&session, old, target),
                        "{old} -> {target}"
                    );
                    pairs += 1;
                }
            }
        }
        assert!(pairs > 5000, "{pairs}");
    }

    /// The preparation on two threads (the summaries' pass, then the picking's parses shared)
    /// equals the one-thread preparation (messages, totals, file operations in order, file
    /// lists), for budgets that stop the picking in every run of entries and none, on a branch
    /// of summaries (Pi's and a hook's), compactions, tool calls and tool results, parsed at
    /// open (a small file) or when read (a big one).
    #[test]
    fn the_two_thread_preparation_equals_the_one_thread_one() {
        let mut text = String::from(
            r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#,
        );
        text.push('\n');
        let mut parent = "null".to_string();
        for k in 0..300 {
            let id = format!("e{k:05}");
            let body = match k % 6 {
                0 => format!(r#""type":"message","message":{{"role":"user","content":"ask {k}"}}"#),
                1 => format!(
                    r#""type":"message","message":{{"role":"assistant","content":[{{"type":"toolCall","id":"c","name":"{}","arguments":{{"path":"f{}.rs"}}}}]}}"#,
                    ["read", "write", "edit"][(k / 6) % 3],
                    k % 17
                ),
                2 => r#""type":"message","message":{"role":"toolResult","toolCallId":"c","content":[]}"#.to_string(),
                3 => format!(
                    r#""type":"branch_summary","fromId":"x","summary":"b{k}","details":{{"readFiles":["f{}.rs","r{k}.rs"],"modifiedFiles":["f{}.rs"]}}"#,
                    k % 11,
                    k % 5
                ),
                4 => format!(
                    r#""type":"branch_summary","fromId":"x","summary":"h{k}","fromHook":true,"details":{{"readFiles":["hook{k}.rs"]}}"#
                ),
                _ => format!(r#""type":"compaction","summary":"c{k}","firstKeptEntryId":"e00000","tokensBefore":1"#),
            };
            text.push_str(&format!(
                r#"{{"id":"{id}","parentId":{parent},"timestamp":"2025-01-01T00:00:01.000Z",{body}}}"#
            ));
            text.push('\n');
            parent = format!("\"{id}\"");
        }
        // A big file: a padding root past the eager-parse limit, so the branch parses lazily.
        let pad = format!(
            r#"{{"type":"custom","id":"pad","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","data":"{}"}}"#,
            "x".repeat(crate::session::EAGER_PARSE_MAX_BYTES)
        );
        let big = format!("{text}{pad}\n");
        for (text, lazy) in [(text, false), (big, true)] {
            let session = Session::from_bytes(text.into_bytes());
            let all = session.path(session.index_of("e00299"));
            assert_eq!(all.len(), 300);
            let mut lengths = std::collections::BTreeSet::new();
            for budget in (0..120).map(|k| f64::from(k) * 15.0) {
                let one = prepare_branch_entries_with(&session, &all, budget, usize::MAX);
                let two = prepare_branch_entries_with(&session, &all, budget, 0);
                assert_eq!(one, two, "budget {budget}");
                assert_eq!(
                    (&one.file_ops.read, &one.file_ops.written, &one.file_ops.edited),
                    (&two.file_ops.read, &two.file_ops.written, &two.file_ops.edited)
                );
                assert!(!one.read_files.is_empty() && !one.modified_files.is_empty());
                lengths.insert(one.messages.len());
            }
            // Stops all along the branch, in runs of PICK_CHUNK entries and across them.
            let runs: std::collections::BTreeSet<usize> = lengths.iter().map(|n| n / PICK_CHUNK).collect();
            assert!(lengths.len() >= 30 && runs.len() >= 7, "{lengths:?}");
            // Read lazily, the message entries stay unparsed (the picking's parses are dropped).
            assert_eq!(lazy, matches!(session.value_transient(all[0]), std::borrow::Cow::Owned(_)));
        }
    }
}
