"""Seeded probe plans p24/c24: the statement's own calls and the integers it states.

Through p23/c23 an input the statement itself gives was drawn only by chance: HumanEval/46 writes fib4(0)
to fib4(3), its cases start at 5 and no near draw reached 2, so a program wrong only at n = 2 was
accepted; and only the decimals a statement writes were drawn, so /122's "at most two digits" never met
100 (red-team round 48). p24/c24 lay every call of the entry point the statement writes with literal
arguments among the near inputs, and the integers it compares with or bounds a range by (with their
neighbours, and the bounds a count of digits sets) among the inputs widening the cases' domain; ASCII
symbols where the statement keeps its text to ASCII and not to letters (/134's last '^'); a relation's
edges where the statement gives one between integer arguments or fields (library/clamp's low = high,
high = low + 1); numbers written as text under one in magnitude (/99's '-0.5'). They draw every input
p23/c23 draw, and runs of p23/c23 find their plans byte for byte."""

from __future__ import annotations

import pytest

from streams.probe.plan import ASCII_SYMBOLS, SEEDED_VERSIONS, _plan, plan_for
from streams.probe.statement import stated_calls, stated_integers, stated_letters_only
from tests.unit.plan_pins import args, assert_pinned_plans_found
from tests.unit.plan_pins import task as _task

SEEDS = ("00" * 16, "5eed" * 8)
P23 = 21
P24 = 22

#: digests of p23/c23 plans drawn before p24/c24 existed (seeds SEEDS)
P23_DIGESTS = {
    "HumanEval/46": (
        "95ea9460e915ca7c28c881c1d61373cb481914f653507d8617ccf79fde852ff2",
        "86cbf6938fb62bb4ee6d1604e22549f89735afb153a6cde27d626f96190d14e2",
    ),
    "HumanEval/122": (
        "6a4fbba23bf8f084379ced0b2001a969e2402daba6cdb46b07cc58d902a7d053",
        "4041b91b54769cbd30fe844404c5db88f20298418b27106b1da7e5ab9401c3f9",
    ),
    "HumanEval/70": (
        "8418acf25c014d3db5350c5d8b4f5934f705f325fbb48a12750806e634213d3a",
        "aef3313abbb729d5d3e3f1232ed4634559f047b5893bf57bf2b98e56401aaf24",
    ),
    "HumanEval/134": (
        "42a28c5ac4ec243e950942d33d7f180ee1704902969508f94bd755daaaa304bd",
        "0027a6b5161ee30d3b047c452041e500b7e8a775f43aa28741b71973b6933427",
    ),
}


def _prompt(doc: str, name: str = "f", params: str = "n") -> str:
    return f'def {name}({params}):\n    """{doc}"""\n'


def test_runs_of_p23_and_c23_find_their_plans_byte_for_byte() -> None:
    assert SEEDED_VERSIONS[P23] == ("p23", "c23") and SEEDED_VERSIONS[P24] == ("p24", "c24")
    assert_pinned_plans_found(P23_DIGESTS, SEEDS, P23)


@pytest.mark.parametrize("task_id", ["HumanEval/46", "HumanEval/122", "HumanEval/99", "HumanEval/29"])
def test_p24_draws_every_input_p23_draws(task_id: str) -> None:
    for seed in SEEDS:
        new, old = _plan(_task(task_id), seed, P24), _plan(_task(task_id), seed, P23)
        assert new is not None and old is not None
        assert set(old.inputs) <= set(new.inputs)
        assert len(new.inputs) > len(old.inputs)


def test_the_statements_own_calls_are_read_from_its_prose_and_its_examples() -> None:
    t = _task("HumanEval/46")
    calls = stated_calls(t.prompt, t.entry_point)
    assert {(0,), (1,), (2,), (3,)} <= set(calls)  # "fib4(2) -> 2" in the prose
    t = _task("HumanEval/99")
    assert ("-14.5",) in stated_calls(t.prompt, t.entry_point)  # "closest_integer("-14.5") should return"
    # a call of another function, a call with a name or an unclosed call is no input
    doc = "g(5) is not f. f(x) needs x. f(3, [1, 2]) -> 4. f(7"
    assert stated_calls(_prompt(doc, params="n, m"), "f") == ((3, [1, 2]),)


def test_the_statements_calls_are_near_inputs_of_the_plan() -> None:
    for seed in SEEDS:
        plan = plan_for(_task("HumanEval/46"), seed)
        assert plan is not None
        near = {args(text) for pos, text in enumerate(plan.inputs) if pos not in plan.wide}
        assert {(1,), (2,), (3,)} <= near


def test_the_integers_a_statement_compares_with_and_their_neighbours() -> None:
    t = _task("HumanEval/122")
    assert {9, 10, 99, 100} <= set(stated_integers(t.prompt, t.entry_point))  # "at most two digits"
    assert set(stated_integers(_prompt("n is at most 5."), "f")) == {4, 5, 6}
    assert set(stated_integers(_prompt("Return the sum of values between 1 and 1000."), "f")) == {
        0, 1, 2, 999, 1000, 1001,
    }  # fmt: skip
    assert set(stated_integers(_prompt("For n >= 3 return n."), "f")) == {2, 3, 4}
    # an example's answer is no bound: "-> 2", "== 34", ">>>" lines, a dashed number
    doc = "f(2) -> 2 and f(7) == 34.\n>>> f(4)\n5\nAt most one-third of them."
    assert stated_integers(_prompt(doc), "f") == ()
    # a count of things is no bound: "two lists", "from two integers"
    assert stated_integers(_prompt("Given two lists, pick from two integers the one."), "f") == ()


