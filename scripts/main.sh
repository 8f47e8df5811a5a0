#!/usr/bin/env bash
# The main job (README): installs what is missing, then runs a whole local run with `rlstream run`:
# a local Apache Kafka broker, the topic catalog, every worker, HumanEval tasks and the tiny model.
# Arguments replace the defaults, e.g. `bash scripts/main.sh --tasks humaneval --model smollm2 --limit 8`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}" TOKENIZERS_PARALLELISM=false
if [ "$#" -eq 0 ]; then
  set -- --tasks humaneval --limit 20 --model tiny --group-size 4
fi
exec .venv/bin/rlstream run "$@"
