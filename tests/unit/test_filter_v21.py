"""Noise filter v21: an answer whose text could not travel is judged by its digest.

Red-team rounds 13 and 17: an execution keeps at most 4 MiB of results and a result's text at most 1 M
characters, so on redteam/upto the probe run's answers past the first few large ones came back "result
not kept" from the reference's runs and from the program's alike, and on HumanEval/14 the long inputs'
answers (megabytes of prefixes) "result too large": none of them was judged, and a program clipping its
answer at 100,000 elements (``a17b_upto_cap_100k``, ``a17_upto_clip_100000``) or at 500 prefixes
(``a13_prefix_clip_14``) was accepted. The stub now reports a digest of such a result's canonical text
(``schemas.digest``), and from v21 the filter compares digests where the expected value is of exact
kinds. The runs here are what a sandbox reports (:func:`_reported`: the stub's digests, the host's
bounds), computed in this process.
"""

from __future__ import annotations

import ast
from functools import lru_cache

import pytest

from schemas.digest import value_digest
from schemas.reference import ReferenceExecuted
from schemas.rollout import MAX_RESULT_CHARS, CaseResult, SandboxExecuted, SandboxExecutedV3
from schemas.task import TaskPublished
from streams.noise.config import VERSIONS, NoiseConfig
from streams.noise.filter import decide
from streams.noise.probe import DISAGREES
from streams.probe.plan import plan_for, probe_due, probe_run_index
from streams.reward.literals import CompareOptions
from streams.sandbox.protocol import DIGEST_AFTER
from streams.sandbox.result import bound_cases
from tests.hacks.fixtures import simulated_reference_probe, simulated_run
from tests.hacks.redteam.tasks import all_tasks
from tests.unit.test_probe_wider import SEEDS

OPTS = CompareOptions()
UPTO = all_tasks()["redteam/upto"]
PREFIXES = all_tasks()["HumanEval/14"]
CLIP = "def upto(n: int) -> list:\n    return list(range(min(n, 100_000)))\n"
FLOATS = "def upto(n: int) -> list:\n    return [float(i) for i in range(n)]\n"
CLIP_PREFIXES = (
    "def all_prefixes(string: str):\n    return [string[:i] for i in range(1, min(len(string), 500) + 1)]\n"
)


def _reported(run: SandboxExecutedV3, task: TaskPublished, code: str, seed: str) -> SandboxExecutedV3:
    """``run`` as the sandbox reports it: a result past ``MAX_RESULT_CHARS`` an error with its digest,
    every result once the run's answers passed ``DIGEST_AFTER`` bytes with its digest, then the
    execution's bound (``bound_cases``: results past 4 MiB left out, their digests kept)."""
    plan = plan_for(task, seed)
    assert plan is not None
    namespace: dict[str, object] = {}
    exec(compile(code, "<solution>", "exec"), namespace)
    fn = namespace[task.entry_point]
    sent = 0
    cases: list[CaseResult] = []
    for c in run.cases:
        if c.status == "ok" and c.result_repr is not None:
            text = c.result_repr
            value = fn(*ast.literal_eval(plan.inputs[c.index]))  # type: ignore[operator]
            if len(text) > MAX_RESULT_CHARS:
                error = f"ValueError: result too large: its repr has {len(text)} characters"
                c = c.model_copy(
                    update={
                        "status": "error",
                        "result_repr": None,
                        "error": error,
                        "digest": value_digest(value),
                    }
                )
            else:
                sent += len(text.encode())
                if sent > DIGEST_AFTER:
                    c = c.model_copy(update={"digest": value_digest(value)})
        cases.append(c)
    return run.model_copy(update={"cases": bound_cases(tuple(cases))})


def _too_big(text: str) -> bool:
    """An input whose answer this process would not hold (the sandbox's memory limit stops it there):
    simulated as a hang, in the program's runs and the reference's alike."""
    args = ast.literal_eval(text)
    arg = args[0] if isinstance(args, tuple) else args
    return (isinstance(arg, int) and arg > 400_000) or (isinstance(arg, str) and len(arg) > 4_000)


