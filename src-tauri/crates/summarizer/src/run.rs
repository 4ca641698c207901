//! Compaction and branch-summary runs: engine plan in, entry out.
//!
//! Each run has three steps, so the session (sync, not shared across awaits) is only touched
//! before and after the network:
//! 1. `plan_compaction` / `plan_navigation` (sync): the engine's preparation, owned.
//! 2. `summarize_compaction` / `summarize_branch` (async): hook, model calls (a split turn's
//!    two calls run in parallel), merge exactly as Pi does, file-list appendix, details.
//! 3. `compaction_entry` / `navigation_entries` (sync): the lines to append, in Pi's key order.
//!
//! Steps 1 and 3, and the merge and details of step 2, are the engine's
//! (`session_engine::compaction::plan_compaction`, `CompactionJob::summarized`,
//! `compaction_entry`; `session_engine::branch::plan_navigation`, `BranchPreparation::summary`,
//! `navigation_entries`): the same functions the conformance report's simulations run, so the
//! conformance corpus tests the code that writes files. This module adds what is Arbor's: ids
//! in the user's terms, read-only refusals, hooks, model calls and the `details` extras.
//!
//! Architecture Invariant: a run returns an outcome only when every call completed; there is
//! no partial summary. Callers append nothing on error.
use crate::error::{Error, Result};
use crate::hooks::{run_hook, HookAnswer, HookCommand};
use crate::offline;
use crate::prompts;
use crate::provider::{Client, CompletionRequest, ProgressFn, Usage};
use pi_json::{obj, Value};
use session_engine::branch::{self, BranchSummary};
use session_engine::compaction::{self, details_with_extras, CompactionPreparation, CompactionSummary};
use session_engine::context::{self, CompactionSettings};
use session_engine::Session;
use tokio_util::sync::CancellationToken;

/// Who writes the summaries.
#[derive(Debug)]
pub enum Backend {
    Model(Client),
    Offline,
}

impl Backend {
    fn describe(&self) -> Value {
        match self {
            Backend::Model(c) => {
                obj([("provider", c.config().wire.name().into()), ("model", c.config().model.as_str().into())])
            }
            Backend::Offline => obj([("provider", "offline".into())]),
        }
    }

    async fn call(
        &self,
        c: Call<'_>,
        cancel: &CancellationToken,
        progress: Option<&ProgressFn>,
    ) -> Result<(String, Usage)> {
        let Call { kind, prompt, max_tokens, messages, previous, custom } = c;
        match self {
            Backend::Offline => {
                if cancel.is_cancelled() {
                    return Err(Error::Cancelled);
                }
                Ok((offline::summarize(kind, messages, previous, custom), Usage::default()))
            }
            Backend::Model(c) => {
                let call = kind;
                let tagged: Option<ProgressFn> = progress.map(|p| {
                    let p = p.clone();
                    let f: ProgressFn = std::sync::Arc::new(move |ev| match ev {
                        crate::provider::Progress::Text { chars, delta } => {
                            p(crate::provider::Progress::SummaryText { call, chars, delta })
                        }
                        other => p(other),
                    });
                    f
                });
                let progress = tagged.as_ref();
                let req = CompletionRequest {
                    system: prompts::SYSTEM.to_string(),
                    prompt: wire_text(&prompt),
                    max_tokens: u32::try_from(max_tokens).unwrap_or(u32::MAX),
                    turns: Vec::new(),
                };
                let done = c.complete(&req, cancel, progress).await?;
                Ok((done.text, done.usage))
            }
        }
    }
}

/// The engine carries a lone UTF-16 surrogate (from Pi's 2000-unit truncation cutting an
/// emoji in half) as a stand-in scalar at U+10F800 + k. JSON cannot carry it to a provider
/// portably, so it becomes U+FFFD: still one UTF-16 unit, as in Pi's request.
pub(crate) fn wire_text(s: &str) -> String {
    if !s.chars().any(|c| c as u32 >= 0x10F800) {
        return s.to_string();
    }
    s.chars().map(|c| if c as u32 >= 0x10F800 { '\u{FFFD}' } else { c }).collect()
}

/// One summarization call: the prompt for a model, the messages for the offline summarizer.
struct Call<'a> {
    kind: offline::Kind,
    prompt: String,
    max_tokens: u64,
    messages: &'a [Value],
    previous: Option<&'a str>,
    custom: Option<&'a str>,
}

