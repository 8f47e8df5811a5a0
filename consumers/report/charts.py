"""The report's charts: each is a pure function of :class:`RunReportData` that returns a matplotlib
figure, or None when the run has nothing to draw (the page then shows a "no data" panel instead).

Figures are built without pyplot (no global state, no display): ``Figure.savefig`` renders with Agg.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from consumers.report import data as d

COLORS = {"accept": "#2e7d32", "mask": "#f9a825", "reject": "#c62828"}
BACKEND_COLORS = {"wasm": "#1565c0", "container": "#6a1b9a", "subprocess": "#5d4037"}


@dataclass(frozen=True)
class Chart:
    key: str
    title: str
    #: what the chart shows, under it on the page
    caption: str
    #: why the panel is empty when ``draw`` returns None
    no_data: str
    draw: Callable[[d.RunReportData], Figure | None]

    @property
    def filename(self) -> str:
        return f"{self.key}.png"


def _figure(width: float = 7.0, height: float = 3.6) -> Figure:
    fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
    return fig


def reward_by_version(data: d.RunReportData) -> Figure | None:
    by_v = data.reward_by_version
    if not by_v:
        return None
    fig = _figure()
    ax = fig.add_subplot()
    versions = list(by_v)
    ax.boxplot(
        [list(by_v[v]) for v in versions],
        positions=versions,
        widths=0.5,
        showfliers=False,
        patch_artist=True,
        boxprops={"facecolor": "#bbdefb", "edgecolor": "#1565c0", "alpha": 0.7},
        medianprops={"color": "#0d47a1"},
    )
    # every sample as a jittered dot: rewards cluster on a few values that a box alone hides
    jitter = random.Random(0)
    for v in versions:
        ys = sorted(by_v[v])
        xs = [v + jitter.uniform(-0.18, 0.18) for _ in ys]
        ax.scatter(xs, ys, s=6, color="#37474f", alpha=0.35, linewidths=0, zorder=3)
    means = [sum(by_v[v]) / len(by_v[v]) for v in versions]
    ax.plot(versions, means, "o-", color="#d84315", label="mean")
    for v, m in zip(versions, means, strict=True):
        ax.annotate(
            f"n={len(by_v[v])}", (v, m), textcoords="offset points", xytext=(0, 8), ha="center", fontsize=7
        )
    ax.set_xlabel("policy version that generated the sample")
    ax.set_ylabel("reward")
    ax.set_xticks(versions)
    ax.legend(loc="best", fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    return fig


def reward_by_step(data: d.RunReportData) -> Figure | None:
    by_s = data.reward_by_step
    if not by_s:
        return None
    fig = _figure()
    ax = fig.add_subplot()
    steps = list(by_s)
    means = [sum(by_s[s]) / len(by_s[s]) for s in steps]
    lows = [d.quantile(by_s[s], 0.25) for s in steps]
    highs = [d.quantile(by_s[s], 0.75) for s in steps]
    ax.fill_between(steps, lows, highs, color="#c8e6c9", label="25-75 %")
    ax.plot(steps, means, "o-", color="#2e7d32", label="mean", markersize=4)
    ax.set_xlabel("learner step (version published)")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel("reward of trained samples")
    ax.legend(loc="best", fontsize=8)
    ax.grid(alpha=0.3)
    return fig


def pass_at_k(data: d.RunReportData) -> Figure | None:
    by_v = data.pass_at_k
    if not by_v:
        return None
    fig = _figure()
    ax = fig.add_subplot()
    versions = list(by_v)
    for k, style in ((1, "o-"), (data.charted_k, "s--")):
        if k is None:
            continue
        xs = [v for v in versions if k in by_v[v]]
        tasks = [data.pass_at_k_tasks.get(v, {}).get(k, 0) for v in xs]
        ax.plot(xs, [by_v[v][k] for v in xs], style, label=f"pass@{k}")
        for x, y, n in zip(xs, [by_v[v][k] for v in xs], tasks, strict=True):
            ax.annotate(f"{n}", (x, y), textcoords="offset points", xytext=(6, -10), fontsize=7, color="#555")
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("policy version")
    ax.set_ylabel("mean over tasks")
    ax.set_xticks(versions)
    ax.legend(loc="best", fontsize=8)
    ax.grid(alpha=0.3)
    return fig


def held_out(data: d.RunReportData) -> Figure | None:
    """The held-out learning curve (evaluation rounds, with their intervals) next to the training one."""
    rows = data.split_rows("eval")
    if not rows:
        return None
    fig = _figure()
    ax = fig.add_subplot()
    xs = [r.policy_version for r in rows]
    ys = [r.pass_at[1] for r in rows]
    lows = [y - r.ci[1][0] for y, r in zip(ys, rows, strict=True)]
    highs = [r.ci[1][1] - y for y, r in zip(ys, rows, strict=True)]
    ax.errorbar(xs, ys, yerr=[lows, highs], fmt="o-", capsize=4, color="#2e7d32", label="held-out pass@1")
    ax.fill_between(xs, [r.ci[1][0] for r in rows], [r.ci[1][1] for r in rows], color="#2e7d32", alpha=0.12)
    for x, y, r in zip(xs, ys, rows, strict=True):
        ax.annotate(
            f"{r.tasks}", (x, y), textcoords="offset points", xytext=(6, -10), fontsize=7, color="#555"
        )
    train = {v: by_k[1] for v, by_k in data.pass_at_k.items() if 1 in by_k}
    if train:
        ax.plot(list(train), list(train.values()), ".--", color="#1565c0", alpha=0.8, label="training pass@1")
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("policy version")
    ax.set_ylabel("pass@1, mean over tasks")
    ax.legend(loc="best", fontsize=8)
    ax.grid(alpha=0.3)
    return fig


def success_by_turn(data: d.RunReportData) -> Figure | None:
    """Episodes of several turns: first-turn and final pass rate per policy version they started under."""
    rows = data.turns
    if not rows:
        return None
    fig = _figure()
    ax = fig.add_subplot()
    xs = [r.policy_version for r in rows]
    ax.plot(xs, [r.first_turn for r in rows], "o--", color="#9e9e9e", label="passed at turn 1")
    ax.plot(xs, [r.final for r in rows], "o-", color="#2e7d32", label="passed at the final turn")
    for x, r in zip(xs, rows, strict=True):
        ax.annotate(
            f"{r.mean_turns:.2f}",
            (x, r.final),
            textcoords="offset points",
            xytext=(6, 6),
            fontsize=7,
            color="#555",
        )
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("policy version the episode started under")
    ax.set_ylabel("share of episodes")
    ax.legend(loc="best", fontsize=8)
    ax.grid(alpha=0.3)
    return fig


def verdict_mix(data: d.RunReportData) -> Figure | None:
    by_v = data.verdicts_by_version
    if not by_v:
        return None
    fig = _figure()
    ax = fig.add_subplot()
    versions = list(by_v)
    bottom = [0.0] * len(versions)
    for verdict in d.VERDICTS:
        share = [by_v[v].get(verdict, 0) / max(sum(by_v[v].values()), 1) for v in versions]
        ax.bar(versions, share, bottom=bottom, color=COLORS[verdict], label=verdict, width=0.6)
        bottom = [b + s for b, s in zip(bottom, share, strict=True)]
    ax.set_ylim(0, 1)
    ax.set_xlabel("policy version")
    ax.set_ylabel("share of samples")
    ax.set_xticks(versions)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
    return fig


def verdict_reasons(data: d.RunReportData) -> Figure | None:
    reasons = data.verdict_reasons
    if not reasons:
        return None
    top = list(reasons.items())[:15]
    fig = _figure(height=max(2.4, 0.35 * len(top) + 1.0))
    ax = fig.add_subplot()
    names = [name for name, _ in top][::-1]
    left = [0] * len(names)
    for verdict in d.VERDICTS:
        counts = [reasons[n].get(verdict, 0) for n in names]
        ax.barh(names, counts, left=left, color=COLORS[verdict], label=verdict)
        left = [a + b for a, b in zip(left, counts, strict=True)]
    ax.set_xlabel("samples")
    ax.legend(loc="lower right", fontsize=8)
    ax.tick_params(axis="y", labelsize=8)
    return fig


def training(data: d.RunReportData) -> Figure | None:
    """The learner's figures per version, one panel each: what GRPO, DPO or an SFT stage reported."""
    rows = data.training
    shown = [k for k in d.TRAINING_METRICS if any(k in r.metrics for r in rows)]
    if not shown:
        return None
    fig = _figure(height=1.6 + 1.3 * len(shown))
    axes = fig.subplots(len(shown), 1, sharex=True, squeeze=False)[:, 0]
    for ax, key in zip(axes, shown, strict=True):
        for stage, color in (("rl", "#1565c0"), ("sft", "#ef6c00")):
            xs = [r.policy_version for r in rows if r.stage == stage and key in r.metrics]
            if xs:
                ys = [r.metrics[key] for r in rows if r.stage == stage and key in r.metrics]
                ax.plot(xs, ys, "o-", color=color, markersize=3, label=stage)
        ax.set_ylabel(key, fontsize=8)
        ax.grid(alpha=0.3)
    axes[0].legend(loc="best", fontsize=8)
    axes[-1].set_xlabel("policy version")
    axes[-1].xaxis.set_major_locator(MaxNLocator(integer=True))
    return fig


