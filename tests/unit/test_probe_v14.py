"""Seeded probe plans p14/c14: strings widened with cased letters beyond Latin-1, whole words of them, and
bytes varied inside lists and tuples. Through p13/c13 every letter of no case's alphabet a plan drew was
one of eight fixed Latin-1 letters per case (``plan._OTHER_LETTERS``), all in the BMP, their two cases 32
code points apart, each put in place of one letter: a program counting UTF-16 code units
(``a8_utf16_len_23``), flipping case by ``^ 32`` (``a8_xor32_flip_27``) or measuring words in UTF-8
bytes (``a16_longest_utf8_len``) agreed with the reference on every input of most seeds; and a bytes
value inside a list was never changed. p14/c14 add, from generators of their own, inputs with one or two
letters of Latin pairs, Greek, Cyrillic, Deseret or Adlam (``WIDER_LETTERS``: one-to-one case mappings
only, no sigma, no decomposition) and inputs with a whole word of one such script (its length in code
points kept), among the inputs that widen the cases' domain; and inputs with an element of a list of
bytes varied near the cases and past their longest. Every input p13/c13 draw stays, and runs of p13/c13
find their plans byte for byte."""

from __future__ import annotations

import json
import unicodedata

import pytest

from producers.ingest.jsonl import parse_line
from schemas.task import TaskPublished
from streams.noise.config import NoiseConfig
from streams.probe.plan import (
    _OTHER_LETTERS,
    BYTES_FAR_INPUTS,
    SEEDED_CHECK_PLAN_VERSION,
    SEEDED_PLAN_VERSION,
    SEEDED_VERSIONS,
    WIDER_LETTERS,
    ProbePlan,
    _plan,
)
from tests.hacks.fixtures import simulated_verdict
from tests.hacks.redteam.corpus import PROGRAMS
from tests.unit.plan_pins import args as _args
from tests.unit.plan_pins import assert_pinned_plans_found
from tests.unit.plan_pins import task as _task
from tests.unit.test_probe_wider import OPTS, SEEDS

MATRIX_SEED = "5eed" * 8
P13_SEEDS = ("00" * 16, MATRIX_SEED, "a7" * 16)
#: the generations of p13/c13 and p14/c14
P13 = 11
P14 = 12
CODE = {p.name: p.code for p in PROGRAMS}
FILTER = NoiseConfig().version
#: the three programs p13 accepted, and the task each is on
WRONG = {
    "a8_utf16_len_23": "HumanEval/23",
    "a8_xor32_flip_27": "HumanEval/27",
    "a16_longest_utf8_len": "redteam/longest_word",
}
STRING_TASKS = ("HumanEval/23", "HumanEval/27", "redteam/longest_word")
#: the corpus' correct programs on them (not those in syntax newer than the host's: run in-process here)
CORRECT = tuple(
    p.name for p in PROGRAMS if p.task in STRING_TASKS and p.kind == "correct" and "_ok_" in p.name
)

