//! Where a compaction may cut. Pi does not check the `firstKeptEntryId` an extension returns,
//! so Arbor does: a cut chosen by a person (the review's "move the cut", `arbor-cli compact
//! --keep-from`) must be an entry of the path being compacted that Pi itself could keep from.
//!
//! A valid cut point is an entry of the path (root to leaf) that
//! - is one of Pi's cut-point kinds (`findValidCutPoints`: a user, assistant, bashExecution,
//!   custom, branchSummary or compactionSummary message, a `branch_summary` or a
//!   `custom_message`; never a tool result, which must stay with its tool call),
//! - is not before the span Pi would summarize (the previous compaction's first kept entry, or the
//!   entry after that compaction when its kept entry is not on the path), and
//! - has at least one message before it in that span, so there is something to summarize.
use session_engine::compaction::{find_turn_start, prepare_compaction, Refusal};
use session_engine::{CompactionSettings, Kind, Session};
use std::fmt;

/// Pi's cut-point kinds (`findValidCutPoints` in Pi's compaction.ts; the engine's
/// `is_valid_cut_point`, which is private).
pub fn is_cut_point_kind(session: &Session, idx: usize) -> bool {
    match session.kind(idx) {
        Kind::Message => matches!(
            session.role(idx),
            Some("bashExecution" | "custom" | "branchSummary" | "compactionSummary" | "user" | "assistant")
        ),
        Kind::BranchSummary | Kind::CustomMessage => true,
        _ => false,
    }
}

/// Whether the entry gives a message to the summary (Pi's `getMessageFromEntryForCompaction`).
fn gives_message(session: &Session, idx: usize) -> bool {
    match session.kind(idx) {
        Kind::Message => session.message(idx).is_some(),
        Kind::BranchSummary | Kind::CustomMessage => true,
        _ => false,
    }
}

/// The span a compaction on `path` may summarize starts at this position (Pi's `boundaryStart`);
/// `Err` when Pi would refuse to compact there at all.
pub fn span_start(session: &Session, path: &[usize]) -> Result<usize, Refusal> {
    prepare_compaction(session, path, &CompactionSettings { keep_recent_tokens: 0.0, ..Default::default() })
        .map(|p| p.boundary_start)
}

/// The valid cut points of `path`, as positions in it (see the module doc).
pub fn valid_cut_positions(session: &Session, path: &[usize]) -> Vec<usize> {
    let Ok(start) = span_start(session, path) else { return Vec::new() };
    let mut out = Vec::new();
    let mut seen_message = false;
    for (p, &idx) in path.iter().enumerate().skip(start) {
        if seen_message && is_cut_point_kind(session, idx) && !session.id(idx).is_empty() {
            out.push(p);
        }
        if gives_message(session, idx) {
            seen_message = true;
        }
    }
    out
}

/// A checked cut: its position in the path and what it does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cut {
    pub position: usize,
    pub first_kept_entry_id: String,
    pub span_start: usize,
    /// Pi keeps part of a turn: the turn's start is summarized separately.
    pub is_split_turn: bool,
    pub turn_start: Option<usize>,
}

/// Why a cut is refused, with the nearest valid cut points (entry ids) to offer instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidCut {
    pub id: String,
    pub reason: String,
    pub nearest: Vec<String>,
}

impl fmt::Display for InvalidCut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot keep from {}: {}", self.id, self.reason)?;
        if self.nearest.is_empty() {
            write!(f, "; this path has no valid cut point")
        } else {
            write!(f, "; nearest valid cut points: {}", self.nearest.join(", "))
        }
    }
}

impl std::error::Error for InvalidCut {}

fn describe(session: &Session, idx: usize) -> String {
    match session.kind(idx) {
        Kind::Message => match session.role(idx) {
            Some("toolResult") => "a tool result (it must stay with its tool call)".to_string(),
            Some(r) => format!("a {r} message, which Pi never cuts at"),
            None => "a message entry without a message".to_string(),
        },
        Kind::ThinkingLevelChange => "a thinking_level_change entry, not a message".to_string(),
        Kind::ModelChange => "a model_change entry, not a message".to_string(),
        Kind::Compaction => "a compaction entry".to_string(),
        Kind::Custom => "a custom (extension state) entry, not a message".to_string(),
        Kind::Label => "a label entry, not a message".to_string(),
        Kind::SessionInfo => "a session_info entry, not a message".to_string(),
        _ => "an entry Pi never cuts at".to_string(),
    }
}

/// Where to look for the nearest valid cut points.
#[derive(Clone, Copy)]
enum Near {
    /// An entry of the path at this position (itself not valid).
    At(usize),
    /// An entry of another branch that leaves the path after this position.
    ForkAt(usize),
    /// Nowhere in particular: the newest ones.
    Newest,
}

/// The valid cut points nearest to `near`: the last one before and the first one after.
fn nearest(session: &Session, path: &[usize], valid: &[usize], near: Near) -> Vec<String> {
    let split = |k: usize| {
        let mut v = Vec::new();
        if k > 0 {
            v.push(valid[k - 1]);
        }
        if let Some(&next) = valid.get(k) {
            v.push(next);
        }
        v
    };
    let picks: Vec<usize> = match near {
        Near::At(p) => split(valid.partition_point(|&v| v < p)),
        Near::ForkAt(f) => split(valid.partition_point(|&v| v <= f)),
        Near::Newest => valid.iter().rev().take(3).rev().copied().collect(),
    };
    picks.into_iter().map(|p| session.id(path[p]).to_string()).collect()
}

