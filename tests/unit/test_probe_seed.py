"""Probe plans drawn with a secret seed: a program written before the seed was drawn cannot carry the
answers of the plan's inputs; inputs beyond the cases' range catch what is wrong only there, without
holding a program to the reference where the task may not be defined; old runs keep their plan."""

from __future__ import annotations

import ast

import pytest

from infra.runtime.state import DEFAULT_GRACE_S, State
from schemas.reference import ReferenceExecuted
from schemas.rollout import CaseResult, NoiseVerdict, SandboxExecuted
from schemas.task import TaskPublished
from streams.noise.agent import KINDS, SEEDED_REF, FilterAgent
from streams.noise.config import NoiseConfig
from streams.noise.filter import decide
from streams.noise.probe import reseeded_reasons
from streams.probe.plan import (
    CHECK_PLAN_VERSION,
    PLAN_VERSION,
    SEEDED_CHECK_PLAN_VERSION,
    SEEDED_PLAN_VERSION,
    case_inputs,
    new_probe_seed,
    plan_for,
    probe_due,
    probe_run_index,
    recorded_plan,
    reseeded_check,
    widened_check,
)
from streams.reward.literals import CompareOptions
from streams.sandbox.agent import GroupSeeds
from streams.sandbox.jobs import probe_job_for
from streams.sandbox.limits import Limits
from tests.hacks.fixtures import simulated_reference_probe, simulated_run
from tests.unit.test_noise_probe import SORT_REF, SORT_TASK, cases_of, task_of
from tests.unit.test_reward_agent import Tasks, _reward, generated, incoming

OPTS = CompareOptions()
CFG = NoiseConfig()
S1, S2 = "a" * 32, "b" * 32

GCD_REF = "def solve(a, b):\n    while b:\n        a, b = b, a % b\n    return a\n"
GCD_TASK = task_of(GCD_REF, cases_of(GCD_REF, ["(3, 7)", "(10, 15)", "(49, 14)", "(144, 60)"]))


def decision_of(task: TaskPublished, code: str, seed: str | None, config: NoiseConfig = CFG):  # type: ignore[no-untyped-def]
    first = simulated_run(task, code)
    runs = [first]
    if probe_due(task, first):
        runs.append(simulated_run(task, code, run_index=probe_run_index(0), probe=True, seed=seed))
    ref = simulated_reference_probe(task, seed=seed)
    return decide(task=task, code=code, executions=runs, config=config, options=OPTS, probe_reference=ref)


def codes(decision) -> set[str]:  # type: ignore[no-untyped-def]
    return {r.code for r in decision.reasons}


def plan_table(task: TaskPublished) -> str:
    """A program that recalls the answers of the task's cases and of its plan derived from the task alone."""
    namespace: dict[str, object] = {}
    exec(task.reference or "", namespace)
    fn = namespace[task.entry_point]
    plan = plan_for(task)
    assert plan is not None
    table = {text: fn(*ast.literal_eval(text)) for text in {*case_inputs(task), *plan.inputs}}  # type: ignore[operator]
    return f"_T = {table!r}\n\n\ndef {task.entry_point}(*args):\n    return _T.get(repr(args))\n"


def test_a_seeded_plan_is_a_function_of_task_and_seed_and_an_unseeded_one_is_unchanged() -> None:
    old = plan_for(SORT_TASK)
    assert old is not None and old == plan_for(SORT_TASK, None)
    assert old.version == PLAN_VERSION and old.seed is None and not old.far
    a, b = plan_for(SORT_TASK, S1), plan_for(SORT_TASK, S2)
    assert a is not None and b is not None and a == plan_for(SORT_TASK, S1)
    assert a.version == SEEDED_PLAN_VERSION and a.seed == S1
    assert len({old.digest, a.digest, b.digest}) == 3
    # the inputs of the plan of the task alone stay; as many again are drawn from the seed
    gen_old = {old.inputs[i] for i in old.generated_positions}
    gen_a = {a.inputs[i] for i in a.generated_positions}
    gen_b = {b.inputs[i] for i in b.generated_positions}
    assert gen_old <= gen_a and gen_old <= gen_b
    secret_a, secret_b = gen_a - gen_old, gen_b - gen_old
    assert len(secret_a) >= len(gen_old) // 2 and len(secret_a & secret_b) < len(secret_a) // 2
    assert len({plan_for(SORT_TASK, new_probe_seed()).digest for _ in range(5)}) == 5  # type: ignore[union-attr]


