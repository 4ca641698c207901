#!/usr/bin/env bash
# Library benchmarks, Arbor's index against Pi's SessionManager.list, in ONE run (ratios only
# mean something side by side on a shared machine).
#
#   PI_DIR=<folder with node_modules/@mariozechner/pi-coding-agent> \
#   BENCH_DIR=<scratch folder outside the repo> \
#   SHARED_BENCH=<the shared bench kit's folder, for Pi's side: pi-bench-op.mjs> \
#   src-tauri/crates/library/benches/compare-with-pi.sh [--gb]
#
# Needs node, /usr/bin/time and cargo. Data is generated once into $BENCH_DIR (by the repository's
# scripts/gen-sessions.mjs) and reused.
# --gb also builds a ~1 GB index (8 hard-linked copies of the 500 sessions) and times queries on it.
set -euo pipefail
: "${PI_DIR:?set PI_DIR}"; : "${BENCH_DIR:?set BENCH_DIR}"; : "${SHARED_BENCH:?set SHARED_BENCH}"
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../../.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}"
(cd "$repo" && cargo build --release -q -p library --example bench)
B="$CARGO_TARGET_DIR/release/examples/bench"
mkdir -p "$BENCH_DIR"; cd "$BENCH_DIR"
# the same 500 sessions (142 MB) as Pi's baseline in the shared bench kit (pi-baseline.sh)
[ -d many500s7 ] || node "$repo/scripts/gen-sessions.mjs" --many 500 --min-entries 20 --max-entries 200 --seed 7 --dir many500s7
[ -f s100k.jsonl ] || node "$repo/scripts/gen-sessions.mjs" --entries 100000 --seed 42 --out s100k.jsonl
[ -f s1k.jsonl ] || node "$repo/scripts/gen-sessions.mjs" --entries 1000 --seed 42 --out s1k.jsonl
peak() { grep -E 'Maximum resident' | awk '{printf "%.0f MB", $6/1024}'; }

echo "== 500 sessions: Pi SessionManager.list vs Arbor from scratch, phase 1 only (the session"
echo "   catalog: what Pi's list gives) and phases 1+2 (entries, statuses, full text); then an"
echo "   up-to-date pass. Pi's 'ms' excludes node start-up and module import; Arbor's figure is"
echo "   open + sync (index file created from nothing). fts-floor: the same text into a bare FTS5"
echo "   table and nothing else, the least any index with SQLite full text can cost."
for round in 1 2 3; do
  pi=$(PI_DIR="$PI_DIR" /usr/bin/time -v node "$SHARED_BENCH/pi-bench-op.mjs" list many500s7 2>pi.err); pirss=$(peak < pi.err)
  cat=$(/usr/bin/time -v "$B" index many500s7 "$BENCH_DIR/many.sqlite3" catalog 2>cat.err | tr "\n" " "); catrss=$(peak < cat.err)
  ours=$(/usr/bin/time -v "$B" index many500s7 "$BENCH_DIR/many.sqlite3" 2>ours.err | tr '\n' ' '); oursrss=$(peak < ours.err)
  again=$(/usr/bin/time -v "$B" resync many500s7 "$BENCH_DIR/many.sqlite3" 2>again.err | tail -1); againrss=$(peak < again.err)
  floor=$("$B" fts-floor "$BENCH_DIR/many.sqlite3" "$BENCH_DIR/floor.sqlite3")
  echo "round $round"
  echo "  pi:           $pi  peak $pirss"
  echo "  arbor 1:      $cat  peak $catrss"
  echo "  arbor 1+2:    $ours  peak $oursrss"
  echo "  arbor resync: $again  peak $againrss"
  echo "  $floor"
done

echo "== phase 1 agrees with Pi's list (id, cwd, name, created, modified, message count, first message)"
"$B" index many500s7 "$BENCH_DIR/many.sqlite3" catalog >/dev/null
"$B" dump "$BENCH_DIR/many.sqlite3" > ours.json
PI_DIR="$PI_DIR" node "$here/pi-list-agrees.mjs" many500s7 ours.json

echo "== append one entry to the 264 MB session and re-index"
cp s100k.jsonl append-copy.jsonl
rm -f big.sqlite3 big.sqlite3-wal big.sqlite3-shm
/usr/bin/time -v "$B" append append-copy.jsonl big.sqlite3 2>append.err; echo "  peak $(peak < append.err)"
"$B" append append-copy.jsonl big.sqlite3
echo "== the same, appending off the first entry (the leaf moves to another branch: all statuses recomputed)"
"$B" append append-copy.jsonl big.sqlite3 branch
echo "== append to a 2 MB session"
cp s1k.jsonl append-small.jsonl; rm -f small.sqlite3 small.sqlite3-wal small.sqlite3-shm
"$B" append append-small.jsonl small.sqlite3; "$B" append append-small.jsonl small.sqlite3; rm -f append-small.jsonl
rm -f append-copy.jsonl

if [ "${1:-}" = "--gb" ]; then
  echo "== ~1 GB of sessions: index once, then queries"
  "$B" links many500s7 gb7 8
  [ -f gb7.sqlite3 ] && [ "$(sqlite3 gb7.sqlite3 "PRAGMA user_version" 2>/dev/null)" = 6 ] || "$B" index gb7 gb7.sqlite3
  "$B" query gb7.sqlite3 21 error "registry buffer" '"request error"' decoder "Successfully replaced" zzzznothing
fi
