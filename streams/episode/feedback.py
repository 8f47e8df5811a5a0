"""The feedback a turn's execution gives the next turn: a pure, versioned function of the task's
*visible* cases and the execution, so a replay re-derives every feedback byte for byte.

What it shows, for each failing visible case (at most ``max_cases``): the call, what the code returned
(``repr``) or raised (the exception's type and message), or the limit it hit, and the expected value
last. A run-level failure (the program did not load, the run timed out or ran out of memory) is told
when it cost a visible case. The program's stdout and stderr (their ends: where a traceback is) are
shown only when, by the host's account, no hidden case can have reached the process that produced
them (v2; v1 asked the program's own records, which it can forge, and is kept for replays).

What it never shows: a hidden case, its input, its expected value or its result, and a task's
``check`` source (a task judged by ``check`` alone has no visible cases and gets no feedback).

Everything that came out of the sandbox is hostile until neutralised (:func:`neutralise`): the text is
capped before anything else touches it (a megabyte of output costs no more than its cap), control
characters and NUL bytes are written as escapes, terminal escape sequences are dropped, and text that
imitates a chat template's special tokens (``<|im_end|>``, ``</s>``, ``[INST]``, ...) has its
brackets replaced, so no feedback can close the user's turn or open another role's. The generator
also encodes feedback with special tokens split, so even a token string this function does not know
can never become a special token id.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from schemas.episode import CaseFailure, FailedCase, Feedback
from schemas.rollout import CaseResult, SandboxExecuted
from schemas.task import TaskPublished
from streams.episode.config import FeedbackConfig
from streams.reward.correctness import records_by_case
from streams.reward.literals import CompareOptions, NotALiteral, parse_literal, values_match
from streams.sandbox.protocol import LOAD_FAILED

#: how the host words the cases a protocol deviation left unanswered (``protocol.case_results``)
DEVIATION = "protocol deviation: "

#: ANSI/VT escape sequences: CSI (``ESC [ ... final``), OSC (``ESC ] ... BEL|ST``), and two-byte ones
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]|\x9b[0-?]*[ -/]*[@-~]"
)
#: text shaped like a special token of a chat template (ChatML, Llama 2/3, Gemma, Mistral, BOS/EOS)
_SPECIAL = re.compile(
    r"<\|[^\n]{0,64}?\|>|<\||\|>|</?s>|\[/?INST\]|<</?SYS>>|</?(?:start|end)_of_turn>|<(?:bos|eos|pad|unk)>",
    re.IGNORECASE,
)
_BRACKETS = str.maketrans({"<": "‹", ">": "›", "[": "⟦", "]": "⟧", "|": "¦"})
#: a window this many times the cap is read before cleaning (escapes only shrink text)
_WINDOW = 4


def _escape_char(ch: str) -> str:
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _printable(text: str) -> str:
    out: list[str] = []
    for ch in text:
        if ch in "\n\t":
            out.append(ch)
        elif unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"):
            # control, format (zero-width, direction overrides), surrogates, private use, unassigned
            out.append(_escape_char(ch))
        else:
            out.append(ch)
    return "".join(out)


def neutralise(text: str, limit: int, *, keep: str = "head") -> str:
    """``text`` made safe to show a model: at most ``limit`` characters (``keep`` says which end is
    kept; a note says how much was cut), printable, with no escape sequence and no special-token look-alike.
    """
    total = len(text)
    window = text[: limit * _WINDOW] if keep == "head" else text[-limit * _WINDOW :]
    window = window.replace("\r\n", "\n").replace("\r", "\n")
    clean = _printable(_ESCAPES.sub("", window))
    clean = _SPECIAL.sub(lambda m: m.group(0).translate(_BRACKETS), clean)
    if len(clean) <= limit and len(window) == total:
        return clean
    kept = clean[:limit] if keep == "head" else clean[-limit:]
    note = f"[{total} characters in all]"
    return f"{kept}... {note}" if keep == "head" else f"{note} ...{kept}"


def _tail_lines(text: str, lines: int, chars: int) -> str:
    if not text or lines == 0 or chars == 0:
        return ""
    clean = neutralise(text, chars, keep="tail").rstrip("\n")
    parts = clean.split("\n")
    if len(parts) > lines:
        parts = [f"[{len(parts) - lines} earlier lines]", *parts[-lines:]]
    return "\n".join(parts)


def _call(task: TaskPublished, literal: str, cfg: FeedbackConfig) -> str:
    args = literal.strip()
    if args.endswith(",)"):  # a one-element tuple reads as a call with one argument
        args = args[:-2] + ")"
    return neutralise(f"{task.entry_point}{args}", cfg.max_call_chars)


def _judge(record: CaseResult, expected: str, options: CompareOptions) -> CaseFailure | None:
    if record.status == "timeout":
        return "timeout"
    if record.status == "missing":
        return "missing"
    if record.status == "error" or record.result_repr is None:
        return "error"
    try:
        got = parse_literal(record.result_repr, max_chars=options.max_repr_chars)
    except NotALiteral:
        return "not_literal"
    return None if values_match(parse_literal(expected), got, options) else "wrong"


def visible_results(
    task: TaskPublished, execution: SandboxExecuted, options: CompareOptions
) -> list[tuple[int, CaseResult | None, CaseFailure | None]]:
    """Each visible case's record (None: none, or several) and why it failed (None: it passed), judged
    on its own record: a run cut short in a hidden case does not fail a visible case that passed."""
    records = records_by_case(task, execution)
    out: list[tuple[int, CaseResult | None, CaseFailure | None]] = []
    for index, case in enumerate(task.tests):
        found = records.get((False, index), [])
        if len(found) != 1:
            out.append((index, None, "missing"))
            continue
        out.append((index, found[0], _judge(found[0], case.output, options)))
    return out


def _hidden_ran(execution: SandboxExecuted) -> bool:
    """Feedback v1's rule: whether a hidden case *reported* running. It trusts statuses the program
    controls (an exit or a limit hit inside a hidden case leaves it ``missing``; an exception whose
    class is named like a load failure reads as one), so a program could print a hidden input and then
    end itself to have it shown. Kept only to re-derive v1 feedback; v2 uses :func:`_hidden_reached`."""
    return any(
        c.hidden
        and c.status != "missing"
        and not (c.status == "error" and (c.error or "").startswith(LOAD_FAILED))
        for c in execution.cases
    )


def _never_asked(execution: SandboxExecuted) -> bool:
    """The host's fact that the program never asked for a case (it failed or ended while loading):
    ``load_s`` is the host's clock from the guest's start to its first request. The case records must
    agree (none answered, each an error the host wrote or missing): they can only make this stricter,
    so a record without that clock is never read as a load failure on their say alone."""
    return execution.load_s is None and all(
        c.status == "missing"
        or (c.status == "error" and (c.error or "").startswith((LOAD_FAILED, DEVIATION)))
        for c in execution.cases
    )


def _hidden_reached(task: TaskPublished, execution: SandboxExecuted) -> bool:
    """Whether the program may have been handed a hidden case, from facts the host holds rather than
    from what the program reported: the host hands out one case at a time, visible ones first, so a
    hidden input reached the program unless it never asked for a case or a visible case went
    unanswered (timed out, or the run ended before its result). A program that prints a hidden input
    and then exits, crashes, runs out of memory or floods its output has answered every visible case:
    its output is not shown."""
    if _never_asked(execution):
        return False
    records = records_by_case(task, execution)
    # a visible case without exactly one record proves nothing: only an unanswered one does
    return not any(
        len(found) == 1 and found[0].status not in ("ok", "error")
        for found in (records.get((False, index), []) for index in range(len(task.tests)))
    )


def _load_failed(execution: SandboxExecuted, version: str) -> bool:
    """Whether every visible case failed because the program did not load. v2 asks the host first:
    an exception whose class the program named ``program failed: ...`` is that case's error, not a
    load failure."""
    if version != "v1" and not _never_asked(execution):
        return False
    return bool(execution.cases) and all(
        c.status == "error" and (c.error or "").startswith(LOAD_FAILED)
        for c in execution.cases
        if not c.hidden
    )


def _run_failure(
    execution: SandboxExecuted, failures: Iterable[CaseFailure | None], cfg: FeedbackConfig
) -> str | None:
    failed = [f for f in failures if f is not None]
    if not failed:
        return None
    if _load_failed(execution, cfg.version):
        first = next(c for c in execution.cases if not c.hidden)
        reason = (first.error or "")[len(LOAD_FAILED) :]
        return "the program failed before any case ran: " + neutralise(reason, cfg.max_error_chars)
    # a run-level limit is told only when a visible case did not finish (else it hit a hidden case)
    unfinished = any(f in ("timeout", "missing") for f in failed)
    if unfinished and execution.timed_out:
        return "the run was stopped at its time limit before every visible case finished"
    if unfinished and execution.memory_exceeded:
        return "the run ran out of memory before every visible case finished"
    if unfinished:
        return "the run ended before every visible case reported a result"
    return None


def _case_text(case: FailedCase) -> list[str]:
    lines = [f"Case {case.index + 1}: {case.call}"]
    if case.failure == "wrong" or case.failure == "not_literal":
        note = " (not a plain value)" if case.failure == "not_literal" else ""
        lines.append(f"  returned: {case.returned}{note}")
    elif case.failure == "error":
        lines.append(f"  raised: {case.error}")
    elif case.failure == "timeout":
        lines.append("  did not finish in time")
    else:
        lines.append("  reported no result")
    lines.append(f"  expected: {case.expected}")
    return lines


def render(feedback: Feedback) -> str:
    """The feedback as the model reads it (without the text: everything else in the record)."""
    failing = feedback.total - feedback.passed
    plural = "s" if feedback.total != 1 else ""
    lines = [f"Your code failed {failing} of {feedback.total} visible test case{plural}."]
    if feedback.run is not None:
        lines.append(feedback.run[0].upper() + feedback.run[1:] + ".")
    for case in feedback.cases:
        lines += _case_text(case)
    if feedback.omitted:
        lines.append(
            f"({feedback.omitted} more failing case{'s' if feedback.omitted != 1 else ''} not shown)"
        )
    for name, text in (("stdout", feedback.stdout), ("stderr", feedback.stderr)):
        if text:
            lines.append(f"{name}:")
            lines += [f"  {line}" for line in text.split("\n")]
    return "\n".join(lines) + "\n"


def derive_feedback(
    task: TaskPublished, execution: SandboxExecuted, options: CompareOptions, cfg: FeedbackConfig
) -> Feedback | None:
    """The feedback on one execution of a turn's code, or None when every visible case passed (or the
    task has none): then there is nothing to tell."""
    results = visible_results(task, execution, options)
    failing = [(i, r, f) for i, r, f in results if f is not None]
    if not failing:
        return None
    cases = []
    for index, record, failure in failing[: cfg.max_cases]:
        assert failure is not None
        returned = error = None
        if record is not None and record.result_repr is not None and failure in ("wrong", "not_literal"):
            returned = neutralise(record.result_repr, cfg.max_value_chars)
        if record is not None and failure == "error":
            error = neutralise(record.error or "an exception", cfg.max_error_chars)
        cases.append(
            FailedCase(
                index=index,
                call=_call(task, task.tests[index].input, cfg),
                expected=neutralise(task.tests[index].output, cfg.max_value_chars),
                failure=failure,
                returned=returned,
                error=error,
            )
        )
    if not task.hidden_tests:
        shown = True
    elif cfg.version == "v1":
        shown = not _hidden_ran(execution)
    else:
        shown = not _hidden_reached(task, execution)
    body = Feedback(
        version=cfg.label(),
        passed=len(results) - len(failing),
        total=len(results),
        cases=tuple(cases),
        omitted=max(0, len(failing) - cfg.max_cases),
        run=_run_failure(execution, (f for _, _, f in results), cfg),
        stdout=_tail_lines(execution.stdout, cfg.max_output_lines, cfg.max_output_chars) if shown else None,
        stderr=_tail_lines(execution.stderr, cfg.max_output_lines, cfg.max_output_chars) if shown else None,
        text="",
    )
    return body.model_copy(update={"text": render(body)})
