//! Session-level operations for the app and the CLI: plan, summarize, append. One call each,
//! so an app command stays a one-screen adapter.
//!
//! Each operation works on a session someone already holds, through a [`SessionHost`]: the app
//! hands over the session it has open (no second read of a file it holds), the CLI and tests a
//! [`FileHost`] over a file opened once. The host's lock is taken only for the synchronous steps
//! (plan, build the request, append and read the appended bytes back), never across an await,
//! so the app answers other commands while a model is thinking.
//!
//! Order of events, and why: the sidecar lock is taken first (two Arbor windows never write the
//! same session); the plan is made on the held session, after reading what other programs
//! appended; the summary or reply is produced without holding the session; then, under the
//! host's lock again, whatever was appended meanwhile is read, the plan is checked against it
//! (a compaction is planned again and must come out the same, and must still continue the
//! file's leaf if it was planned to), and only then is the entry appended (one line, planned on
//! the bytes just read, `sync_data` for summaries) and read back into the held session with
//! `Session::extend_from_file` (time proportional to the new bytes).
use crate::chat;
use crate::error::{Error, Result};
use crate::provider::{Client, CompletionRequest, ProgressFn, Usage};
use crate::run::{
    branch_ledger, compaction_entry, compaction_ledger, navigation_entries, plan_compaction, plan_navigation,
    summarize_branch, summarize_compaction, Backend, BranchOutcome, CompactionOutcome, RunOptions,
};
use pi_json::{obj, Value};
use session_engine::compaction::CompactionJob;
use session_engine::context::{self, AutoCompaction, CompactionSettings, CurrentModel};
use session_engine::session::Extend;
use session_engine::store::{append_entry_planned, SessionLock};
use session_engine::{entries, ids, time, Session};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use tokio_util::sync::CancellationToken;

/// Holds the session an operation works on. `with` runs a synchronous step on it under the
/// holder's lock; an operation calls it once per step and never keeps the session across an
/// await, so between two steps the holder may read Pi's appends into it (or replace it).
pub trait SessionHost: Sync {
    /// The session file.
    fn path(&self) -> &Path;
    /// Runs `f` on the held session of `path()`. Refuses, without running `f`, when the holder
    /// no longer holds that file's session (the app opened another one meanwhile).
    fn with<T>(&self, f: impl FnOnce(&mut Session) -> Result<T>) -> Result<T>;
}

/// A session file opened once, for the CLI and tests: the host of the file-based entry points.
pub struct FileHost {
    path: PathBuf,
    session: Mutex<Session>,
}

impl FileHost {
    pub fn open(path: &Path) -> Result<FileHost> {
        Ok(FileHost { path: path.to_path_buf(), session: Mutex::new(open(path)?) })
    }

    /// The held session, with everything the operations appended read into it.
    pub fn into_session(self) -> Session {
        self.session.into_inner().unwrap_or_else(|p| p.into_inner())
    }
}

