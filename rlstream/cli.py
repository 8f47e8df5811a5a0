"""The ``rlstream`` command line: a thin layer that reads settings, wires components and maps errors
to exit codes (0 ok, 1 the work found a problem, 2 bad usage or input).

Each command group lives in its own module under ``rlstream/commands`` with a ``register(app)``
function; they are discovered here in name order.
"""

from __future__ import annotations

import atexit
import importlib
import os
import pkgutil
import sys
import threading
import traceback

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


def main() -> None:
    """Run the command, then leave without the interpreter's teardown.

    The WASM runtime keeps native I/O worker threads that the interpreter does not know about; when
    the process then finalises, one of them can panic across the C boundary and abort it (exit -6
    after the command's own output was complete, seen as a flaky ``sandbox exec`` on a loaded
    machine). So once the command is done everything a normal exit does for us runs here —
    non-daemon threads joined, exit handlers (telemetry and Kafka flushes, the epoch ticker's stop)
    run, standard streams flushed — and the process ends with the command's code.
    """
    try:
        app()
        code = 0
    except SystemExit as stop:
        code = _exit_code(stop.code)
    except BaseException:  # reported as the interpreter would, then exit 1
        traceback.print_exc()
        code = 1
    current = threading.current_thread()
    for thread in threading.enumerate():
        if thread is not current and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            code = code or 1  # output lost (a closed pipe) is a failed command
    os._exit(code)


def _exit_code(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


if __name__ == "__main__":
    main()
