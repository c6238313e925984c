"""Which charts a day page carries, assembled from the stitched series (pure).

The run-wide charts page lives in site.py; this module picks the series and events for
the sealed day pages so both stay consistent in naming and units.
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from datetime import date

import numpy as np

from chronicle.analysis.series import Series, day_bounds
from chronicle.models import FailureRecord
from chronicle.render.charts import Event, line_chart, render_svg

DAY_CHARTS = ("loss", "throughput", "moe", "grad_norm")
# A sealed day carries four charts forever (spec + SVG, ~100 sealed days in git): the
# run-so-far curves are thinner than the run-wide page's, which keeps ~2,000 points.
DAY_POINTS = 1000

_pool: ProcessPoolExecutor | None = None


def events_for(
    series: Series, failures: Sequence[FailureRecord], start: float = -np.inf, end: float = np.inf
) -> list[Event]:
    """Return chart marks for forks and failures between start and end (epoch s)."""
    out = [
        Event(f.timestamp, "fork", f"fork: {f.run} from step {f.step:,}")
        for f in series.forks
        if start <= f.timestamp < end
    ]
    for f in failures:
        t = f.start.timestamp()
        if start <= t < end and f.kind != "fork":
            out.append(Event(t, "failure" if f.kind != "gap" else "gap", f.what[:80]))
    return sorted(out, key=lambda e: (e.x, e.kind, e.label))


def _lines(s: Series, names: dict[str, str]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Return {legend label: (time, finite values)} for each metric with a point here.

    A metric logged elsewhere in the store but not in this window gets no (empty) line,
    so a backfilled day charts exactly what the nightly job would have.
    """
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for label, name in names.items():
        values = s.get(name)
        if values is not None and np.isfinite(values).any():
            ok = np.isfinite(values)
            out[label] = (s.timestamp[ok], values[ok])
    return out


def day_charts(day: date, series: Series, failures: Sequence[FailureRecord]) -> dict[str, dict]:
    """Return the Vega-Lite specs of one day page, keyed by name (see DAY_CHARTS)."""
    start, end = day_bounds(day)
    so_far = series.window(-np.inf, end)
    today = series.window(start, end)
    run_events = events_for(so_far, failures)
    day_events = events_for(today, failures, start, end)
    label = day.isoformat()
    charts: dict[str, dict] = {}

    loss = _lines(so_far, {"train loss": "loss", "eval loss": "eval_loss"})
    charts["loss"] = line_chart(
        loss,
        title=f"Loss, run so far ({label} highlighted)",
        y_title="loss",
        events=run_events,
        highlight=(start, end),
        target=DAY_POINTS,
    )

    thr = _lines(today, {"compute-step tokens/s": "tokens_per_second"})
    charts["throughput"] = line_chart(
        thr,
        title=f"Throughput on {label}",
        y_title="tokens/s",
        events=day_events,
        rules=[(2.0e6, "alert 2.0M tok/s")],
    )

    drop = _lines(today, {"drop fraction": "drop_fraction"})
    charts["moe"] = line_chart(
        drop,
        title=f"MoE token drop fraction on {label}",
        y_title="fraction dropped",
        events=day_events,
        rules=[(0.07, "alert 7%")],
        y_format=".1%",
    )

    gn = _lines(so_far, {"grad norm": "grad_norm"})
    charts["grad_norm"] = line_chart(
        gn,
        title=f"Gradient norm, run so far ({label} highlighted)",
        y_title="grad norm",
        highlight=(start, end),
        events=run_events,
        rules=[(2.0, "alert 2.0")],
        target=DAY_POINTS,
    )
    return charts


def render_svgs(charts: dict[str, dict]) -> dict[str, str]:
    """Return the static SVG of each chart, keyed like `charts`.

    vl-convert holds the GIL, so a day's charts render in worker processes (one per
    core, started once per process); the output is the same bytes as a serial render.
    """
    global _pool
    workers = min(2, os.cpu_count() or 1)
    if len(charts) < 2 or workers < 2:
        return {name: render_svg(spec) for name, spec in charts.items()}
    if _pool is None:
        # spawn, not fork: vl-convert's JavaScript runtime runs threads of its own.
        _pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
        atexit.register(_pool.shutdown)
    names = list(charts)
    try:
        return dict(zip(names, _pool.map(render_svg, [charts[n] for n in names]), strict=True))
    except BrokenProcessPool:
        _pool = None
        return {name: render_svg(spec) for name, spec in charts.items()}
