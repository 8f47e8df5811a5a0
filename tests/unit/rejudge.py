"""What the filter-version tests (test_filter_v26 and later) share: one evaluation's runs judged again
under several filter versions, with its probe run swapped for a copy (the machine's load written into
its wall times, say), as the audit's re-judge reads recorded events."""

from __future__ import annotations

from collections.abc import Iterable

from schemas.rollout import SandboxExecuted
from schemas.task import TaskPublished
from streams.noise.config import FilterVersion, NoiseConfig
from streams.noise.filter import decide
from streams.probe.plan import ProbePlan, probe_run_index
from streams.reward.config import RewardConfig
from streams.reward.evaluate import Evaluation, Evaluator
from streams.reward.function import get_reward_function
from streams.reward.literals import CompareOptions
from streams.sandbox import Sandbox, SandboxConfig
from streams.sandbox.result import ExecutionResult, to_event


def verdicts(
    task: TaskPublished,
    code: str,
    evaluation: Evaluation,
    versions: Iterable[FilterVersion],
    probe: SandboxExecuted | None = None,
) -> dict[str, str]:
    """Each version's verdict on ``evaluation``'s runs, its probe run replaced by ``probe`` where given."""
    run = probe if probe is not None else evaluation.probe
    assert run is not None and evaluation.probe_reference is not None
    return {
        version: decide(
            task=task,
            code=code,
            executions=(evaluation.execution, *evaluation.reruns, run),
            config=NoiseConfig(version=version),
            options=CompareOptions(),
            task_quality=evaluation.task_quality,
            probe_reference=evaluation.probe_reference,
        ).verdict
        for version in versions
    }


def evaluator(seed: str, sandbox: Sandbox | None = None) -> Evaluator:
    """The evaluator these tests make their real runs with: code-v5, the default filter, probe plans
    drawn with ``seed``."""
    return Evaluator(
        sandbox if sandbox is not None else Sandbox(SandboxConfig()),
        get_reward_function("code-v5", RewardConfig()),
        NoiseConfig(),
        probe_seed=seed,
    )


def probe_event(result: ExecutionResult, plan: ProbePlan, task_id: str, sample_id: str) -> SandboxExecuted:
    """``result`` (a run of ``plan``'s inputs) as the sandbox processor publishes a sample's probe run."""
    return to_event(
        result,
        sample_id=sample_id,
        group_id="g-1",
        task_id=task_id,
        run_index=probe_run_index(0),
        hidden=frozenset(range(len(plan.inputs))),
    ).model_copy(update={"probe": plan.digest, "probe_seed": plan.seed})
