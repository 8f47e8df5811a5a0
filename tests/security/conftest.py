"""Fixtures of the sandbox security corpus: one sandbox per backend, failing (never skipping) with
the set-up command when a backend's prerequisites are missing."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from schemas.errors import DependencyError
from streams.sandbox import Sandbox, SandboxConfig


@pytest.fixture(scope="session")
def sandbox() -> Iterator[Sandbox]:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    sb = Sandbox(SandboxConfig())
    for backend in ("wasm", "container"):
        try:
            sb.ensure(backend)  # type: ignore[arg-type]
        except DependencyError as exc:
            pytest.fail(f"sandbox backend {backend} is not set up: {exc}", pytrace=False)
    yield sb
