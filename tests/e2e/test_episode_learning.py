"""Credit flows across turns: on a task family whose first answer can only be a guess and whose feedback
names the expected value (``synthetic-feedback``: four tasks with one prompt and four offsets), training
on whole episodes of two turns lifts final-turn success well above first-turn success, which no policy
can lift above 1/4.

Everything but the broker is real: the tiny model generating both turns (the second from the first turn's
tokens and the feedback in its template), the sandbox running every turn, the episode step deriving the
feedback, code-v3 scoring the final turn, the filter, the experience assembling each episode as one
trajectory, and the learner training every turn's tokens with their own behaviour log-probs and
publishing versions the generator loads. The processors are the pipeline's own handlers wired in one
process (``tests/inprocess.py``): the 60 learner steps of 256 episodes this takes would need an hour through the
broker on two cores; the real-broker episode test (``tests/reliability/test_episode_faults.py``) shows
the same processors exactly once across crashes.

Measured (seed 0, 2 CPUs): see the README's "Episodes" section; the run prints one line per step.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

from learner.config import LearnerConfig
from producers.generator.models import load_model
from producers.ingest.synthetic import FEEDBACK_OFFSETS, feedback_tasks
from schemas.episode import TurnEnded
from schemas.rollout import NoiseVerdict, SamplingParams
from schemas.topics import TURNS, VERDICTS
from streams.noise.config import NoiseConfig
from streams.reward.config import RewardConfig, RewardWeights
from streams.sandbox.config import SandboxConfig
from tests.inprocess import InProcessPipeline

torch.set_num_threads(1)

STEPS = int(os.environ.get("RLSTREAM_TEST_EPISODE_STEPS", "60"))
#: large groups: the rare early second-turn successes must outweigh the noise that collapses a policy
GROUP = 64
#: the first and the last steps compared (episodes of every task in each)
WINDOW = 10
CACHE = Path.home() / ".rlstream" / "cache" / "sandbox"


def _rates(pipe: InProcessPipeline, steps: range) -> tuple[float, float, int]:
    """First-turn and final pass rate of the episodes requested in ``steps``."""
    groups = {f"learn/{t.task_id}/{s}" for t in pipe.tasks.by_id.values() for s in steps}
    first = [
        e
        for e in pipe.log.events(TURNS.name)
        if isinstance(e, TurnEnded) and e.turn == 0 and e.group_id in groups
    ]
    verdicts = [
        e for e in pipe.log.events(VERDICTS.name) if isinstance(e, NoiseVerdict) and e.group_id in groups
    ]
    first_pass = sum(1 for v in verdicts if v.turn == 0 and v.reward > 0) / len(verdicts)
    final_pass = sum(1 for v in verdicts if v.reward > 0) / len(verdicts)
    assert len(first) == len(verdicts)  # every episode has a first turn that ended
    return first_pass, final_pass, len(verdicts)


@pytest.mark.slow
def test_feedback_that_names_the_answer_is_learned_across_turns(tmp_path: Path) -> None:
    tasks = feedback_tasks(max_turns=2)
    learner = LearnerConfig(
        backend="torch",
        accelerator="cpu",
        lr=5e-4,
        token_budget=16384,
        checkpoint_dir=tmp_path / "checkpoints",
        pad_token_id=3,
    )
    pipe = InProcessPipeline(
        load_model("tiny", None, seed=0),
        tasks,
        run_id="learn",
        home=tmp_path,
        learner=learner,
        sandbox=SandboxConfig(cache_dir=CACHE, backend="wasm"),
        # a second turn that writes no program is the failure it is, trained on (not masked away)
        noise=NoiseConfig(degenerate_verdict="accept"),
        # solving on the second turn is worth what solving on the first is: only the feedback differs
        reward=RewardConfig(weights=RewardWeights(turns=0.0)),
    )
    sampling = SamplingParams(temperature=1.0, top_p=1.0, max_tokens=1)
    try:
        for step in range(STEPS):
            for task in tasks:
                pipe.request(task, step, GROUP, sampling)
            pipe.drain()
            if step % 10 == 9:
                first, final, n = _rates(pipe, range(step - 9, step + 1))
                print(f"step {step + 1}: {n} episodes, first turn {first:.2f}, final {final:.2f}", flush=True)
        start_first, start_final, _ = _rates(pipe, range(WINDOW))
        end_first, end_final, n = _rates(pipe, range(STEPS - WINDOW, STEPS))
    finally:
        pipe.close()
    print(
        f"EPISODE-LEARNING steps={STEPS} first {WINDOW} steps: first turn {start_first:.2f}, "
        f"final {start_final:.2f}; last {WINDOW} steps: first turn {end_first:.2f}, final {end_final:.2f} "
        f"({n} episodes)",
        flush=True,
    )
    chance = 1 / len(FEEDBACK_OFFSETS)
    # the first turn cannot know the offset: it stays at chance at best
    assert end_first <= chance + 0.05
    # the final turn reads it from the feedback: well above the first turn, above what any policy blind
    # to the feedback could reach (one constant answer passes one task in four), and above its start
    assert end_final >= end_first + 0.15
    assert end_final >= chance + 0.1
    assert end_final >= start_final + 0.2