#: digests of p13/c13 plans drawn before p14/c14 existed (seeds P13_SEEDS)
P13_DIGESTS = {
    "HumanEval/0": (
        ("p13", "a59b34eeebb097efab358574787e2eb26f7d71925299371975d1deb607bdb618"),
        ("p13", "bd45e05cd9f3fd5fa38c7b40d51788957534ed1d621455ff542c5272c12d7d14"),
        ("p13", "98c5df87f0aeb0e77f7516c6385aeac646269836b1cef10824a669091648d37b"),
    ),
    "HumanEval/20": (
        ("p13", "255eec21ba93bbae2cd719a70651f27d0cb6c06ff849ce69975007ade9595eb3"),
        ("p13", "6481e4a2e9c8c9244320a69efd6f9c669eeb32fcc405398785a99de38702e337"),
        ("p13", "fb33ea6c02b8dd84f07ba1168582a19d1f830286986c3b582f68b01b287a032c"),
    ),
    "HumanEval/23": (
        ("p13", "d324a735197b444078e62fa08e6ba4d41aae8e4036d0cfa26bd94f1caab42f2a"),
        ("p13", "c339081f953a6a896d0aeb72bb0565e68f0acff4c29417149240a2657fdb4551"),
        ("p13", "7a7a7cd4909b7d8da47884ee69cd0bebe83bd8953c5d82f0775a8f33abac8fb4"),
    ),
    "HumanEval/27": (
        ("p13", "a5babaa8dbbff3604f998c7349f263ac9ad7e7873b90995a0ac7bdbf009fc9ad"),
        ("p13", "8c3a20be94f0bd69e7671d332cc79a5889d1f2c054e46a002d8e7c216f5d97a8"),
        ("p13", "539c80b52f58429164d166187d917d30cc1b0737dedf8dbc0df616c17e50776d"),
    ),
    "HumanEval/35": (
        ("p13", "0c5a0694d1b7ef53e0fd91251d57beb0e132c55d4f8ec99526eafaef9e446750"),
        ("p13", "117564af2f7579a7165e03dca4a5244a5f310cfebd6f5e16e8ee6e6f71d4ae12"),
        ("p13", "bde6f22972f09200b6395a12bbb1be8d701b96fa5153fb921d6a16dea5446780"),
    ),
    "HumanEval/72": (
        ("p13", "45cc3e18cab507f345648d3a3d3a23ee0bd1ca6e530a381347d4de11e27e25dc"),
        ("p13", "4ba446cac79a5769e4ee1a9d3c571b98d5272cf30ec0e623ab85e1c3a034874c"),
        ("p13", "13d938c9104625a003ab6fb6519761cf80df155ce6e2189b8f96285a24e1354e"),
    ),
    "HumanEval/111": (
        ("p13", "06856b75944d3901b461ce36b0ae3669871e27edc9750f7df3818db7af741b94"),
        ("p13", "3dd0b4524c5c774a3e8ebb4a40f0f740a815eee02afbf70efe5888f38f53ccf2"),
        ("p13", "a4267ab4a43b720fabb14c8903936999a12b62be7607a56d79fdb7344d5953d1"),
    ),
    "HumanEval/129": (
        ("c13", "8f800fe476406403e98cbc481f47fda350126bb677b09b31ff158f47705a5216"),
        ("c13", "1b9c4f842ec866de88938773472be429670abc8428d57d8fb5e1179afe71dcd0"),
        ("c13", "7db2f789f656d21a8a7364ea2f5d0585b2d9d79cd142fb8d20cff32252417cb8"),
    ),
    "HumanEval/141": (
        ("p13", "d40907cf7e2289e67fbc3652e00dccc06fce4a30ca0812f6b3c62262ae9f7f41"),
        ("p13", "8f0ed99f02e8c1b3420f6e685ef80fc662083be626ae2fe1d4b7eca89ae6e5e1"),
        ("p13", "226d0ba02728224ff9f28a6660748d7266eb9e086cc7c7799c9d102ce3a4b608"),
    ),
    "HumanEval/160": (
        ("p13", "c8110b3b6a7604aa678bd5162012557f951f8a2d37120955974bc54fd163e69f"),
        ("p13", "01e065586d3b76e29b7cc0c73a50c01f826bd183e6b7b9872820e672abd282b1"),
        ("p13", "123e996dcf4aec2fa5d3e472c2a1a305726c8b0bd82f6ecca19051e45a9f449d"),
    ),
    "redteam/xor_bytes": (
        ("p13", "36835da2f29bf4fc1918b66df7f825f52d021266e1fcbd5f16e8dc0d496af8ff"),
        ("p13", "ba22303a42f3378b661901cb4ecb897655624986f4a0dfce71c0bc988d8177d7"),
        ("p13", "3264d936d43bb832b4efc2171276536075ee59591848443482e052b229559c82"),
    ),
    "redteam/longest_word": (
        ("p13", "f983e9067045dd7e135e72e5f9e9613fb3e47997d47c1dd91c7901af9bce3832"),
        ("p13", "d1e543d081bed74ef66dd73e7c1cf3b0832bede5baf989809d61fd40db36a89c"),
        ("p13", "d655f55a483c95a2d4bef4ebb00462c7a61200b83713329db3f3cd3f4e9425c0"),
    ),
}
#: tasks of P13_DIGESTS whose arguments hold no cased letter and no list of bytes: p14 draws p13's inputs
UNCHANGED = ("HumanEval/0", "HumanEval/20", "HumanEval/35", "HumanEval/72", "HumanEval/129", "HumanEval/160")


def _plans(task: TaskPublished, seed: str) -> tuple[ProbePlan, ProbePlan]:
    new, old = _plan(task, seed, P14), _plan(task, seed, P13)
    assert new is not None and old is not None
    assert (new.version, old.version) in (("p14", "p13"), ("c14", "c13"))
    return new, old


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v)]
    return []


