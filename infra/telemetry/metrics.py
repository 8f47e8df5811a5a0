"""``/metrics`` of a worker process, in Prometheus' text format (prometheus-client).

Nothing is counted twice: the worker's :class:`~infra.runtime.port.ProcessorStats` (records read and
written, what its events said, its lag) are read at scrape time by one collector and turned into metric
families, next to the client's own process metrics (``process_resident_memory_bytes``, CPU seconds, open
files). Names follow Prometheus' conventions (``rlstream_..._total`` counters, ``_seconds`` summaries,
labels ``processor``, ``topic``, ``run``). Counters count committed work since the process started; a
restarted worker starts again from 0, which ``rate()`` and ``increase()`` handle.

=====================================  =====================================================================
metric                                 what
=====================================  =====================================================================
``rlstream_events_consumed_total``     committed input records, per ``topic``
``rlstream_events_produced_total``     committed output records, per ``topic``
``rlstream_errors_total``              records whose handler raised (``stage="handler"``) or that did not
                                       decode (``stage="decode"``); each was dead-lettered
``rlstream_transactions_total``        committed batches (``rlstream_transactions_aborted_total``: aborted)
``rlstream_dead_letters_total``        dead letters written, per failing ``stage``, ``original_topic`` and
                                       ``disposition`` (dead, retry)
``rlstream_consumer_lag``              records of an input ``topic`` the worker's group has not read yet
                                       (from the last fetch's high watermarks; transaction markers count)
``rlstream_batch_seconds``             from a batch's poll to its commit (summary: ``_count``, ``_sum``)
``rlstream_batch_records``             records per committed batch (summary)
``rlstream_sandbox_executions_total``  sandbox runs per ``run``, ``backend`` and ``outcome`` (ok, error,
                                       timeout, memory, violation, infra_error)
``rlstream_sandbox_run_seconds``       the programs' run time per ``run`` and ``backend`` (histogram)
``rlstream_reward``                    rewards per ``run`` and ``reward_fn`` (summary: mean = sum / count)
``rlstream_reward_mean``               the same mean as a gauge
``rlstream_verdicts_total``            noise verdicts per ``run`` and ``verdict`` (accept, mask, reject)
``rlstream_verdict_reasons_total``     reason codes of masks and rejects, per ``run`` and ``reason``
``rlstream_learner_step``              the newest step the learner published, per ``run``
``rlstream_policy_version``            the newest policy version the learner published, per ``run``
``rlstream_generator_policy_version``  the version the run's generators said they loaded, per ``run``
``rlstream_policy_published_timestamp_seconds``  when the learner last published a version, per ``run``
=====================================  =====================================================================
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
    SummaryMetricFamily,
)
from prometheus_client.platform_collector import PlatformCollector
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.registry import Collector

from infra.runtime.port import ProcessorStats
from infra.runtime.tally import Summary
from schemas.errors import UsageError

log = logging.getLogger(__name__)

#: a processor's name and how to read its stats now
StatsSource = tuple[str, Callable[[], ProcessorStats]]


class StatsCollector(Collector):
    """The metric families of some processors' stats, built when Prometheus scrapes."""

    def __init__(self, sources: Sequence[StatsSource]) -> None:
        self._sources = list(sources)

    def collect(self) -> Iterator[Metric]:
        families = _Families()
        for name, read in self._sources:
            families.add(name, read())
        yield from families.all()


