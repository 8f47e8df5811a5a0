"""The ``rlstream`` command line: a thin layer that reads settings, wires components and maps errors
to exit codes (0 ok, 1 the work found a problem, 2 bad usage or input).

Each command group lives in its own module under ``rlstream/commands`` with a ``register(app)``
function; they are discovered here in name order.
"""

from __future__ import annotations

import importlib
import pkgutil

import typer

from rlstream import commands

app = typer.Typer(
    name="rlstream",
    help="Event-sourced RL post-training of code models over Apache Kafka.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)

for _info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
    if _info.name.startswith("_"):
        continue
    importlib.import_module(f"rlstream.commands.{_info.name}").register(app)


if __name__ == "__main__":
    app()
