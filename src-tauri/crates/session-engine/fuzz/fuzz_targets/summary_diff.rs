//! Fuzz target: what is built on the summary parse (diff between two summaries, a summary
//! diffed with itself is empty, replace_section). Seeds: the summary target's (a link).
//! The checks live in summary-analysis/tests/fuzz_checks/mod.rs, shared with that crate's
//! tests/fuzz_regressions.rs, where every crashing input becomes a test.
#![no_main]

#[path = "../../../summary-analysis/tests/fuzz_checks/mod.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::summary_diff(data));
