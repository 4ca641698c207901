//! File-level operations for the app and the CLI: open, plan, summarize, append. One call each,
//! so an app command stays a one-screen adapter.
//!
//! Order of events, and why: the sidecar lock is taken first (two Arbor windows never write the
//! same session); the summary is produced; then the file length is compared with the one that
//! was planned on, because Pi may have appended meanwhile and the planned parent would no
//! longer be the leaf; only then is the entry appended (one line, `sync_data` for summaries).
//!
//! Each operation opens the file once; what it appends is read back into the open session with
//! `Session::extend_from_file` (time proportional to the new bytes), never by opening it again.
use crate::chat;
use crate::error::{Error, Result};
use crate::provider::{Client, CompletionRequest, ProgressFn, Usage};
use crate::run::{
    compaction_entry, navigation_entries, plan_compaction, plan_navigation, summarize_branch, summarize_compaction, Backend, BranchOutcome, CompactionOutcome,
    RunOptions,
};
use session_engine::context::{self, AutoCompaction, CompactionSettings, CurrentModel};
use session_engine::json::{obj, Value};
use session_engine::session::Extend;
use session_engine::store::{append_entry, append_entry_planned, SessionLock};
use session_engine::{entries, ids, time, Session};
use std::path::Path;
use tokio_util::sync::CancellationToken;

fn open(path: &Path) -> Result<Session> {
    Session::open(path).map_err(|e| Error::Session(format!("{}: {e}", path.display())))
}

/// Reads what was just appended into `s`, in time proportional to the new bytes; opens the file
/// again only when it is not a plain extension (then entry indices may change: callers keep ids).
fn read_appended(s: &mut Session, path: &Path) -> Result<()> {
    match s.extend_from_file(path) {
        Ok(Extend::Added(_)) => Ok(()),
        Ok(Extend::Reload) | Err(_) => {
            *s = open(path)?;
            Ok(())
        }
    }
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
    let _lock = lock(path)?;
    let mut s = open(path)?;
    compact_locked(&mut s, path, leaf_id, settings, backend, opts, cancel, progress).await
}

/// `compact_file` on the open session `s` of `path`, for a caller that already holds the
/// session lock. `s` is extended with the appended entry.
#[allow(clippy::too_many_arguments)]
async fn compact_locked(
    s: &mut Session,
    path: &Path,
    leaf_id: Option<&str>,
    settings: &CompactionSettings,
    backend: &Backend,
    opts: &RunOptions,
    cancel: &CancellationToken,
    progress: Option<&ProgressFn>,
) -> Result<CompactDone> {
    // Whatever was appended since `s` was read (by Pi, say) is planned on, as a fresh open would.
    read_appended(s, path)?;
    let job = plan_compaction(s, leaf_id, settings)?;
    let outcome = summarize_compaction(&job, backend, opts, cancel, progress).await?;
    if cancel.is_cancelled() {
        return Err(Error::Cancelled);
    }
    unchanged(s, path)?;
    let id = ids::new_entry_id(|id| s.index_of(id).is_some());
    let entry = compaction_entry(&job, &outcome, &id, &time::now_iso());
    // Checked again on the store's own descriptor right before the write (a Pi append between
    // `unchanged` and here would otherwise leave this entry on a stale leaf).
    let appended = append_entry_planned(path, &entry, true, s.file_len()).map_err(|e| Error::Session(e.to_string()))?;
    read_appended(s, path)?;
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
    // Each line is planned on the file as the line before left it: nothing may land in between.
    let mut planned = s.file_len();
    for (i, entry) in lines.iter().enumerate() {
        // The summary entry is synced (costly to redo); a label after it is cheap.
        let a = append_entry_planned(path, entry, i == 0 && summary.is_some(), planned).map_err(|e| match (&e, written.last()) {
            // The first line is in the file: say so rather than "nothing was written".
            (session_engine::store::StoreError::Changed { .. }, Some((id, _))) => Error::Session(format!(
                "{}: entry {id} was written, but another program appended right after it, so the rest of this navigation (its label) was not; set the label again",
                path.display()
            )),
            _ => Error::Session(e.to_string()),
        })?;
        let line = entries::line(entry);
        planned = a.offset + line.len() as u64 + 1;
        written.push((entry.str_field("id").unwrap_or_default().to_string(), line));
    }
    let new_leaf_id = written.last().map(|(id, _)| id.clone()).or(job.new_leaf_id.clone());
    Ok(NavigateDone { new_leaf_id, editor_text: job.editor_text.clone(), written, summary, no_op: false })
}

