"""The charts a sealed day page carries, from the stitched series (render stage, pure).

Picks the series and events of the four day charts; the run-wide charts page
(site/pages) uses `events_for` too, so both mark forks and failures the same way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any

import numpy as np

from chronicle.analysis.series import Series, day_bounds
from chronicle.models import FailureRecord
from chronicle.render.change_text import change_events
from chronicle.render.charts import Event, line_chart

DAY_CHARTS = ("loss", "throughput", "moe", "grad_norm")
# A sealed day carries four charts forever (spec + SVG, ~100 sealed days in git): the
# run-so-far curves are thinner than the run-wide page's, which keeps ~2,000 points.
DAY_POINTS = 1000


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
    return {label: xy for label, name in names.items() if (xy := s.finite(name)) is not None}


def day_charts(day: date, series: Series, failures: Sequence[FailureRecord],
               changes: Sequence[Mapping[str, Any]] = ()) -> dict[str, dict]:
    """Return the Vega-Lite specs of one day page, keyed by name (see DAY_CHARTS).

    Context, mixture and budget changes are drawn as markers beside forks and failures.
    """
    start, end = day_bounds(day)
    so_far = series.window(-np.inf, end)
    today = series.window(start, end)
    run_events = sorted(events_for(so_far, failures) + change_events(changes, end=end),
                        key=lambda e: (e.x, e.kind, e.label))
    day_events = sorted(events_for(today, failures, start, end)
                        + change_events(changes, start, end),
                        key=lambda e: (e.x, e.kind, e.label))
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
