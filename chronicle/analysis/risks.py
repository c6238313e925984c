"""Named risks watched over a window of the token budget, or from a change of the run on:
upcoming, watching, triggered, passed.

A risk is `upcoming` before its window, `watching` inside it, `triggered` from the first
day its rule fires inside the window (and stays so), `passed` once the run is past the
window without a trigger. Each day carries the status forward from the day before.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date, datetime
from typing import Any

import numpy as np

from chronicle.analysis.health import canonical_name, read
from chronicle.analysis.records import ChangeRecord, PredictionRecord, RiskRecord
from chronicle.analysis.series import Series, day_bounds
from chronicle.config import RunConfig
from chronicle.config.default_checks import Rule
from chronicle.config.watchers import Risk
from chronicle.models import FailureRecord

STATUSES = ("upcoming", "watching", "triggered", "passed")
BASELINE_S = 86400.0  # a `rebound` compares with the metric's p50 over the day before


def risk_day(risk: Risk, day: date, fraction: float | None, series: Series,
             failures: Sequence[FailureRecord], config: RunConfig, now: float,
             before: Mapping[str, Any] | None,
             prediction: PredictionRecord | None = None,
             changes: Sequence[ChangeRecord] = ()) -> RiskRecord:
    """Return one risk's status on `day` given its record of the day before.

    A risk with `after` stays upcoming until the first change of that kind, and reads
    only the rows logged from the change on; its `rebound` stat is the window's p50 over
    the metric's p50 in the 24 h before the change.
    """
    lo, hi = risk.watch
    prev = before.get("status") if before else None
    since = before.get("since") if before else None
    value: float | None = None
    baseline: float | None = None
    evidence = before.get("evidence") if before else None
    change = first_change(changes, risk.after, day_bounds(day)[1]) if risk.after else None
    if prev in ("triggered", "passed"):
        status = prev
    elif fraction is None:
        status = prev or "upcoming"
    elif fraction < lo or (risk.after is not None and change is None):
        status = "upcoming"
    else:
        rows, rule = series, risk.rule
        if change is not None:
            rows = series.window(change[1], np.inf)
            if rule.stat == "rebound":
                baseline = _p50_before(series, risk, config, change[1])
                rule = Rule("p50", rule.op, rule.threshold)
        reading = read(risk.metric, rule, risk.window_minutes, day, rows, failures,
                       config, now, prediction)
        value = reading.value
        if risk.rule.stat == "rebound":
            value = value / baseline if value is not None and baseline else None
        if value is not None and risk.rule.fires(value):
            status = "triggered"
            evidence = {"date": day.isoformat(), "value": value,
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
    if risk.after is not None:
        out["after"] = risk.after
        out["change"] = change[0] if change else None
        if risk.rule.stat == "rebound":
            out["baseline"] = baseline if baseline is not None else (
                before.get("baseline") if before else None)
    return out


def first_change(changes: Sequence[ChangeRecord], kind: str | None,
                 until: float) -> tuple[str, float] | None:
    """Return (id, epoch seconds) of the first change of `kind` before `until`, or None."""
    for c in changes:
        if c["kind"] == kind and c["time"] is not None:
            t = datetime.fromisoformat(c["time"].replace("Z", "+00:00")).timestamp()
            if t < until:
                return c["id"], t
    return None


def _p50_before(series: Series, risk: Risk, config: RunConfig, when: float) -> float | None:
    """Return the p50 of the risk's metric over the BASELINE_S before `when` (None: none)."""
    name = canonical_name(risk.metric[0], config)
    values = series.window(when - BASELINE_S, when).values.get(name or "")
    if values is None or not np.isfinite(values).any():
        return None
    return float(np.percentile(values[np.isfinite(values)], 50))


def risks_day(day: date, fraction: float | None, series: Series,
              failures: Sequence[FailureRecord], config: RunConfig, now: float,
              previous: Sequence[Mapping[str, Any]] | None,
              prediction: PredictionRecord | None = None,
              changes: Sequence[ChangeRecord] = ()) -> list[RiskRecord]:
    """Return every configured risk's status on `day` (previous: the day before's list)."""
    before = {r["id"]: r for r in previous or ()}
    return [risk_day(r, day, fraction, series, failures, config, now, before.get(r.id),
                     prediction, changes) for r in config.watch.risks]
