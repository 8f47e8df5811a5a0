"""OpenTelemetry for rlstream: SDK set-up for process entry points, and W3C trace-context helpers.

Library code only uses the OpenTelemetry API (``tracer()``, ``inject``/``extract`` below); without a
configured SDK those calls are no-ops, so importing a component never starts exporters. Entry points
(the CLI, a worker process) call :func:`configure_tracing` once.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from opentelemetry import propagate, trace
from opentelemetry.context import Context
from opentelemetry.trace import Tracer

from infra.telemetry.config import TelemetryConfig
from schemas.errors import UsageError

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

TRACER_NAME = "rlstream"
#: links one span may carry (a learner step's samples)
MAX_LINKS = 4096
_lock = threading.Lock()
_configured: object | None = None


_tracer: Tracer | None = None


class _ThreadTracer(threading.local):
    #: a class default: reading it on a thread that set none costs no AttributeError (per record)
    tracer: Tracer | None = None


#: a thread hosting a processor of a shared process traces as that processor's service (:func:`per_thread`)
_thread = _ThreadTracer()
#: once an SDK provider is installed it stays (the API sets the global provider once per process)
_sdk_seen = False
_UNKNOWN = object()
#: the providers of a shared process's processors, shut down with the process's own
_own_providers: list[TracerProvider] = []


def tracer() -> Tracer:
    """The rlstream tracer (a proxy: it follows the provider installed later by an entry point); on a
    processor's thread of a shared process, its own service's tracer."""
    own = _thread.tracer
    if own is not None:
        return own
    global _tracer
    if _tracer is None:
        _tracer = trace.get_tracer(TRACER_NAME)
    return _tracer


def recording() -> bool:
    """Whether spans started on this thread may record: False while no SDK is installed (no provider set,
    or the no-op one), when every span is only the context it continues and a caller can skip building
    spans and their attributes (see ``infra.telemetry.messaging``)."""
    global _sdk_seen
    if _sdk_seen or _thread.tracer is not None:
        return True
    # The API's global (what get_tracer_provider returns once set), read directly: asking the API
    # looks up its environment variable on every call, a third of a consumed record's span cost. The
    # rlstream tracer is made first: making it asks the API once, which loads a provider the
    # environment names (and while the global stays unset, that tracer is the no-op one).
    tracer()
    provider = getattr(trace, "_TRACER_PROVIDER", _UNKNOWN)
    if provider is None:
        return False
    if provider is _UNKNOWN:
        provider = trace.get_tracer_provider()
    _sdk_seen = not isinstance(provider, (trace.ProxyTracerProvider, trace.NoOpTracerProvider))
    return _sdk_seen


def _provider(config: TelemetryConfig, service_name: str) -> TracerProvider:
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import SpanLimits
    from opentelemetry.sdk.trace import TracerProvider as SdkProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SimpleSpanProcessor

    resource = Resource.create({"service.name": service_name, "service.namespace": config.service_namespace})
    # a learner step links to every sample it trained: far more than the default 128 links
    provider = SdkProvider(resource=resource, span_limits=SpanLimits(max_links=MAX_LINKS))
    if config.otlp_endpoint:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        endpoint = config.otlp_endpoint.rstrip("/")
        if not endpoint.endswith("/v1/traces"):
            endpoint += "/v1/traces"
        exporter = OTLPSpanExporter(
            endpoint=endpoint,
            headers=export_headers(config.otlp_headers_file),
            certificate_file=str(config.otlp_certificate_file) if config.otlp_certificate_file else None,
        )
        provider.add_span_processor(BatchSpanProcessor(exporter))
    if config.console:
        provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter()))
    return provider


def configure_tracing(config: TelemetryConfig, service_name: str) -> None:
    """Install the SDK tracer provider for this process (once; later calls are ignored).

    Spans always get real trace ids, so ``traceparent`` ties the hops of a sample together on the log
    even when nothing is exported; with ``otlp_endpoint`` set they are exported over OTLP/HTTP.
    """
    global _configured
    with _lock:
        if _configured is not None:
            return
        provider = _provider(config, service_name)
        trace.set_tracer_provider(provider)
        _configured = provider


@contextlib.contextmanager
def per_thread(config: TelemetryConfig, service_name: str) -> Iterator[None]:
    """Inside the block, this thread's spans belong to ``service_name`` (a processor sharing its process
    with others traces as itself, as it does in a process of its own)."""
    provider = _provider(config, service_name)
    with _lock:
        _own_providers.append(provider)
    _thread.tracer = provider.get_tracer(TRACER_NAME)
    try:
        yield
    finally:
        _thread.tracer = None


def shutdown_tracing() -> None:
    """Flush and stop exporters (call at process exit; spans still buffered are sent)."""
    with _lock:
        owned, _own_providers[:] = list(_own_providers), []
    for own in owned:
        own.shutdown()
    provider = trace.get_tracer_provider()
    shutdown = getattr(provider, "shutdown", None)
    if callable(shutdown):
        shutdown()


def inject(context: Context | None = None) -> tuple[str | None, str | None]:
    """``(traceparent, tracestate)`` of the current (or given) context, for an event envelope."""
    carrier: dict[str, str] = {}
    propagate.inject(carrier, context=context)
    return carrier.get("traceparent"), carrier.get("tracestate") or None


def extract(traceparent: str | None, tracestate: str | None = None) -> Context:
    """The remote context an envelope carries (an empty context when it carries none)."""
    carrier = {}
    if traceparent:
        carrier["traceparent"] = traceparent
        if tracestate:
            carrier["tracestate"] = tracestate
    return propagate.extract(carrier)


def export_headers(path: Path | None) -> dict[str, str] | None:
    """The OTLP export headers in ``path`` (``name=value`` per line; blank lines and ``#`` comments
    skipped); errors name the line, never its value."""
    if path is None:
        return None
    try:
        lines = path.read_text().splitlines()
    except OSError as exc:
        raise UsageError(
            f"setting RLSTREAM_TELEMETRY__OTLP_HEADERS_FILE: cannot read {path} ({exc.strerror})",
            hint="mount the file or correct the setting",
        ) from None
    headers: dict[str, str] = {}
    for number, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        name, sep, value = line.partition("=")
        if not sep or not name.strip():
            raise UsageError(f"{path}:{number}: expected name=value", hint="one header per line")
        headers[name.strip().lower()] = value.strip()
    return headers
