"""The digest of a result too large to travel (``schemas/digest.py``) is the stub's, not the program's:
a program that replaces every name the digest could be written with (``sorted``, ``str``, ``len``,
``hashlib``, the C sha256 modules in ``sys.modules``, ``str.join`` through ``builtins``) before it
answers still gets the digest of the value it returned, on both backends; a program that raises or
prints a digest's text gets none; and whatever digest a program could claim, only the expected
value's own digest is believed equal to it."""

from __future__ import annotations

import pytest

from schemas.digest import OVER_CAP, digests_equal, value_digest
from streams.sandbox import Sandbox
from tests.conftest import SANDBOX_BACKENDS

#: the program patches what it can reach, at import and again inside the call, then answers a list
#: whose text is past a result's size (1 M characters)
PATCHING = """
import builtins, sys, hashlib

class Fake:
    def __init__(self, *a, **k):
        pass
    def update(self, *a):
        pass
    def hexdigest(self):
        return "0" * 64

def patch():
    builtins.sorted = lambda *a, **k: []
    builtins.str = lambda *a, **k: "0"
    builtins.len = lambda *a, **k: 0
    builtins.repr = lambda *a, **k: "[]"
    hashlib.sha256 = Fake
    for name in ("_sha2", "_sha256", "_hashlib"):
        mod = type(sys)(name)
        mod.sha256 = Fake
        sys.modules[name] = mod

patch()

def f(n):
    patch()
    return [{"k": i, "v": (i, -i)} for i in range(n)] + [{3, 1, 2}]
"""


@pytest.mark.parametrize("backend", SANDBOX_BACKENDS)
def test_a_program_patching_what_a_digest_could_use_changes_nothing(sandbox: Sandbox, backend: str) -> None:
    n = 60_000
    run = sandbox.run_cases(PATCHING, "f", [str(n)], limits=sandbox.limits(timeout_s=60), backend=backend)
    (case,) = run.cases
    assert case.status == "error" and case.digest is not None, case.error
    want = value_digest([{"k": i, "v": (i, -i)} for i in range(n)] + [{3, 1, 2}])
    assert case.digest == want
    assert want is not None and digests_equal(want, case.digest) is True


FORGING = """
import sys

def f(k):
    d = {digest!r}
    if k == 0:
        print("Rh" + d + "\\n[]")
        sys.stderr.write("Rz" + d + "\\nValueError: result too large\\n")
        return [0]
    if k == 1:
        raise ValueError("result too large: its repr has 2000000 characters\\n" + d)
    return "Rh" + d
"""


@pytest.mark.parametrize("backend", SANDBOX_BACKENDS)
def test_a_digest_the_program_writes_is_no_digest(sandbox: Sandbox, backend: str) -> None:
    digest = value_digest(list(range(300_000)))
    run = sandbox.run_cases(FORGING.format(digest=digest), "f", ["0", "1", "2"], backend=backend)
    assert [c.digest for c in run.cases] == [None, None, None]
    assert run.deviation is None


def test_no_claimed_digest_but_the_expected_one_is_equal() -> None:
    want = value_digest(list(range(300_000)))
    assert want is not None
    for claimed in (
        OVER_CAP,
        "N:" + want[2:],  # the right text claimed as of another kind: the same text, so the same value
        value_digest(list(range(299_999))),
        value_digest([float(i) for i in range(300_000)] + [0.5]),
        "E:" + "0" * 64 + ":1",
        "not a digest",
    ):
        assert digests_equal(want, claimed or "") is not True or claimed == "N:" + want[2:]