class _Families:
    def __init__(self) -> None:
        p = ["processor"]
        self.consumed = CounterMetricFamily(
            "rlstream_events_consumed", "Committed input records", labels=[*p, "topic"]
        )
        self.produced = CounterMetricFamily(
            "rlstream_events_produced", "Committed output records", labels=[*p, "topic"]
        )
        self.errors = CounterMetricFamily(
            "rlstream_errors", "Records that failed their handler or did not decode", labels=[*p, "stage"]
        )
        self.transactions = CounterMetricFamily("rlstream_transactions", "Committed batches", labels=p)
        self.aborted = CounterMetricFamily("rlstream_transactions_aborted", "Aborted batches", labels=p)
        self.dead = CounterMetricFamily(
            "rlstream_dead_letters",
            "Dead letters written",
            labels=[*p, "stage", "original_topic", "disposition"],
        )
        self.lag = GaugeMetricFamily(
            "rlstream_consumer_lag", "Records of an input topic not read yet", labels=[*p, "topic"]
        )
        self.batch_seconds = SummaryMetricFamily(
            "rlstream_batch_seconds", "Seconds from a batch's poll to its commit", labels=p
        )
        self.batch_records = SummaryMetricFamily(
            "rlstream_batch_records", "Records per committed batch", labels=p
        )
        self.sandbox = CounterMetricFamily(
            "rlstream_sandbox_executions",
            "Sandbox runs by outcome",
            labels=[*p, "run", "backend", "outcome"],
        )
        self.sandbox_seconds = HistogramMetricFamily(
            "rlstream_sandbox_run_seconds", "Run time of the programs", labels=[*p, "run", "backend"]
        )
        self.reward = SummaryMetricFamily(
            "rlstream_reward", "Rewards scored", labels=[*p, "run", "reward_fn"]
        )
        self.reward_mean = GaugeMetricFamily(
            "rlstream_reward_mean", "Mean reward scored", labels=[*p, "run", "reward_fn"]
        )
        self.verdicts = CounterMetricFamily(
            "rlstream_verdicts", "Noise verdicts", labels=[*p, "run", "verdict"]
        )
        self.reasons = CounterMetricFamily(
            "rlstream_verdict_reasons", "Reasons of masks and rejects", labels=[*p, "run", "reason"]
        )
        self.step = GaugeMetricFamily(
            "rlstream_learner_step", "Newest learner step published", labels=[*p, "run"]
        )
        self.version = GaugeMetricFamily(
            "rlstream_policy_version", "Newest policy version published", labels=[*p, "run"]
        )
        self.published_at = GaugeMetricFamily(
            "rlstream_policy_published_timestamp_seconds",
            "When the learner last published a version (epoch seconds)",
            labels=[*p, "run"],
        )
        self.loaded = GaugeMetricFamily(
            "rlstream_generator_policy_version", "Policy version the generators loaded", labels=[*p, "run"]
        )

    def add(self, name: str, s: ProcessorStats) -> None:
        for topic, n in sorted(s.consumed_by_topic.items()):
            self.consumed.add_metric([name, topic], n)
        for topic, n in sorted(s.produced_by_topic.items()):
            self.produced.add_metric([name, topic], n)
        self.errors.add_metric([name, "handler"], s.handler_errors)
        self.errors.add_metric([name, "decode"], s.decode_errors)
        self.transactions.add_metric([name], s.transactions)
        self.aborted.add_metric([name], s.aborted)
        for topic, n in sorted(s.lag.items()):
            self.lag.add_metric([name, topic], n)
        _summary(self.batch_seconds, [name], s.batch_seconds)
        _summary(self.batch_records, [name], s.batch_records)
        t = s.tally
        for (stage, topic, disposition), n in sorted(t.dead_letters.items()):
            self.dead.add_metric([name, stage, topic, disposition], n)
        for (run, backend, outcome), n in sorted(t.sandbox.items()):
            self.sandbox.add_metric([name, run, backend, outcome], n)
        for (run, backend), histogram in sorted(t.sandbox_seconds.items()):
            # bounds written as Prometheus' own clients write them ("5.0", "+Inf")
            buckets = [("+Inf" if math.isinf(b) else repr(b), n) for b, n in histogram.buckets()]
            self.sandbox_seconds.add_metric([name, run, backend], buckets, histogram.sum)
        for (run, fn), summary in sorted(t.rewards.items()):
            _summary(self.reward, [name, run, fn], summary)
            if summary.mean is not None:
                self.reward_mean.add_metric([name, run, fn], summary.mean)
        for (run, verdict), n in sorted(t.verdicts.items()):
            self.verdicts.add_metric([name, run, verdict], n)
        for (run, reason), n in sorted(t.reasons.items()):
            self.reasons.add_metric([name, run, reason], n)
        for gauge, values in ((self.step, t.learner_step), (self.version, t.policy_version)):
            for run, value in sorted(values.items()):
                gauge.add_metric([name, run], value)
        for run, value in sorted(t.loaded_version.items()):
            self.loaded.add_metric([name, run], value)
        for run, at in sorted(t.published_at.items()):
            self.published_at.add_metric([name, run], at)

    def all(self) -> Iterable[Metric]:
        return [v for v in vars(self).values() if isinstance(v, Metric)]


def _summary(family: SummaryMetricFamily, labels: list[str], summary: Summary) -> None:
    family.add_metric(labels, count_value=summary.count, sum_value=summary.sum)


@dataclass
class MetricsServer:
    """A worker's ``/metrics`` endpoint, serving until :meth:`close`."""

    port: int
    _server: Any
    _thread: Any

    @property
    def url(self) -> str:
        return f"http://{self._server.server_address[0]}:{self.port}/metrics"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)


def serve_metrics(sources: Sequence[StatsSource], *, host: str, port: int) -> MetricsServer:
    """Serve ``sources``' metrics and the process' own on ``host:port`` (0: a free port, see ``.port``).

    A port another process holds (a second worker on the same machine) is not worth failing the worker:
    its metrics go to a free port instead, with a warning naming both."""
    registry = CollectorRegistry()
    ProcessCollector(registry=registry)
    PlatformCollector(registry=registry)
    registry.register(StatsCollector(sources))
    try:
        server, thread = start_http_server(port, addr=host, registry=registry)
    except OSError as exc:
        if port == 0:
            raise UsageError(
                f"cannot serve metrics on {host}: {exc.strerror or exc}",
                hint="check RLSTREAM_METRICS__HOST, or turn metrics off with RLSTREAM_METRICS__ENABLED=false",
            ) from exc
        server, thread = start_http_server(0, addr=host, registry=registry)
        log.warning(
            "metrics: port %d is taken (%s); serving on port %d instead (RLSTREAM_METRICS__PORT per worker)",
            port,
            exc.strerror or exc,
            server.server_address[1],
        )
    served = MetricsServer(int(server.server_address[1]), server, thread)
    log.info("metrics on %s", served.url)
    return served
