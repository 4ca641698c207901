#!/usr/bin/env bash
# Set everything up, build, and launch Arbor.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
"$ROOT/scripts/setup.sh"
cargo build --locked -p arbor
BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug/arbor"
exec "$BIN" "$@"
