//! The app as Pi's reviewer: the socket server of `pi-review` runs while the policy is *review*
//! or *watch*, and each request Pi sends waits here, as a pending review, until the person
//! decides in the dialog, the time limit passes or Pi stops waiting. The UI subscribes with a
//! channel and is sent every pending request again when it subscribes (after a reload), so a
//! request that arrived before the window was ready is not lost.
//!
//! The reviewer thread never touches the session: the dialog's content is built by the command
//! that asks for it (`commands/review.rs`), on the UI's call, so Pi's wait costs nothing while
//! nobody looks.

use super::lock;
use crate::view::review::{ReviewChoice, ReviewEvent, ReviewPolicy, ReviewPrefs, ReviewPrompt, ReviewStatus};
use pi_review::reviewer::{Decision, Review, Reviewer, Verdict};
use pi_review::server::{LogRecord, Logger, Server, ServerConfig};
use pi_review::{Policy, ReviewRequest};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Where events go once the UI has subscribed; `false` means the receiver is gone.
pub type ReviewSink = Arc<dyn Fn(ReviewEvent) -> bool + Send + Sync>;

/// A request Pi is waiting on.
pub struct Pending {
    pub request: ReviewRequest,
    pub prompt: ReviewPrompt,
    choice: Option<ReviewChoice>,
}

#[derive(Default)]
struct Inner {
    /// Brings the window forward when Pi asks (set by the app; tests leave it unset).
    attention: Option<Arc<dyn Fn() + Send + Sync>>,
    server: Option<Server>,
    problem: Option<String>,
    notes: Vec<String>,
    prefs: ReviewPrefs,
    sink: Option<ReviewSink>,
    pending: BTreeMap<u32, Pending>,
    next_id: u32,
}

#[derive(Default)]
struct Core {
    inner: Mutex<Inner>,
    decided: Condvar,
}

/// Managed by the app.
#[derive(Clone, Default)]
pub struct ReviewState {
    core: Arc<Core>,
    socket: Arc<Mutex<Option<PathBuf>>>,
}

fn epoch_ms(at: Instant) -> f64 {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let left = at.saturating_duration_since(Instant::now());
    (now + left).as_secs_f64() * 1000.0
}

impl Core {
    fn send(&self, inner: &mut Inner, event: ReviewEvent) {
        if let Some(sink) = &inner.sink {
            if !sink(event) {
                inner.sink = None;
            }
        }
    }
}

struct AppReviewer(Arc<Core>);

impl Reviewer for AppReviewer {
    fn review(&self, review: &Review) -> Verdict {
        let core = &self.0;
        let id = {
            let mut g = lock(&core.inner);
            g.next_id += 1;
            let id = g.next_id;
            let req = &review.request;
            let prompt = ReviewPrompt {
                review_id: id,
                round: req.round,
                kind: req.kind.as_str().to_string(),
                session_file: req.session.file.clone(),
                leaf_id: req.session.leaf_id.clone(),
                deadline_epoch_ms: epoch_ms(review.deadline),
            };
            g.pending.insert(id, Pending { request: req.clone(), prompt: prompt.clone(), choice: None });
            core.send(&mut g, ReviewEvent::Request { prompt });
            if let Some(attention) = g.attention.clone() {
                drop(g);
                attention();
            }
            id
        };
        let mut g = lock(&core.inner);
        loop {
            if let Some(choice) = g.pending.get_mut(&id).and_then(|p| p.choice.take()) {
                g.pending.remove(&id);
                core.send(&mut g, ReviewEvent::Ended { review_id: id, reason: "decided".into() });
                return verdict_of(choice);
            }
            if review.is_cancelled() {
                g.pending.remove(&id);
                let reason = if review.remaining().is_zero() {
                    "The time limit passed: Pi wrote its own draft."
                } else {
                    "Pi stopped waiting (aborted, or its own limit passed): nothing was sent."
                };
                core.send(&mut g, ReviewEvent::Ended { review_id: id, reason: reason.into() });
                // The server no longer waits for this verdict.
                return Decision::Accept.into();
            }
            g = core
                .decided
                .wait_timeout(g, Duration::from_millis(100))
                .map(|(g, _)| g)
                .unwrap_or_else(|p| p.into_inner().0);
        }
    }
}

