"""Credit flows across turns: on a task family whose first answer can only be a guess and whose feedback
names the expected value (``synthetic-feedback``: four tasks with one prompt and four offsets), training
on whole episodes of two turns lifts final-turn success well above first-turn success, which no policy
can lift above 1/4.

Everything but the broker is real: the tiny model generating both turns (the second from the first turn's
tokens and the feedback in its template), the sandbox running every turn, the episode step deriving the
feedback, code-v4 scoring the final turn, the filter, the experience assembling each episode as one
trajectory, and the learner training every turn's tokens with their own behaviour log-probs and
publishing versions the generator loads. The processors, wired as ``rlstream worker`` wires them, run on
the in-memory runtime (``tests/inprocess.py``): the 60 learner steps of 256 episodes this takes would
need an hour through the broker on two cores; the real-broker episode test
(``tests/reliability/test_episode_faults.py``) shows the same processors exactly once across crashes.

Measured (seed 0, 2 CPUs): see the README's "Episodes" section; the run prints one line per step.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

from learner.config import LearnerConfig
from producers.ingest.synthetic import FEEDBACK_OFFSETS, feedback_tasks
from rlstream.settings import Settings
from schemas.episode import TurnEnded
from schemas.rollout import NoiseVerdict, RolloutRequested, SamplingParams
from schemas.topics import TURNS, VERDICTS
from tests.inprocess import InProcessRun

torch.set_num_threads(1)

STEPS = int(os.environ.get("RLSTREAM_TEST_EPISODE_STEPS", "60"))
#: large groups: the rare early second-turn successes must outweigh the noise that collapses a policy
GROUP = 64
#: the first and the last steps compared (episodes of every task in each)
WINDOW = 10
CACHE = Path.home() / ".rlstream"


def _rates(pipe: InProcessRun, steps: range) -> tuple[float, float, int]:
    """First-turn and final pass rate of the episodes requested in ``steps``."""
    groups = {f"learn/{t.task_id}/{s}" for t in feedback_tasks() for s in steps}
    first = [
        e
        for e in pipe.events(TURNS.name)
        if isinstance(e, TurnEnded) and e.turn == 0 and e.group_id in groups
    ]
    verdicts = [e for e in pipe.events(VERDICTS.name) if isinstance(e, NoiseVerdict) and e.group_id in groups]
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
    settings = Settings(
        run_id="learn",
        home=tmp_path,
        generator={"model": "tiny", "seed": 0, "models_dir": CACHE / "models", "batch_size": 64},
        sandbox={"cache_dir": CACHE / "cache" / "sandbox", "backend": "wasm", "workers": 1},
        # a second turn that writes no program is the failure it is, trained on (not masked away)
        noise={"degenerate_verdict": "accept"},
        # solving on the second turn is worth what solving on the first is: only the feedback differs
        reward={"weights": {"turns": 0.0}},
        pipeline={"group_deadline_s": 3600.0},
    )
    pipe = InProcessRun(
        settings,
        learner,
        ("generator", "sandbox", "episode", "reward", "filter", "experience"),
        tasks=tasks,
    )
    sampling = SamplingParams(temperature=1.0, top_p=1.0, max_tokens=1)
    try:
        for step in range(STEPS):
            for task in tasks:
                pipe.publish(
                    RolloutRequested(
                        group_id=f"learn/{task.task_id}/{step}",
                        task_id=task.task_id,
                        group_size=GROUP,
                        prompt=task.prompt,
                        entry_point=task.entry_point,
                        policy_version=pipe.engine.policy_version,
                        sampling=sampling,
                        max_turns=task.max_turns or 1,
                    )
                )
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
