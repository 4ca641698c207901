//! Summary quality as the UI receives it: the probe score by kind, the probes, citations and
//! unsupported items, growth and the cost of forgetting of one summary (the workbench's quality
//! panel), and the few numbers of every summary the graph's markers and the Timeline show
//! (computed in the background, `state::quality`).

use serde::{Deserialize, Serialize};
use session_engine::{Kind, Session};
use specta::Type;
use summary_analysis::quality as q;
use summary_analysis::{self as sm};

wire_enum!(
    /// What a probe asks after: an exact value, a path/command/error, a decision, or where the work stood.
    ProbeKind from q::ProbeKind { Recall, Artifact, Decision, Continuation }
);
wire_enum!(
    /// `notSmaller`: not smaller than what it replaced; `grew`: more than 1.5× the previous summary.
    GrowthFlag from q::GrowthFlag { NotSmaller, Grew }
);

/// Probes of one kind, and how many the summary answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct KindScoreView {
    pub probes: u32,
    pub answered: u32,
}

impl From<q::KindScore> for KindScoreView {
    fn from(k: q::KindScore) -> Self {
        KindScoreView { probes: k.probes as u32, answered: k.answered as u32 }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct ByKindView {
    pub recall: KindScoreView,
    pub artifact: KindScoreView,
    pub decision: KindScoreView,
    pub continuation: KindScoreView,
}

impl From<&q::ByKind> for ByKindView {
    fn from(b: &q::ByKind) -> Self {
        ByKindView {
            recall: b.recall.into(),
            artifact: b.artifact.into(),
            decision: b.decision.into(),
            continuation: b.continuation.into(),
        }
    }
}

/// The probe score of a text as a summary: overall (0..1, the mean over the kinds that have
/// probes; None when the span gives none) and by kind.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct ScoreView {
    pub score: Option<f64>,
    pub by_kind: ByKindView,
}

impl From<&q::Score> for ScoreView {
    fn from(s: &q::Score) -> Self {
        ScoreView { score: s.score, by_kind: (&s.by_kind).into() }
    }
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct ProbeView {
    pub kind: ProbeKind,
    pub question: String,
    pub expected: String,
    /// The span entry the probe was made from (the workbench reveals it on the graph).
    pub source_entry_id: String,
    pub answered: bool,
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct SourceView {
    pub entry_id: String,
    /// The share of the item's (rarity-weighted) words this entry holds, 0..1.
    pub score: f64,
}

/// One item of the summary (a list item or a line of free text) with the entries that support it.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct CitedView {
    /// The section's unique name (the workbench's card is found by it).
    pub section: String,
    pub text: String,
    pub sources: Vec<SourceView>,
    /// Nothing in the span says this (no source, and at least three content words).
    pub unsupported: bool,
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct UnsupportedView {
    pub section: String,
    pub text: String,
}

/// Tokens (Pi's estimate) of the summary, of what it replaced and of the summary before it.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct GrowthView {
    pub summary_tokens: f64,
    pub replaced_tokens: f64,
    pub previous_summary_tokens: Option<f64>,
    pub flag: Option<GrowthFlag>,
}

impl From<&q::Growth> for GrowthView {
    fn from(g: &q::Growth) -> Self {
        GrowthView {
            summary_tokens: g.summary_tokens,
            replaced_tokens: g.replaced_tokens,
            previous_summary_tokens: g.previous_summary_tokens,
            flag: g.flag.map(Into::into),
        }
    }
}

/// What the agent did again after a compaction because the summary did not carry it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct ForgettingView {
    /// Paths given to `read` again that had been read before the cut.
    pub reread_files: Vec<String>,
    /// Commands run again that had been run before the cut.
    pub rerun_commands: Vec<String>,
    /// Tool calls after the compaction before the first edit or write (all of them when none).
    pub calls_before_first_edit: u32,
    pub edited: bool,
    /// The same count from the start of the session: what the agent needs with nothing forgotten.
    pub baseline_calls_before_first_edit: Option<u32>,
    /// Entries below the compaction up to the next one (or the end).
    pub window_entries: u32,
    /// Files re-read plus commands re-run (what the Timeline marks).
    pub cost: u32,
}

impl From<&q::Forgetting> for ForgettingView {
    fn from(f: &q::Forgetting) -> Self {
        ForgettingView {
            reread_files: f.reread_files.clone(),
            rerun_commands: f.rerun_commands.clone(),
            calls_before_first_edit: f.calls_before_first_edit as u32,
            edited: f.edited,
            baseline_calls_before_first_edit: f.baseline_calls_before_first_edit.map(|n| n as u32),
            window_entries: f.window_entries as u32,
            cost: f.cost() as u32,
        }
    }
}

/// The workbench's quality panel and its citations for one summary entry.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct SummaryQualityView {
    pub entry_id: String,
    pub score: ScoreView,
    pub probes: Vec<ProbeView>,
    /// Every item of the summary with its sources, in the summary's order.
    pub citations: Vec<CitedView>,
    pub unsupported: Vec<UnsupportedView>,
    pub growth: GrowthView,
    /// Compactions only.
    pub forgetting: Option<ForgettingView>,
    /// Time spent computing this view in Rust.
    pub compute_ms: f64,
}

