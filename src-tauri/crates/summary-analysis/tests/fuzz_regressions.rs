//! Every input the summary fuzz targets (`session-engine/fuzz`, `scripts/fuzz-smoke.sh`) crashed
//! on, replayed through the same checks (tests/fuzz_checks/mod.rs) in this crate's normal tests.
//! A crash found by the fuzzer is copied to the engine's tests/fixtures/fuzz/<target>/ beside
//! the other targets' and fixed where the bug is; the seed corpus
//! (session-engine/fuzz/seeds/<target>/) is replayed too, so the checks keep running without
//! nightly.

mod fuzz_checks;

use std::path::{Path, PathBuf};

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(rd) => rd.map(|e| e.unwrap().path()).filter(|p| p.is_file()).collect(),
        Err(_) => Vec::new(),
    };
    v.sort();
    v
}

fn replay(target: &str, check: fn(&[u8])) -> usize {
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

#[test]
fn summary_inputs() {
    assert!(replay("summary", fuzz_checks::summary) >= 100);
}

#[test]
fn summary_diff_inputs() {
    // fuzz/seeds/summary_diff is a link to the summary seeds.
    assert!(replay("summary_diff", fuzz_checks::summary_diff) >= 100);
}
