"""Whether ``rlstream run`` starts a standby learner: the setting, and under ``auto`` the memory a
learner of the run's model needs against what the machine has available."""

from __future__ import annotations

import json
import struct
from pathlib import Path

from rlstream.runner import (
    generator_footprint,
    generator_standby_decision,
    learner_footprint,
    model_parameters,
    standby_decision,
)

GIB = 2**30


def _safetensors(path: Path, shapes: dict[str, list[int]]) -> None:
    header = {
        name: {"dtype": "F32", "shape": shape, "data_offsets": [0, 0]} for name, shape in shapes.items()
    }
    raw = json.dumps({"__metadata__": {"format": "pt"}, **header}).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw)


def test_parameters_are_counted_from_the_weight_files_headers(tmp_path: Path) -> None:
    _safetensors(tmp_path / "model-00001.safetensors", {"a": [4, 8], "b": [8]})
    _safetensors(tmp_path / "model-00002.safetensors", {"c": [3, 2, 5]})
    assert model_parameters(tmp_path) == 4 * 8 + 8 + 30
    assert model_parameters(tmp_path / "absent") is None
    (tmp_path / "model-00003.safetensors").write_bytes(b"\x05")
    assert model_parameters(tmp_path) is None


def test_auto_starts_a_standby_only_where_a_second_learner_fits() -> None:
    small = 135_000_000  # a learner of it: about 3.5 GiB
    assert standby_decision("auto", small, 64 * GIB)[0]
    assert not standby_decision("auto", small, 4 * GIB)[0]
    on, why = standby_decision("auto", small, 2 * learner_footprint(small))
    assert on and "GiB available" in why
    assert not standby_decision("auto", None, 64 * GIB)[0], "an unknown model is not guessed"
    assert not standby_decision("auto", small, None)[0]
    assert standby_decision("on", None, None)[0]
    assert not standby_decision("off", 1000, 64 * GIB)[0]


def test_a_standby_generator_is_started_on_a_cpu_where_it_fits_comfortably() -> None:
    small = 135_000_000  # smollm2: ~1.1 GiB estimated
    assert generator_standby_decision("auto", "hf", "cpu", small, 64 * GIB)[0]
    assert not generator_standby_decision("auto", "hf", "cpu", small, 2 * GIB)[0]
    on, why = generator_standby_decision("auto", "hf", "cpu", small, 4 * generator_footprint(small))
    assert on, why
    assert not generator_standby_decision("auto", "vllm", "cuda", small, 640 * GIB)[0], (
        "a second copy on a GPU"
    )
    assert not generator_standby_decision("auto", "hf", "cpu", None, 64 * GIB)[0]
    assert generator_standby_decision("on", "vllm", "cuda", None, None)[0]
    assert not generator_standby_decision("off", "hf", "cpu", small, 64 * GIB)[0]
