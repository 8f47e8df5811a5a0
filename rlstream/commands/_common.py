"""Helpers shared by the command modules."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import wraps
from typing import Any, ParamSpec, TypeVar

import typer

from schemas.errors import RlstreamError

P = ParamSpec("P")
R = TypeVar("R")


def handle_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """Turn an :class:`RlstreamError` into a plain message on stderr and its exit code."""

    @wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except RlstreamError as exc:
            typer.echo(f"error: {printable(str(exc))}", err=True)
            raise typer.Exit(exc.exit_code) from exc
        except KeyboardInterrupt:
            typer.echo("interrupted", err=True)
            raise typer.Exit(130) from None

    return wrapper


#: C0 controls but newline and tab, DEL, C1 controls, and the bidirectional overrides that make text
#: read differently from what it is
_UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """``text`` safe to show on a terminal: a program's output, a model's code or a task's id may
    carry escape sequences (OSC 52 clipboard writes, title changes, ``\\r\\x1b[K`` overwrites that
    fake a line). Each such character is shown as its escape (``\\x1b``) instead."""

    def escape(m: re.Match[str]) -> str:
        code = ord(m.group())
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

    return _UNPRINTABLE.sub(escape, text)


def echo_json(payload: Any) -> None:
    typer.echo(json.dumps(payload, indent=None, sort_keys=False, default=str))
