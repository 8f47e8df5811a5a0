"""Corrections to HumanEval reference solutions that contradict their own prompts.

The reference is the probe's judge on generated inputs (streams/probe): where it is wrong, a correct
program that disagrees with it is rejected as ``wrong.disagrees_with_reference``. Each erratum below
was found by a correct program the probe rejected; each is a bug in the published canonical solution,
not a matter of reading, and each corrected solution passes every case of the task's own check
(``tests/unit/test_errata.py``).

An erratum applies only to the exact canonical text it was written against (its SHA-256): a data set
that has changed keeps its own reference, and the ingest says so in its log, rather than having a fix
for other code pasted over it.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Erratum:
    task_id: str
    #: SHA-256 of the canonical solution this erratum corrects (hex)
    original_sha256: str
    solution: str
    why: str


ERRATA: tuple[Erratum, ...] = (
    Erratum(
        task_id="HumanEval/124",
        original_sha256="e9e7a3a193f2c9a79c509ddb2e518ecc55ae46500274dd7895ce81fd82d5a871",
        why=(
            "operator precedence: `month in [...] and day < 1 or day > 29` reads `... or day > 29` for"
            " every month, so day 30 and 31 of every month are rejected; the prompt allows 31 days in"
            " months 1, 3, 5, 7, 8, 10, 12 and 30 in months 4, 6, 9, 11"
        ),
        solution="""\
    try:
        date = date.strip()
        month, day, year = date.split('-')
        month, day, year = int(month), int(day), int(year)
        if month < 1 or month > 12:
            return False
        if month in [1,3,5,7,8,10,12] and (day < 1 or day > 31):
            return False
        if month in [4,6,9,11] and (day < 1 or day > 30):
            return False
        if month == 2 and (day < 1 or day > 29):
            return False
    except:
        return False

    return True
""",
    ),
    Erratum(
        task_id="HumanEval/140",
        original_sha256="54cf296c5899c0f30da0f441012ccba89a4353dcb402ced164a0421b9affdc75",
        why=(
            "a run of one or two blanks at the end of the string becomes a single '_' (the loop's"
            " end-of-string branch), while the prompt replaces every blank with an underscore, as the"
            " same run inside the string is"
        ),
        solution="""\
    new_text = ""
    i = 0
    start, end = 0, 0
    while i < len(text):
        if text[i] == " ":
            end += 1
        else:
            if end - start > 2:
                new_text += "-"+text[i]
            elif end - start > 0:
                new_text += "_"*(end - start)+text[i]
            else:
                new_text += text[i]
            start, end = i+1, i+1
        i+=1
    if end - start > 2:
        new_text += "-"
    elif end - start > 0:
        new_text += "_"*(end - start)
    return new_text
""",
    ),
    Erratum(
        task_id="HumanEval/144",
        original_sha256="182032d31263842af5203581014aac094449f829736b190fe374189d3623b42f",
        why=(
            "whether x * n is whole is decided through float division, which rounds past 2**53, so on"
            " large fractions the answer follows the rounded quotient rather than the product"
        ),
        solution="""\
    a, b = x.split("/")
    c, d = n.split("/")
    numerator = int(a) * int(c)
    denom = int(b) * int(d)
    if numerator % denom == 0:
        return True
    return False
""",
    ),
    Erratum(
        task_id="HumanEval/150",
        original_sha256="f56dd4f61a3a04c9dd88141c72379414c7609b63d2a2511b6543aa8105cdd650",
        why=(
            "for n <= 0 the loop over range(2, n) never runs and the answer is x, calling 0 and the"
            " negative numbers prime; no number below 2 is prime"
        ),
        solution="""\
    if n < 2:
        return y
    for i in range(2, n):
        if n % i == 0:
            return y
            break
    else:
        return x
""",
    ),
)

BY_TASK: dict[str, Erratum] = {e.task_id: e for e in ERRATA}


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def corrected_solution(task_id: str, canonical: str) -> str:
    """The canonical solution with its erratum applied, if one was written against exactly this text."""
    erratum = BY_TASK.get(task_id)
    if erratum is None:
        return canonical
    if sha256(canonical) != erratum.original_sha256:
        log.warning(
            "%s: the data set's canonical solution is not the one its erratum corrects; kept as it is",
            task_id,
        )
        return canonical
    return erratum.solution
