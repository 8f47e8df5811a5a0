#!/usr/bin/env bash
# The main job (README): installs what it uses and nothing else (scripts/setup.sh main: the virtualenv,
# the Kafka jars, the sandbox runtime, the model it runs), then a whole local run with `rlstream run`: a
# local Apache Kafka broker, the topic catalog, every worker, and by default the synthetic task family with
# the tiny model, in which the policy visibly learns within a few minutes on 2 CPUs (two tasks held out and
# evaluated every 5 versions). It ends by writing the run's HTML report and printing its path.
# Arguments replace the defaults, e.g. `bash scripts/main.sh --tasks humaneval --limit 8 --model smollm2`.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$#" -eq 0 ]; then
  set -- --tasks synthetic --model tiny --group-size 8 --steps 15 --eval-fraction 0.25
fi
# the model the arguments name (tiny unless --model says otherwise) is the only one the set-up prepares
model=tiny
prev=""
for arg in "$@"; do
  case "$arg" in
    --model=*) model=${arg#--model=} ;;
    *) [ "$prev" = --model ] && model=$arg ;;
  esac
  prev=$arg
done
case "$model" in
  tiny | smollm2) bash scripts/setup.sh main --models "$model" ;;
  *) bash scripts/setup.sh main --models none ;;  # a local HF folder: nothing to prepare
esac
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}" TOKENIZERS_PARALLELISM=false
exec .venv/bin/rlstream run "$@"
