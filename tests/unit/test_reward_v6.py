"""``code-v6``: an episode's final turn scored with ``code-v4``'s turn cost and ``code-v5``'s comparison."""

from __future__ import annotations

from schemas.rollout import CaseResult, SandboxExecuted
from schemas.task import TaskPublished, TestCase
from streams.episode.config import EpisodeConfig
from streams.reward.config import RewardConfig
from streams.reward.function import get_reward_function

TASK = TaskPublished(
    task_id="t/mean",
    prompt="def mean(xs):\n",
    entry_point="mean",
    tests=(TestCase(input="([0.1, 0.2, 0.3],)", output="0.2"),),
)


def _final_turn(result: str, turn: int) -> SandboxExecuted:
    return SandboxExecuted(
        sample_id="r/t/0/0",
        group_id="r/t/0",
        task_id=TASK.task_id,
        backend="wasm",
        cases=(CaseResult(index=0, status="ok", result_repr=result),),
        turn=turn,
        max_turns=3,
    )


def test_episodes_are_scored_by_default_with_code_v5s_comparison() -> None:
    # the default itself is the newest episode version's to assert (test_reward_v7.py: code-v8)
    default = get_reward_function(EpisodeConfig().reward_function, RewardConfig())
    assert default.compare_options() == get_reward_function("code-v5", RewardConfig()).compare_options()


def test_a_final_turn_off_in_the_tenth_digit_passes_under_v4_and_fails_under_v6() -> None:
    code = "def mean(xs):\n    return sum(xs) / len(xs) + 1e-10\n"
    off = _final_turn(repr(0.2 + 1e-10), turn=1)
    v4 = get_reward_function("code-v4", RewardConfig()).score(TASK, code, off)
    v6 = get_reward_function("code-v6", RewardConfig()).score(TASK, code, off)
    assert v4.passed and not v6.passed


def test_a_pass_after_two_turns_costs_the_same_under_v6_as_under_v4() -> None:
    code = "def mean(xs):\n    return sum(xs) / len(xs)\n"
    exact = _final_turn(repr(0.19999999999999998), turn=2)  # one unit in the last place off
    v4 = get_reward_function("code-v4", RewardConfig()).score(TASK, code, exact)
    v6 = get_reward_function("code-v6", RewardConfig()).score(TASK, code, exact)
    assert v4.passed and v6.passed
    assert v6.total == v4.total and v6.components["turns"] == 2.0
    assert get_reward_function("code-v6", RewardConfig()).version_label == "v6"
