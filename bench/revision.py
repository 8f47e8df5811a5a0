"""Load a module as it was at an earlier revision, beside this tree's, so an A/B bench can run both in
one process (``bench.jail_ab``, ``bench.bus_ab``, ``bench.wasm_ab``)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def load_at(name: str, rev: str, path: str, folder: Path) -> ModuleType:
    """``path`` as it is at ``rev``, written into ``folder`` and imported as module ``name``."""
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{rev}:{path}"], capture_output=True, text=True, check=True
    ).stdout
    file = folder / f"{name}.py"
    file.write_text(source)
    spec = importlib.util.spec_from_file_location(name, file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module
