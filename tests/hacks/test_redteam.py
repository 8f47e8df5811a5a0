# ruff: noqa: E501 - program texts and mechanism descriptions are kept on one line each
"""The red-team corpus (``tests/hacks/redteam/``) through the real sandbox, reward and noise filter, as
``rlstream score`` and ``rlstream sandbox exec`` run them: wrong programs must fail or be rejected,
correct ones must be accepted with full reward, sandbox attacks contained and labelled.

Programs that currently get through are ``xfail(strict=True)`` with the mechanism that failed: the
owners of that mechanism flip them when they fix it. WASM runs everything it can; the container runs
the programs written for it and a slice of the rest (the full matrix on both backends is
``python -m tests.hacks.redteam.run``).
"""

from __future__ import annotations

from typing import Any

import pytest

from streams.noise.config import NoiseConfig
from streams.reward.config import RewardConfig
from streams.reward.evaluate import Evaluator
from streams.reward.function import get_reward_function
from streams.sandbox import Sandbox, SandboxConfig
from tests.hacks.redteam.corpus import PROGRAMS, Program
from tests.hacks.redteam.run import judge
from tests.hacks.redteam.tasks import all_tasks

# ------------------------------------------------------------------------------ what gets through now
VERSION_SKEW = "an explicit container request runs the jail's Python 3.11, which lacks what a 3.12+ program uses (auto runs such a program in WASM; masking it here would let a failure path that names a 3.12 function turn failures into masks)"
OVERLAP = "a task without a reference has no probe, and the overlap rule, which reads the inputs a program writes out, cannot see a table keyed by a hash of the input"
FLOAT_NOTATION = "probe: inputs keep the magnitudes the cases show, so a float never prints in exponent notation (1e-05, 1e+16) there, which a program reading digits off repr() gets wrong"
CHAR_DOMAIN = "probe: generated strings take the cases' own characters within their character classes, so a program wrong only on characters no case holds (a non-ASCII letter, a tab) or on a letter in the other case than the cases pair it with is not seen"
CALL_COUNT = "probe: a probe run makes about a hundred calls (the cases asked again after 64), so answers that change only after more calls than that are not seen"


#: (program, backend or "*") -> the mechanism that lets it through today
KNOWN: dict[tuple[str, str], str] = {
    ("noref_hash_table", "*"): OVERLAP,
    ("a5_str_of_float_2", "*"): FLOAT_NOTATION,
    ("a5_case_insens_27", "*"): CHAR_DOMAIN,
    ("a5_prefix_case_29", "*"): CHAR_DOMAIN,
    ("a5_counter_late_55", "*"): CALL_COUNT,
    ("batched_plain_35", "container"): VERSION_SKEW,
}


def _known(name: str, backend: str) -> str | None:
    return KNOWN.get((name, backend)) or KNOWN.get((name, "*"))


# ---------------------------------------------------------------------------------------- the matrix
#: container runs in CI beyond the programs written for the container alone
CONTAINER_SLICE = frozenset(
    {
        "check_table_52",
        "exit_after_first_case_35",
        "output_flood_exit_35",
        "namedtuple_sum_product_8",
        "numpy_bool_40",
        "threads_auto_35",
        "check_heap_class_129",
    }
)


def _runs() -> list[Any]:
    out = []
    for p in PROGRAMS:
        for b in p.backends:
            if b == "container" and "wasm" in p.backends and p.name not in CONTAINER_SLICE:
                continue
            if b == "auto" and "wasm" in p.backends and p.family != "newer_syntax":
                continue
            why = _known(p.name, b)
            marks = [pytest.mark.xfail(strict=True, reason=why)] if why else []
            out.append(pytest.param(p, b, id=f"{p.name}-{b}", marks=marks))
    return out


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return Sandbox(SandboxConfig())


#: probe plans are drawn with a secret seed, and what a plan catches varies with it: the matrix pins one
#: (a failure reproduces with ``rlstream score --probe-seed``); rates over many seeds are measured by
#: ``python -m tests.hacks.redteam.run --probe-seeds N``
PROBE_SEED = "5eed" * 8


@pytest.fixture(scope="module")
def evaluator(sandbox: Sandbox) -> Evaluator:
    return Evaluator(
        sandbox, get_reward_function("code-v5", RewardConfig()), NoiseConfig(), probe_seed=PROBE_SEED
    )


@pytest.mark.parametrize(("program", "backend"), _runs())
def test_redteam(program: Program, backend: str, sandbox: Sandbox, evaluator: Evaluator) -> None:
    if program.mode == "exec":
        result = sandbox.run_script(program.code, limits=sandbox.limits(), backend=backend)
        assert not result.infra_error, result.infra_error
        out: dict[str, Any] = dict(result.cli_json())
    else:
        ev = evaluator.evaluate(all_tasks()[program.task], program.code, backend=backend)  # type: ignore[arg-type]
        assert not ev.execution.infra_error, ev.execution.infra_error
        out = ev.cli_json()
    ok, actual = judge(program, out, 0, "")
    want = (
        program.expect_text
        or {
            "wrong": "fails or is rejected",
            "correct": "full correctness, no security penalty, accepted",
            "attack": "contained and labelled",
        }[program.kind]
    )
    assert ok, f"{program.name} [{backend}] ({program.family}): expected {want}; got {actual}"
