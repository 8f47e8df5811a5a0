"""Probe runs resumed past a hang near the cases (filter v25), in the real sandbox: HumanEval/39's
reference hangs on n = 12, near the cases on every seed; from v25 its runs (and a sample's that hangs
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
    after = _evaluator("v25").evaluate(TASK, CODE[name], backend="wasm")
    assert after.cli_json()["verdict"] == "reject"
    # the reference's resumed runs answered generated inputs after its first hang; its plain run none
    ref = after.probe_reference
    assert ref is not None and before.probe_reference is not None
    plain = {c.index for c in before.probe_reference.execution.cases if c.status == "ok"}
    resumed = {c.index for c in ref.execution.cases if c.status == "ok"}
    assert plain < resumed


def test_correct_program_as_slow_as_the_reference_is_accepted() -> None:
    evaluation = _evaluator("v25").evaluate(TASK, CODE["a12_ok_budget_search_39"], backend="wasm")
    assert evaluation.cli_json()["verdict"] == "accept"
    probe = evaluation.probe
    assert probe is not None
    # it hung where the reference hangs (n = 12, the run's first call), and was resumed past it
    hung = next(c.index for c in probe.cases if c.status == "timeout")
    assert any(c.status == "ok" and c.index > hung for c in probe.cases)


@pytest.mark.parametrize("resume", [False, True])
def test_the_sandbox_processor_resumes_a_probe_run_as_the_filter_expects(resume: bool) -> None:
    """The pipeline's probe run of a sample (the sandbox processor's, with a probe seed of its own
    group's): resumed past its hang on n = 12 only when the filter is v25 (``resume``)."""
    from datetime import UTC, datetime

    from infra.runtime.port import Incoming
    from infra.runtime.state import State
    from schemas.envelope import Envelope
    from schemas.rollout import CodeGenerated, SandboxExecuted
    from streams.sandbox.agent import SandboxAgent
    from streams.sandbox.pool import SandboxPool

    gen = CodeGenerated(
        sample_id="g/0",
        group_id="g",
        task_id=TASK.task_id,
        sample_index=0,
        policy_version=0,
        model="tiny",
        prompt_text="p",
        completion_text="c",
        code=CODE["a12_ok_budget_search_39"],
        completion_token_ids=(1,),
        behaviour_logprobs=(-1.0,),
    )
    env = Envelope.for_event(gen, source="test", time=datetime.now(UTC))
    pool = SandboxPool(SandboxConfig(backend="wasm", result_cache_entries=0), workers=1)
    try:
        agent = SandboxAgent(pool, {TASK.task_id: TASK}, probe=True, resume=resume)  # type: ignore[arg-type]
        emitted = agent.handle([Incoming(env, gen, "t", 0, 0, 1_000_000)], State())
    finally:
        pool.close()
    runs = [e.event for e in emitted if isinstance(e.event, SandboxExecuted)]
    probe = next(r for r in runs if r.probe is not None)
    hung = next(c.index for c in probe.cases if c.status == "timeout")
    after = [c.status for c in probe.cases if c.index > hung]
    assert ("ok" in after) is resume


def test_a_run_cut_by_its_deadline_is_asked_again_and_keeps_the_digests_of_what_it_cannot_keep() -> None:
    """Filter v32 in the real sandbox: redteam/upto's probe run under a deadline far shorter than its
    near inputs take (lists of about 100,000 numbers, about 0.1 s each) is cut among them, asked again
    from the cut call, and merged; every result the merged run cannot keep (past an execution's 4 MiB)
    comes with its digest, the continuation's as well as the first run's."""
    from dataclasses import replace

    from schemas.rollout import RESULT_NOT_KEPT
    from streams.sandbox.jobs import probe_job_for
    from streams.sandbox.result import to_event
    from streams.sandbox.resume import cut_at, resumed

    upto = all_tasks()["redteam/upto"]
    code = next(p.code for p in PROGRAMS if p.name == "a19c_ok_generator_upto")
    sandbox = Sandbox(SandboxConfig(backend="wasm"))
    found = probe_job_for(upto, code, sandbox.limits(), seed="5eed" * 8)
    assert found is not None
    job, plan = found
    job = replace(job, limits=replace(job.limits, timeout_s=0.8))
    first = sandbox.execute(job, "wasm")
    cut = cut_at(first, plan)
    assert cut is not None and cut not in plan.far
    run = resumed(first, job, plan, lambda j: sandbox.execute(j, "wasm"), retry_cut=True)
    event = to_event(run, sample_id="s", group_id="g", task_id=upto.task_id)
    # the cut call was asked again and answered
    assert next(c for c in event.cases if c.index == cut).status in ("ok", "error")
    dropped = [c for c in event.cases if c.error == RESULT_NOT_KEPT]
    assert any(c.index > cut for c in dropped)
    assert all(c.digest is not None for c in dropped)
