"""Fixtures of the sandbox security corpus: one sandbox per backend, failing (never skipping) with
the set-up command when a backend's prerequisites are missing."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

import pytest

from rlstream.settings import get_settings
from streams.sandbox import Sandbox, SandboxConfig


@pytest.fixture(scope="session")
def sandbox(ready_sandbox: Callable[[SandboxConfig], Sandbox]) -> Sandbox:
    """Default settings, but the container's mode from the settings object: the whole corpus runs
    against the fork server with ``RLSTREAM_SANDBOX__CONTAINER_FORK_SERVER=true``."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    fork_server = get_settings().sandbox.container_fork_server
    return ready_sandbox(SandboxConfig(container_fork_server=fork_server))


@pytest.fixture(scope="module", params=["a jail each", "fork server"])
def jail(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    """The container in both of its modes (a jail per execution, the fork server), for what must hold
    in each."""
    box = Sandbox(SandboxConfig(container_fork_server=request.param == "fork server"))
    box.ensure("container")
    yield box
    box.container().close()