fn verdict_of(choice: ReviewChoice) -> Verdict {
    match choice {
        ReviewChoice::Accept => Decision::Accept.into(),
        ReviewChoice::Edit { summary } => Verdict::with_note(Decision::Edit(summary), "edited in Arbor"),
        ReviewChoice::MoveCut { first_kept_entry_id } => Decision::MoveCut(first_kept_entry_id).into(),
        ReviewChoice::Cancel => Verdict::with_note(Decision::Cancel, "cancelled in Arbor"),
        ReviewChoice::LetPiDecide => Decision::LetPiDecide.into(),
    }
}

impl ReviewState {
    /// The socket the server binds: `$ARBOR_REVIEW_SOCKET`, else the user's runtime dir.
    pub fn socket(&self) -> PathBuf {
        lock(&self.socket).clone().unwrap_or_else(pi_review::paths::socket_path)
    }

    /// Starts, restarts or stops the server for `prefs` (a policy or time-limit change takes
    /// effect for the next request; a review waiting now keeps its own limit).
    pub fn apply(&self, prefs: ReviewPrefs) -> ReviewStatus {
        let socket = self.socket();
        let old = {
            let mut g = lock(&self.core.inner);
            g.prefs = prefs.clone();
            g.problem = None;
            g.notes.clear();
            g.server.take()
        };
        // Stopping joins the accept thread: not under the lock the reviewers wait on.
        drop(old);
        let policy = match prefs.policy {
            ReviewPolicy::Off => return self.status(),
            ReviewPolicy::Review => Policy::Review,
            ReviewPolicy::Watch => Policy::Watch,
        };
        let mut config = ServerConfig::new(socket);
        config.policy = policy;
        config.timeout = Duration::from_secs(u64::from(prefs.timeout_secs.max(1)));
        config.server_name = format!("arbor {}", env!("CARGO_PKG_VERSION"));
        let core = self.core.clone();
        let log: Logger = Arc::new(move |rec: &LogRecord, req: Option<&ReviewRequest>| {
            if policy != Policy::Watch || rec.event != "review" {
                return;
            }
            let Some(req) = req else { return };
            let mut g = lock(&core.inner);
            let event = ReviewEvent::Watched {
                kind: req.kind.as_str().to_string(),
                session_file: req.session.file.clone(),
                tokens_before: req.compaction.as_ref().and_then(|c| c.tokens_before),
                summary_chars: req.draft.summary.chars().count() as u32,
            };
            core.send(&mut g, event);
        });
        let reviewer: Arc<dyn Reviewer> = Arc::new(AppReviewer(self.core.clone()));
        match Server::bind(config, reviewer, log) {
            Ok(server) => {
                let mut g = lock(&self.core.inner);
                g.notes = server.notes().to_vec();
                g.server = Some(server);
            }
            Err(e) => lock(&self.core.inner).problem = Some(e.to_string()),
        }
        self.status()
    }

    pub fn status(&self) -> ReviewStatus {
        let g = lock(&self.core.inner);
        ReviewStatus {
            prefs: g.prefs.clone(),
            socket: self.socket().display().to_string(),
            listening: g.server.is_some(),
            problem: g.problem.clone(),
            notes: g.notes.clone(),
        }
    }

    pub fn prefs(&self) -> ReviewPrefs {
        lock(&self.core.inner).prefs.clone()
    }

    /// The UI's channel; every request still waiting is sent to it at once.
    pub fn subscribe(&self, sink: ReviewSink) {
        let mut g = lock(&self.core.inner);
        let waiting: Vec<ReviewPrompt> = g.pending.values().map(|p| p.prompt.clone()).collect();
        g.sink = Some(sink);
        for prompt in waiting {
            self.core.send(&mut g, ReviewEvent::Request { prompt });
        }
    }

    /// The request of a pending review (None once it ended).
    pub fn request(&self, id: u32) -> Option<(ReviewRequest, ReviewPrompt)> {
        lock(&self.core.inner).pending.get(&id).map(|p| (p.request.clone(), p.prompt.clone()))
    }

    /// The person's choice; false when the review already ended (Pi went on without it).
    pub fn decide(&self, id: u32, choice: ReviewChoice) -> bool {
        let mut g = lock(&self.core.inner);
        let Some(p) = g.pending.get_mut(&id) else { return false };
        p.choice = Some(choice);
        self.core.decided.notify_all();
        true
    }

    /// Called on each request Pi sends, before the person decides: the app raises its window.
    pub fn set_attention(&self, attention: Arc<dyn Fn() + Send + Sync>) {
        lock(&self.core.inner).attention = Some(attention);
    }

    /// Tests point the server at a socket of their own.
    pub fn with_socket(socket: PathBuf) -> ReviewState {
        let st = ReviewState::default();
        *lock(&st.socket) = Some(socket);
        st
    }
}
