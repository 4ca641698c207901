//! Every input the summary fuzz targets (`session-engine/fuzz`, `scripts/fuzz-smoke.sh`) crashed
//! on, replayed through the same checks (tests/fuzz_checks/mod.rs) in this crate's normal tests.
//! A crash found by the fuzzer is copied to the engine's tests/fixtures/fuzz/<target>/ beside
//! the other targets' and fixed where the bug is; the seed corpus
//! (session-engine/fuzz/seeds/<target>/) is replayed too, so the checks keep running without
//! nightly.

mod fuzz_checks;

#[path = "../../session-engine/tests/support/fuzz_replay.rs"]
mod fuzz_replay;

use fuzz_replay::replay;

#[test]
fn summary_inputs() {
    assert!(replay("summary", fuzz_checks::summary) >= 100);
}

#[test]
fn summary_diff_inputs() {
    // fuzz/seeds/summary_diff is a link to the summary seeds.
    assert!(replay("summary_diff", fuzz_checks::summary_diff) >= 100);
}
