//! Is this summary good enough to keep working from? The probe score ([`probes`]), citations
//! and unsupported items ([`cite`]), growth ([`growth`]), the cost of forgetting after a
//! compaction ([`forgetting`]) and the artifact ledger ([`ledger`]).
//!
//! Every function takes a summary entry (judged as its chain's origin, like the drop alarm) or,
//! through the `_over` forms, a span and a previous compaction given explicitly (a draft Pi has
//! not written yet; see [`crate::draft`]). All offline and deterministic; the judge mode that asks
//! a model lives in the summarizer, over these same probes.
pub mod cite;
pub mod forgetting;
pub mod growth;
pub mod ledger;
pub mod probes;

use crate::chain::{previous_compaction, summary_text};
use crate::span::span_indices;
use serde::Serialize;
use session_engine::session::{Kind, Session};

pub use cite::{Citations, Cited, Source};
pub use forgetting::{forgetting, forgetting_with, ActsMemo, Forgetting};
pub use growth::{text_tokens, Growth, GrowthFlag};
pub use probes::{ByKind, KindScore, Probe, ProbeKind, Score};

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Unsupported {
    pub section: String,
    pub text: String,
}

/// Everything a summary is judged by, offline.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Quality {
    pub entry_id: String,
    pub score: Option<f64>,
    pub by_kind: ByKind,
    pub probes: Vec<Probe>,
    pub unsupported: Vec<Unsupported>,
    pub growth: Growth,
    /// Compactions only.
    pub forgetting: Option<Forgetting>,
}

/// The span and the previous compaction a summary entry is judged against.
fn basis(session: &Session, idx: usize) -> (Vec<usize>, Option<usize>) {
    if idx >= session.len() {
        return (Vec::new(), None);
    }
    let (entries, _, _) = span_indices(session, idx);
    let prev = if session.kind(idx) == Kind::Compaction { previous_compaction(session, idx) } else { None };
    (entries, prev)
}

/// The probe score of `text` as the summary at `idx` (its own text, or an alternative).
pub fn score(session: &Session, idx: usize, text: &str) -> Score {
    let (entries, prev) = basis(session, idx);
    score_over(session, &entries, prev, text)
}

pub fn score_over(session: &Session, entries: &[usize], prev: Option<usize>, text: &str) -> Score {
    Score::from_probes(probes::probes_over(session, entries, prev, text))
}

/// The citations of `text` as the summary at `idx`.
pub fn citations(session: &Session, idx: usize, text: &str) -> Citations {
    let (entries, prev) = basis(session, idx);
    cite::cite_over(session, &entries, prev, text)
}

pub fn citations_over(session: &Session, entries: &[usize], prev: Option<usize>, text: &str) -> Citations {
    cite::cite_over(session, entries, prev, text)
}

/// Growth of `text` as the summary at `idx`.
pub fn growth(session: &Session, idx: usize, text: &str) -> Growth {
    let (entries, prev) = basis(session, idx);
    growth_over(session, &entries, prev, text)
}

pub fn growth_over(session: &Session, entries: &[usize], prev: Option<usize>, text: &str) -> Growth {
    growth::growth_over(session, entries, prev.map(|p| summary_text(session, p)), text)
}

/// The summary at `idx`, judged whole: score, unsupported items, growth and forgetting.
pub fn quality(session: &Session, idx: usize) -> Quality {
    let text = if idx < session.len() { summary_text(session, idx) } else { "" };
    let (entries, prev) = basis(session, idx);
    let mut q = quality_over(session, &entries, prev, text);
    q.entry_id = if idx < session.len() { session.id(idx).to_string() } else { String::new() };
    q.forgetting = forgetting(session, idx);
    q
}

/// [`quality`] of a text over an explicit span (a draft: no entry id, no forgetting yet).
pub fn quality_over(session: &Session, entries: &[usize], prev: Option<usize>, text: &str) -> Quality {
    let s = score_over(session, entries, prev, text);
    let c = cite::cite_over(session, entries, prev, text);
    Quality {
        entry_id: String::new(),
        score: s.score,
        by_kind: s.by_kind,
        probes: s.probes,
        unsupported: c
            .unsupported()
            .map(|c| Unsupported { section: c.section.clone(), text: c.text.clone() })
            .collect(),
        growth: growth_over(session, entries, prev, text),
        forgetting: None,
    }
}

/// `text` as the summary at `idx`, with the artifact ledger added (see [`ledger`]).
pub fn with_ledger(session: &Session, idx: usize, text: &str) -> String {
    let (entries, prev) = basis(session, idx);
    ledger::with_ledger_over(session, &entries, prev, text)
}

pub fn with_ledger_over(session: &Session, entries: &[usize], prev: Option<usize>, text: &str) -> String {
    ledger::with_ledger_over(session, entries, prev, text)
}
