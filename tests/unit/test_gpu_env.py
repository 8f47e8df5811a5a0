"""The GPU environment (infra/gpu: rlstream + vLLM + DeepSpeed in one lock of its own) resolves, offline:
its lock matches its project and the main project it installs, vLLM's torch is the one pinned, and every
package it shares with the main lock has the main lock's version unless vLLM forces another - so the
GPU image runs the library versions the test suite ran, except where it cannot."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
GPU = ROOT / "infra" / "gpu"
RELOCK = "cp uv.lock infra/gpu/uv.lock && uv lock --project infra/gpu"

#: packages whose GPU version may differ from the main lock's, and why (vllm==0.33.0's requirements)
FORCED_BY_VLLM = {
    "torch": "vllm pins torch==2.14.0",
    "triton": "the triton of that torch",
    "cuda-toolkit": "the CUDA libraries of that torch",
    "click": "vllm needs huggingface-hub>=1.31, which needs click>=8.4.2",
    "huggingface-hub": "vllm needs >=1.31",
    "numpy": "vllm's numba==0.65.0 caps numpy",
}


def _lock(path: Path) -> dict[str, Any]:
    with path.open("rb") as handle:
        return tomllib.load(handle)


def _versions(lock: dict[str, Any]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for package in lock["package"]:
        if "version" in package:
            found.setdefault(package["name"], []).append(package["version"])
    return found


def _forced(name: str) -> bool:
    return name in FORCED_BY_VLLM or name.startswith("nvidia-")


def test_the_gpu_lock_is_current_with_its_project_and_the_main_one(tmp_path: Path) -> None:
    uv = shutil.which("uv")
    assert uv, "uv is not on PATH (scripts/setup.sh installs it)"
    # offline and with an empty cache: the check reads the two pyprojects and the lock, nothing else
    env = {**os.environ, "UV_CACHE_DIR": str(tmp_path / "uv-cache"), "UV_OFFLINE": "1"}
    done = subprocess.run(
        [uv, "lock", "--check", "--offline", "--project", str(GPU), "--python", sys.executable],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, (
        f"infra/gpu/uv.lock no longer matches infra/gpu/pyproject.toml or the main pyproject.toml "
        f"(a changed dependency?): re-lock it with `{RELOCK}` (needs the registry).\n{done.stderr[-2000:]}"
    )


def test_the_gpu_lock_pins_vllm_with_its_torch_for_linux_x86_64() -> None:
    project = _lock(GPU / "pyproject.toml")
    lock = _lock(GPU / "uv.lock")
    versions = _versions(lock)
    (vllm_pin,) = [d for d in project["project"]["dependencies"] if d.startswith("vllm")]
    assert versions["vllm"] == [vllm_pin.split("==")[1]]
    (torch_pin,) = [d for d in project["tool"]["uv"]["override-dependencies"] if d.startswith("torch")]
    assert versions["torch"] == [torch_pin.split("==")[1]]
    assert lock["supported-markers"] == ["platform_machine == 'x86_64' and sys_platform == 'linux'"]
    (rlstream,) = [p for p in lock["package"] if p["name"] == "rlstream"]
    assert (GPU / rlstream["source"]["editable"]).resolve() == ROOT, "the GPU env must install this checkout"
    assert {"deepspeed", "vllm", "torch"} <= set(versions)
    assert all(len(v) == 1 for v in versions.values()), "one version of every package"


def test_shared_packages_keep_the_main_locks_versions_unless_vllm_forces_another() -> None:
    main = _versions(_lock(ROOT / "uv.lock"))
    gpu = _versions(_lock(GPU / "uv.lock"))
    drifted = {
        name: (main[name][0], gpu[name][0])
        for name in sorted(set(main) & set(gpu))
        if main[name] != gpu[name] and not _forced(name)
    }
    assert not drifted, (
        f"the GPU lock has other versions than the main lock (main, gpu): {drifted}; re-lock with "
        f"`{RELOCK}`, or name the package in FORCED_BY_VLLM with the requirement that forces it"
    )
    unused = [name for name in FORCED_BY_VLLM if name in main and main[name] == gpu.get(name)]
    assert not unused, f"FORCED_BY_VLLM lists packages whose versions no longer differ: {unused}"
