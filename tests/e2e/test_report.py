"""`rlstream report` on a real run, checked in a real browser.

A short synthetic run trains on the real broker (every worker its own process, the projector among
them), two of its samples get human reviews, the projections catch up, and the report is written from
the projection database and from the log. Debian's Chromium (headless) then takes a screenshot of the
page, which must not be blank, and dumps the DOM after load: the page's own script counts the chart
images that decoded, and every one must have.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest
from matplotlib.image import imread

from consumers.report.charts import all_charts
from schemas.rollout import NoiseVerdict
from tests.cli_support import run_cli
from tests.e2e.conftest import read_topic, run_env

CHROMIUM = "chromium"
WINDOW = (1280, 4400)


def chromium() -> str:
    path = shutil.which(CHROMIUM)
    if path is None:
        pytest.fail(
            "the report's browser check needs Debian's Chromium: bash scripts/setup.d/60-chromium.sh "
            "(as root) or apt-get install chromium",
            pytrace=False,
        )
    return path


def browse(page: Path, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--user-data-dir={profile}",
            *args,
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )


def charts_loaded(page: Path, profile: Path) -> tuple[int, int]:
    """(images decoded, images on the page) as the page's own load script counted them."""
    done = browse(page, profile, "--virtual-time-budget=15000", "--dump-dom")
    body = re.search(r"<body[^>]*>", done.stdout)
    assert body is not None, done.stdout[-2000:] + done.stderr[-2000:]
    mark = re.search(r'data-charts-loaded="(\d+)/(\d+)"', body.group(0))
    assert mark is not None, f"the page's load script did not run: {body.group(0)}"
    return int(mark.group(1)), int(mark.group(2))


def screenshot(page: Path, profile: Path, out: Path) -> None:
    done = browse(page, profile, f"--screenshot={out}", f"--window-size={WINDOW[0]},{WINDOW[1]}")
    assert out.is_file(), done.stderr[-3000:]


def not_blank(png: Path) -> tuple[float, float]:
    """(pixel standard deviation, share of pixels that are not white)."""
    pixels = imread(png)[..., :3]
    return float(pixels.std()), float((pixels.min(axis=-1) < 0.9).mean())


@pytest.mark.timeout(1800)  # a training run on shared CPUs
def test_report_of_a_real_run_renders_in_a_headless_browser(own_broker: str, tmp_path: Path) -> None:
    chromium()  # fail early, before the run, when the browser is missing
    run_id = f"report-{uuid.uuid4().hex[:8]}"
    home = tmp_path / "home"
    env = run_env(own_broker, home)

    def cli(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        return run_cli(*args, env=env, timeout=timeout)

    def ok(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        done = cli(*args, timeout=timeout)
        assert done.returncode == 0, f"rlstream {' '.join(args)}: {done.returncode}\n{done.stderr[-4000:]}"
        return done

    run: tuple[str, ...] = ("run", "--tasks", "synthetic", "--model", "tiny", "--group-size", "4")
    run += ("--steps", "2", "--eval-fraction", "0.2")  # the held-out chart has data
    # --autoscale watches the sandbox's and the generator's lag (a run this small seldom calls for more)
    done = ok(*run, "--run-id", run_id, "--timeout", "900", "--autoscale", timeout=1000)
    assert re.search(r"autoscale: sandbox 1\.\.\d+, generator 1\.\.\d+ instances on lag", done.stderr)
    # the run ends by writing its own report (from the log) and naming it last
    own = home / "runs" / run_id / "report" / "index.html"
    assert done.stdout.strip().splitlines()[-1] == f"report: {own}", done.stdout[-2000:]
    assert 'class="chart"' in own.read_text()

    # two human reviews: one overrides the automated verdict, one keeps it
    verdicts = [
        e
        for _, e in read_topic(own_broker, "rl.verdicts")
        if isinstance(e, NoiseVerdict) and e.group_id.startswith(f"{run_id}/")
    ]
    assert len(verdicts) >= 2
    first, second = sorted(verdicts, key=lambda v: v.sample_id)[:2]
    other = "reject" if first.verdict != "reject" else "accept"
    ok("review", "record", first.sample_id, "--verdict", other, "--note", "looks wrong", "--reviewer", "t")
    ok("review", "record", second.sample_id, "--verdict", second.verdict, "--note", "fine", "--reviewer", "t")
    ok("project", "run", "--once")

    out_db, out_log = tmp_path / "report-db", tmp_path / "report-log"
    done = ok("report", run_id, "--out", str(out_db))
    assert done.stdout.strip() == str(out_db / "index.html")
    assert "report: chart reward_by_version" in done.stderr  # progress on stderr
    ok("report", run_id, "--out", str(out_log), "--from-log")

    html = (out_db / "index.html").read_text()
    # both sources tell the same story (only the line naming the source differs)
    assert [ln for ln in html.splitlines() if 'class="meta"' not in ln] == [
        ln for ln in (out_log / "index.html").read_text().splitlines() if 'class="meta"' not in ln
    ]
    drawn = set(re.findall(r'<img class="chart" src="([^"]+)\.png"', html))
    # a trained, reviewed run has data for every chart (the reasons depend on what the model wrote;
    # its samples are one-turn: success by turn is the episode fault test's)
    assert {c.key for c in all_charts()} - {"verdict_reasons", "success_by_turn"} <= drawn, drawn
    assert re.search(r"<td>2</td><td>1</td><td>0\.500</td>", html), "agreement of the two reviews"

    unknown = cli("report", "no-such-run", "--out", str(tmp_path / "nothing"))
    assert unknown.returncode == 2 and run_id in unknown.stderr, unknown.stderr
    assert not (tmp_path / "nothing").exists()

    # the browser: every chart image decoded, and the page is not blank
    profile = tmp_path / "chromium-profile"
    assert charts_loaded(out_db / "index.html", profile) == (len(drawn), len(drawn))
    shot = tmp_path / "report.png"
    screenshot(out_db / "index.html", profile, shot)
    std, inked = not_blank(shot)
    height, width = imread(shot).shape[:2]
    print(f"\nscreenshot {shot}: {width}x{height}, pixel std {std:.3f}, ink {inked:.1%}")
    assert std > 0.05 and inked > 0.02, (std, inked)

    # the check itself sees a chart that did not load
    broken = tmp_path / "broken"
    shutil.copytree(out_db, broken)
    (broken / "pass_at_k.png").unlink()
    assert charts_loaded(broken / "index.html", profile) == (len(drawn) - 1, len(drawn))
