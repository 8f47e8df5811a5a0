"""The run report's pure parts: aggregation of a run's facts, the charts and page drawn from them
(every section present; a "no data" panel, never a crash, where a run has nothing to show), the fold of
real (golden) events, and the atomic write."""

from __future__ import annotations

import dataclasses
import json
import random
import re
from pathlib import Path

import pytest
from matplotlib.image import imread

from consumers.episodes import turn_success
from consumers.evaluation import LevelMove
from consumers.report import charts
from consumers.report.charts import all_charts
from consumers.report.data import RunReportData
from consumers.report.facts import (
    ExecutionFacts,
    PolicyFacts,
    ReviewFacts,
    RunFacts,
    SampleFacts,
    aggregate,
)
from consumers.report.fold import ReportFold
from consumers.report.write import write_report
from schemas import codec, export
from schemas.errors import UsageError

GOLDEN = Path(export.__file__).parent / "golden"


def _facts(seed: int = 0) -> RunFacts:
    rng = random.Random(seed)
    samples, executions = [], []
    for version in range(4):
        for task in range(5):
            for i in range(4):
                sid = f"r/t{task}/{version}/{i}"
                ok = rng.random() < 0.2 + 0.2 * version
                verdict = rng.choice(["accept"] * 6 + ["mask", "reject"])
                reasons = {"reject": ("hack.forced_exit",), "mask": ("flaky.disagree",)}.get(verdict, ())
                reward = float(ok) + rng.random() * 0.2
                # task t4's samples are episodes of up to 3 turns
                max_turns, used = (3, rng.choice([1, 2, 3])) if task == 4 else (1, 1)
                samples.append(
                    SampleFacts(
                        sid,
                        f"t{task}",
                        version,
                        reward,
                        ok,
                        verdict,
                        reasons,
                        max_turns=max_turns,
                        turns_used=used,
                    )
                )
                executions.append(ExecutionFacts(sid, rng.choice(["wasm", "wasm", "container"]), 0.05))
    # held-out tasks, sampled in evaluation rounds under versions 0 and 3
    held_out = [
        SampleFacts(
            f"r/h{t}/eval-v{v}/{i}", f"h{t}", v, float(i < v), i < v, "accept", split="eval", similarity=0.6
        )
        for v in (0, 3)
        for t in range(2)
        for i in range(4)
    ]
    # a DPO run started from an SFT stage's version
    policies = [
        PolicyFacts(
            v,
            v,
            tuple(s.sample_id for s in samples if s.policy_version in (v - 1, v - 2))[:20],
            {"loss": 0.7 - 0.1 * v, "dpo_margin": 0.2 * v, "dpo_accuracy": 0.5 + 0.1 * v, "tokens_per_s": 9},
            base="sft-r:v1",
            algorithm="dpo",
        )
        for v in range(1, 5)
    ]
    reviews = [ReviewFacts(s.sample_id, rng.choice(["accept", "reject"])) for s in samples[:12]]
    return RunFacts("r", (*samples, *held_out), tuple(executions), tuple(policies), tuple(reviews))


def _blank(png: Path) -> bool:
    return float(imread(png).std()) < 0.01


def test_aggregation_of_a_small_run_by_hand():
    facts = RunFacts(
        "r",
        samples=(
            SampleFacts("r/a/0/0", "a", 0, 0.0, False, "accept"),
            SampleFacts("r/a/0/1", "a", 0, 1.0, True, "reject", ("hack.forced_exit", "hack.forced_exit")),
            SampleFacts("r/a/1/0", "a", 1, 1.0, True, "accept"),
            SampleFacts("r/a/1/1", "a", 1, 1.0, True, "mask", ("flaky.disagree",)),
            SampleFacts("r/b/1/0", "b", 1),  # generated, not scored yet
        ),
        executions=(
            ExecutionFacts("r/a/0/0", "wasm", 0.04),
            ExecutionFacts("r/a/0/1", "container", 0.2),
            ExecutionFacts("r/a/0/1", "container", 9.0, run_index=1),
        ),
        # version 2 was trained by the learner at version 1: samples of version 0 lag by 1
        policies=(PolicyFacts(1, 1, ("r/a/0/0",)), PolicyFacts(2, 2, ("r/a/0/1", "r/a/1/0"))),
        reviews=(
            ReviewFacts("r/a/0/1", "accept"),
            ReviewFacts("r/a/0/1", "reject"),
            ReviewFacts("r/a/1/0", "mask"),
        ),
    )
    data = aggregate(facts, ks=(1, 2))
    assert data.reward_by_version == {0: (0.0, 1.0), 1: (1.0, 1.0)}
    assert data.reward_by_step == {1: (0.0,), 2: (1.0, 1.0)}
    assert data.staleness == {0: 2, 1: 1}
    # n=2, c=1: pass@1 = 0.5, pass@2 = 1; n=2, c=2: both 1
    assert data.pass_at_k == {0: {1: 0.5, 2: 1.0}, 1: {1: 1.0, 2: 1.0}}
    assert data.pass_at_k_tasks == {0: {1: 1, 2: 1}, 1: {1: 1, 2: 1}} and data.charted_k == 2
    assert data.verdicts_by_version == {
        0: {"accept": 1, "mask": 0, "reject": 1},
        1: {"accept": 1, "mask": 1, "reject": 0},
    }
    assert data.verdict_reasons == {"flaky.disagree": {"mask": 1}, "hack.forced_exit": {"reject": 1}}
    assert data.backend_executions == {"container": 2, "wasm": 1}
    assert data.backend_latency_s == {"container": (0.2, 9.0), "wasm": (0.04,)}
    # the later review of r/a/0/1 is the one in force (reject = the automated verdict)
    assert (data.agreement.reviewed, data.agreement.agreed) == (2, 1)
    assert data.agreement.confusion["accept"]["mask"] == 1
    assert data.summary.samples == 5 and data.summary.tasks == 2 and data.summary.trained_samples == 3


