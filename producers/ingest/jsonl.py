"""Read tasks from a JSONL file: one TaskPublished body per line, every bad line reported by number.

A line may omit ``schema_version`` (the current version is assumed) or carry an older one (it is
upcast). Nothing is published from here: parsing is pure, so a strict caller can refuse the whole file
before a single record reaches the log.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from producers.ingest.tolerance import stated_tolerance
from schemas.errors import InputError
from schemas.registry import upcast
from schemas.task import TaskPublished

MAX_LINE_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class LineError:
    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


@dataclass
class ParsedFile:
    tasks: list[tuple[int, TaskPublished]] = field(default_factory=list)
    errors: list[LineError] = field(default_factory=list)


def parse_line(text: str) -> TaskPublished:
    """One JSONL line as a task; raises InputError naming the field at fault."""
    if len(text.encode()) > MAX_LINE_BYTES:
        raise InputError(f"line is larger than {MAX_LINE_BYTES} bytes")
    try:
        body = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"not JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise InputError("not JSON this parser accepts (nested too deeply)") from None
    if not isinstance(body, dict):
        raise InputError("a task must be a JSON object")
    version = body.setdefault("schema_version", TaskPublished.version)
    if not isinstance(version, int) or isinstance(version, bool):
        raise InputError("field schema_version: must be an integer")
    try:
        cls, body = upcast(f"{TaskPublished.event_type}.v{version}", body)
    except KeyError as exc:
        raise InputError(f"field schema_version: {str(exc).strip(chr(39))}") from None
    try:
        task = cls.model_validate(body)
    except ValidationError as exc:
        errors = exc.errors()
        first = errors[0]
        loc = ".".join(str(p) for p in first["loc"]) or "(task)"
        more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
        raise InputError(f"field {loc}: {first['msg']}{more}") from None
    assert isinstance(task, TaskPublished)
    if task.check and task.tolerance is None:
        # the tolerance the check states compares the task's float answers (when it states one)
        stated = stated_tolerance(task.check)
        if stated is not None:
            task = task.model_copy(update={"tolerance": stated})
    return task


def parse_lines(lines: Iterable[str]) -> ParsedFile:
    parsed = ParsedFile()
    seen: dict[str, int] = {}
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            task = parse_line(text)
        except InputError as exc:
            parsed.errors.append(LineError(number, exc.message))
            continue
        if task.task_id in seen:
            parsed.errors.append(
                LineError(number, f"field task_id: {task.task_id!r} already on line {seen[task.task_id]}")
            )
            continue
        seen[task.task_id] = number
        parsed.tasks.append((number, task))
    return parsed


def parse_file(path: Path) -> ParsedFile:
    try:
        with path.open(encoding="utf-8") as fh:
            return parse_lines(fh)
    except FileNotFoundError:
        raise InputError(f"no such file: {path}") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path} is not UTF-8 text (byte {exc.start})") from None
    except IsADirectoryError:
        raise InputError(f"{path} is a directory, expected a .jsonl file") from None
