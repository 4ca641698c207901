#!/usr/bin/env bash
# Set everything up and run every check and test: formatting, clippy and the UI's type check,
# then Rust (workspace), Vitest (UI) and the end-to-end WebDriver test of the real window under Xvfb.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
"$ROOT/scripts/setup.sh"

# Habits first, so a formatting, lint or type error shows before the long test run.
echo "== cargo fmt --all --check"
cargo fmt --all --check

echo "== cargo clippy --workspace --all-targets --locked -- -D warnings"
cargo clippy --workspace --all-targets --locked -- -D warnings

echo "== UI type check (tsc --noEmit)"
(cd ui && npx tsc --noEmit)

echo "== cargo test --workspace --locked"
if [ -f "$ROOT/scripts/with-secret-service.sh" ]; then
  # Starts dbus-run-session + an unlocked gnome-keyring for the keyring tests.
  bash "$ROOT/scripts/with-secret-service.sh" cargo test --workspace --locked
else
  cargo test --workspace --locked
fi

# The tests that need root are #[ignore]d, so a plain `cargo test` says it did not run them.
# `--workspace` keeps the workspace's feature set, so nothing is compiled a second time.
echo "== tests that need root (cargo test --workspace --test pi_review|disk_faults -- --ignored)"
if [ "$(id -u)" != "0" ]; then
  echo "!! not root: the full-tmpfs tests and the client as another user are IGNORED"
else
  if command -v setpriv >/dev/null 2>&1 && [ -x /usr/bin/python3 ]; then
    cargo test --workspace --locked --test pi_review -- --ignored
  else
    echo "!! setpriv or /usr/bin/python3 is missing: the client as another user is IGNORED"
  fi
  probe="$(mktemp -d)"
  if mount -t tmpfs -o size=64k tmpfs "$probe" 2>/dev/null; then
    umount "$probe"
    cargo test --workspace --locked --test disk_faults -- --ignored
  else
    echo "!! mount -t tmpfs is not allowed here (a container without CAP_SYS_ADMIN): the full-tmpfs tests are IGNORED"
  fi
  rmdir "$probe"
fi

echo "== Pi extension (node --test pi-extension/test/: the real pi with Arbor's extension and arbor-cli pi serve)"
if [ "${ARBOR_SKIP_PI:-}" = "1" ]; then
  echo "!! ARBOR_SKIP_PI=1: the Pi extension's tests are SKIPPED"
else
  ARBOR_CLI="${CARGO_TARGET_DIR:-$ROOT/target}/debug/arbor-cli" node --test "$ROOT/pi-extension/test/unit.test.mjs" "$ROOT/pi-extension/test/pi.test.mjs"
fi

echo "== Pi continues Arbor's artifact ledger (node --test tests/pi/ledger.test.mjs: arbor-cli compact --ledger, then the real pi)"
if [ "${ARBOR_SKIP_PI:-}" = "1" ]; then
  echo "!! ARBOR_SKIP_PI=1: the ledger's test with the real Pi is SKIPPED"
else
  ARBOR_CLI="${CARGO_TARGET_DIR:-$ROOT/target}/debug/arbor-cli" node --test "$ROOT/tests/pi/ledger.test.mjs"
fi

echo "== fuzz smoke (each engine fuzz target ~20 s, nightly; scripts/fuzz-smoke.sh)"
bash "$ROOT/scripts/fuzz-smoke.sh"

echo "== vitest"
(cd ui && npx vitest run)

echo "== end-to-end (WebDriver, Xvfb)"
# The app binary was built by `cargo test` above (tests/app.rs is an integration test of the
# arbor package). A separate `cargo build -p arbor` would resolve features differently from the
# workspace test run and compile the dependencies a second time.
ARBOR_BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug/arbor" node "$ROOT/tests/e2e/e2e.mjs"
ARBOR_BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug/arbor" bash "$ROOT/scripts/with-secret-service.sh" node "$ROOT/tests/e2e/e2e-summarize.mjs"
ARBOR_BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug/arbor" node "$ROOT/tests/e2e/e2e-library.mjs"
ARBOR_BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug/arbor" node "$ROOT/tests/e2e/e2e-workbench.mjs"
ARBOR_BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug/arbor" node "$ROOT/tests/e2e/e2e-compare.mjs"
ARBOR_BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug/arbor" node "$ROOT/tests/e2e/e2e-desktop.mjs"
ARBOR_BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug/arbor" node "$ROOT/tests/e2e/e2e-launch.mjs"
ARBOR_BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug/arbor" node "$ROOT/tests/e2e/e2e-waterfall.mjs"
ARBOR_BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug/arbor" node "$ROOT/tests/e2e/e2e-shortcuts.mjs"
ARBOR_BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug/arbor" node "$ROOT/tests/e2e/e2e-preview.mjs"
ARBOR_BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug/arbor" node "$ROOT/tests/e2e/e2e-export.mjs"
if [ "${ARBOR_SKIP_PI:-}" = "1" ]; then
  echo "!! ARBOR_SKIP_PI=1: the review of the real Pi's compactions in the window is SKIPPED"
else
  ARBOR_BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug/arbor" ARBOR_CLI="${CARGO_TARGET_DIR:-$ROOT/target}/debug/arbor-cli" node "$ROOT/tests/e2e/e2e-review.mjs"
fi
