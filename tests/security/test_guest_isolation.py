"""What a program can reach inside its own guest, on both backends: the stub's frames and channel, the
call interface's messages, the timings, the labels, and the check of check mode. The programs are
generated (tests/security/attacks.py): names assembled at run time, several routes to a frame,
several things done there, forged message shapes, fake label texts, equality tricks. The walls are
the host's: a wrong program never passes, the host never crashes, labels and timings are the
host's own."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schemas.rollout import SandboxExecuted
from schemas.task import TaskPublished, TestCase
from streams.noise.config import NoiseConfig
from streams.noise.filter import decide
from streams.reward.literals import CompareOptions
from streams.sandbox import ExecutionResult, Limits, Sandbox, to_event
from tests.security.attacks import check_tricks, fake_labels, forged_messages, frame_attacks

BACKENDS = ["wasm", "container"]
LIMITS = Limits(timeout_s=3.0, memory_mb=192, output_bytes=16 * 1024, pids=24, tmpfs_mb=4, file_mb=2)
#: inputs and sums the attacking programs never compute (they return a - b + 1000)
INPUTS = ["(1, 2)", "(4938271605, 4938271605)", "(-7, 3)"]
EXPECTED = ["3", "9876543210", "-4"]
CHECK = (
    "def check(candidate):\n"
    "    assert candidate(1, 2) == 3\n"
    "    assert candidate(4938271605, 4938271605) == 9876543210\n"
    "    assert abs(candidate(-7, 3) - (-4)) < 1e-9\n"
)
#: labels only the host gives: a program must never be able to set them
HOST_LABELS = {"output_limit", "pids_limit", "stack_overflow", "file_size_limit", "disk_full"}


def both_modes(sandbox: Sandbox, code: str, backend: str) -> tuple[ExecutionResult, ExecutionResult]:
    cases = sandbox.run_cases(code, "add", INPUTS, limits=LIMITS, backend=backend)
    check = sandbox.run_check(code, CHECK, "add", limits=LIMITS, backend=backend)
    for r in (cases, check):
        assert r.infra_error is None, r.infra_error
    return cases, check


def assert_not_passed(cases: ExecutionResult, check: ExecutionResult) -> None:
    got = [c.result_repr if c.status == "ok" else None for c in cases.cases]
    assert got != EXPECTED, got
    assert check.check_passed is False, check.cases
    for text in (cases.stdout, cases.stderr, check.stdout, check.stderr):
        assert "9876543210" not in text  # an expected value never enters the program's guest


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("name", "code"), frame_attacks(seed=14, n=10))
def test_reaching_the_stubs_frames_never_turns_a_wrong_program_into_a_pass(
    sandbox: Sandbox, backend: str, name: str, code: str
) -> None:
    cases, check = both_modes(sandbox, code, backend)
    assert_not_passed(cases, check)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("name", "code"), list(forged_messages()))
def test_forged_messages_are_deviations_never_passes_or_host_crashes(
    sandbox: Sandbox, backend: str, name: str, code: str
) -> None:
    cases, check = both_modes(sandbox, code, backend)
    assert_not_passed(cases, check)
    for r in (cases, check):
        assert not HOST_LABELS & set(r.violations), r.violations
    if name not in ("torn-frame",):  # a torn frame leaves the host waiting: it times out instead
        assert "harness_tamper" in cases.violations, (cases.violations, cases.cases)
        assert cases.deviation


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(message=st.binary(max_size=256))
def test_any_bytes_through_the_wasm_door_fail_the_run_not_the_host(sandbox: Sandbox, message: bytes) -> None:
    code = f"def add(a, b):\n    __import__('_host').call({message!r})\n    return a - b + 1000\n"
    r = sandbox.run_cases(code, "add", INPUTS, limits=LIMITS, backend="wasm")
    assert r.infra_error is None
    assert [c.result_repr for c in r.cases] != EXPECTED
    assert len(r.cases) == len(INPUTS)
    to_event(r, sample_id="s", group_id="g", task_id="t")  # a valid event whatever the guest said


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("name", "code"), list(check_tricks()))
def test_check_mode_compares_plain_values_in_a_world_the_program_never_touched(
    sandbox: Sandbox, backend: str, name: str, code: str
) -> None:
    cases, check = both_modes(sandbox, code, backend)
    assert_not_passed(cases, check)
    assert all(c.status != "ok" or c.result_repr != e for c, e in zip(cases.cases, EXPECTED, strict=True))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_redefined_prompt_helper_does_not_reach_the_check(sandbox: Sandbox, backend: str) -> None:
    prompt = (
        "def encode(s: str) -> str:\n    return s[::-1] + '!'\n\n"
        "def decode(s: str) -> str:\n    '''Invert encode.'''\n"
    )
    check = (
        "def check(candidate):\n    for w in ['abc', 'xyz', '']:\n        assert candidate(encode(w)) == w\n"
    )
    cheat = (
        prompt + "    return s\n\ndef encode(s):\n    return s\n"
    )  # the program's own encode is the identity
    honest = prompt + "    return s[:-1][::-1]\n"
    bad = sandbox.run_check(cheat, check, "decode", prelude=prompt, limits=LIMITS, backend=backend)
    good = sandbox.run_check(honest, check, "decode", prelude=prompt, limits=LIMITS, backend=backend)
    assert bad.check_passed is False and good.check_passed is True, (bad.cases, good.cases)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_check_that_catches_exceptions_cannot_be_steered_by_the_program(
    sandbox: Sandbox, backend: str
) -> None:
    # a check expecting a ValueError for bad input, and one that folds results with all(map(...))
    check = (
        "def check(candidate):\n"
        "    try:\n"
        "        candidate(-1, 0)\n"
        "        raise AssertionError('no error for bad input')\n"
        "    except (ValueError, TypeError):\n"
        "        pass\n"
        "    assert all(map(lambda p: candidate(*p) == p[0] + p[1], [(1, 2), (3, 4)]))\n"
    )
    programs = {
        # a forged result the check guest cannot parse, hoping for the check's except clause
        "unparsable-result": CHANNEL_PROGRAM.replace("ANSWER", "b'Ro[' + b'(' * 300"),
        "forged-error-name": CHANNEL_PROGRAM.replace("ANSWER", "b'ReValueError: forged'"),
        # StopIteration inside map() would end all() early in plain Python
        "stop-iteration": (
            "def add(a, b):\n    if a < 0:\n        raise ValueError\n    raise StopIteration\n"
        ),
    }
    honest = "def add(a, b):\n    if a < 0:\n        raise ValueError('negative')\n    return a + b\n"
    assert sandbox.run_check(honest, check, "add", limits=LIMITS, backend=backend).check_passed is True
    for name, code in programs.items():
        r = sandbox.run_check(code, check, "add", limits=LIMITS, backend=backend)
        assert r.check_passed is False, (name, r.cases)


CHANNEL_PROGRAM = (
    "import os, sys\n"
    "def add(a, b):\n"
    "    if a < 0:\n"
    "        raise ValueError\n"
    "    msg = ANSWER\n"
    "    try:\n"
    "        __import__('_host').call(msg)\n"
    "    except ImportError:\n"
    "        out = int(sys.argv[1])\n"
    "        os.write(out, len(msg).to_bytes(4, 'big') + msg)\n"
    "    return 0\n"
)


@pytest.mark.parametrize("backend", BACKENDS)
def test_reaching_the_stub_is_recorded_but_a_benign_stack_print_still_works(
    sandbox: Sandbox, backend: str
) -> None:
    code = "import traceback\ndef add(a, b):\n    traceback.print_stack()\n    return a + b\n"
    r = sandbox.run_cases(code, "add", INPUTS, limits=LIMITS, backend=backend)
    assert [c.result_repr for c in r.cases] == EXPECTED
    assert "harness_access" in r.violations and 'File "<solution>"' in r.stderr  # the stack was printed
    event = to_event(r, sample_id="s", group_id="g", task_id="t/add")
    task = TaskPublished(
        task_id="t/add",
        prompt="def add(a, b):\n",
        entry_point="add",
        tests=tuple(TestCase(input=i, output=o) for i, o in zip(INPUTS, EXPECTED, strict=True)),
    )
    decision = decide(
        task=task, code="def add(a, b):\n    return a + b\n", executions=[event], config=NoiseConfig(),
        options=CompareOptions(),
    )  # fmt: skip
    assert decision.verdict == "accept" and ("runtime.violation", "harness_access") in {
        (x.code, x.detail) for x in decision.reasons
    }


TIMING = {
    "import-time": ("import time\ntime.sleep(0.5)\n", ""),
    "per-case": ("import time\n", "    time.sleep(0.17)\n"),
    # the finaliser of what one case keeps runs while the next case replaces it: twice in three
    "finaliser-between-cases": (
        "import time\nclass S:\n    def __del__(self):\n        time.sleep(0.25)\n",
        "    global keep\n    keep = S()\n",
    ),
    "gc-callback": (
        "import gc, time\n"
        "gc.callbacks.append(lambda phase, info: time.sleep(0.17) if phase == 'stop' else None)\n",
        "    gc.collect()\n",
    ),
    "frame-rewrite": (
        "import sys, time\n",
        "    time.sleep(0.17)\n"
        "    fr = sys._getframe(0).f_back\n"
        "    for k, v in list(fr.f_locals.items()):\n"
        "        if isinstance(v, float):\n"
        "            fr.f_locals[k] = 0.0\n",
    ),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", list(TIMING))
def test_time_is_the_hosts_and_covers_module_load_and_everything_between_cases(
    sandbox: Sandbox, backend: str, name: str
) -> None:
    prologue, body = TIMING[name]
    code = f"{prologue}\ndef add(a, b):\n{body}    return a + b\n"
    r = sandbox.run_cases(code, "add", INPUTS, limits=Limits(timeout_s=10.0), backend=backend)
    assert [c.result_repr for c in r.cases] == EXPECTED, r.cases
    assert r.active_s is not None and r.load_s is not None
    assert r.active_s >= 0.45, (r.active_s, [c.duration_s for c in r.cases])
    if name == "import-time":
        assert r.load_s >= 0.45


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("name", "code"), list(fake_labels(seed=14)))
def test_labels_are_never_read_from_text_the_program_prints(
    sandbox: Sandbox, backend: str, name: str, code: str
) -> None:
    r = sandbox.run_script(code, limits=LIMITS, backend=backend)
    assert r.infra_error is None
    assert r.exit_code != 0
    assert not r.memory_exceeded and not r.timed_out
    assert r.violations == (), r.violations


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_refusal_reaches_the_noise_filter(sandbox: Sandbox, backend: str) -> None:
    code = (
        "import os, socket, gc\n"
        "def add(a, b):\n"
        "    for attempt in (lambda: socket.socket().connect(('127.0.0.1', 9)),\n"
        "                    lambda: open('/etc/shadow', 'w'),\n"
        "                    lambda: gc.get_referrers(add)):\n"
        "        try:\n"
        "            attempt()\n"
        "        except BaseException:\n"
        "            pass\n"
        "    return a + b\n"
    )
    r = sandbox.run_cases(code, "add", INPUTS, limits=LIMITS, backend=backend)
    assert {"network", "filesystem", "introspection"} <= set(r.violations), r.violations
    event = to_event(r, sample_id="s", group_id="g", task_id="t/add")
    assert isinstance(event, SandboxExecuted) and event.violations == r.violations
    task = TaskPublished(
        task_id="t/add",
        prompt="def add(a, b):\n",
        entry_point="add",
        tests=tuple(TestCase(input=i, output=o) for i, o in zip(INPUTS, EXPECTED, strict=True)),
    )
    decision = decide(
        task=task, code="x = 1", executions=[event], config=NoiseConfig(), options=CompareOptions()
    )
    seen = {r.detail for r in decision.reasons if r.code in ("hack.sandbox_violation", "runtime.violation")}
    assert {"network", "filesystem", "introspection"} <= seen, decision.reasons


def test_no_interpreter_without_the_hook_and_no_raw_memory_module_in_the_jail(sandbox: Sandbox) -> None:
    """The jail's CPython ships _xxsubinterpreters and the C-API test modules. A subinterpreter runs
    without the stub's audit hook (hooks are per interpreter) in the same process: ctypes, a listing of
    '/' and the run's key off the shared heap there, unlabelled (red-team a46_subinterpreter_*). Such a
    module imports as an absent one does, by its name or by its file (and the hook refuses and labels an
    interpreter made all the same: ``cpython.PyInterpreterState_New``)."""
    code = (
        "import importlib, importlib.machinery, importlib.util, sys\n"
        "seen = []\n"
        "for name in ('_xxsubinterpreters', '_testcapi', '_testinternalcapi'):\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "        seen.append(name)\n"
        "    except BaseException as exc:\n"
        "        seen.append(type(exc).__name__)\n"
        "print(seen)\n"
        "folder = [p for p in sys.path if p.endswith('lib-dynload')][0]\n"
        "path = folder + '/_xxsubinterpreters' + importlib.machinery.EXTENSION_SUFFIXES[0]\n"
        "loader = importlib.machinery.ExtensionFileLoader('_xxsubinterpreters', path)\n"
        "spec = importlib.util.spec_from_file_location('_xxsubinterpreters', path, loader=loader)\n"
        "try:\n"
        "    importlib.util.module_from_spec(spec).create()\n"
        "    print('made')\n"
        "except BaseException as exc:\n"
        "    print('refused', type(exc).__name__)\n"
    )
    r = sandbox.run_script(code, limits=LIMITS, backend="container")
    assert r.infra_error is None
    assert "['ModuleNotFoundError', 'ModuleNotFoundError', 'ModuleNotFoundError']" in r.stdout, r.stdout
    # loaded by its file, the extension imports as an absent module too
    assert "refused ModuleNotFoundError" in r.stdout, r.stdout
