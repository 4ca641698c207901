//! Pi's compactions and branch summaries reviewed before Pi writes them: the dialog's content
//! (Pi's draft as sections, the drop alarm and retention of the span it replaces, the cut on the
//! graph), the person's choice sent back to Pi, a moved cut's preview, a draft by Arbor's own
//! model, the policy, and the extension's install and status for the Pi tab. The waiting itself
//! is `state/review.rs`.

use super::sessions::open;
use super::summarize::{channel_progress, chosen, run_options};
use crate::error::{AppError, IpcResult};
use crate::state::app::AppState;
use crate::state::library::reload_if_open;
use crate::state::review::ReviewState;
use crate::state::state_file::ArborStateFile;
use crate::state::summarizer::{Running, SummarizerState};
use crate::view::review::*;
use crate::view::summarize::SummaryProgress;
use crate::view::summary::{check_view, sections_of};
use pi_review::cut::{check_cut, valid_cut_positions};
use pi_review::{ReviewKind, ReviewRequest};
use session_engine::context::{context_message, estimate_tokens};
use session_engine::{CompactionSettings, Session};
use std::path::Path;
use std::time::Instant;
use tauri::ipc::Channel;
use tauri::State;

/// At most this many valid cut points are listed (the newest): the dialog marks them near the
/// proposed cut; any other entry is still checked when the person picks it.
const MAX_LISTED_CUTS: usize = 2000;

fn ended(id: u32) -> AppError {
    AppError::Refused(format!("review {id} has ended: Pi went on without it"))
}

/// Pi's session file of a request, or why there is none.
fn session_file(req: &ReviewRequest) -> Result<&str, AppError> {
    req.session.file.as_deref().ok_or_else(|| {
        AppError::BadInput("Pi runs this session without a file (--no-session), so Arbor cannot show it".into())
    })
}

/// Opens Pi's session (or reads what Pi appended to it when it is the open one) and returns the
/// session the UI should draw when it changed.
fn bring_up(state: &AppState, file: &Path) -> Result<Option<crate::view::session::OpenedSession>, AppError> {
    let is_open = state.with_open(|o| Ok(o.path == file)).unwrap_or(false);
    if is_open {
        reload_if_open(state, file, true)
    } else {
        open(state, file, false).map(Some)
    }
}

/// Pi's estimate of the context from position `from` of `path` to its end.
fn tokens_from(session: &Session, path: &[usize], from: usize) -> f64 {
    path[from..].iter().filter_map(|&i| context_message(session, i)).map(|m| estimate_tokens(&m)).sum()
}

