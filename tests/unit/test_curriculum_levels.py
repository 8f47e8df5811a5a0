"""The level-aware curriculum: graded tasks above a run's level wait, held-out pass@1 of the current
level moves it on (recorded on rl.curriculum), unmeasurable and exhausted levels are left."""

from __future__ import annotations

from infra.runtime.port import Emit
from infra.runtime.state import State
from schemas.curriculum import CurriculumLevelChanged
from schemas.policy import PolicyPublished
from schemas.rollout import ExperienceReady, RewardScored, RolloutRequested
from schemas.task import TaskPublished
from schemas.topics import CURRICULUM, EVALUATIONS_REQUESTED
from streams.config import EvaluationConfig, LevelConfig, SchedulerConfig
from streams.scheduler.agent import EVALROUND, INFLIGHT, SchedulerAgent
from streams.scheduler.levels import LevelPlan, RoundTally
from tests.unit.test_agents import incoming, owned, task

PLAN = LevelPlan(LevelConfig(enabled=True, advance_at=0.5))


def _tally(task_id: str, level: int, correct: list[bool], n: int = 4, version: int = 3) -> RoundTally:
    return RoundTally("run", task_id, version, level, n, {f"{task_id}/{i}": c for i, c in enumerate(correct)})


# ---- the rules -------------------------------------------------------------------------------------


def test_a_run_starts_at_its_easiest_level_and_only_easier_tasks_are_eligible():
    start = PLAN.start("run", [3, 2, 2, 4])
    assert start is not None and (start.from_level, start.to_level, start.reason) == (None, 2, "start")
    assert PLAN.start("run", []) is None
    assert PLAN.eligible(1, 2) and PLAN.eligible(2, 2) and not PLAN.eligible(3, 2)
    assert PLAN.eligible(None, 1)  # ungraded tasks are never held back


def test_the_current_level_moves_on_when_its_held_out_pass_at_1_reaches_the_bar():
    below = [_tally("a", 1, [True, False, False, False]), _tally("b", 1, [True, True, False, False])]
    assert PLAN.after_round("run", 1, 3, below, {1, 2}, {1, 2}) == []  # (0.25 + 0.5) / 2 < 0.5
    incomplete = [_tally("a", 1, [True, True, True]), _tally("b", 1, [True, True, True, True])]
    assert PLAN.after_round("run", 1, 3, incomplete, {1, 2}, {1, 2}) == []
    passed = [_tally("a", 1, [True, True, False, False]), _tally("b", 1, [True, True, True, False])]
    (move,) = PLAN.after_round("run", 1, 3, passed, {1, 2}, {1, 2, 3})
    assert (move.from_level, move.to_level, move.reason, move.policy_version) == (1, 2, "passed", 3)
    assert (move.pass_at_1, move.threshold, move.tasks, move.samples) == (0.625, 0.5, 2, 8)


def test_one_round_may_pass_several_levels_and_an_unmeasured_level_is_passed_through():
    tallies = [_tally("a", 1, [True] * 4), _tally("b", 3, [True] * 4), _tally("c", 4, [False] * 4)]
    # level 2 has no held-out task: nothing could say it was learned, so it does not hold the run
    moves = PLAN.after_round("run", 1, 0, tallies, {1, 3, 4}, {1, 2, 3, 4})
    assert [(m.from_level, m.to_level, m.reason) for m in moves] == [
        (1, 2, "passed"),
        (2, 3, "unmeasured"),
        (3, 4, "passed"),
    ]
    assert PLAN.after_round("run", 4, 0, tallies, {1, 3, 4}, {1, 2, 3, 4}) == []  # the top level


def test_an_exhausted_level_moves_to_the_next_present_one():
    move = PLAN.exhausted("run", 1, [1, 3])
    assert move is not None and (move.from_level, move.to_level, move.reason) == (1, 3, "exhausted")
    assert PLAN.exhausted("run", 3, [1, 3]) is None


def test_a_tally_round_trips_through_its_state_record():
    tally = _tally("a", 2, [True, False])
    assert RoundTally.from_json(tally.to_json()) == tally
    assert not tally.complete and tally.pass_at_1 == 0.5


# ---- the scheduler ---------------------------------------------------------------------------------


def _graded(i: int, level: int, split: str = "train") -> TaskPublished:
    return task(i).model_copy(update={"difficulty": level, "split": split})


def _scheduler(**overrides: object) -> SchedulerAgent:
    cfg = SchedulerConfig(
        group_size=2,
        epochs=1000,
        max_groups_in_flight=8,
        evaluation=EvaluationConfig(samples=2, every=1),
        levels=LevelConfig(enabled=True, advance_at=0.5),
    ).model_copy(update=overrides)
    return SchedulerAgent(cfg, "run", lambda fresh: 0)


def _score(group_id: str, index: int, passed: bool) -> RewardScored:
    return RewardScored(
        sample_id=f"{group_id}/{index}",
        group_id=group_id,
        task_id="t",
        execution_event_id=f"x-{group_id}-{index}",
        reward_fn="code",
        reward_version="v2",
        components={"correctness": float(passed)},
        weights={"correctness": 1.0},
        total=float(passed),
        passed=3 if passed else 1,
        total_cases=3,
    )