def staleness(data: d.RunReportData) -> Figure | None:
    hist = data.staleness
    if not hist:
        return None
    fig = _figure()
    ax = fig.add_subplot()
    lags = list(range(min(0, *hist), max(hist) + 1))
    ax.bar(lags, [hist.get(lag, 0) for lag in lags], color="#5e35b1", width=0.6)
    ax.set_xticks(lags)
    ax.set_xlabel("policy lag (learner version - behaviour version)")
    ax.set_ylabel("trained samples")
    ax.grid(axis="y", alpha=0.3)
    return fig


def sandbox_backends(data: d.RunReportData) -> Figure | None:
    counts = data.backend_executions
    if not counts:
        return None
    fig = _figure(height=2.8)
    ax = fig.add_subplot()
    names = sorted(counts)
    ax.bar(names, [counts[n] for n in names], color=[BACKEND_COLORS.get(n, "#546e7a") for n in names])
    for i, n in enumerate(names):
        ax.annotate(str(counts[n]), (i, counts[n]), textcoords="offset points", xytext=(0, 3), ha="center")
    ax.set_ylabel("executions")
    ax.margins(y=0.15)
    return fig


def sandbox_latency(data: d.RunReportData) -> Figure | None:
    lat = {b: xs for b, xs in data.backend_latency_s.items() if xs}
    if not lat:
        return None
    fig = _figure()
    ax = fig.add_subplot()
    names = list(lat)
    ax.boxplot(
        [[x * 1000 for x in lat[n]] for n in names],
        tick_labels=names,
        orientation="horizontal",
        patch_artist=True,
        boxprops={"facecolor": "#e1f5fe"},
        flierprops={"markersize": 3},
    )
    if all(x > 0 for n in names for x in lat[n]):
        ax.set_xscale("log")
    ax.set_xlabel("execution time (ms)")
    ax.grid(axis="x", alpha=0.3)
    return fig


