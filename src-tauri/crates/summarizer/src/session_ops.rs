//! File-level operations for the app and the CLI: open, plan, summarize, append. One call each,
//! so an app command stays a one-screen adapter.
//!
//! Order of events, and why: the sidecar lock is taken first (two Arbor windows never write the
//! same session); the summary is produced; then the file length is compared with the one that
//! was planned on, because Pi may have appended meanwhile and the planned parent would no
//! longer be the leaf; only then is the entry appended (one line, `sync_data` for summaries).
use crate::error::{Error, Result};
use crate::provider::ProgressFn;
use crate::run::{
    compaction_entry, navigation_entries, plan_compaction, plan_navigation, summarize_branch, summarize_compaction, Backend, BranchOutcome,
    CompactionOutcome, RunOptions,
};
use session_engine::context::CompactionSettings;
use session_engine::store::{append_entry, SessionLock};
use session_engine::{entries, ids, time, Session};
use std::path::Path;
use tokio_util::sync::CancellationToken;

fn open(path: &Path) -> Result<Session> {
    Session::open(path).map_err(|e| Error::Session(format!("{}: {e}", path.display())))
}

fn lock(path: &Path) -> Result<SessionLock> {
    SessionLock::try_acquire(path).map_err(|e| Error::Session(e.to_string()))
}

fn unchanged(s: &Session, path: &Path) -> Result<()> {
    let len = std::fs::metadata(path).map_err(|e| Error::Session(format!("{}: {e}", path.display())))?.len();
    if len != s.file_len() {
        return Err(Error::Session(format!(
            "{} changed while the summary was being written (another program appended to it); nothing was written. Run it again.",
            path.display()
        )));
    }
    Ok(())
}

/// A compaction that was appended.
#[derive(Debug, Clone)]
pub struct CompactDone {
    pub entry_id: String,
    /// The JSONL line as written (without `\n`).
    pub line: String,
    pub outcome: CompactionOutcome,
    /// Whether `sync_data` succeeded (durable across power loss).
    pub synced: bool,
}

/// Compacts the session at `path` at `leaf_id` (None = the file's leaf) and appends the entry.
pub async fn compact_file(
    path: &Path,
    leaf_id: Option<&str>,
    settings: &CompactionSettings,
    backend: &Backend,
    opts: &RunOptions,
    cancel: &CancellationToken,
    progress: Option<&ProgressFn>,
) -> Result<CompactDone> {
    let s = open(path)?;
    let job = plan_compaction(&s, leaf_id, settings)?;
    let _lock = lock(path)?;
    let outcome = summarize_compaction(&job, backend, opts, cancel, progress).await?;
    if cancel.is_cancelled() {
        return Err(Error::Cancelled);
    }
    unchanged(&s, path)?;
    let id = ids::new_entry_id(|id| s.index_of(id).is_some());
    let entry = compaction_entry(&job, &outcome, &id, &time::now_iso());
    let appended = append_entry(path, &entry, true).map_err(|e| Error::Session(e.to_string()))?;
    Ok(CompactDone { entry_id: id, line: entries::line(&entry), outcome, synced: appended.synced })
}

/// A navigation, with what was appended (possibly nothing: a leaf move alone is in memory).
#[derive(Debug, Clone)]
pub struct NavigateDone {
    /// The leaf after the move: the summary or label entry if one was written, else the target
    /// (or its parent for a user/custom message; None = before the first entry).
    pub new_leaf_id: Option<String>,
    /// The target's text for the composer (user or custom-message targets).
    pub editor_text: Option<String>,
    /// (id, line) of each appended entry, in order.
    pub written: Vec<(String, String)>,
    pub summary: Option<BranchOutcome>,
    /// True when the target already was the leaf.
    pub no_op: bool,
}

/// Navigates from `old_leaf_id` (None = the file's leaf) to `target_id`, summarizing the branch
/// left when `summarize`. `budget` limits the branch messages (0 = unlimited). If summarizing
/// fails, nothing is written and the navigation does not happen.
#[allow(clippy::too_many_arguments)] // mirrors Pi's navigateTree options; a struct would only rename them
pub async fn navigate_file(
    path: &Path,
    old_leaf_id: Option<&str>,
    target_id: &str,
    summarize: bool,
    budget: f64,
    label: Option<&str>,
    backend: &Backend,
    opts: &RunOptions,
    cancel: &CancellationToken,
    progress: Option<&ProgressFn>,
) -> Result<NavigateDone> {
    let s = open(path)?;
    let job = plan_navigation(&s, old_leaf_id, target_id, summarize, budget)?;
    if job.no_op {
        return Ok(NavigateDone { new_leaf_id: job.old_leaf_id.clone(), editor_text: None, written: Vec::new(), summary: None, no_op: true });
    }
    let writes = job.prep.is_some() || label.is_some();
    if writes {
        if let Some(why) = s.read_only_reason() {
            return Err(Error::Session(format!("this session is read-only, so nothing was written: {why}")));
        }
    }
    let _lock = if writes { Some(lock(path)?) } else { None };
    let summary = summarize_branch(&job, backend, opts, label, cancel, progress).await?;
    if cancel.is_cancelled() {
        return Err(Error::Cancelled);
    }
    let mut taken: Vec<String> = Vec::new();
    let lines = navigation_entries(&job, summary.as_ref(), label, &time::now_iso(), || {
        let id = ids::new_entry_id(|id| s.index_of(id).is_some() || taken.iter().any(|t| t == id));
        taken.push(id.clone());
        id
    });
    if !lines.is_empty() {
        unchanged(&s, path)?;
    }
    let mut written = Vec::new();
    for (i, entry) in lines.iter().enumerate() {
        // The summary entry is synced (costly to redo); a label after it is cheap.
        append_entry(path, entry, i == 0 && summary.is_some()).map_err(|e| Error::Session(e.to_string()))?;
        written.push((entry.str_field("id").unwrap_or_default().to_string(), entries::line(entry)));
    }
    let new_leaf_id = written.last().map(|(id, _)| id.clone()).or(job.new_leaf_id.clone());
    Ok(NavigateDone { new_leaf_id, editor_text: job.editor_text.clone(), written, summary, no_op: false })
}
