"""Configuration of the noise filter (composed into the one settings object by ``rlstream``)."""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

#: the filter's versions, oldest first: each still judges as it did (old runs re-judge byte for byte)
FilterVersion = Literal[
    "v2",
    "v3",
    "v4",
    "v5",
    "v6",
    "v7",
    "v8",
    "v9",
    "v10",
    "v11",
    "v12",
    "v13",
    "v14",
    "v15",
    "v16",
    "v17",
    "v18",
    "v19",
    "v20",
    "v21",
    "v22",
    "v23",
    "v24",
    "v25",
    "v26",
    "v27",
    "v28",
    "v29",
    "v30",
    "v31",
    "v32",
    "v33",
    "v34",
]
VERSIONS: tuple[FilterVersion, ...] = get_args(FilterVersion)


class NoiseConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    #: a task with fewer cases (visible + hidden) is flagged and its samples masked
    min_cases: int = Field(default=2, ge=1)
    #: share of a task's case inputs found verbatim in a program that marks it a hard-coder (inputs the
    #: task's reference also contains are left out)
    hardcode_overlap: float = Field(default=0.3, gt=0.0, le=1.0)
    #: the overlap rule needs at least this many inputs found in the program to say anything
    hardcode_min_inputs: int = Field(default=1, ge=1)
    #: what happens to empty, unparsable or entry-point-less output: accepted (trained as the failure it
    #: is) or masked (kept out of the gradient; a policy could then learn to emit garbage when unsure)
    degenerate_verdict: Literal["mask", "accept"] = "accept"
    #: sandbox violation kinds that reject a sample as an attack on the harness
    reject_violations: tuple[str, ...] = (
        "process",
        "network",
        "ctypes",
        "signal",
        "filesystem",
        "harness_tamper",
    )
    #: task_id -> signature codes (e.g. ``hack.dynamic_code``) that are legitimate for that task
    allowlist: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    #: signatures the task's own reference solution shows are legitimate for that task
    allow_reference_signatures: bool = True
    flag_constant_answer: bool = True
    flag_identity_answer: bool = True
    #: runs of each sample beyond the first, compared for flakiness (0: no re-runs)
    reruns: int = Field(default=0, ge=0, le=10)
    #: run a sample whose first run answered every case once more on its task's probe plan (the cases in
    #: another order, then generated inputs compared with the reference's answers)
    probe: bool = True
    #: generated inputs the reference answers that a probe needs before it judges (else the static
    #: overlap rule judges hard-coding)
    probe_min_inputs: int = Field(default=4, ge=1)
    #: share of those (and of those with an uncommon answer) a program must agree with the reference on
    probe_agreement: float = Field(default=0.5, gt=0.0, le=1.0)
    #: share of the novel ones (whose answer is none of their cases' own) it must agree on: a program
    #: that answers with the case an input resembles gets these wrong, one that reads its input right
    probe_novel_agreement: float = Field(default=0.75, gt=0.0, le=1.0)
    #: (v3) generated inputs a probe must have agreed with the reference on, answering none otherwise, for
    #: a sample of a task whose cases cannot judge (too few; one answer, or the first argument, passes
    #: them all) to be judged by its probe instead of masked. Half the fewest generated inputs a plan
    #: near the cases holds (``MIN_GENERATED``, a one-case task's plan of the task alone), so a reference
    #: that refuses half of them still lets a probe vouch; twice ``probe_min_inputs``, since here the
    #: probe stands in for the cases as well
    probe_vouches_inputs: int = Field(default=8, ge=1)
    #: v2: a task whose cases cannot judge masks every sample; v3: not one its probe vouched for; v4: a
    #: task without a reference judges where a probe run's answers came from (``probe.recall``)
    #: v5: an error on a probe input past the cases' range that the reference answers is a wrong
    #: answer (resource limits aside: ``streams.noise.probe.resource_limit``)
    #: v6: not one the reference raises itself on an input of the plan
    #: (``streams.noise.probe.reference_refusals``), and a check-mode probe compares answers as a check
    #: that converts every answer with ``tuple()``/``list()`` does
    #: v7: the reference's refusal forgives a program's error only on an input alike the one it refuses
    #: (the same input with its empty arguments filled: ``streams.noise.probe.refused_alike``), whatever
    #: the error's text, and no longer on every input past the range with the same text
    #: v8: a hang past the cases' range is a wrong answer where the host gave the program at least half a
    #: second there and the reference answered the same input at once, as fast as the inputs near the
    #: cases, and the program had kept its pace before (``streams.noise.probe.Hang.held``)
    #: v9: a probe run the program ended itself (its exit, a signal, an output flood; not its time, memory
    #: or stack) on an input past the cases' range that the reference settles at once is held against it
    #: as near the cases (``streams.noise.probe.ended_by_program``)
    #: v10: a generated input that breaks a bound the task's statement states on an argument
    #: (``1 <= n <= 10^3``: ``streams.probe.statement.stated_bounds``) is not judged
    #: v11: a probe call the host stopped for its own output (``SandboxExecuted.output_flood``: one call
    #: past the flood bound, not a run's chatter) is a wrong answer where the reference answered, past
    #: the range too; an error that followed a RecursionError on one of the program's threads
    #: (``SandboxExecuted.thread_recursion``) is forgiven past the range as a RecursionError is; a hang
    #: past the range is forgiven only where the run was starved there by inputs the reference found
    #: expensive too (the time the program burned before counts as given; its growth excuses nothing:
    #: ``streams.noise.probe.Hang.held_v11``)
    #: v12: a RecursionError a probe call raised past the range is forgiven only where the stub saw its
    #: stack deep (``SandboxExecuted.deep_recursion``: the traceback a chain of calls at least 1/16 of
    #: the recursion limit long), not for its name; a run that did not record it is judged as in v11;
    #: a MemoryError a call raised past the range only on an input the reference found costly too
    #: (``streams.noise.probe.cheap_far``)
    #: v13: where floats are forgiven (past the range), an integer answer that differs from the
    #: reference's only where the reference's lies past 2**53 at a double's exact value and the
    #: program's rounds to that double is not judged: the reference read the number through a float
    #: (``streams.noise.probe.read_through_float``); an int/str conversion-limit ValueError a probe call
    #: raised past the range is forgiven only where the reference found the input costly too or it holds
    #: a number longer than the limit, not for its message
    #: v14: the task's statement is read for bounds in three more forms (``stated_bounds(wider=True)``:
    #: a docstring after imports, "(a) is less then 100", "a list of two strings"), so a generated input
    #: that breaks one is not judged, as v10 leaves out one that breaks ``1 <= n <= 10^3``
    #: v15: a probe run the host stopped for its stack (``stack_overflow``: WASM's C stack trapped) on a
    #: generated input past the range that the reference answered as cheaply as the cases is the
    #: program's own end, as v11 holds a memory stop there (``streams.noise.probe.stack_stop_held``)
    #: v16: on the long inputs at the end of a probe run (``streams.noise.probe.long_input``) a hang, a
    #: memory or stack stop, a MemoryError or the int/str conversion limit is held as on the other inputs
    #: past the range where the program kept the reference's pace before it
    #: (``streams.noise.probe._grew``); a tie the statement leaves open (an input the
    #: reference answers otherwise than its mirror) is judged, either answer right, not left out
    #: v17: on an input past the range only the memoised reference answered (the plain one's recursion
    #: too slow there: ``streams/probe/memo.py``) a MemoryError or the int/str conversion limit is held
    #: as on a cheap input where the program kept the plain reference's pace before it
    #: (``streams.noise.probe.cheap_far``), and a hang on an input the memoised reference answered at
    #: once where the program kept the memoised pace on the inputs the plain recursion was slow on
    #: (``streams.noise.probe.Hang.held_memoised``)
    #: v18: an error on a generated input whose argument is empty where no case's is, placed among the
    #: inputs that widen the domain (where a refusal is forgiven), is judged as one past the range
    #: where the task's statement does not keep that argument from being empty
    #: (``streams.noise.probe.empty_refusals_held``): the reference's value there is the task's
    #: v19: where a float disagreement within what the input's numbers summed in another order can
    #: change is forgiven (a task whose reference answers a case otherwise than its expected value in
    #: floats alone; past the range), an answer that is the mean of the input's numbers gets that bound
    #: divided by their count (plus the division's rounding), not the sum's own n times larger
    #: (``streams.noise.probe._within_rounding``'s ``propagated``)
    #: v20: a check-mode probe whose check converts every answer with ``tuple()``/``list()`` reads a
    #: ``deque`` as the sequence of its elements too, as it reads a list and a tuple (v6)
    #: (``streams.noise.probe.examine``, ``deques``): a correct program returning one was rejected as a
    #: memoriser for its type alone
    #: v21: a probe answer whose text could not travel (past a result's size, or past what an
    #: execution keeps) is judged by the digest the sandbox's stub reported of it
    #: (``CaseResult.digest``, ``schemas.digest``) where the answer it is held to is of exact kinds
    #: (ints, strs, bools, None, bytes and containers of them; the reference's, or a case's expected
    #: value): equal digests are an equal answer, different ones a wrong answer; where the expected
    #: value holds a float or another type, or the comparer is not ``numeric``, it is not judged, as
    #: through v20
    #: v22: an input some plain runs of the reference answered and others ran out on is answered by
    #: the memoised runs (``streams.noise.probe.memoised_answers``' ``partial``: through v21 nothing
    #: answered it, and a hang there went unjudged), and a hang on an input the memoised reference
    #: answers at once is held where the program kept the memoised pace on the second costliest input
    #: the two references lean apart on as well (``streams.noise.probe.Hang.held_memoised``'s
    #: ``second_witness``): one call the machine's load stretched no longer forgives the hang alone
    #: v23: where a float disagreement within a sum's order is forgiven (v19), and the reference's float
    #: is the input's numbers' sum or mean as some order evaluates it, the program's float must also lie
    #: within the spread of those evaluations widened by half of it, not just within the worst-case bound
    #: (``streams.noise.probe._within_rounding``'s ``attainable``): on numbers that cancel the bound
    #: allowed an answer no order gives (0.0 for a mean every order puts between 0.8 and 1.6)
    #: v24: a bound the statement states on a name abbreviating a function's one argument (``1 <= num
    #: <= 1000`` of HumanEval/156's ``number``: ``stated_bounds(abbreviated=True)``) is read as v10 reads
    #: one on the argument's own name, so a generated input that breaks it is not judged
    #: v25: probe runs (the reference's, once per task and plan, and a sample's) are resumed past a hang
    #: on a generated input near the cases, in a fresh sandbox, on the inputs after it
    #: (``streams/sandbox/resume.py``, at most twice a run), and the filter judges those inputs: a hang
    #: there is excused only where the reference did not settle the input either (the run goes on past
    #: it), held as before where it did. Through v21 one such hang ended the reference's run, and no
    #: program was judged on anything after it (HumanEval/39's reference hangs on its second generated
    #: input: one of 76 judged); a program's own hang there shielded the rest of its run alike
    #: v26: where the cost rules read a call's time (a memory or stack stop, or a ``MemoryError``, past
    #: the cases' range held where the input is cheap for the reference and the program kept its pace:
    #: ``streams.noise.probe._grew``, ``cheap_far``), they read the CPU the guest's thread spent on it
    #: where the runs carry it (``CaseResult.cpu_s``: WASM; jailed runs too since v29), not its wall
    #: time, which the machine's load stretches: a program answering in microseconds whose largest far
    #: calls waited for a core read as one whose cost grew, and its memory stop or ``MemoryError`` on a
    #: long input was forgiven
    #: v27: the agreement shares (``probe_agreement`` of all, of the uncommon and of the novel
    #: answers) count only the generated inputs near the cases (not ``ProbePlan.far``: the magnitude
    #: gaps, machine-width integers, long and widened inputs), and need ``probe_min_inputs`` of them:
    #: memorisation is failing on inputs like the task's own. A program right near the cases and wrong
    #: on the large inputs (an int32 overflow, float arithmetic) is ``wrong.disagrees_with_reference``,
    #: as any disagreement still is, not ``hack.memorised`` because p17's far inputs outnumber the near
    #: ones (``streams.noise.probe.probe_reasons``' ``near_only``). Only the label moves: a share under
    #: the bar holds a disagreement, so the run is rejected either way
    #: v28: a hang (the run's deadline, or a call's cap) on an input past the cases' range whose call grew
    #: the guest's memory by at least half the room it had (``CaseResult.memory_grown``
    #: against ``memory_left``, read by the WASM host at the stop) is the memory stop it was about to
    #: be, held where such a stop is (an input the reference answers as cheaply as the cases, or a long
    #: one where the program kept its pace: ``streams.noise.probe.memory_hang_held``): a program filling
    #: the memory at a long input was rejected on an idle machine (the limit stopped it) and accepted
    #: beside other load (its filling slowed until the call's cap came first, and a hang on a long input
    #: is forgiven whatever its cause)
    #: v29: a hang on an input only the memoised reference answers is held where the program kept the
    #: memoised pace before it, and that pace is read as CPU where the runs carry it (a jailed run's
    #: cases too, from now on: ``streams.sandbox.container.process_cpu_clock``), not wall time: a wait
    #: for a core on the two inputs v22 reads made a program at the memoised pace look as slow as the
    #: naive recursion, and its hang was forgiven beside other load
    #: v30: on a generated input the reference answers with a value of a kind (int, float, str, list, None,
    #: ...) that no expected answer of the task shows, where all of them are of one kind, a refusal (an
    #: error, a hang, an exit) is forgiven and a value judged as anywhere
    #: (``streams.noise.probe.unshown_kinds``): the reference answers there beyond the domain the task
    #: states by its answers, and a correct program may refuse the input (library/power's reference answers
    #: a float at a negative exponent, which the probe draws beside the cases' negative bases; a program
    #: raising ValueError there, as its ``-> int`` asks, was rejected as wrong); and the task's statement
    #: is read for a dashed range after an argument's name too ("month 1-12", "(hour is 0-23)":
    #: ``stated_bounds(ranged=True)``), whose breaking inputs v10 leaves unjudged (a correct program
    #: refusing month 13 was rejected where the reference answers it), an example written inline in a
    #: statement's line is cut from it and the rest read (library/to_base's ``2 <= base <= 16`` before
    #: "e.g. (255, 16) -> 'ff'"), and a list argument the statement calls distinct, where no case repeats
    #: an element, bounds out inputs that repeat one (``probe.stated_distinct``)
    #: v31: the forms a statement gives its arguments in words bound the probe's inputs where the cases
    #: keep them (``probe.stated_forms``): text in ASCII where it names ASCII or the alphabet (a correct
    #: program counting only A-Z as upper case was judged by the reference's ``isupper()`` on 'É'), an
    #: argument it calls a character one long (``str.rjust`` refused the probe's fill of two characters),
    #: the rows of a grid or a matrix it speaks of one width (a flood fill over each row's own width was
    #: judged by the reference's reading of ragged rows); and where no input before a hang parts the plain
    #: reference from its memoised run (16 times) but one leans apart (8 times), that one witnesses the
    #: program's pace (``probe.memo_hang_timing(leaning_witness=True)``): HumanEval/55's pinned plan parts
    #: at n = 20 by 17.4 times, and a few per cent of noise forgave a spin at the memoised pace
    #: v32: a probe run whose deadline cut a call near the cases (held for less time than the calls it
    #: answered before it, or not handed yet) asks that call again first in the fresh sandbox it resumes
    #: in (``streams/sandbox/resume.py`` ``cut_at``; the reference's runs and a sample's): through v31
    #: the end read as a hang where the reference settles at once, the memorising program's, and a
    #: correct program slower per call than the reference was rejected where the machine's load
    #: stretched its probe run more than its short first run (a hand-written generator on redteam/upto,
    #: 5 ms held on its 50th input). A call hung on purpose hangs again from a fresh deadline, and is held.
    #: And the statement's forms read a little otherwise (``statement.stated_forms(letters=True)``): "the
    #: single letter c" is one character too, and ASCII bounds the text only where it names the text's
    #: ASCII characters, codes or values ("a special ASCII format" no more)
    #: v33: an input holding text past ASCII, on a task whose statement keeps its text to ASCII, is
    #: judged where the reference answers its two ASCII twins (each such character an ASCII letter of its
    #: case, and each one ``#``: plans p23/c23, ``ProbePlan.ascii_twins``) exactly as it answers the input
    #: (``probe.ascii_twins_agree``): no reading of those characters changes the answer there. Through v32
    #: every such input went unjudged wherever the character stood, and a program answering otherwise
    #: wherever one appears in its text was accepted (HumanEval/134's last character, /66's upper-case codes)
    #: v34: a generated input that breaks a precondition the task's statement gives, in a sentence that
    #: gives it ("assume", "it is guaranteed", "given that", "where") or as a parenthesised aside, is not
    #: judged, where every case keeps it (``probe.stated_preconditions``,
    #: ``statement.stated_preconditions``): a relation between two arguments (library/clamp's "(low <=
    #: high)"), between an argument's named fields (HumanEval/127's "interval = (start, end)" ... "its
    #: start is less or equal its end", for each interval) and a property of an integer argument (/59's
    #: "Assume n > 1 and is not a prime"). Through v33 the probe's near inputs broke them and the
    #: reference's own reading there judged correct programs that refuse such an input or read it
    #: otherwise (f45c_ok_*: rejected on every run)
    version: FilterVersion = "v34"

    def label(self) -> str:
        """The filter version recorded on each verdict: ``version``, plus a fingerprint of the rest of
        the configuration when it differs from the default."""
        from streams.reward.config import config_fingerprint

        # hashed as v2 hashed its configurations (its version in the body, without the settings added
        # since, which v2 does not read), so a ``v2+<hash>`` on the log still names its configuration
        exclude = _ADDED_AFTER_V2 if self.version == "v2" else None
        return self.version + config_fingerprint(
            self.model_copy(update={"version": "v2"}), NoiseConfig(version="v2"), exclude=exclude
        )


#: settings v2 does not read, left out of a v2 configuration's fingerprint
_ADDED_AFTER_V2 = {"probe_vouches_inputs"}


def resumes_probes(config: NoiseConfig) -> bool:
    """(v25) Whether probe runs are resumed past a hang on a near input (``streams/sandbox/resume.py``):
    the runs a filter of this version judges, the reference's and the samples', are made so; every
    older version's are made as they were (its verdicts stay as they were)."""
    return VERSIONS.index(config.version) >= VERSIONS.index("v25")


def retries_cut_calls(config: NoiseConfig) -> bool:
    """(v32) Whether a probe run whose deadline cut a call near the cases asks it again first in the
    sandbox it resumes in (``streams/sandbox/resume.py`` ``cut_at``)."""
    return VERSIONS.index(config.version) >= VERSIONS.index("v32")


def near_shares(config: NoiseConfig) -> bool:
    """(v27) Whether the probe's agreement shares count only the generated inputs near the cases."""
    return VERSIONS.index(config.version) >= VERSIONS.index("v27")
