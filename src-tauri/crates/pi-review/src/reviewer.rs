//! Who decides: the [`Reviewer`] trait (the app plugs its dialog in here), and the headless
//! reviewers of `arbor-cli pi serve` (accept at once, an edit command, a decide command).
use crate::protocol::{DecisionTag, ReviewKind, ReviewRequest, MAX_LINE_BYTES};
use serde::Deserialize;
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// What the reviewer decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Pi writes its draft (`fromHook: true`).
    Accept,
    /// Pi writes this summary instead of its draft, with the draft's cut and details.
    Edit(String),
    /// Draft again with the cut at this entry (compactions only; checked by the server first).
    MoveCut(String),
    /// Pi does not compact (a manual compaction fails with "Compaction cancelled"), or does not
    /// navigate.
    Cancel,
    /// Pi drafts again by itself and writes `fromHook: false`, as without the extension.
    LetPiDecide,
}

impl Decision {
    pub fn tag(&self) -> DecisionTag {
        match self {
            Decision::Accept => DecisionTag::Accept,
            Decision::Edit(_) => DecisionTag::Edit,
            Decision::MoveCut(_) => DecisionTag::MoveCut,
            Decision::Cancel => DecisionTag::Cancel,
            Decision::LetPiDecide => DecisionTag::PiDecides,
        }
    }
}

/// A decision and, optionally, one line for the person and the log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    pub decision: Decision,
    pub note: Option<String>,
}

impl Verdict {
    pub fn with_note(decision: Decision, note: impl Into<String>) -> Self {
        Verdict { decision, note: Some(note.into()) }
    }
}

impl From<Decision> for Verdict {
    fn from(decision: Decision) -> Self {
        Verdict { decision, note: None }
    }
}

/// One review as the reviewer sees it: the request (Pi's draft and facts), when the server stops
/// waiting, and whether the client has gone (Pi aborted, or gave up waiting).
pub struct Review {
    pub request: ReviewRequest,
    pub deadline: Instant,
    cancelled: Arc<AtomicBool>,
}

impl Review {
    pub fn new(request: ReviewRequest, deadline: Instant, cancelled: Arc<AtomicBool>) -> Self {
        Review { request, deadline, cancelled }
    }
    /// True once the server stopped waiting for this review: the time limit passed or the client
    /// closed the connection. A reviewer should stop then; its verdict is ignored.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }
    pub fn remaining(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }
}

/// Decides on a review. Called on a thread of its own for each request; the server enforces the
/// time limit, so a reviewer that takes longer only has its verdict ignored.
pub trait Reviewer: Send + Sync {
    fn review(&self, review: &Review) -> Verdict;
}

impl<F: Fn(&Review) -> Verdict + Send + Sync> Reviewer for F {
    fn review(&self, review: &Review) -> Verdict {
        self(review)
    }
}

/// Accepts every draft at once (`--policy watch`, and `review` without a command).
pub struct AcceptAll;

impl Reviewer for AcceptAll {
    fn review(&self, _review: &Review) -> Verdict {
        Decision::Accept.into()
    }
}

/// Pipes Pi's draft through a shell command, like a git hook: its standard output is the new
/// summary. Empty output, a non-zero exit, or no end before the time limit: Pi's draft, with the
/// reason as the note. The command gets `ARBOR_KIND`, `ARBOR_SESSION_FILE`, `ARBOR_SESSION_ID`,
/// `ARBOR_LEAF_ID`, `ARBOR_FIRST_KEPT_ENTRY_ID`, `ARBOR_TOKENS_BEFORE`, `ARBOR_ROUND`.
pub struct EditCommand {
    pub command: String,
}

impl Reviewer for EditCommand {
    fn review(&self, review: &Review) -> Verdict {
        let draft = &review.request.draft.summary;
        match run_command(&self.command, draft.as_bytes(), &review.request, review) {
            Err(why) => Verdict::with_note(Decision::Accept, format!("edit command: {why}; Pi's draft is used")),
            Ok(out) => {
                let text = String::from_utf8_lossy(&out);
                let text = text.strip_suffix("\r\n").or_else(|| text.strip_suffix('\n')).unwrap_or(&text);
                if text.trim().is_empty() {
                    Verdict::with_note(Decision::Accept, "edit command printed nothing; Pi's draft is used")
                } else if text == draft {
                    Decision::Accept.into()
                } else {
                    Decision::Edit(text.to_string()).into()
                }
            }
        }
    }
}

