"""Noise filter v12: a RecursionError is forgiven past the cases' range for what happened, not for its
name.

- The stub sends a RecursionError whose traceback is a chain of calls as deep as a recursion that ran
  out of stack as ``Rd`` (still an error); the host records those calls
  (``SandboxExecuted.deep_recursion``, v7; None: not recorded). Through v11 any error the guest named
  ``RecursionError`` was forgiven past the range, so a program raising one itself, on a shallow stack,
  on every input past the range was accepted (the same program raising ValueError was not).
- v12 forgives a RecursionError past the range only at a recorded deep position (or after a thread's
  RecursionError, as v11); a run that did not record (an upcast v6 run) is judged as v11 judges it.
  A MemoryError the call raised past the range is forgiven only where the reference found that input
  costly too (``probe.cheap_far``: the reference-cost test of v11's memory stop); the int/str
  conversion limit is forgiven by its text, as in v11.
- Open: a program that recurses deep on purpose past the range to end in a RecursionError is forgiven,
  as a correct recursive program that runs out of stack there is.

The stub itself, on both backends: ``tests/security/test_per_call_notes.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schemas import codec, export
from schemas.rollout import SandboxExecuted, SandboxExecutedV6
from streams.noise.config import VERSIONS
from streams.noise.probe import DISAGREES, cheap_far, recursion_error, resource_limit
from streams.probe.plan import GENERATED, plan_for
from streams.sandbox import to_event
from tests.hacks.fixtures import simulated_run
from tests.unit.test_filter_v11 import _interpreted, _probe, _session, _verdict
from tests.unit.test_probe_own_end import FLIP_REF, FLIP_TASK
from tests.unit.test_probe_wider import SEEDS
from tests.unit.test_sandbox_protocol import from_stub

# ------------------------------------------------------------------------------------------ the host


def test_a_deep_recursion_note_is_still_an_error() -> None:
    s = _session(3)
    from_stub(s, b"N")
    assert from_stub(s, b"RdRecursionError: maximum recursion depth exceeded") == b"C(1,)"
    assert from_stub(s, b"ReRecursionError: maximum recursion depth exceeded") == b"C(2,)"
    assert from_stub(s, b"Ro2") == b"E"
    deep, shallow, answered = s.facts.cases
    assert not deep.ok and deep.deep_recursion and deep.text.startswith("RecursionError")
    assert not shallow.ok and not shallow.deep_recursion
    assert answered.ok and not answered.deep_recursion
    assert s.facts.deviation is None


def test_the_result_and_its_event_name_the_deep_calls() -> None:
    s = _session()
    from_stub(s, b"N")
    from_stub(s, b"ReRecursionError: x")
    from_stub(s, b"RdRecursionError: y")
    from_stub(s, b"Ro2")
    result = _interpreted(s, 3)
    assert result.deep_recursion == (1,)
    event = to_event(result, sample_id="s", group_id="g", task_id="t")
    assert event.deep_recursion == (1,) and type(event.as_written()) is SandboxExecuted


def test_a_run_with_an_error_records_none_deep_and_one_without_records_nothing() -> None:
    s = _session(2)
    from_stub(s, b"N")
    from_stub(s, b"ReRecursionError: x")
    from_stub(s, b"Ro1")
    event = to_event(_interpreted(s, 2), sample_id="s", group_id="g", task_id="t")
    # recorded: the stub saw this RecursionError shallow (v12 judges it)
    assert event.deep_recursion == () and type(event.as_written()) is SandboxExecuted
    s = _session(2)
    from_stub(s, b"N")
    from_stub(s, b"Ro0")
    from_stub(s, b"Ro1")
    event = to_event(_interpreted(s, 2), sample_id="s", group_id="g", task_id="t")
    # nothing to forgive: written as before, bytes and id unchanged
    assert event.deep_recursion is None and type(event.as_written()) is not SandboxExecuted


def test_a_v6_execution_reads_as_not_recorded_and_is_written_as_v6() -> None:
    golden = Path(export.__file__).parent / "golden" / f"{SandboxExecutedV6.ce_type()}.json"
    body = json.dumps(json.loads(golden.read_text())["body"]).encode()
    event = codec.decode_body(SandboxExecutedV6.ce_type(), body)
    assert isinstance(event, SandboxExecuted)
    assert event.deep_recursion is None and event.thread_recursion == (2,)
    assert type(event.as_written()) is SandboxExecutedV6


def test_a_references_runs_are_kept_without_the_deep_note() -> None:
    from schemas.reference import ReferenceExecuted

    run = simulated_run(FLIP_TASK, FLIP_REF).model_copy(update={"deep_recursion": (2,)})
    ref = ReferenceExecuted(task_id="t", task_event_id="e", backend="wasm", execution=run, reruns=(run,))
    assert ref.execution.schema_version == 3 and ref.reruns[0].schema_version == 3
    body = json.dumps(ref.model_dump(mode="json")).encode()
    assert codec.decode_body(ReferenceExecuted.ce_type(), body) == ref


# ---------------------------------------------------------------------------------------- the filter


def _far_errors(seed: str, error: str, far: bool = True) -> tuple[SandboxExecuted, tuple[int, ...]]:
    """The probe run with ``error`` at three generated positions past the range (``far``; none of a
    kind no case shows, where any error is forgiven) or near the cases, and those positions."""
    plan = plan_for(FLIP_TASK, seed)
    assert plan is not None
    positions = tuple(p for p in plan.generated_positions if (p in plan.far) == far and p not in plan.wide)[
        :3
    ]
    run = _probe(seed)
    cases = tuple(
        c.model_copy(update={"status": "error", "result_repr": None, "error": error})
        if c.index in positions
        else c
        for c in run.cases
    )
    return run.model_copy(update={"cases": cases}), positions


RECURSION = "RecursionError: maximum recursion depth exceeded"


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_a_shallow_recursion_error_past_the_range_is_a_wrong_answer(seed: str) -> None:
    run, _ = _far_errors(seed, RECURSION)
    shallow = run.model_copy(update={"deep_recursion": ()})
    assert _verdict(seed, "v11", shallow)[0] == "accept"  # the hole: forgiven by its name
    verdict, codes = _verdict(seed, "v12", shallow)
    assert verdict == "reject" and DISAGREES in codes


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_a_deep_recursion_error_past_the_range_is_forgiven(seed: str) -> None:
    run, positions = _far_errors(seed, RECURSION)
    assert _verdict(seed, "v12", run.model_copy(update={"deep_recursion": positions}))[0] == "accept"
    # deep at one position only: the other two are the program's own
    verdict, codes = _verdict(seed, "v12", run.model_copy(update={"deep_recursion": positions[:1]}))
    assert verdict == "reject" and DISAGREES in codes


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_a_run_that_did_not_record_is_judged_as_v11_judges_it(seed: str) -> None:
    run, _ = _far_errors(seed, RECURSION)
    assert run.deep_recursion is None  # an upcast v6 run
    assert _verdict(seed, "v12", run) == _verdict(seed, "v11", run)
    assert _verdict(seed, "v12", run)[0] == "accept"


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_a_threads_recursion_and_the_conversion_limit_are_forgiven_as_in_v11(seed: str) -> None:
    run, positions = _far_errors(seed, "IndexError: list index out of range")
    noted = run.model_copy(update={"thread_recursion": positions, "deep_recursion": ()})
    assert _verdict(seed, "v12", noted)[0] == "accept"
    run, _ = _far_errors(seed, "ValueError: Exceeds the limit (4300 digits) for integer string conversion")
    assert _verdict(seed, "v12", run.model_copy(update={"deep_recursion": ()}))[0] == "accept"


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_a_memory_error_past_the_range_is_forgiven_only_where_the_reference_found_the_input_costly(
    seed: str,
) -> None:
    from tests.unit.test_probe_v8 import GCD_TASK, _decide, _probe, _reference

    plan, run = _probe(GCD_TASK, seed)
    far = [p for p in plan.far if plan.origin[p] == GENERATED and p not in plan.wide][:3]
    cases = tuple(
        c.model_copy(update={"status": "error", "result_repr": None, "error": "MemoryError"})
        if c.index in far
        else c
        for c in run.cases
    )
    raised = run.model_copy(update={"cases": cases})
    ref = _reference(GCD_TASK, seed)
    assert _decide(GCD_TASK, raised, ref, "v11").verdict == "accept"  # forgiven by its name
    d = _decide(GCD_TASK, raised, ref, "v12")
    assert d.verdict == "reject" and {r.code for r in d.reasons} & {DISAGREES, "hack.memorised"}
    # inputs that cost the reference forty times its inputs near the cases are larger problems
    costly = _reference(GCD_TASK, seed, slow=dict.fromkeys(far, 0.004))
    assert _decide(GCD_TASK, raised, costly, "v12").verdict == "accept"
    # one cheap one left: that one is the program's doing
    costly = _reference(GCD_TASK, seed, slow=dict.fromkeys(far[1:], 0.004))
    assert _decide(GCD_TASK, raised, costly, "v12").verdict == "reject"


def test_cheap_far_needs_a_reference_timed_near_the_cases() -> None:
    from tests.unit.test_probe_v8 import GCD_TASK, _probe, _reference

    seed = SEEDS[0]
    plan, _ = _probe(GCD_TASK, seed)
    cheap = cheap_far(plan, _reference(GCD_TASK, seed))
    assert cheap is not None and cheap <= frozenset(plan.far) and cheap
    assert cheap_far(plan, _reference(GCD_TASK, seed, each_s=0.0)) is None  # nothing timed: v11's rule


def test_a_recursion_error_near_the_cases_is_judged_deep_or_not() -> None:
    seed = SEEDS[0]
    run, positions = _far_errors(seed, RECURSION, far=False)
    for version in ("v11", "v12"):
        verdict, codes = _verdict(seed, version, run.model_copy(update={"deep_recursion": positions}))
        assert verdict == "reject" and DISAGREES in codes


def test_the_error_is_read_by_its_name() -> None:
    assert recursion_error(RECURSION) and recursion_error("RecursionError")
    assert not recursion_error("ValueError: RecursionError") and not recursion_error("MemoryError")
    assert resource_limit(RECURSION)  # v11's rule is unchanged


def test_v12_and_every_older_version_are_kept() -> None:
    assert VERSIONS[: VERSIONS.index("v12") + 1] == (
        "v2",
        "v3",
        "v4",
        "v5",
        "v6",
        "v7",
        "v8",
        "v9",
        "v10",
        "v11",
        "v12",
    )