pub fn review_view(state: &AppState, review: &ReviewState, id: u32) -> Result<ReviewView, AppError> {
    let started = Instant::now();
    let (req, prompt) = review.request(id).ok_or_else(|| ended(id))?;
    let draft = req.draft.summary.clone();
    let compaction = req.compaction.as_ref();
    let mut view = ReviewView {
        prompt,
        opened: None,
        model: match (&req.model.provider, &req.model.id) {
            (Some(p), Some(m)) => Some(format!("{p}/{m}")),
            (None, Some(m)) => Some(m.clone()),
            _ => None,
        },
        pi_version: req.pi.version.clone(),
        sections: sections_of(&summary_analysis::parse(&draft)),
        summary: draft.clone(),
        check: None,
        analysis_note: None,
        first_kept_entry_id: compaction.map(|c| c.first_kept_entry_id.clone()),
        moved_from: compaction.and_then(|c| c.moved_from.clone()),
        tokens_before: compaction.and_then(|c| c.tokens_before),
        is_split_turn: compaction.is_some_and(|c| c.is_split_turn),
        span_entry_ids: Vec::new(),
        kept_tokens: None,
        target_id: req.branch.as_ref().map(|b| b.target_id.clone()),
        custom_instructions: compaction
            .and_then(|c| c.custom_instructions.clone())
            .or_else(|| req.branch.as_ref().and_then(|b| b.custom_instructions.clone())),
        valid_cuts: Vec::new(),
        ledger: None,
        compute_ms: 0.0,
    };
    let file = match session_file(&req) {
        Ok(f) => Path::new(f).to_path_buf(),
        Err(e) => {
            view.analysis_note = Some(e.to_string());
            return Ok(view);
        }
    };
    match bring_up(state, &file) {
        Ok(opened) => view.opened = opened,
        Err(e) => {
            view.analysis_note =
                Some(format!("Arbor cannot open {} ({e}); the choices still reach Pi", file.display()));
            return Ok(view);
        }
    }
    let note = state.with_open(|o| {
        if o.path != file {
            return Ok(Some("another session was opened meanwhile".to_string()));
        }
        let session = &o.session;
        let leaf_id = req.session.leaf_id.as_deref().unwrap_or_default();
        let Some(leaf) = session.index_of(leaf_id) else {
            return Ok(Some(format!(
                "Pi's leaf {leaf_id} is not in the file yet, so the draft is shown without its span"
            )));
        };
        match req.kind {
            ReviewKind::Compaction => {
                let first_kept = view.first_kept_entry_id.clone().unwrap_or_default();
                let (span, check) =
                    match summary_analysis::draft::check_compaction_draft(session, leaf, &first_kept, &draft) {
                        Ok(r) => r,
                        Err(why) => return Ok(Some(why)),
                    };
                view.span_entry_ids = span.entries.iter().map(|&i| session.id(i).to_string()).collect();
                view.check = Some(check_view(&check));
                view.ledger = Some(LedgerView::of(session, &span.entries, span.previous, &draft));
                let path = session.path(Some(leaf));
                if let Some(at) = path.iter().position(|&i| session.id(i) == first_kept) {
                    view.kept_tokens = Some(tokens_from(session, &path, at));
                }
                let cuts = valid_cut_positions(session, &path);
                let skip = cuts.len().saturating_sub(MAX_LISTED_CUTS);
                view.valid_cuts = cuts[skip..].iter().map(|&p| session.id(path[p]).to_string()).collect();
            }
            ReviewKind::BranchSummary => {
                let b = req.branch.as_ref();
                let old = b.and_then(|b| b.old_leaf_id.as_deref()).and_then(|id| session.index_of(id)).unwrap_or(leaf);
                let Some(target) = b.and_then(|b| session.index_of(&b.target_id)) else {
                    return Ok(Some("the entry Pi navigates to is not in the file".to_string()));
                };
                let (entries, check) = summary_analysis::draft::check_branch_draft(session, old, target, &draft);
                view.span_entry_ids = entries.iter().map(|&i| session.id(i).to_string()).collect();
                view.check = Some(check_view(&check));
                view.ledger = Some(LedgerView::of(session, &entries, None, &draft));
            }
        }
        Ok(None)
    })?;
    view.analysis_note = note;
    view.compute_ms = started.elapsed().as_secs_f64() * 1000.0;
    Ok(view)
}

