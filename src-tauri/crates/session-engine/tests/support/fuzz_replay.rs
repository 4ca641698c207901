//! The replay loop of the fuzz regression tests: the engine's `tests/fuzz_regressions.rs` and
//! summary-analysis's include this file by path, each with its own targets' checks.
use std::path::{Path, PathBuf};

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(rd) => rd.map(|e| e.unwrap().path()).filter(|p| p.is_file()).collect(),
        Err(_) => Vec::new(),
    };
    v.sort();
    v
}

/// Runs `check` on every input of fuzz target `target`: the crashes kept in the engine's
/// tests/fixtures/fuzz/<target>/ and its seed corpus fuzz/seeds/<target>/. Returns how many.
pub fn replay(target: &str, check: fn(&[u8])) -> usize {
    // From the engine itself this is its own folder; from another crate, the engine beside it.
    let engine = Path::new(env!("CARGO_MANIFEST_DIR")).join("../session-engine");
    let mut n = 0;
    for dir in [engine.join("tests/fixtures/fuzz").join(target), engine.join("fuzz/seeds").join(target)] {
        for f in files(&dir) {
            let data = std::fs::read(&f).unwrap();
            let r = std::panic::catch_unwind(|| check(&data));
            assert!(r.is_ok(), "{target}: {} fails the fuzz check", f.display());
            n += 1;
        }
    }
    n
}
