"""End to end through the learner's own pieces (no broker): a tiny random Llama must learn to emit token
X. Rollouts are sampled here, wrapped as ExperienceReady events with group-relative advantages, trained
one policy version late (so every sample is off-policy and the importance ratio is exercised), through
batch assembly and the DeepSpeed ZeRO-2 engine on CPU. Mean reward starts near 1/64 and must pass 0.5.

The vocabulary is 64 rather than ~300 so that a random policy emits X often enough for the first groups
to carry a signal; each step takes milliseconds and the whole run a few seconds.
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
import torch

from learner.batch import build_batches
from learner.config import LearnerConfig
from learner.engine import LearnerEngine
from learner.models import random_llama
from schemas.advantages import group_advantages
from schemas.rollout import ExperienceReady, ExperienceSample

torch.set_num_threads(1)

VOCAB, X, GROUP, GROUPS, PROMPT, LENGTH = 64, 42, 8, 8, 3, 4
STEPS = 40


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@torch.no_grad()
def rollout(
    model: torch.nn.Module, version: int, gen: torch.Generator
) -> tuple[list[ExperienceReady], float]:
    """GROUPS groups of GROUP samples; reward = share of completion tokens equal to X."""
    prompts = torch.randint(3, VOCAB, (GROUPS, PROMPT), generator=gen).repeat_interleave(GROUP, 0)
    seqs, logprobs = prompts, []
    for _ in range(LENGTH):
        logp = model(input_ids=seqs).logits[:, -1].float().log_softmax(-1)
        token = torch.multinomial(logp.exp(), 1, generator=gen)
        logprobs.append(logp.gather(-1, token))
        seqs = torch.cat([seqs, token], 1)
    completions, behaviour = seqs[:, PROMPT:], torch.cat(logprobs, 1)
    rewards = (completions == X).float().mean(1)
    events = []
    for g in range(GROUPS):
        rows = range(g * GROUP, (g + 1) * GROUP)
        advantages = group_advantages([float(rewards[r]) for r in rows])
        samples = tuple(
            ExperienceSample(
                sample_id=f"v{version}-{r}",
                policy_version=version,
                reward=float(rewards[r]),
                advantage=a,
                prompt_token_ids=tuple(prompts[r].tolist()),
                completion_token_ids=tuple(completions[r].tolist()),
                behaviour_logprobs=tuple(behaviour[r].tolist()),
            )
            for r, a in zip(rows, advantages, strict=True)
        )
        events.append(
            ExperienceReady(group_id=f"v{version}-g{g}", task_id="bandit", group_size=GROUP, samples=samples)
        )
    return events, float(rewards.mean())


@pytest.mark.parametrize("decoupled", [False, True], ids=["coupled", "decoupled"])
def test_grpo_learns_to_emit_token_x(tmp_path: Path, decoupled: bool) -> None:
    config = LearnerConfig(
        backend="deepspeed",
        accelerator="cpu",
        zero_stage=2,
        lr=5e-3,
        decoupled=decoupled,
        staleness_bound=1,
        token_budget=4096,
        checkpoint_dir=tmp_path,
        distributed={"master_port": free_port()},  # type: ignore[arg-type]
    )
    engine = LearnerEngine(random_llama(vocab_size=VOCAB, seed=0), config)
    gen = torch.Generator().manual_seed(0)

    version = 0
    pending, reward = rollout(engine.module, version, gen)
    rewards = [reward]
    max_ratio_seen = 0.0
    for _ in range(STEPS):
        # generate with the current weights, but train on the previous version's samples
        fresh, reward = rollout(engine.module, version, gen)
        rewards.append(reward)
        batches, stats = build_batches(
            pending,
            current_version=version,
            staleness_bound=config.staleness_bound,
            token_budget=config.token_budget,
        )
        assert stats.dropped == 0
        assert dict(stats.staleness_hist) == ({1: GROUP * GROUPS} if version else {0: GROUP * GROUPS})
        for batch in batches:
            metrics = engine.train_step(batch, staleness_hist=stats.staleness_hist)
            max_ratio_seen = max(max_ratio_seen, metrics["is_ratio_max"])
        version += 1
        pending = fresh

    start, end = sum(rewards[:3]) / 3, sum(rewards[-5:]) / 5
    assert start < 0.1, rewards
    assert end >= 0.5, rewards
    # the samples really were off-policy: ratios away from 1 were seen
    assert max_ratio_seen > 1.0
