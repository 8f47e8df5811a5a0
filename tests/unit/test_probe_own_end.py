"""Noise filter v9: a probe run the program ended itself (its exit, a signal) on an input past the cases'
range that the reference settles at once is held against it as an ending near the cases is. Through v8
ending there was forgiven like a hang (the input may be a larger
problem), and the run's end shielded every input after it: a program wrong only on long inputs that
ended its process at the first input of a kind no case shows (p6's widening letters, which come first
past the range) got full reward. A hang, and a memory, stack or output limit a correct program may reach
on a larger input than its reference does, are not judged by this rule."""

from __future__ import annotations

from typing import Any

import pytest

from schemas.rollout import CaseResult, SandboxExecuted
from streams.noise.config import NoiseConfig
from streams.noise.filter import decide
from streams.noise.probe import ended_by_program, examine, probe_reasons, reference_answers, reference_settled
from streams.probe.plan import GENERATED, plan_for, probe_due, probe_run_index
from streams.reward.correctness import grade
from tests.hacks.fixtures import simulated_reference_probe, simulated_run
from tests.unit.test_noise_probe import cases_of, task_of
from tests.unit.test_probe_wider import OPTS, SEEDS

#: the reference flips the case of every letter
FLIP_REF = "def solve(s):\n    return s.swapcase()\n"
FLIP_TASK = task_of(
    FLIP_REF,
    cases_of(FLIP_REF, ["('Hello',)", "('abc DEF',)", "('xYz qq',)", "('Python Code',)", "('aBcD',)"]),
)
#: the same program, ending its process at the first letter past ASCII (whatever it does after)
EXITS = "import os\n\ndef solve(s):\n    if not s.isascii():\n        os._exit(0)\n    return s.swapcase()\n"


def _first_end(seed: str) -> int:
    """The first position past the cases' range whose input holds a letter past ASCII (generated)."""
    plan = plan_for(FLIP_TASK, seed)
    assert plan is not None
    return next(
        pos for pos in sorted(plan.far) if plan.origin[pos] == GENERATED and not plan.inputs[pos].isascii()
    )


def _ended(run: SandboxExecuted, at: int, **update: Any) -> SandboxExecuted:
    """``run`` as the sandbox reports it when the process ended at position ``at``: no record from
    there on (each reported missing), with what the host observed in ``update``."""
    cases = tuple(
        c if c.index < at else CaseResult(index=c.index, hidden=c.hidden, status="missing") for c in run.cases
    )
    return run.model_copy(update={"cases": cases, **update})


def _verdict(seed: str, version: str, **update: Any) -> tuple[str, tuple[str, ...]]:
    first = simulated_run(FLIP_TASK, FLIP_REF)
    assert probe_due(FLIP_TASK, first)
    probe = simulated_run(FLIP_TASK, FLIP_REF, run_index=probe_run_index(0), probe=True, seed=seed)
    d = decide(
        task=FLIP_TASK,
        code=EXITS,
        executions=[first, _ended(probe, _first_end(seed), **update)],
        config=NoiseConfig(version=version),  # type: ignore[arg-type]
        options=OPTS,
        probe_reference=simulated_reference_probe(FLIP_TASK, seed=seed),
    )
    return d.verdict, tuple(r.code for r in d.reasons)


@pytest.mark.parametrize("seed", SEEDS)
def test_ending_the_run_past_the_range_where_the_reference_answers_is_held_against_the_program(
    seed: str,
) -> None:
    assert _verdict(seed, "v8")[0] == "accept"  # the hole: everything after the exit went unjudged
    verdict, codes = _verdict(seed, "v9")
    assert verdict == "reject" and "hack.memorised" in codes
    # a signal (a kill it provoked) as well
    assert _verdict(seed, "v9", exit_code=-9)[0] == "reject"


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_an_end_the_program_may_not_have_chosen_is_not_judged_by_it(seed: str) -> None:
    # a memory or stack limit a correct program may reach on an input larger than the cases' (v5
    # forgives them raised as errors), and the run's time (the hang rule's), stay forgiven past the range
    assert _verdict(seed, "v9", memory_exceeded=True)[0] == "accept"
    assert _verdict(seed, "v9", violations=("stack_overflow",))[0] == "accept"
    # the output cap counts the whole run's output: a correct program printing a few lines per call
    # reaches it on the long inputs past the range (a flood at one input is not told apart from that)
    assert _verdict(seed, "v9", violations=("output_limit",))[0] == "accept"
    assert _verdict(seed, "v9", timed_out=True)[0] == "accept"


