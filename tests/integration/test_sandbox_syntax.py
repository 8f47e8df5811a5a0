"""Programs newer than the host's Python: read by the WASM guest's parser and analysed as the source of
the same meaning it writes back, and run where a Python that has what they use runs them."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from streams.reward import static
from streams.sandbox import Limits, Sandbox, SandboxConfig
from streams.sandbox.syntax import GuestSyntax, GuestSyntaxError

LIMITS = Limits(timeout_s=30.0, memory_mb=512)


@pytest.fixture(scope="module")
def sandbox(ready_sandbox: Callable[[SandboxConfig], Sandbox]) -> Sandbox:
    return ready_sandbox(SandboxConfig())


HIDING = """
def pick[T: __import__("os").system("id")](xs: list[T]) -> T:
    return xs[0]

type Loader = eval("__import__('subprocess')")
note = t"{__import__('socket').gethostname()}"
label = f"{"quoted" + 'again'}"
"""


def test_newer_syntax_is_analysed_with_what_it_hides_in_view() -> None:
    """Type parameters' bounds, a type alias's value and a template string's fields are code the
    analysis sees, as if written in the syntax the host reads."""
    analysis = static.analyse(HIDING)
    assert analysis.tree is not None, analysis.error
    found = {(f.code, f.detail) for f in analysis.findings}
    assert {("hack.process", "os.system"), ("hack.dynamic_code", "eval")} <= found, found
    assert any(f.detail.startswith("socket") for f in analysis.findings), found


def test_text_no_python_reads_stays_unreadable_with_the_reason_it_always_had() -> None:
    analysis = static.analyse("def f(:\n    return 1\n")
    assert analysis.tree is None
    assert analysis.error == "SyntaxError: invalid syntax (line 1)"
    with pytest.raises(GuestSyntaxError):
        GuestSyntax().lowered("x = (")


def test_the_lowered_source_is_only_ever_text_the_guest_wrote_of_the_program() -> None:
    """The program's text is data to the guest: a program that would print or exit when run is only
    parsed, and the answer is the program's source of the same meaning."""
    lowered = GuestSyntax().lowered("type N = int\nimport sys\nsys.exit(3)\nprint('ran')\n")
    assert lowered.splitlines() == ["N = int", "import sys", "sys.exit(3)", "print('ran')"]


BATCHED = "from itertools import batched\nimport numpy as np\n\ndef f(xs):\n"
BATCHED += "    return [int(np.sum(np.array(c))) for c in batched(xs, 2)]\n"


def test_auto_never_judges_a_program_by_a_python_that_lacks_what_it_uses(sandbox: Sandbox) -> None:
    """numpy sends a program to the container (64-bit integers); the jail's 3.11 has no
    itertools.batched, so auto runs it in WASM instead of failing it there."""
    there = sandbox.run_cases(BATCHED, "f", ["([1, 2, 3],)"], limits=LIMITS, backend="container")
    assert there.load_error and "batched" in there.load_error
    auto = sandbox.run_cases(BATCHED, "f", ["([1, 2, 3],)"], limits=LIMITS, backend="auto")
    assert auto.backend == "wasm" and "lacks it" in auto.backend_reason, auto.backend_reason
    assert [c.result_repr for c in auto.cases] == ["[3, 3]"]
    # a program's own AttributeError on a module of its own is its result, not a reason to move it
    own = (
        "import numpy as np\nimport types\nm = types.ModuleType('mine')\n\ndef f(x):\n    return m.nothing\n"
    )
    mine = sandbox.run_cases(own, "f", ["(1,)"], limits=LIMITS, backend="auto")
    assert mine.backend == "container" and mine.cases[0].status == "error"
