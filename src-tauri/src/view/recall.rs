//! Bringing entries back into context as the UI previews and confirms it: the engine's recall
//! plan (`session_engine::recall`) with its cost against the compaction threshold, or the
//! engine's sentence saying why nothing can be brought back.

use super::session::OpenedSession;
use super::token_count;
use serde::Serialize;
use session_engine::recall::RecallPlan;
use specta::Type;

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct RecallSource {
    pub entry_id: String,
    /// Where the model lost it: "compacted away" or "on a branch that was left".
    pub place: String,
}

/// A secret found in an entry's text (`start..end`, bytes of the text before the cut): redacted
/// in the message unless the preview was asked to keep secrets.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct RecallSecretView {
    pub entry_id: String,
    /// The rule that found it, e.g. `github-token`.
    pub kind: String,
    pub start: u32,
    pub end: u32,
}

/// What bringing `entry_ids` back at the leaf would append and cost. With a `refusal`, nothing
/// can be brought back and the numbers are zero.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct RecallPreview {
    pub entry_ids: Vec<String>,
    /// The leaf the message would be appended under (Arbor's leaf).
    pub leaf_id: Option<String>,
    /// The cut per entry the text was planned with.
    pub max_chars: u32,
    pub refusal: Option<String>,
    /// The custom message's text, as it would be written.
    pub text: String,
    /// Pi's estimate of the message alone.
    pub tokens: u32,
    /// The context at the leaf before and after.
    pub context_tokens: u32,
    pub context_tokens_after: u32,
    /// `contextWindow - reserveTokens`.
    pub threshold: u32,
    /// With the message, the context is past the threshold: Pi compacts before the next prompt.
    pub crosses_threshold: bool,
    /// Entries whose text was cut to `max_chars`.
    pub cut: Vec<String>,
    pub sources: Vec<RecallSource>,
    /// The secrets in the text, listed before anything is written.
    pub secrets: Vec<RecallSecretView>,
    /// The text holds them as they are (the person's explicit choice); else placeholders.
    pub secrets_kept: bool,
}

impl RecallPreview {
    pub fn planned(
        entry_ids: Vec<String>,
        leaf_id: Option<String>,
        max_chars: u32,
        secrets_kept: bool,
        p: &RecallPlan,
    ) -> RecallPreview {
        RecallPreview {
            entry_ids,
            leaf_id,
            max_chars,
            refusal: None,
            text: p.text.clone(),
            tokens: token_count(p.tokens),
            context_tokens: token_count(p.context_tokens),
            context_tokens_after: token_count(p.context_tokens_after),
            threshold: token_count(p.threshold),
            crosses_threshold: p.crosses_threshold,
            cut: p.cut.clone(),
            sources: p
                .sources
                .iter()
                .map(|(id, place)| RecallSource { entry_id: id.clone(), place: (*place).to_string() })
                .collect(),
            secrets: p
                .secrets
                .iter()
                .map(|s| RecallSecretView {
                    entry_id: s.entry_id.clone(),
                    kind: s.kind.clone(),
                    start: u32::try_from(s.start).unwrap_or(u32::MAX),
                    end: u32::try_from(s.end).unwrap_or(u32::MAX),
                })
                .collect(),
            secrets_kept,
        }
    }

    pub fn refused(entry_ids: Vec<String>, leaf_id: Option<String>, max_chars: u32, why: String) -> RecallPreview {
        RecallPreview {
            entry_ids,
            leaf_id,
            max_chars,
            refusal: Some(why),
            text: String::new(),
            tokens: 0,
            context_tokens: 0,
            context_tokens_after: 0,
            threshold: 0,
            crosses_threshold: false,
            cut: Vec::new(),
            sources: Vec::new(),
            secrets: Vec::new(),
            secrets_kept: false,
        }
    }
}

/// After Bring back: the session with the new custom message as its leaf.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct RecallDone {
    pub session: OpenedSession,
    /// The appended `custom_message` entry.
    pub entry_id: String,
    pub tokens: u32,
    pub context_tokens_after: u32,
    pub threshold: u32,
    pub crosses_threshold: bool,
}
