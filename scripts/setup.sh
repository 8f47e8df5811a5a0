#!/usr/bin/env bash
# Installs everything rlstream needs on a fresh Debian 12 machine, idempotently:
# Debian packages, uv, the project's virtualenv from uv.lock, then each area's own step in
# scripts/setup.d/*.sh (Kafka jars via Maven, the sandbox runtime, ...). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '[setup] %s\n' "$*" >&2; }

need_apt=()
command -v java >/dev/null 2>&1 || need_apt+=(openjdk-17-jre-headless)
command -v mvn >/dev/null 2>&1 || need_apt+=(maven)
command -v bwrap >/dev/null 2>&1 || need_apt+=(bubblewrap)
if [ "${#need_apt[@]}" -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    log "missing Debian packages: ${need_apt[*]} (run as root or install them: apt-get install ${need_apt[*]})"
    exit 2
  fi
  log "installing Debian packages: ${need_apt[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

if ! command -v uv >/dev/null 2>&1; then
  log "installing uv"
  python3 -m pip install --quiet --disable-pip-version-check "uv==0.13.9" 2>/dev/null \
    || python3 -m pip install --quiet --disable-pip-version-check --break-system-packages "uv==0.13.9"
fi

log "syncing the virtualenv from uv.lock (first run downloads torch: a few minutes)"
uv sync --frozen --quiet

for step in scripts/setup.d/*.sh; do
  [ -e "$step" ] || continue
  log "running $step"
  bash "$step"
done
log "ready"
