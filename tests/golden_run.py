"""A deterministic one-shot run, recorded as the records it writes: what ``max_turns = 1`` must keep byte
for byte. The pipeline's stream processors, wired as ``rlstream worker`` wires them, run on the in-memory
runtime with the learner between rounds (``rlstream/inprocess.py``); every event goes through the real codec
exactly as it goes on the log (type, id, key, body), in the order it was written. Fields that are timings
(or derive from timings: the reference run's id) are blanked; everything else - every event id and body -
must match.

``python -m tests.golden_run --record`` writes ``tests/golden/one_turn_run.json``. It was recorded from
main before episodes existed (this file and ``rlstream/inprocess.py`` run on that code unchanged); the test
``tests/integration/test_one_turn_golden.py`` runs it again and compares.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from unittest import mock

import torch

from infra.runtime.memory import MemoryLog
from learner.config import LearnerConfig
from producers.ingest.synthetic import SAMPLING, synthetic_tasks
from rlstream.inprocess import InProcessRun
from rlstream.settings import Settings
from rlstream.workers import STREAM_PROCESSORS

GOLDEN = Path(__file__).parent / "golden" / "one_turn_run.json"
RUN_ID = "golden"
CACHE = Path.home() / ".rlstream"
#: timings, and what is derived from them, per event type: blanked before comparing. So are the names of
#: the sandbox build an execution ran on (``runtime_hash``, and the ``cache_key`` that includes it): they
#: change with the machine's runtime (its interpreter, its warm module's recipe), not with what a run does
VOLATILE = {
    "rlstream.rollout.generated": ("duration_s",),
    "rlstream.rollout.executed": (
        "duration_s",
        "load_s",
        "active_s",
        "load_cpu_s",
        "active_cpu_s",
        "cases.*.duration_s",
        "cases.*.cpu_s",
        "cases.*.memory_grown",
        "cases.*.memory_left",
        "runtime_hash",
        "cache_key",
    ),
    "rlstream.reference.executed": (
        "@id",
        "execution.duration_s",
        "execution.load_s",
        "execution.active_s",
        "execution.load_cpu_s",
        "execution.active_cpu_s",
        "execution.cases.*.duration_s",
        "execution.cases.*.cpu_s",
        "execution.cases.*.memory_grown",
        "execution.cases.*.memory_left",
        "execution.runtime_hash",
        "execution.cache_key",
        "reruns.*.runtime_hash",
        "reruns.*.cache_key",
        # the reference's re-runs of a probe plan (main's noise filter v2) are timed like its run
        "reruns.*.duration_s",
        "reruns.*.load_s",
        "reruns.*.active_s",
        "reruns.*.load_cpu_s",
        "reruns.*.active_cpu_s",
        "reruns.*.cases.*.duration_s",
        "reruns.*.cases.*.cpu_s",
        "reruns.*.cases.*.memory_grown",
        "reruns.*.cases.*.memory_left",
    ),
    # names the reference's probe runs, whose id hashes their timings
    "rlstream.rollout.filtered": ("probe_reference_event_id",),
    "rlstream.rollout.scored": ("reference_event_id", "components.efficiency", "details.runtime_ratio"),
    # CPU training here is not bit-for-bit the same run to run: the weights' hash varies in the last bits
    # (the generations the weights produce are compared, and are the same)
    "rlstream.policy.published": ("checkpoint_uri", "sha256", "metrics"),
    # a sample's trace: None in a process without tracing, a fresh span id once any earlier code in the
    # process (another test) configured it
    "rlstream.rollout.assembled": ("samples.*.traceparent",),
}


class RecordingLog(MemoryLog):
    """A :class:`MemoryLog` that keeps every record in the order it was written, across topics."""

    def __init__(self) -> None:
        super().__init__()
        self.written: list[dict[str, Any]] = []

    def append(
        self,
        topic: str,
        key: bytes | None,
        value: bytes | None,
        headers: Iterable[tuple[str, bytes]] = (),
        *,
        timestamp_ms: int = 0,
        partition: int | None = None,
    ) -> tuple[int, int]:
        headers = tuple(headers)
        where = super().append(topic, key, value, headers, timestamp_ms=timestamp_ms, partition=partition)
        names = dict(headers)
        self.written.append(
            {
                "topic": topic,
                "type": names["ce_type"].decode(),
                "id": names["ce_id"].decode(),
                "key": (key or b"").decode(),
                "body": json.loads(value or b"null"),
            }
        )
        return where


def run_records(
    workdir: Path, *, steps: int = 2, tasks: int = 2, group_size: int = 2
) -> list[dict[str, Any]]:
    """The run's records in the order they were written: topic, type, id, key and body."""
    torch.manual_seed(0)
    settings = Settings(
        run_id=RUN_ID,
        home=workdir,
        generator={"model": "tiny", "seed": 0, "models_dir": CACHE / "models"},
        sandbox={"cache_dir": CACHE / "cache" / "sandbox", "backend": "wasm", "workers": 1},
        # no efficiency weight: the only timing-dependent part of a reward stays out of what is trained on
        reward={"weights": {"efficiency": 0.0}},
        # the reward the recording was scored with (the default then): a later default is a choice of
        # configuration, not a change of what a one-turn run writes
        reward_function="code-v3",
        # likewise the noise filter's version (v2, the default then)
        noise={"version": "v2"},
        pipeline={
            "scheduler": {
                "group_size": group_size,
                "epochs": steps,
                "sampling": SAMPLING,
                "max_groups_in_flight": tasks,
            },
            "group_deadline_s": 3600.0,
        },
    )
    learner = LearnerConfig(
        backend="torch",
        accelerator="cpu",
        lr=5e-3,
        token_budget=64,
        checkpoint_dir=workdir / "ckpt",
        pad_token_id=3,
    )
    log = RecordingLog()
    # every stream processor of the training pipeline (the evaluator has nothing to sample here; the
    # monitor watches the run, it is no part of it)
    names = [name for name in STREAM_PROCESSORS if name not in ("evaluator", "monitor")]
    # the recording predates secret probe seeds: its probe runs ran the plan of the task alone, which a
    # probe run without a seed still runs and writes exactly as then (a seed drawn afresh would change
    # the plan, so the records, on every run)
    with mock.patch("streams.sandbox.agent.new_probe_seed", return_value=None):
        run = InProcessRun(settings, learner, names, tasks=synthetic_tasks(tasks), log=log)
        try:
            for _ in range(steps * 4):
                run.runtime.clock += 1.0
                run.drain()
        finally:
            run.close()
    return log.written