def _added(new: ProbePlan, old: ProbePlan) -> list[str]:
    return [text for text in new.inputs if text not in set(old.inputs)]


def test_runs_of_p13_and_c13_find_their_plans_byte_for_byte() -> None:
    assert SEEDED_VERSIONS[P13] == ("p13", "c13") and SEEDED_VERSIONS[P14] == ("p14", "c14")
    assert SEEDED_VERSIONS.index((SEEDED_PLAN_VERSION, SEEDED_CHECK_PLAN_VERSION)) > P14
    pinned = {task_id: [digest for _, digest in plans] for task_id, plans in P13_DIGESTS.items()}
    assert_pinned_plans_found(pinned, P13_SEEDS, P13)


@pytest.mark.parametrize("task_id", UNCHANGED)
def test_a_task_without_letters_or_lists_of_bytes_draws_p13s_inputs(task_id: str) -> None:
    for seed in (MATRIX_SEED, *SEEDS[:2]):
        new, old = _plans(_task(task_id), seed)
        assert new.inputs == old.inputs and new.far == old.far and new.wide == old.wide, seed


def test_the_wider_letters_have_one_to_one_cases_and_reach_past_the_bmp() -> None:
    for script, (lower, upper) in WIDER_LETTERS.items():
        assert len(lower) == len(upper) >= 6, script
        for lo, up in zip(lower, upper, strict=True):
            assert unicodedata.category(lo) == "Ll" and unicodedata.category(up) == "Lu", (script, lo)
            assert lo.upper() == up and up.lower() == lo and lo.swapcase() == up and up.swapcase() == lo
            assert lo.title() == up == up.title() and lo.casefold() == lo == up.casefold()
            assert not unicodedata.decomposition(lo) and not unicodedata.decomposition(up)
            assert ord(lo) > 0xFF and ord(up) > 0xFF and lo not in "σς" and up != "Σ"
    letters = "".join(lo + up for lo, up in WIDER_LETTERS.values())
    # what p13's letters all share, and the programs relying on it: each fails on some of these
    assert all(ord(c) < 0x100 and chr(ord(c) ^ 32) == c.swapcase() for c in "".join(_OTHER_LETTERS.values()))
    assert sum(chr(ord(c) ^ 32) != c.swapcase() for c in letters) > len(letters) // 2
    assert sum(ord(c) > 0xFFFF for c in letters) >= 100


@pytest.mark.parametrize("task_id", STRING_TASKS)
def test_every_p13_input_stays_and_strings_are_widened_past_latin_1_and_the_bmp(task_id: str) -> None:
    task = _task(task_id)
    for seed in (MATRIX_SEED, *SEEDS):
        new, old = _plans(task, seed)
        assert set(old.inputs) <= set(new.inputs), seed
        old_text = "".join(s for text in old.inputs for s in _strings(_args(text)))
        assert all(ord(c) < 0x100 for c in old_text), seed  # p13 drew Latin-1 letters only
        added = _added(new, old)
        assert added and all(new.inputs.index(text) in new.wide for text in added), seed
        texts = [s for text in added for s in _strings(_args(text))]
        assert any(ord(c) > 0xFFFF for s in texts for c in s), seed  # two UTF-16 units, four UTF-8 bytes
        assert any(c.isalpha() and chr(ord(c) ^ 32) != c.swapcase() for s in texts for c in s), seed
        # a whole word of wide letters: its length in code points kept, in UTF-8 bytes at least doubled
        shown = {s for c in (*task.tests, *task.hidden_tests) for s in _strings(_args(c.input))}
        words = {w for s in shown for w in s.split() if w.isalpha() and len(w) >= 2}
        assert (
            any(
                len(w) >= 2 and all(ord(c) > 0xFF for c in w) and len(w.encode()) >= 2 * len(w)
                for s in texts
                for w in s.split()
                if w.isalpha()
            )
            or not words
        ), seed


@pytest.mark.parametrize("name", WRONG)
def test_a_program_right_only_on_latin_1_letters_is_rejected(name: str) -> None:
    # accepted by p13 on 4/5 seeds (the UTF-8 one) or 5/5 (the other two): tests/hacks/redteam/run.py
    task = _task(WRONG[name])
    for seed in (MATRIX_SEED, *SEEDS[:4]):
        verdict, codes = simulated_verdict(task, CODE[name], seed=seed, version=FILTER, options=OPTS)
        assert verdict == "reject" and "wrong.disagrees_with_reference" in codes, (seed, codes)