/// Where a cut at `entry_id` would fall on the reviewed path: valid (what it summarizes and keeps)
/// or why not, with the nearest valid cut points.
pub fn cut_preview(state: &AppState, review: &ReviewState, id: u32, entry_id: &str) -> Result<CutPreview, AppError> {
    let (req, _) = review.request(id).ok_or_else(|| ended(id))?;
    if req.kind != ReviewKind::Compaction {
        return Err(AppError::Refused("a branch summary has no cut to move".into()));
    }
    let file = Path::new(session_file(&req)?).to_path_buf();
    state.with_open(|o| {
        if o.path != file {
            return Err(AppError::Refused("open Pi's session to move the cut".into()));
        }
        let session = &o.session;
        let leaf_id = req.session.leaf_id.as_deref().unwrap_or_default();
        let leaf = session.index_of(leaf_id).ok_or_else(|| AppError::UnknownEntry(leaf_id.to_string()))?;
        let path = session.path(Some(leaf));
        Ok(match check_cut(session, &path, entry_id) {
            Ok(cut) => {
                let end = cut.turn_start.filter(|_| cut.is_split_turn).unwrap_or(cut.position);
                CutPreview {
                    entry_id: entry_id.to_string(),
                    valid: true,
                    reason: None,
                    nearest: Vec::new(),
                    summarized_entries: path[cut.span_start..end.max(cut.span_start)].len() as u32,
                    kept_tokens: Some(tokens_from(session, &path, cut.position)),
                    is_split_turn: cut.is_split_turn,
                }
            }
            Err(bad) => CutPreview {
                entry_id: entry_id.to_string(),
                valid: false,
                reason: Some(bad.reason),
                nearest: bad.nearest,
                summarized_entries: 0,
                kept_tokens: None,
                is_split_turn: false,
            },
        })
    })
}

/// The span a draft of `req` stands for in `session` and the compaction it replaces, as the
/// dialog judges it: a compaction's from Pi's leaf and cut, a branch summary's from the leaf Pi
/// leaves to its target.
fn draft_basis(session: &Session, req: &ReviewRequest) -> Result<(Vec<usize>, Option<usize>), String> {
    let leaf_id = req.session.leaf_id.as_deref().unwrap_or_default();
    let leaf = session.index_of(leaf_id).ok_or_else(|| format!("Pi's leaf {leaf_id} is not in the file"))?;
    match req.kind {
        ReviewKind::Compaction => {
            let first_kept = req.compaction.as_ref().map(|c| c.first_kept_entry_id.as_str()).unwrap_or_default();
            let span = summary_analysis::draft::compaction_span(session, leaf, first_kept)?;
            Ok((span.entries, span.previous))
        }
        ReviewKind::BranchSummary => {
            let b = req.branch.as_ref();
            let old = b.and_then(|b| b.old_leaf_id.as_deref()).and_then(|id| session.index_of(id)).unwrap_or(leaf);
            let target = b
                .and_then(|b| session.index_of(&b.target_id))
                .ok_or_else(|| "the entry Pi navigates to is not in the file".to_string())?;
            Ok((session_engine::branch::collect_branch_entries(session, Some(old), target).entries, None))
        }
    }
}

/// `choice` with the artifact ledger added to the text Pi is sent: an accepted draft becomes an
/// edit when the ledger adds lines (else it stays Pi's own draft), an edit gets the ledger of the
/// edited text. Other choices send no text and stay as they are.
fn with_ledger(state: &AppState, req: &ReviewRequest, choice: ReviewChoice) -> Result<ReviewChoice, AppError> {
    let text = match &choice {
        ReviewChoice::Accept => req.draft.summary.clone(),
        // An empty edit is refused as it is, not sent as a ledger alone.
        ReviewChoice::Edit { summary } if !summary.trim().is_empty() => summary.clone(),
        _ => return Ok(choice),
    };
    let file = Path::new(session_file(req)?).to_path_buf();
    let added = state.with_open(|o| {
        if o.path != file {
            return Err(AppError::Refused("open Pi's session to add the artifact ledger".into()));
        }
        let (entries, prev) = draft_basis(&o.session, req)
            .map_err(|why| AppError::Refused(format!("the artifact ledger cannot be added: {why}")))?;
        Ok(summary_analysis::quality::with_ledger_over(&o.session, &entries, prev, &text))
    })?;
    Ok(match choice {
        ReviewChoice::Accept if added == text => ReviewChoice::Accept,
        _ => ReviewChoice::Edit { summary: added },
    })
}

