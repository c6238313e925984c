"""Named risks watched over a window of the token budget: upcoming, watching, triggered, passed.

A risk is `upcoming` before its window, `watching` inside it, `triggered` from the first
day its rule fires inside the window (and stays so), `passed` once the run is past the
window without a trigger. Each day carries the status forward from the day before.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any

from chronicle.analysis.day_model import PredictionRecord, RiskRecord
from chronicle.analysis.health import read
from chronicle.analysis.series import Series
from chronicle.config import RunConfig
from chronicle.config.watchers import Risk
from chronicle.models import FailureRecord

STATUSES = ("upcoming", "watching", "triggered", "passed")


def risk_day(risk: Risk, day: date, fraction: float | None, series: Series,
             failures: Sequence[FailureRecord], config: RunConfig, now: float,
             before: Mapping[str, Any] | None,
             prediction: PredictionRecord | None = None) -> RiskRecord:
    """Return one risk's status on `day` given its record of the day before."""
    lo, hi = risk.watch
    prev = before.get("status") if before else None
    since = before.get("since") if before else None
    value: float | None = None
    evidence = before.get("evidence") if before else None
    if prev in ("triggered", "passed"):
        status = prev
    elif fraction is None:
        status = prev or "upcoming"
    elif fraction < lo:
        status = "upcoming"
    else:
        reading = read(risk.metric, risk.rule, risk.window_minutes, day, series, failures,
                       config, now, prediction)
        value = reading.value
        if reading.value is not None and risk.rule.fires(reading.value):
            status = "triggered"
            evidence = {"date": day.isoformat(), "value": reading.value,
                        "threshold": risk.rule.threshold}
        else:
            # The day that crosses the window's end is still watched, then the risk passes.
            status = "passed" if fraction > hi else "watching"
    out: RiskRecord = {
        "id": risk.id, "title": risk.title, "watch": [lo, hi], "rule": str(risk.rule),
        "metric": list(risk.metric), "reason": risk.reason, "fraction": fraction,
        "value": value, "evidence": evidence, "status": status,
        "since": since if status == prev and since else day.isoformat(),
    }
    return out


def risks_day(day: date, fraction: float | None, series: Series,
              failures: Sequence[FailureRecord], config: RunConfig, now: float,
              previous: Sequence[Mapping[str, Any]] | None,
              prediction: PredictionRecord | None = None) -> list[RiskRecord]:
    """Return every configured risk's status on `day` (previous: the day before's list)."""
    before = {r["id"]: r for r in previous or ()}
    return [risk_day(r, day, fraction, series, failures, config, now, before.get(r.id),
                     prediction) for r in config.watch.risks]