def test_a_table_of_the_plan_derived_from_the_task_is_accepted_without_a_seed_and_rejected_with_one() -> None:
    code = plan_table(SORT_TASK)
    assert decision_of(SORT_TASK, code, None).verdict == "accept"  # what a predictable plan let through
    for seed in (S1, S2, new_probe_seed()):
        d = decision_of(SORT_TASK, code, seed)
        assert d.verdict == "reject" and "hack.memorised" in codes(d), d.reasons


def test_seeded_plans_go_past_the_cases_range_and_keep_their_signs() -> None:
    cases = [ast.literal_eval(t) for t in case_inputs(GCD_TASK)]
    top = max(v for c in cases for v in c)
    for seed in (S1, S2):
        plan = plan_for(GCD_TASK, seed)
        assert plan is not None and plan.far
        # inputs beyond the range come last, after every input near the cases
        assert min(plan.far) > max(set(plan.generated_positions) - plan.far)
        far = [ast.literal_eval(plan.inputs[i]) for i in sorted(plan.far - plan.wide)]
        assert any(max(args) > top for args in far)
        # no case is negative or zero: none past the range is (only those that widen the domain in kind)
        assert all(v > 0 for args in far for v in args)
    check = SORT_TASK.model_copy(
        update={
            "tests": (),
            "hidden_tests": (),
            "check": "def check(candidate):\n    assert candidate([0.1, 0.3], 1) == []\n"
            "    assert candidate([0.2, 2.5], 0) == [0.2, 2.5]\n",
        }
    )
    assert plan_for(check).version == CHECK_PLAN_VERSION  # type: ignore[union-attr]
    seeded = plan_for(check, S1)
    assert seeded is not None and seeded.version == SEEDED_CHECK_PLAN_VERSION and seeded.far
    assert any(
        isinstance(v, float) and v > 2.5 for i in seeded.far for v in ast.literal_eval(seeded.inputs[i])[0]
    )


def test_an_algorithm_wrong_only_on_common_divisors_past_ten_is_rejected_on_every_seed() -> None:
    small = (
        "def solve(a, b):\n    if (a, b) == (144, 60):\n        return 12\n"
        "    return max(d for d in range(1, 11) if a % d == 0 and b % d == 0)\n"
    )
    for _ in range(20):
        d = decision_of(GCD_TASK, small, new_probe_seed())
        assert d.verdict == "reject", d.reasons
    assert decision_of(GCD_TASK, GCD_REF.replace("while b", "while b != 0"), S1).verdict == "accept"


