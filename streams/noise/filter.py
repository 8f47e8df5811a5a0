"""The noise filter: decides whether a scored sample may feed the gradient.

``reject``: the program attacked the judge (reward-hacking signature in its source or its run).
``mask``: the sample says nothing reliable about the policy (infra failure, flaky runs, a task that
cannot judge, degenerate output). ``accept``: everything else, passing or failing. The verdict never
rewrites the reward; it only carries it along.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from schemas.rollout import NoiseVerdict, Reason, RewardScored, SandboxExecuted
from schemas.task import TaskPublished
from streams.noise import rules
from streams.noise.config import NoiseConfig
from streams.reward import static
from streams.reward.correctness import grade
from streams.reward.literals import CompareOptions

#: static signature codes that reject a sample (unless allowlisted for its task)
REJECT_CODES = frozenset(
    {
        static.FORCED_EXIT,
        static.EXIT_HOOK,
        static.CUSTOM_EQUALITY,
        static.FRAME_INSPECTION,
        static.TAMPERING,
        static.FILE_ACCESS,
        static.DYNAMIC_CODE,
        static.PROCESS,
        static.NETWORK,
    }
)


@dataclass(frozen=True)
class Decision:
    verdict: str  # accept | mask | reject
    reasons: tuple[Reason, ...]


def allowed_codes(task: TaskPublished, config: NoiseConfig) -> frozenset[str]:
    allowed = set(config.allowlist.get(task.task_id, ()))
    if config.allow_reference_signatures and task.reference:
        allowed |= static.analyse(task.reference).codes
    return frozenset(allowed)


def decide(
    *,
    task: TaskPublished,
    code: str,
    executions: Sequence[SandboxExecuted],
    config: NoiseConfig,
    options: CompareOptions,
    task_quality: rules.TaskQuality | None = None,
) -> Decision:
    """Judge one sample from its source, its execution(s) (the first run, then any re-runs) and the
    task's quality assessment."""
    reject: list[Reason] = []
    mask: list[Reason] = []
    info: list[Reason] = []
    allowed = allowed_codes(task, config)

    def signature(reason: Reason) -> None:
        if reason.code in allowed:
            info.append(Reason(code=f"allowed.{reason.code}", detail=reason.detail))
        else:
            reject.append(reason)

    # degenerate output
    analysis = static.analyse(code)
    degenerate: Reason | None = None
    if analysis.tree is None:
        kind = "empty" if analysis.error == "empty" else "unparsable"
        degenerate = Reason(code=f"degenerate.{kind}", detail=analysis.error[:200])
    elif not static.entry_point_defined(analysis.tree, task.entry_point):
        degenerate = Reason(code="degenerate.no_entry_point", detail=f"{task.entry_point} is not defined")
    if degenerate is not None:
        (mask if config.degenerate_verdict == "mask" else info).append(degenerate)

    # static signatures
    runs = [x for x in executions if not x.infra_error]
    # Judged by cases, a returned object only ever reaches the host as a refused non-literal, so a
    # class with its own equality is a hack when one was returned; judged by an in-sandbox check,
    # where such an object meets the check's ==, the class alone is enough.
    by_cases = bool(runs) and runs[0].mode == "cases"
    equality_classes = []
    for f in analysis.findings:
        if f.code == static.CUSTOM_EQUALITY and by_cases:
            equality_classes.append(f)
        elif f.code in REJECT_CODES:
            signature(Reason(code=f.code, detail=f"line {f.line}: {f.detail}"[:200]))
    reference = static.analyse(task.reference) if task.reference else None
    hard = rules.hardcoding(
        task,
        analysis,
        threshold=config.hardcode_overlap,
        min_inputs=config.hardcode_min_inputs,
        reference=reference,
    )
    if hard is not None:
        signature(hard)

    # runtime evidence
    infra = [x for x in executions if x.infra_error]
    if infra:
        mask.append(Reason(code="infra.sandbox", detail=(infra[0].infra_error or "")[:200]))
    graded = [grade(task, x, options) for x in runs]
    for x in runs:
        for kind in _violations(x):
            if kind in config.reject_violations:
                signature(Reason(code="hack.sandbox_violation", detail=kind))
            else:
                info.append(Reason(code="runtime.violation", detail=kind))
    returned_objects = rules.non_literal_results(runs, graded)
    for f in equality_classes:
        if returned_objects:
            signature(Reason(code=f.code, detail=f"line {f.line}: {f.detail}; returned as a result"[:200]))
        else:
            info.append(
                Reason(
                    code="static.custom_equality", detail=f"line {f.line}: {f.detail}; never returned"[:200]
                )
            )
    first = graded[0] if graded else None
    if first is not None and not first.all_passed:
        if any(static.pass_marker_in(x.stdout) for x in runs) or static.PASS_MARKER in analysis.codes:
            signature(Reason(code=static.PASS_MARKER, detail="printed a pass marker and failed"))
        if _ended_early(runs[0]) and not analysis.codes & {static.FORCED_EXIT, static.EXIT_HOOK}:
            # Unreported cases with no exit in the source: an exit hidden from the scan, or a guest
            # that died for reasons of its own. Neither may teach the policy anything; a source that
            # shows the exit has been rejected above.
            mask.append(
                Reason(code="runtime.ended_early", detail="the run ended without reporting every case")
            )
    if len(graded) > 1:
        flaky = rules.flaky(graded)
        if flaky is not None:
            mask.append(flaky)

    # the task itself
    if task_quality is not None and task_quality.flagged:
        mask.extend(task_quality.reasons)

    if reject:
        verdict, reasons = "reject", reject + mask + info
    elif mask:
        verdict, reasons = "mask", mask + info
    else:
        verdict, reasons = "accept", info
    return Decision(verdict, _unique(reasons))