/// Options shared by both runs.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub custom_instructions: Option<String>,
    /// Branch summaries: the custom text replaces the instructions (Pi's `replaceInstructions`).
    pub replace_instructions: bool,
    /// Output limit of a branch summary (Pi: fixed 2048).
    pub branch_max_tokens: u64,
    /// Cap for any call, from the model catalog (None = no cap).
    pub model_max_output: Option<u64>,
    /// Add `usage`, `tokensAfter` and `summarizer` to `details` after Pi's keys. Off gives
    /// byte-for-byte Pi lines (used by the conformance comparison).
    pub record_extras: bool,
    pub hook: Option<HookCommand>,
    /// Append the artifact ledger (`## Artifacts`: the span's paths, commands and errors the
    /// summary does not mention) to the summary before the entry is built. Off by default: the
    /// summary then is exactly the model's (or the hook's) text, as Pi would write it.
    pub artifact_ledger: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            custom_instructions: None,
            replace_instructions: false,
            branch_max_tokens: prompts::DEFAULT_BRANCH_MAX_TOKENS,
            model_max_output: None,
            record_extras: true,
            hook: None,
            artifact_ledger: false,
        }
    }
}

impl RunOptions {
    fn cap(&self, n: u64) -> u64 {
        match self.model_max_output {
            Some(m) if m > 0 => n.min(m),
            _ => n,
        }
    }
    fn custom(&self) -> Option<&str> {
        self.custom_instructions.as_deref().filter(|c| !c.is_empty())
    }
}

fn leaf_of(session: &Session, leaf_id: Option<&str>) -> Result<Option<usize>> {
    match leaf_id {
        None => Ok(session.file_leaf()),
        Some(id) => session.index_of(id).map(Some).ok_or_else(|| {
            Error::Session(format!("no entry with id `{id}` in this session; list ids with `arbor-cli tree FILE`"))
        }),
    }
}

fn writable(session: &Session) -> Result<()> {
    match session.read_only_reason() {
        Some(why) => Err(Error::Session(format!("this session is read-only, so nothing was written: {why}"))),
        None => Ok(()),
    }
}

// ---- Compaction ----------------------------------------------------------------------------

pub use session_engine::compaction::CompactionJob;

/// Plans a compaction at `leaf_id` (None = the file's leaf) with the engine's
/// `plan_compaction`. Refuses as Pi does ("Already compacted", "Nothing to compact") and
/// refuses read-only sessions.
pub fn plan_compaction(
    session: &Session,
    leaf_id: Option<&str>,
    settings: &CompactionSettings,
) -> Result<CompactionJob> {
    writable(session)?;
    let leaf = leaf_of(session, leaf_id)?;
    compaction::plan_compaction(session, leaf, settings).map_err(|r| Error::Session(r.message().to_string()))
}

/// The hook's view of a compaction (Pi's `preparation`, with messages in agent form).
pub fn compaction_hook_input(job: &CompactionJob, custom: Option<&str>) -> Value {
    let p = &job.prep;
    let strs = |v: &[String]| Value::Arr(v.iter().map(|s| Value::from(s.as_str())).collect());
    obj([
        ("type", "session_before_compact".into()),
        ("leafId", job.leaf_id.as_deref().map(Value::from).unwrap_or(Value::Null)),
        ("customInstructions", custom.map(Value::from).unwrap_or(Value::Null)),
        (
            "preparation",
            obj([
                ("firstKeptEntryId", p.first_kept_entry_id.as_str().into()),
                ("messagesToSummarize", Value::Arr(p.agent_messages_to_summarize())),
                ("turnPrefixMessages", Value::Arr(p.agent_turn_prefix())),
                ("isSplitTurn", Value::Bool(p.is_split_turn)),
                ("tokensBefore", Value::Num(p.tokens_before)),
                ("previousSummary", p.previous_summary.clone().unwrap_or(Value::Null)),
                (
                    "fileOps",
                    obj([
                        ("read", strs(&p.file_ops.read)),
                        ("written", strs(&p.file_ops.written)),
                        ("edited", strs(&p.file_ops.edited)),
                    ]),
                ),
                (
                    "settings",
                    obj([
                        ("enabled", Value::Bool(p.settings.enabled)),
                        ("reserveTokens", Value::Num(p.settings.reserve_tokens)),
                        ("keepRecentTokens", Value::Num(p.settings.keep_recent_tokens)),
                    ]),
                ),
            ]),
        ),
    ])
}

