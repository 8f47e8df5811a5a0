#!/usr/bin/env bash
# Installs everything rlstream needs on a fresh Debian 12 machine, idempotently:
# Debian packages, uv, the project's virtualenv from uv.lock, then each area's own step in
# scripts/setup.d/*.sh (Kafka jars via Maven, the sandbox runtime, ...). Safe to run again.
# The steps run rlstream from the virtualenv in $VENV (default .venv; scripts/gpu-check.sh passes the GPU
# environment's, infra/gpu/.venv).
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '[setup] %s\n' "$*" >&2; }

. scripts/lib/system.sh
need_apt=()
command -v java >/dev/null 2>&1 || need_apt+=(openjdk-17-jre-headless)
command -v mvn >/dev/null 2>&1 || need_apt+=(maven)
command -v bwrap >/dev/null 2>&1 || need_apt+=(bubblewrap)
ensure_debian_packages "${need_apt[@]}"
ensure_uv

log "syncing the virtualenv from uv.lock (first run downloads torch: a few minutes)"
uv sync --frozen --quiet

for step in scripts/setup.d/*.sh; do
  [ -e "$step" ] || continue
  log "running $step"
  bash "$step"
done
log "ready"
