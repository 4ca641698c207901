#!/usr/bin/env bash
# Idempotent setup for a fresh Debian/Ubuntu machine: system packages (only the missing ones),
# Rust's nightly toolchain for the tests' fuzzing (through rustup), the UI's npm packages, Pi for
# the tests (tests/pi), and the built UI (ui/dist, which the Rust build embeds). Quiet when
# nothing is missing.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

APT_PACKAGES=(libwebkit2gtk-4.1-dev build-essential pkg-config file xvfb xauth webkit2gtk-driver
  dbus gnome-keyring libsecret-tools keyutils imagemagick xclip dunst)

if command -v dpkg-query >/dev/null 2>&1; then
  missing=()
  for p in "${APT_PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$p")
    fi
  done
  if ((${#missing[@]})); then
    echo "setup: installing system packages: ${missing[*]}"
    SUDO=""
    if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
else
  echo "setup: not a Debian/Ubuntu system; install WebKitGTK 4.1 (dev), a C toolchain, pkg-config," >&2
  echo "       Xvfb, WebKitWebDriver, dbus, gnome-keyring, ImageMagick, xclip and dunst yourself (see README.md)." >&2
fi

for tool in cargo node npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "setup: '$tool' not found. Install Rust (https://rustup.rs) and Node.js 20+ first." >&2
    exit 1
  fi
done

# The app builds with stable Rust (rust-toolchain.toml), but the test run fuzzes the engine
# (scripts/fuzz-smoke.sh), and cargo-fuzz needs the nightly toolchain. The list is read into a
# variable first: with pipefail, grep -q closing the pipe early could fail the check.
if command -v rustup >/dev/null 2>&1; then
  toolchains="$(rustup toolchain list 2>/dev/null || true)"
  if ! grep -q '^nightly' <<<"$toolchains"; then
    echo "setup: installing Rust's nightly toolchain (the tests fuzz the engine with it)"
    rustup toolchain install nightly --profile minimal
  fi
else
  echo "setup: rustup not found, so Rust's nightly toolchain cannot be installed; the app builds" >&2
  echo "       without it, but scripts/test.sh fails at its fuzzing step. Install Rust through" >&2
  echo "       https://rustup.rs and run this again." >&2
fi

# npm ci only when the lockfile changed since the last install (keeps reruns fast).
stamp="ui/node_modules/.arbor-lock-stamp"
if [ ! -f "$stamp" ] || ! cmp -s ui/package-lock.json "$stamp"; then
  (cd ui && npm ci --no-audit --no-fund)
  cp ui/package-lock.json "$stamp"
fi

# Pi itself, pinned by tests/pi/package-lock.json: the tests hand the files Arbor writes to Pi
# (tests/pi/pi-check.mjs). Reinstalled only when that lockfile changed.
pi_stamp="tests/pi/node_modules/.arbor-lock-stamp"
if [ ! -f "$pi_stamp" ] || ! cmp -s tests/pi/package-lock.json "$pi_stamp"; then
  npm ci --prefix tests/pi --no-audit --no-fund
  cp tests/pi/package-lock.json "$pi_stamp"
fi

# tauri-driver (the WebDriver bridge for the end-to-end test) is installed apart from ui/'s
# lockfile: its package lists optional binaries for macOS and Windows that the registry here does
# not serve, which makes `npm ci` reject any lockfile that contains it. Exact pins keep it
# reproducible; `npm install` skips the missing optional binaries.
DRIVER_DIR="tests/e2e/driver"
TAURI_DRIVER_VERSION="2.0.9"
if ! grep -qs "\"version\": \"$TAURI_DRIVER_VERSION\"" "$DRIVER_DIR/node_modules/@crabnebula/tauri-driver/package.json"; then
  mkdir -p "$DRIVER_DIR"
  npm install --prefix "$DRIVER_DIR" --no-save --no-package-lock --no-audit --no-fund \
    "@crabnebula/tauri-driver@$TAURI_DRIVER_VERSION" "@crabnebula/tauri-driver-linux-x64-gnu@$TAURI_DRIVER_VERSION"
fi

(cd ui && npm run build --silent)
echo "setup: done"
