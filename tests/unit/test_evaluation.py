"""Held-out evaluation: splits chosen deterministically, rounds under exact versions with fixed seeds on
their own lane, evaluation samples never assembled, pass@k with bootstrap intervals."""

from __future__ import annotations

from pathlib import Path

import pytest

from consumers.evaluation import SampleOutcome, bootstrap_ci, evaluate
from consumers.tuning import SettingResult, best, grid, pearson
from infra.runtime.state import State
from producers.ingest.split import HoldOut, hold_out, read_task_list
from producers.ingest.synthetic import synthetic_tasks
from schemas.errors import InputError, UsageError
from schemas.policy import PolicyPublished
from schemas.rollout import CodeGenerated, ExperienceReady, NoiseVerdict, RolloutRequested
from schemas.topics import EVALUATIONS_REQUESTED
from streams.config import EvaluationConfig, SchedulerConfig
from streams.experience.agent import GROUP, ExperienceAgent
from streams.scheduler.agent import SchedulerAgent
from streams.scheduler.evaluation import eval_seed
from tests.unit.test_agents import incoming, owned, task

# ---- splits ----------------------------------------------------------------------------------------


def test_a_fraction_is_held_out_by_hash_whatever_the_order():
    tasks = synthetic_tasks()
    held = {t.task_id for t in HoldOut(0.2).apply(tasks) if t.split == "eval"}
    again = {t.task_id for t in HoldOut(0.2).apply(list(reversed(tasks))) if t.split == "eval"}
    assert held == again and len(held) == 2  # round(0.2 * 8)
    # a task's rank is its own: adding tasks never moves a held-out one back unless it is outranked
    more = {t.task_id for t in HoldOut(0.2).apply(tasks[:5]) if t.split == "eval"}
    assert len(more) == 1
    assert {t.split for t in HoldOut(0.0).apply(tasks)} == {"train"}


def test_named_tasks_are_held_out_and_unknown_names_are_refused(tmp_path: Path):
    listing = tmp_path / "eval.txt"
    listing.write_text("# held out\nsynthetic/is_small\n\nsynthetic/at_most  # the second\n")
    tasks = hold_out(synthetic_tasks(), fraction=None, names_file=listing)
    assert sorted(t.task_id for t in tasks if t.split == "eval") == [
        "synthetic/at_most",
        "synthetic/is_small",
    ]
    listing.write_text("synthetic/nope\n")
    with pytest.raises(InputError, match="synthetic/nope"):
        hold_out(synthetic_tasks(), fraction=None, names_file=listing)
    listing.write_text("a\na\n")
    with pytest.raises(InputError, match="line 2"):
        read_task_list(listing)
    with pytest.raises(UsageError, match="none to train on"):
        HoldOut(0.0, frozenset(t.task_id for t in synthetic_tasks())).apply(synthetic_tasks())
    with pytest.raises(UsageError, match="below 1"):
        HoldOut(1.0)


# ---- rounds ----------------------------------------------------------------------------------------


def _policy(version: int, step: int | None = None, run: str = "run") -> PolicyPublished:
    return PolicyPublished(
        run_id=run,
        policy_version=version,
        step=step if step is not None else version,
        checkpoint_uri=f"file:///tmp/v{version}.safetensors",
        sha256="0" * 64,
    )


def _scheduler(**evaluation: int) -> SchedulerAgent:
    cfg = SchedulerConfig(
        group_size=2,
        epochs=1000,
        max_groups_in_flight=2,
        evaluation=EvaluationConfig(samples=4, **evaluation),
    )
    return SchedulerAgent(cfg, "run", lambda fresh: 0)