def _probe_run(task: TaskPublished, code: str, seed: str) -> SandboxExecuted:
    run = simulated_run(task, code, run_index=probe_run_index(0), probe=True, seed=seed, hangs=_too_big)
    out = _reported(run, task, code, seed)
    assert isinstance(out, SandboxExecuted)
    return out


@lru_cache(maxsize=4)
def _reference(task: TaskPublished, seed: str) -> ReferenceExecuted:
    ref = simulated_reference_probe(task, seed=seed, hangs=_too_big)
    assert ref is not None and task.reference is not None
    code = task.reference
    return ref.model_copy(
        update={
            "execution": _reported(ref.execution, task, code, seed),
            "reruns": tuple(_reported(r, task, code, seed) for r in ref.reruns),
        }
    )


def _decide(task: TaskPublished, probe: SandboxExecuted, reference: ReferenceExecuted, version: str):  # type: ignore[no-untyped-def]
    first = simulated_run(task, task.reference or "")
    assert probe_due(task, first)
    return decide(
        task=task,
        code=task.reference or "",
        executions=[first, probe],
        config=NoiseConfig(version=version),  # type: ignore[arg-type]
        options=OPTS,
        probe_reference=reference,
    )


def test_the_versions_run_past_v20_to_v21() -> None:
    assert VERSIONS[VERSIONS.index("v21") - 1 : VERSIONS.index("v21") + 1] == ("v20", "v21")
    assert NoiseConfig(version="v21").version == "v21"


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_a_list_clipped_at_100000_is_caught_by_digest(seed: str) -> None:
    ref = _reference(UPTO, seed)
    run = _probe_run(UPTO, CLIP, seed)
    # the reference's large answers past the budget come back by digest alone
    assert any(c.status == "error" and c.digest for c in ref.execution.cases)
    d = _decide(UPTO, run, ref, "v21")
    assert d.verdict == "reject" and DISAGREES in {r.code for r in d.reasons}, d.reasons


@pytest.mark.parametrize("seed", SEEDS[:1])
def test_the_reference_itself_and_a_float_list_are_accepted(seed: str) -> None:
    ref = _reference(UPTO, seed)
    assert UPTO.reference is not None
    assert _decide(UPTO, _probe_run(UPTO, UPTO.reference, seed), ref, "v21").verdict == "accept"
    # floats exactly equal to the expected ints: the comparer accepts them, and so do their digests
    assert _decide(UPTO, _probe_run(UPTO, FLOATS, seed), ref, "v21").verdict == "accept"


def test_the_pinned_plan_left_the_clipped_list_unjudged_through_v20() -> None:
    ref = _reference(UPTO, SEEDS[0])
    run = _probe_run(UPTO, CLIP, SEEDS[0])
    assert _decide(UPTO, run, ref, "v20").verdict == "accept"
    assert _decide(UPTO, run, ref, "v21").verdict == "reject"


@pytest.mark.parametrize("seed", SEEDS[:1])
def test_prefixes_clipped_at_500_are_caught_by_digest(seed: str) -> None:
    ref = _reference(PREFIXES, seed)
    assert PREFIXES.reference is not None
    assert _decide(PREFIXES, _probe_run(PREFIXES, PREFIXES.reference, seed), ref, "v21").verdict == "accept"
    d = _decide(PREFIXES, _probe_run(PREFIXES, CLIP_PREFIXES, seed), ref, "v21")
    # the pinned seed draws an input whose prefixes pass a result's size
    assert any(c.status == "error" and c.digest for c in ref.execution.cases)
    assert d.verdict == "reject", d.reasons


def test_a_digest_is_not_judged_where_the_expected_value_holds_a_float() -> None:
    """A reference answering floats: its digest is N, and a program's different digest says nothing."""
    from schemas.digest import digests_equal

    want = value_digest([0.5] * 10)
    assert want is not None and want[0] == "N"
    assert digests_equal(want, value_digest([1] * 10) or "") is None
