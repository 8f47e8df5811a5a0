"""Lint findings of a program's source, from the ruff binary (pinned in the project's lock file).

The reward core takes a :class:`Linter` so it stays a pure function in tests; this module is the one
place that runs a process. The linter's version is part of every score's details, so a re-score with a
different linter is recognisable.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Protocol

from schemas.errors import DependencyError


@dataclass(frozen=True)
class LintReport:
    findings: tuple[str, ...]  # rule codes, sorted
    tool: str  # e.g. "ruff 0.17.5"


class Linter(Protocol):
    def __call__(self, code: str) -> LintReport: ...


def find_ruff(configured: str | None = None) -> str:
    if configured:
        return configured
    beside = Path(sys.executable).parent / "ruff"
    if beside.exists():
        return str(beside)
    found = shutil.which("ruff")
    if found:
        return found
    raise DependencyError(
        "the ruff binary (lint part of the code reward) was not found",
        hint="run `uv sync --frozen` (ruff is pinned in the dev dependency group) or set the reward "
        "config's ruff_path",
    )


@lru_cache(maxsize=8)
def _version(binary: str) -> str:
    out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30, check=False)
    return out.stdout.strip() or "ruff (unknown version)"


class RuffLinter:
    """Runs ``ruff check`` on source text from stdin, isolated from any project configuration."""

    def __init__(self, select: tuple[str, ...], binary: str | None = None, timeout_s: float = 30.0) -> None:
        self.binary = find_ruff(binary)
        self.select = select
        self.timeout_s = timeout_s
        self.tool = _version(self.binary)

    def __call__(self, code: str) -> LintReport:
        cmd = [
            self.binary,
            "check",
            "--isolated",
            "--no-cache",
            "--output-format",
            "json",
            "--target-version",
            "py311",
            "--select",
            ",".join(self.select),
            "--stdin-filename",
            "candidate.py",
            "-",
        ]
        try:
            proc = subprocess.run(
                cmd, input=code, capture_output=True, text=True, timeout=self.timeout_s, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise DependencyError(f"ruff could not lint the program: {exc}") from exc
        if proc.returncode not in (0, 1):
            raise DependencyError(f"ruff failed (exit {proc.returncode}): {proc.stderr.strip()[:500]}")
        try:
            items = json.loads(proc.stdout or "[]")
        except json.JSONDecodeError as exc:
            raise DependencyError(f"ruff printed something other than JSON: {exc}") from exc
        codes = sorted(str(i.get("code") or "syntax") for i in items)
        return LintReport(tuple(codes), self.tool)