def test_training_by_version_keeps_each_stage_and_the_figures_it_is_read_by():
    facts = RunFacts(
        "r",
        policies=(
            PolicyFacts(2, 8, (), {"loss": 0.1, "approx_kl": 0.01, "clip_fraction": 0.2}, "rl", "s:v1"),
            PolicyFacts(
                1, 4, (), {"sft_nll_before": 8.8, "sft_nll_after": 1.4, "sft_tokens": 96.0}, "sft", None, None
            ),
        ),
    )
    rows = aggregate(facts).training
    assert [(r.policy_version, r.stage, r.algorithm, r.base) for r in rows] == [
        (1, "sft", None, None),
        (2, "rl", "grpo", "s:v1"),
    ]
    assert dict(rows[0].metrics) == {"sft_nll_before": 8.8, "sft_nll_after": 1.4}
    assert dict(rows[1].metrics) == {"loss": 0.1, "approx_kl": 0.01}


def test_full_report_has_every_section_and_every_chart(tmp_path: Path):
    out = tmp_path / "report"
    lines: list[str] = []
    written = write_report(aggregate(_facts(), source="unit"), out, lines.append)
    html = (out / "index.html").read_text()
    for section in (
        "summary",
        "reward",
        "pass-at-k",
        "episodes",
        "noise-filter",
        "training",
        "staleness",
        "sandbox",
        "human-review",
    ):
        assert f'<section id="{section}">' in html
    assert "passed by turn 3" in html
    # the training table: every version, the stage and base, the learner's figures (not its throughput)
    assert "<th>dpo_margin</th><th>dpo_accuracy</th>" in html and "tokens_per_s" not in html
    assert html.count("<td>sft-r:v1</td>") == 4 and html.count("<td>rl (dpo)</td>") == 4
    assert written.no_data == ()
    imgs = re.findall(r'<img class="chart" src="([^"]+)"', html)
    assert sorted(imgs) == sorted(c.filename for c in all_charts())
    for name in imgs:
        assert not _blank(out / name), name
    assert "no-data" not in html.split("<body", 1)[1]
    assert len(lines) == len(all_charts())
    assert "pass@4" in html  # groups of 4: pass@1, pass@2 and pass@4 are estimated
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report"]  # no temp dir left


def test_a_run_without_data_gets_no_data_panels_not_a_crash(tmp_path: Path):
    out = tmp_path / "empty"
    written = write_report(RunReportData("nothing-yet"), out)
    html = (out / "index.html").read_text()
    assert written.charts == ()
    assert "<img" not in html
    for chart in all_charts():
        assert f'data-chart="{chart.key}">No data' in html
    assert sorted(p.name for p in out.iterdir()) == ["index.html"]


def test_a_run_not_yet_trained_or_reviewed_draws_what_it_has(tmp_path: Path):
    f = _facts()
    data = aggregate(RunFacts(f.run_id, f.samples, f.executions))
    written = write_report(data, tmp_path / "r")
    assert set(written.no_data) == {"reward_by_step", "training", "staleness", "review_agreement"}
    assert not (tmp_path / "r" / "staleness.png").exists()


