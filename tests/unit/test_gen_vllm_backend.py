"""The vLLM backend's bookkeeping on CPU, against a fake engine shaped like ``vllm.LLM``.

The fake samples from the tiny model with our own sampling rules and answers the way vLLM does: one
``RequestOutput`` per request, per-position log-prob maps that also hold the top-ranked token when the
sampled one is not it, ``stop_reason`` None when the end-of-sequence token ended a sample, weight updates
through ``collective_rpc``. What it checks is ours: which parameters each request gets, which log-prob is
recorded for which token, the version stamped after an update, and refusals of malformed answers.
The same backend on vLLM itself, on a GPU, is ``tests/gpu`` (``bash scripts/gpu-check.sh``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import torch
from safetensors.torch import save_file

from producers.generator.interface import GenerationBackend
from producers.generator.models import PolicyModel, load_model
from producers.generator.sampling import (
    FUNCTION_END,
    find_stop,
    processed_logprobs,
    sample_next,
    teacher_forced_logprobs,
)
from producers.generator.vllm_backend import (
    SEED_RANGE,
    VLLMBackend,
    WeightUpdateExtension,
    completion_from_output,
    request_params,
)
from producers.generator.weights import apply_state_dict, read_safetensors, write_safetensors
from schemas.errors import InfraError
from schemas.rollout import SamplingParams

torch.set_num_threads(1)

PROMPTS = [
    "def add(a, b):\n",
    'def is_palindrome(text: str) -> bool:\n    """Check whether text reads the same backwards."""\n',
    "x = 1\n",
]


@dataclass(frozen=True)
class FakeParams:
    """Stands in for ``vllm.SamplingParams`` (same keyword names)."""

    temperature: float
    top_p: float
    max_tokens: int
    stop: list[str] | None
    seed: int
    logprobs: int
    skip_special_tokens: bool


@dataclass
class FakeLLM:
    """Samples from a torch model like vLLM's engine answers; records what it was asked."""

    policy: PolicyModel
    reset_ok: bool = True
    calls: list[tuple[str, Any]] = field(default_factory=list)
    #: positions whose map held a higher-ranked token besides the sampled one
    ranked_above: int = 0

    @torch.no_grad()
    def generate(
        self, prompts: Sequence[dict[str, list[int]]], sampling_params: Any = None, *, use_tqdm: bool = True
    ) -> list[Any]:
        assert not use_tqdm
        assert isinstance(sampling_params, list) and len(sampling_params) == len(prompts)
        self.calls.append(("generate", list(sampling_params)))
        pairs = zip(prompts, sampling_params, strict=True)
        return [self._one(i, p["prompt_token_ids"], sp) for i, (p, sp) in enumerate(pairs)]

    def _one(self, index: int, prompt: list[int], sp: FakeParams) -> Any:
        generator = torch.Generator().manual_seed(sp.seed)
        ids, tokens, steps = list(prompt), [], []
        finish, stop_reason, text = "length", None, ""
        for _ in range(sp.max_tokens):
            logits = self.policy.model(input_ids=torch.tensor([ids])).logits[0, -1]
            logprobs = processed_logprobs(logits[None], sp.temperature, sp.top_p)
            token = int(sample_next(logprobs, sp.temperature, [generator])[0])
            top = int(logprobs[0].argmax())
            step = {token: SimpleNamespace(logprob=float(logprobs[0, token]), rank=None)}
            if top != token:  # vLLM's map then also names the top-ranked token
                step[top] = SimpleNamespace(logprob=float(logprobs[0, top]), rank=1)
                self.ranked_above += 1
            ids.append(token)
            tokens.append(token)
            steps.append(step)
            text = self.policy.tokenizer.decode(tokens, skip_special_tokens=True)
            if token in self.policy.eos_token_ids:
                finish = "stop"
                break
            hit = find_stop(text, sp.stop or [])
            if hit is not None:
                finish, stop_reason, text = "stop", hit[1], text[: hit[0]]
                break
        sample = SimpleNamespace(
            token_ids=tokens, logprobs=steps, text=text, finish_reason=finish, stop_reason=stop_reason
        )
        return SimpleNamespace(request_id=str(index), outputs=[sample])

    def collective_rpc(
        self,
        method: str,
        timeout: float | None = None,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> list[Any]:
        self.calls.append(("collective_rpc", (method, args)))
        assert method == "load_weights_file" and timeout is not None
        state = read_safetensors(Path(args[0]))
        apply_state_dict(self.policy.model, state)
        return [len(state)]

    def reset_prefix_cache(self) -> bool:
        self.calls.append(("reset_prefix_cache", None))
        return self.reset_ok


@pytest.fixture
def tiny() -> PolicyModel:
    return load_model("tiny", seed=0)


@pytest.fixture
def engine(tiny: PolicyModel) -> FakeLLM:
    return FakeLLM(tiny)


@pytest.fixture
def backend(engine: FakeLLM, tiny: PolicyModel) -> VLLMBackend:
    return VLLMBackend(engine, tiny.tokenizer, name="tiny", make_params=FakeParams)


def _worst_gap(model: Any, completions: Sequence[Any], sampling: SamplingParams) -> float:
    worst = 0.0
    for c in completions:
        recomputed = teacher_forced_logprobs(
            model, c.prompt_token_ids, c.token_ids, temperature=sampling.temperature, top_p=sampling.top_p
        )
        worst = max(worst, *(abs(a - b) for a, b in zip(recomputed, c.logprobs, strict=True)))
    return worst


def test_the_backend_implements_the_generation_interface(backend: VLLMBackend) -> None:
    assert isinstance(backend, GenerationBackend)


@pytest.mark.parametrize(
    "sampling",
    [
        SamplingParams(temperature=0.7, top_p=0.9, max_tokens=16, seed=2),
        SamplingParams(temperature=1.3, top_p=0.5, max_tokens=16, seed=3),
        SamplingParams(temperature=0.0, max_tokens=10),
    ],
    ids=["t0.7-p0.9", "t1.3-p0.5", "greedy"],
)
def test_recorded_logprobs_are_the_sampled_tokens_under_the_distribution_they_were_drawn_from(
    backend: VLLMBackend, engine: FakeLLM, tiny: PolicyModel, sampling: SamplingParams
) -> None:
    completions = backend.generate(PROMPTS * 2, sampling)
    assert [c.prompt_text for c in completions] == PROMPTS * 2
    for c in completions:
        assert len(c.logprobs) == len(c.token_ids) > 0
        assert c.prompt_token_ids == tuple(tiny.tokenizer.encode(c.prompt_text, add_special_tokens=True))
    assert _worst_gap(tiny.model, completions, sampling) < 1e-5
    if sampling.temperature > 0:
        assert engine.ranked_above > 0, "no position named a higher-ranked token: the choice went untested"
    stats = backend.last_stats
    assert stats is not None and stats.prompts == 6
    assert stats.completion_tokens == sum(len(c.token_ids) for c in completions)


def test_each_sample_is_its_own_request_with_its_own_seed_and_only_the_sampled_logprob() -> None:
    sampling = SamplingParams(temperature=0.8, top_p=0.95, max_tokens=7, stop=("\n\n",), seed=5)
    params = request_params(sampling, [1, 2**62 + 3])
    assert params == [
        {
            "temperature": 0.8,
            "top_p": 0.95,
            "max_tokens": 7,
            "stop": ["\n\n"],
            "seed": 1,
            "logprobs": 0,
            "skip_special_tokens": True,
        },
        {**params[0], "seed": (2**62 + 3) % SEED_RANGE},
    ]
    greedy = request_params(SamplingParams(temperature=0.0, top_p=0.5, max_tokens=3), [9])[0]
    # greedy: the point mass carries no information, so the log-prob is the unprocessed one (no top-p)
    assert (greedy["temperature"], greedy["top_p"], greedy["stop"]) == (0.0, 1.0, None)


def test_the_same_request_regenerates_the_same_samples(backend: VLLMBackend, engine: FakeLLM) -> None:
    sampling = SamplingParams(temperature=1.0, max_tokens=12, seed=11)
    first = backend.generate(PROMPTS, sampling)
    second = backend.generate(PROMPTS, sampling)
    assert [c.token_ids for c in first] == [c.token_ids for c in second]
    assert len({c.seed for c in first}) == len(PROMPTS)
    unseeded = backend.generate(PROMPTS, SamplingParams(temperature=1.0, max_tokens=4))
    again = backend.generate(PROMPTS, SamplingParams(temperature=1.0, max_tokens=4))
    assert {c.seed for c in unseeded}.isdisjoint(c.seed for c in again)  # each call draws new seeds
    assert all(0 <= p.seed < SEED_RANGE for _, ps in engine.calls for p in ps)


def test_stop_strings_cut_the_text_and_an_end_of_sequence_token_is_the_stop_reason(
    backend: VLLMBackend, tiny: PolicyModel
) -> None:
    eos = tiny.eos_token_ids[0]
    ended = SimpleNamespace(
        token_ids=[5, eos],
        logprobs=[{5: SimpleNamespace(logprob=-0.5)}, {eos: SimpleNamespace(logprob=-0.1)}],
        text="ab",
        finish_reason="stop",
        stop_reason=None,
    )
    completion = completion_from_output(
        SimpleNamespace(request_id="r", outputs=[ended]),
        prompt_text="p",
        prompt_token_ids=[1],
        seed=3,
        policy_version=4,
        duration_s=0.1,
    )
    assert (completion.finish_reason, completion.stop_reason, completion.token_ids) == ("stop", eos, (5, eos))
    assert completion.logprobs == (-0.5, -0.1) and completion.policy_version == 4
    # a real stop string, through the fake engine
    sampling = SamplingParams(temperature=1.0, max_tokens=48, stop=("e",), seed=1)
    stopped = [c for c in backend.generate(PROMPTS * 3, sampling) if c.stop_reason == "e"]
    assert stopped and all("e" not in c.text for c in stopped)


def test_a_weight_update_reaches_the_next_request_after_the_prefix_cache_is_reset(
    backend: VLLMBackend, engine: FakeLLM, tiny: PolicyModel, tmp_path: Path
) -> None:
    greedy = SamplingParams(temperature=0.0, max_tokens=8)
    before = backend.generate(PROMPTS, greedy)
    assert {c.policy_version for c in before} == {0}
    old = {k: v.clone() for k, v in tiny.model.state_dict().items()}
    noisy = load_model("tiny", seed=0)
    with torch.no_grad():
        for p in noisy.model.parameters():
            p.add_(torch.randn(p.shape, generator=torch.Generator().manual_seed(1)) * 0.5)
    path = tmp_path / "v3.safetensors"
    write_safetensors(noisy.model, path)

    backend.load_weights_file(path, version=3)
    assert [name for name, _ in engine.calls[-2:]] == ["collective_rpc", "reset_prefix_cache"]
    assert engine.calls[-2][1] == ("load_weights_file", (str(path),))
    after = backend.generate(PROMPTS, greedy)
    assert {c.policy_version for c in after} == {3}
    assert _worst_gap(noisy.model, after, greedy) < 1e-5  # the new weights produced them
    apply_state_dict(tiny.model, old)
    assert _worst_gap(tiny.model, after, greedy) > 1e-3  # not the old ones


def test_a_prefix_cache_that_is_not_reset_fails_the_update_and_keeps_the_version(
    backend: VLLMBackend, engine: FakeLLM, tiny: PolicyModel, tmp_path: Path
) -> None:
    path = tmp_path / "v1.safetensors"
    write_safetensors(tiny.model, path)
    engine.reset_ok = False
    with pytest.raises(InfraError, match="prefix cache"):
        backend.load_weights_file(path, version=1)
    assert backend.policy_version == 0


def _lp(value: float) -> Any:
    return SimpleNamespace(logprob=value, rank=None)


def _output(**sample: Any) -> Any:
    base: dict[str, Any] = {
        "token_ids": [4, 7],
        "logprobs": [{4: _lp(-1.0)}, {7: _lp(-2.0)}],
        "text": "x",
        "finish_reason": "length",
        "stop_reason": None,
    }
    return SimpleNamespace(request_id="r7", outputs=[SimpleNamespace(**{**base, **sample})])


@pytest.mark.parametrize(
    ("output", "message"),
    [
        (_output(logprobs=None), "no log-probs"),
        (_output(logprobs=[{4: _lp(-1.0)}]), "1 log-prob positions for 2 tokens"),
        (_output(logprobs=[{4: _lp(-1.0)}, {8: _lp(-0.1)}]), "token 7 at position 1"),
        (_output(logprobs=[{4: _lp(float("-inf"))}, {7: _lp(-2.0)}]), "position 0"),
        (_output(finish_reason="abort"), "'abort'"),
        (SimpleNamespace(request_id="r7", outputs=[]), "0 samples"),
    ],
    ids=["no-logprobs", "short", "sampled-token-missing", "non-finite", "aborted", "no-sample"],
)
def test_a_malformed_answer_is_refused_with_what_is_wrong(output: Any, message: str) -> None:
    with pytest.raises(InfraError, match=message) as info:
        completion_from_output(
            output, prompt_text="p", prompt_token_ids=[1], seed=0, policy_version=0, duration_s=0.0
        )
    assert "r7" in str(info.value)


def test_engine_failures_are_translated_and_counts_must_match(backend: VLLMBackend, engine: FakeLLM) -> None:
    def broken(*args: Any, **kwargs: Any) -> list[Any]:
        raise RuntimeError("EngineCore died")

    engine.generate = broken  # type: ignore[method-assign]
    with pytest.raises(InfraError, match="vLLM failed to generate 3 samples: RuntimeError: EngineCore died"):
        backend.generate(PROMPTS, SamplingParams(max_tokens=2))
    engine.generate = lambda *a, **k: []  # type: ignore[method-assign]
    with pytest.raises(InfraError, match="0 results for 3 prompts"):
        backend.generate(PROMPTS, SamplingParams(max_tokens=2))
    assert backend.generate([], SamplingParams(max_tokens=2)) == []


class _Worker(WeightUpdateExtension):
    def __init__(self) -> None:
        self.loaded: dict[str, torch.Tensor] = {}

    def reload_weights(self, weights_iterator: Any = None) -> None:
        self.loaded = dict(weights_iterator)


def test_the_worker_extension_reloads_the_verified_file_in_place(tmp_path: Path) -> None:
    state = {"model.embed_tokens.weight": torch.randn(4, 3), "lm_head.weight": torch.randn(4, 3)}
    save_file(state, str(tmp_path / "w.safetensors"))
    worker = _Worker()
    assert worker.load_weights_file(str(tmp_path / "w.safetensors")) == 2
    assert set(worker.loaded) == set(state)
    assert all(torch.equal(worker.loaded[k], v) for k, v in state.items())
    # vLLM refuses an extension that shares any attribute with its worker: ours adds this one method only
    assert [a for a in vars(WeightUpdateExtension) if not a.startswith("__")] == ["load_weights_file"]


def test_an_until_rule_cuts_each_sample_where_the_hf_backend_would_have_stopped(
    backend: VLLMBackend, tiny: PolicyModel
) -> None:
    def first_line(text: str) -> int | None:
        return text.index("\n") + 1 if "\n" in text else None

    sampling = SamplingParams(temperature=1.0, max_tokens=30, seed=8)
    free = backend.generate(PROMPTS, sampling)
    cut = backend.generate(PROMPTS, sampling, until=first_line)
    for f, c in zip(free, cut, strict=True):
        assert c.token_ids == f.token_ids[: len(c.token_ids)] and c.logprobs == f.logprobs[: len(c.logprobs)]
        if "\n" in f.text:
            assert c.stop_reason == FUNCTION_END and c.text == f.text[: f.text.index("\n") + 1]
    assert any(c.stop_reason == FUNCTION_END for c in cut)
