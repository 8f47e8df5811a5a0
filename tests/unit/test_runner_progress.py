"""The run summary's view of the generators: the newest policy version their training samples were
stamped with."""

from rlstream.runner import Progress, torch_threads
from rlstream.workers import PIPELINE_WORKERS
from schemas.curriculum import CurriculumLevelChanged
from schemas.rollout import CodeGenerated


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
