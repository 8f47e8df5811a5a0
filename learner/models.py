"""Randomly initialised Llama-shaped models for tests and benchmarks (no download, no tokenizer)."""

from __future__ import annotations

from typing import Any

import torch


def random_llama(
    *,
    vocab_size: int = 300,
    hidden_size: int = 64,
    intermediate_size: int | None = None,
    num_layers: int = 2,
    num_heads: int = 4,
    num_kv_heads: int | None = None,
    max_positions: int = 512,
    tie_word_embeddings: bool = False,
    seed: int = 0,
    dtype: torch.dtype = torch.float32,
    device: str | torch.device = "cpu",
) -> Any:
    """A ``LlamaForCausalLM`` with random weights, identical for a given seed and device.

    Built directly on ``device`` so a billion-parameter model never takes a detour through host memory.
    """
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=hidden_size,
        intermediate_size=intermediate_size or 2 * hidden_size,
        num_hidden_layers=num_layers,
        num_attention_heads=num_heads,
        num_key_value_heads=num_kv_heads or num_heads,
        max_position_embeddings=max_positions,
        tie_word_embeddings=tie_word_embeddings,
        pad_token_id=0,
        bos_token_id=1,
        eos_token_id=2,
    )
    torch.manual_seed(seed)
    with torch.device(device):
        model: Any = LlamaForCausalLM(config)  # type: ignore[no-untyped-call]
    return model.to(dtype)
