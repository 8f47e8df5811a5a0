"""Acceptance: all 164 HumanEval canonical solutions pass on the WASM and on the container backend,
in check mode (the task's own ``check``) and in case mode (inputs only; results compared here, on the
host, type-strictly). No Kafka needed."""

from __future__ import annotations

import ast
import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from producers.ingest.humaneval import humaneval_tasks, load_rows
from streams.sandbox import Job, Limits, Sandbox, SandboxConfig, SandboxPool

BACKENDS = ["wasm", "container"]
LIMITS = Limits(timeout_s=20.0, memory_mb=512)


@pytest.fixture(scope="module")
def pool(ready_sandbox: Callable[[SandboxConfig], Sandbox]) -> Iterator[SandboxPool]:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    config = SandboxConfig()
    ready_sandbox(config)
    with SandboxPool(config, workers=min(2, os.cpu_count() or 1)) as p:
        yield p


def _same(got: Any, expected: Any) -> bool:
    if type(got) is not type(expected):
        return False
    if isinstance(got, float):
        return bool(abs(got - expected) <= 1e-6 * max(1.0, abs(expected)))
    if isinstance(got, (list, tuple)):
        return len(got) == len(expected) and all(_same(a, b) for a, b in zip(got, expected, strict=True))
    return bool(got == expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_canonical_solutions_pass_their_checks(pool: SandboxPool, backend: str) -> None:
    rows = load_rows()
    assert len(rows) == 164
    jobs = [
        Job(
            mode="check",
            code=r.prompt + r.canonical_solution,
            check=r.test,
            prelude=r.prompt,
            entry_point=r.entry_point,
            limits=LIMITS,
        )
        for r in rows
    ]
    results = pool.run_many(jobs, backend, use_cache=False)
    failed = [
        (r.task_id, res.cases[0].error if res.cases else res.infra_error, res.stderr[-300:])
        for r, res in zip(rows, results, strict=True)
        if not res.check_passed
    ]
    assert not failed, failed[:5]
    assert {res.backend for res in results} == {backend}


@pytest.mark.parametrize("backend", BACKENDS)
def test_canonical_solutions_return_the_expected_values_per_case(pool: SandboxPool, backend: str) -> None:
    rows = {r.task_id: r for r in load_rows()}
    tasks = [t for t in humaneval_tasks() if t.tests or t.hidden_tests]
    assert len(tasks) >= 140
    jobs, expected = [], []
    for t in tasks:
        cases = [*t.tests, *t.hidden_tests]
        row = rows[t.task_id]
        jobs.append(
            Job(
                mode="cases",
                code=row.prompt + row.canonical_solution,
                entry_point=t.entry_point,
                inputs=tuple(c.input for c in cases),
                limits=LIMITS,
            )
        )
        expected.append([ast.literal_eval(c.output) for c in cases])
    results = pool.run_many(jobs, backend, use_cache=False)
    wrong = []
    for t, res, exp in zip(tasks, results, expected, strict=True):
        assert len(res.cases) == len(exp)
        for case, want in zip(res.cases, exp, strict=True):
            ok = (
                case.status == "ok"
                and case.result_repr is not None
                and _same(ast.literal_eval(case.result_repr), want)
            )
            if not ok:
                wrong.append((t.task_id, case.index, case.status, case.result_repr, case.error))
    assert not wrong, wrong[:5]
