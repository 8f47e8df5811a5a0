"""``rlstream worker NAME``: run one processor in this process, so each can scale out on its own;
``rlstream worker A,B,C``: several in one process, each on a thread of its own (where cores are few,
fewer processes fight for them), every one with its own clients, groups, transactions and metrics."""

from __future__ import annotations

import logging
import signal
import threading
import time
from types import FrameType

import typer

from infra.kafka import security
from infra.telemetry.tracing import configure_tracing, shutdown_tracing
from infra.telemetry.tracing import per_thread as per_thread_tracing
from rlstream.commands._common import handle_errors
from rlstream.settings import Settings, get_settings
from rlstream.workers import PIPELINE_WORKERS, Worker, build
from schemas.errors import UsageError


def register(app: typer.Typer) -> None:
    @app.command("worker")
    @handle_errors
    def worker(
        name: str = typer.Argument(
            ...,
            help="one of: "
            + ", ".join(PIPELINE_WORKERS)
            + "; or several, comma-separated, sharing this process",
        ),
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
        projector run the same way on either runtime. Several processors named together
        (`reward,filter,experience`) share this process on the transactional runtime: each keeps its own
        consumer group, transactional id, principal, state and metrics; a crash of one stops them all
        cleanly (the process exits 1, to be restarted as one). Its metrics are served in Prometheus' text
        format on http://RLSTREAM_METRICS__HOST:RLSTREAM_METRICS__PORT/metrics (127.0.0.1:9464 by default)."""
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
    """The worker(s) ``name`` (one, or several comma-separated) in this process until SIGTERM/Ctrl-C
    (``metrics_port``: instead of the settings')."""
    names = worker_names(name)
    logging.basicConfig(
        level=logging.INFO,
        format=f"%(asctime)s {name}[{instance}] %(levelname)s %(message)s"
        if len(names) == 1
        else f"%(asctime)s %(threadName)s[{instance}] %(levelname)s %(message)s",
    )
    settings = get_settings()
    if runtime not in (None, "transactional", "faust"):
        raise UsageError(f"unknown runtime {runtime!r}", hint="--runtime transactional or --runtime faust")
    if len(names) > 1 and (runtime or settings.runtime) == "faust":
        raise UsageError(
            "processors share a process on the transactional runtime only",
            hint="run each as its own `rlstream worker NAME --runtime faust`",
        )
    configure_tracing(settings.telemetry, service_name=f"rlstream-{'+'.join(names)}")
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    # before the build: a stop asked for while the worker starts (imports, a model, migrations) ends it
    # cleanly once built, rather than killing it halfway through a migration or a checkpoint load
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    # the start-up's steps in the log (a restart's time goes to the build: imports, a model, state)
    logging.info("starting %s (%s runtime)", name, runtime or settings.runtime)
    built_at = time.monotonic()
    if len(names) == 1:
        workers = [build(name, settings, instance=instance, runtime=runtime)]  # type: ignore[arg-type]
        hosts: list[_Hosted] = []
    else:
        hosts = [_Hosted(n, settings, instance, stop) for n in names]
        for host in hosts:
            host.start()
        for host in hosts:
            host.built.wait()  # set when built, or when the build failed
        failed = [h for h in hosts if h.error is not None]
        if failed:
            stop.set()
            for host in hosts:
                host.go.set()  # each sees the stop and ends
                host.join()
            raise failed[0].error  # type: ignore[misc]
        workers = [h.worker for h in hosts if h.worker is not None]
    logging.info("built %s in %.1f s", name, time.monotonic() - built_at)
    metrics = None
    if settings.metrics.enabled:
        from infra.telemetry.metrics import serve_metrics

        metrics = serve_metrics(
            [source for w in workers for source in w.metric_sources()],
            host=settings.metrics.host,
            port=metrics_port or settings.metrics.port,
        )

    def report() -> None:
        while not stop.wait(progress_every):
            for w in workers:
                stats = w.stats
                logging.info(
                    "%sconsumed %d (%.1f/s), produced %d, dead-lettered %d, transactions %d",
                    f"{w.name}: " if hosts else "",
                    stats.consumed,
                    stats.rate(),
                    stats.produced,
                    stats.dead_lettered,
                    stats.transactions,
                )

    threading.Thread(target=report, daemon=True).start()
    t0 = time.monotonic()
    try:
        if hosts:
            _run_shared(hosts, stop, idle_exit)
        else:
            workers[0].run(stop, idle_exit_s=idle_exit)
    finally:
        stop.set()
        if metrics is not None:
            metrics.close()
        shutdown_tracing()  # the spans still buffered reach the backend before the process ends
    for w in workers:
        stats = w.stats
        logging.info(
            "%sstopped after %.0fs: consumed %d, produced %d, dead-lettered %d",
            f"{w.name}: " if hosts else "",
            time.monotonic() - t0,
            stats.consumed,
            stats.produced,
            stats.dead_lettered,
        )


def worker_names(spec: str) -> list[str]:
    """The processors ``spec`` names (``reward`` or ``reward,filter,experience``), each once."""
    names = [n.strip() for n in spec.split(",") if n.strip()]
    unknown = [n for n in names if n not in PIPELINE_WORKERS]
    if not names or unknown:
        raise UsageError(
            f"unknown worker {', '.join(unknown) or repr(spec)}",
            hint="one of: " + ", ".join(PIPELINE_WORKERS),
        )
    if len(set(names)) != len(names):
        raise UsageError(f"a worker named twice in {spec!r}", hint="name each processor once")
    return names


class _Hosted(threading.Thread):
    """One processor of a shared process, built and run on this thread: its Kafka clients connect as
    its own principal and its spans carry its own service name, as in a process of its own."""

    def __init__(self, name: str, settings: Settings, instance: str, stop: threading.Event) -> None:
        super().__init__(name=name, daemon=True)
        self.settings, self.instance, self.stop = settings, instance, stop
        self.idle_exit: float | None = None
        self.go = threading.Event()
        self.built = threading.Event()
        self.worker: Worker | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            with security.per_thread(), per_thread_tracing(self.settings.telemetry, f"rlstream-{self.name}"):
                try:
                    self.worker = build(self.name, self.settings, instance=self.instance)
                finally:
                    self.built.set()
                self.go.wait()
                if self.stop.is_set():  # stopped while the processors were built (a signal, a failed build)
                    self.worker.close()
                else:
                    self.worker.run(self.stop, idle_exit_s=self.idle_exit)
        except BaseException as exc:  # handed to the process: it stops the others and exits
            self.error = exc
            if self.built.is_set() and self.worker is not None:
                logging.getLogger(__name__).exception(
                    "%s failed; stopping the process's processors", self.name
                )
            self.stop.set()
        finally:
            self.built.set()


def _run_shared(hosts: list[_Hosted], stop: threading.Event, idle_exit: float | None) -> None:
    """Run every hosted processor until ``stop`` (or each idled out); the first one to fail stops the
    others (each ends its transaction and closes its clients) and its error ends the process, whose
    supervisor restarts them together, each resuming from its last committed transaction."""
    for host in hosts:
        host.idle_exit = idle_exit
        host.go.set()
    while any(h.is_alive() for h in hosts):
        for host in hosts:
            host.join(0.5)
            if host.error is not None:
                stop.set()
    failed = [h for h in hosts if h.error is not None]
    if failed:
        raise failed[0].error  # type: ignore[misc]
