"""Risk status over time: upcoming, watching, triggered (sticky), passed."""

from __future__ import annotations

from datetime import date, timedelta

import numpy as np

from chronicle.analysis.risks import risks_day
from chronicle.analysis.series import Series, day_bounds
from tests.support.config import make_config

START = date(2026, 8, 20)
RISKS = [{"id": "gn", "title": "Grad norm", "metric": "grad_norm", "rule": "max > 1.0",
          "watch": [0.2, 0.4]},
         {"id": "quiet", "title": "Never fires", "metric": "grad_norm", "rule": "max > 9",
          "watch": [0.1, 0.3]}]


def _series(days: int, spike_day: int) -> Series:
    t0 = day_bounds(START)[0]
    ts = t0 + np.arange(0, days * 86400, 600.0)
    grad = np.where((ts >= t0 + spike_day * 86400) & (ts < t0 + (spike_day + 1) * 86400), 1.5,
                    0.3)
    return Series(step=np.arange(ts.size), timestamp=ts,
                  run=np.array(["r"] * ts.size, dtype=object), values={"grad_norm": grad})


def test_statuses_change_on_the_right_days_and_triggered_sticks() -> None:
    config = make_config(risks=RISKS)
    s = _series(10, spike_day=1)  # a spike on day 2, before the window: ignored
    s.values["grad_norm"][(s.timestamp >= day_bounds(START + timedelta(days=5))[0])
                          & (s.timestamp < day_bounds(START + timedelta(days=5))[1])] = 1.5
    fractions = [0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5]
    previous = None
    seen: dict[str, list[tuple[str, str, str]]] = {"gn": [], "quiet": []}
    for i, f in enumerate(fractions):
        day = START + timedelta(days=i)
        previous = risks_day(day, f, s, [], config, day_bounds(day)[1] + 3600, previous)
        for r in previous:
            seen[r["id"]].append((day.isoformat()[-2:], r["status"], r["since"][-2:]))
    gn = [x[1] for x in seen["gn"]]
    assert gn == ["upcoming"] * 3 + ["watching"] * 2 + ["triggered"] * 5
    assert seen["gn"][-1][2] == "25"  # triggered since day 6 (2026-08-25)
    quiet = [x[1] for x in seen["quiet"]]
    assert quiet == ["upcoming", "watching", "watching", "watching", "watching", "watching",
                     "passed", "passed", "passed", "passed"]
    assert previous is not None and previous[0]["evidence"]["value"] == 1.5
