"""The corpus run end to end: every program of every task through the sandbox, the registered reward
function (code-v2) and the noise filter, as ``rlstream score`` judges one; a report of what got through
and whom the judge penalised. Used by ``python -m bench.reward`` and the acceptance tests."""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from schemas.task import TaskPublished
from streams.noise.config import NoiseConfig
from streams.reward.corpus.generated import correct_programs, wrong_programs
from streams.reward.corpus.public import hacks, memorised_table, mutants
from streams.reward.corpus.unusual import programs as unusual_programs
from streams.reward.evaluate import Backend, Evaluation, Evaluator
from streams.reward.function import get_reward_function
from streams.sandbox.config import SandboxConfig
from streams.sandbox.service import Sandbox


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
    security: float = 0.0

    @property
    def caught(self) -> bool:
        """A hack is caught when it earns no correctness or is rejected (trained as a failure)."""
        return not self.passed or self.verdict == "reject"

    @property
    def penalised(self) -> bool:
        """A correct program is penalised when it does not pass, is not accepted, or costs security."""
        return not self.passed or self.verdict != "accept" or self.security > 0


@dataclass
class Report:
    canonical: list[Outcome] = field(default_factory=list)
    hacks: list[Outcome] = field(default_factory=list)
    memorised: list[Outcome] = field(default_factory=list)
    mutants: list[Outcome] = field(default_factory=list)
    #: the generated corpus (``families.py``): wrong programs and correct unusual ones
    wrong: list[Outcome] = field(default_factory=list)
    correct: list[Outcome] = field(default_factory=list)
    seconds: float = 0.0
    #: sandbox runs made (first runs, re-runs, probe runs, reference runs)
    runs: int = 0

    def canonical_accepted(self) -> list[Outcome]:
        return [o for o in self.canonical if o.passed and o.verdict == "accept"]

    def not_accepted(self) -> list[Outcome]:
        return [o for o in self.canonical if o.verdict != "accept" or not o.passed]

    def false_rejections(self) -> list[Outcome]:
        return [o for o in self.canonical if o.verdict == "reject"]

    def hack_catch_rate(self) -> float:
        return sum(o.caught for o in self.hacks) / max(1, len(self.hacks))

    def per_family(self, outcomes: list[Outcome] | None = None) -> dict[str, tuple[int, int]]:
        by: dict[str, list[bool]] = defaultdict(list)
        for o in self.hacks if outcomes is None else outcomes:
            by[o.kind].append(o.caught)
        return {k: (sum(v), len(v)) for k, v in sorted(by.items())}

    def wrong_accepted(self) -> list[Outcome]:
        """Wrong programs of any family (public hacks, memorised tables, the generated corpus) that
        passed and were not rejected: a passing reward the policy could learn from."""
        return [o for o in (*self.hacks, *self.memorised, *self.wrong) if not o.caught]

    def correct_penalised(self) -> list[Outcome]:
        return [o for o in (*self.canonical, *self.correct) if o.penalised]

    def hack_recall(self) -> float:
        wrong = (*self.hacks, *self.memorised, *self.wrong)
        return sum(o.caught for o in wrong) / max(1, len(wrong))

    def false_reject_rate(self) -> float:
        correct = (*self.canonical, *self.correct)
        return sum(o.penalised for o in correct) / max(1, len(correct))

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
        if self.wrong:
            lines.append("generated wrong programs (caught = fails or rejected):")
            for fam, (c, n) in self.per_family(self.wrong).items():
                lines.append(f"  {fam}: {c}/{n} caught")
        if self.correct:
            lines.append("generated correct programs (penalised = not passing+accept, or security > 0):")
            by: dict[str, list[bool]] = defaultdict(list)
            for o in self.correct:
                by[o.kind].append(o.penalised)
            for fam, flags in sorted(by.items()):
                lines.append(f"  {fam}: {sum(flags)}/{len(flags)} penalised")
        lines.append(
            f"hack recall {100 * self.hack_recall():.2f}%, false-reject rate "
            f"{100 * self.false_reject_rate():.2f}% (correct programs penalised: "
            f"{[(o.task_id, o.kind, o.verdict, o.reasons) for o in self.correct_penalised()][:20]})"
        )
        lines.append(
            f"wrong programs with a passing reward: {[(o.task_id, o.kind) for o in self.wrong_accepted()]}"
        )
        lines.append(f"wall time {self.seconds:.1f}s, {self.runs} sandbox runs")
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
        ev.reward.components.get("security", 0.0),
    )


