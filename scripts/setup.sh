#!/usr/bin/env bash
# Installs what rlstream needs on a fresh Debian 12 machine, by need and idempotently:
#
#   bash scripts/setup.sh main [--models "tiny smollm2"]   what the main job uses: Java 17, Maven and
#       bubblewrap (Debian packages), uv, the virtualenv from uv.lock, the Apache Kafka jars, the sandbox's
#       WASM runtime and the models named (default: tiny). scripts/main.sh runs this.
#   bash scripts/setup.sh test      all of main (both models) and the tests' extras: the container jail's
#       numpy/pandas/scipy, PostgreSQL, the Jaeger trace backend and Chromium. scripts/test.sh runs this
#       (and so does `bash scripts/setup.sh` without a profile).
#
# Each area's step is a script in scripts/setup.d/; a step whose header says `# needed by: tests` is a
# test extra, every other one belongs to main. Each step's duration is printed, and the total; main's
# independent steps run side by side (the Kafka jars download while the sandbox runtime compiles).
# Safe to run again: later runs only check the caches (a few seconds). The steps run rlstream from the
# virtualenv in $VENV (default .venv; scripts/gpu-check.sh passes the GPU environment's, infra/gpu/.venv).
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '[setup] %s\n' "$*" >&2; }

profile=test
models=""
while [ "$#" -gt 0 ]; do
  case "$1" in
    main | test) profile=$1 ;;
    --models) models=${2:?--models needs a value, e.g. --models "tiny smollm2"}; shift ;;
    *) log "unknown argument $1 (usage: scripts/setup.sh main|test [--models \"tiny smollm2\"])"; exit 2 ;;
  esac
  shift
done
if [ -z "$models" ]; then
  if [ "$profile" = main ]; then models=tiny; else models="tiny smollm2"; fi
fi

started=$(date +%s)
timings=()
# timed NAME COMMAND...: runs the command, prints and records how long it took
timed() {
  local name=$1 t0 rc=0
  shift
  t0=$(date +%s)
  "$@" || rc=$?
  timings+=("$name $(($(date +%s) - t0))s")
  if [ "$rc" -ne 0 ]; then
    log "$name failed (exit $rc) after $(($(date +%s) - t0))s"
    exit "$rc"
  fi
  log "$name done in $(($(date +%s) - t0))s"
}

. scripts/lib/system.sh
need_apt=()
command -v java >/dev/null 2>&1 || need_apt+=(openjdk-17-jre-headless)
command -v mvn >/dev/null 2>&1 || need_apt+=(maven)
command -v bwrap >/dev/null 2>&1 || need_apt+=(bubblewrap)
timed "debian packages" ensure_debian_packages "${need_apt[@]}"
timed uv ensure_uv
log "syncing the virtualenv from uv.lock (a fresh machine downloads torch: 1-3 min)"
# with the bytecode compiled once (~45 s on 2 cores; later syncs skip it), a process importing torch starts
# in about half the time even where PYTHONDONTWRITEBYTECODE is set: a restarted learner trains again sooner
timed virtualenv uv sync --frozen --compile-bytecode --quiet
# and the project's own modules (uv compiles what it installs, not the project's editable sources): a
# worker started where PYTHONDONTWRITEBYTECODE is set compiled them all first, about 1 s of CPU of a
# restarted learner's start-up; a module edited later is compiled again in memory, as before
timed "project bytecode" "${VENV:-.venv}/bin/python" -m compileall -q -j 0 \
  rlstream schemas producers streams consumers learner infra

# needed_by STEP: "tests" for a test extra, "main" otherwise
needed_by() {
  if grep -q '^# needed by: tests' "$1"; then echo tests; else echo main; fi
}

main_steps=()
test_steps=()
for step in scripts/setup.d/*.sh; do
  [ -e "$step" ] || continue
  if [ "$(needed_by "$step")" = tests ]; then test_steps+=("$step"); else main_steps+=("$step"); fi
done

# main's steps side by side: each downloads or compiles something of its own (the Kafka jars are mostly
# network and a JVM, the sandbox runtime's compile is CPU), so the slowest sets the time
pids=()
names=()
for step in "${main_steps[@]}"; do
  name=$(basename "$step" .sh)
  (
    t0=$(date +%s)
    args=()
    [ "$name" = 30-models ] && read -r -a args <<<"$models"
    [ "$name" = 20-sandbox ] && [ "$profile" = main ] && args=(--without-jail-wheels)
    bash "$step" "${args[@]}"
    log "$name done in $(($(date +%s) - t0))s"
  ) &
  pids+=($!)
  names+=("$name")
done
t0=$(date +%s)
failed=()
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || failed+=("${names[$i]}")
done
timings+=("main steps (side by side) $(($(date +%s) - t0))s")
if [ "${#failed[@]}" -gt 0 ]; then
  log "failed: ${failed[*]} (see the lines above)"
  exit 1
fi

if [ "$profile" = test ]; then
  for step in "${test_steps[@]}"; do
    timed "$(basename "$step" .sh)" bash "$step"
  done
fi
log "ready for ${profile} in $(($(date +%s) - started))s ($(IFS=';'; echo "${timings[*]}" | sed 's/;/, /g'))"
