"""A caller keeps the answer it got: an answer object the program changes after its call returned is
that call's failure (the stub reads every kept answer again after the next call, at random after
later ones and after the last call, by references the program cannot patch;
``protocol.CHANGED_AFTER_RETURN``), on both backends, an equal value of another type included. Fresh
answers, one cached answer object handed out again unchanged, and one whose dict keys or set items only
came to another order, read the same and pass."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from streams.sandbox import Limits, Sandbox, SandboxConfig
from streams.sandbox.protocol import CHANGED_AFTER_RETURN
from streams.sandbox.result import Job

BACKENDS = ["wasm", "container"]
LIMITS = Limits(timeout_s=30.0, memory_mb=512)
INPUTS = ("([3, 1, 2],)", "([5, 9, 4],)", "([3, 1, 2],)", "([],)")

#: one module-level list refilled by every call (red-team a20_reused_buffer_58)
REUSED_BUFFER = """
_buf = []


def f(xs):
    _buf.clear()
    _buf.extend(sorted(xs))
    return _buf
"""
#: the answer is fresh, but the list inside it is shared and refilled
NESTED_BUFFER = """
_buf = []


def f(xs):
    _buf[:] = sorted(xs)
    return {"sorted": _buf, "n": len(xs)}
"""
#: keeps every answer it gave and appends to them on the next call
SPOILS_EARLIER = """
_given = []


def f(xs):
    for g in _given:
        g.append(0)
    out = sorted(xs)
    _given.append(out)
    return out
"""
RARE_FLIP = """
_given = []
_flipped = []


def f(xs):
    while _flipped:
        _flipped.pop().reverse()
    if len(_given) >= 20 and len(_given) % 10 == 0:
        _given[-3].reverse()
        _flipped.append(_given[-3])
    out = sorted(xs)
    _given.append(out)
    return out
"""
#: changes the previous call's answer during the next call and puts it back during the one after: the
#: caller holding it between those two calls reads another value
SPOILS_AND_RESTORES = """
_last = []


def f(xs):
    if _last:
        prev, spoiled = _last[-1], _last[-2] if len(_last) > 1 else None
        if spoiled is not None:
            spoiled.reverse()
        prev.reverse()
    out = sorted(xs)
    _last.append(out)
    return out
"""
#: the previous answer's ints become equal floats, or its counts of 1 become True: == to the copy
#: made at return, but a caller holding it reads another type (red-team a21_int_to_float_after_58,
#: a21_true_for_one_after_111)
TO_FLOAT = """
_last = []


def f(xs):
    for ans in _last:
        ans[:] = [float(x) for x in ans]
    _last.clear()
    out = sorted(xs)
    _last.append(out)
    return out
"""
TO_TRUE = """
_last = []


def f(xs):
    for ans in _last:
        for k in ans:
            if ans[k] == 1:
                ans[k] = True
    _last.clear()
    out = {x: 1 for x in xs}
    _last.append(out)
    return out
"""
#: an older answer changed while one later call runs, put back by the call after it: never the previous
#: call's answer and never at the end (red-team a21_older_answer_flip_58): many calls, each flips the
#: answer three calls back for one call
OLDER_FLIP = """
_given = []
_flipped = []


def f(xs):
    while _flipped:
        _flipped.pop().reverse()
    if len(_given) >= 3 and len(_given[-3]) > 1 and len(xs) > 1:
        _given[-3].reverse()
        _flipped.append(_given[-3])
    out = sorted(xs)
    _given.append(out)
    return out
"""
PURE = "def f(xs):\n    return sorted(xs)\n"
#: one answer object per question, handed out again unchanged (a memo cache: common in correct code)
MEMO = """
_made = {}


def f(xs):
    key = tuple(xs)
    if key not in _made:
        _made[key] = sorted(xs)
    return _made[key]
"""
#: the first answer is a dict later calls order anew (its first key moved last), its value unchanged
REORDERED = """
_d = {}


def f(xs):
    if not _d:
        _d.update({3: 1, 1: 1, 2: 1})
        return _d
    if xs:
        k = next(iter(_d))
        _d[k] = _d.pop(k)
    return sorted(xs)
"""
#: the first answer is a set later calls grow and shrink back: the same items, which a set resized on
#: the way iterates in another order (its text differs)
REGROWN_SET = """
_s = set()


def f(xs):
    if not _s:
        _s.update([8, 16, 1, 9])
        return _s
    extra = range(100, 140)
    _s.update(extra)
    _s.difference_update(extra)
    return sorted(xs)