def make_evaluator(backend_cfg: Backend = "wasm", noise: NoiseConfig | None = None) -> Evaluator:
    sandbox = Sandbox(SandboxConfig(backend=backend_cfg))
    return Evaluator(sandbox, get_reward_function("code-v5"), noise or NoiseConfig())


def run(
    tasks: Iterable[TaskPublished],
    *,
    backend: Backend = "wasm",
    workers: int = 2,
    with_mutants: bool = True,
    with_public: bool = True,
    with_generated: bool = False,
    with_unusual: bool = False,
    extra: Iterable[tuple[TaskPublished, str, str, bool]] = (),
    evaluator: Evaluator | None = None,
    progress: Callable[[str], None] | None = None,
) -> tuple[Report, Evaluator, dict[tuple[str, str], tuple[str, Evaluation]]]:
    """Evaluate every program; returns the report, the evaluator and (task, kind) -> (code, evaluation).

    Each task's reference is its canonical program. ``with_public`` adds the public families
    (``public.py``), ``with_mutants`` wrong-by-construction mutants of the reference,
    ``with_generated`` the generated corpus (``generated.py``), ``with_unusual`` the hand-written
    unusual solutions (``unusual.py``) of the tasks they cover; ``extra`` adds (task, kind, code,
    correct) programs."""
    ev = evaluator or make_evaluator(backend)
    tasks = list(tasks)
    jobs: list[tuple[TaskPublished, str, str]] = []
    correct_kinds: set[str] = set()
    wrong_kinds: set[str] = set()
    unusual = unusual_programs({t.task_id: t.prompt for t in tasks}) if with_unusual else {}
    for task in tasks:
        if task.reference:
            jobs.append((task, "canonical", task.reference))
        if task.task_id in unusual:
            jobs.append((task, "unusual", unusual[task.task_id]))
            correct_kinds.add("unusual")
        if with_public:
            for fam, code in hacks(task).items():
                jobs.append((task, fam, code))
            if task.tests or task.hidden_tests:
                jobs.append((task, "memorised", memorised_table(task)))
        if with_mutants and task.reference:
            for name, code in mutants(task.reference, task.entry_point):
                jobs.append((task, f"mutant:{name}", code))
        if with_generated:
            for fam, code in wrong_programs(task).items():
                jobs.append((task, fam, code))
                wrong_kinds.add(fam)
            for fam, code in correct_programs(task).items():
                jobs.append((task, fam, code))
                correct_kinds.add(fam)
    for task, kind, code, correct in extra:
        jobs.append((task, kind, code))
        (correct_kinds if correct else wrong_kinds).add(kind)
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
    # the reference runs of each task first, once, so parallel jobs never run them twice
    first_backend = backend if backend != "auto" else "wasm"

    def references(task: TaskPublished) -> None:
        ev.reference(task, first_backend)
        ev.reference_probe(task, first_backend, ev.probe_seed)

    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(references, {j[0].task_id: j[0] for j in jobs}.values()))
        for i, (task, kind, code, e) in enumerate(pool.map(one, jobs)):
            o = _outcome(task.task_id, kind, e)
            stored[(task.task_id, kind)] = (code, e)
            report.runs += 1 + len(e.reruns) + (e.probe is not None)
            if kind == "canonical":
                report.canonical.append(o)
            elif kind in correct_kinds:
                report.correct.append(o)
            elif kind in wrong_kinds:
                report.wrong.append(o)
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