/// Sends the person's choice to Pi, with the artifact ledger added to its text when `ledger`.
/// A moved cut is checked first (Pi does not check it).
pub fn decide_with_ledger(
    state: &AppState,
    review: &ReviewState,
    id: u32,
    choice: ReviewChoice,
    ledger: bool,
) -> Result<(), AppError> {
    let choice = if ledger {
        let (req, _) = review.request(id).ok_or_else(|| ended(id))?;
        with_ledger(state, &req, choice)?
    } else {
        choice
    };
    decide(state, review, id, choice)
}

/// Sends the person's choice to Pi. A moved cut is checked first (Pi does not check it).
pub fn decide(state: &AppState, review: &ReviewState, id: u32, choice: ReviewChoice) -> Result<(), AppError> {
    if let ReviewChoice::MoveCut { first_kept_entry_id } = &choice {
        let p = cut_preview(state, review, id, first_kept_entry_id)?;
        if !p.valid {
            return Err(AppError::Refused(format!(
                "cannot keep from {first_kept_entry_id}: {}{}",
                p.reason.unwrap_or_default(),
                if p.nearest.is_empty() { String::new() } else { format!("; nearest valid: {}", p.nearest.join(", ")) }
            )));
        }
    }
    if let ReviewChoice::Edit { summary } = &choice {
        if summary.trim().is_empty() {
            return Err(AppError::BadInput("the edited summary is empty; write one or accept Pi's draft".into()));
        }
    }
    if review.decide(id, choice) {
        Ok(())
    } else {
        Err(ended(id))
    }
}

/// Pi's compaction settings as the extension sent them (Pi's defaults for what is missing).
fn settings_of(req: &ReviewRequest) -> CompactionSettings {
    let mut s = CompactionSettings::default();
    if let Some(v) = req.compaction.as_ref().and_then(|c| c.settings.as_ref()) {
        if let Some(r) = v.get("reserveTokens").and_then(|x| x.as_f64()) {
            s.reserve_tokens = r;
        }
        if let Some(k) = v.get("keepRecentTokens").and_then(|x| x.as_f64()) {
            s.keep_recent_tokens = k;
        }
    }
    s
}

/// A draft by the model chosen in the Model tab (or the offline summarizer) of what Pi asks
/// about: the same compaction (the span of this round's cut) or the same branch summary. Nothing
/// is written; the person may send it to Pi as an edit, which Pi writes with this round's cut. A
/// draft for another cut would not match the cut Pi writes, so a moved cut goes to Pi first and
/// Arbor drafts in the round that follows.
pub async fn arbor_draft(
    state: &AppState,
    st: &SummarizerState,
    review: &ReviewState,
    id: u32,
    progress: Option<summarizer::ProgressFn>,
) -> Result<String, AppError> {
    let (req, _) = review.request(id).ok_or_else(|| ended(id))?;
    let file = Path::new(session_file(&req)?).to_path_buf();
    let leaf_id = req.session.leaf_id.clone().unwrap_or_default();
    let c = chosen(st)?;
    match req.kind {
        ReviewKind::Compaction => {
            let keep_from = req.compaction.as_ref().map(|c| c.first_kept_entry_id.clone()).unwrap_or_default();
            let settings = settings_of(&req);
            let job = state.with_open(|o| {
                if o.path != file {
                    return Err(AppError::Refused("open Pi's session first".into()));
                }
                let leaf = o.session.index_of(&leaf_id).ok_or_else(|| AppError::UnknownEntry(leaf_id.clone()))?;
                pi_review::cut::plan_compaction_keep_from(&o.session, Some(leaf), &settings, &keep_from)
                    .map_err(|e| AppError::Refused(e.to_string()))
            })?;
            let instructions = req.compaction.as_ref().and_then(|c| c.custom_instructions.clone());
            let mut opts = run_options(st, &c, instructions.as_deref(), false)?;
            // The draft goes to Pi, which writes its own entry: no hook of Arbor's runs on it.
            opts.hook = None;
            let (_running, cancel) = Running::start(st)?;
            let out =
                summarizer::run::summarize_compaction(&job, &c.backend, &opts, &cancel, progress.as_ref()).await?;
            Ok(out.summary)
        }
        ReviewKind::BranchSummary => {
            let branch = req.branch.clone().unwrap_or_default();
            let old_leaf = branch.old_leaf_id.clone().unwrap_or(leaf_id);
            // Pi budgets the branch by the window less branchSummary.reserveTokens (16,384 unless
            // set); the window is the model that writes this draft.
            let window = c.context_window.unwrap_or(200_000) as f64;
            let budget = session_engine::branch::branch_budget(window, 16_384.0).max(0.0);
            let job = state.with_open(|o| {
                if o.path != file {
                    return Err(AppError::Refused("open Pi's session first".into()));
                }
                summarizer::run::plan_navigation(&o.session, Some(&old_leaf), &branch.target_id, true, budget)
                    .map_err(AppError::from)
            })?;
            let mut opts = run_options(st, &c, branch.custom_instructions.as_deref(), true)?;
            opts.hook = None;
            opts.replace_instructions = branch.replace_instructions;
            let (_running, cancel) = Running::start(st)?;
            let out = summarizer::run::summarize_branch(
                &job,
                &c.backend,
                &opts,
                branch.label.as_deref(),
                &cancel,
                progress.as_ref(),
            )
            .await?;
            out.map(|b| b.summary)
                .ok_or_else(|| AppError::Refused("the branch Pi leaves has nothing to summarize".into()))
        }
    }
}

