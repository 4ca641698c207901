//! Fuzz target: the line scanner and loader on arbitrary bytes (Session::from_bytes, then the
//! tree, every path, the context, estimates, compaction and branch plans, the report).
//! The checks live in session-engine/tests/fuzz_checks/mod.rs, shared with the engine's
//! tests/fuzz_regressions.rs, where every crashing input becomes a test.
#![no_main]

#[path = "../../tests/fuzz_checks/mod.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::loader(data));
