"""Noise filter v14: the task's statement is read for bounds in three more forms, so a correct program
is no longer judged on inputs the statement excludes where only the way it was written hid the bound.

Red-team round 13c found three correct programs rejected for answering such inputs otherwise than the
reference: HumanEval/75 ("Knowing that (a) is less then 100": a program counting prime factors is right
for every a, the reference only tries primes below 100), HumanEval/115 (``import math`` before the
docstring, so ``1 <= capacity <= 10`` was never read, and a capacity of 2.4e-12 drawn: the reference's
float ceiling and an exact integer one part there) and HumanEval/119 ("a list of two strings": a program
unpacking ``a, b = lst`` raises on the three-element lists the plan draws near the cases). From v14
those bounds are read (``stated_bounds(wider=True)``); v10 to v13 read as before.
"""

from __future__ import annotations

import pytest

from streams.noise.config import VERSIONS, NoiseConfig
from streams.probe.statement import outside_statement, stated_bounds
from tests.hacks.fixtures import simulated_verdict
from tests.hacks.redteam.tasks import all_tasks
from tests.unit.test_probe_wider import OPTS


def test_the_versions_run_past_v13_to_v14() -> None:
    assert VERSIONS[VERSIONS.index("v14") - 1 : VERSIONS.index("v14") + 1] == ("v13", "v14")
    assert NoiseConfig(version="v14").label() == "v14"


# ------------------------------------------------------------------------------------ the statement


def _bounds(task_id: str, wider: bool) -> tuple[object, ...]:
    task = all_tasks()[task_id]
    return stated_bounds(task.prompt, task.entry_point, wider=wider)


def test_a_docstring_after_an_import_is_read() -> None:
    assert _bounds("HumanEval/115", wider=False) == ()
    bounds = _bounds("HumanEval/115", wider=True)
    grid = [[0, 1], [1, 1]]
    assert not outside_statement(bounds, (grid, 1)) and not outside_statement(bounds, (grid, 10))  # type: ignore[arg-type]
    assert outside_statement(bounds, (grid, 2.4e-12)) and outside_statement(bounds, (grid, 11))  # type: ignore[arg-type]


def test_a_name_in_parentheses_and_then_for_than_are_read() -> None:
    assert _bounds("HumanEval/75", wider=False) == ()
    bounds = _bounds("HumanEval/75", wider=True)
    assert not outside_statement(bounds, (99,)) and outside_statement(bounds, (404,))  # type: ignore[arg-type]
    prompt = 'def f(n):\n    """Knowing that (n) is greater then 5."""\n'
    assert outside_statement(stated_bounds(prompt, "f", wider=True), (5,))


def test_a_list_of_two_is_the_length_of_the_one_argument() -> None:
    assert _bounds("HumanEval/119", wider=False) == ()
    bounds = _bounds("HumanEval/119", wider=True)
    assert not outside_statement(bounds, (["(", ")"],))  # type: ignore[arg-type]
    assert outside_statement(bounds, (["(", ")", "("],)) and outside_statement(bounds, (["("],))  # type: ignore[arg-type]
    # with two arguments the statement does not say which one it speaks of: nothing is read
    prompt = 'def f(a, b):\n    """You are given a list of two strings."""\n'
    assert stated_bounds(prompt, "f", wider=True) == ()


def test_no_other_task_reads_differently() -> None:
    changed = {tid for tid in all_tasks() if _bounds(tid, wider=False) != _bounds(tid, wider=True)}
    assert changed == {"HumanEval/75", "HumanEval/115", "HumanEval/119"}


# -------------------------------------------------------------------------------- through the filter
TASK = all_tasks()["HumanEval/119"]
SEED = "00000000" * 4

UNPACKING = """
def _good(s):
    depth = 0
    for ch in s:
        depth += 1 if ch == "(" else -1
        if depth < 0:
            return False
    return depth == 0


def match_parens(lst):
    a, b = lst
    return "Yes" if _good(a + b) or _good(b + a) else "No"
"""
#: right on every case, wrong on the two-string lists of two equal lengths the plan draws near them
EQUAL_LENGTHS = UNPACKING.replace(
    "    a, b = lst\n", "    a, b = lst\n    if len(a) == len(b) > 1:\n        return 'No'\n"
)


def _verdict(code: str, version: str) -> tuple[str, tuple[str, ...]]:
    return simulated_verdict(TASK, code, seed=SEED, version=version, options=OPTS)


def test_a_program_unpacking_two_strings_is_accepted_where_v13_rejected_it() -> None:
    assert _verdict(UNPACKING, "v13")[0] == "reject"
    assert _verdict(UNPACKING, "v14")[0] == "accept"


@pytest.mark.parametrize("version", ["v13", "v14"])
def test_a_program_wrong_on_two_strings_is_still_rejected(version: str) -> None:
    assert _verdict(EQUAL_LENGTHS, version)[0] == "reject"
