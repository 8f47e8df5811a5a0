"""A realistic event stream of one run for the projection tests: tasks, groups, samples, executions
(with flakiness re-runs), rewards, verdicts with reasons, experiences, policy versions trained on them,
and reviews, in pipeline order, with the causation ids the processors would record."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from schemas.base import Event
from schemas.policy import ConsumedOffset, PolicyPublished
from schemas.rollout import (
    CaseResult,
    CodeGenerated,
    ExperienceReady,
    ExperienceSample,
    NoiseVerdict,
    Reason,
    ReviewRecorded,
    RewardScored,
    RolloutRequested,
    SamplingParams,
    SandboxExecuted,
)
from schemas.task import TaskPublished, TestCase


@dataclass(frozen=True)
class Planned:
    event: Event
    causation_id: str | None


@dataclass(frozen=True)
class Expected:
    tasks: int
    groups: int
    samples: int
    executions: int
    rewards: int
    verdicts: dict[str, int]
    experiences: int
    policy_versions: int
    trained: dict[str, list[int]]
    reviews: int
    #: (task_id, policy_version) -> (n, c)
    passk: dict[tuple[str, int], tuple[int, int]]


def _h(*parts: object) -> int:
    return int(hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()[:8], 16)


def run_stream(
    run_id: str, *, tasks: int = 3, epochs: int = 2, group_size: int = 4, groups_per_version: int = 2
) -> tuple[list[Planned], Expected]:
    """Events of a whole run in pipeline order, and what the projection must hold afterwards."""
    out: list[Planned] = []
    t0 = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)
    task_ids = [f"proj-{run_id}/add{i}" for i in range(tasks)]
    for tid in task_ids:
        out.append(
            Planned(
                TaskPublished(
                    task_id=tid,
                    prompt="def add(a, b):\n",
                    entry_point="add",
                    tests=(TestCase(input="(1, 2)", output="3"),),
                    hidden_tests=(TestCase(input="(2, 2)", output="4"),),
                    tenant="team-a",
                    source="test",
                ),
                None,
            )
        )
    verdicts = {"accept": 0, "mask": 0, "reject": 0}
    trained: dict[str, list[int]] = {}
    passk: dict[tuple[str, int], list[int]] = {}
    executions = rewards = experiences = 0
    version = 0
    pending_groups: list[ExperienceReady] = []
    policy_events = 0
    n_groups = 0
    for epoch in range(epochs):
        for tid in task_ids:
            gid = f"{run_id}/{tid}/{epoch}"
            n_groups += 1
            req = RolloutRequested(
                group_id=gid,
                task_id=tid,
                group_size=group_size,
                prompt="def add(a, b):\n",
                entry_point="add",
                tenant="team-a",
                policy_version=version,
                sampling=SamplingParams(temperature=1.0, max_tokens=64),
            )
            out.append(Planned(req, None))
            req_id = req.event_id()
            accepted: list[ExperienceSample] = []
            masked = rejected = 0
            for j in range(group_size):
                sid = f"{gid}/{j}"
                ok = _h(sid, "ok") % 3 != 0
                gen = CodeGenerated(
                    sample_id=sid,
                    group_id=gid,
                    task_id=tid,
                    sample_index=j,
                    policy_version=version,
                    model="tiny",
                    prompt_text="def add(a, b):\n",
                    completion_text="    return a + b\n" if ok else "    return a - b\n",
                    code="def add(a, b):\n    return a + b\n" if ok else "def add(a, b):\n    return a - b\n",
                    extraction="body",
                    prompt_token_ids=(1, 2, 3),
                    completion_token_ids=(4, 5),
                    behaviour_logprobs=(-0.5, -0.25),
                    duration_s=0.1,
                )
                out.append(Planned(gen, req_id))
                backend = "wasm" if _h(sid, "b") % 4 else "container"
                runs = 2 if _h(sid, "flaky") % 5 == 0 else 1
                first_exec = None
                for r in range(runs):
                    ex = SandboxExecuted(
                        sample_id=sid,
                        group_id=gid,
                        task_id=tid,
                        run_index=r,
                        backend=backend,
                        cases=(
                            CaseResult(
                                index=0, status="ok", result_repr="3" if ok else "-1", duration_s=0.001
                            ),
                            CaseResult(index=1, hidden=True, status="ok", result_repr="4" if ok else "0"),
                        ),
                        exit_code=0,
                        duration_s=0.02 + (_h(sid, r) % 50) / 1000,
                        runtime_hash="a" * 64,
                    )
                    out.append(Planned(ex, gen.event_id()))
                    executions += 1
                    if r == 0:
                        first_exec = ex
                assert first_exec is not None
                reward = RewardScored(
                    sample_id=sid,
                    group_id=gid,
                    task_id=tid,
                    execution_event_id=first_exec.event_id(),
                    reward_fn="code",
                    reward_version="v1",
                    components={"correctness": 1.0 if ok else 0.0, "quality": 0.5},
                    weights={"correctness": 1.0, "quality": 0.1},
                    total=1.05 if ok else 0.0,
                    passed=2 if ok else 0,
                    total_cases=2,
                )
                out.append(Planned(reward, first_exec.event_id()))
                rewards += 1
                passk.setdefault((tid, version), [0, 0])
                passk[(tid, version)][0] += 1
                passk[(tid, version)][1] += int(ok)
                kind = _h(sid, "v") % 6
                decision = "reject" if kind == 0 else "mask" if kind == 1 else "accept"
                reasons: tuple[Reason, ...] = ()
                if decision == "reject":
                    reasons = (Reason(code="hack.forced_exit", detail="sys.exit"),)
                elif decision == "mask":
                    reasons = (Reason(code="flaky.disagree", detail="runs differ"), Reason(code="infra.slow"))
                verdict = NoiseVerdict(
                    sample_id=sid,
                    group_id=gid,
                    task_id=tid,
                    reward_event_id=reward.event_id(),
                    verdict=decision,  # type: ignore[arg-type]
                    reasons=reasons,
                    reward=reward.total,
                    failure_reward=min(reward.total, 0.0),
                )
                out.append(Planned(verdict, reward.event_id()))
                verdicts[decision] += 1
                if decision == "accept":
                    accepted.append(
                        ExperienceSample(
                            sample_id=sid,
                            policy_version=version,
                            reward=reward.total,
                            advantage=0.5 if ok else -0.5,
                            prompt_token_ids=(1, 2, 3),
                            completion_token_ids=(4, 5),
                            behaviour_logprobs=(-0.5, -0.25),
                        )
                    )
                elif decision == "mask":
                    masked += 1
                else:
                    rejected += 1
            exp = ExperienceReady(
                group_id=gid,
                task_id=tid,
                group_size=group_size,
                samples=tuple(accepted),
                masked=masked,
                rejected=rejected,
            )
            out.append(Planned(exp, req_id))
            experiences += 1
            pending_groups.append(exp)
            if len(pending_groups) >= groups_per_version:
                version += 1
                ids = tuple(s.sample_id for e in pending_groups for s in e.samples)
                pol = PolicyPublished(
                    run_id=run_id,
                    policy_version=version,
                    step=version * 2,
                    checkpoint_uri=f"file:///ckpt/{run_id}/v{version}",
                    sha256=hashlib.sha256(f"{run_id}{version}".encode()).hexdigest(),
                    model="tiny",
                    consumed=(ConsumedOffset(topic="rl.experiences", partition=0, offset=version),),
                    trained_sample_ids=ids,
                    metrics={"loss": 0.1 * version},
                )
                out.append(Planned(pol, None))
                policy_events += 1
                for sid in ids:
                    trained.setdefault(sid, []).append(version)
                pending_groups = []
    # two reviews of one sample: the second supersedes the first
    first_sid = f"{run_id}/{task_ids[0]}/0/0"
    r1 = ReviewRecorded(
        sample_id=first_sid,
        group_id=f"{run_id}/{task_ids[0]}/0",
        task_id=task_ids[0],
        verdict="mask",
        note="looks odd",
        reviewer="alice",
        automated_verdict="accept",
        reviewed_at=t0 + timedelta(minutes=5),
    )
    r2 = ReviewRecorded(
        sample_id=first_sid,
        group_id=f"{run_id}/{task_ids[0]}/0",
        task_id=task_ids[0],
        verdict="reject",
        note="hard-codes the answer",
        reviewer="bob",
        automated_verdict="accept",
        supersedes=r1.event_id(),
        reviewed_at=t0 + timedelta(minutes=6),
    )
    out += [Planned(r1, None), Planned(r2, None)]
    expected = Expected(
        tasks=tasks,
        groups=n_groups,
        samples=n_groups * group_size,
        executions=executions,
        rewards=rewards,
        verdicts=verdicts,
        experiences=experiences,
        policy_versions=policy_events,
        trained=trained,
        reviews=2,
        passk={k: (v[0], v[1]) for k, v in passk.items()},
    )
    return out, expected
