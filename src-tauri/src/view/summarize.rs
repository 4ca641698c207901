//! Results of the summarize commands (compaction, navigation with a summary, the composer) and
//! their progress events, as the UI receives them.
use crate::view::session::{Navigation, OpenedSession};
use serde::Serialize;
use specta::Type;
use summarizer::offline::Kind;
use summarizer::Progress;

/// What a progress event reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub enum ProgressKind {
    /// A call starts (`attempt` > 1: a retry).
    Attempt,
    /// A call failed and is retried after `delayMs` (`message` says why).
    Retrying,
    /// Streamed text (`delta`, `chars`).
    Text,
}

/// Which call streamed the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub enum SummaryCall {
    History,
    TurnPrefix,
    Branch,
    /// The composer's reply.
    Reply,
}

/// One progress event for the UI.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct SummaryProgress {
    pub kind: ProgressKind,
    /// For `text`.
    pub call: Option<SummaryCall>,
    pub attempt: Option<u32>,
    pub delay_ms: Option<u32>,
    /// Bytes streamed so far (text), or a sentence (retrying, stage).
    pub chars: Option<u32>,
    pub delta: Option<String>,
    pub message: Option<String>,
}

impl SummaryProgress {
    /// A summarizer progress event as the UI receives it.
    pub fn from_progress(p: Progress) -> SummaryProgress {
        let base = SummaryProgress {
            kind: ProgressKind::Attempt,
            call: None,
            attempt: None,
            delay_ms: None,
            chars: None,
            delta: None,
            message: None,
        };
        match p {
            Progress::Attempt { attempt } => {
                SummaryProgress { kind: ProgressKind::Attempt, attempt: Some(attempt), ..base }
            }
            Progress::Retrying { attempt, delay, reason } => SummaryProgress {
                kind: ProgressKind::Retrying,
                attempt: Some(attempt),
                delay_ms: Some(delay.as_millis().min(u32::MAX as u128) as u32),
                message: Some(format!("{reason}; retrying in {:.1} s", delay.as_secs_f64())),
                ..base
            },
            Progress::Text { chars, delta } => SummaryProgress {
                kind: ProgressKind::Text,
                call: Some(SummaryCall::Reply),
                chars: Some(chars as u32),
                delta: Some(delta),
                ..base
            },
            Progress::SummaryText { call, chars, delta } => {
                let call = match call {
                    Kind::History => SummaryCall::History,
                    Kind::TurnPrefix => SummaryCall::TurnPrefix,
                    Kind::Branch => SummaryCall::Branch,
                };
                SummaryProgress {
                    kind: ProgressKind::Text,
                    call: Some(call),
                    chars: Some(chars as u32),
                    delta: Some(delta),
                    ..base
                }
            }
        }
    }
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct CompactResult {
    pub session: OpenedSession,
    pub entry_id: String,
    pub summary: String,
    pub tokens_before: u32,
    pub tokens_after: u32,
    pub offline: bool,
    pub from_hook: bool,
    /// "offline summarizer" or "openai gpt-4o-mini".
    pub summarizer: String,
    pub notices: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct NavigateResult {
    pub navigation: Navigation,
    /// The appended branch summary, if any (none when the branch left was empty).
    pub summary_entry_id: Option<String>,
    pub summary: Option<String>,
    pub offline: bool,
}

wire_enum!(
    /// Why a message compacted first: the context was over the threshold before sending, or the
    /// provider answered that it overflowed.
    AutoCompactionReason from session_engine::context::AutoCompaction { Threshold, Overflow }
);

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct AutoCompactionInfo {
    pub reason: AutoCompactionReason,
    pub entry_id: String,
    pub tokens_before: u32,
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct SendResult {
    pub session: OpenedSession,
    pub user_entry_id: String,
    pub assistant_entry_id: String,
    pub reply: String,
    pub input_tokens: u32,
    pub output_tokens: u32,
    pub compactions: Vec<AutoCompactionInfo>,
    pub context_window: u32,
}

/// An entry the compaction could keep from instead of a refused one.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct CutPoint {
    pub entry_id: String,
    pub kind: crate::view::graph::GraphRowKind,
    /// The entry's one-line title, as its graph row shows it.
    pub title: String,
}

/// Why "Compact up to here" cannot keep from the chosen entry, and where it could.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct CutRefusal {
    /// Why, as a clause: "it is a tool result (it must stay with its tool call)".
    pub message: String,
    /// The nearest valid cut points: the last before and the first after the chosen entry (or
    /// where its branch leaves the active path); empty when the path has none.
    pub nearest: Vec<CutPoint>,
}

/// What a compaction that keeps from the chosen entry would do (no model is asked).
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct CutPlan {
    /// Messages the summary would stand for (with a split turn's start) and their tokens.
    pub summarized_messages: u32,
    pub summarized_tokens: u32,
    /// Entries from the chosen one to the leaf, which stay as they are, and their context tokens.
    pub kept_entries: u32,
    pub kept_tokens: u32,
    /// The context now, and the messages it has after: the summary, then the kept ones.
    pub tokens_before: u32,
    pub messages_after: u32,
    /// The chosen entry is inside a turn: the turn's start is summarized on its own, as Pi does.
    pub is_split_turn: bool,
    /// An earlier compaction's summary is updated rather than a new one written from scratch.
    pub updates_previous_summary: bool,
}

/// The preview of "Compact up to here": a plan, or a refusal (never both).
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct CompactHerePreview {
    pub entry_id: String,
    /// The leaf compacted at (Arbor's).
    pub leaf_id: Option<String>,
    pub plan: Option<CutPlan>,
    pub refusal: Option<CutRefusal>,
}

/// The preview's numbers of a compaction job kept from a chosen entry.
pub fn cut_plan(s: &session_engine::Session, job: &session_engine::compaction::CompactionJob) -> CutPlan {
    let p = &job.prep;
    let path = s.path(job.leaf_id.as_deref().and_then(|l| s.index_of(l)));
    let kept_tokens: f64 = job.kept_messages.iter().map(session_engine::context::estimate_tokens).sum();
    CutPlan {
        summarized_messages: (p.messages_to_summarize.len() + p.turn_prefix_messages.len()) as u32,
        summarized_tokens: p.tokens_summarized() as u32,
        kept_entries: path.len().saturating_sub(p.first_kept_position) as u32,
        kept_tokens: kept_tokens as u32,
        tokens_before: p.tokens_before as u32,
        messages_after: job.kept_messages.len() as u32 + 1,
        is_split_turn: p.is_split_turn,
        updates_previous_summary: p.previous_summary.is_some(),
    }
}

/// A refused cut as the UI shows it: the sentence, and the nearest valid points to pick instead.
pub fn cut_refusal(s: &session_engine::Session, c: &pi_review::cut::InvalidCut) -> CutRefusal {
    let nearest = c
        .nearest
        .iter()
        .filter_map(|id| {
            let i = s.index_of(id)?;
            let (kind, title) = crate::view::graph::entry_title(s, i);
            Some(CutPoint { entry_id: id.clone(), kind, title: crate::view::one_line(&title, 80) })
        })
        .collect();
    CutRefusal { message: c.reason.clone(), nearest }
}
