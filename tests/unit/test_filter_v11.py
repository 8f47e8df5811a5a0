"""Noise filter v11: what the host saw of single probe calls.

- An output flood is one call's: the host counts each call's own output (``Session.output``) and stops
  a call that floods by itself, naming it (``SandboxExecuted.output_flood``); v11 judges that call as a
  wrong answer where the reference answered, past the cases' range too. Through v10 the output cap
  counted the whole run, so a run it ended was forgiven past the range like a resource limit, and a
  program flooding at the first input past the range shielded every input after it. A run whose
  chatter adds up past the cap over many calls is no longer stopped at all (stopping it at whichever
  call was out would let earlier chatter end the run where the program likes).
- A RecursionError on one of the program's threads is swallowed by the thread machinery, and the call
  fails with an error of its own; the stub notes it (``Rt``), the run names the call
  (``SandboxExecuted.thread_recursion``), and v11 forgives that error past the range exactly as it
  forgives a RecursionError the call raised itself.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from schemas import codec, export
from schemas.rollout import CaseResult, SandboxExecuted, SandboxExecutedV5, SandboxExecutedV6
from streams.noise.config import VERSIONS
from streams.noise.probe import DISAGREES, hang_timing
from streams.probe.plan import GENERATED, plan_for, probe_run_index
from streams.sandbox import Job, to_event
from streams.sandbox.limits import RawRun
from streams.sandbox.protocol import CaseInputs, Session
from streams.sandbox.result import Outcome, interpret
from tests.hacks.fixtures import simulated_run, simulated_verdict
from tests.unit.test_probe_own_end import FLIP_REF, FLIP_TASK, _first_end
from tests.unit.test_probe_wider import OPTS, SEEDS
from tests.unit.test_sandbox_protocol import from_stub

JOB = json.dumps({"role": "candidate", "mode": "cases", "entry_point": "f"}).encode()
FLOOD = 1000


def _session(n: int = 3) -> Session:
    s = Session(JOB, source=CaseInputs(tuple(f"({i},)" for i in range(n))), clock=lambda: 1.0)
    assert from_stub(s, b"J")
    return s


# ------------------------------------------------------------------------------------------ the host


def test_each_calls_output_is_counted_against_it_and_a_call_that_floods_alone_is_named() -> None:
    s = _session()
    assert not s.output(400, FLOOD)  # loading: no call out
    assert from_stub(s, b"N") == b"C(0,)"
    assert not s.output(900, FLOOD)
    assert from_stub(s, b"Ro0") == b"C(1,)"
    # the run's output is far past the bound, but this call's own is not: nothing stops
    assert not s.output(900, FLOOD)
    assert from_stub(s, b"Ro1") == b"C(2,)"
    assert [c.output_bytes for c in s.facts.cases] == [900, 900, 0]
    assert s.output(600, FLOOD) is False and s.output(600, FLOOD) is True  # call 2 alone passes it
    assert s.facts.output_stop == (2, 1200)
    assert s.output(1, FLOOD)  # stopping: every later write says so


def test_output_while_no_call_is_out_is_bounded_as_a_whole() -> None:
    s = _session()
    assert not s.output(FLOOD, FLOOD)
    assert s.output(1, FLOOD)
    assert s.facts.output_stop == (-1, FLOOD + 1)


def test_a_thread_recursion_note_is_still_an_error() -> None:
    s = _session(2)
    from_stub(s, b"N")
    assert from_stub(s, b"RtIndexError: list index out of range") == b"C(1,)"
    assert from_stub(s, b"ReIndexError: list index out of range") == b"E"
    first, second = s.facts.cases
    assert not first.ok and first.thread_recursion and first.text.startswith("IndexError")
    assert not second.ok and not second.thread_recursion
    assert s.facts.deviation is None


def _interpreted(session: Session, n: int, **raw: Any) -> Any:
    job = Job(mode="cases", code="", entry_point="f", inputs=tuple(f"({i},)" for i in range(n)))
    run = RawRun(
        backend="wasm", exit_code=raw.pop("exit_code", 0), stdout=b"", stderr=b"", duration_s=0.1, **raw
    )
    return interpret(job, Outcome(raw=run, facts=session.facts), runtime_hash="h", reason="test")


def test_the_result_and_its_event_name_the_flooding_call_and_the_recursing_threads() -> None:
    s = _session()
    from_stub(s, b"N")
    from_stub(s, b"RtIndexError: x")
    s.output(FLOOD + 1, FLOOD)
    result = _interpreted(s, 3, limit_labels=["output_limit"])
    assert result.output_flood == 1 and result.thread_recursion == (0,)
    assert [c.status for c in result.cases] == ["error", "missing", "missing"]
    event = to_event(result, sample_id="s", group_id="g", task_id="t")
    assert event.output_flood == 1 and event.thread_recursion == (0,)
    # written as v6: it says what v5 cannot; no call raised a RecursionError itself, so v7's note of
    # which were deep is not recorded
    assert type(event.as_written()) is SandboxExecutedV6 and event.deep_recursion is None
    # a run with none of them is written as before (its bytes and id unchanged)
    plain = event.model_copy(update={"output_flood": None, "thread_recursion": ()})
    assert type(plain.as_written()) not in (SandboxExecuted, SandboxExecutedV6)
    assert plain.event_id() == event.event_id()


def test_a_run_records_its_deep_recursion_only_where_a_call_raised_recursion_error() -> None:
    for answers, want in (
        ([b"RoNone", b"ReIndexError: x"], None),  # an error, none of them a RecursionError
        ([b"ReRecursionError: maximum recursion depth exceeded", b"RoNone"], ()),  # shallow
        ([b"RdRecursionError: maximum recursion depth exceeded", b"RoNone"], (0,)),  # deep
    ):
        s = _session()
        from_stub(s, b"N")
        for answer in answers:
            from_stub(s, answer)
        result = _interpreted(s, 2)
        assert result.deep_recursion == want, answers
        event = to_event(result, sample_id="s", group_id="g", task_id="t")
        assert (type(event.as_written()) is SandboxExecuted) == (want is not None)


def test_a_run_stopped_with_no_call_out_names_none() -> None:
    s = _session()
    s.output(FLOOD + 1, FLOOD)
    assert _interpreted(s, 3).output_flood is None


def test_a_v5_execution_reads_as_no_flood_and_no_recursing_thread() -> None:
    golden = Path(export.__file__).parent / "golden" / f"{SandboxExecutedV5.ce_type()}.json"
    body = json.dumps(json.loads(golden.read_text())["body"]).encode()
    event = codec.decode_body(SandboxExecutedV5.ce_type(), body)
    assert isinstance(event, SandboxExecuted)
    assert event.output_flood is None and event.thread_recursion == ()
    assert type(event.as_written()) is SandboxExecutedV5


def test_a_references_runs_are_kept_without_the_per_call_notes() -> None:
    from schemas.reference import ReferenceExecuted

    run = simulated_run(FLIP_TASK, FLIP_REF).model_copy(update={"output_flood": 1, "thread_recursion": (2,)})
    ref = ReferenceExecuted(task_id="t", task_event_id="e", backend="wasm", execution=run, reruns=(run,))
    # written as v3, as every reference run is (a v6 run there would not decode as one)
    assert ref.execution.schema_version == 3 and ref.reruns[0].schema_version == 3
    body = json.dumps(ref.model_dump(mode="json")).encode()
    assert codec.decode_body(ReferenceExecuted.ce_type(), body) == ref


# ---------------------------------------------------------------------------------------- the filter


def _probe(seed: str) -> SandboxExecuted:
    return simulated_run(FLIP_TASK, FLIP_REF, run_index=probe_run_index(0), probe=True, seed=seed)


def _verdict(seed: str, version: str, probe: SandboxExecuted) -> tuple[str, tuple[str, ...]]:
    return simulated_verdict(FLIP_TASK, FLIP_REF, seed=seed, version=version, options=OPTS, probe=probe)


def _stopped(run: SandboxExecuted, at: int, **update: Any) -> SandboxExecuted:
    """``run`` as the host reports it when it stopped the run for its output at position ``at``."""
    cases = tuple(
        c if c.index < at else CaseResult(index=c.index, hidden=c.hidden, status="missing") for c in run.cases
    )
    return run.model_copy(
        update={"cases": cases, "violation": "output_limit", "violations": ("output_limit",), **update}
    )


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_a_call_that_floods_past_the_range_is_that_calls_wrong_answer(seed: str) -> None:
    at = _first_end(seed)  # the first input past the range of a kind no case shows
    flooded = _stopped(_probe(seed), at, output_flood=at)
    assert _verdict(seed, "v10", flooded)[0] == "accept"  # the hole: every input after it unjudged
    verdict, codes = _verdict(seed, "v11", flooded)
    assert verdict == "reject" and DISAGREES in codes


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_a_run_ended_by_the_cap_with_no_flooding_call_stays_forgiven(seed: str) -> None:
    at = _first_end(seed)
    assert _verdict(seed, "v11", _stopped(_probe(seed), at))[0] == "accept"
    # a flood named at another position than the run's end says nothing of the end
    assert _verdict(seed, "v11", _stopped(_probe(seed), at, output_flood=at + 1))[0] == "accept"


def test_a_flood_near_the_cases_is_held_as_before() -> None:
    seed = SEEDS[0]
    plan = plan_for(FLIP_TASK, seed)
    assert plan is not None
    near = next(p for p in plan.generated_positions if p not in plan.far)
    for version in ("v10", "v11"):
        assert _verdict(seed, version, _stopped(_probe(seed), near, output_flood=near))[0] == "reject"


def _thread_errors(seed: str, far: bool) -> tuple[SandboxExecuted, tuple[int, ...]]:
    """The probe run with an IndexError (the join code's, after the worker's RecursionError) at three
    generated positions past the range (``far``; none of a kind no case shows, where any error is
    forgiven) or near the cases, and those positions."""
    plan = plan_for(FLIP_TASK, seed)
    assert plan is not None
    positions = tuple(p for p in plan.generated_positions if (p in plan.far) == far and p not in plan.wide)[
        :3
    ]
    run = _probe(seed)
    cases = tuple(
        c.model_copy(
            update={"status": "error", "result_repr": None, "error": "IndexError: list index out of range"}
        )
        if c.index in positions
        else c
        for c in run.cases
    )
    return run.model_copy(update={"cases": cases}), positions


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_a_recursion_error_on_a_thread_past_the_range_is_forgiven_as_a_resource_limit(seed: str) -> None:
    run, positions = _thread_errors(seed, far=True)
    noted = run.model_copy(update={"thread_recursion": positions})
    assert _verdict(seed, "v10", noted)[0] == "reject"  # through v10 the join code's error is judged
    assert _verdict(seed, "v11", noted) == ("accept", ("probe.agreed",))
    # without the note the same errors are wrong answers, as before
    verdict, codes = _verdict(seed, "v11", run)
    assert verdict == "reject" and DISAGREES in codes


def test_a_recursion_error_on_a_thread_near_the_cases_is_judged_as_one_raised_there() -> None:
    seed = SEEDS[0]
    run, positions = _thread_errors(seed, far=False)
    verdict, codes = _verdict(seed, "v11", run.model_copy(update={"thread_recursion": positions}))
    assert verdict == "reject" and DISAGREES in codes


def test_v11_and_every_older_version_are_kept() -> None:
    assert VERSIONS[: VERSIONS.index("v11")] == ("v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10")


# ------------------------------------------------------------------------- the hang rule, v11 (pace)


def test_a_hang_is_forgiven_only_where_the_run_was_starved_not_where_the_program_burned_time() -> None:
    from tests.unit.test_probe_v8 import _hang

    # the program's time grew past the range far more than the reference's: v8 reads it as a slower
    # algorithm; a program burning 20 ms on each input past the range fakes exactly that
    paced = _hang(program_growth=300.0, reference_growth=1.0)
    assert not paced.held() and paced.held_v11()
    # the run's time ran out there after the program burned it on inputs the reference answered at once
    burned = _hang(held_s=0.2, waste_s=0.6, program_growth=300.0)
    assert not burned.held() and burned.held_v11()
    # starved by what the inputs cost (no waste): nothing to say, as before
    assert not _hang(held_s=0.2).held_v11()
    # the input is a larger problem for the reference too, or the reference needed a share of the time
    assert not _hang(reference_s=0.005, near_s=0.001).held_v11()
    assert not _hang(reference_s=0.02, near_s=0.02).held_v11()
    assert not _hang(reference_s=0.0).held_v11()


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_v11_holds_a_hang_after_burned_time_and_keeps_a_starved_run_forgiven(seed: str) -> None:
    from tests.unit.test_probe_v8 import GCD_TASK, _decide, _first_far_past, _hung, _probe, _reference

    plan, run = _probe(GCD_TASK, seed)
    last = max(pos for pos in plan.far if pos not in plan.wide and plan.origin[pos] == GENERATED)
    ref = _reference(GCD_TASK, seed)  # 0.1 ms a call
    # 20 ms burned on every input past the range before the trap: v8 to v10 read it as a slower algorithm
    burning = _hung(plan, run, last, held_s=1.0, far_s=0.02)
    assert hang_timing(plan, burning, ref) is not None
    assert _decide(GCD_TASK, burning, ref, "v10").verdict == "accept"
    d = _decide(GCD_TASK, burning, ref, "v11")
    assert d.verdict == "reject" and DISAGREES in {r.code for r in d.reasons}
    # so much burned that the deadline left 0.2 s at the trap: the burned time counts as its own
    starving = _hung(plan, run, last, held_s=0.2, far_s=0.2)
    timing = hang_timing(plan, starving, ref)
    assert timing is not None and timing.waste_s > 0.5
    assert _decide(GCD_TASK, starving, ref, "v11").verdict == "reject"
    # a run slower throughout (another load than the reference's runs had) wasted nothing: starved
    at = _first_far_past(plan, 200)
    loaded = _hung(plan, run, at, held_s=0.2, before_s=0.004, far_s=0.004)
    timing = hang_timing(plan, loaded, ref)
    assert timing is not None and timing.pace >= 39 and timing.waste_s == 0.0
    assert _decide(GCD_TASK, loaded, ref, "v11").verdict == "accept"
    # an input the reference finds expensive too stays forgiven, however the time went before
    slow_ref = _reference(GCD_TASK, seed, slow={last: 0.005})
    assert _decide(GCD_TASK, burning, slow_ref, "v11").verdict == "accept"


SUM_REF = "def solve(xs):\n    return sum(xs)\n"


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_time_an_input_costs_the_program_more_the_larger_it_is_is_not_burned(seed: str) -> None:
    """A correct program whose cost explodes with the list's length (every subset summed) may run out of
    the probe run's time on the longest inputs when the machine is loaded: what it spent before is what
    those inputs cost its algorithm (each longer one cost it more), not time it burned; a program taking
    the same time whatever the input's size did burn it."""
    from tests.unit.test_noise_probe import cases_of, task_of
    from tests.unit.test_probe_v8 import _decide, _probe, _reference

    task = task_of(SUM_REF, cases_of(SUM_REF, ["([1, 2, 3],)", "([5],)", "([4, 9, 2, 7],)", "([],)"]))
    plan, run = _probe(task, seed)
    length = {pos: len(ast.literal_eval(plan.inputs[pos])[0]) for pos in range(len(plan.inputs))}
    # the longest input past the range before the extremes (thousands of elements, under a cap of their own)
    far = [
        pos
        for pos in sorted(plan.far)
        if plan.origin[pos] == GENERATED and pos < len(plan.inputs) - plan.ends
    ]
    longest = max(length[pos] for pos in far)
    at = next(pos for pos in far if length[pos] == longest)
    ref = _reference(task, seed)  # 0.1 ms a call

    def hung(took: Callable[[int], float]) -> SandboxExecuted:
        cases = [c.model_copy(update={"duration_s": took(c.index)}) for c in run.cases if c.index < at]
        cases.append(
            CaseResult(index=at, status="timeout", error="wall-clock limit reached", duration_s=0.13)
        )
        cases += [CaseResult(index=c.index, status="missing") for c in run.cases if c.index > at]
        return run.model_copy(update={"cases": tuple(cases), "timed_out": True})

    exploding = hung(lambda pos: 0.00001 * 2 ** length[pos] * max(1, length[pos]))
    timing = hang_timing(plan, exploding, ref)
    assert timing is not None and timing.waste_s < 0.05, timing
    assert _decide(task, exploding, ref, "v11").verdict == "accept"
    # the same total spent at a fixed 60 ms on every input past the range: burned, held
    flat = hung(lambda pos: 0.06 if pos in plan.far else 0.0001)
    timing = hang_timing(plan, flat, ref)
    assert timing is not None and timing.waste_s > 0.5, timing
    d = _decide(task, flat, ref, "v11")
    assert d.verdict == "reject" and DISAGREES in {r.code for r in d.reasons}


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_a_memory_stop_on_an_input_the_reference_answers_as_cheaply_as_the_cases_is_the_programs(
    seed: str,
) -> None:
    """A program that fills the guest's memory on the first input past the cases' range, where the host
    stops the run, shielded every input after it; where the reference answers that input as fast as the
    cases, the stop is held against the program (v11), and where the input costs the reference more, it
    stays forgiven."""
    from tests.unit.test_probe_v8 import GCD_TASK, _decide, _ended_at, _probe, _reference

    plan, run = _probe(GCD_TASK, seed)
    at = min(pos for pos in plan.far if plan.origin[pos] == GENERATED)
    stopped = _ended_at(run, at, memory_exceeded=True)
    ref = _reference(GCD_TASK, seed)
    assert _decide(GCD_TASK, stopped, ref, "v10").verdict == "accept"
    d = _decide(GCD_TASK, stopped, ref, "v11")
    assert d.verdict == "reject" and {r.code for r in d.reasons} & {DISAGREES, "hack.memorised"}
    # an input that costs the reference forty times its inputs near the cases is a larger problem
    costly = _reference(GCD_TASK, seed, slow={at: 0.004})
    assert _decide(GCD_TASK, stopped, costly, "v11").verdict == "accept"
