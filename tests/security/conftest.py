"""Fixtures of the sandbox security corpus: one sandbox per backend, failing (never skipping) with
the set-up command when a backend's prerequisites are missing."""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest

from streams.sandbox import Sandbox, SandboxConfig


@pytest.fixture(scope="session")
def sandbox(ready_sandbox: Callable[[SandboxConfig], Sandbox]) -> Sandbox:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    return ready_sandbox(SandboxConfig())
