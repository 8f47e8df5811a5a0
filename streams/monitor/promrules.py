"""The monitor's alert rules as a Prometheus rule file, for clusters that alert from Prometheus.

The same rules (name, threshold, ``for``, severity, the rule file's version) over the metrics every worker
serves on ``/metrics`` (``infra/telemetry/metrics.py``) instead of the event windows. Metrics are counters
since each worker started, so windows are ``increase()`` over the rule's window; two signals are
approximations there: ``flaky_tasks`` counts flaky verdicts rather than distinct tasks, ``sandbox_p95_s`` is
interpolated within the run-time histogram's buckets (the monitor takes the exact nearest rank), and
``learner_stall_s`` is the time since the learner last published while its consumer lag is above 0.
"""

from __future__ import annotations

from typing import Any

from streams.monitor.rules import Rule, RuleSet

FLAKY = 'reason=~"noise.flaky|runtime.nondeterministic"'


def _window(rule: Rule) -> str:
    return f"{round(rule.window_s)}s"


def signal_query(rule: Rule) -> str:
    """PromQL of the rule's signal over its window, by run where the signal is per run."""
    w = _window(rule)

    def per_run(metric: str) -> str:
        return f"sum by (run) (increase({metric}[{w}]))"

    masked = per_run('rlstream_verdicts_total{verdict="mask"}')
    infra = per_run('rlstream_sandbox_executions_total{outcome="infra_error"}')
    queries = {
        "reward_mean": f"{per_run('rlstream_reward_sum')} / {per_run('rlstream_reward_count')}",
        "mask_rate": f"{masked} / {per_run('rlstream_verdicts_total')}",
        "flaky_tasks": per_run(f"rlstream_verdict_reasons_total{{{FLAKY}}}"),
        "sandbox_infra_error_rate": f"{infra} / {per_run('rlstream_sandbox_executions_total')}",
        "sandbox_p95_s": (
            f"histogram_quantile(0.95, sum by (run, le) (rate(rlstream_sandbox_run_seconds_bucket[{w}])))"
        ),
        "dead_letters": f"sum(increase(rlstream_dead_letters_total[{w}]))",
        "learner_stall_s": (
            "(time() - max by (run) (rlstream_policy_published_timestamp_seconds)) "
            'and on() (sum(rlstream_consumer_lag{processor="learner"}) > 0)'
        ),
        "generator_lag": (
            "max by (run) (rlstream_policy_version) - max by (run) (rlstream_generator_policy_version)"
        ),
    }
    return queries[rule.signal]


def rule_expr(rule: Rule) -> str:
    query = signal_query(rule)
    if rule.measure == "change":
        earlier = query.replace(f"[{_window(rule)}])", f"[{_window(rule)}] offset {_window(rule)})")
        query = f"({query}) - ({earlier})"
    return f"({query}) {rule.op} {rule.threshold:g}"


def prometheus_rules(rules: RuleSet) -> dict[str, Any]:
    """The rule file (``groups:`` of alerting rules) Prometheus loads with ``rule_files:``."""
    return {
        "groups": [
            {
                "name": f"rlstream-v{rules.version}",
                "rules": [
                    {
                        "alert": rule.name,
                        "expr": rule_expr(rule),
                        "for": f"{round(rule.for_s)}s",
                        "labels": {"severity": rule.severity, "rules_version": str(rules.version)},
                        "annotations": {
                            "summary": rule.summary or rule.name,
                            "signal": rule.signal,
                            "window": _window(rule),
                        },
                    }
                    for rule in rules.rules
                ],
            }
        ]
    }