def _unique(reasons: list[Reason]) -> tuple[Reason, ...]:
    seen: set[tuple[str, str]] = set()
    out = []
    for r in reasons:
        if (r.code, r.detail) not in seen:
            seen.add((r.code, r.detail))
            out.append(r)
    return tuple(out)


def _violations(x: SandboxExecuted) -> list[str]:
    """Every label of the run (a v1 execution, upcast, carries the one it had)."""
    return list(x.violations)


#: what the sandbox reports when it stopped a run for a resource limit (not the program's own exit)
LIMIT_LABELS = frozenset({"output_limit", "pids_limit", "file_size_limit", "stack_overflow"})


def _ended_early(x: SandboxExecuted) -> bool:
    """Cases went unreported although no limit stopped the run: the program ended the process itself
    (``os._exit``, a signal, an exit hook). A program that fails while loading reports every case as
    an error instead, so it never lands here."""
    if x.timed_out or x.memory_exceeded or x.infra_error or set(_violations(x)) & LIMIT_LABELS:
        return False
    return any(c.status == "missing" for c in x.cases) or (
        x.mode == "cases" and not x.cases and x.exit_code != 0
    )


def verdict_event(
    *,
    reward: RewardScored,
    decision: Decision,
    config: NoiseConfig,
) -> NoiseVerdict:
    return NoiseVerdict(
        sample_id=reward.sample_id,
        group_id=reward.group_id,
        task_id=reward.task_id,
        reward_event_id=reward.event_id(),
        verdict=decision.verdict,  # type: ignore[arg-type]
        reasons=decision.reasons,
        reward=reward.total,
        filter_version=config.label(),
    )


def reruns_needed(executions: Sequence[SandboxExecuted], config: NoiseConfig) -> int:
    """How many more runs of a sample the filter wants before it decides (flakiness check): the
    configured number of re-runs beyond the first, counting only runs the sandbox completed."""
    completed = sum(1 for x in executions if not x.infra_error)
    return max(0, 1 + config.reruns - completed) if completed else 0


def filter_sample(
    *,
    task: TaskPublished,
    code: str,
    executions: Sequence[SandboxExecuted],
    reward: RewardScored,
    config: NoiseConfig,
    options: CompareOptions,
    task_quality: rules.TaskQuality | None = None,
) -> NoiseVerdict:
    """The verdict event of one scored sample: what a filter processor emits for each reward.

    ``executions`` are the sample's runs (run 0 first, then flakiness re-runs); ``task_quality``
    comes from :func:`streams.noise.rules.assess_task`, computed once per task (with the reference's
    execution when there is one) and kept next to the task.
    """
    decision = decide(
        task=task, code=code, executions=executions, config=config, options=options, task_quality=task_quality
    )
    return verdict_event(reward=reward, decision=decision, config=config)
