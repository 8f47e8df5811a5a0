"""What a task says about its arguments, read from its prompt (pure): whether a call may change them.

A probe run makes its calls as a caller would (``streams/sandbox/guest_harness.pysrc``, the case
loop of ``_rls_main``): it reuses its argument objects from call to call, which judges a cache keyed
by an argument's identity.
A change the call itself makes to an argument is judged only where the task forbids one: correct
programs change their arguments where the task's reference does not (``l.sort()`` before taking the
last element), and references do where correct programs do not (HumanEval/149's ``lst.sort()``), so
neither an unchanged nor a changed argument is the task's rule unless its prompt states one ("don't
change the given array").
"""

from __future__ import annotations

import re

from schemas.task import TaskPublished

#: a prompt's statement that an argument must stay as it was: a negation, then a verb of changing, then
#: (within a few words) what is changed: the given/input/original list, array, string, dict...
_FORBIDS = re.compile(
    r"\b(?:don'?t|do\s+not|does\s+not|must\s+not|should\s+not|shouldn'?t|never|without)\s+"
    r"(?:change|changing|modify|modifying|mutate|mutating|alter|altering)\b"
    r"(?:\s+\w+){0,3}?\s+(?:array|list|lists|arrays|input|inputs|argument|arguments|dict|dictionary|set|"
    r"grid|matrix|parameter|parameters)\b",
    re.IGNORECASE,
)
#: a prompt's statement that an argument is to be changed in place (then no change is a failure either)
_IN_PLACE = re.compile(r"\bin[\s-]place\b", re.IGNORECASE)


def keeps_arguments(task: TaskPublished) -> bool:
    """Whether the task's prompt says a call must leave its arguments as they were (and says nothing
    of changing them in place)."""
    prompt = task.prompt or ""
    return bool(_FORBIDS.search(prompt)) and not _IN_PLACE.search(prompt)