/// Hands the whole request (one JSON line) to a shell command, which prints the decision as JSON:
/// `{"decision":"accept"|"edit"|"move_cut"|"cancel"|"pi_decides", "summary"?, "firstKeptEntryId"?,
/// "note"?}`. Anything else: Pi's draft, with the reason as the note.
pub struct DecideCommand {
    pub command: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CommandDecision {
    decision: DecisionTag,
    #[serde(default)]
    summary: Option<String>,
    #[serde(default)]
    first_kept_entry_id: Option<String>,
    #[serde(default)]
    note: Option<String>,
}

impl Reviewer for DecideCommand {
    fn review(&self, review: &Review) -> Verdict {
        let mut input = match serde_json::to_vec(&review.request) {
            Ok(v) => v,
            Err(e) => return Verdict::with_note(Decision::Accept, format!("decide command: {e}")),
        };
        input.push(b'\n');
        let out = match run_command(&self.command, &input, &review.request, review) {
            Ok(out) => out,
            Err(why) => {
                return Verdict::with_note(Decision::Accept, format!("decide command: {why}; Pi's draft is used"))
            }
        };
        let d: CommandDecision = match serde_json::from_slice(&out) {
            Ok(d) => d,
            Err(e) => {
                return Verdict::with_note(
                    Decision::Accept,
                    format!("decide command printed no decision ({e}); Pi's draft is used"),
                )
            }
        };
        let decision = match (d.decision, d.summary, d.first_kept_entry_id) {
            (DecisionTag::Accept, _, _) => Decision::Accept,
            (DecisionTag::Cancel, _, _) => Decision::Cancel,
            (DecisionTag::PiDecides, _, _) => Decision::LetPiDecide,
            (DecisionTag::Edit, Some(s), _) => Decision::Edit(s),
            (DecisionTag::MoveCut, _, Some(id)) => Decision::MoveCut(id),
            (DecisionTag::Edit, None, _) => {
                return Verdict::with_note(
                    Decision::Accept,
                    "decide command chose edit without a summary; Pi's draft is used",
                )
            }
            (DecisionTag::MoveCut, _, None) => {
                return Verdict::with_note(
                    Decision::Accept,
                    "decide command chose move_cut without firstKeptEntryId; Pi's draft is used",
                )
            }
        };
        Verdict { decision, note: d.note }
    }
}

/// Runs `sh -c command` in its own process group with `input` on stdin and returns its stdout;
/// killed (the whole group) when the review's deadline passes or the review is cancelled.
fn run_command(command: &str, input: &[u8], req: &ReviewRequest, review: &Review) -> Result<Vec<u8>, String> {
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(command).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::inherit());
    let c = req.compaction.as_ref();
    let opt = |v: Option<&String>| v.cloned().unwrap_or_default();
    cmd.env("ARBOR_KIND", req.kind.as_str())
        .env("ARBOR_SESSION_FILE", opt(req.session.file.as_ref()))
        .env("ARBOR_SESSION_ID", opt(req.session.id.as_ref()))
        .env("ARBOR_LEAF_ID", opt(req.session.leaf_id.as_ref()))
        .env("ARBOR_ROUND", req.round.to_string())
        .env("ARBOR_FIRST_KEPT_ENTRY_ID", c.map(|c| c.first_kept_entry_id.clone()).unwrap_or_default())
        .env("ARBOR_TOKENS_BEFORE", c.and_then(|c| c.tokens_before).map(|t| t.to_string()).unwrap_or_default());
    if req.kind == ReviewKind::BranchSummary {
        cmd.env("ARBOR_TARGET_ID", req.branch.as_ref().map(|b| b.target_id.clone()).unwrap_or_default());
    }
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = cmd.spawn().map_err(|e| format!("cannot start `sh -c {command}` ({e})"))?;
    let pid = child.id();
    let mut stdin = child.stdin.take();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        if let Some(s) = stdin.as_mut() {
            // A command that does not read its input closes the pipe: not an error.
            let _ = s.write_all(&input);
        }
    });
    let mut stdout = child.stdout.take();
    let (out_tx, out_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut out = Vec::new();
        if let Some(s) = stdout.as_mut() {
            let _ = s.take(MAX_LINE_BYTES as u64 + 1).read_to_end(&mut out);
        }
        let _ = out_tx.send(out);
    });
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    let status = loop {
        if review.is_cancelled() {
            kill_group(pid);
            let _ = rx.recv();
            return Err("stopped: the review ended before the command did".to_string());
        }
        let step = review.remaining().min(Duration::from_millis(100));
        if step.is_zero() {
            kill_group(pid);
            let _ = rx.recv();
            return Err("killed at the review time limit".to_string());
        }
        match rx.recv_timeout(step) {
            Ok(status) => break status.map_err(|e| e.to_string())?,
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
            Err(mpsc::RecvTimeoutError::Disconnected) => return Err("lost the command".to_string()),
        }
    };
    let _ = writer.join();
    // A child of the command that still holds stdout open (a background job) is ended with the
    // group; while it lives, the group id cannot have been reused.
    let out = match out_rx.recv_timeout(Duration::from_millis(500)) {
        Ok(out) => out,
        Err(_) => {
            kill_group(pid);
            out_rx.recv().unwrap_or_default()
        }
    };
    if !status.success() {
        return Err(format!("exited with {status}"));
    }
    if out.len() > MAX_LINE_BYTES {
        return Err(format!("printed more than {MAX_LINE_BYTES} bytes"));
    }
    Ok(out)
}

#[cfg(unix)]
fn kill_group(pid: u32) {
    if let Some(p) = i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw) {
        let _ = rustix::process::kill_process_group(p, rustix::process::Signal::KILL);
    }
}

#[cfg(not(unix))]
fn kill_group(_pid: u32) {}