#: timings measured since the recording (a WASM case's CPU time, filter v26; a run's load and active span
#: on the guest's own time, code-v7; a stopped call's memory, filter v28): left out, not blanked, so the
#: recording stays as it was written
DROPPED = frozenset({"cpu_s", "load_cpu_s", "active_cpu_s", "memory_grown", "memory_left"})


def _blank(body: Any, path: list[str]) -> None:
    if not path or not isinstance(body, dict | list):
        return
    head, rest = path[0], path[1:]
    targets = (
        body if head == "*" and isinstance(body, list) else [body.get(head)] if isinstance(body, dict) else []
    )
    if not rest:
        if isinstance(body, dict) and head in DROPPED:
            body.pop(head, None)
        elif isinstance(body, dict) and head in body:
            body[head] = "<volatile>"
        return
    for child in targets:
        _blank(child, rest)


#: lists of floats the model computes: its forward pass is not bit for bit the same on another CPU (the
#: recording's -7.873999118804932 is -7.87399959564209 on another x86-64), so they are compared to
#: LOGPROB_DIGITS decimals; the tokens sampled, and everything derived from them, are compared exactly
MODEL_FLOATS = {
    "rlstream.rollout.generated": ("behaviour_logprobs",),
    "rlstream.rollout.assembled": ("samples.*.behaviour_logprobs",),
}
LOGPROB_DIGITS = 4


def _round(body: Any, path: list[str]) -> None:
    if not path or not isinstance(body, dict | list):
        return
    head, rest = path[0], path[1:]
    if head == "*":
        for child in body if isinstance(body, list) else []:
            _round(child, rest)
    elif isinstance(body, dict) and head in body:
        if rest:
            _round(body[head], rest)
        elif isinstance(body[head], list):
            body[head] = [round(x, LOGPROB_DIGITS) if isinstance(x, float) else x for x in body[head]]


def normalised(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for r in records:
        r = copy.deepcopy(r)
        base = r["type"].rpartition(".v")[0]
        for path in VOLATILE.get(base, ()):
            if path == "@id":
                r["id"] = "<volatile>"
            else:
                _blank(r["body"], path.split("."))
        for path in MODEL_FLOATS.get(base, ()):
            _round(r["body"], path.split("."))
        out.append(r)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--record", action="store_true", help=f"write {GOLDEN}")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        records = normalised(run_records(Path(tmp)))
    text = json.dumps(records, indent=1, sort_keys=True) + "\n"
    if args.record:
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(text)
        print(f"wrote {len(records)} records to {GOLDEN}")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