fn location_view(l: pi_review::install::LocationStatus) -> ExtensionLocation {
    ExtensionLocation {
        scope: match l.scope {
            pi_review::install::Scope::Global => "global".into(),
            pi_review::install::Scope::Project => "project".into(),
        },
        path: l.path,
        present: l.present,
        arbor: l.arbor,
        version: l.version,
        current: l.current,
    }
}

pub fn extension_status(review: &ReviewState, project: Option<&str>) -> PiExtensionStatus {
    use pi_review::install::{global_location, location_status, project_location};
    let mut locations = vec![location_view(location_status(&global_location()))];
    if let Some(p) = project.filter(|p| !p.is_empty()) {
        locations.push(location_view(location_status(&project_location(Path::new(p)))));
    }
    PiExtensionStatus {
        extension_version: pi_review::install::extension_version().to_string(),
        locations,
        reviewer: review.status(),
    }
}

fn location_for(project: Option<&str>) -> pi_review::install::Location {
    match project.filter(|p| !p.is_empty()) {
        Some(p) => pi_review::install::project_location(Path::new(p)),
        None => pi_review::install::global_location(),
    }
}

pub fn load_prefs(state: &AppState) -> ReviewPrefs {
    ArborStateFile::load(&state.state_file()).review.unwrap_or_default()
}

pub fn save_prefs(state: &AppState, review: &ReviewState, prefs: ReviewPrefs) -> Result<ReviewStatus, AppError> {
    if prefs.timeout_secs == 0 || prefs.timeout_secs > 24 * 3600 {
        return Err(AppError::BadInput("the time limit is between 1 second and 24 hours".into()));
    }
    let mut file = ArborStateFile::load(&state.state_file());
    file.review = Some(prefs.clone());
    file.save(&state.state_file())?;
    Ok(review.apply(prefs))
}

#[tauri::command]
#[specta::specta]
pub fn review_subscribe(review: State<'_, ReviewState>, on_event: Channel<ReviewEvent>) -> IpcResult<ReviewStatus> {
    review.subscribe(std::sync::Arc::new(move |e| on_event.send(e).is_ok()));
    Ok(review.status())
}

#[tauri::command]
#[specta::specta]
pub async fn get_review_view(
    state: State<'_, AppState>,
    review: State<'_, ReviewState>,
    review_id: u32,
) -> IpcResult<ReviewView> {
    Ok(review_view(&state, &review, review_id)?)
}

