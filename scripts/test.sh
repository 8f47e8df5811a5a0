#!/usr/bin/env bash
# The test command (README): installs what is missing (scripts/setup.sh test: what the main job uses plus
# the tests' extras, PostgreSQL, the Jaeger trace backend and Chromium), checks style and types, then runs
# every test against the real services the tests start themselves (Kafka broker, sandbox runtimes).
# Extra arguments go to pytest, e.g. `bash scripts/test.sh tests/unit -x`.
# Test files run on two pytest workers (TEST_WORKERS; 0 runs them in this process): most of an
# end-to-end test's time is spent waiting on brokers, models and timeouts, so two files side by side
# take about as long as the slower one even on 2 cores. Each worker starts its own session broker;
# a file's tests stay on one worker, so a module's shared run is made once.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test

export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 TOKENIZERS_PARALLELISM=false
echo "[test] ruff" >&2
.venv/bin/ruff check .
.venv/bin/ruff format --check . >/dev/null || { .venv/bin/ruff format --check .; exit 1; }
echo "[test] mypy" >&2
.venv/bin/mypy
echo "[test] pytest" >&2
set +e
# --no-loadscope-reorder: the files start in the order tests/conftest.py gives them (the long ones
# first); by default the scheduler starts the files with the most tests first, which put the long
# end-to-end files (one to three tests each) last and left one worker idle while the other ran them
.venv/bin/pytest -n "${TEST_WORKERS:-2}" --dist loadfile --no-loadscope-reorder "$@"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
  echo "[test] pytest collected no tests: treating as a failure" >&2
  exit 1
fi
exit "$rc"
