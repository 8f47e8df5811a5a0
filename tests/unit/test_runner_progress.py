"""The run's live line and summary: the newest policy version the training samples were stamped with,
the reward curve by the version that generated each sample, and held-out pass@1 per evaluated version."""

import time
from typing import Any

import pytest

from rlstream.runner import Progress, _drain, sparkline, torch_threads
from rlstream.workers import PIPELINE_WORKERS
from schemas.curriculum import CurriculumLevelChanged
from schemas.rollout import CodeGenerated, NoiseVerdict, RewardScored, RolloutRequested


def _generated(run: str, index: int, version: int, split: str = "train") -> CodeGenerated:
    return CodeGenerated(
        split=split,  # type: ignore[arg-type]
        sample_id=f"{run}/t/0/{index}",
        group_id=f"{run}/t/0",
        task_id="t",
        sample_index=index,
        policy_version=version,
        model="tiny",
        prompt_text="p",
        completion_text="c",
        code="c",
        prompt_token_ids=(1,),
        completion_token_ids=(2,),
        behaviour_logprobs=(-0.1,),
    )


def test_the_summary_names_the_newest_version_the_runs_samples_were_generated_with() -> None:
    progress = Progress(run_id="r1", expected_groups=1)
    for i, (run, version) in enumerate([("r1", 0), ("r1", 2), ("r1", 1), ("other", 9)]):
        progress.fold(f"e{i}", _generated(run, i, version))
    progress.fold("e1", _generated("r1", 5, 7))  # a duplicate event id is folded once
    progress.fold("e9", _generated("r1", 6, 8, split="eval"))  # an evaluation round's sample: not training
    summary = progress.summary()
    assert (summary["generations"], summary["generated_version"]) == (3, 2)


def test_torch_workers_share_the_cores_one_thread_at_least() -> None:
    assert torch_threads(PIPELINE_WORKERS, 2) == 1  # generator, evaluator, learner on two cores
    assert torch_threads(PIPELINE_WORKERS, 16) == 5
    assert torch_threads(("generator", "learner", "sandbox"), 8) == 4
    assert torch_threads(("sandbox",), None) == 1


def test_the_summary_lists_the_curriculums_moves() -> None:
    progress = Progress("r", expected_groups=1)
    progress.fold("e0", CurriculumLevelChanged(run_id="r", to_level=1, reason="start"))
    progress.fold(
        "e1",
        CurriculumLevelChanged(
            run_id="r",
            from_level=1,
            to_level=2,
            reason="passed",
            policy_version=5,
            pass_at_1=0.625,
            threshold=0.5,
            tasks=8,
            samples=64,
        ),
    )
    progress.fold("e2", CurriculumLevelChanged(run_id="other", to_level=3, reason="start"))
    assert progress.summary()["curriculum"] == [
        "level 1 (start)",
        "level 1 -> 2 at v5: held-out pass@1 0.625 >= 0.5 (8 tasks, 64 samples)",
    ]
    assert "| level 2 |" in progress.line()


class _SlowEvaluation:
    """A watcher whose run judges one more evaluation sample every third poll, ``stop_after`` in all."""

    def __init__(self, stop_after: int) -> None:
        self.polls = 0
        self.stop_after = stop_after

    def poll(self, progress: Progress, budget_s: float = 0.5) -> None:
        self.polls += 1
        n = progress.eval_judged
        if self.polls % 3 == 0 and n < self.stop_after:
            progress.fold(f"g{n}", _generated("r1", n, 1, split="eval"))
            progress.fold(f"v{n}", _verdict("r1", n))
        time.sleep(0.01)


def _verdict(run: str, index: int) -> NoiseVerdict:
    return NoiseVerdict(
        sample_id=f"{run}/t/0/{index}",
        group_id=f"{run}/t/0",
        task_id="t",
        reward_event_id=f"r{index}",
        verdict="accept",
        reward=1.0,
        failure_reward=None,
    )


_REQUEST = {
    "group_id": "r1/t/eval-v1",
    "task_id": "t",
    "group_size": 1,
    "prompt": "p",
    "entry_point": "f",
    "policy_version": 1,
    "split": "eval",
}


def _final_round(samples: int) -> Progress:
    progress = Progress(run_id="r1", expected_groups=0, target_steps=1, final_version=1)
    progress.fold("req", RolloutRequested(**{**_REQUEST, "group_size": samples}))  # type: ignore[arg-type]
    return progress