"""
#: sorts its argument in place and returns it: the probe's caller refills that very list for the
#: next call (its own doing, never the program's)
IN_PLACE = "def f(xs):\n    xs.sort()\n    return xs\n"


@pytest.fixture(scope="module")
def sandbox(ready_sandbox: Callable[[SandboxConfig], Sandbox]) -> Sandbox:
    return ready_sandbox(SandboxConfig())


def _run(
    sandbox: Sandbox, code: str, backend: str, *, caller: bool = False, inputs: tuple[str, ...] = INPUTS
) -> list[str | None]:
    job = Job(mode="cases", code=code, entry_point="f", inputs=inputs, limits=LIMITS, caller=caller)
    r = sandbox.execute(job, backend)  # type: ignore[arg-type]
    assert r.infra_error is None, r.infra_error
    assert r.deviation is None, r.deviation
    assert r.backend == backend
    return [
        c.result_repr if c.status == "ok" else ("changed" if c.error == CHANGED_AFTER_RETURN else c.error)
        for c in r.cases
    ]


@pytest.mark.parametrize("caller", [False, True])
@pytest.mark.parametrize("backend", BACKENDS)
def test_an_answer_changed_by_a_later_call_fails_that_call(
    sandbox: Sandbox, backend: str, caller: bool
) -> None:
    # read when each call returned, every answer was right; a caller holding one reads the last call's
    assert _run(sandbox, REUSED_BUFFER, backend, caller=caller) == ["changed", "changed", "changed", "[]"]
    assert _run(sandbox, NESTED_BUFFER, backend, caller=caller) == [
        "changed",
        "changed",
        "changed",
        "{'sorted': [], 'n': 0}",
    ]
    assert _run(sandbox, SPOILS_EARLIER, backend, caller=caller) == ["changed", "changed", "changed", "[]"]
    # read again right after the next call too, not only after the last: a change undone later shows
    assert _run(sandbox, SPOILS_AND_RESTORES, backend, caller=caller) == [
        "changed",
        "changed",
        "changed",
        "[]",
    ]


@pytest.mark.parametrize("caller", [False, True])
@pytest.mark.parametrize("backend", BACKENDS)
def test_fresh_and_unchanged_answers_pass(sandbox: Sandbox, backend: str, caller: bool) -> None:
    want = ["[1, 2, 3]", "[4, 5, 9]", "[1, 2, 3]", "[]"]
    assert _run(sandbox, PURE, backend, caller=caller) == want
    assert _run(sandbox, MEMO, backend, caller=caller) == want
    # a probe run refills the argument objects it handed; an answer that is one of them is not the
    # program's to keep unchanged
    assert _run(sandbox, IN_PLACE, backend, caller=caller) == want
    # the same value with its keys in another order is the same answer (dict == dict)
    assert _run(sandbox, REORDERED, backend, caller=caller) == ["{3: 1, 1: 1, 2: 1}", *want[1:]]


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_equal_value_of_another_type_is_a_change(sandbox: Sandbox, backend: str) -> None:
    # 1 -> 1.0 and 1 -> True are == to the copy made at return; the caller reads the other type
    assert _run(sandbox, TO_FLOAT, backend) == ["changed", "changed", "changed", "[]"]
    assert _run(sandbox, TO_TRUE, backend) == ["changed", "changed", "changed", "{}"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_older_answer_changed_and_put_back_is_seen(sandbox: Sandbox, backend: str) -> None:
    # 100 calls: the answer three calls back is reversed during one call and put back during the next,
    # so neither the read right after the next call nor the one at the end sees it; the answers read
    # again at random after each call do (2 of the m kept older than the previous, all while m <= 2:
    # a flip on every call from the fifth on is missed throughout with odds under 1 in 4,000)
    inputs = tuple(f"([{i % 7}, {i}, {-i}],)" for i in range(100))
    got = _run(sandbox, OLDER_FLIP, backend, inputs=inputs)
    assert got.count("changed") >= 1
    assert all(g == "changed" or g == repr(sorted([i % 7, i, -i])) for i, g in enumerate(got))


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_older_answer_changed_now_and_then_is_seen(sandbox: Sandbox, backend: str) -> None:
    # 200 calls: on every tenth call from the twentieth on, the answer three calls back is reversed for
    # one call; a handful of such changes in a long run, each seen only if a random read picks it then.
    # The reads are bounded by what they cost, not by count: lists of three numbers are read ~40 at a
    # time (all of them while fewer are kept), so the first changes are seen for sure and each later
    # one with odds over 1/5; two reads a call (red-team a23_stack_no_random_reads_58 got past them)
    # missed all 18 with odds ~0.6
    inputs = tuple(f"([{i % 7}, {i}, {-i}],)" for i in range(200))
    got = _run(sandbox, RARE_FLIP, backend, inputs=inputs)
    assert got.count("changed") >= 1
    assert all(g == "changed" or g == repr(sorted([i % 7, i, -i])) for i, g in enumerate(got))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_set_iterating_in_another_order_is_the_same_answer(sandbox: Sandbox, backend: str) -> None:
    # the reason an order may move: a set grown and shrunk back iterates anew, a dict reorders its
    # keys; the same values of the same types are the same answer
    got = _run(sandbox, REGROWN_SET, backend)
    assert got[0] is not None and got[0] != "changed"
    assert eval(got[0]) == {1, 8, 9, 16}
    assert got[1:] == ["[4, 5, 9]", "[1, 2, 3]", "[]"]


# -- answers of the other types the stub reads (red-team a22_userlist_buffer_30/_33) -------------------
#: one shared object of each kind, refilled by every call and handed out as every answer
SHARED = {
    "UserList": "from collections import UserList\n_buf = UserList()\n\n\ndef f(xs):\n"
    "    _buf.data[:] = sorted(xs)\n    return _buf\n",
    "UserList, its data swapped": "from collections import UserList\n_buf = UserList()\n\n\ndef f(xs):\n"
    "    _buf.data = sorted(xs)\n    return _buf\n",
    "bytearray": "_buf = bytearray()\n\n\ndef f(xs):\n    _buf[:] = bytes(sorted(xs))\n    return _buf\n",
    "array": "from array import array\n_buf = array('q')\n\n\ndef f(xs):\n"
    "    _buf[:] = array('q', sorted(xs))\n    return _buf\n",
    "Fraction": "from fractions import Fraction\n_buf = Fraction(0)\n\n\ndef f(xs):\n"
    "    _buf._numerator = sum(xs)\n    return _buf\n",
    # the answer holds the caller's argument (its part is the caller's) and a shared list (the program's)
    "dict holding the argument": "_buf = []\n\n\ndef f(xs):\n    _buf[:] = sorted(xs)\n"
    "    return {'in': xs, 'out': _buf}\n",
}
#: the same kinds, a fresh object per call, or one per question handed out again unchanged
LEFT_ALONE = {
    "UserList": "from collections import UserList\n\n\ndef f(xs):\n    return UserList(sorted(xs))\n",
    "bytearray": "_made = {}\n\n\ndef f(xs):\n"
    "    return _made.setdefault(tuple(xs), bytearray(sorted(xs)))\n",
    "array": "from array import array\n\n\ndef f(xs):\n    return array('q', sorted(xs))\n",
    "Fraction": "from fractions import Fraction\n\n\ndef f(xs):\n    return Fraction(sum(xs))\n",
    # the caller's argument inside the answer: the caller refills it, the program never changes it
    "dict holding the argument": "def f(xs):\n    return {'in': xs, 'out': sorted(xs)}\n",
    "UserList over the argument": "from collections import UserList\n\n\ndef f(xs):\n    xs.sort()\n"
    "    u = UserList()\n    u.data = xs\n    return u\n",
}


@pytest.mark.parametrize("caller", [False, True])
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind", sorted(SHARED))
def test_a_shared_answer_of_another_type_refilled_later_is_a_change(
    sandbox: Sandbox, backend: str, caller: bool, kind: str
) -> None:
    # a probe run's second half (caller=True, calls 1-3: their argument objects are refilled by the
    # caller) keeps these answers too: the program's shared object is read again like a list
    got = _run(sandbox, SHARED[kind], backend, caller=caller)
    assert got[:3] == ["changed", "changed", "changed"], got
    assert got[3] != "changed"


@pytest.mark.parametrize("caller", [False, True])
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind", sorted(LEFT_ALONE))
def test_an_answer_of_another_type_left_alone_passes(
    sandbox: Sandbox, backend: str, caller: bool, kind: str
) -> None:
    sort = ["[1, 2, 3]", "[4, 5, 9]", "[1, 2, 3]", "[]"]
    want = {
        "UserList": sort,
        "UserList over the argument": sort,
        "bytearray": ["b'\\x01\\x02\\x03'", "b'\\x04\\x05\\t'", "b'\\x01\\x02\\x03'", "b''"],
        "array": [f"array('q', {x})" for x in sort],
        "Fraction": ["Fraction(6, 1)", "Fraction(18, 1)", "Fraction(6, 1)", "Fraction(0, 1)"],
        "dict holding the argument": [
            "{'in': [3, 1, 2], 'out': [1, 2, 3]}",
            "{'in': [5, 9, 4], 'out': [4, 5, 9]}",
            "{'in': [3, 1, 2], 'out': [1, 2, 3]}",
            "{'in': [], 'out': []}",
        ],
    }
    assert _run(sandbox, LEFT_ALONE[kind], backend, caller=caller) == want[kind]


#: a dict's keys view answers as the set of its keys: a view of the caller's argument (which the
#: caller refills) is the caller's, a view of one dict of the program's refilled by every call is not
VIEW_OF_ARGUMENT = "def f(d):\n    return d.keys()\n"
VIEW_OF_SHARED = "_d = {}\n\n\ndef f(d):\n    _d.clear()\n    _d.update(d)\n    return _d.keys()\n"
DICT_INPUTS = ("({3: 1, 1: 2},)", "({5: 0},)", "({2: 2, 7: 1},)", "({},)")


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_dict_view_is_read_through_its_dict(sandbox: Sandbox, backend: str) -> None:
    assert _run(sandbox, VIEW_OF_ARGUMENT, backend, caller=True, inputs=DICT_INPUTS) == [
        "{1, 3}",
        "{5}",
        "{2, 7}",
        "set()",
    ]
    got = _run(sandbox, VIEW_OF_SHARED, backend, caller=True, inputs=DICT_INPUTS)
    assert got == ["changed", "changed", "changed", "set()"]
