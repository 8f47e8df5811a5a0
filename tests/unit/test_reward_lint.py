"""The lint part of quality: ruff's findings, one program at a time or a batch at once."""

from __future__ import annotations

from streams.reward.config import RewardConfig
from streams.reward.lint import RuffLinter

PROGRAMS = [
    "def f(x):\n    if x == 1 or x == 2:\n        return True\n    else:\n        return False\n",
    "import os\n\n\ndef g(a):\n    return a\n",
    "def h(a):\n    return a + 1\n",
    "def broken(:\n",
]


def test_findings_are_rule_codes_with_the_tool_version() -> None:
    lint = RuffLinter(RewardConfig().lint_select)
    assert lint(PROGRAMS[0]).findings == ("PLR1714", "RET505", "SIM103")
    assert lint(PROGRAMS[1]).findings == ("F401",)
    assert lint(PROGRAMS[2]).findings == ()
    assert lint(PROGRAMS[3]).findings  # a syntax error is a finding, not a crash
    assert lint(PROGRAMS[2]).tool.startswith("ruff ")


def test_a_batch_gives_the_same_findings_as_single_calls() -> None:
    single = RuffLinter(RewardConfig().lint_select)
    batch = RuffLinter(RewardConfig().lint_select)
    batch.warm([*PROGRAMS, PROGRAMS[0]])
    assert [batch(p) for p in PROGRAMS] == [single(p) for p in PROGRAMS]