// ---- Continuing a session -------------------------------------------------------------------

/// Settings for `continue_session`.
#[derive(Debug, Clone)]
pub struct ContinueOptions {
    /// Pi's compaction settings (`enabled` false: no automatic compaction, also not on overflow).
    pub settings: CompactionSettings,
    /// The model's context window (catalog), for the threshold and overflow checks.
    pub context_window: u64,
    /// Output limit of the reply.
    pub max_tokens: u32,
    /// Options for automatic compactions (custom instructions are not used there).
    pub run: RunOptions,
}

/// Why and where an automatic compaction happened.
#[derive(Debug, Clone)]
pub struct AutoCompacted {
    /// "threshold" or "overflow".
    pub reason: &'static str,
    pub done: CompactDone,
}

#[derive(Debug, Clone)]
pub struct ContinueDone {
    pub user_entry_id: String,
    pub assistant_entry_id: String,
    pub reply: String,
    pub usage: Usage,
    /// Compactions made on the way: before sending (threshold), after an overflow (then the
    /// request was retried once), or after the reply (threshold).
    pub compactions: Vec<AutoCompacted>,
}

fn reason(a: AutoCompaction) -> &'static str {
    match a {
        AutoCompaction::Overflow => "overflow",
        _ => "threshold",
    }
}

fn now_ms() -> f64 {
    time::now_ms() as f64
}

/// Pi's automatic check for the last assistant of the context at `leaf_id`.
fn auto_check(s: &Session, leaf_id: Option<&str>, model: &CurrentModel, settings: &CompactionSettings, skip_aborted: bool) -> Option<AutoCompaction> {
    let leaf = match leaf_id {
        Some(id) => s.index_of(id),
        None => s.file_leaf(),
    };
    let path = s.path(leaf);
    let ctx = context::build_context_on_path(s, &path);
    let msgs = ctx.agent_messages();
    let last = context::last_assistant(&msgs)?;
    context::auto_compaction_check(s, &path, &msgs, last, Some(model), settings, skip_aborted)
}

/// Appends `entry` to `path` and reads it into the open session `s`.
fn append_after(s: &mut Session, path: &Path, entry: &Value, sync: bool) -> Result<()> {
    append_entry(path, entry, sync).map_err(|e| Error::Session(e.to_string()))?;
    read_appended(s, path)
}

