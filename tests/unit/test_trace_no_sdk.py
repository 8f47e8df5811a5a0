"""A process with no tracing SDK still carries each record's trace on: the spans it starts are only the
context a record names, read and written exactly as the OpenTelemetry API and W3C propagator would."""

from __future__ import annotations

import subprocess
import sys
import textwrap

# in a fresh interpreter: a test earlier in this process may have installed an SDK (set once per process)
SCRIPT = textwrap.dedent(
    """
    from opentelemetry import context, trace
    from opentelemetry.trace import NonRecordingSpan, set_span_in_context

    from infra.telemetry.messaging import remote_span, span_context, start_process, start_send
    from infra.telemetry.messaging import trace_context_of
    from infra.telemetry.tracing import extract, inject, recording

    assert not recording()
    api = trace.get_tracer("check")  # the global API's own no-op path, for comparison
    cases = [
        ("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", None),
        ("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00", "vendor=a,other=b"),
        ("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", ""),
        ("00-00000000000000000000000000000000-b7ad6b7169203331-01", None),
        ("00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01", None),
        ("ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", None),
        ("01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-later", None),
        ("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-later", None),
        ("00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01", None),
        (None, None),
    ]
    for tp, ts in cases:
        want = api.start_span("x", context=extract(tp, ts))
        got = start_process(
            "t", partition=0, offset=0, event_id="e", group="g", traceparent=tp, tracestate=ts
        )
        assert isinstance(got, NonRecordingSpan) and not got.is_recording()
        assert got.get_span_context() == want.get_span_context() == remote_span(tp, ts).get_span_context(), tp
        assert span_context(tp, ts) == (want.get_span_context() if want.get_span_context().is_valid else None)
        # what a handler publishes while the record is current continues its trace, as the API would
        token = context.attach(set_span_in_context(got))
        try:
            sent = start_send("out", event_id="e2", key="k", client_id="c")
            assert sent.get_span_context() == got.get_span_context()
            expected = inject() if got.get_span_context().is_valid else (None, None)
            assert trace_context_of(sent) == expected, (tp, trace_context_of(sent), expected)
        finally:
            context.detach(token)
    print("ok")
    """
)


def test_a_process_without_tracing_continues_each_records_trace_as_the_api_would():
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
