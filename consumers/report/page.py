"""The report's HTML page: a self-contained file next to its PNG charts (no scripts or styles from
anywhere else, so it opens offline and from file://).

A small inline script marks ``<body data-charts-loaded="N/M">`` once the page has loaded, counting the
chart images that decoded (``naturalWidth > 0``); a headless browser check reads it from the DOM.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape

from consumers.report import data as d
from consumers.report.charts import SECTIONS, Chart

STYLE = """
body { font-family: system-ui, sans-serif; margin: 24px auto; max-width: 1100px; color: #212121; }
h1 { font-size: 1.5em; margin-bottom: 4px; } h2 { border-bottom: 1px solid #ddd; padding-bottom: 4px; }
.meta { color: #616161; font-size: 0.9em; }
table { border-collapse: collapse; margin: 8px 0 16px; font-size: 0.9em; }
td, th { border: 1px solid #e0e0e0; padding: 3px 10px; text-align: right; }
th { background: #f5f5f5; } td:first-child, th:first-child { text-align: left; }
.charts { display: flex; flex-wrap: wrap; gap: 16px; }
figure { margin: 0; flex: 0 1 530px; }
figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { font-size: 0.85em; color: #555; }
.no-data { border: 2px dashed #bdbdbd; background: #fafafa; color: #757575; padding: 48px 16px;
           text-align: center; font-size: 1.05em; }
"""

SCRIPT = """
window.addEventListener('load', function () {
  var imgs = Array.prototype.slice.call(document.querySelectorAll('img.chart'));
  var ok = imgs.filter(function (i) { return i.complete && i.naturalWidth > 0; }).length;
  document.body.setAttribute('data-charts-loaded', ok + '/' + imgs.length);
});
"""


def _fmt(x: float | None, digits: int = 3) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def _table(header: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _panel(chart: Chart, drawn: bool) -> str:
    title = f"<h3>{escape(chart.title)}</h3>"
    if drawn:
        body = f'<img class="chart" src="{escape(chart.filename)}" alt="{escape(chart.title)}">'
    else:
        body = (
            f'<div class="no-data" data-chart="{escape(chart.key)}">No data — {escape(chart.no_data)}</div>'
        )
    caption = f"<figcaption>{escape(chart.caption)}</figcaption>"
    return f'<figure id="{escape(chart.key)}">{title}{body}{caption}</figure>'


def _summary(data: d.RunReportData) -> str:
    s = data.summary
    totals = data.verdict_totals
    judged = sum(totals.values())
    latest = max(data.pass_at_k, default=None)
    rows = [
        ["samples", str(s.samples)],
        ["tasks", str(s.tasks)],
        ["rewards (mean)", f"{s.rewards} ({_fmt(s.reward_mean)})"],
        [
            "pass@1 of the newest policy version",
            _fmt(data.pass_at_k[latest].get(1)) if latest is not None else "–",
        ],
        ["accepted by the noise filter", _fmt(totals["accept"] / judged) if judged else "–"],
        [
            "policy versions published (latest step)",
            f"{s.policy_versions} ({s.latest_step if s.latest_step is not None else '–'})",
        ],
        ["samples trained on", str(s.trained_samples)],
        ["sandbox executions", str(s.executions)],
        ["reviewed samples", str(s.reviews)],
    ]
    return _table(["", "value"], rows)


def _section_tables(title: str, data: d.RunReportData) -> str:
    if title == "Reward":
        by_v = data.reward_by_version
        if not by_v:
            return ""
        rows = [
            [str(v), str(len(xs)), _fmt(d.mean(xs)), _fmt(d.quantile(xs, 0.5)), _fmt(min(xs)), _fmt(max(xs))]
            for v, xs in by_v.items()
        ]
        return _table(["policy version", "samples", "mean", "median", "min", "max"], rows)
    if title == "pass@k":
        ks = data.ks
        if not data.pass_at_k:
            return ""
        rows = [
            [str(v), str(data.pass_at_k_tasks.get(v, {}).get(1, 0)), *(_fmt(by_k.get(k)) for k in ks)]
            for v, by_k in data.pass_at_k.items()
        ]
        table = _table(["policy version", "tasks", *(f"pass@{k}" for k in ks)], rows)
        held = data.split_rows("eval")
        if held:
            table += _table(
                ["held-out version", "tasks", "samples", "pass@1", "95% CI", "reward", "similarity"],
                [
                    [
                        f"v{r.policy_version}",
                        str(r.tasks),
                        str(r.samples),
                        _fmt(r.pass_at.get(1)),
                        f"[{_fmt(r.ci[1][0])}, {_fmt(r.ci[1][1])}]",
                        _fmt(r.reward_mean),
                        _fmt(r.similarity_mean) if r.similarity_mean is not None else "n/a",
                    ]
                    for r in held
                ],
            )
        by_level = [(lv, r) for lv, r in data.evaluation_by_level if r.split == "eval"]
        if by_level:
            table += _table(
                ["held-out level", "version", "tasks", "samples", "pass@1", "95% CI"],
                [
                    [
                        str(lv),
                        f"v{r.policy_version}",
                        str(r.tasks),
                        str(r.samples),
                        _fmt(r.pass_at.get(1)),
                        f"[{_fmt(r.ci[1][0])}, {_fmt(r.ci[1][1])}]",
                    ]
                    for lv, r in by_level
                ],
            )
        if data.curriculum:
            header = ["curriculum level", "from", "why", "decided by", "held-out pass@1", "bar", "tasks"]
            table += _table(
                [*header, "samples"],
                [
                    [
                        str(m.to_level),
                        "-" if m.from_level is None else str(m.from_level),
                        m.reason,
                        "-" if m.policy_version is None else f"v{m.policy_version}",
                        _fmt(m.pass_at_1) if m.pass_at_1 is not None else "-",
                        _fmt(m.threshold) if m.threshold is not None else "-",
                        str(m.tasks),
                        str(m.samples),
                    ]
                    for m in data.curriculum
                ],
            )
        return table
    if title == "Episodes":
        turns = data.turns
        if not turns:
            return ""
        width = max(len(r.pass_by_turn) for r in turns)
        return _table(
            ["policy version", "episodes", *(f"passed by turn {t + 1}" for t in range(width)), "mean turns"],
            [
                [
                    f"v{r.policy_version}",
                    str(r.episodes),
                    *(_fmt(r.pass_by_turn[t]) if t < len(r.pass_by_turn) else "–" for t in range(width)),
                    _fmt(r.mean_turns, 2),
                ]
                for r in turns
            ],
        )
    if title == "Noise filter":
        totals = data.verdict_totals
        n = sum(totals.values())
        if not n:
            return ""
        return _table(
            ["verdict", "samples", "share"],
            [[v, str(totals[v]), _fmt(totals[v] / n)] for v in d.VERDICTS],
        )
    if title == "Training":
        versions = data.training
        if not versions:
            return ""
        shown = [k for k in d.TRAINING_METRICS if any(k in r.metrics for r in versions)]
        return _table(
            ["policy version", "step", "stage", "started from", *shown],
            [
                [
                    f"v{r.policy_version}",
                    str(r.step),
                    f"{r.stage} ({r.algorithm})" if r.algorithm else r.stage,
                    r.base or "–",
                    *(_fmt(r.metrics.get(k), 4) for k in shown),
                ]
                for r in versions
            ],
        )
    if title == "Staleness":
        hist = data.staleness
        if not hist:
            return ""
        return _table(["policy lag", "trained samples"], [[str(k), str(hist[k])] for k in sorted(hist)])
    if title == "Sandbox":
        counts = data.backend_executions
        if not counts:
            return ""
        rows = []
        for b in sorted(counts):
            xs = data.backend_latency_s.get(b, ())
            p50 = _fmt(d.quantile(xs, 0.5) * 1000, 1) if xs else "–"
            p95 = _fmt(d.quantile(xs, 0.95) * 1000, 1) if xs else "–"
            rows.append([b, str(counts[b]), p50, p95])
        return _table(["backend", "executions", "p50 ms", "p95 ms"], rows)
    if title == "Human review":
        agr = data.agreement
        if not agr.reviewed:
            return ""
        return _table(
            ["reviewed", "agreed", "agreement", "Cohen's kappa", "reviews without a verdict"],
            [[str(agr.reviewed), str(agr.agreed), _fmt(agr.rate), _fmt(agr.kappa), str(agr.without_verdict)]],
        )
    return ""


def render_page(data: d.RunReportData, drawn: Mapping[str, bool]) -> str:
    """The whole page; ``drawn[key]`` says whether that chart's PNG exists (else a "no data" panel)."""
    when = data.generated_at.isoformat(timespec="seconds") if data.generated_at else ""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="generator" content="rlstream report">',
        f"<title>rlstream run {escape(data.run_id)}</title>",
        f"<style>{STYLE}</style><script>{SCRIPT}</script></head>",
        f'<body data-run-id="{escape(data.run_id)}">',
        f"<h1>Run {escape(data.run_id)}</h1>",
        f'<p class="meta">generated {escape(when)} from {escape(data.source or "-")}</p>',
        '<section id="summary"><h2>Summary</h2>',
        _summary(data),
        "</section>",
    ]
    for section in SECTIONS:
        sid = section.title.lower().replace(" ", "-").replace("@", "-at-")
        parts.append(f'<section id="{escape(sid)}"><h2>{escape(section.title)}</h2>')
        parts.append(_section_tables(section.title, data))
        parts.append('<div class="charts">')
        parts.extend(_panel(c, drawn.get(c.key, False)) for c in section.charts)
        parts.append("</div></section>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
