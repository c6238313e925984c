"""Risk status over time: upcoming, watching, triggered (sticky), passed."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

import numpy as np
import pytest

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


def _context_change(when: float) -> dict[str, Any]:
    stamp = datetime.fromtimestamp(when, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"id": "sequence_length-r-model.max_seq_len", "kind": "sequence_length",
            "time": stamp, "step": 0, "budget_fraction": 0.8, "key": "model.max_seq_len",
            "name": "sequence_length", "before": 4096, "after": 16384, "run": "r",
            "parent": None, "evidence": [], "recorded_by": "s", "recorded_at": stamp,
            "detail": {}}


def test_rebound_is_read_against_the_p50_before_the_context_change() -> None:
    rebound = [{"id": "drop-rebound", "metric": "drop_fraction", "rule": "rebound > 2",
                "window": 60, "after": "sequence_length"}]
    config = make_config(risks=rebound)
    t0 = day_bounds(START)[0]
    ts = t0 + np.arange(0, 6 * 86400, 600.0)
    change = t0 + 3 * 86400 + 6 * 3600  # day 4, 06:00
    # 3% before the change, then 4% on day 4 (x1.33) and 9% from day 5 on (x3).
    drop = np.where(ts < change, 0.03, np.where(ts < t0 + 4 * 86400, 0.04, 0.09))
    s = Series(step=np.arange(ts.size), timestamp=ts,
               run=np.array(["r"] * ts.size, dtype=object), values={"drop_fraction": drop})
    changes = [_context_change(change)]
    previous = None
    seen = []
    for i in range(6):
        day = START + timedelta(days=i)
        previous = risks_day(day, 0.8 + i / 100, s, [], config, day_bounds(day)[1] + 60,
                             previous, None, changes)
        seen.append((previous[0]["status"], previous[0]["value"]))
    # Upcoming until the change, whatever the budget fraction; not a fixed budget window.
    assert [x[0] for x in seen] == ["upcoming"] * 3 + ["watching", "triggered", "triggered"]
    assert seen[3][1] == pytest.approx(0.04 / 0.03)  # only rows after the change count
    record = previous[0] if previous else {}
    assert record["baseline"] == pytest.approx(0.03)
    assert record["change"] == "sequence_length-r-model.max_seq_len"
    assert record["evidence"]["value"] == pytest.approx(3.0)
    assert record["evidence"]["date"] == (START + timedelta(days=4)).isoformat()


def test_a_risk_after_a_change_that_never_comes_stays_upcoming() -> None:
    config = make_config(risks=[{"id": "mix", "metric": "drop_fraction", "rule": "p50 > 0.5",
                                 "after": "mixture"}])
    s = _series(3, spike_day=9)
    s.values["drop_fraction"] = np.full(s.step.size, 0.9)
    out = risks_day(START + timedelta(days=2), 0.9, s, [], config,
                    day_bounds(START)[1], None, None, [])
    assert out[0]["status"] == "upcoming" and out[0]["change"] is None
    assert out[0]["watch"] == [0.0, 1.0]
