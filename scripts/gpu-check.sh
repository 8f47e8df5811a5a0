#!/usr/bin/env bash
# The GPU path in one command (README, "GPU"). On a machine with an NVIDIA GPU it installs what it needs -
# the GPU environment (infra/gpu/.venv from infra/gpu/uv.lock: rlstream, vLLM and DeepSpeed resolved
# together), Java and Maven for the Kafka jars, the sandbox runtime, the models - then runs the GPU checks
# and prints one table (bench/gpu_check.py): the vLLM backend's tests (behaviour log-probs vs a
# teacher-forced recomputation, a live weight update), generation vs plain vllm.LLM.generate, the learner
# per ZeRO stage vs a plain torch loop, and a short rlstream run with the vLLM generator and the DeepSpeed
# learner. Table, numbers and logs: build/gpu-check/. Arguments go to bench/gpu_check.py (e.g. --quick).
# Without a GPU it says so and exits 0, installing nothing. Exit 1: a check failed; 2: the install failed.
set -euo pipefail
cd "$(dirname "$0")/.."
log() { printf '[gpu-check] %s\n' "$*" >&2; }

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
  echo "gpu-check: no NVIDIA GPU on this machine (nvidia-smi lists none): nothing was installed or run."
  echo "  On a machine with one, this command installs the GPU environment and prints the GPU checks' table."
  echo "  The parts that need no GPU run with the test suite: tests/unit/test_gpu_env.py (the GPU lock"
  echo "  resolves, offline) and tests/unit/test_gen_vllm_backend.py (the vLLM backend's bookkeeping)."
  exit 0
fi
nvidia-smi -L | sed 's/^/[gpu-check] /' >&2
if [ "$(uname -m)" != x86_64 ]; then
  log "infra/gpu/uv.lock is resolved for x86-64 Linux (vLLM's wheels); this machine is $(uname -m)"
  exit 2
fi

install_failed() {
  log "install failed: $1"
  log "(the install reaches PyPI, Maven Central and Debian's mirrors; a machine without them cannot run this)"
  exit 2
}

. scripts/lib/system.sh
need_apt=()
command -v java >/dev/null 2>&1 || need_apt+=(openjdk-17-jre-headless)
command -v mvn >/dev/null 2>&1 || need_apt+=(maven)
command -v bwrap >/dev/null 2>&1 || need_apt+=(bubblewrap)
# Triton (under vLLM) compiles its kernel launchers with a C compiler at first use
command -v gcc >/dev/null 2>&1 || command -v clang >/dev/null 2>&1 || need_apt+=(gcc libc6-dev)
ensure_debian_packages "${need_apt[@]}"
ensure_uv

log "syncing infra/gpu/.venv from infra/gpu/uv.lock (the first run downloads vLLM, torch and CUDA libraries)"
uv sync --frozen --project infra/gpu --quiet || install_failed "uv sync --frozen --project infra/gpu"
export VENV=infra/gpu/.venv
"$VENV/bin/python" - <<'PY' || install_failed "the GPU environment's Python has no headers (Debian: apt-get install python3.11-dev)"
import os, sys, sysconfig
sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))
PY
for step in scripts/setup.d/10-kafka.sh scripts/setup.d/20-sandbox.sh scripts/setup.d/30-models.sh; do
  log "running $step"
  bash "$step" || install_failed "$step"
done

export OMP_NUM_THREADS="${OMP_NUM_THREADS:-4}" TOKENIZERS_PARALLELISM=false
exec "$VENV/bin/python" -m bench.gpu_check "$@"
