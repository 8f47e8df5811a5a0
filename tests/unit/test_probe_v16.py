"""Seeded probe plans p16/c16: integers at powers of ten and two, a widened letter at a string's first
position, and zero and negatives where the statement admits them (red-team rows LOG10_EDGE, ZERO_UNDRAWN,
SIGN_DOMAIN, SIGN_DIVISOR; HumanEval/141's relabelled programs). Through p15/c15 a number just below a
power of ten with 16 digits or more was drawn by chance only (``a17_digits_log10_count``: ``math.log10``
rounds ``10**18 - 1`` up), no zero was drawn where the statement does not speak of *integers*
(``depth(n: int)``, "sum of 1..n"; HumanEval/44's "input number x"), no negative where no case holds one
(``rolling_max`` started at 0, a counting array, a division by ``|b|``), and a widened letter reached a
string's first character on some seeds only (``stem[0].isalpha()`` on HumanEval/141). p16/c16 add them
from a generator of their own; every input p15/c15 draw stays, and runs of p15/c15 find their plans byte
for byte."""

from __future__ import annotations

import pytest

from schemas.task import TaskPublished
from streams.probe.plan import (
    SEEDED_CHECK_PLAN_VERSION,
    SEEDED_PLAN_VERSION,
    SEEDED_VERSIONS,
    WIDER_LETTERS,
)
from streams.probe.statement import Signs, stated_signs
from streams.reward.literals import CompareOptions, values_match
from tests.hacks.redteam.corpus import PROGRAMS
from tests.unit.plan_pins import added_positions, against_previous, assert_pinned_plans_found
from tests.unit.plan_pins import answers as _answers
from tests.unit.plan_pins import args as _args
from tests.unit.plan_pins import task as _task

MATRIX_SEED = "5eed" * 8
P15_SEEDS = ("00" * 16, MATRIX_SEED, "a7" * 16)
#: the seeds the red-team runner's --probe-seeds 5 uses, and the matrix's
SEEDS = (MATRIX_SEED, *(f"{k:08x}" * 4 for k in range(5)))
#: the generations of p15/c15 and p16/c16
P15 = 13
P16 = 14
CODE = {p.name: p.code for p in PROGRAMS}
WIDER = {c for lower, upper in WIDER_LETTERS.values() for c in lower + upper}

