"""Fixtures of the sandbox security corpus: one sandbox per backend, failing (never skipping) with
the set-up command when a backend's prerequisites are missing."""

from __future__ import annotations

import os

import pytest

from schemas.errors import DependencyError
from streams.sandbox import Sandbox, SandboxConfig


@pytest.fixture(scope="session")
def sandbox() -> Sandbox:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    sb = Sandbox(SandboxConfig())
    for backend in ("wasm", "container"):
        try:
            sb.ensure(backend)
        except DependencyError as exc:
            pytest.fail(f"sandbox backend {backend} is not set up: {exc}", pytrace=False)
    return sb
