from __future__ import annotations

import os
import signal
from datetime import UTC, date, datetime

from chronicle.analysis.series import build_series
from chronicle.executor import Executor
from chronicle.models import FailureRecord
from chronicle.render.day_charts import DAY_CHARTS, day_charts
from chronicle.render.i18n import ENGLISH
from chronicle.render.svg import (
    build_workers,
    render_statics,
    render_svg,
    render_svgs,
)
from chronicle.store import rows_to_table
from tests.support.config import make_config
from tests.support.processes import children

T0 = datetime(2026, 8, 20, tzinfo=UTC).timestamp()


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
    with Executor(cores=2) as executor:
        drawn = render_svgs(charts, executor)
    assert drawn == {name: render_svg(spec) for name, spec in charts.items()}


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


SPEC = {"mark": "point", "data": {"values": [{"x": 1}]},
        "encoding": {"x": {"field": "x", "type": "quantitative"}}}


def _workers() -> set[int]:
    return {p.pid for p in children() if "chronicle.executor" in p.cmdline}


def test_a_build_draws_in_workers_until_it_stops_them() -> None:
    # A build draws with one worker per core but one, at least one, and stops them once
    # its charts are drawn (their memory goes back before mkdocs converts the pages); a
    # later drawing starts its own. The bytes are those drawn here; sealing draws here.
    before = _workers()
    with Executor(cores=2) as executor:
        render_statics({"a": SPEC, "b": {**SPEC, "width": 99}}, executor=executor)
        assert _workers() == before  # no `workers`: drawn in this process
        drawn = render_svgs({"d": {**SPEC, "width": 97}}, executor, build_workers(executor))
        first = _workers() - before
        assert len(first) == 1  # one core is left to the build
        assert drawn == {"d": render_svg({**SPEC, "width": 97})}
        executor.stop_render_workers()
        assert not (_workers() & first)
        again = render_svgs({"e": {**SPEC, "width": 96}}, executor, build_workers(executor))
        assert again == {"e": render_svg({**SPEC, "width": 96})}
        assert len(_workers() - before - first) == 1
    assert _workers() == before  # closing the executor ends them
    assert build_workers(Executor(cores=1)) == 1 and build_workers(Executor(cores=4)) == 3
    assert build_workers(None) == 0


def test_without_an_executor_or_on_one_core_charts_are_drawn_here() -> None:
    before = _workers()
    charts = {"a": SPEC, "b": {**SPEC, "width": 99}}
    with Executor(cores=1) as one_core:
        assert render_svgs(charts, one_core) == render_svgs(charts) == {
            n: render_svg(s) for n, s in charts.items()}
        assert _workers() == before


def test_a_killed_worker_is_drawn_for_here() -> None:
    before = _workers()
    with Executor(cores=2) as executor:
        render_statics({"a": SPEC, "b": {**SPEC, "width": 99}}, executor=executor, workers=2)
        killed = _workers() - before
        assert len(killed) == 2
        for pid in killed:
            os.kill(pid, signal.SIGKILL)
        svgs, _ = render_statics({"a": SPEC, "b": {**SPEC, "width": 99}}, executor=executor,
                                 workers=2)
    assert svgs == {"a": render_svg(SPEC), "b": render_svg({**SPEC, "width": 99})}