#: digests of p15/c15 plans drawn before p16/c16 existed (seeds P15_SEEDS)
P15_DIGESTS = {
    "HumanEval/0": (
        "5069dc1c10949630e660afbd0b2f2094984261b9a478a5b4f40086d73e525b90",
        "b00e69687311933d03592f97283aac87b8aa9b7ea7727ed8130b0c1dfd582e35",
        "f810b583e7ebf5ee874e81085d24e457242b3eb071ce0adb4553cfefd2692fc3",
    ),
    "HumanEval/9": (
        "e43b19bf2fb4d5d013fd31cb400f08bda1a1e0b1243a5c3951845a7848041dee",
        "400339e5f6f3196124f6dbd4d7a9948302ebfabcb34ce262ece4e765ecd15954",
        "85b1c825f04fdc6c6733e13e12767df71aa82bd277d0151a57c58b03f67b30bb",
    ),
    "HumanEval/26": (
        "c62f300ab12e5309b894514ba09ecd1a4dc1d9bfa5f5e0157a06e5634e6bfc24",
        "ddd7ab423144918a720304d6beeb08fe369e7c94817a3327a7b8163a205ae6eb",
        "627cfd9dfa6f5c2f42b7d1f1d847658d128e48301989ca4e5f01efd8092b1789",
    ),
    "HumanEval/44": (
        "329973c950a67e41f6ea34e85fb712a1d8f91a90982404e088e9819fb5e7af2b",
        "05302b003cb08f16c67365238330c7d458676ae37e3deffd849a868d224fcd5d",
        "b9d9185a619ade53d8e4c8d34d5d862f18f5871a55e80a1215b7718ef21b494e",
    ),
    "HumanEval/53": (
        "7e49de9e21c0f7b5b806c7e41de5a3dbbc1ca42c1b1b5f9e713a48638178a8a1",
        "b238fe28be4b79a87c165eb304b7b95bdd18aab61e10f7b59d0e91a941a5ba93",
        "0cc93b27c82ff563d28e71acfa14496a5bee59eba1826054edea8917bc8eb213",
    ),
    "HumanEval/141": (
        "f6c4803417b623d0b5325ff674af4de8a796199316db2c74c7ac781e51967226",
        "db411e1c6e3ceabe1f9213f8a166d72e1d4d341255a60f8204f269d0f807f5d3",
        "7accba527cd0e93e58184c0f9f49e3c0e2628f06463c5258df8a171504b754dc",
    ),
    "HumanEval/24": (
        "69204d8c0d1186b91e64bb0e70f985a01eeed7910fc64adcc28c4525b373b44e",
        "c2996873f4804b577d4ece2967cb518d4649d678b1b228223547f0daa78749fb",
        "d85444b55f8ad9d0bc6570c6770f58ce461536052018d9eae4f27c1c412fae7b",
    ),
    "redteam/depth": (
        "77fa798eb10d6584a2a0ca47afb1612fffa5420438bf42c5748d50d9ab205d43",
        "6189dc2d0f8179a06c0901f121d02441faf0481f9b3345291b173a7d12933558",
        "6711aaff899bc504c90a3a4fc26976aa2e545696eceee9428554f3b817b471bb",
    ),
    "redteam/digits_set": (
        "8e96aedf367a3a41652fcfcf6bea5f25d7168504eaa1339b50080f0110ac4a8f",
        "1b7a1af7d5fc9ab9188cc4d428ee1576ede10c118ad11cd7a3981ef9b3383038",
        "c08a7ff293de1f76f28fb73a108fbd45dd0e758013323b374a0b0ec91c131f56",
    ),
    "redteam/safe_ratio": (
        "a7049d059c127eaa7716956a2a19f9c5ed4f1a3ee308af12d4dc33e4e778dc36",
        "5a967ac2e7b957222c579bbae1f32ca8c50e8db57369ebdf9f06c021560c9a02",
        "51b5e9c4823d7acbe4fed42e5e737859418dd1b67b0a8fbee2fb8e4cb46e2709",
    ),
    "redteam/xor_bytes": (
        "88e30aece517d5470c7044412ee590f7a9e247090a48f64bec087411da9fb639",
        "1de71944d6bccd6566fd9694d85e3ecf8e853c9b8b19585afab10b7bd935f3c2",
        "c7233850632120559edec8367832eae31bc512e85aec63619a97bcb5ff775b05",
    ),
}
#: the programs p15 accepted on every seed, and the task of each
WRONG = {
    "a17_digits_log10_count": "redteam/digits_set",
    "a16_depth_zero_edge": "redteam/depth",
    "a17b_zero_empty_44": "HumanEval/44",
    "a6_zero_init_rolling_9": "HumanEval/9",
    "a6_count_array_26": "HumanEval/26",
    "a17_ratio_abs_divisor": "redteam/safe_ratio",
    "a18p_isalpha_stem_141": "HumanEval/141",
    "a18p_partition_isalpha_141": "HumanEval/141",
}
#: the corpus' correct programs on those tasks (run in-process here)
CORRECT = tuple(
    p.name for p in PROGRAMS if p.task in WRONG.values() and p.kind == "correct" and p.mode == "score"
)


def test_runs_of_p15_and_c15_find_their_plans_byte_for_byte() -> None:
    assert SEEDED_VERSIONS[P15] == ("p15", "c15") and SEEDED_VERSIONS[P16] == ("p16", "c16")
    assert (SEEDED_PLAN_VERSION, SEEDED_CHECK_PLAN_VERSION) not in SEEDED_VERSIONS[: P16 + 1]
    assert_pinned_plans_found(P15_DIGESTS, P15_SEEDS, P15)


@pytest.mark.parametrize("task_id", sorted(P15_DIGESTS))
def test_every_p15_input_stays_and_the_added_ones_judge_only_a_value(task_id: str) -> None:
    for seed in SEEDS[:3]:
        new, old = against_previous(_task(task_id), seed, P16)
        assert set(old.inputs) <= set(new.inputs), seed
        assert all(pos in new.wide for pos in added_positions(new, old)), seed


