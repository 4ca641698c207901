#!/usr/bin/env bash
# Runs a command inside a private D-Bus session with an unlocked gnome-keyring Secret Service,
# so keyring tests use the real backend:
#   scripts/with-secret-service.sh cargo test -p summarizer --test keys_secret_service
# The keyring lives in a temporary XDG_DATA_HOME that is removed afterwards.
set -euo pipefail

missing=()
command -v dbus-run-session >/dev/null 2>&1 || missing+=(dbus)
command -v gnome-keyring-daemon >/dev/null 2>&1 || missing+=(gnome-keyring)
if [ ${#missing[@]} -gt 0 ]; then
  echo "with-secret-service.sh: ${missing[*]} not installed." >&2
  echo "  Install with: sudo apt-get install -y dbus gnome-keyring libsecret-tools" >&2
  exit 127
fi
if [ $# -eq 0 ]; then
  echo "usage: scripts/with-secret-service.sh COMMAND [ARGS...]" >&2
  exit 2
fi

tmp="$(mktemp -d -t arbor-keyring.XXXXXX)"
cleanup() { rm -rf "$tmp"; }
trap cleanup EXIT
mkdir -p "$tmp/data" "$tmp/runtime"
chmod 700 "$tmp/runtime"
export XDG_DATA_HOME="$tmp/data"
export XDG_RUNTIME_DIR="$tmp/runtime"

# The password must not be empty: with an empty one the daemon asks a GUI prompter and every
# store call fails with NoStorageAccess.
set +e
dbus-run-session -- bash -c '
  set -e
  eval "$(printf "arbor-test-password" | gnome-keyring-daemon --unlock --components=secrets)"
  export GNOME_KEYRING_CONTROL
  set +e
  "$@"
  rc=$?
  # Stop the daemon this session started (by its control socket owner), then leave.
  if [ -n "${GNOME_KEYRING_CONTROL:-}" ]; then
    for p in $(ls /proc | grep -E "^[0-9]+$"); do
      if [ "$(readlink /proc/$p/exe 2>/dev/null)" = "$(command -v gnome-keyring-daemon)" ] &&
         tr "\0" "\n" < /proc/$p/environ 2>/dev/null | grep -qx "XDG_RUNTIME_DIR='"$XDG_RUNTIME_DIR"'"; then
        kill "$p" 2>/dev/null || true
      fi
    done
  fi
  exit $rc
' bash "$@"
rc=$?
set -e
exit $rc
