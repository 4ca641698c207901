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
