//! The review of Pi's own compactions and branch summaries, as the UI sees it: the events of the
//! reviewer (a request arrived, a review ended, a compaction was watched), the review dialog's
//! content, a moved cut's preview, the policy, and the extension's status in the Pi tab.

use super::session::OpenedSession;
use super::summary::{CheckView, SectionView};
use serde::{Deserialize, Serialize};
use specta::Type;

/// How Arbor answers Pi: *review* (wait for the person up to the time limit), *watch* (accept
/// at once; show and notify), *off* (no socket: Pi goes on by itself at once).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type, Default)]
#[serde(rename_all = "camelCase")]
pub enum ReviewPolicy {
    #[default]
    Review,
    Watch,
    Off,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct ReviewPrefs {
    pub policy: ReviewPolicy,
    /// How long Pi waits for the person, in seconds (default 300).
    pub timeout_secs: u32,
}

impl Default for ReviewPrefs {
    fn default() -> Self {
        ReviewPrefs { policy: ReviewPolicy::Review, timeout_secs: 300 }
    }
}

/// The reviewer as it runs now.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct ReviewStatus {
    pub prefs: ReviewPrefs,
    /// The socket Pi's extension connects to.
    pub socket: String,
    pub listening: bool,
    /// Why Arbor is not listening though the policy says it should (another reviewer holds the
    /// socket, a folder with the wrong owner, …), as one sentence with what to do.
    pub problem: Option<String>,
    /// Notes of the start, e.g. a socket left by a reviewer that is no longer running.
    pub notes: Vec<String>,
}

/// One request of Pi's, as the dialog's first paint needs it.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct ReviewPrompt {
    pub review_id: u32,
    pub round: u32,
    /// "compaction" | "branch_summary".
    pub kind: String,
    pub session_file: Option<String>,
    pub leaf_id: Option<String>,
    /// Milliseconds since the Unix epoch when Pi stops waiting (Pi's draft is used then).
    pub deadline_epoch_ms: f64,
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ReviewEvent {
    /// Pi asks: the dialog opens (or shows this round).
    Request { prompt: ReviewPrompt },
    /// A review is over: decided here, the time limit passed, or Pi stopped waiting.
    Ended {
        #[serde(rename = "reviewId")]
        review_id: u32,
        reason: String,
    },
    /// Under the *watch* policy: Pi was answered at once; the UI tells the person.
    Watched {
        kind: String,
        #[serde(rename = "sessionFile")]
        session_file: Option<String>,
        #[serde(rename = "tokensBefore")]
        tokens_before: Option<f64>,
        #[serde(rename = "summaryChars")]
        summary_chars: u32,
    },
}

/// What the review dialog shows.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct ReviewView {
    pub prompt: ReviewPrompt,
    /// The open session after reading what Pi appended (the UI redraws the graph from it); None
    /// when it was already up to date.
    pub opened: Option<OpenedSession>,
    pub model: Option<String>,
    pub pi_version: Option<String>,
    /// Pi's draft, whole.
    pub summary: String,
    pub sections: Vec<SectionView>,
    /// The drop alarm against the previous compaction and the retention of the span (a branch
    /// summary: retention only).
    pub check: Option<CheckView>,
    /// Why the draft could not be analysed (the session file is not readable, the cut is not on
    /// the path, …); the dialog still offers every choice.
    pub analysis_note: Option<String>,
    /// Compactions: the entry Pi would keep from; the span is what it summarizes.
    pub first_kept_entry_id: Option<String>,
    /// The cut before the person moved it (round 2 and later).
    pub moved_from: Option<String>,
    pub tokens_before: Option<f64>,
    pub is_split_turn: bool,
    pub span_entry_ids: Vec<String>,
    /// Estimated tokens of the kept part (first kept entry → leaf), Pi's estimate.
    pub kept_tokens: Option<f64>,
    /// Branch summaries: where Pi navigates to.
    pub target_id: Option<String>,
    pub custom_instructions: Option<String>,
    /// Valid cut points on the path (entry ids, oldest first) for "Move the cut".
    pub valid_cuts: Vec<String>,
    pub compute_ms: f64,
}

/// The person's choice, sent back to Pi.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
#[serde(tag = "action", rename_all = "camelCase")]
pub enum ReviewChoice {
    Accept,
    Edit {
        summary: String,
    },
    MoveCut {
        #[serde(rename = "firstKeptEntryId")]
        first_kept_entry_id: String,
    },
    Cancel,
    LetPiDecide,
}

/// A cut the person points at, before it is sent: valid (with what it summarizes and keeps) or
/// why not, with the nearest valid ones.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct CutPreview {
    pub entry_id: String,
    pub valid: bool,
    pub reason: Option<String>,
    pub nearest: Vec<String>,
    pub summarized_entries: u32,
    pub kept_tokens: Option<f64>,
    pub is_split_turn: bool,
}

/// One place the extension can live, as the Pi tab shows it.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionLocation {
    /// "global" | "project".
    pub scope: String,
    pub path: String,
    pub present: bool,
    /// The file there is Arbor's extension (any version).
    pub arbor: bool,
    pub version: Option<String>,
    /// It is this Arbor's extension, byte for byte.
    pub current: bool,
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct PiExtensionStatus {
    pub extension_version: String,
    pub locations: Vec<ExtensionLocation>,
    pub reviewer: ReviewStatus,
}

/// What Install did: the Pi tab's new status, and one sentence for the person (Pi checked it, or
/// why it was not checked, and any version warning).
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct InstallResult {
    pub status: PiExtensionStatus,
    pub note: String,
    /// The note is a warning (not checked, or another Pi than the tested one).
    pub warn: bool,
}
