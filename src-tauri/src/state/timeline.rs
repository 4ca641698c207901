//! The context waterfall's numbers of the open file: each entry's contribution (a few numbers),
//! kept between calls so that only the first timeline of a big session reads every entry.

use super::lock;
use session_engine::timeline::ContributionCache;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

/// The contributions of the open file's entries, kept between calls.
#[derive(Default)]
pub struct TimelineCache {
    inner: Mutex<(PathBuf, ContributionCache)>,
}

impl TimelineCache {
    pub fn new() -> TimelineCache {
        TimelineCache::default()
    }

    /// The cache of `file` (emptied when it held another file's numbers).
    pub fn of(&self, file: &PathBuf) -> MutexGuard<'_, (PathBuf, ContributionCache)> {
        let mut c = lock(&self.inner);
        if &c.0 != file {
            *c = (file.clone(), ContributionCache::new());
        }
        c
    }
}