/// Checks that the entry `id` is a valid cut point of `path` (the path being compacted, root
/// first, ending at the leaf).
pub fn check_cut(session: &Session, path: &[usize], id: &str) -> Result<Cut, InvalidCut> {
    let valid = valid_cut_positions(session, path);
    let refuse = |reason: String, near: Near| InvalidCut {
        id: id.to_string(),
        reason,
        nearest: nearest(session, path, &valid, near),
    };
    let start = match span_start(session, path) {
        Ok(start) => start,
        Err(r) => return Err(InvalidCut { id: id.to_string(), reason: r.message().to_string(), nearest: Vec::new() }),
    };
    let Some(idx) = session.index_of(id) else {
        return Err(refuse("no entry has this id in the session".to_string(), Near::Newest));
    };
    let Some(position) = path.iter().position(|&i| i == idx) else {
        // Offer the cut points around where its branch leaves the path.
        let own = session.path(Some(idx));
        let near = own.iter().rev().find_map(|i| path.iter().position(|p| p == i)).map_or(Near::Newest, Near::ForkAt);
        return Err(refuse("it is not on the path being compacted (another branch)".to_string(), near));
    };
    if valid.binary_search(&position).is_err() {
        let reason = if !is_cut_point_kind(session, idx) {
            format!("it is {}", describe(session, idx))
        } else if position < start {
            "it is before the previous compaction's first kept entry (already summarized)".to_string()
        } else {
            "nothing before it is left to summarize".to_string()
        };
        return Err(refuse(reason, Near::At(position)));
    }
    let is_user = session.kind(idx) == Kind::Message && session.role(idx) == Some("user");
    let turn_start = if is_user { None } else { find_turn_start(session, path, position, start) };
    Ok(Cut {
        position,
        first_kept_entry_id: id.to_string(),
        span_start: start,
        is_split_turn: !is_user && turn_start.is_some(),
        turn_start,
    })
}

/// Why a cut could not be checked against a session file.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error("{0}")]
    Invalid(#[from] InvalidCut),
    #[error("cannot read the session {path}: {message}")]
    Unreadable { path: String, message: String },
    #[error("the session file has no entry {0} (Pi's leaf); it may not be saved yet")]
    NoLeaf(String),
}

/// [`check_cut`] on the session file Pi is writing, on the path to Pi's leaf.
pub fn check_cut_in_file(file: &std::path::Path, leaf_id: Option<&str>, id: &str) -> Result<Cut, CheckError> {
    let session = Session::open(file)
        .map_err(|e| CheckError::Unreadable { path: file.display().to_string(), message: e.to_string() })?;
    if !session.header_accepted() {
        return Err(CheckError::Unreadable {
            path: file.display().to_string(),
            message: "no valid session header".to_string(),
        });
    }
    let leaf = match leaf_id {
        Some(l) => Some(session.index_of(l).ok_or_else(|| CheckError::NoLeaf(l.to_string()))?),
        None => session.file_leaf(),
    };
    let path = session.path(leaf);
    Ok(check_cut(&session, &path, id)?)
}

/// Why `compact --keep-from` cannot plan.
#[derive(Debug, thiserror::Error)]
pub enum KeepFromError {
    #[error("{0}")]
    Invalid(#[from] InvalidCut),
    /// Pi would not compact at this leaf at all ("Already compacted", "Nothing to compact").
    #[error("{0}")]
    Refused(&'static str),
}

/// A compaction at `leaf` (None = before the first entry) that keeps from the entry `keep_from`
/// instead of where `keepRecentTokens` puts the cut: Pi's `prepareCompaction` with that cut (the
/// same span start, previous summary and `tokensBefore`, Pi's split-turn rule, the messages and
/// file operations of the new span). The entry must be a valid cut point ([`check_cut`]).
pub fn plan_compaction_keep_from(
    session: &Session,
    leaf: Option<usize>,
    settings: &CompactionSettings,
    keep_from: &str,
) -> Result<session_engine::compaction::CompactionJob, KeepFromError> {
    use session_engine::compaction::{plan_compaction, FileOps, PlannedMessage};
    let path = session.path(leaf);
    let mut job = plan_compaction(session, leaf, settings).map_err(|r| KeepFromError::Refused(r.message()))?;
    let cut = check_cut(session, &path, keep_from)?;
    let prep = &mut job.prep;
    let history_end = if cut.is_split_turn { cut.turn_start.unwrap_or(cut.position) } else { cut.position };
    let collect = |from: usize, to: usize| -> Vec<PlannedMessage> {
        (from..to)
            .filter_map(|p| {
                session_engine::compaction::compaction_message(session, path[p])
                    .map(|message| PlannedMessage { entry: path[p], message })
            })
            .collect()
    };
    prep.first_kept_entry_id = cut.first_kept_entry_id.clone();
    prep.first_kept_position = cut.position;
    prep.is_split_turn = cut.is_split_turn;
    prep.turn_start = cut.turn_start;
    prep.messages_to_summarize = collect(prep.boundary_start, history_end);
    prep.turn_prefix_messages =
        if cut.is_split_turn { collect(cut.turn_start.unwrap_or(cut.position), cut.position) } else { Vec::new() };
    let mut ops = FileOps::default();
    if let Some(prev) = prep.previous_compaction {
        let v = session.value(prev);
        if !v.get("fromHook").is_some_and(|h| h.truthy()) {
            if let Some(d) = v.get("details").filter(|d| d.truthy()) {
                ops.add_details(d);
            }
        }
    }
    for m in prep.messages_to_summarize.iter().chain(prep.turn_prefix_messages.iter()) {
        ops.add_tool_calls(&m.message);
    }
    (prep.read_files, prep.modified_files) = ops.file_lists();
    prep.file_ops = ops;
    job.kept_messages =
        path[cut.position..].iter().filter_map(|&i| session_engine::context::context_message(session, i)).collect();
    Ok(job)
}
