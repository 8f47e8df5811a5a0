"""Noise filter v24: a bound the statement states on an abbreviation of a function's one argument is read.

Red-team round 19c: HumanEval/156 is ``int_to_mini_roman(number)`` and its statement says
``Restrictions: 1 <= num <= 1000``. v10 reads a bound only on a name the signature holds, so this one was
never read, the plan drew 1001, 1002, 1011 and 1086 near the cases (1000 is one) and more past them, and
a correct program that checks the stated restriction and raises outside it
(``a19c_ok_validated_roman_156``) was rejected as ``wrong.disagrees_with_reference`` for refusing
numbers the statement excludes. From v24 a comparison's name of at least three letters that the one
argument's name starts with names that argument (``stated_bounds(abbreviated=True)``); v10 to v23 read
as before. Of the tasks we hold, HumanEval/156 alone reads differently.
"""

from __future__ import annotations

import ast

import pytest

from streams.noise.config import VERSIONS, NoiseConfig
from streams.probe.statement import outside_statement, stated_bounds
from tests.hacks.fixtures import simulated_verdict
from tests.hacks.redteam.tasks import all_tasks
from tests.unit.test_probe_wider import OPTS

TASK = all_tasks()["HumanEval/156"]
SEED = "00000000" * 4

VALIDATED = """
_TABLE = (
    (1000, "m"), (900, "cm"), (500, "d"), (400, "cd"), (100, "c"), (90, "xc"),
    (50, "l"), (40, "xl"), (10, "x"), (9, "ix"), (5, "v"), (4, "iv"), (1, "i"),
)


def int_to_mini_roman(number):
    if not 1 <= number <= 1000:
        raise ValueError(f"number must be in 1..1000, got {number}")
    out = []
    for value, letters in _TABLE:
        count, number = divmod(number, value)
        out.append(letters * count)
    return "".join(out)
"""
#: right on the task's own cases and nowhere else inside 1..1000
CASES_ONLY = (
    "_SEEN = {"
    + ", ".join(f"{c.input.strip('(),')}: {c.output}" for c in (*TASK.tests, *TASK.hidden_tests))
    + "}\n\n\ndef int_to_mini_roman(number):\n    return _SEEN.get(number, '')\n"
)


def test_the_versions_run_past_v23_to_v24() -> None:
    assert VERSIONS[VERSIONS.index("v24") - 1 : VERSIONS.index("v24") + 1] == ("v23", "v24")
    assert NoiseConfig(version="v24").label() == "v24"


# ------------------------------------------------------------------------------------ the statement


def _bounds(task_id: str, abbreviated: bool) -> tuple[object, ...]:
    task = all_tasks()[task_id]
    return stated_bounds(task.prompt, task.entry_point, wider=True, abbreviated=abbreviated)


def test_num_names_the_one_argument_number() -> None:
    assert _bounds("HumanEval/156", abbreviated=False) == ()
    bounds = _bounds("HumanEval/156", abbreviated=True)
    assert not outside_statement(bounds, (1,)) and not outside_statement(bounds, (1000,))  # type: ignore[arg-type]
    assert outside_statement(bounds, (1001,)) and outside_statement(bounds, (0,))  # type: ignore[arg-type]


def test_only_a_plain_abbreviation_of_the_one_argument_is_read() -> None:
    # two arguments: the statement does not say which one "num" is
    two = 'def f(number, count):\n    """Restrictions: 1 <= num <= 1000"""\n'
    assert stated_bounds(two, "f", wider=True, abbreviated=True) == ()
    # shorter than three letters, or not the start of the argument's name
    short = 'def f(number):\n    """Restrictions: 1 <= nu <= 1000"""\n'
    other = 'def f(number):\n    """For each i (1 <= i <= 1000)"""\n'
    assert stated_bounds(short, "f", wider=True, abbreviated=True) == ()
    assert stated_bounds(other, "f", wider=True, abbreviated=True) == ()
    length = 'def f(values):\n    """Constraints: 1 <= len(val) <= 100"""\n'
    assert outside_statement(stated_bounds(length, "f", wider=True, abbreviated=True), (list(range(101)),))


def test_no_other_task_reads_differently() -> None:
    tasks = all_tasks()
    changed = {tid for tid in tasks if _bounds(tid, abbreviated=False) != _bounds(tid, abbreviated=True)}
    assert changed == {"HumanEval/156"}


# -------------------------------------------------------------------------------- through the filter


def _huge(text: str) -> bool:
    """An input the reference's loop of one letter per thousand cannot answer within a call's cap (p17
    draws 2**31 .. 10**40 among the extremes): a sandbox ends its run there, this process would not."""
    value: int = ast.literal_eval(text)[0]
    return abs(value) > 10**7


def _verdict(code: str, version: str) -> tuple[str, tuple[str, ...]]:
    return simulated_verdict(TASK, code, seed=SEED, version=version, options=OPTS, reference_hangs=_huge)


def test_a_program_refusing_numbers_past_1000_is_accepted_where_v21_rejected_it() -> None:
    verdict, codes = _verdict(VALIDATED, "v21")
    assert verdict == "reject" and "wrong.disagrees_with_reference" in codes
    assert _verdict(VALIDATED, "v24")[0] == "accept"


@pytest.mark.parametrize("version", ["v21", "v24"])
def test_a_program_right_on_the_cases_alone_is_still_rejected(version: str) -> None:
    assert _verdict(CASES_ONLY, version)[0] == "reject"
