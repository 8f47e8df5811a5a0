"""Seeded probe plans p13/c13: a bytes argument is varied. Through p12/c12 ``_mutate`` returned a bytes
value as it was and the far inputs never lengthened one, so every generated input of redteam/xor_bytes
held one of its cases' five data values under another key, and a program wrong only on other data (past
the cases' 11 bytes, ending with a NUL byte, holding a byte past 0x7f, or a memo keyed by length and key)
was accepted on every seed (round 16's ``a16_xor_*``). p13/c13 draw, from a generator of their own, inputs
near the cases (a byte replaced, dropped, added, swapped, or a new value of a length the cases show; one
ending with a NUL and one holding a byte past 0x7f first) and longer than the cases' longest (up to
FAR_REACH times). Every input p12/c12 draw stays, and runs of p2 to p12 (c1 to c12) find their plans byte
for byte."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from producers.ingest.jsonl import parse_line
from schemas.task import TaskPublished
from streams.probe.plan import (
    _FAR_MAX_LENGTH,
    BYTES_FAR_INPUTS,
    FAR_REACH,
    SEEDED_VERSIONS,
    ProbePlan,
    _plan,
    plan_for,
    recorded_plan,
)
from tests.hacks.fixtures import simulated_verdict
from tests.hacks.redteam.corpus import PROGRAMS
from tests.unit.plan_pins import args as _args
from tests.unit.plan_pins import assert_pinned_plans_found
from tests.unit.plan_pins import task as _task
from tests.unit.test_probe_wider import OPTS, SEEDS

MATRIX_SEED = "5eed" * 8
P12_SEEDS = ("00" * 16, MATRIX_SEED, "a7" * 16)
#: the generations of p12/c12 and p13/c13
P12 = 10
P13 = 11
XOR = "redteam/xor_bytes"
#: the data the cases of redteam/xor_bytes pass (11 bytes at most)
XOR_DATA = {b"abc", b"", b"\x00\xff", b"hello world", b"\x10" * 5}
TASKS_JSONL = Path(__file__).resolve().parents[2] / "harness" / "redteam_tasks.jsonl"
CODE = {p.name: p.code for p in PROGRAMS}
WRONG_XOR = ("a16_xor_memo_len_key", "a16_xor_rstrip_nul", "a16_xor_long_data", "a16_xor_ascii_only")
CORRECT_XOR = tuple(p.name for p in PROGRAMS if p.task == XOR and p.kind == "correct")

#: digests of p12/c12 plans drawn before p13/c13 existed (seeds P12_SEEDS)
P12_DIGESTS = {
    "HumanEval/0": (
        "ee86fc36499a829014ade989435acc35e114a95f8d4665fc9de9af13bcc28947",
        "c70e30eff08e8de2c424339971b99224fd1db0ca89d6ea6b35757c5e4d5dff03",
        "e1c6fc293fec78dc757a367e5ffb582628367c9210b00927fdd97c66eff26ebd",
    ),
    "HumanEval/20": (
        "01c7401d94ffdd7786341b9b7eae6d612f6b929a91dd99d773d8a9107a1dbec1",
        "b15a039b857fbc2a68016cc07fe0f4e53cc3a3657d257e994cf8424d25b41d0c",
        "3dd158ec6c5f0ba201fbe1802d3ac199decb21871cc8df78e48d94a7d02f1493",
    ),
    "HumanEval/26": (
        "5d7c6ce5a83f5a3ed9ac675d5bb16d38369f479aa10cf21df31419b221b7cb3a",
        "fabd41ecf871866628e1e7ec1d03790298584d216959f28b6ffeae6b03ca5b06",
        "048d046aed6ad03af56d40cd80fb475872d87ebbb0a23283a796b5eb0fff3609",
    ),
    "HumanEval/35": (
        "bafc9b8f8e9f432266fdcd279df417b2ebfd5a7a44a57f657dc37b84f5602762",
        "f795a7267fab539d68c625839b6b7b408889b460301697eb3ffaa596bd1a38bb",
        "e8e85e1dd0c4c7a5b98d6f5abd89362c192776083b26f2c3013a46716df0ecd3",
    ),
    "HumanEval/37": (
        "cb3364f47222cb2f76d9e280ffdfe94f38f8ccdb2b583ac32d6373d8e613a49f",
        "eaa3f7bdbdc0ee0da9688fff7fd4817d169768ba5cc3739a2539c108d0d82a1b",
        "5718a7a7114cc3a70c7e15812fdf7f960e981806a221fed1d53d70ace83bb312",
    ),
    "HumanEval/72": (
        "a7d4fbc4b3d499211b216ec51c6932dc4334e55ee18fefb8dc013fe4e68dfd04",
        "88bd05fb8bfbcd37ac482475b7f0fa4fe0dfc3e5aa0776740fade48b3f1a48b3",
        "1796ea13c12627a4aafc4cda42ba28811b261f28e506de61df3d01e9ec6f3edb",
    ),
    "HumanEval/108": (
        "494f31caf7664faa029a5437ea8cadb221a7aea8416c3a22cfb6d84c524b1f4b",
        "b9370df3afbfda073a61b34e257b76a71da484a72cf2d3823608e31469885012",
        "72ab5d7d200fad6ad86a5d6c9ed5b31a6246830af08c3b78eb1503f65c107fb4",
    ),
    "HumanEval/129": (
        "2f39cb47aee204a8e43243e25b5538064cb5cbd5f70ba74d7062d8fa4e005694",
        "e680ce54be0835f9e9dfdc260978770e7083c5186cabb1f07bad975f773dd2be",
        "a8ddacee86c6f955a04c01d36d22fa78e4d47df8884b46291bbf0c8a267e7ad5",
    ),
    "HumanEval/160": (
        "da2549d1cb0db5d87dbc1e1083bf2172fcc60b4c1e604b6073f140cc68c91e9f",
        "b65aaf062909c7a427e46dd0b821b4c8954d0c9cef3a047530c60e185e88b998",
        "fd87740303681a53c18f2c42098e5b74c0b8f9bbabd1eedadce547ffe6aebd2f",
    ),
    "redteam/xor_bytes": (
        "6b2423c49c73fa689bd681ab9e88526d3c8615d56e1c3e9eb1a580a7561d3dca",
        "86dbb1604f99af28ea4c3353e3960534855460497731375eca244a7da9bd0585",
        "4ed73754338ef51be4454f049d4632df5f3da9f19bb8b4f30502cb8d50aebc7c",
    ),
}
#: every seeded generation of redteam/xor_bytes under MATRIX_SEED, drawn before p13/c13 existed
XOR_DIGESTS = (
    ("p3", "58ee1d2c2c85ce6331f50b9da07f35f1390be09e46c1e96453be4598a2752c7c"),
    ("p4", "dac98450efb34104dbd076b3273da89e40f18c3655bc33635995f2505cb7aebf"),
    ("p4", "dac98450efb34104dbd076b3273da89e40f18c3655bc33635995f2505cb7aebf"),
    ("p5", "26f778e4b8ce926e591c252d6eb6216197a48cf161740a0943d5bccce4e6cce8"),
    ("p6", "94a839274b71159611d5a4acf3b599c8b8878755d0bb6973c7c94db4ad8474d2"),
    ("p7", "9b5eeca81335d0b23d95291d237bccd5ec824a2ffc3b792e8ec42e3d72f05e5e"),
    ("p8", "21e553bf74a5391d734e1c3307cf87e62a038acfc676d327b26d668ae9bc50cd"),
    ("p9", "c72477fbb78a565acd74c5969f3c93cf0952caa8763e96611020e3a4dcce2612"),
    ("p10", "3d59aeacea6974ba2de4aa46749f77bfe7015e9d8e6a0f1ce7ce6835cfd52d72"),
    ("p11", "11674f782d5f598994ff9de1a1a23635ce1c7b343a906f25f57f948c0eb5d8c4"),
    ("p12", "86dbb1604f99af28ea4c3353e3960534855460497731375eca244a7da9bd0585"),
)
XOR_UNSEEDED = "fa7b8f825f8e529db88adbb6c5bc5d3e524b882d73644b133ac35b97be540f98"


def _plans(task: TaskPublished, seed: str) -> tuple[ProbePlan, ProbePlan]:
    new, old = _plan(task, seed, P13), _plan(task, seed, P12)
    assert new is not None and old is not None
    assert (new.version, old.version) in (("p13", "p12"), ("c13", "c12"))
    return new, old


def _data(plan: ProbePlan, *, far: bool) -> list[tuple[bytes, int]]:
    """The (data, key) of the plan's inputs near the cases (or, with ``far``, beyond them)."""
    return [
        (args[0], args[1])  # type: ignore[misc]
        for pos, text in enumerate(plan.inputs)
        if (pos in plan.far) == far and isinstance((args := _args(text))[0], bytes)
    ]


