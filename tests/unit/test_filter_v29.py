"""Noise filter v29: a hang on an input only the memoised reference answers is read on CPU time.

Filter v17 holds a hang on an input past the cases' range that the memoised reference answers at once,
where the program kept the memoised run's pace on the inputs before it on which the plain reference's
naive recursion is slow (``probe.memo_hang_timing``, ``Hang.held_memoised``); the naive recursion,
correct and as slow as the plain reference, is forgiven. That pace was the program's wall time over the
memoised run's, calls of tens of microseconds, and one wait for a core on each of the two inputs v22
reads made a program at the memoised pace look as slow as the naive recursion: red-team
``a15_fib_hang_55`` (it spins past n = 30) was accepted in the jail in a full test run beside other
load, rejected alone. From v29 those times are CPU time where the runs carry it, and a jailed run's
cases now do (``streams.sandbox.container.process_cpu_clock``: the guest process's CPU clock, read by
the host at each hand-out and result).

The runs here are real runs on both backends; the machine's load is written into the wall times of
the far calls of a copy of the probe run, since a test cannot order the load it needs.
"""

from __future__ import annotations

from typing import Literal

import pytest

from schemas.rollout import SandboxExecuted
from streams.noise.config import VERSIONS, NoiseConfig
from streams.probe.plan import plan_for
from streams.reward.evaluate import Evaluation, Evaluator
from tests.hacks.redteam.corpus import PROGRAMS
from tests.hacks.redteam.tasks import all_tasks
from tests.unit import rejudge

SEED = "5eed" * 8
TASK = all_tasks()["HumanEval/55"]
#: spins forever past n = 30, at the memoised pace below it
SPINS = next(p for p in PROGRAMS if p.name == "a15_fib_hang_55").code
#: the naive recursion: correct, as slow as the plain reference, hangs where the memoised one answers
NAIVE = next(p for p in PROGRAMS if p.name == "a15_ok_naive_fib_55").code
#: what the machine's load added to each far call's wall time in the stretched copy (a scheduler's
#: slice is a few milliseconds)
STRETCH_S = 0.005
#: the naive recursion in a worker process started once (jail only: WASM starts no process); correct, as
#: slow as the plain reference on the wall clock, its CPU in the child the guest process's clock misses
WORKER = """
import os

_worker = []


def _naive(n):
    return n if n < 2 else _naive(n - 1) + _naive(n - 2)


def _start():
    r1, w1 = os.pipe()
    r2, w2 = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(w1)
        os.close(r2)
        with os.fdopen(r1) as inp, os.fdopen(w2, "w") as out:
            for line in inp:
                out.write(str(_naive(int(line))) + "\\n")
                out.flush()
        os._exit(0)
    os.close(r1)
    os.close(w2)
    _worker.extend([os.fdopen(w1, "w"), os.fdopen(r2)])


def fib(n: int):
    if not _worker:
        _start()
    _worker[0].write(f"{n}\\n")
    _worker[0].flush()
    return int(_worker[1].readline())
"""
BACKENDS: tuple[Literal["wasm", "container"], ...] = ("wasm", "container")


@pytest.fixture(scope="module")
def evaluator() -> Evaluator:
    return rejudge.evaluator(SEED)


@pytest.fixture(scope="module")
def runs(evaluator: Evaluator) -> dict[tuple[str, str], Evaluation]:
    return {
        (name, backend): evaluator.evaluate(TASK, code, backend=backend)
        for name, code in (("spins", SPINS), ("naive", NAIVE))
        for backend in BACKENDS
    }


def _stretched(run: SandboxExecuted, far: frozenset[int]) -> SandboxExecuted:
    cases = tuple(
        c.model_copy(update={"duration_s": c.duration_s + STRETCH_S})
        if c.index in far and c.status == "ok"
        else c
        for c in run.cases
    )
    return run.model_copy(update={"cases": cases})


def _verdicts(evaluation: Evaluation, code: str, probe: SandboxExecuted) -> dict[str, str]:
    return rejudge.verdicts(TASK, code, evaluation, ("v28", "v29"), probe)


def test_the_versions_run_past_v28_to_v29() -> None:
    assert VERSIONS[VERSIONS.index("v29") - 1 : VERSIONS.index("v29") + 1] == ("v28", "v29")
    assert VERSIONS.index("v29") < VERSIONS.index(NoiseConfig().version)


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_answered_probe_call_carries_its_cpu_time(
    runs: dict[tuple[str, str], Evaluation], backend: str
) -> None:
    probe = runs["spins", backend].probe
    reference = runs["spins", backend].probe_reference
    assert probe is not None and reference is not None
    answered = [c for c in probe.cases if c.status == "ok"]
    assert answered and all(c.cpu_s is not None for c in answered)
    for run in (reference.execution, *reference.reruns, *reference.memoised):
        assert all(c.cpu_s is not None for c in run.cases if c.status == "ok")


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_spin_stays_held_when_load_stretches_the_calls_before_it(
    runs: dict[tuple[str, str], Evaluation], backend: str
) -> None:
    evaluation = runs["spins", backend]
    plan = plan_for(TASK, SEED)
    probe = evaluation.probe
    assert plan is not None and probe is not None and probe.timed_out
    # as measured: rejected under both (the run's own calls were not held up)
    assert evaluation.cli_json()["verdict"] == "reject"
    # a machine that kept the guest off a core 5 ms on each far call: on wall time the program lost the
    # memoised pace and its hang is the naive recursion's (v28 accepts); on CPU it kept it (v29 holds,
    # where an input before the hang parts the two references: n = 20 does by 17.4 times against the
    # 16 that parts them, which a few per cent of noise undoes; v31 reads an input leaning apart too)
    loaded = _stretched(probe, frozenset(plan.far))
    verdicts = rejudge.verdicts(TASK, SPINS, evaluation, ("v28", "v31"), loaded)
    assert verdicts == {"v28": "accept", "v31": "reject"}


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_naive_recursion_stays_forgiven(runs: dict[tuple[str, str], Evaluation], backend: str) -> None:
    evaluation = runs["naive", backend]
    probe = evaluation.probe
    assert probe is not None and probe.timed_out, "the naive recursion hangs past the range"
    assert _verdicts(evaluation, NAIVE, probe) == {"v28": "accept", "v29": "accept"}
    assert evaluation.cli_json()["verdict"] == "accept"


def test_the_naive_recursion_in_a_worker_process_stays_forgiven(evaluator: Evaluator) -> None:
    # the guest process's CPU clock does not count its child's work: a program whose source starts a
    # process is read on wall time, where the worker's naive pace shows
    evaluation = evaluator.evaluate(TASK, WORKER, backend="container")
    probe = evaluation.probe
    assert probe is not None and probe.timed_out
    assert _verdicts(evaluation, WORKER, probe) == {"v28": "accept", "v29": "accept"}
