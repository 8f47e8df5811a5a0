"""The bounds a task's statement puts on its arguments (``streams/probe/statement.py``): read where they
are stated plainly on an argument the signature names, never from examples, and an input that breaks
one is recognised."""

from __future__ import annotations

from streams.probe.statement import outside_statement, stated_bounds


def _prompt(signature: str, doc: str) -> str:
    return f'def {signature}:\n    """{doc}\n    """\n'


def test_a_stated_range_is_read_and_inputs_past_it_are_outside() -> None:
    bounds = stated_bounds(
        _prompt("even_odd(n)", "Count palindromes.\n\n    Note:\n        1. 1 <= n <= 10^3"), "even_odd"
    )
    assert not outside_statement(bounds, (1,)) and not outside_statement(bounds, (1000,))
    assert outside_statement(bounds, (0,)) and outside_statement(bounds, (3000,))


def test_lengths_and_another_arguments_length_bound_an_argument() -> None:
    doc = "Sum.\n    Constraints:\n        1. 1 <= len(arr) <= 100\n        2. 1 <= k <= len(arr)"
    bounds = stated_bounds(_prompt("add_elements(arr, k)", doc), "add_elements")
    assert not outside_statement(bounds, ([1, 2, 3], 3))
    assert outside_statement(bounds, ([1, 2, 3], 4))
    assert outside_statement(bounds, (list(range(101)), 1))
    assert outside_statement(bounds, ([], 1))


def test_a_bound_stated_in_words_on_an_argument_is_read() -> None:
    bounds = stated_bounds(
        _prompt(
            "change_base(x: int, base: int)",
            "Change numerical base of input number x to base.\n    base numbers are less than 10.",
        ),
        "change_base",
    )
    assert not outside_statement(bounds, (8, 9)) and outside_statement(bounds, (8, 10))
    assert not outside_statement(bounds, (10**6, 2))  # x is not bounded


def test_examples_unknown_names_and_other_kinds_bound_nothing() -> None:
    doc = "Roman numerals.\n    Restrictions: 1 <= num <= 1000\n\n    >>> f(5000) == 'x'\n    f(0) => ''"
    assert stated_bounds(_prompt("f(number)", doc), "f") == ()
    assert stated_bounds(_prompt("f(shift)", "If shift > number of digits, reverse."), "f") == ()
    bounds = stated_bounds(_prompt("f(n)", "Assume n > 1 and is not a prime."), "f")
    assert outside_statement(bounds, (1,)) and not outside_statement(bounds, (2,))
    # an argument of another kind than the bound speaks of keeps it
    assert not outside_statement(bounds, ("abc",))
    assert stated_bounds("not python (", "f") == ()
