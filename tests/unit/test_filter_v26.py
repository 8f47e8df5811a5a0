"""Noise filter v26: the cost rules read a call's CPU time, not its wall time, where the run measured it.

Filter v16/v17 hold a ``MemoryError`` (or a memory or stack stop) on a long input past the cases' range
where the reference answers it cheaply and the program kept the reference's pace on the largest far
inputs before it (``probe._grew``); a program whose cost grew there (a quadratic one) is forgiven. The
pace was read on wall time, and on a loaded machine a call of microseconds waits milliseconds for a
core, and where each of the largest far inputs waited (v17's ``steady``) the cost read as grown and
the stop was forgiven (red-team ``a15_long_memory_fill_35`` under v16, beside other load). From v26 each time
is the CPU the guest's thread spent on the call (``CaseResult.cpu_s``, read by the host at the WASM
door on that thread), which a wait for a core does not add to.

The runs here are real WASM runs; the machine's load is written into the wall times of one of them
(every far call stretched by 5 ms), since a test cannot order the load it needs.
"""

from __future__ import annotations

import pytest

from schemas.rollout import SandboxExecuted
from streams.noise.config import VERSIONS
from streams.noise.probe import cheap_far, long_input
from streams.probe.plan import plan_for
from streams.reward.evaluate import Evaluation
from streams.sandbox import Sandbox, SandboxConfig
from streams.sandbox.result import Job
from tests.hacks.redteam.corpus import PROGRAMS
from tests.hacks.redteam.tasks import all_tasks
from tests.unit import rejudge

SEED = "5eed" * 8
TASK = all_tasks()["HumanEval/35"]
#: raises MemoryError at once on every list of more than 64 elements (the plan's long inputs only)
REFUSES_LONG = next(p for p in PROGRAMS if p.name == "a15_long_memoryerror_35").code
#: what the machine's load added to each far call's wall time in the stretched copy
STRETCH_S = 0.005


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return Sandbox(SandboxConfig())


@pytest.fixture(scope="module")
def evaluation(sandbox: Sandbox) -> Evaluation:
    return rejudge.evaluator(SEED, sandbox).evaluate(TASK, REFUSES_LONG, backend="wasm")


def test_the_versions_run_past_v25_to_v26() -> None:
    assert VERSIONS[VERSIONS.index("v26") - 1 : VERSIONS.index("v26") + 1] == ("v25", "v26")


def test_a_wasm_case_carries_its_cpu_time_and_a_wait_is_not_in_it(sandbox: Sandbox) -> None:
    code = (
        "import time\n"
        "def f(n, wait):\n"
        "    if wait:\n"
        "        time.sleep(0.1)\n"
        "    s = 0\n"
        "    for i in range(n):\n"
        "        s += i\n"
        "    return s\n"
    )
    job = Job(
        mode="cases", code=code, entry_point="f", inputs=("(10, False)", "(200000, False)", "(10, True)")
    )
    wasm = sandbox.execute(job, "wasm")
    small, busy, waited = wasm.cases
    assert all(c.status == "ok" and c.cpu_s is not None for c in wasm.cases)
    assert busy.cpu_s is not None and small.cpu_s is not None and busy.cpu_s > 10 * small.cpu_s
    # the sleep is wall time the guest's thread did not run
    assert waited.cpu_s is not None and waited.duration_s >= 0.1 and waited.cpu_s < 0.05
    # a jailed guest is another process: its cases are read on that process's CPU clock, from outside
    jailed = sandbox.execute(job, "container")
    small, busy, waited = jailed.cases
    assert all(c.status == "ok" and c.cpu_s is not None for c in jailed.cases)
    assert busy.cpu_s is not None and small.cpu_s is not None and busy.cpu_s > 10 * small.cpu_s
    assert waited.cpu_s is not None and waited.duration_s >= 0.1 and waited.cpu_s < 0.05


def _stretched(run: SandboxExecuted, far: frozenset[int]) -> SandboxExecuted:
    cases = tuple(
        c.model_copy(update={"duration_s": c.duration_s + STRETCH_S}) if c.index in far else c
        for c in run.cases
    )
    return run.model_copy(update={"cases": cases})


def test_a_long_input_memory_error_stays_held_when_load_stretches_the_calls_before_it(
    evaluation: Evaluation,
) -> None:
    plan = plan_for(TASK, SEED)
    probe, reference = evaluation.probe, evaluation.probe_reference
    assert plan is not None and probe is not None and reference is not None
    assert probe.probe == plan.digest
    long = {c.index for c in probe.cases if long_input(plan, c.index) and c.error == "MemoryError"}
    assert long, "the program refuses the plan's long inputs"
    # on the runs as measured, both readings hold the MemoryError on every long input
    for cpu in (False, True):
        cheap = cheap_far(plan, reference, probe, steady=True, cpu=cpu)
        assert cheap is not None and long <= cheap
    # a machine that kept the guest off a core 5 ms on each far call: read on wall time the program's
    # cost "grew" and its MemoryError on the long inputs is forgiven (v25); read on CPU it is held (v26)
    loaded = _stretched(probe, frozenset(plan.far))
    through_v25 = cheap_far(plan, reference, loaded, steady=True, cpu=False)
    from_v26 = cheap_far(plan, reference, loaded, steady=True, cpu=True)
    assert through_v25 is not None and not long & through_v25
    assert from_v26 is not None and long <= from_v26


def test_the_program_is_rejected_from_v26_on_the_loaded_run(evaluation: Evaluation) -> None:
    plan = plan_for(TASK, SEED)
    probe = evaluation.probe
    assert plan is not None and probe is not None
    loaded = _stretched(probe, frozenset(plan.far))
    verdicts = rejudge.verdicts(TASK, REFUSES_LONG, evaluation, ("v25", "v26"), loaded)
    assert verdicts == {"v25": "accept", "v26": "reject"}
    assert evaluation.cli_json()["verdict"] == "reject"
