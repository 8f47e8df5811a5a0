"""The one generation interface every policy backend implements.

``generate(prompts, sampling, seeds=None)`` takes fully rendered prompt texts (see
:func:`producers.generator.prompting.build_prompt`) or exact token ids (:class:`TokenPrompt`) and a
:class:`schemas.rollout.SamplingParams`, and returns one :class:`Completion` per prompt, in order. The
sampling semantics (temperature, top-p, max tokens, stop strings, what the recorded log-probs mean) are
written down once, in :mod:`producers.generator.sampling`, and are the same for every backend.

Seeds: sample ``i`` uses ``seeds[i]`` when given, else a seed derived from ``sampling.seed`` and ``i``,
else one drawn from the backend's own generator (itself seeded from the configuration). The HF backend
is then deterministic; vLLM is deterministic for a fixed batch on a fixed GPU.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from schemas.rollout import SamplingParams

FinishReason = Literal["stop", "length"]


@dataclass(frozen=True)
class TokenPrompt:
    """A prompt given as token ids: a later turn of an episode, whose prompt is the conversation so far
    exactly as the policy saw and generated it (decoded text would not re-tokenize to the same ids)."""

    text: str
    token_ids: tuple[int, ...]


#: a rendered prompt text (tokenized by the backend) or exact token ids
Prompt = str | TokenPrompt


@dataclass(frozen=True)
class Completion:
    """One sampled continuation and the exact behaviour that produced it."""

    prompt_text: str
    prompt_token_ids: tuple[int, ...]
    #: every sampled token, including an end-of-sequence token and the one that completed a stop string
    token_ids: tuple[int, ...]
    #: log-prob of each sampled token under the processed distribution it was drawn from
    logprobs: tuple[float, ...]
    #: decoded completion, cut before a stop string, without special tokens
    text: str
    finish_reason: FinishReason
    #: the end-of-sequence token id or the stop string that ended it (``None`` for ``length``)
    stop_reason: int | str | None
    policy_version: int
    seed: int
    #: wall time from the start of the batch until this sample finished
    duration_s: float
    extra: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class BatchStats:
    """What the last ``generate`` call did, for progress and throughput metrics."""

    prompts: int
    prompt_tokens: int
    completion_tokens: int
    duration_s: float

    @property
    def tokens_per_s(self) -> float:
        return self.completion_tokens / self.duration_s if self.duration_s > 0 else 0.0


@runtime_checkable
class GenerationBackend(Protocol):
    """What the generator worker needs from a policy backend."""

    @property
    def model_name(self) -> str: ...

    @property
    def policy_version(self) -> int: ...

    @property
    def last_stats(self) -> BatchStats | None: ...

    @property
    def tokenizer(self) -> Any:
        """The model's transformers tokenizer (prompt rendering uses its chat template)."""
        ...

    def generate(
        self,
        prompts: Sequence[Prompt],
        sampling: SamplingParams,
        seeds: Sequence[int] | None = None,
        until: Callable[[str], int | None] | None = None,
    ) -> list[Completion]:
        """``until``: a rule that says where the program in a completion's text ends (see
        :func:`producers.generator.prompting.code_end`); a completion stops there."""
        ...

    def encode(self, text: str) -> list[int]: ...

    @property
    def eos_token_ids(self) -> tuple[int, ...]:
        """The ids that end a completion (what a later turn's template must not close twice)."""
        ...

    def load_weights_file(self, path: Path, version: int) -> None:
        """Replace the policy's weights with those of a verified safetensors file; the next
        ``generate`` call uses them and stamps ``version``. Never called during ``generate``."""
        ...
