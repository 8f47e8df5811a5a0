"""Loading a published policy's weights: resolve the checkpoint URI, verify its sha256, read the tensors
and swap them into a model between batches.

A checkpoint is one safetensors file holding the model's ``state_dict`` (tied weights may be stored
once: e.g. ``lm_head.weight`` may be absent when it is tied to the input embeddings).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import torch

from schemas.errors import DependencyError, InputError


def resolve_checkpoint_uri(uri: str) -> Path:
    """The local path of a ``file://`` URI or a plain path (other schemes are not supported yet)."""
    parsed = urlparse(uri)
    if parsed.scheme == "file":
        if parsed.netloc not in ("", "localhost"):
            raise InputError(
                f"checkpoint URI {uri!r} names host {parsed.netloc!r}",
                location="checkpoint_uri",
                hint="use file:///absolute/path (the file must be readable on this machine)",
            )
        return Path(unquote(parsed.path))
    if parsed.scheme == "":
        return Path(uri)
    raise InputError(
        f"checkpoint URI scheme {parsed.scheme!r} is not supported",
        location="checkpoint_uri",
        hint="publish checkpoints as file:// URIs on storage every generator can read",
    )


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def verified_checkpoint(uri: str, sha256: str) -> Path:
    """The checkpoint's path once its content matches ``sha256``; a :class:`DependencyError` otherwise."""
    path = resolve_checkpoint_uri(uri)
    if not path.is_file():
        raise DependencyError(
            f"checkpoint {uri} does not exist on this machine",
            hint="put checkpoints on storage shared with the generators (settings home or a mount)",
        )
    actual = sha256_of(path)
    if actual != sha256.lower():
        raise DependencyError(
            f"checkpoint {uri} has sha256 {actual}, the policy event says {sha256}",
            hint="the file was changed or is still being written; republish the version",
        )
    return path


def read_safetensors(path: Path) -> dict[str, torch.Tensor]:
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    try:
        return load_file(str(path))
    except (SafetensorError, OSError) as exc:
        raise DependencyError(f"cannot read checkpoint {path}: {exc}", hint="republish the version") from exc


def write_safetensors(model: Any, path: Path) -> str:
    """Save ``model``'s weights as one safetensors checkpoint (tied copies once); returns its sha256.
    The format :func:`read_safetensors` and the vLLM backend load; used by tests and benchmarks."""
    from safetensors.torch import save_file

    state: dict[str, torch.Tensor] = {}
    seen: set[int] = set()
    for name, tensor in model.state_dict().items():
        if tensor.data_ptr() in seen:
            continue
        seen.add(tensor.data_ptr())
        state[name] = tensor.detach().contiguous().cpu()
    path.parent.mkdir(parents=True, exist_ok=True)
    save_file(state, str(path))
    return sha256_of(path)


def apply_state_dict(model: Any, state: dict[str, torch.Tensor]) -> None:
    """Copy ``state`` into ``model`` in place; every parameter must be given except tied copies."""
    own = model.state_dict()
    unexpected = sorted(set(state) - set(own))
    if unexpected:
        raise InputError(
            f"checkpoint has {len(unexpected)} tensors the model does not, e.g. {unexpected[:3]}",
            location="checkpoint",
            hint="publish a checkpoint of the same architecture as the generator's model",
        )
    # state_dict() lists tied parameters under each name; one copy in the checkpoint is enough
    given = {own[n].data_ptr() for n in state}
    missing = [n for n, t in own.items() if n not in state and t.data_ptr() not in given]
    if missing:
        raise InputError(
            f"checkpoint lacks {len(missing)} of the model's tensors, e.g. {missing[:3]}",
            location="checkpoint",
            hint="publish the full state_dict",
        )
    for name, tensor in state.items():
        if tuple(tensor.shape) != tuple(own[name].shape):
            raise InputError(
                f"tensor {name} has shape {tuple(tensor.shape)}, the model has {tuple(own[name].shape)}",
                location="checkpoint",
                hint="publish a checkpoint of the same architecture as the generator's model",
            )
    with torch.no_grad():
        for name, tensor in state.items():
            own[name].copy_(tensor.to(dtype=own[name].dtype, device=own[name].device))