def test_runs_of_p12_and_c12_find_their_plans_byte_for_byte() -> None:
    assert_pinned_plans_found(P12_DIGESTS, P12_SEEDS, P12)


def test_every_older_generation_of_the_bytes_task_is_drawn_as_before() -> None:
    task = _task(XOR)
    assert SEEDED_VERSIONS[len(XOR_DIGESTS)] == ("p13", "c13")
    for generation, (version, digest) in enumerate(XOR_DIGESTS):
        plan = _plan(task, MATRIX_SEED, generation)
        assert plan is not None and (plan.version, plan.digest) == (version, digest)
        assert recorded_plan(task, MATRIX_SEED, digest) == plan
    unseeded = plan_for(task)
    assert unseeded is not None and (unseeded.version, unseeded.digest) == ("p2", XOR_UNSEEDED)


@pytest.mark.parametrize("task_id", [t for t in P12_DIGESTS if t != XOR])
def test_a_task_without_bytes_draws_p12s_inputs(task_id: str) -> None:
    for seed in (MATRIX_SEED, *SEEDS[:2]):
        new, old = _plans(_task(task_id), seed)
        assert new.inputs == old.inputs and new.far == old.far and new.mirrors == old.mirrors, seed


def test_every_input_p12_draws_stays_and_the_data_is_varied_near_and_far() -> None:
    task = _task(XOR)
    for seed in (*P12_SEEDS, *SEEDS):
        new, old = _plans(task, seed)
        assert set(old.inputs) <= set(new.inputs), seed
        assert {d for d, _ in _data(old, far=False)} <= XOR_DATA, seed  # p12 never varied the data
        near = [(d, k) for d, k in _data(new, far=False) if d not in XOR_DATA]
        assert len(near) >= 6, seed
        assert all(len(d) <= 11 for d, _ in near), seed
        # a NUL at the end, a byte past 0x7f in other data than the one case holding one
        assert any(d.endswith(b"\x00") for d, _ in near), seed
        assert any(max(d, default=0) > 0x7F and d != b"\x00\xff" for d, _ in near), seed
        # the length and the key of a case with other data: a memo under (len(data), key) answers wrong
        shown = [_args(c.input) for c in (*task.tests, *task.hidden_tests)]
        cases = {(len(d), k) for d, k in shown if isinstance(d, bytes)}
        assert any((len(d), k) in cases for d, k in near), seed
        far = [d for d, _ in _data(new, far=True) if d not in XOR_DATA]
        assert len(far) == BYTES_FAR_INPUTS, seed
        assert all(11 < len(d) <= min(FAR_REACH * 11, _FAR_MAX_LENGTH) for d in far), seed


