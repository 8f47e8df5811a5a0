"""Running the ``rlstream`` command as a user does: a subprocess of this interpreter in the repository."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_cli(
    *args: str,
    bootstrap: str | None = None,
    home: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 300,
) -> subprocess.CompletedProcess[str]:
    """``rlstream ARGS`` in ``env`` (default: this process's environment), against the broker at
    ``bootstrap`` and with the settings home ``home`` where given, with nothing on its stdin: a command
    that waited for input would hang the test rather than fail it."""
    env = dict(os.environ if env is None else env)
    if bootstrap is not None:
        env["RLSTREAM_KAFKA__BOOTSTRAP_SERVERS"] = bootstrap
    if home is not None:
        env["RLSTREAM_HOME"] = str(home)
    return subprocess.run(
        [sys.executable, "-m", "rlstream.cli", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
