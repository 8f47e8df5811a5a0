#!/usr/bin/env bash
# needed by: tests (scripts/setup.sh test; the main job does without it)
# PostgreSQL server binaries (initdb, pg_ctl, postgres) for the projection tests, which start a
# throwaway cluster of their own (harness/postgres.py); nothing is started or enabled here.
# Idempotent: installs Debian's `postgresql` package only if no initdb is found.
set -euo pipefail
log() { printf '[setup:postgres] %s\n' "$*" >&2; }

find_initdb() {
  command -v initdb 2>/dev/null && return 0
  ls /usr/lib/postgresql/*/bin/initdb 2>/dev/null | sort -V | tail -1
}

found="$(find_initdb || true)"
if [ -n "$found" ]; then
  log "present ($("$found" --version 2>/dev/null | head -1))"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  log "PostgreSQL is missing: run scripts/setup.sh as root (or apt-get install -y postgresql)"
  exit 2
fi
log "installing postgresql (Debian package)"
apt-get update -qq
# a temporary policy-rc.d: install the binaries without starting the distribution's own cluster
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
  chmod +x /usr/sbin/policy-rc.d
  trap 'rm -f /usr/sbin/policy-rc.d' EXIT
fi
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >/dev/null
found="$(find_initdb)"
log "ready ($("$found" --version 2>/dev/null | head -1))"