/// Sends `text` as a user message at `leaf_id` (None = the file's leaf) with the context built
/// there, and appends the model's reply as an assistant message with usage.
///
/// As in Pi: before sending, the threshold check may compact; an overflow error compacts and
/// retries once (only when `compaction.enabled`; otherwise `OverflowCompactionDisabled`);
/// after the reply, the threshold check may compact again. The user message is appended
/// before the request (as Pi does), the reply only when it is complete.
#[allow(clippy::too_many_arguments)] // the compaction backend may differ from the chat model
pub async fn continue_session(
    path: &Path,
    leaf_id: Option<&str>,
    text: &str,
    client: &Client,
    compaction_backend: &Backend,
    opts: &ContinueOptions,
    cancel: &CancellationToken,
    progress: Option<&ProgressFn>,
) -> Result<ContinueDone> {
    if text.trim().is_empty() {
        return Err(Error::Config("the message is empty".into()));
    }
    let _lock = lock(path)?;
    let cfg = client.config();
    let model = CurrentModel { provider: cfg.wire.name().to_string(), id: cfg.model.clone(), context_window: opts.context_window as f64 };
    let mut compactions = Vec::new();
    // The file is opened once; every append below is read back into `s` (only the new bytes).
    let mut s = open(path)?;
    if let Some(why) = s.read_only_reason() {
        return Err(Error::Session(format!("this session is read-only, so nothing was written: {why}")));
    }
    let mut leaf: Option<String> = match leaf_id {
        Some(id) => Some(s.index_of(id).map(|_| id.to_string()).ok_or_else(|| Error::Session(format!("no entry with id `{id}`")))?),
        None => s.file_leaf().map(|l| s.id(l).to_string()),
    };

    // (b) Before sending: threshold (or a stale overflow) on the last assistant.
    if let Some(a) = auto_check(&s, leaf.as_deref(), &model, &opts.settings, false) {
        let done = compact_locked(&mut s, path, leaf.as_deref(), &opts.settings, compaction_backend, &opts.run, cancel, progress).await?;
        leaf = Some(done.entry_id.clone());
        compactions.push(AutoCompacted { reason: reason(a), done });
    }

    // The user message.
    let user_id = ids::new_entry_id(|id| s.index_of(id).is_some());
    let user_msg = obj([
        ("role", "user".into()),
        ("content", Value::Arr(vec![obj([("type", "text".into()), ("text", text.into())])])),
        ("timestamp", Value::Num(now_ms())),
    ]);
    append_after(&mut s, path, &entries::message(&user_id, leaf.as_deref(), &time::now_iso(), user_msg), false)?;

    let mut at = user_id.clone();
    let mut retried = false;
    let completion = loop {
        let path_idx = s.path(s.index_of(&at));
        let msgs = context::to_llm(&context::build_context_on_path(&s, &path_idx).agent_messages());
        let req = CompletionRequest { system: chat::SYSTEM.into(), prompt: String::new(), max_tokens: opts.max_tokens, turns: chat::to_turns(&msgs) };
        match client.complete(&req, cancel, progress).await {
            Ok(c) => break c,
            Err(Error::Overflow { message }) => {
                if !opts.settings.enabled {
                    return Err(Error::OverflowCompactionDisabled { message });
                }
                if retried {
                    return Err(Error::Overflow { message: format!("{message} (still too large after one automatic compaction)") });
                }
                retried = true;
                let done = compact_locked(&mut s, path, Some(&at), &opts.settings, compaction_backend, &opts.run, cancel, progress).await?;
                at = done.entry_id.clone();
                compactions.push(AutoCompacted { reason: "overflow", done });
            }
            Err(e) => return Err(e),
        }
    };

    // The reply.
    let assistant_id = ids::new_entry_id(|id| s.index_of(id).is_some());
    let u = &completion.usage;
    let total = u.input + u.output + u.cache_read + u.cache_write;
    let zero = || Value::Num(0.0);
    let assistant = obj([
        ("role", "assistant".into()),
        ("content", Value::Arr(vec![obj([("type", "text".into()), ("text", completion.text.as_str().into())])])),
        ("api", cfg.wire.pi_api().into()),
        ("provider", cfg.wire.name().into()),
        ("model", cfg.model.as_str().into()),
        (
            "usage",
            obj([
                ("input", Value::Num(u.input as f64)),
                ("output", Value::Num(u.output as f64)),
                ("cacheRead", Value::Num(u.cache_read as f64)),
                ("cacheWrite", Value::Num(u.cache_write as f64)),
                ("totalTokens", Value::Num(total as f64)),
                ("cost", obj([("input", zero()), ("output", zero()), ("cacheRead", zero()), ("cacheWrite", zero()), ("total", zero())])),
            ]),
        ),
        ("stopReason", "stop".into()),
        ("timestamp", Value::Num(now_ms())),
    ]);
    append_after(&mut s, path, &entries::message(&assistant_id, Some(&at), &time::now_iso(), assistant), false)?;

    // (a) After the run: threshold on the reply's own usage (no retry).
    if !retried {
        if let Some(AutoCompaction::Threshold) = auto_check(&s, Some(&assistant_id), &model, &opts.settings, true) {
            let done = compact_locked(&mut s, path, Some(&assistant_id), &opts.settings, compaction_backend, &opts.run, cancel, progress).await?;
            compactions.push(AutoCompacted { reason: "threshold", done });
        }
    }
    Ok(ContinueDone { user_entry_id: user_id, assistant_entry_id: assistant_id, reply: completion.text, usage: completion.usage, compactions })
}
