"""Running the ``rlstream`` command as a user does: a subprocess of this interpreter in the repository."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_cli(
    bootstrap: str, *args: str, home: Path | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """``rlstream ARGS`` against the broker at ``bootstrap`` (and the settings home ``home``, if given)."""
    env = {**os.environ, "RLSTREAM_KAFKA__BOOTSTRAP_SERVERS": bootstrap}
    if home is not None:
        env["RLSTREAM_HOME"] = str(home)
    return subprocess.run(
        [sys.executable, "-m", "rlstream.cli", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