def test_rounds_cover_every_held_out_task_at_v0_every_n_and_the_final_step_outside_backpressure():
    agent = _scheduler(every=2, final_step=3)
    state = owned(State())
    held = task(9).model_copy(update={"split": "eval"})
    agent.handle([incoming(task(0)), incoming(task(1)), incoming(held)], state)
    out = agent.tick(state, now=0.0)
    training = [e for e in out if e.topic is None]
    rounds = [e for e in out if e.topic == EVALUATIONS_REQUESTED.name]
    # the held-out task is never a training group; the training lane is at its in-flight bound ...
    assert [e.event.task_id for e in training] == ["t0", "t1"]  # type: ignore[attr-defined]
    ((request,),) = [[e.event for e in rounds]]
    assert isinstance(request, RolloutRequested)
    assert (request.split, request.policy_version, request.group_size) == ("eval", 0, 4)
    assert request.group_id == "run/t9/eval-v0"
    assert request.sampling.seed == eval_seed(0, "t9", 0)
    # ... and evaluation rounds go on regardless: v1 is not due, v2 is (every 2), v3 is the final step
    agent.handle([incoming(_policy(1)), incoming(_policy(2))], state)
    assert [e.event.policy_version for e in agent.tick(state, now=1.0) if e.topic] == [2]  # type: ignore[attr-defined]
    agent.handle([incoming(_policy(3)), incoming(_policy(4))], state)
    assert [e.event.policy_version for e in agent.tick(state, now=2.0) if e.topic] == [3]  # type: ignore[attr-defined]
    # training is over at the final step: no more training groups even with room in flight
    for group in ("run/t0/0", "run/t1/0"):
        agent.handle(
            [incoming(ExperienceReady(group_id=group, task_id="t", group_size=2, samples=()))], state
        )
    assert agent.tick(state, now=3.0) == []
    # a held-out task that arrives late joins every round already due
    agent.handle([incoming(task(8).model_copy(update={"split": "eval"}))], state)
    late = agent.tick(state, now=4.0)
    assert sorted(e.event.policy_version for e in late) == [0, 2, 3]  # type: ignore[attr-defined]
    # the same version's round draws the same seed whatever the run
    assert eval_seed(0, "t9", 3) == eval_seed(0, "t9", 3) != eval_seed(0, "t9", 2)


def test_the_experience_processor_never_assembles_an_evaluation_sample():
    agent = ExperienceAgent(deadline_s=1)
    state = owned(State())
    gen = CodeGenerated(
        sample_id="g/0",
        group_id="g",
        task_id="t",
        sample_index=0,
        policy_version=0,
        model="m",
        prompt_text="p",
        completion_text="c",
        code="c",
        split="eval",
    )
    verdict = NoiseVerdict(
        sample_id="g/0",
        group_id="g",
        task_id="t",
        reward_event_id="r",
        verdict="accept",
        reward=1,
        failure_reward=0.0,
    )
    # a verdict read before its generation is dropped with the group once the generation says "eval"
    assert agent.handle([incoming(verdict)], state) == []
    assert agent.handle([incoming(gen)], state) == []
    assert agent.tick(state, now=1e12) == []
    assert state.keys(0, GROUP) == []


# ---- numbers ---------------------------------------------------------------------------------------


def test_pass_at_k_per_version_with_a_bootstrap_interval_over_tasks():
    outcomes = [
        SampleOutcome("eval", 0, "a", passed, reward=float(passed), similarity=0.5)
        for passed in (True, False, False, False)
    ] + [SampleOutcome("eval", 0, "b", passed, reward=float(passed)) for passed in (True, True, True, False)]
    (row,) = evaluate(outcomes, ks=(1, 2, 8))
    assert row.tasks == 2 and row.samples == 8
    assert row.pass_at[1] == pytest.approx((0.25 + 0.75) / 2)
    # pass@2 = 1 - C(n-c,2)/C(n,2): a: 1 - 3/6, b: 1 - 0
    assert row.pass_at[2] == pytest.approx((0.5 + 1.0) / 2)
    assert 8 not in row.pass_at  # never guessed beyond the samples a task has
    assert row.ci[1] == pytest.approx((0.25, 0.75))  # the two tasks' own values
    assert row.similarity_mean == pytest.approx(0.5)  # task b has none: left out, not 0
    assert bootstrap_ci([0.3, 0.3]) == (0.3, 0.3)
    lo, hi = bootstrap_ci([0.0, 1.0] * 10)
    assert 0.2 < lo < 0.5 < hi < 0.8
    assert bootstrap_ci([0.0, 1.0] * 10) == (lo, hi)  # fixed seed: a rebuild equals the live value


def test_tuning_grid_correlation_and_choice():
    assert grid({"a": [0, 1], "b": ["x"]}) == [{"a": 0, "b": "x"}, {"a": 1, "b": "x"}]
    assert pearson([1.0, 2.0, 3.0], [2.0, 4.0, 6.0]) == pytest.approx(1.0)
    assert pearson([1.0, 2.0], [1.0, 1.0]) is None and pearson([1.0], [1.0]) is None

    def result(corr: float | None, agree: float | None, changes: int) -> SettingResult:
        return SettingResult({"k": changes}, "v", 4, 2, corr, 0.5, 2, agree, changes)

    # float noise ties; then agreement with reviewers; then the smallest change from the configuration
    chosen = best(
        [result(0.9, 0.5, 1), result(0.9 + 1e-12, 0.5, 0), result(0.9, 1.0, 2), result(None, 1.0, 0)]
    )
    assert chosen is not None and chosen.changes == 2
    assert best([result(0.5, None, 1), result(0.5 + 1e-12, None, 0)]).changes == 0  # type: ignore[union-attr]
