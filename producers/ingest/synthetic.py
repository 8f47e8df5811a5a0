"""A synthetic task family the tiny model can learn on a CPU in minutes: comparisons against a small
threshold, completed by one token.

Each prompt ends inside the return statement (``return x > ``); the model continues it with one token.
Any small integer passes (the cases probe far above and below the threshold), every other token fails:
a name raises ``NameError``, punctuation does not parse (the noise filter masks it). The random tiny
model puts about 2% of its mass on number tokens, so early groups are mostly failures with an
occasional pass - exactly the signal group-relative advantages learn from - and a policy that puts
its mass on numbers scores near 1.

The cases are chosen so the noise filter's task checks hold: outputs differ (no constant answer
passes), they are never the first argument (no identity answer), and the inputs (1000, 500, ...)
are not numbers a one-token answer writes, so a passing program is never taken for a hard-coder.
Every task goes through the real sandbox like any other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from schemas.errors import InputError
from schemas.rollout import SamplingParams
from schemas.task import TaskPublished, TestCase

SOURCE = "synthetic"

#: one token after the open comparison; sampled at temperature 1 (the learner scores at the same)
SAMPLING = SamplingParams(temperature=1.0, top_p=1.0, max_tokens=1)


@dataclass(frozen=True)
class _Template:
    name: str
    arg: str
    op: str
    doc: str


# ``>``/``>=`` pass far-above inputs, ``<``/``<=`` far-below ones
_TEMPLATES = (
    _Template("is_large", "x", ">", "Return True when x is above a small threshold."),
    _Template("is_small", "x", "<", "Return True when x is below a small threshold."),
    _Template("exceeds_floor", "n", ">", "Return whether n exceeds the floor."),
    _Template("under_ceiling", "n", "<", "Return whether n is under the ceiling."),
    _Template("at_least", "value", ">=", "Return True if value is at least the limit."),
    _Template("at_most", "value", "<=", "Return True if value is at most the limit."),
    _Template("above_zero_ish", "count", ">", "Check that count is above a small bound."),
    _Template("below_bound", "count", "<", "Check that count is below a small bound."),
)


def _cases(op: str, scale: int) -> tuple[tuple[TestCase, ...], tuple[TestCase, ...]]:
    big = op in (">", ">=")
    visible = (
        TestCase(input=f"({10 * scale},)", output=repr(big)),
        TestCase(input=f"({-10 * scale},)", output=repr(not big)),
    )
    hidden = (
        TestCase(input=f"({5 * scale},)", output=repr(big)),
        TestCase(input=f"({-5 * scale},)", output=repr(not big)),
        TestCase(input=f"({7 * scale + 3},)", output=repr(big)),
    )
    return visible, hidden


def synthetic_tasks(limit: int | None = None) -> list[TaskPublished]:
    """The family's tasks (8), in a fixed order; ``limit`` keeps the first N."""
    tasks: list[TaskPublished] = []
    for i, t in enumerate(_TEMPLATES):
        visible, hidden = _cases(t.op, 100 * (i + 1))
        head = f'def {t.name}({t.arg}: int) -> bool:\n    """{t.doc}"""\n'
        tasks.append(
            TaskPublished(
                task_id=f"synthetic/{t.name}",
                prompt=f"{head}    return {t.arg} {t.op} ",
                entry_point=t.name,
                tests=visible,
                hidden_tests=hidden,
                reference=f"{head}    return {t.arg} {t.op} 0\n",
                source=SOURCE,
            )
        )
    return tasks[:limit] if limit else tasks


# --- a family only feedback can solve ------------------------------------------------------------------

FEEDBACK_SOURCE = "synthetic-feedback"
#: the offsets the family's tasks add: one-token numbers, one per task
FEEDBACK_OFFSETS = (2, 3, 5, 7)
#: every offset a one-digit answer can name (0 is left out: ``offset(0)`` would expect its argument)
FEEDBACK_OFFSETS_WIDE = tuple(range(1, 10))
#: the one prompt every task of the family shares: nothing in it tells the tasks apart
FEEDBACK_PROMPT = 'def offset(x: int) -> int:\n    """Return x plus the offset."""\n    return x + '


def feedback_tasks(
    limit: int | None = None, *, max_turns: int | None = 2, offsets: Sequence[int] = FEEDBACK_OFFSETS
) -> list[TaskPublished]:
    """Tasks whose first answer can only be a guess: every task has the same prompt (``return x + `` and
    one token) but its own offset, so no first turn can beat ``1 / len(offsets)`` on average.
    The visible case, ``offset(0)``, expects the offset itself, so the feedback on a wrong first answer
    names it (``expected: 3``); hidden cases (far from 0) keep a constant answer from passing.

    A policy that reads the feedback solves every task on its second turn, one blind to it solves at most
    ``1 / (len(offsets) - 1)`` of the second turns: the more offsets (``FEEDBACK_OFFSETS_WIDE``), the less
    any constant answer earns (``bench/episode_learning.py``).
    """
    if any(k < 1 for k in offsets) or len(set(offsets)) != len(offsets):
        raise InputError(f"must be distinct and positive, got {list(offsets)}", location="offsets")
    tasks = [
        TaskPublished(
            task_id=f"{FEEDBACK_SOURCE}/add{k}",
            prompt=FEEDBACK_PROMPT,
            entry_point="offset",
            tests=(TestCase(input="(0,)", output=repr(k)),),
            hidden_tests=(
                TestCase(input="(1000,)", output=repr(1000 + k)),
                TestCase(input="(-1000,)", output=repr(-1000 + k)),
            ),
            reference=f"{FEEDBACK_PROMPT}{k}\n",
            source=FEEDBACK_SOURCE,
            max_turns=max_turns,
        )
        for k in offsets
    ]
    return tasks[:limit] if limit else tasks
