"""A local OpenTelemetry trace backend: the Jaeger v2 binary the set-up builds, with in-memory storage,
an OTLP/HTTP receiver and its query HTTP API, on free loopback ports.

``scripts/setup.d/50-jaeger.sh`` builds the binary from the Go module proxy into
``<home>/bin/jaeger-<version>``; tests start one per session and read traces back over HTTP.
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Any

from schemas.errors import DependencyError

#: the Jaeger module version the set-up builds (``github.com/jaegertracing/jaeger/cmd/jaeger``)
VERSION = "v1.76.0"
SETUP_HINT = "run scripts/setup.sh (or bash scripts/setup.d/50-jaeger.sh) to build it"

_CONFIG = """\
service:
  extensions: [jaeger_storage, jaeger_query, healthcheckv2]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  healthcheckv2:
    use_v2: true
    http:
      endpoint: 127.0.0.1:{health}
  jaeger_query:
    enable_tracing: false
    storage:
      traces: memstore
    http:
      endpoint: 127.0.0.1:{query_http}
    grpc:
      endpoint: 127.0.0.1:{query_grpc}
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: {max_traces}
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:{otlp_http}
processors:
  batch:
    timeout: 200ms
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
"""


def binary_path(home: Path) -> Path:
    return home / "bin" / f"jaeger-{VERSION}"


def _free_ports(n: int) -> list[int]:
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [int(s.getsockname()[1]) for s in socks]
    finally:
        for s in socks:
            s.close()


class TraceBackend:
    """One backend process; use as a context manager (or :meth:`start` / :meth:`stop`)."""

    def __init__(self, binary: Path, workdir: Path, *, max_traces: int = 100_000) -> None:
        self.binary = binary
        self.workdir = workdir
        self.max_traces = max_traces
        self.otlp_port, self.query_port, self._grpc_port, self._health_port = _free_ports(4)
        self._proc: subprocess.Popen[bytes] | None = None
        self.log_path = workdir / "trace-backend.log"

    @property
    def otlp_endpoint(self) -> str:
        """Where to point ``RLSTREAM_TELEMETRY__OTLP_ENDPOINT``."""
        return f"http://127.0.0.1:{self.otlp_port}"

    @property
    def query_url(self) -> str:
        return f"http://127.0.0.1:{self.query_port}"

    def start(self, timeout_s: float = 60.0) -> None:
        if not self.binary.is_file():
            raise DependencyError(f"the trace backend {self.binary} is missing", hint=SETUP_HINT)
        self.workdir.mkdir(parents=True, exist_ok=True)
        config = self.workdir / "trace-backend.yaml"
        config.write_text(
            _CONFIG.format(
                health=self._health_port,
                query_http=self.query_port,
                query_grpc=self._grpc_port,
                otlp_http=self.otlp_port,
                max_traces=self.max_traces,
            )
        )
        with self.log_path.open("ab") as log:
            self._proc = subprocess.Popen(
                [str(self.binary), "--config", str(config)],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise DependencyError(
                    f"the trace backend exited with {self._proc.returncode}:\n{self.log_tail()}"
                )
            if self._ready():
                return
            time.sleep(0.2)
        self.stop()
        raise DependencyError(f"the trace backend was not ready within {timeout_s:.0f}s:\n{self.log_tail()}")

    def _ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self._health_port}/status", timeout=2) as r:
                healthy = r.status == 200
            with urllib.request.urlopen(f"{self.query_url}/api/services", timeout=2) as r:
                return healthy and bool(r.status == 200)
        except (OSError, urllib.error.URLError):
            return False

    def stop(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(15)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(10)
        self._proc = None

    def __enter__(self) -> TraceBackend:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    # -- the query API (the backend's HTTP JSON API: traces with spans, references and processes) ----
    def _get(self, path: str, params: dict[str, str] | None = None) -> Any:
        url = f"{self.query_url}{path}"
        if params:
            url += "?" + urllib.parse.urlencode(params)
        try:
            with urllib.request.urlopen(url, timeout=30) as r:
                return json.loads(r.read())
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                return None
            raise

    def trace(self, trace_id: str) -> dict[str, Any] | None:
        """The trace with this (32 hex digit) id, or None when the backend has none."""
        body = self._get(f"/api/traces/{trace_id}")
        data = (body or {}).get("data") or []
        return data[0] if data else None

    def find_traces(
        self,
        service: str,
        *,
        operation: str | None = None,
        tags: dict[str, str] | None = None,
        limit: int = 1000,
        lookback: str = "1h",
    ) -> list[dict[str, Any]]:
        params = {"service": service, "limit": str(limit), "lookback": lookback}
        if operation:
            params["operation"] = operation
        if tags:
            params["tags"] = json.dumps(tags)
        body = self._get("/api/traces", params)
        return list((body or {}).get("data") or [])

    def services(self) -> list[str]:
        return list((self._get("/api/services") or {}).get("data") or [])


def span_service(trace: dict[str, Any], span: dict[str, Any]) -> str:
    """The service.name of the process that reported ``span`` (a span of ``trace``)."""
    return str(trace.get("processes", {}).get(span.get("processID"), {}).get("serviceName", ""))


def span_tags(span: dict[str, Any]) -> dict[str, Any]:
    return {t["key"]: t["value"] for t in span.get("tags", [])}
