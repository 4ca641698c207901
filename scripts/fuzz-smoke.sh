#!/usr/bin/env bash
# Coverage-guided fuzzing of the session engine and the summary parser: builds the five cargo-fuzz
# targets of src-tauri/crates/session-engine/fuzz with the nightly toolchain and runs each from the
# committed seed corpus (fuzz/seeds/<target>, made from the conformance fixtures by
# fuzz/examples/seed.rs).
#
#   scripts/fuzz-smoke.sh                         # CI: each target for ARBOR_FUZZ_SECONDS (20) s
#   ARBOR_FUZZ_RUNS=10000000 scripts/fuzz-smoke.sh loader   # the long run: a fixed number of inputs
#
# Targets: loader (Session::from_bytes and everything read from it), extend (extend_from_file on a
# growing file equals a fresh load), summary (summary_analysis::parse/print round trip),
# summary_diff (diff and replace_section on parsed summaries; seeds are the summary target's), settings
# (PiSettings::load, write_setting). A crash fails the script and leaves the input in
# fuzz/artifacts/<target>/; it then becomes a test in session-engine/tests/fuzz_regressions.rs
# (summary-analysis/tests/fuzz_regressions.rs for the summary targets).
# Needs the nightly toolchain (libFuzzer's instrumentation); installs cargo-fuzz when missing.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
FUZZ="$ROOT/src-tauri/crates/session-engine/fuzz"
SECS="${ARBOR_FUZZ_SECONDS:-20}"
RUNS="${ARBOR_FUZZ_RUNS:-}"
TARGETS=("$@")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=(loader extend summary summary_diff settings)

if ! command -v rustup >/dev/null; then
  echo "fuzz-smoke: rustup is not installed; cargo fuzz needs the nightly toolchain through rustup." >&2
  exit 1
fi
if ! rustup toolchain list | grep -q '^nightly'; then
  echo "fuzz-smoke: the nightly Rust toolchain is missing (rustup toolchain list shows none); install it with 'rustup toolchain install nightly' — fuzzing is part of the test run and is not skipped." >&2
  exit 1
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "== installing cargo-fuzz (cargo install cargo-fuzz --locked)"
  cargo install cargo-fuzz --locked
fi

# Its own target dir: nightly and coverage flags would otherwise rebuild the main build's crates.
if [ -n "${ARBOR_FUZZ_TARGET_DIR:-}" ]; then
  export CARGO_TARGET_DIR="$ARBOR_FUZZ_TARGET_DIR"
elif [ -n "${CARGO_TARGET_DIR:-}" ]; then
  export CARGO_TARGET_DIR="$CARGO_TARGET_DIR-fuzz"
else
  export CARGO_TARGET_DIR="$ROOT/target/fuzz"
fi
WORK="$CARGO_TARGET_DIR/fuzz-work"
mkdir -p "$WORK"
cd "$FUZZ"
# No sanitizer: the engine has no unsafe code; panics (including debug assertions and integer
# overflow, which cargo fuzz builds keep on) are what the targets look for.
echo "== cargo +nightly fuzz build (${TARGETS[*]})"
for t in "${TARGETS[@]}"; do
  cargo +nightly fuzz build -s none "$t"
done
for t in "${TARGETS[@]}"; do
  mkdir -p "$WORK/corpus/$t"
  if [ -n "$RUNS" ]; then limit=(-runs="$RUNS"); else limit=(-max_total_time="$SECS"); fi
  log="$WORK/$t.log"
  echo "== fuzz $t (${limit[*]})"
  if ! cargo +nightly fuzz run -s none "$t" "$WORK/corpus/$t" "seeds/$t" -- "${limit[@]}" -max_len=4096 -print_final_stats=1 >"$log" 2>&1; then
    grep -v '^#[0-9]' "$log" | tail -60 >&2
    echo "fuzz-smoke: target $t failed; the input is in $FUZZ/artifacts/$t/ (full log: $log)." >&2
    exit 1
  fi
  execs=$(grep -m1 'stat::number_of_executed_units' "$log" | awk '{print $2}')
  rate=$(grep -m1 'stat::average_exec_per_sec' "$log" | awk '{print $2}')
  echo "   $t: ${execs:-?} inputs, ${rate:-?}/s, no crash"
done