impl SessionHost for FileHost {
    fn path(&self) -> &Path {
        &self.path
    }
    fn with<T>(&self, f: impl FnOnce(&mut Session) -> Result<T>) -> Result<T> {
        f(&mut self.session.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

fn open(path: &Path) -> Result<Session> {
    Session::open(path).map_err(|e| Error::Session(format!("{}: {e}", path.display())))
}

/// Reads what was appended to the file into `session`, in time proportional to the new bytes; opens the
/// file again only when it is not a plain extension (then entry indices may change: callers
/// keep ids, never indices, from one step to the next).
fn read_appended(session: &mut Session, path: &Path) -> Result<()> {
    match session.extend_from_file(path) {
        Ok(Extend::Added(_)) => Ok(()),
        Ok(Extend::Reload) | Err(_) => {
            *session = open(path)?;
            Ok(())
        }
    }
}

fn lock(path: &Path) -> Result<SessionLock> {
    SessionLock::try_acquire(path).map_err(|e| Error::Session(e.to_string()))
}

fn changed(path: &Path) -> Error {
    Error::Session(format!(
        "{} changed while the summary was being written (another program appended to it); nothing was written. Run it again.",
        path.display()
    ))
}

fn refuse_read_only(session: &Session) -> Result<()> {
    match session.read_only_reason() {
        Some(why) => Err(Error::Session(format!("this session is read-only, so nothing was written: {why}"))),
        None => Ok(()),
    }
}

/// The file's leaf id.
fn file_leaf_id(session: &Session) -> Option<String> {
    session.file_leaf().map(|l| session.id(l).to_string())
}

/// Appends `entry` planned on the bytes `session` holds (refused when another program appended since,
/// even in the last moment), and reads it back into `session`.
fn append_read_back(session: &mut Session, path: &Path, entry: &Value, sync: bool) -> Result<bool> {
    let a = append_entry_planned(path, entry, sync, session.file_len()).map_err(|e| Error::Session(e.to_string()))?;
    read_appended(session, path)?;
    Ok(a.synced)
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
    compact_file_planned(path, leaf_id, settings, &plan_compaction, backend, opts, cancel, progress).await
}

/// How a compaction is planned: Pi's own cut ([`plan_compaction`]), or a chosen one
/// (`arbor-cli compact --keep-from`, through `pi_review::cut::plan_compaction_keep_from`).
pub type Planner<'a> = &'a (dyn Fn(&Session, Option<&str>, &CompactionSettings) -> Result<CompactionJob> + Sync);

/// `compact_file` with another planner; the plan is made, checked again and appended as there.
#[allow(clippy::too_many_arguments)] // compact_file's arguments and the planner
pub async fn compact_file_planned(
    path: &Path,
    leaf_id: Option<&str>,
    settings: &CompactionSettings,
    planner: Planner<'_>,
    backend: &Backend,
    opts: &RunOptions,
    cancel: &CancellationToken,
    progress: Option<&ProgressFn>,
) -> Result<CompactDone> {
    let _lock = lock(path)?;
    let host = FileHost::open(path)?;
    compact_locked_planned(&host, leaf_id, settings, planner, backend, opts, cancel, progress).await
}

/// `compact_file` on the session `host` holds (the app's open session): the file is not read
/// again, only what other programs appended to it; the entry is read back into the held session.
pub async fn compact_on(
    host: &impl SessionHost,
    leaf_id: Option<&str>,
    settings: &CompactionSettings,
    backend: &Backend,
    opts: &RunOptions,
    cancel: &CancellationToken,
    progress: Option<&ProgressFn>,
) -> Result<CompactDone> {
    let _lock = lock(host.path())?;
    compact_locked(host, leaf_id, settings, backend, opts, cancel, progress).await
}

/// `compact_on` with another planner (the app's "Compact up to here", through
/// `pi_review::cut::plan_compaction_keep_from`); planned, checked again and appended as there.
#[allow(clippy::too_many_arguments)] // compact_on's arguments and the planner
pub async fn compact_on_planned(
    host: &impl SessionHost,
    leaf_id: Option<&str>,
    settings: &CompactionSettings,
    planner: Planner<'_>,
    backend: &Backend,
    opts: &RunOptions,
    cancel: &CancellationToken,
    progress: Option<&ProgressFn>,
) -> Result<CompactDone> {
    let _lock = lock(host.path())?;
    compact_locked_planned(host, leaf_id, settings, planner, backend, opts, cancel, progress).await
}

/// A compaction in three steps, for a caller that holds the session lock: plan under the host's
/// lock, summarize without it, check and append under it.
async fn compact_locked(
    host: &impl SessionHost,
    leaf_id: Option<&str>,
    settings: &CompactionSettings,
    backend: &Backend,
    opts: &RunOptions,
    cancel: &CancellationToken,
    progress: Option<&ProgressFn>,
) -> Result<CompactDone> {
    compact_locked_planned(host, leaf_id, settings, &plan_compaction, backend, opts, cancel, progress).await
}

/// `compact_locked` with the plan made (and checked again before the append) by `planner`.
#[allow(clippy::too_many_arguments)]
async fn compact_locked_planned(
    host: &impl SessionHost,
    leaf_id: Option<&str>,
    settings: &CompactionSettings,
    planner: Planner<'_>,
    backend: &Backend,
    opts: &RunOptions,
    cancel: &CancellationToken,
    progress: Option<&ProgressFn>,
) -> Result<CompactDone> {
    let path = host.path();
    // Whatever was appended since the session was read (by Pi, say) is planned on, as a fresh
    // open would; the plan keeps ids only.
    let (job, planned_len, on_file_leaf) = host.with(|s| {
        read_appended(s, path)?;
        refuse_read_only(s)?;
        let job = planner(s, leaf_id, settings)?;
        Ok((job.clone(), s.file_len(), job.leaf_id == file_leaf_id(s)))
    })?;
    let mut outcome = summarize_compaction(&job, backend, opts, cancel, progress).await?;
    if cancel.is_cancelled() {
        return Err(Error::Cancelled);
    }
    host.with(|s| {
        read_appended(s, path)?;
        if s.file_len() != planned_len {
            // Another program appended meanwhile. The path to the leaf cannot change in an
            // append-only file, but an entry planned to continue the file's leaf must still do
            // so (else it would hang the summary on a stale parent), and the plan made again on
            // what is there now must be the one that was summarized (a repeated id would change it).
            if on_file_leaf && job.leaf_id != file_leaf_id(s) {
                return Err(changed(path));
            }
            if planner(s, job.leaf_id.as_deref(), settings).ok().as_ref() != Some(&job) {
                return Err(changed(path));
            }
        }
        // The ledger is added here, on the session the plan was just checked against, so that it
        // judges the text that is written (a split turn's merged text, with its appendix).
        if opts.artifact_ledger {
            let text = compaction_ledger(s, &job, &outcome.summary)?;
            outcome.set_summary(&job, text);
        }
        let id = ids::new_entry_id(|id| s.index_of(id).is_some());
        let entry = compaction_entry(&job, &outcome, &id, &time::now_iso());
        // Checked again on the store's own descriptor right before the write (a Pi append
        // between the read above and the write would otherwise leave this entry on a stale leaf).
        let synced = append_read_back(s, path, &entry, true)?;
        Ok(CompactDone { entry_id: id, line: entries::line(&entry), outcome, synced })
    })
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
    let host = FileHost::open(path)?;
    navigate_on(&host, old_leaf_id, target_id, summarize, budget, label, backend, opts, cancel, progress).await
}

/// `navigate_file` on the session `host` holds; what is appended is read back into it.
#[allow(clippy::too_many_arguments)] // mirrors Pi's navigateTree options; a struct would only rename them
pub async fn navigate_on(
    host: &impl SessionHost,
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
    let path = host.path();
    let (job, planned_len) = host.with(|s| {
        read_appended(s, path)?;
        let job = plan_navigation(s, old_leaf_id, target_id, summarize, budget)?;
        if !job.no_op && (job.prep.is_some() || label.is_some()) {
            refuse_read_only(s)?;
        }
        Ok((job, s.file_len()))
    })?;
    if job.no_op {
        return Ok(NavigateDone {
            new_leaf_id: job.old_leaf_id.clone(),
            editor_text: None,
            written: Vec::new(),
            summary: None,
            no_op: true,
        });
    }
    let writes = job.prep.is_some() || label.is_some();
    let _lock = if writes { Some(lock(path)?) } else { None };
    let mut summary = summarize_branch(&job, backend, opts, label, cancel, progress).await?;
    if cancel.is_cancelled() {
        return Err(Error::Cancelled);
    }
    let written = host.with(|s| {
        if let Some(b) = summary.as_mut().filter(|_| opts.artifact_ledger) {
            let text = branch_ledger(s, &job, &b.summary);
            b.set_summary(text);
        }
        let mut taken: Vec<String> = Vec::new();
        let lines = navigation_entries(&job, summary.as_ref(), label, &time::now_iso(), || {
            let id = ids::new_entry_id(|id| s.index_of(id).is_some() || taken.iter().any(|t| t == id));
            taken.push(id.clone());
            id
        });
        let mut written = Vec::new();
        if lines.is_empty() {
            return Ok(written);
        }
        // A navigation was planned from the leaf of that moment; any append since refuses it.
        read_appended(s, path)?;
        if s.file_len() != planned_len {
            return Err(changed(path));
        }
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
            });
            let a = match a {
                Ok(a) => a,
                Err(e) => {
                    // Whatever was written is read back before saying so.
                    let _ = read_appended(s, path);
                    return Err(e);
                }
            };
            let line = entries::line(entry);
            planned = a.offset + line.len() as u64 + 1;
            written.push((entry.str_field("id").unwrap_or_default().to_string(), line));
        }
        read_appended(s, path)?;
        Ok(written)
    })?;
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
    pub reason: AutoCompaction,
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

fn now_ms() -> f64 {
    time::now_ms() as f64
}

/// Pi's automatic check for the last assistant of the context at `leaf_id`.
fn auto_check(
    session: &Session,
    leaf_id: Option<&str>,
    model: &CurrentModel,
    settings: &CompactionSettings,
    skip_aborted: bool,
) -> Option<AutoCompaction> {
    let leaf = match leaf_id {
        Some(id) => session.index_of(id),
        None => session.file_leaf(),
    };
    let path = session.path(leaf);
    let ctx = context::build_context_on_path(session, &path);
    let msgs = ctx.agent_messages();
    let last = context::last_assistant(&msgs)?;
    context::auto_compaction_check(session, &path, &msgs, last, Some(model), settings, skip_aborted)
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
    let host = FileHost::open(path)?;
    continue_locked(&host, leaf_id, text, client, compaction_backend, opts, cancel, progress).await
}

/// `continue_session` on the session `host` holds (the app's open session): the file is not read
/// again, only what other programs appended; both messages (and any compaction) are read back
/// into the held session. If the host stops holding this file's session between two steps (the
/// app opened another), the send stops there with that error, and nothing more is written.
#[allow(clippy::too_many_arguments)] // the compaction backend may differ from the chat model
pub async fn continue_on(
    host: &impl SessionHost,
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
    let _lock = lock(host.path())?;
    continue_locked(host, leaf_id, text, client, compaction_backend, opts, cancel, progress).await
}

/// The request for the context at `at`: Arbor's system prompt and the context as turns.
fn chat_request(session: &Session, at: &str, max_tokens: u32) -> CompletionRequest {
    let path_idx = session.path(session.index_of(at));
    let msgs = context::to_llm(&context::build_context_on_path(session, &path_idx).agent_messages());
    CompletionRequest { system: chat::SYSTEM.into(), prompt: String::new(), max_tokens, turns: chat::to_turns(&msgs) }
}

#[allow(clippy::too_many_arguments)]
async fn continue_locked(
    host: &impl SessionHost,
    leaf_id: Option<&str>,
    text: &str,
    client: &Client,
    compaction_backend: &Backend,
    opts: &ContinueOptions,
    cancel: &CancellationToken,
    progress: Option<&ProgressFn>,
) -> Result<ContinueDone> {
    let path = host.path();
    let cfg = client.config();
    let model = CurrentModel {
        provider: cfg.wire.name().to_string(),
        id: cfg.model.clone(),
        context_window: opts.context_window as f64,
    };
    let mut compactions = Vec::new();
    let user_message = |user_id: &str, parent: Option<&str>| {
        let msg = obj([
            ("role", "user".into()),
            ("content", Value::Arr(vec![obj([("type", "text".into()), ("text", text.into())])])),
            ("timestamp", Value::Num(now_ms())),
        ]);
        entries::message(user_id, parent, &time::now_iso(), msg)
    };

    // (b) Before sending: threshold (or a stale overflow) on the last assistant. Without a
    // compaction, the user message is appended and the request built in the same step.
    enum First {
        Compact(Option<String>, AutoCompaction),
        Sent(String, CompletionRequest),
    }
    let first = host.with(|s| {
        read_appended(s, path)?;
        refuse_read_only(s)?;
        let leaf: Option<String> = match leaf_id {
            Some(id) => Some(
                s.index_of(id)
                    .map(|_| id.to_string())
                    .ok_or_else(|| Error::Session(format!("no entry with id `{id}`")))?,
            ),
            None => file_leaf_id(s),
        };
        if let Some(a) = auto_check(s, leaf.as_deref(), &model, &opts.settings, false) {
            return Ok(First::Compact(leaf, a));
        }
        let user_id = ids::new_entry_id(|id| s.index_of(id).is_some());
        append_read_back(s, path, &user_message(&user_id, leaf.as_deref()), false)?;
        let req = chat_request(s, &user_id, opts.max_tokens);
        Ok(First::Sent(user_id, req))
    })?;
    let (user_id, mut req) = match first {
        First::Sent(user_id, req) => (user_id, req),
        First::Compact(leaf, a) => {
            let done =
                compact_locked(host, leaf.as_deref(), &opts.settings, compaction_backend, &opts.run, cancel, progress)
                    .await?;
            let parent = done.entry_id.clone();
            compactions.push(AutoCompacted { reason: a, done });
            host.with(|s| {
                read_appended(s, path)?;
                // The message continues the compaction just written: nothing may have come after it.
                if file_leaf_id(s).as_deref() != Some(parent.as_str()) {
                    return Err(Error::Session(format!(
                        "{} changed right after the automatic compaction (another program appended to it), so your message was not sent; send it again.",
                        path.display()
                    )));
                }
                let user_id = ids::new_entry_id(|id| s.index_of(id).is_some());
                append_read_back(s, path, &user_message(&user_id, Some(&parent)), false)?;
                let req = chat_request(s, &user_id, opts.max_tokens);
                Ok((user_id, req))
            })?
        }
    };

    let mut at = user_id.clone();
    let mut retried = false;
    let completion = loop {
        match client.complete(&req, cancel, progress).await {
            Ok(c) => break c,
            Err(Error::Overflow { message }) => {
                if !opts.settings.enabled {
                    return Err(Error::OverflowCompactionDisabled { message });
                }
                if retried {
                    return Err(Error::Overflow {
                        message: format!("{message} (still too large after one automatic compaction)"),
                    });
                }
                retried = true;
                let done =
                    compact_locked(host, Some(&at), &opts.settings, compaction_backend, &opts.run, cancel, progress)
                        .await?;
                at = done.entry_id.clone();
                compactions.push(AutoCompacted { reason: AutoCompaction::Overflow, done });
                req = host.with(|s| Ok(chat_request(s, &at, opts.max_tokens)))?;
            }
            Err(e) => return Err(e),
        }
    };

    // The reply. Its parent is the entry its request was built at, whatever else was appended
    // meanwhile; it is planned on the bytes read just before the write.
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
                (
                    "cost",
                    obj([
                        ("input", zero()),
                        ("output", zero()),
                        ("cacheRead", zero()),
                        ("cacheWrite", zero()),
                        ("total", zero()),
                    ]),
                ),
            ]),
        ),
        ("stopReason", "stop".into()),
        ("timestamp", Value::Num(now_ms())),
    ]);
    // (a) After the run: threshold on the reply's own usage (no retry), in the same step.
    let (assistant_id, after) = host.with(|s| {
        read_appended(s, path)?;
        let assistant_id = ids::new_entry_id(|id| s.index_of(id).is_some());
        append_read_back(s, path, &entries::message(&assistant_id, Some(&at), &time::now_iso(), assistant), false)?;
        let after = if retried { None } else { auto_check(s, Some(&assistant_id), &model, &opts.settings, true) };
        Ok((assistant_id, after))
    })?;
    if let Some(AutoCompaction::Threshold) = after {
        let done =
            compact_locked(host, Some(&assistant_id), &opts.settings, compaction_backend, &opts.run, cancel, progress)
                .await?;
        compactions.push(AutoCompacted { reason: AutoCompaction::Threshold, done });
    }
    Ok(ContinueDone {
        user_entry_id: user_id,
        assistant_entry_id: assistant_id,
        reply: completion.text,
        usage: completion.usage,
        compactions,
    })
}
