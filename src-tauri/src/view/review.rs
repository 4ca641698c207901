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
    /// The dialog's "Add artifact ledger" box starts checked (default false: what Pi is sent
    /// is its draft or the person's edit alone). A state file from before this key reads as off.
    #[serde(default)]
    pub artifact_ledger: bool,
}

impl Default for ReviewPrefs {
    fn default() -> Self {
        ReviewPrefs { policy: ReviewPolicy::Review, timeout_secs: 300, artifact_ledger: false }
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
    /// What the artifact ledger would add to Pi's draft, with the probe scores by kind with and
    /// without it (None when the draft could not be analysed).
    pub ledger: Option<LedgerView>,
    pub compute_ms: f64,
}

/// The artifact ledger of a draft: its lines (empty when the draft mentions every artifact),
/// the text with it, what it costs, and what it answers.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct LedgerView {
    pub lines: Vec<String>,
    /// The draft with the ledger (the draft itself when there are no lines).
    pub text: String,
    /// Pi's estimate of the tokens the ledger adds (characters / 4, as Pi counts a summary).
    pub tokens_added: f64,
    pub without: ScoreByKind,
    pub with: ScoreByKind,
}

/// The probe score of a text over the draft's span, by kind (`summary_analysis::quality`).
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct ScoreByKind {
    /// 0..1, the mean over the kinds that have probes (None: the span gives no probe).
    pub score: Option<f64>,
    pub recall: ProbeCount,
    pub artifact: ProbeCount,
    pub decision: ProbeCount,
    pub continuation: ProbeCount,
}

#[derive(Debug, Clone, Copy, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct ProbeCount {
    pub probes: u32,
    pub answered: u32,
}

impl LedgerView {
    /// The ledger of `draft` over a draft's span (`entries`, and the compaction it replaces).
    pub fn of(session: &session_engine::Session, entries: &[usize], prev: Option<usize>, draft: &str) -> LedgerView {
        use summary_analysis::quality::{score_over, with_ledger_over};
        let text = with_ledger_over(session, entries, prev, draft);
        let without = score_over(session, entries, prev, draft);
        let with = score_over(session, entries, prev, &text);
        LedgerView::between(draft, text, &without, &with)
    }

    /// The ledger of `text` as the summary entry `idx` (an edit is judged as its chain's origin).
    pub fn of_entry(session: &session_engine::Session, idx: usize, text: &str) -> LedgerView {
        use summary_analysis::quality::score;
        let with_ledger = summary_analysis::with_ledger(session, idx, text);
        let (without, with) = (score(session, idx, text), score(session, idx, &with_ledger));
        LedgerView::between(text, with_ledger, &without, &with)
    }

    fn between(
        draft: &str,
        text: String,
        without: &summary_analysis::quality::Score,
        with: &summary_analysis::quality::Score,
    ) -> LedgerView {
        // The ledger's own lines are the items its section gained (a draft may have an
        // "Artifacts" section of its own, which the ledger extends).
        let items = |t: &str| -> Vec<String> {
            summary_analysis::parse(t)
                .sections
                .iter()
                .filter(|s| s.title.eq_ignore_ascii_case("artifacts"))
                .flat_map(|s| s.raw.lines().filter(|l| l.starts_with("- ")).map(str::to_string).collect::<Vec<_>>())
                .collect()
        };
        let had = items(draft).len();
        let lines = if text == draft { Vec::new() } else { items(&text).split_off(had) };
        LedgerView {
            tokens_added: summary_analysis::quality::text_tokens(&text) - summary_analysis::quality::text_tokens(draft),
            without: without.into(),
            with: with.into(),
            lines,
            text,
        }
    }
}

impl From<&summary_analysis::quality::Score> for ScoreByKind {
    fn from(s: &summary_analysis::quality::Score) -> Self {
        let k = |c: summary_analysis::quality::KindScore| ProbeCount {
            probes: c.probes.min(u32::MAX as usize) as u32,
            answered: c.answered.min(u32::MAX as usize) as u32,
        };
        ScoreByKind {
            score: s.score,
            recall: k(s.by_kind.recall),
            artifact: k(s.by_kind.artifact),
            decision: k(s.by_kind.decision),
            continuation: k(s.by_kind.continuation),
        }
    }
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
