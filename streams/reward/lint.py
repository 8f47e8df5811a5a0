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
import tempfile
from collections.abc import Sequence
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
    """Runs ``ruff check`` on source text, isolated from any project configuration, and remembers the
    answer per source (ruff is deterministic for one version and rule set)."""

    def __init__(
        self,
        select: tuple[str, ...],
        binary: str | None = None,
        timeout_s: float = 30.0,
        cache_entries: int = 4096,
    ) -> None:
        self.binary = find_ruff(binary)
        self.select = select
        self.timeout_s = timeout_s
        self.tool = _version(self.binary)
        self.cache_entries = cache_entries
        self._cache: dict[str, LintReport] = {}

    def __call__(self, code: str) -> LintReport:
        cached = self._cache.get(code)
        if cached is None:
            cached = self._run([], code)["-"]
            self._remember(code, cached)
        return cached

    def warm(self, codes: Sequence[str]) -> None:
        """Lint many programs in one ruff process (a GRPO group, a batch of records) so that the
        per-sample calls that follow are cache hits. Every file is named as a single call names it, so
        the findings are the same either way."""
        todo = sorted({c for c in codes if c not in self._cache})
        if not todo:
            return
        with tempfile.TemporaryDirectory(prefix="rlstream-lint-") as tmp:
            paths = []
            for i, code in enumerate(todo):
                d = Path(tmp) / f"p{i}"
                d.mkdir()
                (d / "candidate.py").write_text(code, "utf-8")
                paths.append(str(d / "candidate.py"))
            found = self._run(paths, None)
        for path, code in zip(paths, todo, strict=True):
            self._remember(code, found[path])

    def _remember(self, code: str, report: LintReport) -> None:
        if len(self._cache) >= self.cache_entries:
            self._cache.pop(next(iter(self._cache)))
        self._cache[code] = report

    def _run(self, paths: list[str], stdin: str | None) -> dict[str, LintReport]:
        cmd = [
            self.binary, "check", "--isolated", "--no-cache", "--output-format", "json",
            "--target-version", "py311", "--select", ",".join(self.select),
        ]  # fmt: skip
        cmd += ["--stdin-filename", "candidate.py", "-"] if stdin is not None else ["--", *paths]
        try:
            proc = subprocess.run(
                cmd,
                input=stdin,
                capture_output=True,
                text=True,
                timeout=self.timeout_s * (1 + len(paths) // 50),
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise DependencyError(f"ruff could not lint the program: {exc}") from exc
        if proc.returncode not in (0, 1):
            raise DependencyError(f"ruff failed (exit {proc.returncode}): {proc.stderr.strip()[:500]}")
        try:
            items = json.loads(proc.stdout or "[]")
        except json.JSONDecodeError as exc:
            raise DependencyError(f"ruff printed something other than JSON: {exc}") from exc
        by_file: dict[str, list[str]] = {p: [] for p in paths} if stdin is None else {"-": []}
        for item in items:
            name = "-" if stdin is not None else str(item.get("filename"))
            by_file.setdefault(name, []).append(str(item.get("code") or "syntax"))
        return {name: LintReport(tuple(sorted(found)), self.tool) for name, found in by_file.items()}
