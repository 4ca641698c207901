//! Forks across files, from the index: which sessions name another as their parent. Pi writes the
//! parent's path as `parentSession` in a fork's header (`/fork`, `forkFrom`, a new session made
//! with a parent); the catalog stores it as written, and it is resolved here the way the engine
//! reads it (`session_engine::fork::parent_path`), so the picker can say how many forks a session
//! has without opening a file.
use crate::db::classify_err;
use crate::error::LibError;
use crate::library::Library;
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

/// `a/./b/../c` → `a/c`, without touching the disk: the index stores paths as the roots' walk
/// found them, and a relative `parentSession` may climb out of the fork's folder.
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            c => out.push(c),
        }
    }
    out
}

impl Library {
    /// Every indexed session whose header names a parent other than itself: (fork, parent), both
    /// paths, ordered by the fork's path. The parent need not be indexed, or exist.
    fn fork_links(&self) -> Result<Vec<(PathBuf, PathBuf)>, LibError> {
        let mut q = self
            .conn
            .prepare_cached(
                "SELECT path, parent_session FROM files
                 WHERE parent_session IS NOT NULL AND parent_session != '' AND valid = 1 ORDER BY path",
            )
            .map_err(classify_err)?;
        let rows = q.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))).map_err(classify_err)?;
        let mut out = Vec::new();
        for row in rows {
            let (fork, raw) = row.map_err(classify_err)?;
            let fork = PathBuf::from(fork);
            let parent = normalize(&session_engine::fork::parent_path(&fork, &raw));
            if parent != normalize(&fork) {
                out.push((fork, parent));
            }
        }
        Ok(out)
    }

    /// How many indexed sessions name each parent file (the picker's "N forks").
    pub fn fork_counts(&self) -> Result<HashMap<PathBuf, u32>, LibError> {
        let mut out = HashMap::new();
        for (_, parent) in self.fork_links()? {
            *out.entry(parent).or_insert(0) += 1;
        }
        Ok(out)
    }

    /// The indexed sessions whose header names `parent` as their parent.
    pub fn forks_of(&self, parent: &Path) -> Result<Vec<PathBuf>, LibError> {
        let parent = normalize(parent);
        Ok(self.fork_links()?.into_iter().filter(|(_, p)| *p == parent).map(|(f, _)| f).collect())
    }
}
