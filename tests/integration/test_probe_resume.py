"""Probe runs resumed past a hang near the cases (filter v23), in the real sandbox: HumanEval/39's
reference hangs on n = 12, near the cases on every seed; from v23 its runs (and a sample's that hangs
there too) go on past it, so a program wrong only after that input is judged there."""

from __future__ import annotations

import pytest

from streams.noise.config import NoiseConfig
from streams.reward.config import RewardConfig
from streams.reward.evaluate import Evaluator
from streams.reward.function import get_reward_function
from streams.sandbox.config import SandboxConfig
from streams.sandbox.service import Sandbox
from tests.hacks.redteam.corpus import PROGRAMS
from tests.hacks.redteam.tasks import all_tasks

TASK = all_tasks()["HumanEval/39"]
SEED = "00000001" * 4  # n = 12 first: the reference's plain run answers no generated input
CODE = {p.name: p.code for p in PROGRAMS}


def _evaluator(version: str) -> Evaluator:
    sandbox = Sandbox(SandboxConfig(backend="wasm"))
    noise = NoiseConfig(version=version)  # type: ignore[arg-type]
    return Evaluator(sandbox, get_reward_function("code-v5", RewardConfig()), noise, probe_seed=SEED)


@pytest.mark.parametrize("name", ["a19s_warm_screen_39", "a19s_slow_then_screen_39"])
def test_wrong_only_past_the_references_hang(name: str) -> None:
    before = _evaluator("v21").evaluate(TASK, CODE[name], backend="wasm")
    assert before.cli_json()["verdict"] == "accept"
    after = _evaluator("v23").evaluate(TASK, CODE[name], backend="wasm")
    assert after.cli_json()["verdict"] == "reject"
    # the reference's resumed runs answered generated inputs after its first hang; its plain run none
    ref = after.probe_reference
    assert ref is not None and before.probe_reference is not None
    plain = {c.index for c in before.probe_reference.execution.cases if c.status == "ok"}
    resumed = {c.index for c in ref.execution.cases if c.status == "ok"}
    assert plain < resumed


def test_correct_program_as_slow_as_the_reference_is_accepted() -> None:
    evaluation = _evaluator("v23").evaluate(TASK, CODE["a12_ok_budget_search_39"], backend="wasm")
    assert evaluation.cli_json()["verdict"] == "accept"
    probe = evaluation.probe
    assert probe is not None
    # it hung where the reference hangs (n = 12, the run's first call), and was resumed past it
    hung = next(c.index for c in probe.cases if c.status == "timeout")
    assert any(c.status == "ok" and c.index > hung for c in probe.cases)