/// What a compaction run produced, ready to become an entry.
#[derive(Debug, Clone)]
pub struct CompactionOutcome {
    pub summary: String,
    pub first_kept_entry_id: String,
    pub tokens_before: f64,
    pub details: Option<Value>,
    pub from_hook: bool,
    pub usage: Usage,
    /// Model (or offline) calls made.
    pub calls: u32,
    /// Estimated context size after the compaction (sum of per-message estimates).
    pub tokens_after: f64,
}

fn previous_summary_text(p: &CompactionPreparation) -> Option<String> {
    p.previous_summary.as_ref().map(|v| match v {
        Value::Str(s) => s.to_string(),
        other => context::js_to_string(other),
    })
}

fn usage_value(u: &Usage) -> Value {
    obj([
        ("input", Value::Num(u.input as f64)),
        ("output", Value::Num(u.output as f64)),
        ("cacheRead", Value::Num(u.cache_read as f64)),
        ("cacheWrite", Value::Num(u.cache_write as f64)),
    ])
}

impl CompactionOutcome {
    fn new(c: CompactionSummary, usage: Usage, calls: u32, tokens_after: f64) -> CompactionOutcome {
        let CompactionSummary { summary, first_kept_entry_id, tokens_before, details, from_hook } = c;
        CompactionOutcome {
            summary,
            first_kept_entry_id,
            tokens_before,
            details,
            from_hook,
            usage,
            calls,
            tokens_after,
        }
    }
}

/// Arbor's extras for `details`: `usage` for model calls, then `tokensAfter` (compactions),
/// `summarizer`, and `offline: true` without a model.
fn extras(backend: &Backend, usage: &Usage, tokens_after: Option<f64>) -> Vec<(&'static str, Value)> {
    let mut e = Vec::new();
    if matches!(backend, Backend::Model(_)) {
        e.push(("usage", usage_value(usage)));
    }
    if let Some(t) = tokens_after {
        e.push(("tokensAfter", Value::Num(t)));
    }
    e.push(("summarizer", backend.describe()));
    if matches!(backend, Backend::Offline) {
        e.push(("offline", Value::Bool(true)));
    }
    e
}