def test_a_run_waits_for_its_final_evaluation_as_long_as_samples_keep_being_judged() -> None:
    # a round far longer than the stall window: every sample is waited for
    lines: list[str] = []
    progress = _final_round(40)
    _drain([], _SlowEvaluation(stop_after=40), progress, lines.append, held_out=1, stall_s=0.3)  # type: ignore[arg-type]
    assert progress.eval_judged == 40 and not any("unfinished" in line for line in lines)
    # a round that stops moving is given up after the window, and the run says what is missing
    lines.clear()
    progress = _final_round(40)
    _drain([], _SlowEvaluation(stop_after=5), progress, lines.append, held_out=1, stall_s=0.3)  # type: ignore[arg-type]
    assert progress.eval_judged == 5
    assert "0 group(s) and 35 evaluation sample(s) unfinished" in lines[-1]
    assert progress.summary()["evaluation_samples_requested"] == 40


def _scored(run: str, index: int, reward: float, passed: bool) -> tuple[RewardScored, NoiseVerdict]:
    sample, group = f"{run}/t/0/{index}", f"{run}/t/0"
    scored = RewardScored(
        sample_id=sample,
        group_id=group,
        task_id="t",
        execution_event_id=f"x{index}",
        reward_fn="code",
        reward_version="code-v2",
        components={},
        weights={},
        total=reward,
        passed=3 if passed else 1,
        total_cases=3,
    )
    verdict = NoiseVerdict(
        sample_id=sample,
        group_id=group,
        task_id="t",
        reward_event_id=f"r{index}",
        verdict="accept",
        reward=reward,
        failure_reward=None,
    )
    return scored, verdict


def test_the_line_shows_the_reward_by_generating_version_and_held_out_pass_at_1_per_version() -> None:
    progress = Progress(run_id="r1", expected_groups=1, target_steps=15)
    assert "waiting for the first samples" in progress.line()
    samples = [(i, 0, 0.1, False, "train") for i in range(4)]  # version 0: reward 0.1
    samples += [(4 + i, 3, 1.2, True, "train") for i in range(4)]  # version 3: reward 1.2
    samples += [(8, 3, 1.0, True, "train")] * 2  # a re-delivered event (same id) is folded once
    samples += [(9, 5, 2.0, True, "train")]  # one sample of version 5: too few to show yet
    samples += [(20, 0, 0.0, False, "eval"), (21, 0, 0.0, True, "eval"), (22, 3, 1.0, True, "eval")]
    # the topics are read in any order: a verdict or a reward may come before its generation
    events: list[tuple[str, Any]] = []
    for index, version, reward, passed, split in samples:
        scored, verdict = _scored("r1", index, reward, passed)
        events += [
            (f"s{index}", scored),
            (f"v{index}", verdict),
            (f"g{index}", _generated("r1", index, version, split)),
        ]
    for event_id, event in reversed(events):
        progress.fold(event_id, event)
    for version in (0, 3):  # the evaluation rounds asked for
        request = RolloutRequested(
            split="eval",
            group_id=f"r1/eval/{version}",
            task_id="t",
            group_size=2,
            prompt="p",
            entry_point="f",
        )
        progress.fold(f"q{version}", request.model_copy(update={"policy_version": version}))
    progress.fold("o", _generated("other", 30, 9))  # another run's sample is not counted
    assert progress.curve() == pytest.approx({0: 0.1, 3: (4 * 1.2 + 1.0) / 5})
    assert progress.held_out_pass_at_1() == {0: 0.5, 3: 1.0}
    line = progress.line()
    assert "reward by version ▂█ v0 0.10 → v3 1.16" in line, line
    assert "held-out pass@1 v0 0.50 → v3 1.00 (3/4 judged)" in line, line
    summary = progress.summary()
    assert summary["reward_by_version"] == {0: 0.1, 3: 1.16}
    assert summary["held_out_pass_at_1"] == {0: 0.5, 3: 1.0}


def test_sparkline_scales_from_zero_or_the_lowest_value_to_the_highest() -> None:
    assert sparkline([]) == ""
    assert sparkline([0.0, 0.5, 1.0]) == "▁▅█"
    assert sparkline([-1.0, 1.0]) == "▁█"
    assert sparkline([0.0, 0.0]) == "▁▁"