def test_past_the_cases_range_only_a_different_value_counts() -> None:
    # raising or hanging where the cases never go may be the task's own rule; a wrong value is not
    plan = plan_for(GCD_TASK, S1)
    assert plan is not None
    # past every input near the cases (which may reach a little beyond the cases' own range)
    near = [ast.literal_eval(text) for i, text in enumerate(plan.inputs) if i not in plan.far]
    top = max(v for args in near for v in args)
    bounded = GCD_REF.replace(
        "    while b:", f"    if max(a, b) > {top}:\n        raise ValueError(a)\n    while b:"
    )
    # up to filter v4 a raise there was forgiven; from v5 it counts as a wrong answer where the reference
    # answers (tests/unit/test_probe_far_errors.py)
    assert decision_of(GCD_TASK, bounded, S1, NoiseConfig(version="v4")).verdict == "accept"
    assert decision_of(GCD_TASK, bounded, S1).verdict == "reject"
    hangs = GCD_REF.replace("    while b:", f"    while max(a, b) > {top}:\n        pass\n    while b:")
    first = simulated_run(GCD_TASK, hangs)
    probe = simulated_run(GCD_TASK, GCD_REF, run_index=1, probe=True, seed=S1)
    cut = min(plan.far)
    # the run hung at the first far input: the deadline ended it (an end of its own is judged by filter v9)
    stuck = probe.model_copy(update={"cases": probe.cases[:cut], "timed_out": True})
    ref = simulated_reference_probe(GCD_TASK, seed=S1)
    d = decide(
        task=GCD_TASK, code=hangs, executions=[first, stuck], config=CFG, options=OPTS, probe_reference=ref
    )
    assert d.verdict == "accept", d.reasons
    wrong = GCD_REF.replace("    while b:", f"    if max(a, b) > {top}:\n        return 1\n    while b:")
    d = decision_of(GCD_TASK, wrong, S1)
    # from p17 the plan draws integer widths, equal pairs and the magnitude gap past the cases too, so a
    # program wrong everywhere past them disagrees on a quarter of the generated inputs, and the rule
    # that reads such wide disagreement beside full agreement on the cases names it first: either
    # reason rejects, and a rejected sample is trained as a failure
    assert d.verdict == "reject"
    assert codes(d) & {"wrong.disagrees_with_reference", "hack.memorised"}, d.reasons


def test_the_probe_job_holds_the_plans_inputs_and_never_the_seed() -> None:
    seed = new_probe_seed()
    found = probe_job_for(SORT_TASK, SORT_REF, Limits(), seed=seed)
    assert found is not None
    job, plan = found
    assert plan.seed == seed and job.inputs == plan.inputs
    assert seed not in repr(job)
    run = simulated_run(SORT_TASK, SORT_REF, run_index=1, probe=True, seed=seed)
    assert run.probe_seed == seed and run.as_written().ce_type() == "rlstream.rollout.executed.v5"
    plain = simulated_run(SORT_TASK, SORT_REF, run_index=1, probe=True)
    assert plain.as_written().ce_type() == "rlstream.rollout.executed.v3"  # an old run's bytes stay
    with pytest.raises(ValueError, match="probe_seed"):
        type(run).model_validate({**run.model_dump(), "probe": None})


def test_a_groups_samples_share_a_seed_and_a_new_group_draws_its_own() -> None:
    seeds = GroupSeeds(kept=2)
    a = seeds("g-1")
    assert seeds("g-1") == a and seeds("g-2") != a
    seeds("g-3")  # g-1 is forgotten: it would draw again (one more reference run, nothing else)
    assert seeds("g-1") != a


def test_the_filter_runs_the_reference_once_per_plan_and_drops_it_when_its_group_is_done() -> None:
    task = SORT_TASK
    asked: list[str | None] = []

    def reference(t: TaskPublished, backend: str, seed: str | None) -> ReferenceExecuted | None:
        asked.append(seed)
        return simulated_reference_probe(t, seed=seed)

    agent = FilterAgent(
        NoiseConfig(probe=True),
        OPTS,
        Tasks(task),
        lambda t, backend: simulated_run(t, SORT_REF),
        probe_reference=reference,
    )
    state = State(KINDS)
    state.own(0)
    memoriser = plan_table(task)
    verdicts: list[NoiseVerdict] = []
    published: list[ReferenceExecuted] = []
    for sid, code, seed in (("s-1", SORT_REF, S1), ("s-2", memoriser, S1), ("s-3", memoriser, S2)):
        x = simulated_run(task, code, sample_id=sid)
        probe = simulated_run(task, code, sample_id=sid, run_index=1, probe=True, seed=seed)
        events = [generated(code, sid), x, _reward(task, code, x), probe]
        out = [e.event for e in agent.handle([incoming(e) for e in events], state)]
        verdicts += [e for e in out if isinstance(e, NoiseVerdict)]
        published += [e for e in out if isinstance(e, ReferenceExecuted)]
    assert asked == [S1, S2] and len(published) == 2
    good, table_1, table_2 = verdicts
    assert good.verdict == "accept" and good.probe_reference_event_id == published[0].event_id()
    assert table_1.verdict == table_2.verdict == "reject"
    assert table_2.probe_reference_event_id == published[1].event_id()
    assert published[0].execution.probe == plan_for(task, S1).digest  # type: ignore[union-attr]
    assert len(state.keys(0, SEEDED_REF)) == 2
    # long after the last sample judged with them, the runs of both plans expire
    state.take_writes()
    state.advance(0, state.now(0) + DEFAULT_GRACE_S + 1)
    state.expire()
    state.take_writes()
    assert state.keys(0, SEEDED_REF) == []
    x = simulated_run(task, SORT_REF, sample_id="s-4")
    probe = simulated_run(task, SORT_REF, sample_id="s-4", run_index=1, probe=True, seed="c" * 32)
    agent.handle(
        [incoming(e) for e in (generated(SORT_REF, "s-4"), x, _reward(task, SORT_REF, x), probe)], state
    )
    assert len(state.keys(0, SEEDED_REF)) == 1


