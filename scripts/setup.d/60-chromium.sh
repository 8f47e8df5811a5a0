#!/usr/bin/env bash
# needed by: tests (scripts/setup.sh test; the main job does without it)
# Debian's Chromium, used headless by the run-report test (screenshot + DOM check of `rlstream report`).
# Idempotent: installs the `chromium` package only if /usr/bin/chromium is missing.
set -euo pipefail
log() { printf '[setup:chromium] %s\n' "$*" >&2; }

if command -v chromium >/dev/null 2>&1; then
  log "present ($(chromium --version 2>/dev/null | head -1))"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  log "chromium is missing: run scripts/setup.sh as root (or apt-get install -y chromium)"
  exit 2
fi
log "installing chromium (Debian package, ~100 MB)"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
log "ready ($(chromium --version 2>/dev/null | head -1))"