#[tauri::command]
#[specta::specta]
pub fn review_cut_preview(
    state: State<'_, AppState>,
    review: State<'_, ReviewState>,
    review_id: u32,
    entry_id: String,
) -> IpcResult<CutPreview> {
    Ok(cut_preview(&state, &review, review_id, &entry_id)?)
}

#[tauri::command]
#[specta::specta]
pub fn review_decide(
    state: State<'_, AppState>,
    review: State<'_, ReviewState>,
    review_id: u32,
    choice: ReviewChoice,
    ledger: bool,
) -> IpcResult<()> {
    Ok(decide_with_ledger(&state, &review, review_id, choice, ledger)?)
}

#[tauri::command]
#[specta::specta]
pub async fn review_arbor_draft(
    state: State<'_, AppState>,
    st: State<'_, SummarizerState>,
    review: State<'_, ReviewState>,
    review_id: u32,
    on_progress: Channel<SummaryProgress>,
) -> IpcResult<String> {
    Ok(arbor_draft(&state, &st, &review, review_id, Some(channel_progress(on_progress))).await?)
}

#[tauri::command]
#[specta::specta]
pub fn get_pi_extension_status(
    review: State<'_, ReviewState>,
    project: Option<String>,
) -> IpcResult<PiExtensionStatus> {
    Ok(extension_status(&review, project.as_deref()))
}

/// Installs the extension and starts the user's Pi once with it (Pi exits at start-up on an
/// extension it cannot load, so a file Pi refuses is taken back): the same as
/// `arbor-cli pi install-extension`.
pub fn install_extension(review: &ReviewState, project: Option<&str>) -> Result<InstallResult, AppError> {
    use pi_review::pi_check::CheckStatus;
    let loc = location_for(project);
    // Install is the person's explicit choice: an older or changed copy of Arbor's own extension
    // is replaced (and put back if Pi cannot load the new one); another file is never touched.
    let ours = pi_review::install::location_status(&loc).arbor;
    let report = pi_review::install::install_checked(&loc, ours, true).map_err(|e| AppError::Refused(e.to_string()))?;
    let c = &report.check;
    let (mut note, mut warn) = match c.status {
        CheckStatus::Passed => (
            format!(
                "Installed; Pi {} starts with it (checked in {} ms). Pi loads it at its next start.",
                c.pi_version.as_deref().unwrap_or("?"),
                c.elapsed_ms.unwrap_or(0)
            ),
            false,
        ),
        _ => {
            (format!("Installed, but not checked: {}.", c.problem.as_deref().unwrap_or("Pi could not be asked")), true)
        }
    };
    if let Some(w) = &c.warning {
        note.push_str(&format!(" {w}."));
        warn = true;
    }
    Ok(InstallResult { status: extension_status(review, project), note, warn })
}

#[tauri::command]
#[specta::specta]
pub async fn install_pi_extension(review: State<'_, ReviewState>, project: Option<String>) -> IpcResult<InstallResult> {
    // Starting Pi takes seconds: off the main thread, so the window stays live meanwhile.
    let review = review.inner().clone();
    let done = tauri::async_runtime::spawn_blocking(move || install_extension(&review, project.as_deref()))
        .await
        .map_err(|e| AppError::Refused(format!("the install stopped ({e})")))?;
    Ok(done?)
}

#[tauri::command]
#[specta::specta]
pub fn remove_pi_extension(review: State<'_, ReviewState>, project: Option<String>) -> IpcResult<PiExtensionStatus> {
    pi_review::install::uninstall(&location_for(project.as_deref())).map_err(|e| AppError::Refused(e.to_string()))?;
    Ok(extension_status(&review, project.as_deref()))
}

#[tauri::command]
#[specta::specta]
pub fn save_review_prefs(
    state: State<'_, AppState>,
    review: State<'_, ReviewState>,
    prefs: ReviewPrefs,
) -> IpcResult<ReviewStatus> {
    Ok(save_prefs(&state, &review, prefs)?)
}