def _moves(out: list[Emit]) -> list[tuple[int | None, int, str]]:
    return [
        (e.event.from_level, e.event.to_level, e.event.reason)
        for e in out
        if e.topic == CURRICULUM.name and isinstance(e.event, CurriculumLevelChanged)
    ]


def _training(out: list[Emit]) -> list[str]:
    return [e.event.task_id for e in out if e.topic is None and isinstance(e.event, RolloutRequested)]


def test_training_stays_on_the_first_level_until_its_held_out_tasks_are_passed():
    agent = _scheduler()
    state = owned(State())
    tasks = [_graded(0, 1), _graded(1, 1), _graded(2, 2), _graded(8, 1, "eval"), _graded(9, 2, "eval")]
    agent.handle([incoming(t) for t in tasks], state)
    out = agent.tick(state, now=0.0)
    assert _moves(out) == [(None, 1, "start")]
    assert set(_training(out)) == {"t0", "t1"}  # level 2 waits
    rounds = sorted(
        e.event.group_id
        for e in out
        if e.topic == EVALUATIONS_REQUESTED.name and isinstance(e.event, RolloutRequested)
    )
    assert rounds == ["run/t8/eval-v0", "run/t9/eval-v0"]
    # v0 fails level 1's held-out task: nothing moves; a training sample's score is passed over
    scores = [
        _score("run/t8/eval-v0", 0, False),
        _score("run/t8/eval-v0", 1, False),
        _score("run/t0/0", 0, True),
    ]
    assert agent.handle([incoming(s) for s in scores], state) == []
    assert "t2" not in _training(agent.tick(state, now=1.0))
    # v1 passes it (re-delivered scores count once): the run moves to level 2, recorded on rl.curriculum
    agent.handle(
        [
            incoming(
                PolicyPublished(
                    run_id="run", policy_version=1, step=1, checkpoint_uri="file:///v1", sha256="0" * 64
                )
            )
        ],
        state,
    )
    assert agent.tick(state, now=2.0)  # the v1 round is issued
    first = agent.handle([incoming(_score("run/t8/eval-v1", 0, True))] * 2, state)
    assert first == []
    (moved,) = agent.handle([incoming(_score("run/t8/eval-v1", 1, True))], state)
    assert moved.topic == CURRICULUM.name and moved.run_id == "run"
    event = moved.event
    assert isinstance(event, CurriculumLevelChanged)
    assert (event.from_level, event.to_level, event.policy_version, event.pass_at_1) == (1, 2, 1, 1.0)
    in_flight = state.keys(0, INFLIGHT)
    for done in in_flight:
        agent.handle([incoming(ExperienceReady(group_id=done, task_id="t", group_size=2, samples=()))], state)
    assert "t2" in _training(agent.tick(state, now=3.0))
    # once level 2's tally of v1 is in too, the round is over and its tallies are gone
    agent.handle([incoming(_score("run/t9/eval-v1", i, False)) for i in range(2)], state)
    assert state.get(0, EVALROUND, "run/t9/eval-v1") is None


def test_a_level_whose_tasks_are_used_up_hands_over_to_the_next():
    agent = _scheduler(epochs=1)
    state = owned(State())
    agent.handle([incoming(_graded(0, 1)), incoming(_graded(1, 2))], state)
    out = agent.tick(state, now=0.0)
    assert _moves(out) == [(None, 1, "start")] and _training(out) == ["t0"]
    assert agent.tick(state, now=1.0) == []  # t0 in flight: level 1 is not over yet
    agent.handle(
        [incoming(ExperienceReady(group_id="run/t0/0", task_id="t0", group_size=2, samples=()))], state
    )
    out = agent.tick(state, now=2.0)
    assert _moves(out) == [(1, 2, "exhausted")]
    assert _training(agent.tick(state, now=3.0)) == ["t1"]


def test_without_the_level_curriculum_graded_tasks_are_scheduled_as_ever():
    agent = _scheduler(levels=LevelConfig(enabled=False), max_groups_in_flight=2)
    state = owned(State())
    agent.handle([incoming(_graded(0, 1)), incoming(_graded(1, 3))], state)
    out = agent.tick(state, now=0.0)
    assert _moves(out) == [] and _training(out) == ["t0", "t1"]


def test_an_easier_task_read_after_the_start_restarts_the_run_there_until_it_moved_on():
    agent = _scheduler(max_groups_in_flight=1)
    state = owned(State())
    agent.handle([incoming(_graded(0, 2))], state)  # rl.tasks has partitions: level 2 read first
    assert _moves(agent.tick(state, now=0.0)) == [(None, 2, "start")]
    assert _moves(agent.handle([incoming(_graded(1, 1))], state)) == [(None, 1, "start")]
    agent.handle(
        [incoming(ExperienceReady(group_id="run/t0/0", task_id="t0", group_size=2, samples=()))], state
    )
    assert _training(agent.tick(state, now=1.0)) == ["t1"]  # level 2 waits again
    # once the run has moved on, a late easier task joins the mix without moving the level back
    agent._move(state, [CurriculumLevelChanged(run_id="run", from_level=1, to_level=3, reason="passed")])
    assert agent.handle([incoming(_graded(2, 2))], state) == []
