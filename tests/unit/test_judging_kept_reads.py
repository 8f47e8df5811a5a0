"""What the pipeline keeps between samples so as not to derive it again (issue 18, part 3), and that
keeping it changes no plan and no verdict.

- a seeded plan's public inputs (those it shares with the plan of the task alone) are drawn once per
  task (``streams/probe/plan.py: _public_inputs``): every plan drawn with them kept is the plan drawn
  from nothing, byte for byte, in every generation;
- what the filter reads from a plan and the reference's runs of it is read once per pair of objects
  (``streams/noise/probe.py: _per_reference``): the verdicts of samples judged against kept reads are
  those judged against fresh ones, under every filter version;
- a program's source is parsed once for its two analyses (``streams/reward/static.py: _parsed``);
- an execution event's cases are copied only where their ``hidden`` mark changes
  (``streams/sandbox/result.py: to_event``): the event is the one copying every case made.
"""

from __future__ import annotations

import dataclasses

import pytest

from harness.trivial import TASK, program
from schemas import pyast
from schemas.rollout import CaseResult
from schemas.task import TaskPublished
from streams.noise import probe as probing
from streams.noise.config import VERSIONS, NoiseConfig
from streams.noise.filter import Decision, decide
from streams.probe import plan as planning
from streams.probe.plan import SEEDED_VERSIONS, check_calls, probe_run_index
from streams.reward import static
from streams.reward.literals import CompareOptions
from streams.sandbox.result import ExecutionResult, bound_cases, to_event
from tests.hacks.fixtures import simulated_reference_probe, simulated_run
from tests.hacks.redteam.tasks import all_tasks

SEEDS = ("5" * 32, "a" * 32)


OPTS = CompareOptions()


def _tasks() -> list[TaskPublished]:
    tasks = all_tasks()
    checked = [
        t
        for t in tasks.values()
        if not t.tests
        and not t.hidden_tests
        and t.check
        and t.reference
        and check_calls(t.check, t.entry_point)
    ]
    return [TASK, tasks["HumanEval/14"], tasks["HumanEval/0"], tasks["HumanEval/12"], *checked[:1]]


def _fields(plan: planning.ProbePlan | None) -> dict[str, object] | None:
    return None if plan is None else dataclasses.asdict(plan)


#: generations whose plans are compared (each adds inputs: the first, the middle ones, the newest)
GENERATIONS = sorted({0, 4, 8, 12, len(SEEDED_VERSIONS) - 1})


@pytest.mark.parametrize("task", [*_tasks()[:3], _tasks()[4]], ids=lambda t: t.task_id)
def test_a_plan_drawn_with_its_public_inputs_kept_is_the_plan_drawn_from_nothing(task: TaskPublished) -> None:
    for generation in GENERATIONS:
        for seed in SEEDS[:1]:
            planning._plan.cache_clear()
            planning._public_inputs.cache_clear()
            fresh = _fields(planning._plan(task, seed, generation))
            # another seed's plan first: the public inputs come from the cache this time
            planning._plan.cache_clear()
            planning._plan(task, "0" * 32, generation)
            assert planning._public_inputs.cache_info().currsize > 0 or fresh is None or not fresh["seed"]
            planning._plan.cache_clear()
            assert _fields(planning._plan(task, seed, generation)) == fresh, (task.task_id, generation, seed)


def test_drawing_inputs_leaves_the_cases_they_are_drawn_from_as_they_were() -> None:
    # what keeping the public inputs relies on: drawing them reads the cases and changes none of them
    import copy
    import random

    for task in _tasks():
        texts = planning.case_inputs(task) or check_calls(task.check or "", task.entry_point)
        args = [pyast.literal_eval(t) for t in texts]
        before = copy.deepcopy(args)
        planning._generate(args, planning.MAX_GENERATED, random.Random(7), seeded=True)
        assert args == before, task.task_id


def _programs(task: TaskPublished) -> list[str]:
    if task is TASK:
        return [program(3), "def ident(x):\n    return 1\n", "def ident(x):\n    return x if x != 7 else 8\n"]
    assert task.reference is not None
    wrong = f"def {task.entry_point}(*args):\n    return None\n"
    return [task.reference, wrong]


def _decisions(task: TaskPublished, seed: str, *, kept: bool) -> list[Decision]:
    """Each program's decision under each filter version; with ``kept``, the reference's runs are one
    object for all of them (the reads kept after the first), else a fresh copy each time with the kept
    reads cleared."""
    reference = simulated_reference_probe(task, seed=seed)
    assert reference is not None
    out = []
    for code in _programs(task):
        first = simulated_run(task, code)
        probe = simulated_run(task, code, run_index=probe_run_index(0), probe=True, seed=seed)
        for version in VERSIONS:
            if not kept:
                probing._READS.clear()
            ref = reference if kept else reference.model_copy()
            out.append(
                decide(
                    task=task,
                    code=code,
                    executions=[first, probe],
                    config=NoiseConfig(version=version),
                    options=OPTS,
                    probe_reference=ref,
                )
            )
    return out


@pytest.mark.parametrize("task", [*_tasks()[:3], _tasks()[4]], ids=lambda t: t.task_id)
def test_verdicts_judged_with_kept_reference_reads_are_those_judged_afresh(task: TaskPublished) -> None:
    for seed in SEEDS[:1]:
        fresh = _decisions(task, seed, kept=False)
        kept = _decisions(task, seed, kept=True)
        assert kept == fresh
        # the samples were not all judged alike: a wrong program is told from a right one
        assert len({d.reasons for d in fresh}) > 1 or not (task.tests or task.hidden_tests)


def test_a_kept_read_is_handed_out_as_a_copy() -> None:
    seed = SEEDS[0]
    plan = planning.plan_for(TASK, seed)
    reference = simulated_reference_probe(TASK, seed=seed)
    assert plan is not None and reference is not None
    answers = probing.reference_answers(plan, reference, OPTS)
    assert answers
    answers.clear()
    again = probing.reference_answers(plan, reference, OPTS)
    assert again and again == probing.reference_answers(plan, reference.model_copy(), OPTS)


def test_a_program_is_parsed_once_for_both_its_analyses_and_analysed_as_from_its_own_parse() -> None:
    code = "import os\ndef ident(x):\n    T = {(1,): 1}\n    return T.get((x,), x)\n"
    static.analyse.cache_clear()
    static._parsed.cache_clear()
    with_entry, without = static.analyse(code, "ident"), static.analyse(code)
    assert with_entry.tree is without.tree and static._parsed.cache_info().misses == 1
    static.analyse.cache_clear()
    static._parsed.cache_clear()
    alone = static.analyse(code)
    assert alone.error == without.error and alone.findings == without.findings
    assert alone.literals == without.literals
    static._parsed.cache_clear()
    assert static.analyse(code, "ident").findings == with_entry.findings


def test_an_execution_event_is_the_one_copying_every_case_made() -> None:
    cases = tuple(CaseResult(index=i, status="ok", result_repr=repr(i), hidden=i == 4) for i in range(8))
    result = ExecutionResult(backend="wasm", mode="cases", cases=cases)
    for hidden in (frozenset(), frozenset({1, 2}), frozenset({4}), frozenset({4, 7})):
        event = to_event(result, sample_id="s", group_id="g", task_id="t", hidden=hidden)
        copied = tuple(c.model_copy(update={"hidden": c.index in hidden}) for c in bound_cases(cases))
        assert event.cases == copied
        assert event.model_dump_json() == event.model_copy(update={"cases": copied}).model_dump_json()