def _printable_task() -> TaskPublished:
    """redteam/xor_bytes with cases of printable ASCII data only, under a task id of its own."""
    line = next(x for x in TASKS_JSONL.read_text("utf-8").splitlines() if f'"{XOR}"' in x)
    task = json.loads(line)
    task["task_id"] = "bytes16/printable"
    task["tests"] = [
        {"input": "(b'abc', 1)", "output": "b'`cb'"},
        {"input": "(b'hi there', 2)", "output": "b'jk\"vjgpg'"},
    ]
    task["hidden_tests"] = [{"input": "(b'Zz 09', 3)", "output": "b'Yy#3:'"}]
    return parse_line(json.dumps(task))


def test_printable_cases_keep_their_varied_bytes_printable() -> None:
    task = _printable_task()
    for seed in (MATRIX_SEED, *SEEDS[:3]):
        new, old = _plans(task, seed)
        shown = {d for d, _ in (_args(c.input) for c in (*task.tests, *task.hidden_tests))}
        assert {d for far in (False, True) for d, _ in _data(old, far=far)} <= shown, seed
        varied = {d for far in (False, True) for d, _ in _data(new, far=far)} - shown
        assert len(varied) >= 8, seed
        assert all(0x20 <= b < 0x7F for d in varied for b in d), seed


@pytest.mark.parametrize("name", WRONG_XOR)
def test_a_program_wrong_only_on_other_data_is_rejected(name: str) -> None:
    # accepted on every seed by p12 (every generated input held one of the cases' five data values)
    task = _task(XOR)
    for seed in (MATRIX_SEED, *SEEDS[:4]):
        verdict, codes = simulated_verdict(task, CODE[name], seed=seed, version="v16", options=OPTS)
        assert verdict == "reject" and "wrong.disagrees_with_reference" in codes, (seed, codes)


@pytest.mark.parametrize("name", CORRECT_XOR)
def test_correct_bytes_programs_are_accepted_on_the_varied_data(name: str) -> None:
    task = _task(XOR)
    for seed in (MATRIX_SEED, *SEEDS[:4]):
        verdict, codes = simulated_verdict(task, CODE[name], seed=seed, version="v16", options=OPTS)
        assert verdict == "accept", (seed, codes)
