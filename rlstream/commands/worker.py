"""``rlstream worker NAME``: run one processor in this process, so each can scale out on its own."""

from __future__ import annotations

import logging
import signal
import threading
import time
from types import FrameType

import typer

from infra.telemetry.tracing import configure_tracing, shutdown_tracing
from rlstream.commands._common import handle_errors
from rlstream.settings import get_settings
from rlstream.workers import PIPELINE_WORKERS, build
from schemas.errors import UsageError


def register(app: typer.Typer) -> None:
    @app.command("worker")
    @handle_errors
    def worker(
        name: str = typer.Argument(..., help="one of: " + ", ".join(PIPELINE_WORKERS)),
        instance: str = typer.Option("0", "--instance", help="distinct per replica of the same worker"),
        idle_exit: float | None = typer.Option(
            None, "--idle-exit", help="exit after this many seconds without input (batch use)"
        ),
        progress_every: float = typer.Option(10.0, "--progress-every", help="seconds between progress lines"),
        runtime: str | None = typer.Option(
            None,
            "--runtime",
            help="transactional (exactly-once) or faust (at-least-once, effectively-once results); "
            "default: RLSTREAM_RUNTIME, else transactional",
        ),
    ) -> None:
        """Consume the processor's input topics and produce its events, until SIGTERM/Ctrl-C.

        On the transactional runtime every output is written exactly once; on Faust at least once,
        with deterministic event ids that every consumer is idempotent by. The learner and the
        projector run the same way on either runtime. Its metrics are served in Prometheus' text format
        on http://RLSTREAM_METRICS__HOST:RLSTREAM_METRICS__PORT/metrics (127.0.0.1:9464 by default)."""
        run_worker(
            name, instance=instance, idle_exit=idle_exit, progress_every=progress_every, runtime=runtime
        )


def run_worker(
    name: str,
    *,
    instance: str = "0",
    idle_exit: float | None = None,
    progress_every: float = 10.0,
    runtime: str | None = None,
    metrics_port: int | None = None,
) -> None:
    """One worker in this process until SIGTERM/Ctrl-C (``metrics_port``: instead of the settings')."""
    logging.basicConfig(
        level=logging.INFO, format=f"%(asctime)s {name}[{instance}] %(levelname)s %(message)s"
    )
    settings = get_settings()
    if runtime not in (None, "transactional", "faust"):
        raise UsageError(f"unknown runtime {runtime!r}", hint="--runtime transactional or --runtime faust")
    configure_tracing(settings.telemetry, service_name=f"rlstream-{name}")
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    # before the build: a stop asked for while the worker starts (imports, a model, migrations) ends it
    # cleanly once built, rather than killing it halfway through a migration or a checkpoint load
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    w = build(name, settings, instance=instance, runtime=runtime)  # type: ignore[arg-type]
    metrics = None
    if settings.metrics.enabled:
        from infra.telemetry.metrics import serve_metrics

        metrics = serve_metrics(w.metric_sources(), host=settings.metrics.host, port=settings.metrics.port)
    stats = w.stats

    def report() -> None:
        while not stop.wait(progress_every):
            logging.info(
                "consumed %d (%.1f/s), produced %d, dead-lettered %d, transactions %d",
                stats.consumed,
                stats.rate(),
                stats.produced,
                stats.dead_lettered,
                stats.transactions,
            )

    threading.Thread(target=report, daemon=True).start()
    t0 = time.monotonic()
    try:
        w.run(stop, idle_exit_s=idle_exit)
    finally:
        stop.set()
        if metrics is not None:
            metrics.close()
        shutdown_tracing()  # the spans still buffered reach the backend before the process ends
    logging.info(
        "stopped after %.0fs: consumed %d, produced %d, dead-lettered %d",
        time.monotonic() - t0,
        stats.consumed,
        stats.produced,
        stats.dead_lettered,
    )
