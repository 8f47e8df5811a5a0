"""The HF transformers policy backend: our own batched sampling loop over a KV cache.

Why not ``model.generate``: the learner's importance ratio needs the log-prob of each sampled token under
the exact distribution it was drawn from. Sampling here applies :mod:`producers.generator.sampling`
itself, so the recorded log-prob is read from the very tensor the token was drawn from. Prompts are
left-padded into one batch; rows that finish are dropped from the batch (and the cache) so the others
stop paying for them; each row draws from its own seeded generator, so results do not depend on which
other prompts share the batch.

Identical prompts (a GRPO group is ``group_size`` copies of one prompt) are prefilled once and their
key/value cache is shared by every row that starts from them: a group of 16 pays for one prompt, not 16.
An ``until`` rule (the function's end, see :func:`producers.generator.prompting.code_end`) is checked
whenever a row completes a line, and ends that row there.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from producers.generator.interface import BatchStats, Completion, FinishReason, Prompt, TokenPrompt
from producers.generator.models import PolicyModel
from producers.generator.sampling import (
    FUNCTION_END,
    UntilRule,
    derive_seed,
    find_stop,
    processed_logprobs,
    program_ended,
    sample_next,
)
from producers.generator.weights import apply_state_dict, read_safetensors
from schemas.rollout import SamplingParams


class HFBackend:
    """Generates with a :class:`PolicyModel` in this process (CPU or one GPU)."""

    def __init__(
        self,
        policy: PolicyModel,
        *,
        batch_size: int = 8,
        seed: int = 0,
        policy_version: int = 0,
        share_prefill: bool = True,
    ) -> None:
        self.policy = policy
        self.batch_size = batch_size
        #: identical prompts in a batch are prefilled once (off only to measure what that saves)
        self.share_prefill = share_prefill
        self._rng = torch.Generator().manual_seed(seed)
        self._version = policy_version
        self._last_stats: BatchStats | None = None

    @property
    def model_name(self) -> str:
        return self.policy.name

    @property
    def policy_version(self) -> int:
        return self._version

    @property
    def last_stats(self) -> BatchStats | None:
        return self._last_stats

    @property
    def tokenizer(self) -> Any:
        return self.policy.tokenizer

    @property
    def eos_token_ids(self) -> tuple[int, ...]:
        return self.policy.eos_token_ids

    def encode(self, text: str) -> list[int]:
        # Chat templates already write their special tokens; plain prompts get the model's BOS (if any).
        add_special = not self.policy.has_chat_template
        return list(self.policy.tokenizer.encode(text, add_special_tokens=add_special))

    def load_weights_file(self, path: Path, version: int) -> None:
        apply_state_dict(self.policy.model, read_safetensors(path))
        self._version = version

    def load_state_dict(self, state: dict[str, torch.Tensor], version: int) -> None:
        """Swap in weights already in memory (e.g. a learner in the same process)."""
        apply_state_dict(self.policy.model, state)
        self._version = version

    def generate(
        self,
        prompts: Sequence[Prompt],
        sampling: SamplingParams,
        seeds: Sequence[int] | None = None,
        until: UntilRule | None = None,
    ) -> list[Completion]:
        if seeds is not None and len(seeds) != len(prompts):
            raise ValueError(f"{len(seeds)} seeds for {len(prompts)} prompts")
        if seeds is None:
            if sampling.seed is not None:
                seeds = [derive_seed(sampling.seed, i) for i in range(len(prompts))]
            else:
                seeds = [int(torch.randint(0, 2**62, (1,), generator=self._rng)) for _ in prompts]
        started = time.perf_counter()
        results: list[Completion] = []
        prompt_tokens = 0
        for offset in range(0, len(prompts), self.batch_size):
            chunk = [
                p.text if isinstance(p, TokenPrompt) else p
                for p in prompts[offset : offset + self.batch_size]
            ]
            chunk_seeds = list(seeds[offset : offset + self.batch_size])
            encoded = [
                list(p.token_ids) if isinstance(p, TokenPrompt) else self.encode(p)
                for p in prompts[offset : offset + self.batch_size]
            ]
            prompt_tokens += sum(len(e) for e in encoded)
            results.extend(self._generate_batch(chunk, encoded, chunk_seeds, sampling, until))
        self._last_stats = BatchStats(
            prompts=len(prompts),
            prompt_tokens=prompt_tokens,
            completion_tokens=sum(len(c.token_ids) for c in results),
            duration_s=time.perf_counter() - started,
        )
        return results

    @torch.inference_mode()
    def _generate_batch(
        self,
        texts: list[str],
        encoded: list[list[int]],
        seeds: list[int],
        sampling: SamplingParams,
        until: UntilRule | None = None,
    ) -> list[Completion]:
        from transformers import DynamicCache

        model = self.policy.model
        device = next(model.parameters()).device
        tokenizer = self.policy.tokenizer
        eos = set(self.policy.eos_token_ids)
        stops = [s for s in sampling.stop if s]
        # a stop string can only appear within the last few tokens' text: decode a window, not everything
        stop_window = max((len(s) for s in stops), default=0) + 8
        started = time.perf_counter()

        size = len(encoded)
        # each distinct prompt is prefilled once; every row starting from it shares its cache
        keys = [tuple(ids) if self.share_prefill else (row,) for row, ids in enumerate(encoded)]
        slots: dict[tuple[int, ...], int] = {}
        source = [slots.setdefault(key, len(slots)) for key in keys]
        prefill = [encoded[keys.index(key)] for key in slots]
        width = max(len(e) for e in prefill)
        input_ids = torch.full((len(prefill), width), self.policy.pad_token_id, dtype=torch.long)
        attention = torch.zeros((len(prefill), width), dtype=torch.long)
        for row, ids in enumerate(prefill):
            input_ids[row, width - len(ids) :] = torch.tensor(ids, dtype=torch.long)
            attention[row, width - len(ids) :] = 1
        input_ids, attention = input_ids.to(device), attention.to(device)
        positions = (attention.cumsum(-1) - 1).clamp(min=0)
        generators = [torch.Generator(device="cpu").manual_seed(s) for s in seeds]

        tokens: list[list[int]] = [[] for _ in range(size)]
        logprobs: list[list[float]] = [[] for _ in range(size)]
        done: list[tuple[FinishReason, int | str | None, float] | None] = [None] * size
        active = list(range(size))  # original row index of each row still in the batch

        cache: Any = DynamicCache()
        out = model(
            input_ids=input_ids,
            attention_mask=attention,
            position_ids=positions,
            past_key_values=cache,
            use_cache=True,
            logits_to_keep=1,
        )
        logits = out.logits[:, -1, :]
        next_positions = positions[:, -1:] + 1
        if len(prefill) < size:
            expand = torch.tensor(source, device=device)
            cache.batch_select_indices(expand)
            logits, attention, next_positions = logits[expand], attention[expand], next_positions[expand]
        for step in range(sampling.max_tokens):
            step_logprobs = processed_logprobs(logits, sampling.temperature, sampling.top_p)
            picked = sample_next(step_logprobs.cpu(), sampling.temperature, [generators[r] for r in active])
            picked_lp = step_logprobs.gather(-1, picked.to(device)[:, None])[:, 0].tolist()
            keep: list[int] = []
            for slot, row in enumerate(active):
                token = int(picked[slot])
                tokens[row].append(token)
                logprobs[row].append(float(picked_lp[slot]))
                now = time.perf_counter() - started
                if token in eos:
                    done[row] = ("stop", token, now)
                elif stops and find_stop(tokenizer.decode(tokens[row][-stop_window:]), stops) is not None:
                    done[row] = ("stop", None, now)
                elif until is not None and program_ended(tokenizer, tokens[row], until):
                    done[row] = ("stop", FUNCTION_END, now)
                elif step + 1 == sampling.max_tokens:
                    done[row] = ("length", None, now)
                else:
                    keep.append(slot)
            if not keep:
                break
            if len(keep) < len(active):
                index = torch.tensor(keep, device=device)
                cache.batch_select_indices(index)
                attention = attention[index]
                next_positions = next_positions[index]
                picked = picked[keep]
                active = [active[slot] for slot in keep]
            attention = torch.cat([attention, attention.new_ones((len(active), 1))], dim=-1)
            out = model(
                input_ids=picked.to(device)[:, None],
                attention_mask=attention,
                position_ids=next_positions,
                past_key_values=cache,
                use_cache=True,
            )
            logits = out.logits[:, -1, :]
            next_positions = next_positions + 1

        completions = []
        for row in range(size):
            finish = done[row]
            assert finish is not None
            reason, stop_reason, duration = finish
            text = tokenizer.decode(tokens[row], skip_special_tokens=True)
            if reason == "stop" and stop_reason is None:
                found = find_stop(text, stops)
                if found is not None:
                    text = text[: found[0]]
                    stop_reason = found[1]
            elif stop_reason == FUNCTION_END and until is not None:
                text = text[: until(text)]
            completions.append(
                Completion(
                    prompt_text=texts[row],
                    prompt_token_ids=tuple(encoded[row]),
                    token_ids=tuple(tokens[row]),
                    logprobs=tuple(logprobs[row]),
                    text=text,
                    finish_reason=reason,
                    stop_reason=stop_reason,
                    policy_version=self._version,
                    seed=seeds[row],
                    duration_s=duration,
                )
            )
        return completions