def test_golden_events_fold_into_one_sample_of_the_run():
    fold = ReportFold("local")
    for doc_path in sorted(GOLDEN.glob("*.json")):
        doc = json.loads(doc_path.read_text())
        d = codec.decode(
            json.dumps(doc["body"]).encode(), [(k, v.encode()) for k, v in doc["headers"].items()]
        )
        fold.fold(d.envelope, d.event)
    facts = fold.facts()
    assert fold.known and "local" in fold.runs_seen
    [sample] = facts.samples
    assert sample.sample_id == "local/demo/add/0/1"
    assert sample.verdict == "reject" and "hack.forced_exit" in sample.reasons
    assert sample.reward is not None and sample.passed is not None
    assert [e.backend for e in facts.executions] and [p.policy_version for p in facts.policies] == [3]
    other = ReportFold("another-run")
    assert not other.known
    curriculum = ReportFold("run-1")  # the golden level change belongs to run-1
    for doc_path in sorted(GOLDEN.glob("*.json")):
        doc = json.loads(doc_path.read_text())
        d = codec.decode(
            json.dumps(doc["body"]).encode(), [(k, v.encode()) for k, v in doc["headers"].items()]
        )
        curriculum.fold(d.envelope, d.event)
    assert curriculum.result().curriculum == (LevelMove(1, 2, "passed", 5, 0.625, 0.5, 8, 64),)
    # the golden task is graded (level 2): its held-out sample has a row of its level
    ((level, row),) = fold.result().evaluation_by_level
    assert (level, row.split, row.policy_version, row.tasks) == (2, "eval", 2, 1)


def test_the_curriculum_moves_are_a_table_next_to_the_held_out_results(tmp_path: Path):
    moves = (LevelMove(None, 1, "start"), LevelMove(1, 2, "passed", 20, 0.55, 0.5, 19, 152))
    data = aggregate(dataclasses.replace(_facts(), task_levels={"h0": 1, "h1": 2, "t0": 1}), source="unit")
    held = [(lv, r.policy_version, r.tasks) for lv, r in data.evaluation_by_level if r.split == "eval"]
    assert held == [(1, 0, 1), (1, 3, 1), (2, 0, 1), (2, 3, 1)]
    write_report(dataclasses.replace(data, curriculum=moves), tmp_path / "report")
    html = (tmp_path / "report" / "index.html").read_text()
    assert "curriculum level" in html and "<td>passed</td>" in html and "<td>v20</td>" in html
    assert "<td>0.550</td>" in html and "held-out level" in html


def test_a_directory_of_other_files_is_refused_and_left_alone(tmp_path: Path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    with pytest.raises(UsageError, match="not an rlstream report"):
        write_report(aggregate(_facts()), out)
    assert [p.name for p in out.iterdir()] == ["notes.txt"]


def test_a_failed_report_leaves_the_previous_one_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    out = tmp_path / "report"
    write_report(RunReportData("first"), out)
    before = (out / "index.html").read_text()

    def boom(data: RunReportData) -> None:
        raise RuntimeError("chart failed")

    broken = tuple(
        charts.Section(
            s.title, tuple(charts.Chart(c.key, c.title, c.caption, c.no_data, boom) for c in s.charts)
        )
        for s in charts.SECTIONS
    )
    monkeypatch.setattr(charts, "SECTIONS", broken)
    with pytest.raises(RuntimeError, match="chart failed"):
        write_report(aggregate(_facts()), out)
    assert (out / "index.html").read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report"]
    # and a good report replaces a previous one of ours
    monkeypatch.undo()
    write_report(aggregate(_facts()), out)
    assert 'data-run-id="r"' in (out / "index.html").read_text()


def test_success_by_turn_of_episodes_by_hand():
    episodes = [
        # version, max turns, turns used, passed
        (0, 3, 1, True),
        (0, 3, 3, False),
        (0, 3, 2, True),
        (0, 3, 3, True),
        (1, 2, 1, False),
        (1, 2, 2, True),
    ]
    v0, v1 = turn_success(episodes)
    assert (v0.policy_version, v0.episodes, v0.pass_by_turn, v0.mean_turns) == (0, 4, (0.25, 0.5, 0.75), 2.25)
    assert (v0.first_turn, v0.final) == (0.25, 0.75)
    assert (v1.pass_by_turn, v1.mean_turns) == ((0.0, 0.5), 1.5)
    facts = RunFacts(
        "r",
        samples=(
            SampleFacts("r/a/0/0", "a", 0, 1.0, True, "accept", max_turns=2, turns_used=2),
            SampleFacts("r/a/0/1", "a", 0, 0.0, False, "accept", max_turns=2, turns_used=2),
            SampleFacts("r/b/0/0", "b", 0, 1.0, True, "accept"),  # one shot: not an episode
        ),
    )
    (row,) = aggregate(facts).turns
    assert (row.episodes, row.pass_by_turn) == (2, (0.0, 0.5))
