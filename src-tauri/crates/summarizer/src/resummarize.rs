//! Re-summarize: an alternative summary of the span an existing summary stands for, with another
//! backend or other instructions, written nowhere. The workbench shows it beside the existing one
//! (diff, both retention scores); "Use this" then appends it as an ordinary edit.
//!
//! Same two steps as `run`: `plan_resummarize` (sync, engine: the span's messages, the previous
//! summary, the file lists) and `resummarize` (async: one history or branch call, or the offline
//! summarizer). The prompts are the ones a compaction or navigation uses. A split-turn
//! compaction is re-summarized as one history call over its whole span (no separate turn-prefix
//! call), so its alternative has no "Turn Context" part.
use crate::error::{Error, Result};
use crate::offline;
use crate::prompts;
use crate::provider::{CompletionRequest, Progress, ProgressFn, Usage};
use crate::run::{wire_text, Backend};
use pi_json::Value;
use session_engine::branch::BRANCH_SUMMARY_PREAMBLE;
use session_engine::compaction::{file_ops_appendix, serialize_agent_messages};
use session_engine::{Kind, Session};
use tokio_util::sync::CancellationToken;

/// What a re-summary needs, detached from the session.
#[derive(Debug, Clone)]
pub struct ResummarizeJob {
    pub entry_id: String,
    /// A branch summary (branch prompt, Pi's preamble) rather than a compaction (history prompt).
    pub branch: bool,
    /// The span's agent messages, in path order.
    pub messages: Vec<Value>,
    /// The summary before this one (a compaction's previous compaction), given to the model as
    /// Pi's `<previous-summary>`.
    pub previous: Option<String>,
    pub read_files: Vec<String>,
    pub modified_files: Vec<String>,
}

fn strings(v: Option<&Value>) -> Option<Vec<String>> {
    v.and_then(Value::as_array).map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect())
}

/// Plans a re-summary of entry `idx` (a compaction or branch summary).
pub fn plan_resummarize(session: &Session, idx: usize) -> Result<ResummarizeJob> {
    let branch = match session.kind(idx) {
        Kind::Compaction => false,
        Kind::BranchSummary => true,
        _ => {
            return Err(Error::Session(format!(
                "entry {} is not a summary; choose a compaction or branch summary entry",
                session.id(idx)
            )))
        }
    };
    // The engine judges an edit or revert by its original's span and predecessor.
    let (messages, previous) = summary_analysis::span_messages(session, idx);
    let v = session.value(idx);
    let details = v.get("details");
    let parsed = summary_analysis::parse(v.str_field("summary").unwrap_or(""));
    let read_files = strings(details.and_then(|d| d.get("readFiles"))).unwrap_or_else(|| parsed.read_files.clone());
    let modified_files =
        strings(details.and_then(|d| d.get("modifiedFiles"))).unwrap_or_else(|| parsed.modified_files.clone());
    Ok(ResummarizeJob { entry_id: session.id(idx).to_string(), branch, messages, previous, read_files, modified_files })
}

/// The alternative summary (full text, as it would be written: preamble and file appendix included).
#[derive(Debug, Clone)]
pub struct Resummary {
    pub text: String,
    pub usage: Usage,
    pub offline: bool,
}

/// One call over the job's span. `max_tokens` caps a model's answer. Nothing is written anywhere.
pub async fn resummarize(
    job: &ResummarizeJob,
    backend: &Backend,
    custom: Option<&str>,
    max_tokens: u64,
    cancel: &CancellationToken,
    progress: Option<&ProgressFn>,
) -> Result<Resummary> {
    if job.messages.is_empty() {
        return Err(Error::Session(format!(
            "the span of summary {} holds no messages to summarize again; choose a summary that stands for some conversation",
            job.entry_id
        )));
    }
    let custom = custom.map(str::trim).filter(|c| !c.is_empty());
    let kind = if job.branch { offline::Kind::Branch } else { offline::Kind::History };
    let (body, usage, offline) = match backend {
        Backend::Offline => {
            if cancel.is_cancelled() {
                return Err(Error::Cancelled);
            }
            (offline::summarize(kind, &job.messages, job.previous.as_deref(), custom), Usage::default(), true)
        }
        Backend::Model(client) => {
            let conversation = serialize_agent_messages(&job.messages);
            let prompt = if job.branch {
                prompts::branch_prompt(&conversation, custom, false)
            } else {
                prompts::history_prompt(&conversation, job.previous.as_deref(), custom)
            };
            let call = if job.branch { crate::offline::Kind::Branch } else { crate::offline::Kind::History };
            let tagged: Option<ProgressFn> = progress.map(|p| {
                let p = p.clone();
                let f: ProgressFn = std::sync::Arc::new(move |ev| match ev {
                    Progress::Text { chars, delta } => p(Progress::SummaryText { call, chars, delta }),
                    other => p(other),
                });
                f
            });
            let req = CompletionRequest {
                system: prompts::SYSTEM.to_string(),
                prompt: wire_text(&prompt),
                max_tokens: u32::try_from(max_tokens).unwrap_or(u32::MAX),
                turns: Vec::new(),
            };
            let done = client.complete(&req, cancel, tagged.as_ref()).await?;
            (done.text, done.usage, false)
        }
    };
    let appendix = file_ops_appendix(&job.read_files, &job.modified_files);
    let text =
        if job.branch { format!("{BRANCH_SUMMARY_PREAMBLE}{body}{appendix}") } else { format!("{body}{appendix}") };
    Ok(Resummary { text, usage, offline })
}