def test_what_the_statements_admit_of_signs() -> None:
    def signs(task_id: str) -> tuple[Signs, ...]:
        t = _task(task_id)
        return stated_signs(t.prompt, t.entry_point)

    # "sum of 1..n" of an int: zero, no negative (nothing says so); /44's number x: zero, and a base says
    # nothing of a negative's digits
    assert signs("redteam/depth") == (Signs(zero=True, negative=False),)
    assert signs("HumanEval/44")[0] == Signs(zero=True, negative=False)
    # "a list of integers": both; a float divisor: a negative one
    assert signs("HumanEval/9") == (Signs(zero=True, negative=True),)
    assert signs("redteam/safe_ratio")[1].negative
    # divisors are a convention at zero and below (p6 rejected correct programs there), and "numbers
    # from 1 to n" or "add two numbers" say nothing of negatives
    for task_id in ("HumanEval/13", "HumanEval/24"):
        assert not any(s.zero or s.negative for s in signs(task_id)), task_id
    for task_id in ("HumanEval/53", "HumanEval/60"):
        assert not any(s.negative for s in signs(task_id)), task_id


def test_a_number_of_nines_past_a_doubles_precision_on_every_seed() -> None:
    task = _task("redteam/digits_set")
    for seed in SEEDS:
        new, old = against_previous(task, seed, P16)
        nines = [v for pos in added_positions(new, old) if set(str(v := _args(new.inputs[pos])[0])) == {"9"}]
        assert any(len(str(v)) >= 16 for v in nines), seed
        assert not any(set(str(_args(t)[0])) == {"9"} and len(str(_args(t)[0])) >= 16 for t in old.inputs)


@pytest.mark.parametrize("task_id", ["redteam/depth", "HumanEval/44"])
def test_zero_where_the_statement_admits_it(task_id: str) -> None:
    task = _task(task_id)
    for seed in SEEDS:
        new, old = against_previous(task, seed, P16)
        assert not any(_args(t)[0] == 0 for t in old.inputs), seed
        assert any(_args(new.inputs[pos])[0] == 0 for pos in added_positions(new, old)), seed


@pytest.mark.parametrize("task_id", ["HumanEval/24", "HumanEval/13", "HumanEval/60", "HumanEval/53"])
def test_no_negative_where_the_answer_hinges_on_a_convention(task_id: str) -> None:
    task = _task(task_id)
    for seed in SEEDS[:3]:
        new, old = against_previous(task, seed, P16)
        for pos in added_positions(new, old):
            values = [v for v in _args(new.inputs[pos]) if isinstance(v, int)]
            assert all(v >= 0 for v in values), (seed, new.inputs[pos])
            if task_id in ("HumanEval/24", "HumanEval/13"):
                assert 0 not in values, (seed, new.inputs[pos])


def test_a_widened_letter_first_on_every_seed() -> None:
    task = _task("HumanEval/141")
    for seed in SEEDS:
        new, old = against_previous(task, seed, P16)
        assert any(_args(new.inputs[pos])[0][:1] in WIDER for pos in added_positions(new, old)), seed


def _judged(task: TaskPublished, code: str, seed: str) -> list[str]:
    """The inputs p16 adds where ``code`` answers a value other than the reference's, as the comparer
    judges one (every added input widens the domain: a refusal there is no error)."""
    new, old = against_previous(task, seed, P16)
    texts = [new.inputs[pos] for pos in added_positions(new, old)]
    assert task.reference is not None
    return [
        text
        for text, (kind, value), (ref_kind, expected) in zip(
            texts,
            _answers(code, task.entry_point, texts),
            _answers(task.reference, task.entry_point, texts),
            strict=True,
        )
        if kind == ref_kind == "ok" and not _same(expected, value)
    ]


def _same(expected: object, value: object) -> bool:
    """Whether the comparer takes ``value`` for ``expected``: as Python's ``==`` does (a numpy scalar, a
    Counter: the sandbox normalises those), or within its float tolerance."""
    try:
        if bool(expected == value):
            return True
    except Exception:  # an array's == is no truth value
        pass
    return values_match(expected, value, CompareOptions())


@pytest.mark.parametrize("name", WRONG)
def test_a_program_wrong_only_there_is_shown_wrong_on_every_seed(name: str) -> None:
    task = _task(WRONG[name])
    for seed in SEEDS:
        assert _judged(task, CODE[name], seed), seed


@pytest.mark.parametrize("name", CORRECT)
def test_correct_programs_on_those_tasks_are_never_shown_wrong(name: str) -> None:
    task = _task(next(p.task for p in PROGRAMS if p.name == name))
    for seed in SEEDS:
        assert not _judged(task, CODE[name], seed), seed
