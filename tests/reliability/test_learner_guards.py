"""A hostile experience cannot crash the learner: token ids outside the model's vocabulary (negative or
too large, which the event schema cannot know) make a sample invalid instead of failing the step, which
would fail again after every restart from the checkpoint."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from learner.batch import TrainSample, select_samples
from learner.config import LearnerConfig
from learner.engine import LearnerEngine
from learner.loop import LearnerLoop, Record
from learner.models import random_llama
from schemas.rollout import ExperienceReady, ExperienceSample

torch.set_num_threads(1)
VOCAB = 64
IDS = st.lists(st.integers(-(2**40), 2**40) | st.integers(0, VOCAB - 1), min_size=1, max_size=6).map(tuple)


def _sample(prompt: tuple[int, ...], completion: tuple[int, ...], sid: str = "s") -> TrainSample:
    return TrainSample(
        sample_id=sid,
        group_id="g",
        policy_version=0,
        reward=1.0,
        advantage=1.0,
        prompt_token_ids=prompt,
        completion_token_ids=completion,
        behaviour_logprobs=tuple(-1.0 for _ in completion),
    )


@settings(max_examples=200, deadline=None)
@given(prompt=IDS, completion=IDS)
def test_a_sample_is_kept_only_when_every_token_id_is_in_the_vocabulary(
    prompt: tuple[int, ...], completion: tuple[int, ...]
) -> None:
    kept, stats = select_samples(
        [_sample(prompt, completion)], current_version=0, staleness_bound=4, token_budget=64, vocab_size=VOCAB
    )
    in_vocab = all(0 <= t < VOCAB for t in prompt + completion)
    assert bool(kept) == in_vocab
    assert stats.dropped_invalid == (0 if in_vocab else 1)


@pytest.mark.parametrize("bad", [-1, VOCAB, 2**62])
def test_the_learner_trains_past_out_of_vocabulary_tokens(tmp_path: Path, bad: int) -> None:
    config = LearnerConfig.model_validate(
        {
            "backend": "torch",
            "accelerator": "cpu",
            "lr": 1e-3,
            "token_budget": 16,
            "publish_every": 1,
            "checkpoint_dir": tmp_path / "ckpt",
        }
    )
    loop = LearnerLoop(LearnerEngine(random_llama(vocab_size=VOCAB, seed=0), config), run_id="run")
    assert loop.engine.vocab_size == VOCAB

    def record(offset: int, hostile: bool) -> Record:
        samples = tuple(
            ExperienceSample(
                sample_id=f"o{offset}s{i}",
                policy_version=0,
                reward=float(i),
                advantage=1.0 if i else -1.0,
                prompt_token_ids=(5, 6),
                completion_token_ids=(bad if hostile and i == 0 else 8, 9),
                behaviour_logprobs=(-4.0, -4.0),
            )
            for i in range(2)
        )
        event = ExperienceReady(group_id=f"run/g{offset}", task_id="t", group_size=2, samples=samples)
        return Record(event=event, topic="rl.experiences", partition=0, offset=offset)

    published = []
    for offset in range(3):
        published += loop.offer(record(offset, hostile=offset == 1))
    published += loop.flush()
    trained = {sid for event in published for sid in event.trained_sample_ids}
    assert "o1s0" not in trained and {"o0s0", "o0s1", "o1s1", "o2s0", "o2s1"} <= trained
    assert "o1s0" in loop.stats.dropped_sample_ids