/// What the graph's marker and the Timeline show of one summary, computed for every summary of
/// the session in the background.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct QualityMarkView {
    pub entry_id: String,
    pub score: ScoreView,
    /// Compactions only, once computed at the file's current length (a compaction's mark comes
    /// first without it).
    pub forgetting: Option<ForgettingView>,
}

/// How the background computation of every summary's marks went.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct QualityWarm {
    /// Another call was already computing: it went on with this call's session version and now
    /// sends its marks to this call's channel; this one returned at once.
    pub joined: bool,
    /// Summaries this call scored.
    pub scored: u32,
    /// Compactions whose cost of forgetting this call computed.
    pub forgetting: u32,
    /// Summary entries in the session when it finished.
    pub summaries: u32,
    pub elapsed_ms: f64,
}

/// The quality panel of the summary at `idx`: one score, one citation pass (the unsupported
/// items are its items without a source, as `summary_analysis::quality` has them), growth and
/// forgetting (with `acts`, what earlier costs of forgetting read of the session).
pub fn summary_quality_view(session: &Session, idx: usize, acts: &sm::ActsMemo) -> SummaryQualityView {
    let t0 = std::time::Instant::now();
    let text = sm::summary_text(session, idx);
    let score = q::score(session, idx, text);
    let cites = q::citations(session, idx, text);
    let growth = q::growth(session, idx, text);
    let forgetting = sm::forgetting_with(session, idx, acts);
    SummaryQualityView {
        entry_id: session.id(idx).to_string(),
        score: (&score).into(),
        probes: score
            .probes
            .iter()
            .map(|p| ProbeView {
                kind: p.kind.into(),
                question: p.question.clone(),
                expected: p.expected.clone(),
                source_entry_id: p.source_entry_id.clone(),
                answered: p.answered,
            })
            .collect(),
        unsupported: cites
            .unsupported()
            .map(|c| UnsupportedView { section: c.section.clone(), text: c.text.clone() })
            .collect(),
        citations: cites
            .items
            .iter()
            .map(|c| CitedView {
                section: c.section.clone(),
                text: c.text.clone(),
                sources: c
                    .sources
                    .iter()
                    .map(|s| SourceView { entry_id: s.entry_id.clone(), score: s.score })
                    .collect(),
                unsupported: c.unsupported,
            })
            .collect(),
        growth: (&growth).into(),
        forgetting: forgetting.as_ref().map(Into::into),
        compute_ms: t0.elapsed().as_secs_f64() * 1000.0,
    }
}

/// The probe score of the summary at `idx` (its own text).
pub fn score_of(session: &Session, idx: usize) -> ScoreView {
    (&q::score(session, idx, sm::summary_text(session, idx))).into()
}

/// The cost of forgetting after the compaction at `idx` (None for a branch summary), with `acts`
/// (what earlier calls read of the session).
pub fn forgetting_of(session: &Session, idx: usize, acts: &sm::ActsMemo) -> Option<ForgettingView> {
    if session.kind(idx) != Kind::Compaction {
        return None;
    }
    sm::forgetting_with(session, idx, acts).as_ref().map(Into::into)
}

/// One probe as the judge model answered and graded it.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct JudgedProbeView {
    pub kind: String,
    pub question: String,
    pub expected: String,
    pub source_entry_id: String,
    pub answer: String,
    /// "correct", "partial", "wrong" or "unparseable" (counted as wrong).
    pub verdict: String,
    pub reason: String,
}

/// Judge mode's result: marked with the judge model, never mixed with the offline score.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct JudgedView {
    pub provider: String,
    pub model: String,
    /// `byKind.answered` counts correct answers; the score counts a partial one as half.
    pub score: ScoreView,
    pub probes: Vec<JudgedProbeView>,
    pub elapsed_ms: f64,
}

/// Judge mode's progress: probes graded of those asked.
#[derive(Debug, Clone, Serialize, Deserialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct JudgeProgressView {
    pub done: u32,
    pub total: u32,
}

pub fn judged_view(j: &summarizer::judge::Judged, elapsed_ms: f64) -> JudgedView {
    let word = |v: &summarizer::judge::Verdict| {
        serde_json::to_value(v).ok().and_then(|x| x.as_str().map(str::to_string)).unwrap_or_default()
    };
    JudgedView {
        provider: j.provider.clone(),
        model: j.model.clone(),
        score: ScoreView { score: j.score, by_kind: (&j.by_kind).into() },
        probes: j
            .probes
            .iter()
            .map(|p| JudgedProbeView {
                kind: p.kind.as_str().to_string(),
                question: p.question.clone(),
                expected: p.expected.clone(),
                source_entry_id: p.source_entry_id.clone(),
                answer: p.answer.clone(),
                verdict: word(&p.verdict),
                reason: p.reason.clone(),
            })
            .collect(),
        elapsed_ms,
    }
}
