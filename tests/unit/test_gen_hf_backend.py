"""The HF backend on the tiny model: exact behaviour log-probs, determinism, stopping, weight swaps."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from producers.generator.hf_backend import HFBackend
from producers.generator.models import PolicyModel, load_model
from producers.generator.sampling import FUNCTION_END, cut_at_end, teacher_forced_logprobs
from producers.generator.weights import verified_checkpoint, write_safetensors
from schemas.errors import DependencyError, InputError
from schemas.rollout import SamplingParams

torch.set_num_threads(1)

PROMPTS = [
    "def add(a, b):\n",
    'def is_palindrome(text: str) -> bool:\n    """Check whether text reads the same backwards."""\n',
    "x = 1\n",
]


@pytest.fixture
def tiny() -> PolicyModel:
    return load_model("tiny", seed=0)


@pytest.mark.parametrize(
    "sampling",
    [
        SamplingParams(temperature=1.0, max_tokens=24, seed=1),
        SamplingParams(temperature=0.7, top_p=0.9, max_tokens=24, seed=2),
        SamplingParams(temperature=1.3, top_p=0.5, max_tokens=24, seed=3),
        SamplingParams(temperature=0.0, max_tokens=12),
    ],
    ids=["t1", "t0.7-p0.9", "t1.3-p0.5", "greedy"],
)
def test_behaviour_logprobs_equal_a_teacher_forced_recomputation(
    tiny: PolicyModel, sampling: SamplingParams
) -> None:
    backend = HFBackend(tiny, batch_size=3)
    completions = backend.generate(PROMPTS * 2, sampling)  # prompts of different lengths: left padding
    assert len(completions) == 6
    for completion in completions:
        assert len(completion.logprobs) == len(completion.token_ids) > 0
        recomputed = teacher_forced_logprobs(
            tiny.model,
            completion.prompt_token_ids,
            completion.token_ids,
            temperature=sampling.temperature,
            top_p=sampling.top_p,
        )
        worst = max(abs(a - b) for a, b in zip(recomputed, completion.logprobs, strict=True))
        assert worst < 1e-4, f"behaviour log-probs differ from the recomputation by {worst}"
        assert all(lp <= 0.0 for lp in completion.logprobs)


def test_same_seed_same_tokens_whatever_shares_the_batch(tiny: PolicyModel) -> None:
    sampling = SamplingParams(temperature=1.0, max_tokens=16)
    backend = HFBackend(tiny, batch_size=8)
    together = backend.generate(PROMPTS, sampling, seeds=[11, 12, 13])
    alone = backend.generate(PROMPTS[1:2], sampling, seeds=[12])
    assert alone[0].token_ids == together[1].token_ids
    again = backend.generate(PROMPTS, sampling, seeds=[11, 12, 13])
    assert [c.token_ids for c in again] == [c.token_ids for c in together]
    other = backend.generate(PROMPTS, sampling, seeds=[21, 22, 23])
    assert [c.token_ids for c in other] != [c.token_ids for c in together]


def test_request_seed_makes_a_fresh_backend_repeat_itself(tiny: PolicyModel) -> None:
    sampling = SamplingParams(temperature=1.0, max_tokens=10, seed=5)
    first = HFBackend(tiny, seed=1).generate(PROMPTS, sampling)
    second = HFBackend(tiny, seed=2).generate(PROMPTS, sampling)
    assert [c.token_ids for c in first] == [c.token_ids for c in second]


def test_max_tokens_ends_with_length(tiny: PolicyModel) -> None:
    (completion,) = HFBackend(tiny).generate(PROMPTS[:1], SamplingParams(max_tokens=7, seed=0))
    assert completion.finish_reason == "length" and len(completion.token_ids) == 7
    assert completion.stop_reason is None


def test_end_of_sequence_stops_and_is_kept_in_the_tokens(tiny: PolicyModel) -> None:
    greedy = SamplingParams(temperature=0.0, max_tokens=5)
    first_token = HFBackend(tiny).generate(PROMPTS[:1], greedy)[0].token_ids[0]
    tiny.eos_token_ids = (first_token,)
    (completion,) = HFBackend(tiny).generate(PROMPTS[:1], greedy)
    assert completion.token_ids == (first_token,)
    assert completion.finish_reason == "stop" and completion.stop_reason == first_token


def test_stop_string_cuts_the_text_but_keeps_the_sampled_tokens(tiny: PolicyModel) -> None:
    backend = HFBackend(tiny)
    free = backend.generate(PROMPTS[:1], SamplingParams(max_tokens=30, seed=4))[0]
    stop = free.text[5:7]
    assert stop.strip(), "the tiny model's text should have a printable pair of characters here"
    (cut,) = backend.generate(PROMPTS[:1], SamplingParams(max_tokens=30, seed=4, stop=(stop,)))
    assert cut.finish_reason == "stop" and cut.stop_reason == stop
    assert cut.text == free.text[: free.text.find(stop)]
    assert cut.token_ids == free.token_ids[: len(cut.token_ids)]
    assert len(cut.logprobs) == len(cut.token_ids) < len(free.token_ids)


def _perturbed_checkpoint(model: torch.nn.Module, path: Path) -> str:
    with torch.no_grad():
        saved = {n: p.detach().clone() for n, p in model.named_parameters()}
        for p in model.parameters():
            p.add_(torch.randn(p.shape, generator=torch.Generator().manual_seed(7)) * 0.5)
        digest = write_safetensors(model, path)
        for n, p in model.named_parameters():
            p.copy_(saved[n])
    return digest


def test_loading_new_weights_changes_outputs_and_the_version_stamp(tiny: PolicyModel, tmp_path: Path) -> None:
    sampling = SamplingParams(temperature=1.0, max_tokens=12, seed=9)
    backend = HFBackend(tiny, policy_version=0)
    before = backend.generate(PROMPTS, sampling)
    digest = _perturbed_checkpoint(tiny.model, tmp_path / "v1.safetensors")
    path = verified_checkpoint((tmp_path / "v1.safetensors").as_uri(), digest)
    backend.load_weights_file(path, version=1)
    after = backend.generate(PROMPTS, sampling)
    assert {c.policy_version for c in before} == {0} and {c.policy_version for c in after} == {1}
    assert [c.token_ids for c in after] != [c.token_ids for c in before]
    for completion in after:  # the log-probs are those of the new weights
        recomputed = teacher_forced_logprobs(
            tiny.model, completion.prompt_token_ids, completion.token_ids, temperature=1.0, top_p=1.0
        )
        assert max(abs(a - b) for a, b in zip(recomputed, completion.logprobs, strict=True)) < 1e-4


def test_a_checkpoint_with_the_wrong_sha256_is_refused(tiny: PolicyModel, tmp_path: Path) -> None:
    digest = write_safetensors(tiny.model, tmp_path / "v1.safetensors")
    wrong = ("0" if digest[0] != "0" else "1") + digest[1:]
    with pytest.raises(DependencyError, match="sha256"):
        verified_checkpoint(str(tmp_path / "v1.safetensors"), wrong)
    with pytest.raises(DependencyError, match="does not exist"):
        verified_checkpoint((tmp_path / "nope.safetensors").as_uri(), digest)
    with pytest.raises(InputError, match="scheme"):
        verified_checkpoint("s3://bucket/v1.safetensors", digest)


def test_a_checkpoint_of_another_architecture_is_refused(tiny: PolicyModel, tmp_path: Path) -> None:
    from safetensors.torch import save_file

    save_file({"model.embed_tokens.weight": torch.zeros(3, 3)}, str(tmp_path / "bad.safetensors"))
    with pytest.raises(InputError, match="lacks"):
        HFBackend(tiny).load_weights_file(tmp_path / "bad.safetensors", 1)
    save_file({"not.a.weight": torch.zeros(3)}, str(tmp_path / "odd.safetensors"))
    with pytest.raises(InputError, match="does not"):
        HFBackend(tiny).load_weights_file(tmp_path / "odd.safetensors", 1)


def test_a_group_shares_one_prefill_and_draws_what_each_sample_would_alone(tiny: PolicyModel) -> None:
    sampling = SamplingParams(temperature=1.0, max_tokens=16)
    backend = HFBackend(tiny, batch_size=8)
    prompts = [PROMPTS[1]] * 3 + [PROMPTS[0]] * 2  # two groups in one batch
    seeds = [31, 32, 33, 34, 35]
    together = backend.generate(prompts, sampling, seeds=seeds)
    for prompt, seed, completion in zip(prompts, seeds, together, strict=True):
        (alone,) = backend.generate([prompt], sampling, seeds=[seed])
        assert alone.token_ids == completion.token_ids
        assert max(abs(a - b) for a, b in zip(alone.logprobs, completion.logprobs, strict=True)) < 1e-4
    assert len({c.token_ids for c in together[:3]}) == 3  # one prefill, still three different samples


def _first_line(text: str) -> int | None:
    return text.index("\n") + 1 if "\n" in text else None


def test_an_until_rule_ends_a_sample_where_its_program_ends(tiny: PolicyModel) -> None:
    backend = HFBackend(tiny)
    sampling = SamplingParams(temperature=1.0, max_tokens=40, seed=6)
    free = backend.generate(PROMPTS, sampling)
    cut = backend.generate(PROMPTS, sampling, until=_first_line)
    ended = 0
    for f, c in zip(free, cut, strict=True):
        # the same draws up to the end (log-probs to float noise: rows leave the batch at other steps)
        assert f.token_ids[: len(c.token_ids)] == c.token_ids
        assert c.logprobs == pytest.approx(f.logprobs[: len(c.logprobs)], abs=1e-4)
        if c.stop_reason == FUNCTION_END:
            ended += 1
            assert c.finish_reason == "stop" and c.text == f.text[: f.text.index("\n") + 1]
        else:
            assert (c.token_ids, c.text, c.finish_reason) == (f.token_ids, f.text, f.finish_reason)
        # what a backend that can only cut afterwards (vLLM) makes of the free sample is the same
        after = cut_at_end(f, tiny.tokenizer, _first_line)
        assert (after.token_ids, after.text, after.finish_reason, after.stop_reason) == (
            c.token_ids,
            c.text,
            c.finish_reason,
            c.stop_reason,
        )
        assert len(after.logprobs) == len(after.token_ids)
    assert ended >= 1, "the tiny model should write a newline within 40 tokens"