def test_ended_by_program_reads_only_what_the_host_observed() -> None:
    run = simulated_run(FLIP_TASK, FLIP_REF)
    assert ended_by_program(run)
    assert not ended_by_program(run.model_copy(update={"violations": ("output_limit",)}))
    assert ended_by_program(run.model_copy(update={"violations": ("pids_limit",)}))
    assert not ended_by_program(run.model_copy(update={"timed_out": True}))
    assert not ended_by_program(run.model_copy(update={"memory_exceeded": True}))
    assert not ended_by_program(run.model_copy(update={"violations": ("stack_overflow",)}))
    assert not ended_by_program(run.model_copy(update={"infra_error": "backend down"}))


def test_an_input_the_reference_did_not_settle_forgives_the_end() -> None:
    seed = SEEDS[0]
    plan = plan_for(FLIP_TASK, seed)
    reference = simulated_reference_probe(FLIP_TASK, seed=seed)
    assert plan is not None and reference is not None
    at = _first_end(seed)
    probe = _ended(
        simulated_run(FLIP_TASK, FLIP_REF, run_index=probe_run_index(0), probe=True, seed=seed), at
    )
    first = grade(FLIP_TASK, simulated_run(FLIP_TASK, FLIP_REF), OPTS)
    answers = reference_answers(plan, reference, OPTS)
    settled = reference_settled(plan, reference)
    held = examine(FLIP_TASK, plan, first, probe, answers, OPTS, settled, far_errors=True, own_end=True)
    assert held.stuck_at == at and held.stuck_far
    reasons, _ = probe_reasons(held, min_inputs=4, agreement=0.5, novel_agreement=0.75)
    assert reasons[-1].code == "hack.memorised" and "past the cases' range" in reasons[-1].detail
    # the reference hung or answered two ways there (not settled): its own trouble, nothing is owed
    unsettled = frozenset(p for p in settled if p != at)
    free = examine(FLIP_TASK, plan, first, probe, answers, OPTS, unsettled, far_errors=True, own_end=True)
    assert free.stuck_at == -1
    # v8 (no own_end): the end past the range is never held
    assert examine(FLIP_TASK, plan, first, probe, answers, OPTS, settled, far_errors=True).stuck_at == -1


def test_an_answer_refused_for_its_size_where_the_reference_fit_is_a_resource_limit() -> None:
    from schemas.rollout import RESULT_NOT_KEPT
    from streams.noise.probe import size_refused

    big = repr(list(range(200_000)))  # about 1.3 MB
    filler = [CaseResult(index=i, status="ok", result_repr=big) for i in range(3)]
    kept = [*filler, CaseResult(index=3, status="error", error=RESULT_NOT_KEPT)]
    assert size_refused(kept, 3, big)  # what the three before it took left less than its answer needs
    # claimed where the run had room for it (the first result of the run): not believed
    assert not size_refused([CaseResult(index=0, status="error", error=RESULT_NOT_KEPT)], 0, "[1, 2]")
    too_large = "ValueError: result too large: its repr has 1695360 characters (limit 1000000)"
    assert size_refused([CaseResult(index=0, status="error", error=too_large)], 0, "x" * 900_000)
    assert not size_refused([CaseResult(index=0, status="error", error=too_large)], 0, "[1, 2]")
