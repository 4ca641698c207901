//! The marker facts of the open session's summary entries (drop-alarm count, retention score),
//! cached per entry id: the graph shows them on compaction and branch-summary rows.

use super::lock;
use super::quality::QualityCache;
use crate::view::graph::{GraphRow, GraphRowKind};
use crate::view::summary::{check_of, CheckView};
use session_engine::Session;
use std::collections::HashMap;
use std::sync::Mutex;

/// What a compaction's graph marker shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MarkerFacts {
    pub dropped: u32,
    pub mentioned: u32,
    pub total: u32,
}

/// Marker facts per summary entry id. Append-only files never change an existing entry's path,
/// so an entry's facts stay true for as long as the session is open.
#[derive(Debug, Default)]
pub struct MarkerCache {
    map: Mutex<HashMap<String, MarkerFacts>>,
    /// The whole checks of the summaries last shown in the workbench, newest last: selecting a
    /// summary and then continuing from it asks for its view twice (the leaf changed, so its
    /// editability may have), and the check, most of the view's cost, is the same both times.
    recent: Mutex<Vec<(String, CheckView)>>,
}

/// How many whole checks `MarkerCache` keeps (a few KB each).
const RECENT_CHECKS: usize = 4;

impl MarkerCache {
    pub fn cached(&self, session: &Session, idx: usize) -> Option<MarkerFacts> {
        lock(&self.map).get(session.id(idx)).copied()
    }

    pub fn facts(&self, session: &Session, idx: usize) -> MarkerFacts {
        if let Some(f) = self.cached(session, idx) {
            return f;
        }
        self.keep_facts(session.id(idx), &check_of(session, idx))
    }

    /// Keeps the marker facts of check `c` of summary `id`.
    fn keep_facts(&self, id: &str, c: &CheckView) -> MarkerFacts {
        let f =
            MarkerFacts { dropped: c.dropped.len() as u32, mentioned: c.retention.mentioned, total: c.retention.total };
        lock(&self.map).insert(id.to_string(), f);
        f
    }

    /// The check of the summary at `idx`, computed once for the last few asked for; its marker
    /// facts are cached with it.
    pub fn check(&self, session: &Session, idx: usize) -> CheckView {
        let id = session.id(idx);
        if let Some((_, c)) = lock(&self.recent).iter().find(|(k, _)| k == id) {
            return c.clone();
        }
        let c = check_of(session, idx);
        self.keep_facts(id, &c);
        let mut recent = lock(&self.recent);
        if recent.len() >= RECENT_CHECKS {
            recent.remove(0);
        }
        recent.push((id.to_string(), c.clone()));
        c
    }

    pub fn len(&self) -> usize {
        lock(&self.map).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Fills the quality score (once computed, see `state::quality`), the drop-alarm count and the
/// retention score of the compaction and branch-summary rows whose facts are cached (a new one costs a check, ~15 ms at 100k: a graph window runs on the
/// main thread, so `summary_markers` computes the rest, on a snapshot).
pub fn annotate_rows(session: &Session, cache: &MarkerCache, quality: &QualityCache, rows: &mut [GraphRow]) {
    for r in rows.iter_mut() {
        if !matches!(r.kind, GraphRowKind::Compaction | GraphRowKind::BranchSummary) {
            continue;
        }
        r.quality = quality.score(&r.entry_id);
        let Some(f) = session.index_of(&r.entry_id).and_then(|idx| cache.cached(session, idx)) else { continue };
        r.dropped = Some(f.dropped);
        r.retained = Some(f.mentioned);
        r.facts = Some(f.total);
    }
}
