"""The sampling semantics shared by every backend, as plain tensor functions.

One next-token distribution is derived from the model's logits like this (the same order and rules as
vLLM's sampler, so the HF and vLLM backends record comparable behaviour log-probs):

1. **temperature** ``T > 0``: logits are divided by ``T``.
2. **top-p** ``p < 1``: tokens are sorted by probability; the least likely tokens are removed while their
   cumulative probability stays ``<= 1 - p`` (the most likely token always survives).
3. The token is drawn from ``softmax`` of what is left, and its **behaviour log-prob** is the
   ``log_softmax`` of that same processed distribution - exactly what the learner's importance ratio
   needs.

``T == 0`` means greedy decoding: the arg-max token is taken, and (as vLLM does) the recorded log-prob is
the one of the unprocessed distribution (``T = 1``, no top-p), since a point mass carries no
information.

Generation stops at the model's end-of-sequence token (kept in the token ids and log-probs: the learner
must learn to stop), at the first occurrence of any stop string (the completion text is cut before it;
the token ids keep every sampled token, including the one that completed the stop string), at the end
of the program when the caller passes an ``until`` rule (checked each time a line is complete; the text
is cut where the rule says, the tokens are kept, ``stop_reason`` is :data:`FUNCTION_END`), or after
``max_tokens`` tokens (``finish_reason == "length"``). Stopping early never changes what was sampled
before: a completion cut by a rule is exactly the prefix the same seed would have drawn without it.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Sequence
from typing import Any

import torch

from producers.generator.interface import Completion

#: the stop reason of a completion ended by an ``until`` rule (the program it writes is complete)
FUNCTION_END = "<end of program>"

#: below this a temperature counts as greedy decoding
GREEDY_EPS = 1e-5


def is_greedy(temperature: float) -> bool:
    return temperature < GREEDY_EPS


def processed_logprobs(logits: torch.Tensor, temperature: float, top_p: float) -> torch.Tensor:
    """Log-probabilities of the distribution actually sampled from (``[..., vocab]``, float32).

    Removed tokens get ``-inf``. Greedy decoding (``temperature == 0``) returns the plain log-softmax.
    """
    logits = logits.float()
    if is_greedy(temperature):
        return torch.log_softmax(logits, dim=-1)
    if temperature != 1.0:
        logits = logits / temperature
    if top_p < 1.0:
        logits = logits.masked_fill(_top_p_removed(logits, top_p), float("-inf"))
    return torch.log_softmax(logits, dim=-1)


#: candidates examined before falling back to sorting the whole vocabulary
_TOP_P_CANDIDATES = 1024


def _top_p_removed(logits: torch.Tensor, top_p: float) -> torch.Tensor:
    """Which tokens top-p removes: in descending order of probability, a token stays while the mass of
    the tokens before it is ``< p`` (the same set as removing, in ascending order, tokens whose
    cumulative mass is ``<= 1 - p``). A peaked distribution reaches ``p`` within the first candidates,
    so a partial top-k replaces a full sort of the vocabulary (a sixth of a decoding step otherwise)."""
    probs = logits.softmax(dim=-1)
    vocab = probs.shape[-1]
    k = min(vocab, _TOP_P_CANDIDATES)
    values, order = probs.topk(k, dim=-1)
    if k < vocab and not bool((values.sum(dim=-1) >= top_p).all()):
        values, order = probs.sort(dim=-1, descending=True)
    mass_before = values.cumsum(dim=-1) - values
    keep = mass_before < top_p
    keep[..., 0] = True
    removed = torch.ones_like(probs, dtype=torch.bool)
    return removed.scatter(-1, order, ~keep)


def sample_next(
    logprobs: torch.Tensor, temperature: float, generators: Sequence[torch.Generator]
) -> torch.Tensor:
    """One token per row of ``logprobs`` (``[batch, vocab]``); row ``i`` draws from ``generators[i]``,
    so a sample's tokens depend on its own seed only, never on what else shares the batch."""
    if is_greedy(temperature):
        return logprobs.argmax(dim=-1)
    # inverse CDF with one uniform per row: one batched cumsum instead of a multinomial call per row;
    # a zero-probability token never has the first cdf value above u, so it is never drawn
    cdf = logprobs.exp().cumsum(dim=-1)
    uniforms = torch.cat([torch.rand(1, generator=g, dtype=torch.float64) for g in generators])
    targets = (uniforms.to(cdf.device) * cdf[:, -1].double()).to(cdf.dtype)[:, None]
    picks = torch.searchsorted(cdf, targets, right=True)[:, 0]
    overflow = picks >= cdf.shape[-1]  # u rounded up to the total mass
    if bool(overflow.any()):
        picks = torch.where(overflow, logprobs.argmax(dim=-1), picks)
    return picks


def derive_seed(*parts: object) -> int:
    """A 63-bit seed from any values (stable across processes, unlike ``hash``)."""
    digest = hashlib.sha256("|".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") & ((1 << 63) - 1)


def find_stop(text: str, stops: Sequence[str]) -> tuple[int, str] | None:
    """Position and value of the earliest stop string in ``text``."""
    best: tuple[int, str] | None = None
    for stop in stops:
        if not stop:
            continue
        at = text.find(stop)
        if at >= 0 and (best is None or at < best[0]):
            best = (at, stop)
    return best


#: where a program ends in a completion's text (the index to cut at), or None while it may go on
UntilRule = Callable[[str], int | None]


def program_ended(tokenizer: Any, tokens: Sequence[int], until: UntilRule) -> bool:
    """Whether ``until`` ends a completion whose last token is ``tokens[-1]``: asked only when that
    token completes a line, since a rule judges whole lines."""
    if not tokens or "\n" not in tokenizer.decode(list(tokens[-1:])):
        return False
    return until(tokenizer.decode(list(tokens), skip_special_tokens=True)) is not None


def cut_at_end(completion: Completion, tokenizer: Any, until: UntilRule) -> Completion:
    """``completion`` as if generation had stopped where ``until`` ends it (for a backend that can only
    apply the rule afterwards): the tokens and log-probs up to the token that completed the program's
    last line, the text cut where the rule says. Unchanged when the rule never ends it."""
    tokens = completion.token_ids
    for end in range(1, len(tokens) + 1):
        if program_ended(tokenizer, tokens[:end], until):
            text = tokenizer.decode(list(tokens[:end]), skip_special_tokens=True)
            return dataclasses.replace(
                completion,
                token_ids=tokens[:end],
                logprobs=completion.logprobs[:end],
                text=text[: until(text)],
                finish_reason="stop",
                stop_reason=FUNCTION_END,
            )
    return completion


@torch.no_grad()
def teacher_forced_logprobs(
    model: torch.nn.Module,
    prompt_token_ids: Sequence[int],
    completion_token_ids: Sequence[int],
    *,
    temperature: float,
    top_p: float,
) -> list[float]:
    """Recompute the behaviour log-probs of a completion with one forward pass over prompt + completion
    (no cache, no padding), under the same temperature/top-p processing. Used to check backends and by
    audits; the learner computes its own under gradient."""
    if not completion_token_ids:
        return []
    device = next(model.parameters()).device
    ids = torch.tensor([list(prompt_token_ids) + list(completion_token_ids)], device=device)
    logits = model(input_ids=ids, use_cache=False).logits[0]
    start = len(prompt_token_ids) - 1
    window = logits[start : start + len(completion_token_ids)]
    logprobs = processed_logprobs(window, temperature, top_p)
    targets = torch.tensor(list(completion_token_ids), device=device)
    return logprobs.gather(-1, targets[:, None])[:, 0].tolist()
