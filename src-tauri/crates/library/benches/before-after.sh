#!/usr/bin/env bash
# Two builds of the library's bench example against Pi's SessionManager.list in ONE run, rounds
# interleaved: phase 1 from no index (the session list), phases 1+2, the index file's size and
# the bare-FTS5 floor, for each build.
#
#   PI_DIR=<folder with node_modules/@mariozechner/pi-coding-agent> SHARED_BENCH=<bench kit> \
#   BEFORE=<bench binary> AFTER=<bench binary> BENCH_DIR=<scratch> \
#   src-tauri/crates/library/benches/before-after.sh [ROUNDS]
#
# A bench binary: `cargo build --release -p library --example bench` at each commit, copied out of
# the target folder. $BENCH_DIR/many500s7 is the set compare-with-pi.sh generates.
set -uo pipefail
: "${PI_DIR:?}"; : "${SHARED_BENCH:?}"; : "${BEFORE:?}"; : "${AFTER:?}"; : "${BENCH_DIR:?}"
export PI_DIR
cd "$BENCH_DIR"
R=${1:-3}
for round in $(seq 1 "$R"); do
  echo "round $round  load: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "  pi:           $(node "$SHARED_BENCH/pi-bench-op.mjs" list many500s7 2>/dev/null | tr '\n' ' ')"
  for v in BEFORE AFTER; do
    rm -f "$BENCH_DIR/$v.sqlite3"*
    echo "  $v phase 1: $("${!v}" index many500s7 "$BENCH_DIR/$v.sqlite3" catalog 2>&1 | tr '\n' ' ')"
  done
  for v in BEFORE AFTER; do
    rm -f "$BENCH_DIR/$v.sqlite3"*
    echo "  $v 1+2:     $("${!v}" index many500s7 "$BENCH_DIR/$v.sqlite3" 2>&1 | tr '\n' ' ')"
    echo "  $v index file: $(stat -c %s "$BENCH_DIR/$v.sqlite3" | awk '{printf "%.1f MB", $1/1e6}')"
    echo "  $v $("${!v}" fts-floor "$BENCH_DIR/$v.sqlite3" "$BENCH_DIR/floor-$v.sqlite3" 2>&1 | tr '\n' ' ')"
  done
done
