"""Helpers shared by the command modules."""

from __future__ import annotations

import json
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
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(exc.exit_code) from exc
        except KeyboardInterrupt:
            typer.echo("interrupted", err=True)
            raise typer.Exit(130) from None

    return wrapper


def echo_json(payload: Any) -> None:
    typer.echo(json.dumps(payload, indent=None, sort_keys=False, default=str))