fn with_extras(
    details: Option<Value>,
    opts: &RunOptions,
    extras: impl FnOnce() -> Vec<(&'static str, Value)>,
) -> Option<Value> {
    match details {
        Some(d) if opts.record_extras => Some(details_with_extras(d, extras())),
        d => d,
    }
}

/// Runs the hook (if any) and the model calls for a planned compaction.
pub async fn summarize_compaction(
    job: &CompactionJob,
    backend: &Backend,
    opts: &RunOptions,
    cancel: &CancellationToken,
    progress: Option<&ProgressFn>,
) -> Result<CompactionOutcome> {
    let p = &job.prep;
    let custom = opts.custom();
    if let Some(hook) = &opts.hook {
        match run_hook(hook, &compaction_hook_input(job, custom), cancel).await? {
            HookAnswer::Cancel => return Err(Error::HookCancelled),
            HookAnswer::Replace { summary, first_kept_entry_id, tokens_before, details } => {
                let c = job.from_hook(summary, first_kept_entry_id, tokens_before, details);
                let after = job.tokens_after(&c.summary, c.tokens_before);
                return Ok(CompactionOutcome::new(c, Usage::default(), 0, after));
            }
            HookAnswer::Continue => {}
        }
    }
    let previous = previous_summary_text(p);
    let history_msgs = p.agent_messages_to_summarize();
    let prefix_msgs = p.agent_turn_prefix();
    let reserve = p.settings.reserve_tokens.max(0.0) as u64;
    let history = async {
        if !p.needs_history_call() {
            return Ok(None);
        }
        let prompt = prompts::history_prompt(&p.serialized_history(), previous.as_deref(), custom);
        let max = opts.cap(prompts::history_max_tokens(reserve));
        backend
            .call(
                Call {
                    kind: offline::Kind::History,
                    prompt,
                    max_tokens: max,
                    messages: &history_msgs,
                    previous: previous.as_deref(),
                    custom,
                },
                cancel,
                progress,
            )
            .await
            .map(Some)
    };
    let prefix = async {
        if !p.needs_prefix_call() {
            return Ok(None);
        }
        let prompt = prompts::turn_prefix_prompt(&p.serialized_turn_prefix());
        let max = opts.cap(prompts::prefix_max_tokens(reserve));
        let call = Call {
            kind: offline::Kind::TurnPrefix,
            prompt,
            max_tokens: max,
            messages: &prefix_msgs,
            previous: None,
            custom: None,
        };
        backend.call(call, cancel, progress).await.map(Some)
    };
    // Both calls in parallel; the first error wins and drops (cancels) the other request.
    let (h, x) = tokio::try_join!(history, prefix)?;
    let mut usage = Usage::default();
    let mut calls = 0;
    for (_, u) in h.iter().chain(x.iter()) {
        usage.add(u);
        calls += 1;
    }
    let mut c = job.summarized(h.as_ref().map(|(t, _)| t.as_str()), x.as_ref().map(|(t, _)| t.as_str()));
    let after = job.tokens_after(&c.summary, c.tokens_before);
    c.details = with_extras(c.details, opts, || extras(backend, &usage, Some(after)));
    Ok(CompactionOutcome::new(c, usage, calls, after))
}

impl CompactionOutcome {
    /// The engine's view of what the entry says.
    pub fn summary(&self) -> CompactionSummary {
        CompactionSummary {
            summary: self.summary.clone(),
            first_kept_entry_id: self.first_kept_entry_id.clone(),
            tokens_before: self.tokens_before,
            details: self.details.clone(),
            from_hook: self.from_hook,
        }
    }
}

/// The `compaction` entry, a child of the job's leaf (the engine's `compaction_entry`).
pub fn compaction_entry(job: &CompactionJob, out: &CompactionOutcome, id: &str, timestamp: &str) -> Value {
    compaction::compaction_entry(job, &out.summary(), id, timestamp)
}

// ---- Navigation ----------------------------------------------------------------------------

pub use session_engine::branch::NavigationJob;

/// Plans a navigation to `target_id` from `old_leaf_id` (None = the file's leaf) with the
/// engine's `plan_navigation`. `budget` is the token budget for the selected branch messages
/// (0 = unlimited).
pub fn plan_navigation(
    session: &Session,
    old_leaf_id: Option<&str>,
    target_id: &str,
    summarize: bool,
    budget: f64,
) -> Result<NavigationJob> {
    let old = leaf_of(session, old_leaf_id)?;
    let target = session.index_of(target_id).ok_or_else(|| {
        Error::Session(format!("no entry with id `{target_id}` in this session; list ids with `arbor-cli tree FILE`"))
    })?;
    Ok(branch::plan_navigation(session, old, target, summarize, budget))
}

/// The hook's view of a navigation (Pi's `session_before_tree` preparation).
pub fn navigation_hook_input(job: &NavigationJob, custom: Option<&str>, label: Option<&str>) -> Value {
    let msgs = job.prep.as_ref().map(|p| p.agent_messages()).unwrap_or_default();
    obj([
        ("type", "session_before_tree".into()),
        ("targetId", job.target_id.as_str().into()),
        ("oldLeafId", job.old_leaf_id.as_deref().map(Value::from).unwrap_or(Value::Null)),
        ("newLeafId", job.new_leaf_id.as_deref().map(Value::from).unwrap_or(Value::Null)),
        ("entriesToSummarize", Value::Arr(job.branch_entry_ids.iter().map(|i| Value::from(i.as_str())).collect())),
        ("messagesToSummarize", Value::Arr(msgs)),
        ("customInstructions", custom.map(Value::from).unwrap_or(Value::Null)),
        ("label", label.map(Value::from).unwrap_or(Value::Null)),
    ])
}

#[derive(Debug, Clone)]
pub struct BranchOutcome {
    pub summary: String,
    pub details: Option<Value>,
    pub from_hook: bool,
    pub usage: Usage,
    pub calls: u32,
}

/// Produces the branch summary for a planned navigation; `Ok(None)` when there is nothing to
/// summarize (no summary entry is written, as in Pi).
pub async fn summarize_branch(
    job: &NavigationJob,
    backend: &Backend,
    opts: &RunOptions,
    label: Option<&str>,
    cancel: &CancellationToken,
    progress: Option<&ProgressFn>,
) -> Result<Option<BranchOutcome>> {
    let Some(prep) = &job.prep else { return Ok(None) };
    let custom = opts.custom();
    if let Some(hook) = &opts.hook {
        match run_hook(hook, &navigation_hook_input(job, custom, label), cancel).await? {
            HookAnswer::Cancel => return Err(Error::HookCancelled),
            HookAnswer::Replace { summary, details, .. } => {
                return Ok(Some(BranchOutcome::new(
                    BranchSummary { summary, details, from_hook: true },
                    Usage::default(),
                    0,
                )));
            }
            HookAnswer::Continue => {}
        }
    }
    if !prep.needs_call() {
        return Ok(Some(BranchOutcome::new(prep.summary(None), Usage::default(), 0)));
    }
    let msgs = prep.agent_messages();
    let prompt = prompts::branch_prompt(&prep.serialized(), custom, opts.replace_instructions);
    let max = opts.cap(opts.branch_max_tokens);
    let call = Call { kind: offline::Kind::Branch, prompt, max_tokens: max, messages: &msgs, previous: None, custom };
    let (text, usage) = backend.call(call, cancel, progress).await?;
    let mut b = prep.summary(Some(&text));
    b.details = with_extras(b.details, opts, || extras(backend, &usage, None));
    Ok(Some(BranchOutcome::new(b, usage, 1)))
}

impl BranchOutcome {
    fn new(b: BranchSummary, usage: Usage, calls: u32) -> BranchOutcome {
        let BranchSummary { summary, details, from_hook } = b;
        BranchOutcome { summary, details, from_hook, usage, calls }
    }

    /// The engine's view of what the entry says.
    pub fn summary(&self) -> BranchSummary {
        BranchSummary { summary: self.summary.clone(), details: self.details.clone(), from_hook: self.from_hook }
    }
}

/// The lines a navigation appends, in order: the `branch_summary` (if any), then the `label`
/// (if any). `new_id` draws fresh ids. Without a summary or label, nothing is appended: the
/// leaf move is in memory only, as in Pi. The engine's `navigation_entries`.
pub fn navigation_entries(
    job: &NavigationJob,
    summary: Option<&BranchOutcome>,
    label: Option<&str>,
    timestamp: &str,
    new_id: impl FnMut() -> String,
) -> Vec<Value> {
    branch::navigation_entries(job, summary.map(BranchOutcome::summary).as_ref(), label, timestamp, new_id)
}

// ---- The artifact ledger -------------------------------------------------------------------

/// `summary` with the artifact ledger added ([`summary_analysis::quality::ledger`]), judged as
/// the compaction `job` plans: the span from the previous compaction's first kept entry (or the
/// root) up to the new first kept entry, on the path to the job's leaf, the turn prefix of a
/// split turn included. The span is found again by ids on `session`, so the session may have
/// grown since the plan. Unchanged when the summary mentions every artifact already.
pub fn compaction_ledger(session: &Session, job: &CompactionJob, summary: &str) -> Result<String> {
    let Some(leaf) = job.leaf_id.as_deref() else { return Ok(summary.to_string()) };
    let leaf = session
        .index_of(leaf)
        .ok_or_else(|| Error::Session(format!("the leaf {leaf} of the compaction is no longer in the session")))?;
    let span = summary_analysis::draft::compaction_span(session, leaf, &job.prep.first_kept_entry_id)
        .map_err(Error::Session)?;
    Ok(summary_analysis::quality::with_ledger_over(session, &span.entries, span.previous, summary))
}

/// `summary` with the artifact ledger of the branch a navigation leaves (Pi's
/// `collectEntriesForBranchSummary` from the old leaf to the target). A branch summary replaces
/// no summary, so nothing counts as mentioned before it.
pub fn branch_ledger(session: &Session, job: &NavigationJob, summary: &str) -> String {
    let old = job.old_leaf_id.as_deref().and_then(|id| session.index_of(id));
    let Some(target) = session.index_of(&job.target_id) else { return summary.to_string() };
    let entries = branch::collect_branch_entries(session, old, target).entries;
    summary_analysis::quality::with_ledger_over(session, &entries, None, summary)
}

impl CompactionOutcome {
    /// Replaces the summary text (the ledger added after the model answered): `tokensAfter` is
    /// estimated again, in the outcome and in the `details` extras that carry it.
    pub fn set_summary(&mut self, job: &CompactionJob, summary: String) {
        if summary == self.summary {
            return;
        }
        self.tokens_after = job.tokens_after(&summary, self.tokens_before);
        self.summary = summary;
        if self.from_hook {
            return;
        }
        if let Some(Value::Obj(d)) = &mut self.details {
            if d.get("tokensAfter").is_some() {
                d.insert("tokensAfter", Value::Num(self.tokens_after));
            }
        }
    }
}

impl BranchOutcome {
    pub fn set_summary(&mut self, summary: String) {
        self.summary = summary;
    }
}