def review_agreement(data: d.RunReportData) -> Figure | None:
    agr = data.agreement
    if not agr.reviewed:
        return None
    fig = _figure(width=4.8, height=3.8)
    ax = fig.add_subplot()
    grid = [[agr.confusion.get(a, {}).get(h, 0) for h in d.VERDICTS] for a in d.VERDICTS]
    ax.imshow(grid, cmap="Blues", vmin=0)
    peak = max(max(row) for row in grid)
    for i, row in enumerate(grid):
        for j, c in enumerate(row):
            ax.text(j, i, str(c), ha="center", va="center", color="white" if c > peak / 2 else "black")
    ax.set_xticks(range(3), d.VERDICTS)
    ax.set_yticks(range(3), d.VERDICTS)
    ax.set_xlabel("human review")
    ax.set_ylabel("automated verdict")
    return fig


@dataclass(frozen=True)
class Section:
    title: str
    charts: tuple[Chart, ...]


SECTIONS: tuple[Section, ...] = (
    Section(
        "Reward",
        (
            Chart(
                "reward_by_version",
                "Reward per policy version",
                "Total reward of every scored sample (dots), its quartiles (box) and mean (line), by the "
                "policy version that generated it.",
                "No scored samples in this run.",
                reward_by_version,
            ),
            Chart(
                "reward_by_step",
                "Reward of trained samples per learner step",
                "Mean and interquartile range of the reward of the samples trained into each published "
                "version.",
                "No policy version has been published with trained samples.",
                reward_by_step,
            ),
        ),
    ),
    Section(
        "pass@k",
        (
            Chart(
                "pass_at_k",
                "pass@1 and pass@k per policy version",
                "Unbiased pass@k per task and policy version, averaged over the tasks with at least k "
                "samples under that version (small numbers: how many); every k in the table above.",
                "No scored samples to estimate pass@k from.",
                pass_at_k,
            ),
            Chart(
                "held_out",
                "Held-out pass@1 per policy version",
                "Evaluation rounds: every held-out task sampled under exactly that version with fixed seeds "
                "(bars and band: 95% bootstrap interval over tasks; small numbers: tasks), next to pass@1 "
                "of the training samples each version generated. `rlstream eval RUN_ID` prints the table.",
                "No held-out tasks were evaluated in this run (--eval-fraction / --eval-tasks).",
                held_out,
            ),
        ),
    ),
    Section(
        "Episodes",
        (
            Chart(
                "success_by_turn",
                "Success by turn",
                "Training episodes of several turns (the model revising its code from the feedback of the "
                "visible cases): the share that passed every case at their first turn and at their final "
                "turn, by the policy version they started under (small numbers: mean turns taken).",
                "No episode of this run could take more than one turn (--max-turns).",
                success_by_turn,
            ),
        ),
    ),
    Section(
        "Noise filter",
        (
            Chart(
                "verdict_mix",
                "Verdict mix per policy version",
                "Share of samples the noise filter accepted, masked or rejected.",
                "No verdicts in this run.",
                verdict_mix,
            ),
            Chart(
                "verdict_reasons",
                "Verdict reasons",
                "Samples per reason code (top 15), coloured by the verdict they led to.",
                "No verdict carried a reason.",
                verdict_reasons,
            ),
        ),
    ),
    Section(
        "Training",
        (
            Chart(
                "training",
                "The learner's figures per version",
                "What each published version was trained with, by stage (rl: the learner on the filtered "
                "reward stream, GRPO's loss and KL or DPO's implicit-reward margin and preference accuracy; "
                "sft: the answers' NLL before and after an `rlstream sft` stage). The table names the "
                "version a run started from.",
                "No version of this run was published with the learner's figures.",
                training,
            ),
        ),
    ),
    Section(
        "Staleness",
        (
            Chart(
                "staleness",
                "Policy lag of trained samples",
                "How many versions behind the learner each trained sample's behaviour policy was.",
                "No samples have been trained yet.",
                staleness,
            ),
        ),
    ),
    Section(
        "Sandbox",
        (
            Chart(
                "sandbox_backends",
                "Sandbox backend mix",
                "Executions per backend (flakiness re-runs included).",
                "No sandbox executions in this run.",
                sandbox_backends,
            ),
            Chart(
                "sandbox_latency",
                "Sandbox latency per backend",
                "Execution time per backend (flakiness re-runs included).",
                "No sandbox executions in this run.",
                sandbox_latency,
            ),
        ),
    ),
    Section(
        "Human review",
        (
            Chart(
                "review_agreement",
                "Automated verdicts vs human reviews",
                "Reviewed samples by automated verdict (rows) and the reviewer's verdict (columns).",
                "No sample of this run has been reviewed.",
                review_agreement,
            ),
        ),
    ),
)


def all_charts() -> list[Chart]:
    return [c for s in SECTIONS for c in s.charts]


def save(fig: Figure, path: Path) -> None:
    fig.savefig(path, format="png")