SEEDED_CHECK = (
    "def check(candidate):\n"
    "    import random\n"
    "    rng = random.Random(42)  # the inputs: always the same ones\n"
    "    for _ in range(50):\n"
    "        xs = [rng.randint(-9, 9) for _ in range(rng.randint(1, 6))]\n"
    "        assert candidate(list(xs)) == sorted(xs)\n"
)


def test_a_check_that_seeds_its_generator_is_run_again_with_a_seed_drawn_from_the_probe_seed() -> None:
    text = reseeded_check(SEEDED_CHECK, S1)
    assert text is not None and text != SEEDED_CHECK
    assert text.replace(text.split("Random(")[1].split(")")[0], "42") == SEEDED_CHECK  # only the literal
    assert reseeded_check(SEEDED_CHECK, S1) == text != reseeded_check(SEEDED_CHECK, S2)
    assert reseeded_check("def check(c):\n    assert c([1]) == [1]\n", S1) is None
    task = SORT_TASK.model_copy(
        update={"tests": (), "hidden_tests": (), "check": SEEDED_CHECK, "entry_point": "solve"}
    )
    assert plan_for(task) is None  # without a seed, as before: no plan
    plan = plan_for(task, S1)
    assert plan is not None and plan.source == "reseeded" and plan.check == text and not plan.inputs
    assert plan.version == "r1"  # a seeded check is only reseeded (r2 widens the unseeded ones)
    found = probe_job_for(task, "def solve(xs):\n    return sorted(xs)\n", Limits(), seed=S1)
    assert found is not None and found[0].mode == "check" and found[0].check == text


UNSEEDED_CHECK = (
    "def check(candidate):\n"
    "    import random\n"
    "    for _ in range(50):\n"
    "        xs = [random.randint(-9, 9) for _ in range(random.randint(1, 6))]\n"
    "        assert candidate(list(xs)) == sorted(xs)\n"
)


def test_a_check_with_unseeded_draws_is_run_again_with_one_draw_reaching_past_its_range() -> None:
    assert reseeded_check(UNSEEDED_CHECK, S1) is None  # nothing to reseed: r1 made no probe of it
    seen = set()
    for k in range(40):
        text = widened_check(UNSEEDED_CHECK, f"{k:032x}")
        # one draw widened, the rest byte for byte: the elements' range (-9..9 -> -36..36) or the
        # length's (1..6 -> 1..24; a non-negative lower bound stays)
        assert text in (
            UNSEEDED_CHECK.replace("randint(-9, 9)", "randint(-36, 36)"),
            UNSEEDED_CHECK.replace("randint(1, 6)", "randint(1, 24)"),
        )
        seen.add(text)
    assert len(seen) == 2  # each draw is widened under some seeds
    task = SORT_TASK.model_copy(
        update={"tests": (), "hidden_tests": (), "check": UNSEEDED_CHECK, "entry_point": "solve"}
    )
    assert plan_for(task) is None
    plan = plan_for(task, S1)
    assert plan is not None and plan.source == "reseeded" and plan.version == "r2"
    assert plan.check == widened_check(UNSEEDED_CHECK, S1) and not plan.inputs
    assert recorded_plan(task, S1, plan.digest) == plan
    # randrange's one bound, uniform's floats; a bound below zero widens downwards
    draws = "def check(c):\n    x = r.randrange(7) + r.uniform(-0.5, 2.5) + r.randint(-30, -10)\n"
    assert {widened_check(draws, f"{k:032x}") for k in range(40)} == {
        draws.replace("randrange(7)", "randrange(28)"),
        draws.replace("uniform(-0.5, 2.5)", "uniform(-2.0, 10.0)"),
        draws.replace("randint(-30, -10)", "randint(-120, -10)"),
    }
    # bounds that are not literals are not the check's stated range
    assert widened_check("def check(c):\n    assert c(randint(n, 5)) == 1\n", S1) is None


