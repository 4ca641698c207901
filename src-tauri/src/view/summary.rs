//! The summary workbench's DTOs: the `summary_analysis` results (sections,
//! diff, check, history) turned into specta types, and the marker facts of one summary entry
//! the graph fills in late (their cache is `state::markers`).

use crate::view::quality::ScoreView;
use crate::view::session::OpenedSession;
use pi_json::Value;
use serde::Serialize;
use session_engine::{Kind, Session};
use specta::Type;
use summary_analysis::{self as sm, Summary};

wire_enum!(ItemMarker from sm::Marker { Bullet, Numbered, Checkbox });
wire_enum!(
    /// What a section is for, from its heading (Pi's template or a known variant; `other`).
    SectionRole from sm::SectionRole { Goal, Constraints, Done, InProgress, Blocked, Decisions, NextSteps, CriticalContext, Other }
);
wire_enum!(FactKind from sm::FactKind { Path, Command, Error, Constraint });
wire_enum!(VersionKind from sm::EditKind { Original, Edit, Revert });
wire_enum!(WordOp from sm::WordOp { Equal, Insert, Delete });

/// Which kind of entry a summary is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Type)]
pub enum SummaryKind {
    #[serde(rename = "compaction")]
    Compaction,
    #[serde(rename = "branch_summary")]
    BranchSummary,
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct ItemView {
    pub text: String,
    pub marker: ItemMarker,
    pub checked: Option<bool>,
    pub depth: u32,
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct SectionView {
    /// Position in the summary's section list (the index `replace_section` takes).
    pub index: u32,
    pub title: String,
    /// Unique human name: "Progress › Done", "Turn Context › Original Request", "(untitled)".
    pub name: String,
    pub level: u32,
    pub role: SectionRole,
    pub items: Vec<ItemView>,
    pub text: String,
    /// The section's exact text, heading line included.
    pub raw: String,
    /// Part of the split turn's prefix summary (shown apart).
    pub turn_prefix: bool,
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct SpanView {
    pub count: u32,
    pub first_id: Option<String>,
    pub last_id: Option<String>,
    /// False for branch summaries: the branch left is inferred.
    pub exact: bool,
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct FactView {
    pub kind: FactKind,
    pub text: String,
    pub source_entry_id: String,
    pub mentioned: bool,
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct RetentionView {
    pub facts: Vec<FactView>,
    pub mentioned: u32,
    pub total: u32,
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct DroppedView {
    /// The previous summary's section name.
    pub section: String,
    /// The previous summary's wording.
    pub text: String,
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct MovedView {
    pub text: String,
    pub from: String,
    pub to: String,
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct CheckView {
    pub entry_id: String,
    pub previous_entry_id: Option<String>,
    pub dropped: Vec<DroppedView>,
    pub moved: Vec<MovedView>,
    pub retention: RetentionView,
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct VersionView {
    pub entry_id: String,
    pub kind: VersionKind,
    pub edited_from: Option<String>,
    pub timestamp: String,
}

/// Another summary of the session, for the diff's "any two" picker.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct SummaryRef {
    pub entry_id: String,
    pub kind: SummaryKind,
    pub timestamp: String,
    pub on_path: bool,
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct SummaryView {
    pub entry_id: String,
    pub kind: SummaryKind,
    pub timestamp: String,
    /// The whole summary text (the raw editor starts from it).
    pub text: String,
    pub sections: Vec<SectionView>,
    /// The file-list appendix exactly as written ("" when none).
    pub appendix_raw: String,
    pub read_files: Vec<String>,
    pub modified_files: Vec<String>,
    pub tokens_before: Option<f64>,
    pub first_kept_entry_id: Option<String>,
    /// False when `firstKeptEntryId` names no entry of this file.
    pub first_kept_found: bool,
    pub span: SpanView,
    /// "model" | "offline" | "hook" | "userEdit" | "pi" (inferred: nothing recorded, the session's
    /// model named in `author_detail`) | "unknown".
    pub author: String,
    /// "openai gpt-4o-mini", "edit of 1a2b3c4d", "revert to 1a2b3c4d", ...
    pub author_detail: String,
    pub turn_prefix: Option<String>,
    /// The chain this entry belongs to: original first, then each edit/revert in file order.
    pub history: Vec<VersionView>,
    pub editable: bool,
    /// Why it cannot be edited at Arbor's leaf (one sentence), when it cannot.
    pub edit_refusal: Option<String>,
    pub governing_entry_id: Option<String>,
    pub check: CheckView,
    /// What the Diff button compares this summary with (the engine's `diff_base`): an edit's
    /// original, a compaction's previous compaction, a branch summary's previous summary on its
    /// path. None when there is none (the button is disabled).
    pub diff_base_id: Option<String>,
    /// The Diff button's tooltip: what it compares with, or why there is nothing to compare.
    pub diff_base_note: String,
    /// Every summary entry of the session (at most 500), for the diff picker.
    pub others: Vec<SummaryRef>,
    /// Time spent computing this view in Rust (parse, span, check, history), for the status line.
    pub compute_ms: f64,
}

pub fn sections_of(sum: &Summary) -> Vec<SectionView> {
    sum.sections
        .iter()
        .enumerate()
        .map(|(i, s)| SectionView {
            index: i as u32,
            title: s.title.clone(),
            name: s.name.clone(),
            level: s.level as u32,
            role: sm::role_of(s).into(),
            items: s
                .items
                .iter()
                .map(|it| ItemView {
                    text: it.text.clone(),
                    marker: it.marker.into(),
                    checked: it.checked,
                    depth: it.depth as u32,
                })
                .collect(),
            text: s.text.clone(),
            raw: s.raw.clone(),
            // The split turn's part opens with a section named "Turn Context" (the marker), then "Turn Context › …".
            turn_prefix: sum.turn_prefix.is_some()
                && (s.name == "Turn Context" || s.name.starts_with("Turn Context › ")),
        })
        .collect()
}

pub fn retention_view(r: &sm::Retention) -> RetentionView {
    RetentionView {
        facts: r
            .facts
            .iter()
            .map(|f| FactView {
                kind: f.kind.into(),
                text: f.text.clone(),
                source_entry_id: f.source_entry_id.clone(),
                mentioned: f.mentioned,
            })
            .collect(),
        mentioned: r.mentioned as u32,
        total: r.total as u32,
    }
}

pub fn moved_view(m: &sm::Moved) -> MovedView {
    MovedView { text: m.text.clone(), from: m.from.clone(), to: m.to.clone() }
}

pub fn check_view(c: &sm::Check) -> CheckView {
    CheckView {
        entry_id: c.entry_id.clone(),
        previous_entry_id: c.previous_entry_id.clone(),
        dropped: c.dropped.iter().map(|d| DroppedView { section: d.section.clone(), text: d.text.clone() }).collect(),
        moved: c.moved.iter().map(moved_view).collect(),
        retention: retention_view(&c.retention),
    }
}

/// The check of a summary entry: the engine's, which holds the one rule for edits (judged as
/// their chain's origin) and for branch summaries (no drop alarm, only retention).
pub fn check_of(session: &Session, idx: usize) -> CheckView {
    check_view(&sm::check(session, idx))
}

/// Who wrote the summary at `idx`, from the entry (hook, user edit, offline, model). An entry
/// that records none of these was written by Pi (or another tool), which summarizes with the
/// session's model at that point: that model is named, as an inference.
pub fn author_of(session: &Session, idx: usize) -> (String, String) {
    let v = session.value(idx);
    let details = v.get("details");
    let d = |k: &str| details.and_then(|d| d.get(k));
    if v.get("fromHook").and_then(Value::as_bool) == Some(true) {
        return ("hook".into(), "a before-compact hook".into());
    }
    if let Some(kind) = d("editKind").and_then(Value::as_str) {
        let from = d("editedFrom").and_then(Value::as_str).unwrap_or("?");
        let detail = if kind == "revert" {
            format!(
                "revert of {from} to {}",
                d("revertedTo").or(d("editOrigin")).and_then(Value::as_str).unwrap_or("?")
            )
        } else {
            format!("edit of {from}")
        };
        return ("userEdit".into(), detail);
    }
    if d("offline").and_then(Value::as_bool) == Some(true) {
        return ("offline".into(), "Arbor's offline summarizer".into());
    }
    if let Some(sum) = d("summarizer") {
        let provider = sum.str_field("provider").unwrap_or("?");
        if provider == "offline" {
            return ("offline".into(), "Arbor's offline summarizer".into());
        }
        let model = sum.str_field("model").unwrap_or("");
        return ("model".into(), format!("{provider} {model}").trim().to_string());
    }
    match model_before(session, idx) {
        Some(model) => ("pi".into(), model),
        None => ("unknown".into(), String::new()),
    }
}

/// The model in effect just before entry `idx` on its path (the last `model_change` or assistant
/// message above it), as `provider/model`: the one Pi summarizes with.
fn model_before(session: &Session, idx: usize) -> Option<String> {
    let mut cur = session.parent_of(idx);
    let mut steps = 0;
    while let Some(c) = cur {
        if c == idx || steps > session.len() {
            return None; // a cycle
        }
        let v = session.value(c);
        let (provider, model) = match session.kind(c) {
            Kind::ModelChange => (v.str_field("provider"), v.str_field("modelId")),
            Kind::Message => match v.get("message") {
                Some(m) if m.str_field("role") == Some("assistant") => (m.str_field("provider"), m.str_field("model")),
                _ => (None, None),
            },
            _ => (None, None),
        };
        if let Some(model) = model {
            return Some(match provider {
                Some(p) => format!("{p}/{model}"),
                None => model.to_string(),
            });
        }
        steps += 1;
        cur = session.parent_of(c);
    }
    None
}

pub fn is_summary(session: &Session, idx: usize) -> bool {
    matches!(session.kind(idx), Kind::Compaction | Kind::BranchSummary)
}

fn kind_name(session: &Session, idx: usize) -> SummaryKind {
    if session.kind(idx) == Kind::Compaction {
        SummaryKind::Compaction
    } else {
        SummaryKind::BranchSummary
    }
}

/// The workbench view of summary entry `idx` at Arbor's leaf `leaf`.
pub fn summary_view(session: &Session, idx: usize, leaf: Option<usize>) -> SummaryView {
    let t0 = std::time::Instant::now();
    summary_view_checked(session, idx, leaf, check_of(session, idx), t0)
}

/// [`summary_view`] with the summary's check already made (kept between calls, see
/// `MarkerCache::check`); `t0` is when the view was asked for.
pub fn summary_view_checked(
    session: &Session,
    idx: usize,
    leaf: Option<usize>,
    check: CheckView,
    t0: std::time::Instant,
) -> SummaryView {
    let v = session.value(idx);
    let text = v.str_field("summary").unwrap_or("").to_string();
    let parsed = sm::parse(&text);
    let details = v.get("details");
    let files = |k: &str, fallback: &[String]| -> Vec<String> {
        details
            .and_then(|d| d.get(k))
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect())
            .unwrap_or_else(|| fallback.to_vec())
    };
    let span = sm::span(session, idx);
    let (author, author_detail) = author_of(session, idx);
    let first_kept = v.str_field("firstKeptEntryId").map(str::to_string);
    let mut on_path = vec![false; session.len()];
    for i in session.path(leaf) {
        on_path[i] = true;
    }
    let others = (0..session.len())
        .filter(|&i| is_summary(session, i))
        .take(500)
        .map(|i| SummaryRef {
            entry_id: session.id(i).to_string(),
            kind: kind_name(session, i),
            timestamp: session.entry(i).timestamp.to_string(),
            on_path: on_path[i],
        })
        .collect();
    let refusal = if session.kind(idx) == Kind::Compaction {
        sm::edit_refusal(session, idx, leaf)
    } else {
        Some(
            "Branch summaries cannot be edited here; only the compaction that governs the context at the leaf can."
                .to_string(),
        )
    };
    let is_edit = sm::edit_origin(session, idx).is_some();
    let base = sm::diff_base(session, idx);
    let diff_base_note = match (base, session.kind(idx) == Kind::Compaction) {
        (Some(b), _) if is_edit => format!("Compare with the original, {}", session.id(b)),
        (Some(b), true) => format!("Compare with the compaction before it on its path, {}", session.id(b)),
        (Some(b), false) => format!(
            "Compare with the summary before it on its path, {} ({})",
            session.id(b),
            if kind_name(session, b) == SummaryKind::Compaction { "compaction" } else { "branch summary" }
        ),
        (None, true) => "Nothing to compare with: this is the first compaction on its path".to_string(),
        (None, false) => {
            "Nothing to compare with: no compaction or branch summary comes before this branch summary on its path"
                .to_string()
        }
    };
    let history = sm::history(session, idx)
        .into_iter()
        .map(|h| VersionView {
            entry_id: h.entry_id,
            kind: h.kind.into(),
            edited_from: h.edited_from,
            timestamp: h.timestamp,
        })
        .collect();
    SummaryView {
        entry_id: session.id(idx).to_string(),
        kind: kind_name(session, idx),
        timestamp: session.entry(idx).timestamp.to_string(),
        sections: sections_of(&parsed),
        appendix_raw: parsed.appendix_raw.clone(),
        read_files: files("readFiles", &parsed.read_files),
        modified_files: files("modifiedFiles", &parsed.modified_files),
        tokens_before: v.num_field("tokensBefore"),
        first_kept_found: first_kept.as_deref().is_some_and(|k| session.index_of(k).is_some()),
        first_kept_entry_id: first_kept,
        span: SpanView {
            count: span.entry_ids.len() as u32,
            first_id: span.first_id,
            last_id: span.last_id,
            exact: span.exact,
        },
        author,
        author_detail,
        turn_prefix: parsed.turn_prefix.clone(),
        history,
        editable: refusal.is_none(),
        edit_refusal: refusal,
        governing_entry_id: sm::governing_compaction(session, leaf).map(|g| session.id(g).to_string()),
        check,
        diff_base_id: base.map(|b| session.id(b).to_string()),
        diff_base_note,
        others,
        text,
        compute_ms: t0.elapsed().as_secs_f64() * 1000.0,
    }
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct WordChangeView {
    pub op: WordOp,
    pub text: String,
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct RewordedView {
    pub from: String,
    pub to: String,
    pub words: Vec<WordChangeView>,
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct SectionDiffView {
    pub title: String,
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub unchanged: Vec<String>,
    pub reworded: Vec<RewordedView>,
    pub text_changed: bool,
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct SummaryDiffView {
    /// Entry ids (None for a text that is not an entry, such as a re-summary).
    pub from: Option<String>,
    pub to: Option<String>,
    pub sections: Vec<SectionDiffView>,
    pub moved: Vec<MovedView>,
    pub files_added: Vec<String>,
    pub files_removed: Vec<String>,
}

pub fn diff_view(from_id: Option<String>, to_id: Option<String>, from: &str, to: &str) -> SummaryDiffView {
    let d = sm::diff(&sm::parse(from), &sm::parse(to));
    SummaryDiffView {
        from: from_id,
        to: to_id,
        sections: d
            .sections
            .iter()
            .map(|s| SectionDiffView {
                title: s.title.clone(),
                added: s.added.clone(),
                removed: s.removed.clone(),
                unchanged: s.unchanged.clone(),
                reworded: s
                    .reworded
                    .iter()
                    .map(|r| RewordedView {
                        from: r.from.clone(),
                        to: r.to.clone(),
                        words: r
                            .words
                            .iter()
                            .map(|w| WordChangeView { op: w.op.into(), text: w.text.clone() })
                            .collect(),
                    })
                    .collect(),
                text_changed: s.text_changed,
            })
            .collect(),
        moved: d.moved.iter().map(moved_view).collect(),
        files_added: d.files_added,
        files_removed: d.files_removed,
    }
}

/// Marker facts of one summary entry, for the graph's late fill.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct MarkerFactsView {
    pub entry_id: String,
    pub dropped: u32,
    pub retained: u32,
    pub facts: u32,
}

/// What the UI refreshes after an edit or a revert.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct SummaryWrite {
    pub session: OpenedSession,
    /// The appended compaction entry (now Arbor's and Pi's leaf).
    pub entry_id: String,
    /// The entry it edits (or reverts).
    pub edited_from: String,
    pub view: SummaryView,
    /// False when the OS did not confirm the data reached the disk.
    pub synced: bool,
}

/// An alternative summary of the same span, written nowhere.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct ResummaryView {
    pub entry_id: String,
    pub text: String,
    pub sections: Vec<SectionView>,
    /// Existing summary → alternative.
    pub diff: SummaryDiffView,
    pub retention_existing: RetentionView,
    pub retention_new: RetentionView,
    /// The probe score by kind of the existing summary and of the alternative, over the same span.
    pub quality_existing: ScoreView,
    pub quality_new: ScoreView,
    /// "offline summarizer" or "openai gpt-4o-mini".
    pub summarizer: String,
    pub offline: bool,
    pub elapsed_ms: f64,
    pub notices: Vec<String>,
}
