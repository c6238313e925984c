from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from chronicle.analysis.series import build_series
from chronicle.models import FailureRecord
from chronicle.render.day_charts import DAY_CHARTS, day_charts
from chronicle.render.i18n import ENGLISH
from chronicle.render.svg import render_svg, render_svgs
from chronicle.store import rows_to_table
from tests.support.config import make_config

T0 = datetime(2026, 8, 20, tzinfo=UTC).timestamp()
ROOT = Path(__file__).resolve().parents[1]


def _series():
    rows = [
        {
            "run": "r",
            "step": i * 10,
            "timestamp": T0 + i * 190.0,
            "train/loss": 3.0 - i * 1e-4,
            "throughput/tokens_per_second": 2.4e6,
            "moe/drop_fraction": 0.01,
            "grad/norm/total": 0.3,
        }
        for i in range(0, 900)
    ]
    return build_series(rows_to_table(rows), [], make_config())


def test_day_charts_have_every_chart_with_the_day_and_its_failure() -> None:
    gap = FailureRecord(
        "gap-r-10",
        "gap",
        datetime(2026, 8, 21, 5, tzinfo=UTC),
        datetime(2026, 8, 21, 6, tzinfo=UTC),
        "stall",
    )
    charts = day_charts(date(2026, 8, 21), _series(), [gap], make_config(), ENGLISH)
    assert tuple(charts) == DAY_CHARTS
    assert "2026-08-21" in charts["loss"]["title"]["text"]
    assert "stall" in str(charts["throughput"])  # the day's downtime is a shaded span
    for spec in charts.values():
        assert spec["description"].startswith("Line chart of")


def test_parallel_svgs_are_the_serial_bytes() -> None:
    charts = day_charts(date(2026, 8, 21), _series(), [], make_config(), ENGLISH)
    assert render_svgs(charts) == {name: render_svg(spec) for name, spec in charts.items()}


def test_alert_lines_come_from_the_configured_checks() -> None:
    config = make_config(health=[{"id": "grad_norm", "rule": "max > 3.0"},
                                 {"id": "drop_fraction", "enabled": False}])
    charts = day_charts(date(2026, 8, 21), _series(), [], config, ENGLISH)
    text = str(charts["grad_norm"])
    assert "alert 3.0" in text and "alert 2.0" not in text
    assert "alert" not in str(charts["moe"])  # the check is disabled: no line
    assert "alert 2M tok/s" in str(charts["throughput"])  # the default check's threshold


def test_a_day_without_metrics_shades_nothing_on_the_run_so_far_charts() -> None:
    rows = [{"run": "r", "step": i * 10, "timestamp": T0 + i * 190.0, "train/loss": 3.0,
             "throughput/total_tokens": (i + 1) * 1e9} for i in range(400)]
    series = build_series(rows_to_table(rows), [], make_config())
    # The data ended on the 21st.
    after = day_charts(date(2026, 8, 23), series, [], make_config(), ENGLISH)
    during = day_charts(date(2026, 8, 20), series, [], make_config(), ENGLISH)
    assert "this day" not in str(after["loss"])
    assert "this day" in str(during["loss"])


_WORKERS = """
import multiprocessing, os
from chronicle.render.svg import render_statics, start_svgs, stop_sealing_workers
from chronicle.render.i18n import ENGLISH
spec = {"mark": "point", "data": {"values": [{"x": 1}]},
        "encoding": {"x": {"field": "x", "type": "quantitative"}}}
if __name__ == "__main__":
    render_statics({"a": spec, "b": {**spec, "width": 99}})  # sealing a day: its workers
    sealing = {p.pid for p in multiprocessing.active_children()}
    start_svgs({"c": {**spec, "width": 98}})()  # a build in the same process draws with them
    reused = not ({p.pid for p in multiprocessing.active_children()} - sealing)
    stop_sealing_workers()  # what the demo does before its build
    left = {p.pid for p in multiprocessing.active_children()} & sealing
    drawn = start_svgs({"d": {**spec, "width": 97}})()  # the build: a worker of its own
    new = {p.pid for p in multiprocessing.active_children()} - sealing
    print(len(sealing), int(reused), len(left), len(new), int(drawn["d"].startswith("<svg")))
"""


def test_sealing_workers_draw_a_build_until_they_are_stopped(tmp_path: Path) -> None:
    # A process that sealed days draws a build's SVGs with its warm workers; the demo
    # stops them before its build (their memory, two vl-convert runtimes, goes back while
    # the Chinese edition builds beside it), and the build then starts one of its own.
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one core: days seal without worker processes")
    script = tmp_path / "workers.py"
    script.write_text(_WORKERS, encoding="utf-8")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         check=True, cwd=ROOT).stdout.split()
    sealing, reused, left, new, drawn = (int(x) for x in out)
    assert sealing == 2 and reused == 1
    assert left == 0 and new == (os.cpu_count() or 1) - 1 and drawn == 1
