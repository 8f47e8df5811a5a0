"""The reward and filter processors' handlers, driven directly (the runtime is the pipeline's)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from infra.runtime.port import Incoming
from infra.runtime.state import State
from schemas.base import Event
from schemas.envelope import Envelope
from schemas.reference import ReferenceExecuted
from schemas.rollout import CodeGenerated, NoiseVerdict, RewardScored, SandboxExecuted
from schemas.task import TaskPublished
from streams.noise.agent import SAMPLE, FilterAgent
from streams.noise.config import NoiseConfig
from streams.reward.agent import CODE, EXEC, RewardAgent
from streams.reward.config import RewardConfig
from streams.reward.function import get_reward_function
from streams.reward.lint import LintReport, RuffLinter
from streams.reward.literals import CompareOptions
from tests.hacks.fixtures import (
    FakeLinter,
    execution,
    make_task,
    passing,
    simulated_reference_probe,
    simulated_run,
)

_offset = iter(range(1_000_000))
GOOD = "def add(a, b):\n    return a + b\n"


def incoming(event: Event, partition: int = 0) -> Incoming:
    env = Envelope.for_event(event, source="test", time=datetime.now(UTC))
    return Incoming(env, event, "t", partition, next(_offset), 1_000_000)


def generated(code: str, sample_id: str = "s-1") -> CodeGenerated:
    return CodeGenerated(
        sample_id=sample_id,
        group_id="g-1",
        task_id="t/add",
        sample_index=0,
        policy_version=0,
        model="tiny",
        prompt_text="p",
        completion_text=code,
        code=code,
    )


class Tasks:
    def __init__(self, *tasks: TaskPublished) -> None:
        self.rows = {t.task_id: t for t in tasks}

    def get(self, key: str) -> TaskPublished | None:
        return self.rows.get(key)


def owned() -> State:
    s = State()
    s.own(0)
    return s


def reward_agent(task: TaskPublished) -> RewardAgent:
    fn = get_reward_function("code-v1", linter=FakeLinter())
    return RewardAgent(fn, Tasks(task), lambda t, backend: passing(t, sample_id="ref"))


def test_reward_needs_code_and_run_0_in_either_order_and_scores_once() -> None:
    task = make_task()
    agent, state = reward_agent(task), owned()
    x = passing(task)
    assert agent.handle([incoming(x)], state) == []
    out = agent.handle([incoming(generated(GOOD))], state)
    assert len(out) == 2
    ref, reward = out[0].event, out[1].event
    assert isinstance(ref, ReferenceExecuted) and isinstance(reward, RewardScored)
    assert reward.passed == reward.total_cases == 4
    assert reward.components["efficiency"] > 0  # the reference's run was used
    assert reward.reference_event_id == ref.event_id()  # and named, so the log alone re-scores it
    # re-delivery and re-runs are not scored again
    assert agent.handle([incoming(x), incoming(generated(GOOD))], state) == []
    assert agent.handle([incoming(passing(task, run_index=1, sample_id="s-2"))], state) == []
    assert state.get(0, CODE, "s-1") is None and state.get(0, EXEC, "s-1") is None


class RecordingRuff(RuffLinter):
    """The real linter, noting each program it ran ruff on."""

    def __init__(self) -> None:
        super().__init__(RewardConfig().lint_select)
        self.linted: list[str] = []

    def _run(self, paths: list[str], stdin: str | None) -> dict[str, LintReport]:
        self.linted += [stdin] if stdin is not None else [Path(p).read_text("utf-8") for p in paths]
        return super()._run(paths, stdin)


def test_a_program_waiting_for_its_run_is_linted_before_the_run_arrives() -> None:
    # the lint runs while the sandbox runs the program, not between its run and its reward; the
    # reward is the one scored when the run came first
    task = make_task()
    code = "import os\n\n\ndef add(a, b):\n    return a + b\n"
    rewards = []
    for order in ("code first", "run first"):
        linter = RecordingRuff()
        fn = get_reward_function("code-v1", linter=linter)
        agent, state = RewardAgent(fn, Tasks(task), lambda t, backend: passing(t, sample_id="ref")), owned()
        events = [generated(code), passing(task)]
        assert agent.handle([incoming(events[order == "run first"])], state) == []
        if order == "code first":
            assert linter.linted == [code]  # linted on arrival, its run still to come
        out = [e.event for e in agent.handle([incoming(events[order == "code first"])], state)]
        assert linter.linted.count(code) == 1
        rewards += [e for e in out if isinstance(e, RewardScored)]
    assert rewards[0].details["lint_findings"] == rewards[1].details["lint_findings"] == "F401"
    assert rewards[0].model_dump_json() == rewards[1].model_dump_json()


def test_hostile_results_are_scored_as_failed_cases_never_dead_lettered() -> None:
    # a float expected where 10**400 came back, text past the size bound, nesting past the depth bound,
    # an integer past Python's digit limit: every one a failed case of a reward, none an exception
    task = make_task(visible=(("(1, 2)", "1.5"), ("(2, 2)", "4")), hidden=(("(10, 5)", "15"),))
    hostile = [repr(10**400), "[" * 5000 + "]" * 5000, "'x" + "y" * 2_000_000 + "'", "9" * 5000]
    agent, state = reward_agent(task), owned()
    for i, text in enumerate(hostile):
        x = execution([text, "4", "15"], sample_id=f"h{i}")
        out = [e.event for e in agent.handle([incoming(generated(GOOD, f"h{i}")), incoming(x)], state)]
        reward = next(e for e in out if isinstance(e, RewardScored))
        assert reward.passed == 2 and reward.total <= 0, text[:20]


def test_reward_of_a_batch_matches_scoring_one_by_one() -> None:
    task = make_task()
    agent, state = reward_agent(task), owned()
    batch = [incoming(generated(GOOD, "a")), incoming(generated("def add(a, b):\n    return 0\n", "b"))]
    batch += [incoming(passing(task, sample_id="a")), incoming(execution(["0"] * 4, sample_id="b"))]
    out = [e.event for e in agent.handle(batch, state)]
    refs = [e for e in out if isinstance(e, ReferenceExecuted)]
    assert len(refs) == 1  # published once for the partition, before the first reward that uses it
    rewards = [e for e in out if isinstance(e, RewardScored)]
    assert [e.sample_id for e in rewards] == ["a", "b"]
    fn = get_reward_function("code-v1", linter=FakeLinter())
    ref_run = passing(task, sample_id="ref")
    alone = fn.scored_event(
        task, GOOD, passing(task, sample_id="a"), ref_run, reference_event_id=refs[0].event_id()
    )
    assert rewards[0].model_dump_json() == alone.model_dump_json()


def test_the_stored_reference_run_is_reused_per_partition_and_never_timed_again() -> None:
    task = make_task()
    timings = iter([0.001, 0.5, 0.9])
    runs: list[SandboxExecuted] = []

    def runner(t: TaskPublished, backend: str) -> SandboxExecuted:
        x = passing(t, sample_id="ref")
        x = x.model_copy(update={"duration_s": next(timings), "cases": ()})
        runs.append(x)
        return x

    fn = get_reward_function("code-v1", linter=FakeLinter())
    state = State()
    state.own(0)
    state.own(1)
    first = RewardAgent(fn, Tasks(task), runner)
    out0 = first.handle([incoming(generated(GOOD, "a")), incoming(passing(task, sample_id="a"))], state)
    # a restarted processor (same state, a runner that would time the reference differently)
    again = RewardAgent(fn, Tasks(task), runner)
    out1 = again.handle([incoming(generated(GOOD, "b")), incoming(passing(task, sample_id="b"))], state)
    assert len(runs) == 1 and [type(e.event) for e in out1] == [RewardScored]
    a, b = out0[-1].event, out1[-1].event
    assert isinstance(a, RewardScored) and isinstance(b, RewardScored)
    assert a.reference_event_id == b.reference_event_id == out0[0].event.event_id()
    # another partition needs the reference too: it gets (and publishes) its own run
    out2 = again.handle([incoming(generated(GOOD, "c"), 1), incoming(passing(task, sample_id="c"), 1)], state)
    assert len(runs) == 2 and isinstance(out2[0].event, ReferenceExecuted)
    assert out2[1].event.reference_event_id == out2[0].event.event_id() != a.reference_event_id  # type: ignore[attr-defined]


def filter_agent(task: TaskPublished, reruns: int = 0, *, probe: bool = False) -> FilterAgent:
    return FilterAgent(
        NoiseConfig(reruns=reruns, probe=probe),
        CompareOptions(),
        Tasks(task),
        lambda t, backend: passing(t, sample_id="ref"),
        probe_reference=lambda t, backend, seed: simulated_reference_probe(t, seed=seed),
    )


def _reward(task: TaskPublished, code: str, x: SandboxExecuted) -> RewardScored:
    return get_reward_function("code-v1", linter=FakeLinter()).scored_event(task, code, x)


def test_filter_waits_for_code_every_run_and_the_reward() -> None:
    task = make_task()
    agent, state = filter_agent(task, reruns=1), owned()
    x0 = passing(task)
    x1 = execution(["3", "4", "15", "1"], run_index=1)
    assert agent.handle([incoming(_reward(task, GOOD, x0)), incoming(x0)], state) == []
    assert agent.handle([incoming(generated(GOOD))], state) == []  # run 1 still missing
    out = agent.handle([incoming(x1)], state)
    assert len(out) == 1
    verdict = out[0].event
    assert isinstance(verdict, NoiseVerdict)
    # run 0 passed, the same cases run again failed one: not a correct program, trained as a failure
    assert verdict.verdict == "reject"
    assert "runtime.nondeterministic" in {r.code for r in verdict.reasons}
    assert agent.handle([incoming(x1)], state) == []  # judged once
    assert state.get(0, SAMPLE, "s-1") is None


def test_filter_rejects_a_hack_and_masks_an_infra_failure() -> None:
    task = make_task()
    agent, state = filter_agent(task), owned()
    hack = "import os\ndef add(a, b):\n    os._exit(0)\n"
    x = execution(["3"] + [None] * 3, statuses=["ok", "missing", "missing", "missing"])
    out = agent.handle([incoming(generated(hack)), incoming(x), incoming(_reward(task, hack, x))], state)
    assert [e.event.verdict for e in out] == ["reject"]  # type: ignore[attr-defined]
    broken = passing(task, sample_id="s-2", infra_error="engine crashed")
    out = agent.handle(
        [incoming(generated(GOOD, "s-2")), incoming(broken), incoming(_reward(task, GOOD, broken))], state
    )
    assert [e.event.verdict for e in out] == ["mask"]  # type: ignore[attr-defined]


def test_filter_waits_for_the_probe_run_and_publishes_the_reference_answers_once() -> None:
    task = make_task()
    agent, state = filter_agent(task, probe=True), owned()
    verdicts: list[NoiseVerdict] = []
    references: list[ReferenceExecuted] = []
    memoriser = "def add(a, b):\n    return {(1, 2): 3, (2, 2): 4, (10, 5): 15, (-1, 1): 0}.get((a, b))\n"
    for sid, code in (("s-1", GOOD), ("s-2", memoriser)):
        x = simulated_run(task, code, sample_id=sid)
        probe = simulated_run(task, code, sample_id=sid, run_index=1, probe=True)
        first = [incoming(generated(code, sid)), incoming(x), incoming(_reward(task, code, x))]
        assert agent.handle(first, state) == []  # a first run that answered every case earns a probe
        out = [e.event for e in agent.handle([incoming(probe)], state)]
        verdicts += [e for e in out if isinstance(e, NoiseVerdict)]
        references += [e for e in out if isinstance(e, ReferenceExecuted)]
    assert len(references) == 1 and references[0].execution.probe is not None  # once per partition
    good, table = verdicts
    assert good.verdict == "accept" and good.probe_reference_event_id == references[0].event_id()
    assert table.verdict == "reject" and "hack.memorised" in {r.code for r in table.reasons}
    assert table.probe_reference_event_id == references[0].event_id()
    # a first run that did not answer every case cannot pass: no probe is waited for
    x = execution(["3", None, "15", "0"], sample_id="s-3")
    emits = agent.handle(
        [incoming(generated(GOOD, "s-3")), incoming(x), incoming(_reward(task, GOOD, x))], state
    )
    assert [e.event.verdict for e in emits] == ["accept"]  # type: ignore[attr-defined]


def test_an_episodes_final_turn_waits_for_its_probe_run_and_is_judged_by_it() -> None:
    # memorisation is judged by behaviour on a probe run in an episode as in one shot: the final turn's
    # probe run is waited for, and a final turn that recalls the visible answers is rejected by it
    task = make_task()
    agent, state = filter_agent(task, probe=True), owned()
    wrong = "def add(a, b):\n    return a - b\n"
    memoriser = "def add(a, b):\n    return {(1, 2): 3, (2, 2): 4, (10, 5): 15, (-1, 1): 0}.get((a, b))\n"
    turns = {"max_turns": 2}
    first = generated(wrong).model_copy(update=turns)
    second = generated(memoriser).model_copy(update={**turns, "turn": 1, "feedback_event_id": "f"})
    x0 = simulated_run(task, wrong).model_copy(update=turns)
    x1 = simulated_run(task, memoriser).model_copy(update={**turns, "turn": 1})
    probe = simulated_run(task, memoriser, run_index=1, probe=True).model_copy(update={**turns, "turn": 1})
    reward = get_reward_function("code-v4", linter=FakeLinter()).scored_event(task, memoriser, x1)
    assert reward.turn == 1
    events = [first, x0, second, x1, reward]
    assert agent.handle([incoming(e) for e in events], state) == []  # the final turn's probe is due
    out = [e.event for e in agent.handle([incoming(probe)], state)]
    (reference,) = [e for e in out if isinstance(e, ReferenceExecuted)]
    (verdict,) = [e for e in out if isinstance(e, NoiseVerdict)]
    assert verdict.turn == 1 and verdict.verdict == "reject"
    assert "hack.memorised" in {r.code for r in verdict.reasons}
    assert verdict.probe_reference_event_id == reference.event_id()
    assert verdict.as_written().ce_type() == "rlstream.rollout.filtered.v3"
