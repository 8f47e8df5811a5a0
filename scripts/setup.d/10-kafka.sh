#!/usr/bin/env bash
# needed by: main (scripts/setup.sh main)
# Fetches the Apache Kafka broker jars from Maven Central into the cache (<home>/kafka/<version>/lib,
# home = RLSTREAM_HOME or ~/.rlstream), through the same code path as `rlstream broker up`.
# Idempotent: a complete cache is left as is. Needs Java 17 and Maven (scripts/setup.sh installs both).
set -euo pipefail
cd "$(dirname "$0")/../.."

log() { printf '[setup:kafka] %s\n' "$*" >&2; }

if ! command -v java >/dev/null 2>&1; then
  log "Java is missing: run scripts/setup.sh as root (or apt-get install -y openjdk-17-jre-headless)"
  exit 2
fi
if ! command -v mvn >/dev/null 2>&1; then
  log "Maven is missing: run scripts/setup.sh as root (or apt-get install -y maven)"
  exit 2
fi
log "Apache Kafka jars (cached after the first run)"
"${VENV:-.venv}/bin/rlstream" broker fetch
