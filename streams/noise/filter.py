"""The noise filter: decides how a scored sample feeds the gradient.

``accept``: trained with its reward, passing or failing. ``reject``: evidence that the program attacked
the judge or that its pass is not genuine; trained as a failure (``NoiseVerdict.failure_reward``: no
credit, its penalties kept), never excluded, so the evidence can never earn a failing program more than
failing honestly would. ``mask``: kept out of the gradient, for samples whose reward cannot be trusted
or says nothing about the policy, for reasons outside the program (an infra failure, a task that
cannot judge, runs that disagree only by timing out). The verdict never rewrites the reward.

The principle: evidence the program controls (its exit, what it prints, labels it can provoke,
nondeterminism it can induce, static shapes) never gives a failing sample a better outcome than an
honest failure. Static findings alone reject only code that attacks the judge whatever the run did
(``static.tier`` = ``attack``, outside ``if __name__ == "__main__":``); everything else needs evidence
the host observed: the sandbox's violation labels, records that never came, answers that change with
the order of the calls, disagreement with the reference on inputs the task never showed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from schemas.reference import ReferenceExecuted
from schemas.rollout import NoiseVerdict, Reason, RewardScored, SandboxExecuted, SandboxExecutedV2
from schemas.task import TaskPublished
from streams.noise import probe as probing
from streams.noise import rules
from streams.noise.config import VERSIONS, NoiseConfig, near_shares, resumes_probes
from streams.probe.plan import check_compares_sequences, recorded_plan
from streams.probe.statement import stated_bounds
from streams.reward import static
from streams.reward.correctness import Correctness, grade, task_options
from streams.reward.function import failure_total
from streams.reward.literals import CompareOptions

#: case outcomes that are a program's own answer (not the clock's)
_VALUE_OUTCOMES = frozenset({"wrong", "error", "not_literal", "missing", "duplicate", "aborted"})
#: a task's flags that say its cases cannot tell programs apart (where a probe can): from v3 a sample
#: its probe vouched for is not masked for them (``NoiseConfig.probe_vouches_inputs``)
CASE_FLAGS = frozenset({"task.too_few_cases", "task.constant_answer_passes", "task.identity_answer_passes"})


@dataclass(frozen=True)
class Decision:
    verdict: str  # accept | mask | reject
    reasons: tuple[Reason, ...]
    #: the ReferenceExecuted of the probe plan the sample was compared with (None: no probe judged it)
    probe_reference_event_id: str | None = None
    #: the reasons that reject (reward-hacking signatures), among ``reasons``
    hacks: tuple[Reason, ...] = ()


def allowed_codes(task: TaskPublished, config: NoiseConfig) -> frozenset[str]:
    allowed = set(config.allowlist.get(task.task_id, ()))
    if config.allow_reference_signatures and task.reference:
        allowed |= static.analyse(task.reference, task.entry_point).codes
    return frozenset(allowed)


def decide(
    *,
    task: TaskPublished,
    code: str,
    executions: Sequence[SandboxExecuted],
    config: NoiseConfig,
    options: CompareOptions,
    task_quality: rules.TaskQuality | None = None,
    probe_reference: ReferenceExecuted | None = None,
) -> Decision:
    """Judge one sample from its source, its runs (the first, same-order re-runs, and its probe run,
    which names a probe plan), the task's quality assessment and the reference's runs of the probe
    plan (``probe_reference``)."""
    # the tolerance the task's check states compares its float answers, in its cases and its probe
    options = task_options(task, options)
    reject: list[Reason] = []
    mask: list[Reason] = []
    info: list[Reason] = []
    allowed = allowed_codes(task, config)

    def signature(reason: Reason) -> None:
        if reason.code in allowed:
            info.append(Reason(code=f"allowed.{reason.code}", detail=reason.detail))
        else:
            reject.append(reason)

    # degenerate output: the policy's own output, trained as the failure it is unless configured
    analysis = static.analyse(code, task.entry_point)
    degenerate: Reason | None = None
    if analysis.tree is None:
        kind = "empty" if analysis.error == "empty" else "unparsable"
        degenerate = Reason(code=f"degenerate.{kind}", detail=analysis.error[:200])
    elif not static.entry_point_defined(analysis.tree, task.entry_point):
        degenerate = Reason(code="degenerate.no_entry_point", detail=f"{task.entry_point} is not defined")
    if degenerate is not None:
        (mask if config.degenerate_verdict == "mask" else info).append(degenerate)

    first_run = executions[0] if executions else None
    runs = [x for x in executions if not x.infra_error and x.probe is None]
    probes = [x for x in executions if x.probe is not None]
    if first_run is not None and first_run.infra_error:
        mask.append(Reason(code="infra.sandbox", detail=(first_run.infra_error or "")[:200]))
    elif any(x.infra_error for x in executions):
        info.append(Reason(code="infra.rerun", detail="a re-run failed in the sandbox and was left out"))

    # static evidence: attacks on the judge, wherever they would run on import
    equality_classes = []
    for f in analysis.findings:
        if f.guarded:
            continue
        # a class with its own equality is judged by whether one was returned, in check mode too: the
        # check runs in a guest of its own and only ever receives plain values
        if static.tier(f) == "attack":
            signature(Reason(code=f.code, detail=f"line {f.line}: {f.detail}"[:200]))
        elif f.code == static.CUSTOM_EQUALITY:
            equality_classes.append(f)

    # behaviour the host observed
    reference = task_quality.reference_execution if task_quality is not None else None
    graded = [grade(task, x, options, reference=reference) for x in runs]
    first = graded[0] if graded and runs[0] is first_run else None
    for x in (*runs, *probes):
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
    if first is not None and first.all_passed and analysis.tree is None and analysis.error != "empty":
        # the guest ran what the host cannot read (nested past the host parser's depth): every static
        # check was blind to it, so its pass is not one the judge can vouch for
        signature(
            Reason(
                code="hack.unreadable", detail=f"passed, but the host cannot parse it: {analysis.error}"[:200]
            )
        )
    if first is not None and not first.all_passed:
        if any(static.pass_marker_in(x.stdout) for x in runs) or static.PASS_MARKER in analysis.codes:
            signature(Reason(code=static.PASS_MARKER, detail="printed a pass marker and failed"))
        if _ended_early(runs[0]):
            # records that never came, with no limit hit: the program ended the run itself (a hidden
            # exit, a signal, a hook); trained as the failure it is, never kept out of the gradient
            signature(Reason(code="runtime.ended_early", detail="the run ended without reporting every case"))
    if len(graded) > 1:
        _flakiness(graded, first, reject, mask, info)

    # memorisation, by behaviour on a probe run; by literal overlap only where no probe could judge
    probe_judged = False
    probe_ref_id: str | None = None
    vouched = 0
    if first is not None and first.all_passed and probes:
        probe_judged, probe_ref_id, vouched = _probe(
            task,
            first,
            probes[0],
            probe_reference,
            config,
            options,
            reject,
            info,
            cases_reference=reference,
            starts_process=static.PROCESS in analysis.codes,
        )
    if first is not None and first.all_passed and any(x.infra_error for x in probes):
        # a pass the probe was due to check and could not: the reward cannot be trusted, and the
        # program may have caused the failure (accepting it would make breaking the probe pay)
        mask.append(
            Reason(code="infra.probe", detail="the probe run failed in the sandbox; the pass is unchecked")
        )
    hard = rules.hardcoding(
        task,
        code,
        threshold=config.hardcode_overlap,
        min_inputs=config.hardcode_min_inputs,
        reference=task.reference,
    )
    if hard is not None:
        if probe_judged:
            info.append(Reason(code="static.hardcoded_inputs", detail=hard.detail + "; the probe judged it"))
        else:
            signature(hard)

    # the task itself
    if task_quality is not None and task_quality.flagged:
        for r in task_quality.reasons:
            if config.version != "v2" and r.code in CASE_FLAGS and vouched >= config.probe_vouches_inputs:
                # the cases cannot tell programs apart, but the probe did: the program agreed with the
                # reference on enough generated inputs, some with answers neither the cases nor a
                # constant give, and answered none otherwise
                detail = f"{r.detail}; the probe agreed with the reference on {vouched} generated inputs"
                info.append(Reason(code=f"probed.{r.code}", detail=detail[:200]))
            else:
                mask.append(r)

    if reject:
        verdict, reasons = "reject", reject + mask + info
    elif mask:
        verdict, reasons = "mask", mask + info
    else:
        verdict, reasons = "accept", info
    return Decision(verdict, _unique(reasons), probe_ref_id, _unique(reject))


def _flakiness(
    graded: list[Correctness],
    first: Correctness | None,
    reject: list[Reason],
    mask: list[Reason],
    info: list[Reason],
) -> None:
    """Same-order runs that disagree. A failing first run stays the failure it is (inducing a different
    outcome on a re-run must not take it out of the gradient); a passing one that another run fails by
    its own answers is not correct; one that disagrees only by timing out cannot be trusted."""
    flaky = rules.flaky(graded)
    if flaky is None:
        return
    if first is None or not first.all_passed:
        info.append(flaky)
        return
    # a re-run stopped by a time or memory limit says nothing about its answers (the machine's load)
    own = any(
        g.outcome in _VALUE_OUTCOMES
        for run in graded[1:]
        if not _limit_failure(run.run_failure)
        for g in run.grades
    )
    if own:
        reject.append(Reason(code="runtime.nondeterministic", detail=flaky.detail))
    else:
        mask.append(flaky)


def _limit_failure(run_failure: str) -> bool:
    return "time limit" in run_failure or "memory limit" in run_failure


def _probe(
    task: TaskPublished,
    first: Correctness,
    probe_run: SandboxExecuted,
    reference: ReferenceExecuted | None,
    config: NoiseConfig,
    options: CompareOptions,
    reject: list[Reason],
    info: list[Reason],
    *,
    cases_reference: SandboxExecutedV2 | None = None,
    starts_process: bool = False,
) -> tuple[bool, str | None, int]:
    """Judge the probe run; returns whether it judged the generated inputs, the reference run used, and
    how many generated inputs it agreed with the reference on where it agreed on every one it was
    judged on (a probe that found nothing wrong and was conclusive; else 0)."""
    # the plan is derived again from the task and the seed the run records (none: the task's own plan),
    # by the generator of the version whose digest the run records (a run older than the current one)
    plan = recorded_plan(task, probe_run.probe_seed, probe_run.probe)
    if plan is None or probe_run.probe != plan.digest or probe_run.infra_error:
        info.append(Reason(code="probe.unusable", detail="the probe run is not of this task's plan"))
        return False, None, 0
    usable = reference is not None and reference.execution.probe == plan.digest
    if plan.source == "reseeded":
        reasons, judged = probing.reseeded_reasons(probe_run, reference if usable else None)
        for r in reasons:
            (reject if r.code in probing.REJECTING else info).append(r)
        # a reseeded check counts no inputs of its own (and its task has no cases to be too few)
        return judged, reference.event_id() if reference is not None and usable else None, 0
    answers = probing.reference_answers(plan, reference, options) if reference is not None and usable else {}
    settled = probing.reference_settled(plan, reference) if reference is not None and usable else frozenset()
    # (the chain of version flags below starts after the reference's answers are read)
    v22 = VERSIONS.index(config.version) > VERSIONS.index("v21")
    # v22: where some plain runs answered an input and others ran out there, the memoised runs answer it
    memoised = (
        probing.memoised_answers(plan, reference, options, partial=v22)
        if reference is not None and usable
        else {}
    )
    v6 = config.version not in ("v2", "v3", "v4", "v5")
    refusals = frozenset[str]()
    refused = frozenset[int]()
    if config.version == "v6" and reference is not None and usable:
        # v6: the reference's refusal of any input past the range forgives its error on every other
        refusals = probing.reference_refusals(plan, reference)
    elif v6 and reference is not None and usable:
        # v7: only on an input the reference refuses once its empty arguments are filled
        refused = probing.refused_alike(plan, reference)
    hang: probing.Hang | None = None
    v8 = config.version not in ("v2", "v3", "v4", "v5", "v6", "v7")
    v9 = v8 and config.version != "v8"
    v10 = v9 and config.version != "v9"
    v11 = v10 and config.version != "v10"
    v12 = v11 and config.version != "v11"
    v13 = v12 and config.version != "v12"
    v14 = v13 and config.version != "v13"
    v15 = v14 and config.version != "v14"
    v16 = v15 and config.version != "v15"
    v17 = v16 and config.version != "v16"
    v18 = v17 and config.version != "v17"
    v19 = v18 and config.version != "v18"
    v20 = v19 and config.version != "v19"
    v21 = v20 and config.version != "v20"
    v23 = v22 and config.version != "v22"
    v24 = v23 and config.version != "v23"
    # v25 judges runs resumed past a hang: the same test decides how they are made (resumes_probes)
    v25 = resumes_probes(config)
    v26 = v25 and config.version != "v25"
    v28 = v26 and config.version not in ("v26", "v27")
    v29 = v28 and config.version != "v28"
    v30 = v29 and config.version != "v29"
    v31 = v30 and config.version != "v30"
    v32 = v31 and config.version != "v31"
    v33 = v32 and config.version != "v32"
    v34 = v33 and config.version != "v33"
    # v28: a hang on an input past the range that grew the guest's memory to the limit's edge is the
    # memory stop it was about to be, held where that stop would be (the machine's load slowed the filling
    # until the call's cap or the deadline came first)
    memory_hang = (
        v28
        and reference is not None
        and usable
        and probing.memory_hang_held(plan, probe_run, reference, long_paced=True, steady=True, cpu=True)
    )
    if v8 and reference is not None and usable:
        # v8: a hang past the cases' range on an input the reference answers as fast as the task's own,
        # after keeping its pace, in a second or so the host gave it, is no slow program's
        timing = probing.hang_timing(plan, probe_run, reference)
        # v11: forgiven only where the run was starved there by inputs the reference found expensive
        held = timing is not None and (timing.held_v11() if v11 else timing.held())
        hang = timing if held else None
        if hang is None and v17:
            # v17: so is a hang on an input the memoised reference answers at once, where the program
            # kept the memoised pace on the inputs the plain reference's recursion was slow on
            # v29: the program's pace there read as CPU where the runs carry it (a wait for a core is
            # not in it), unless the program starts processes: a jailed call's CPU is its process's
            # alone, and the naive recursion in a worker process (correct) would read as the memoised
            # pace. A start the source hides reads so too, which only holds its own hang against it
            # v31: where no input before the hang parts the two references but one leans apart, that
            # one is the witness (an input at the edge of parting read either way, one run to the next)
            memo_timing = probing.memo_hang_timing(
                plan, probe_run, reference, options, cpu=v29 and not starts_process, leaning_witness=v31
            )
            # v22: or on a second input where the two lean apart, so one call the load slowed does
            # not decide alone
            hang = (
                memo_timing
                if memo_timing is not None and memo_timing.held_memoised(second_witness=v22)
                else None
            )
    report = probing.examine(
        task,
        plan,
        first,
        probe_run,
        answers,
        options,
        settled,
        cases_reference,
        memoised,
        far_errors=config.version not in ("v2", "v3", "v4"),
        refusals=refusals,
        refused=refused,
        domain=v6,
        sequences=v6 and bool(task.check) and check_compares_sequences(task.check or "", task.entry_point),
        # v20: a deque there too (tuple() reads it as it reads a list)
        deques=v20,
        hang=hang,
        positional_ties=v8 and probing.ties_by_position(task.prompt),
        # v9: a run the program ended itself on an input past the range is held against it; v11: so is
        # a memory stop on an input the reference answers as cheaply as the cases
        own_end=v9
        and (
            probing.ended_by_program(probe_run)
            or (
                v11
                and reference is not None
                and usable
                and probing.memory_stop_held(plan, probe_run, reference, long_paced=v16, steady=v17, cpu=v26)
            )
            # v15: so is a stack stop there
            or (
                v15
                and reference is not None
                and usable
                and probing.stack_stop_held(plan, probe_run, reference, long_paced=v16, steady=v17, cpu=v26)
            )
            # v16: a memory or stack stop on a long input too, where the program kept the reference's pace
            # v28: so is a hang that was a memory stop about to be
            or memory_hang
        ),
        # v9: an equal answer refused for its size where the reference's fit is a resource limit
        size_limits=v9,
        # v10: an input that breaks a bound the task's statement states is not judged
        # v14: read in three more forms (a docstring after imports, "(a) is less then 100", "a list of
        # two strings")
        # v24: and on a name abbreviating a function's one argument ("1 <= num <= 1000" of ``number``)
        # v30: and a dashed range after an argument's name ("month 1-12", "(hour is 0-23)")
        # v30: and a list the statement calls distinct holds no element twice (where no case repeats one)
        # v31: and the forms it states in words, where the cases keep them: text in ASCII, an argument
        # that is one character, the rows of a grid or a matrix of one width (v32: a letter too; ASCII
        # only where it names the text's characters, codes or values)
        stated=stated_bounds(task.prompt, task.entry_point, wider=v14, abbreviated=v24, ranged=v30)
        + (probing.stated_distinct(task) if v30 else ())
        + (probing.stated_forms(task, letters=v32) if v31 else ())
        # v34: and the preconditions it gives between arguments (``low <= high``), between an
        # argument's named fields (each interval's start <= end), and of an integer argument ("is not
        # a prime"), where every case keeps them
        + (probing.stated_preconditions(task) if v34 else ())
        if v10
        else (),
        # v11: a call that flooded its output is that call's failure; a RecursionError on one of the
        # program's threads is a resource limit as one raised by the call is
        flooded=probe_run.output_flood if v11 else None,
        thread_limits=frozenset(probe_run.thread_recursion) if v11 else frozenset(),
        # v12: a RecursionError the call raised is a resource limit only where its stack was deep (a
        # run that did not record it is judged as v11 judges it)
        deep_limits=frozenset(probe_run.deep_recursion)
        if v12 and probe_run.deep_recursion is not None
        else None,
        # v12: a MemoryError the call raised, only on an input the reference found costly too
        # v16: and on a long input the reference answers as cheaply, where the program kept its pace
        # v17: and on an input only the memoised reference answered, where the program kept its pace
        # v17: a program's cost grows only where it shows on each of the largest far inputs, by 2 ms or
        # more (probe._grew ``steady``), not where the machine's load stretched some of its calls
        cheap=probing.cheap_far(
            plan,
            reference,
            probe_run if v16 else None,
            frozenset(memoised) if v17 else frozenset(),
            steady=v17,
            # v26: a call's time read as its CPU where the runs carry it, not as its stretched wall time
            cpu=v26,
        )
        if v12 and reference is not None and usable
        else None,
        # v13: past 2**53 a reference that reads a number through float() answers the nearest double;
        # the int/str conversion limit is forgiven where the input is a larger problem, not for its text
        float_read=v13,
        conversion_cost=v13,
        # v16: a tie the statement leaves open is judged: either of its answers is right, no other
        tie_either=v16,
        # v18: an error on an empty argument the task admits (placed among the inputs that widen the
        # domain, where a refusal is forgiven) is judged as one past the range
        empty_held=probing.empty_refusals_held(task, plan) if v18 else frozenset(),
        # v19: a mean's float allowance is the sum's divided by the count, not the sum's own
        mean_band=v19,
        # v21: an answer whose text could not travel is judged by its digest where the expected value
        # is of exact kinds
        digested=probing.reference_digests(plan, reference, options)
        if v21 and reference is not None and usable
        else None,
        # v23: where the reference's float is the input's sum or mean, a forgiven float disagreement
        # must also lie within what the orders that sum it actually give, not the bound's worst case
        attainable=v23,
        # v25: a run resumed past a hang on a near input the reference did not settle either is judged
        # on the inputs after it (streams/sandbox/resume.py)
        resumed=v25,
        # v28: the run's end at a call its time stopped is judged as a memory stop there (own_end)
        memory_hang=memory_hang,
        # v30: where the reference answers a kind of value no case's answer shows (a float where every
        # case answers an int), a refusal is forgiven and a value judged as anywhere
        answer_kinds=v30,
        # v33: an input past ASCII whose ASCII twins the reference answers alike is judged (p23/c23)
        ascii_twins=v33,
    )
    reasons, judged = probing.probe_reasons(
        report,
        min_inputs=config.probe_min_inputs,
        agreement=config.probe_agreement,
        novel_agreement=config.probe_novel_agreement,
        # v27: memorisation is read from the inputs near the cases alone (a wrong answer anywhere is one)
        near_only=near_shares(config),
    )
    for r in reasons:
        (reject if r.code in probing.REJECTING else info).append(r)
    unreferenced = task.reference is None and config.version not in ("v2", "v3") and not judged
    # (v4) no reference judges the generated inputs: where the answers came from still can
    recalled = probing.recall(task, plan, probe_run, options) if unreferenced else None
    if recalled is not None:
        more, judged = probing.recall_reasons(recalled, min_inputs=config.probe_min_inputs)
        for r in more:
            (reject if r.code in probing.REJECTING else info).append(r)
    agreed = any(r.code == "probe.agreed" for r in reasons) and not report.changed
    return (
        judged,
        reference.event_id() if reference is not None and usable else None,
        report.agreed if agreed else 0,
    )


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
        failure_reward=failure_total(reward),
        probe_reference_event_id=decision.probe_reference_event_id,
        turn=reward.turn,
    )


def reruns_needed(executions: Sequence[SandboxExecuted], config: NoiseConfig) -> int:
    """How many more same-order runs of a sample the filter wants before it decides (flakiness
    check): the configured number of re-runs beyond the first, counting only runs the sandbox
    completed (a probe run is not one of them)."""
    completed = sum(1 for x in executions if not x.infra_error and x.probe is None)
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
    probe_reference: ReferenceExecuted | None = None,
) -> NoiseVerdict:
    """The verdict event of one scored sample: what a filter processor emits for each reward.

    ``executions`` are the sample's runs (run 0 first, then flakiness re-runs and its probe run);
    ``task_quality`` comes from :func:`streams.noise.rules.assess_task`, computed once per task (with
    the reference's execution when there is one) and kept next to the task; ``probe_reference`` is the
    reference's run of the task's probe plan, published once and named on the verdict.
    """
    decision = decide(
        task=task,
        code=code,
        executions=executions,
        config=config,
        options=options,
        task_quality=task_quality,
        probe_reference=probe_reference,
    )
    return verdict_event(reward=reward, decision=decision, config=config)


def earlier_turn_hacks(
    *,
    task: TaskPublished,
    turns: Sequence[tuple[str, SandboxExecuted]],
    config: NoiseConfig,
    options: CompareOptions,
) -> tuple[Reason, ...]:
    """The reward-hacking signatures of an episode's turns before its final one (each turn's code and
    its first run), each reason's detail naming its turn: a hack attempted in any turn rejects the
    episode, even when the final code is clean."""
    found: list[Reason] = []
    for turn, (code, run) in enumerate(turns):
        decision = decide(task=task, code=code, executions=[run], config=config, options=options)
        found += [Reason(code=r.code, detail=f"turn {turn + 1}: {r.detail}"[:200]) for r in decision.hacks]
    return _unique(found)


def filter_episode(
    *,
    task: TaskPublished,
    earlier: Sequence[tuple[str, SandboxExecuted]],
    code: str,
    executions: Sequence[SandboxExecuted],
    reward: RewardScored,
    config: NoiseConfig,
    options: CompareOptions,
    task_quality: rules.TaskQuality | None = None,
    probe_reference: ReferenceExecuted | None = None,
) -> NoiseVerdict:
    """The verdict on an episode: its final turn (``code``, ``executions``: its runs, its probe run
    among them) judged like a one-turn sample, memorisation by the same probe, and rejected as well
    when an ``earlier`` turn (its code and first run) shows a hack."""
    decision = decide(
        task=task,
        code=code,
        executions=executions,
        config=config,
        options=options,
        task_quality=task_quality,
        probe_reference=probe_reference,
    )
    hacks = earlier_turn_hacks(task=task, turns=earlier, config=config, options=options)
    if hacks:
        decision = Decision(
            "reject",
            _unique([*decision.hacks, *hacks, *decision.reasons]),
            decision.probe_reference_event_id,
            decision.hacks + hacks,
        )
    return verdict_event(reward=reward, decision=decision, config=config)