def test_the_stated_integers_are_drawn_into_integer_arguments_and_list_elements() -> None:
    for seed in SEEDS:
        plan = plan_for(_task("HumanEval/122"), seed)
        old = _plan(_task("HumanEval/122"), seed, P23)
        assert plan is not None and old is not None
        added = [args(plan.inputs[pos]) for pos in plan.wide if plan.inputs[pos] not in set(old.inputs)]
        elements = {x for arr, _k in added for x in arr}
        assert elements & {99, 100, 101, -99, -100, -101}
        # the cases' relation k <= len(arr) holds on every one
        assert all(1 <= k <= len(arr) for arr, k in added)


def test_no_stated_integer_past_twice_the_cases_magnitude() -> None:
    t = _task("HumanEval/68")  # "1 <= nodes.length <= 10000": a length, not a value the cases reach
    assert 10000 in stated_integers(t.prompt, t.entry_point)
    for seed in SEEDS:
        plan = plan_for(t, seed)
        old = _plan(t, seed, P23)
        assert plan is not None and old is not None
        added = [args(x)[0] for x in plan.inputs if x not in set(old.inputs)]
        assert all(abs(v) < 10000 for arr in added for v in arr)


def test_ascii_symbols_are_drawn_where_the_statement_keeps_ascii_and_not_letters() -> None:
    t = _task("HumanEval/134")  # "an alphabetical character": the last one may be '!'
    for seed in SEEDS:
        plan = plan_for(t, seed)
        assert plan is not None
        texts = [args(plan.inputs[pos])[0] for pos in plan.wide]
        symbols = {c for text in texts for c in text if c in ASCII_SYMBOLS}
        assert len(symbols) >= 3
        assert any(text and text[-1] in ASCII_SYMBOLS for text in texts)
    # /118 "contains English letter only": a symbol is outside the task, none is drawn
    t = _task("HumanEval/118")
    assert stated_letters_only(t.prompt, t.entry_point)
    for seed in SEEDS:
        plan, old = plan_for(t, seed), _plan(t, seed, P23)
        assert plan is not None and old is not None
        added = [x for x in plan.inputs if x not in set(old.inputs)]
        assert not any(c in ASCII_SYMBOLS for x in added for c in str(args(x)[0]))


def test_a_stated_relation_is_met_on_its_edge_near_the_cases() -> None:
    # library/clamp: "(low <= high)"; the near draws break it often and seldom meet its edge
    for seed in SEEDS:
        plan = plan_for(_task("library/clamp"), seed)
        assert plan is not None
        near = [args(text) for pos, text in enumerate(plan.inputs) if pos not in plan.wide]
        assert any(high == low for _x, low, high in near)
        assert any(high == low + 1 and x > high for x, low, high in near)
    # HumanEval/127: each interval's start <= end, a relation between fields
    plan = plan_for(_task("HumanEval/127"), SEEDS[1])
    assert plan is not None
    pairs = [args(text) for text in plan.inputs]
    assert any(a[0] == a[1] for a, _b in pairs) and any(b[0] == b[1] for _a, b in pairs)


def test_numbers_written_as_text_reach_below_one_of_each_sign_the_cases_hold() -> None:
    # HumanEval/99's cases ('10', '14.5', '-15.5', '15.3', '0') never mutate to a value in (-1, 1)
    for seed in SEEDS:
        plan = plan_for(_task("HumanEval/99"), seed)
        assert plan is not None
        values = {float(args(plan.inputs[pos])[0]) for pos in plan.wide if args(plan.inputs[pos])[0]}
        assert any(-1 < v < 0 for v in values) and any(0 < v < 1 for v in values)
        assert -0.5 in values or 0.5 in values


def test_the_empty_string_a_one_class_shape_kept_out_is_drawn_and_a_form_still_is_not() -> None:
    # HumanEval/29's prefixes are letters alone ('x'): p15's '' broke that shape, so none was drawn
    for seed in SEEDS:
        plan, old = plan_for(_task("HumanEval/29"), seed), _plan(_task("HumanEval/29"), seed, P23)
        assert plan is not None and old is not None
        assert not any(args(x)[1] == "" for x in old.inputs)
        assert any(args(plan.inputs[pos])[1] == "" for pos in plan.wide)
    # /144's fractions are a form ('digit/digit'), which the empty string is not: still none
    for seed in SEEDS:
        plan = plan_for(_task("HumanEval/144"), seed)
        assert plan is not None
        assert not any("" in args(x) for x in plan.inputs)


def test_a_refusal_of_an_empty_token_is_not_held_and_its_reorderings_are_marked_too() -> None:
    from streams.noise.probe import empty_refusals_held

    t = _task("HumanEval/29")
    for seed in SEEDS:
        plan = plan_for(t, seed)
        assert plan is not None
        emptied = [pos for pos, x in enumerate(plan.inputs) if args(x)[1] == ""]
        assert emptied and set(emptied) <= plan.tokens_emptied
        # refusing an empty prefix ("a word"-like statements) is the program's right there; a value is
        # still judged, as at every input widening the domain
        assert not set(emptied) & empty_refusals_held(t, plan)
