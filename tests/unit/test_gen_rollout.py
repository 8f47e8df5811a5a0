"""From a RolloutRequested group to its CodeGenerated samples with the tiny model."""

from __future__ import annotations

import pytest
import torch

from producers.generator.hf_backend import HFBackend
from producers.generator.models import load_model
from producers.generator.rollout import RolloutGenerator
from schemas.rollout import RolloutRequested, SamplingParams

torch.set_num_threads(1)

REQUEST = RolloutRequested(
    group_id="g-1",
    task_id="t-1",
    group_size=3,
    prompt='def add(a: int, b: int) -> int:\n    """Return a + b."""\n',
    entry_point="add",
    policy_version=0,
    sampling=SamplingParams(temperature=1.0, top_p=0.95, max_tokens=16),
)


@pytest.fixture(scope="module")
def generator() -> RolloutGenerator:
    return RolloutGenerator(HFBackend(load_model("tiny"), batch_size=2), seed=3)


def test_a_group_yields_one_event_per_sample_with_its_behaviour(generator: RolloutGenerator) -> None:
    events = generator.generate(REQUEST)
    assert [e.sample_id for e in events] == ["g-1/0", "g-1/1", "g-1/2"]
    assert [e.sample_index for e in events] == [0, 1, 2]
    for event in events:
        assert event.group_id == "g-1" and event.task_id == "t-1" and event.model == "tiny"
        assert event.policy_version == 0 and event.sampling == REQUEST.sampling
        assert event.prompt_text == REQUEST.prompt  # tiny has no chat template: completion style
        assert len(event.behaviour_logprobs) == len(event.completion_token_ids) > 0
        assert event.code.startswith(REQUEST.prompt) and event.extraction
        assert event.prompt_token_ids == tuple(generator.backend.encode(event.prompt_text))


def test_a_redelivered_request_yields_the_same_events(generator: RolloutGenerator) -> None:
    first = generator.generate(REQUEST)
    again = generator.generate(REQUEST)
    assert [e.event_id() for e in first] == [e.event_id() for e in again]
    assert [e.completion_token_ids for e in first] == [e.completion_token_ids for e in again]
    assert len({e.completion_token_ids for e in first}) > 1  # samples of one group differ


def test_regenerating_some_indices_matches_the_whole_group(generator: RolloutGenerator) -> None:
    whole = generator.generate(REQUEST)
    tail = generator.generate(REQUEST, indices=[2])
    assert tail[0].sample_id == "g-1/2"
    assert tail[0].completion_token_ids == whole[2].completion_token_ids
