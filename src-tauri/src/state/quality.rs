//! The quality marks of the open session's summaries (probe score by kind; the cost of
//! forgetting after each compaction), computed in the background after the session opens and
//! kept per file version, and the one background run that computes them.
//!
//! A summary's score depends on its text, its span and the compaction before it, all written
//! before it: in an append-only file it stays true for as long as the session is open. The cost
//! of forgetting looks *below* a compaction (up to the next one, on the file leaf's path), which
//! an append can change: it is kept with the file length it was computed at, and computed again
//! at a newer one. Scoring every summary of a big session costs seconds (378 summaries of the
//! 100k-entry one), so it never runs on the open or paint path: one run at a time, in slices.

use super::lock;
use crate::view::quality::{ForgettingView, QualityMarkView, ScoreView};
use session_engine::{Kind, Session};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Where a run sends the marks it computed (the UI's channel); false when nobody listens.
pub type MarkSink = Arc<dyn Fn(Vec<QualityMarkView>) -> bool + Send + Sync>;

#[derive(Default)]
struct Inner {
    scores: HashMap<String, ScoreView>,
    /// Per compaction id: the file length the value was computed at, and the value.
    forgetting: HashMap<String, (u64, Option<ForgettingView>)>,
    /// A run is computing (at most one per open session).
    running: bool,
    /// Bumped by every request for the marks: a run that saw fewer has a newer version to read.
    requests: u64,
    sink: Option<MarkSink>,
}

/// The marks of one open session (replaced, not cleared, when the file is read again, so a run
/// still going on the old one stops: see [`QualityCache::is_current`]).
#[derive(Default)]
pub struct QualityCache {
    inner: Mutex<Inner>,
    /// What the costs of forgetting read of each entry of this session (a few strings per
    /// message), so that the run over every compaction parses each message once and keeps no
    /// parse of it.
    pub acts: summary_analysis::ActsMemo,
    /// Set when its session is let go (another open): a run stops at its next summary, so its
    /// snapshot does not keep a whole session alive beside the next one for the rest of a slice.
    retired: std::sync::atomic::AtomicBool,
}

/// A background run's claim on the cache: dropping it (stopped or panicked) lets the next request
/// start a run; [`QualityCache::next`] releases it itself when the run is done.
pub struct RunGuard<'a> {
    cache: &'a QualityCache,
    released: bool,
}

impl Drop for RunGuard<'_> {
    fn drop(&mut self) {
        if !self.released {
            lock(&self.cache.inner).running = false;
        }
    }
}

/// One piece of a run's work on the summary at an index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Work {
    Score(usize),
    Forgetting(usize),
}

/// What a run does next, decided under the cache's lock.
pub enum Next {
    /// Every missing score, newest first (the graph opens at the leaf, and a score costs a few
    /// milliseconds), then every missing cost of forgetting, newest first (it reads the whole
    /// path above its compaction: up to seconds at 100k entries).
    Compute(Vec<Work>),
    /// Nothing is missing at this version and no request came since the run's snapshot.
    Done,
    /// Nothing is missing at this version, but a request came since: read the session again.
    Again,
}

impl QualityCache {
    /// Marks this cache's session as let go (see [`QualityCache::is_retired`]).
    pub fn retire(&self) {
        self.retired.store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether its session was let go: a run on it stops.
    pub fn is_retired(&self) -> bool {
        self.retired.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The cached score of summary `id`, for the graph's row.
    pub fn score(&self, id: &str) -> Option<f64> {
        lock(&self.inner).scores.get(id).and_then(|s| s.score)
    }

    /// The mark of the summary at `idx` as cached at file length `version`: None until its score
    /// is computed; a compaction's forgetting only once computed at that version (the mark is
    /// sent again then).
    pub fn mark(&self, session: &Session, idx: usize, version: u64) -> Option<QualityMarkView> {
        let inner = lock(&self.inner);
        let id = session.id(idx);
        let score = inner.scores.get(id)?.clone();
        let forgetting = match inner.forgetting.get(id) {
            Some((v, f)) if *v == version => f.clone(),
            _ => None,
        };
        Some(QualityMarkView { entry_id: id.to_string(), score, forgetting })
    }

    /// Keeps what was computed for summary `id` (`forgetting` with the file length it holds for).
    pub fn store(&self, id: &str, score: Option<ScoreView>, forgetting: Option<(u64, Option<ForgettingView>)>) {
        let mut inner = lock(&self.inner);
        if let Some(s) = score {
            inner.scores.insert(id.to_string(), s);
        }
        if let Some(f) = forgetting {
            inner.forgetting.insert(id.to_string(), f);
        }
    }

    /// What the summary at `idx` still needs at file length `version`: (its score, its forgetting).
    pub fn missing(&self, session: &Session, idx: usize, version: u64) -> (bool, bool) {
        let inner = lock(&self.inner);
        let id = session.id(idx);
        let score = !inner.scores.contains_key(id);
        let forgetting =
            session.kind(idx) == Kind::Compaction && inner.forgetting.get(id).is_none_or(|(v, _)| *v != version);
        (score, forgetting)
    }

    /// A request for the marks, sent to `sink` from now on. Returns the run's guard when no run
    /// was going (the caller runs), None when one was (it goes on with the newer version, since
    /// the request counts, and sends to `sink`).
    pub fn request(&self, sink: MarkSink) -> Option<RunGuard<'_>> {
        let mut inner = lock(&self.inner);
        inner.requests += 1;
        inner.sink = Some(sink);
        if inner.running {
            return None;
        }
        inner.running = true;
        Some(RunGuard { cache: self, released: false })
    }

    /// The request count, read before a run's snapshot (see [`QualityCache::next`]).
    pub fn requests(&self) -> u64 {
        lock(&self.inner).requests
    }

    /// What `session` still misses at its file length (see [`Next::Compute`]); when nothing,
    /// whether a request came after `seen` (then the run reads the session again: that request
    /// found it running and counts on it). `Done` releases the run under the same lock a request
    /// takes, so no request falls between the last check and the release.
    pub fn next(&self, run: &mut RunGuard<'_>, session: &Session, seen: u64) -> Next {
        let version = session.file_len();
        let mut scores = Vec::new();
        let mut forgetting = Vec::new();
        for i in (0..session.len()).rev() {
            if !matches!(session.kind(i), Kind::Compaction | Kind::BranchSummary) {
                continue;
            }
            let (s, f) = self.missing(session, i, version);
            if s {
                scores.push(Work::Score(i));
            }
            if f {
                forgetting.push(Work::Forgetting(i));
            }
        }
        scores.extend(forgetting);
        let todo = scores;
        if !todo.is_empty() {
            return Next::Compute(todo);
        }
        let mut inner = lock(&self.inner);
        if inner.requests == seen {
            inner.running = false;
            run.released = true;
            Next::Done
        } else {
            Next::Again
        }
    }

    /// Sends marks to the current sink (nothing when none or empty).
    pub fn send(&self, marks: Vec<QualityMarkView>) {
        if marks.is_empty() {
            return;
        }
        let sink = lock(&self.inner).sink.clone();
        if let Some(s) = sink {
            s(marks);
        }
    }
}

/// Whether `cache` is still the open session's (another file, or the same one read again,
/// replaces it).
pub fn is_current(open: &Arc<QualityCache>, cache: &Arc<QualityCache>) -> bool {
    Arc::ptr_eq(open, cache)
}
