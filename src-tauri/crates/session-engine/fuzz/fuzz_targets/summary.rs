//! Fuzz target: the summary parser (print(parse(t)) == t, deterministic, also for each half).
//! The checks live in summary-analysis/tests/fuzz_checks/mod.rs, shared with that crate's
//! tests/fuzz_regressions.rs, where every crashing input becomes a test.
#![no_main]

#[path = "../../../summary-analysis/tests/fuzz_checks/mod.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::summary(data));