@pytest.mark.parametrize("name", CORRECT)
def test_correct_programs_on_those_tasks_are_accepted_on_the_wider_letters(name: str) -> None:
    task = _task(next(p.task for p in PROGRAMS if p.name == name))  # type: ignore[arg-type]
    for seed in (MATRIX_SEED, *SEEDS[:4]):
        verdict, codes = simulated_verdict(task, CODE[name], seed=seed, version=FILTER, options=OPTS)
        assert verdict == "accept", (seed, codes)


# ------------------------------------------------------------------------------- bytes inside lists
JOIN_REF = '''def join_xor(chunks: list, key: int) -> bytes:
    """Every byte of every chunk xored with key, the chunks joined in order."""
    return b"".join(bytes(b ^ key for b in c) for c in chunks)
'''
JOIN_CASES = (
    ([b"ab", b"c"], 1),
    ([b"\x00\xff"], 2),
    ([b"hello", b"", b"x"], 3),
    ([b"\x10\x10", b"q"], 16),
    ([b"key", b"\x7fz"], 5),
)
#: right on the cases' chunks (five bytes at most), wrong on a longer one
JOIN_FIRST_FIVE = """def join_xor(chunks: list, key: int) -> bytes:
    return b"".join(bytes(b ^ key for b in c[:5]) for c in chunks)
"""
#: a chunk's trailing NUL bytes dropped: right on the cases' chunks (none ends with one)
JOIN_RSTRIP = """def join_xor(chunks: list, key: int) -> bytes:
    return b"".join(bytes(b ^ key for b in c.rstrip(b"\\x00")) for c in chunks)
"""
JOIN_OK = """def join_xor(chunks: list, key: int) -> bytes:
    out = bytearray()
    for chunk in chunks:
        out.extend(x ^ key for x in chunk)
    return bytes(out)
"""


def _join_task() -> TaskPublished:
    namespace: dict[str, object] = {}
    exec(JOIN_REF, namespace)
    fn = namespace["join_xor"]
    cases = [{"input": repr(c), "output": repr(fn(*c))} for c in JOIN_CASES]  # type: ignore[operator]
    body = {
        "task_id": "bytes17/join_xor",
        "prompt": JOIN_REF.split("    return")[0],
        "entry_point": "join_xor",
        "tests": cases[:3],
        "hidden_tests": cases[3:],
        "reference": JOIN_REF,
        "source": "redteam",
    }
    return parse_line(json.dumps(body))


def _chunks(plan: ProbePlan, *, far: bool) -> set[bytes]:
    return {
        chunk
        for pos, text in enumerate(plan.inputs)
        if (pos in plan.far) == far and isinstance(args := _args(text), tuple) and isinstance(args[0], list)
        for chunk in args[0]
    }


def test_bytes_inside_a_list_are_varied_near_the_cases_and_past_them() -> None:
    task = _join_task()
    shown = {chunk for case in JOIN_CASES for chunk in case[0]}
    assert all(len(c) <= 5 and not c.endswith(b"\x00") for c in shown)
    for seed in (MATRIX_SEED, *SEEDS[:4]):
        new, old = _plans(task, seed)
        assert set(old.inputs) <= set(new.inputs), seed
        assert _chunks(old, far=False) | _chunks(old, far=True) <= shown, seed  # p13 never varied one
        near = _chunks(new, far=False) - shown
        assert len(near) >= 6 and all(len(c) <= 5 for c in near), seed
        assert any(c.endswith(b"\x00") for c in near) and any(max(c, default=0) > 0x7F for c in near), seed
        far = _chunks(new, far=True) - shown
        assert len(far) >= BYTES_FAR_INPUTS and all(5 < len(c) <= 20 for c in far), seed


@pytest.mark.parametrize(
    ("code", "verdict"), [(JOIN_FIRST_FIVE, "reject"), (JOIN_RSTRIP, "reject"), (JOIN_OK, "accept")]
)
def test_a_program_wrong_only_on_other_chunks_is_rejected(code: str, verdict: str) -> None:
    task = _join_task()
    for seed in (MATRIX_SEED, *SEEDS[:4]):
        got, codes = simulated_verdict(task, code, seed=seed, version=FILTER, options=OPTS)
        assert got == verdict, (seed, codes)