def _check_run(passed: bool, **update: object) -> SandboxExecuted:
    case = CaseResult(index=0, status="ok" if passed else "error", result_repr="True" if passed else None)
    run = SandboxExecuted(
        sample_id="s", group_id="g", task_id="t", backend="wasm", mode="check", cases=(case,), probe="d" * 64
    )
    return run.model_copy(update=update)


def test_a_reseeded_check_judges_a_program_only_where_the_reference_passes_it() -> None:
    passing = ReferenceExecuted(
        task_id="t", task_event_id="e", backend="wasm", execution=_check_run(True), reruns=(_check_run(True),)
    )
    flaky = passing.model_copy(update={"reruns": (_check_run(False),)})
    reasons, judged = reseeded_reasons(_check_run(False), passing)
    assert judged and [r.code for r in reasons] == ["wrong.disagrees_with_reference"]
    reasons, judged = reseeded_reasons(_check_run(False, timed_out=True), passing)
    assert judged and [r.code for r in reasons] == ["wrong.disagrees_with_reference"]
    assert [r.code for r in reseeded_reasons(_check_run(True), passing)[0]] == ["probe.agreed"]
    for reference in (flaky, None):
        reasons, judged = reseeded_reasons(_check_run(False), reference)
        assert not judged and [r.code for r in reasons] == ["probe.inconclusive"]


CLOSEST_REF = (
    "def solve(xs):\n"
    "    best = None\n"
    "    for i, a in enumerate(xs):\n"
    "        for j, b in enumerate(xs):\n"
    "            if i != j and (best is None or abs(a - b) < abs(best[0] - best[1])):\n"
    "                best = (a, b)\n"
    "    return tuple(sorted(best))\n"
)
CLOSEST_TASK = task_of(
    CLOSEST_REF,
    cases_of(
        CLOSEST_REF,
        [
            "([1.0, 2.0, 3.9, 4.0, 5.0, 2.2],)",
            "([1.0, 2.0, 5.9, 4.0, 5.0],)",
            "([1.0, 2.0, 3.0, 4.0, 5.0, 2.2],)",
            "([1.1, 2.2, 3.1, 4.1, 5.1],)",
        ],
    ),
)


def test_a_tie_the_task_breaks_no_particular_way_never_counts_against_a_program() -> None:
    # a correct program that breaks ties from the other end: [1.0, 2.5, 3.0] has two closest pairs
    other_end = CLOSEST_REF.replace("enumerate(xs)", "reversed(list(enumerate(xs)))")
    ties = 0
    for k in range(12):
        seed = f"{k:032x}"
        plan = plan_for(CLOSEST_TASK, seed)
        assert plan is not None and plan.mirrors
        d = decision_of(CLOSEST_TASK, other_end, seed)
        assert d.verdict == "accept", (seed, d.reasons)
        ties += d.verdict == "accept" and "probe.agreed" in codes(d)
    assert ties == 12
    # a wrong program is not spared by the mirrors: one wrong past the cases' largest number is wrong
    # on inputs without a tie there
    wrong = CLOSEST_REF.replace(
        "    best = None\n", "    best = None\n    if max(xs) > 6:\n        return (xs[0], xs[1])\n"
    )
    rejected = [decision_of(CLOSEST_TASK, wrong, f"{k:032x}").verdict == "reject" for k in range(12)]
    assert all(rejected), rejected
