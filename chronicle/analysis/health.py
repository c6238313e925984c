"""Health checks of one day: pass, warn, fail or no-data, each with its evidence.

A check is a metric, a rule (`max > 2.0`) and an optional window in minutes: the rule is
evaluated on each window of the day and the worst window is the evidence. Missing data
is `no-data`, never a pass. Pure: the stitched series, failures and config come in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

import numpy as np

from chronicle.analysis.records import CheckResult, Health, PredictionRecord
from chronicle.analysis.series import Series, day_bounds
from chronicle.config import RunConfig
from chronicle.config.watchers import Check, Rule
from chronicle.models import FailureRecord, iso

STATUSES = ("pass", "warn", "fail", "no-data")
MIN_WINDOW_ROWS = 5


@dataclass(frozen=True)
class Reading:
    """The worst value of a stat over a day's windows, and when it was seen."""

    value: float | None
    when: float | None  # epoch seconds
    note: str = ""


def check_day(check: Check, day: date, series: Series, failures: Sequence[FailureRecord],
              config: RunConfig, now: float,
              prediction: PredictionRecord | None = None,
              finished: float | None = None) -> CheckResult:
    """Return one check's verdict for `day`: status, value, threshold, when, reason.
    `finished`: when the run finished (epoch s), if it had by `now`."""
    reading = read(check.metric, check.rule, check.window_minutes, day, series, failures,
                   config, now if finished is None else min(now, finished), prediction)
    if reading.value is None:
        status = "no-data"
    else:
        status = check.severity if check.rule.fires(reading.value) else "pass"
    return {
        "id": check.id,
        "status": status,
        "metric": list(check.metric),
        "rule": str(check.rule),
        "window_minutes": check.window_minutes,
        "value": reading.value,
        "threshold": check.rule.threshold,
        "when": iso(datetime.fromtimestamp(reading.when, tz=UTC)) if reading.when else None,
        "severity": check.severity,
        "reason": check.reason,
        "note": reading.note,
    }


def check_all(day: date, series: Series, failures: Sequence[FailureRecord], config: RunConfig,
              now: float, prediction: PredictionRecord | None = None,
              finished: float | None = None) -> Health:
    """Return every configured check's verdict for `day` and the day's worst status.
    After the run's finish its telemetry is silent by design: nothing to check."""
    results = [check_day(c, day, series, failures, config, now, prediction, finished)
               for c in config.watch.health]
    counts = {s: sum(1 for r in results if r["status"] == s) for s in STATUSES}
    worst = "fail" if counts["fail"] else "warn" if counts["warn"] else (
        "pass" if counts["pass"] else "no-data")
    return {"status": worst, "counts": counts, "checks": results}


def read(metrics: Sequence[str], rule: Rule, window: float | None, day: date, series: Series,
         failures: Sequence[FailureRecord], config: RunConfig, now: float,
         prediction: Mapping[str, Any] | None = None) -> Reading:
    """Return the worst reading of `rule.stat` on `metrics` over the day's windows."""
    start, end = day_bounds(day)
    first = metrics[0]
    if first == "telemetry":
        if now <= start:  # `now` is the run's finish (check_day), before this day
            return Reading(None, None, "the run had finished")
        return _gap(series, start, min(end, now))
    if first == "prediction":
        return _prediction(rule.stat, prediction)
    rows = series.window(start, end)
    if first.startswith("failures."):
        if not len(rows):
            return Reading(None, None, "no metrics this day")
        kinds = {m.split(".", 1)[1] for m in metrics}
        hits = sorted(f.start.timestamp() for f in failures
                      if f.kind in kinds and start <= f.start.timestamp() < end)
        return Reading(float(len(hits)), hits[0] if hits else None)
    names = [canonical_name(m, config) for m in metrics]
    arrays = [(rows.values.get(n), rows.bad.get(n)) for n in names if n]
    if not arrays or all(a is None for a, _ in arrays):
        return Reading(None, None, f"{', '.join(metrics)} not logged")
    if rule.stat == "nan_count":
        bad = sum((b for _, b in arrays if b is not None), np.zeros(len(rows), dtype=int))
        logged = bad.astype(bool) | np.any([np.isfinite(a) for a, _ in arrays
                                            if a is not None], axis=0)
        if not logged.any():
            return Reading(None, None, "no logged rows")
        idx = np.flatnonzero(bad)
        return Reading(float(idx.size), float(rows.timestamp[idx[0]]) if idx.size else None)
    t = np.concatenate([rows.timestamp for a, _ in arrays if a is not None])
    v = np.concatenate([a for a, _ in arrays if a is not None])
    ok = np.isfinite(v)
    t, v = t[ok], v[ok]
    if not v.size:
        return Reading(None, None, f"no finite {', '.join(metrics)} this day")
    if rule.stat == "increase":
        return _increase(series, names[0] or "", start, end)
    if window is None:
        return _stat(rule.stat, t, v)
    edges = np.arange(start, end + 1, window * 60.0)
    bucket = np.searchsorted(edges, t, side="right") - 1
    ids, sizes = np.unique(bucket, return_counts=True)
    # A window holding a couple of rows (a restart's slow first step) is not an hour of
    # anything: windows need MIN_WINDOW_ROWS rows, unless none has that many.
    full = ids[sizes >= MIN_WINDOW_ROWS] if (sizes >= MIN_WINDOW_ROWS).any() else ids
    if rule.stat in ("p10", "p50", "p90"):
        keep = np.isin(bucket, full)
        values = _bucket_percentiles(bucket[keep], v[keep], float(rule.stat[1:]))
        readings = [Reading(float(x), float(t[keep][bucket[keep] == b][0]))
                    for b, x in zip(np.unique(bucket[keep]), values, strict=True)]
    else:
        readings = [_stat(rule.stat, t[bucket == b], v[bucket == b]) for b in full]
    readings = [r for r in readings if r.value is not None]
    if not readings:
        return Reading(None, None)
    pick = max if rule.op in (">", ">=") else min
    return pick(readings, key=lambda r: r.value or 0.0)


def _bucket_percentiles(bucket: np.ndarray, v: np.ndarray, q: float) -> np.ndarray:
    """Return the q-th percentile of v in each bucket (ascending ids), as np.percentile."""
    order = np.lexsort((v, bucket))
    b, x = bucket[order], v[order]
    starts = np.flatnonzero(np.r_[True, b[1:] != b[:-1]])
    counts = np.diff(np.r_[starts, b.size])
    pos = starts + q / 100.0 * (counts - 1)
    lo = np.floor(pos).astype(np.int64)
    hi = np.minimum(lo + 1, starts + counts - 1)
    return x[lo] + (pos - lo) * (x[hi] - x[lo])


def canonical_name(name: str, config: RunConfig) -> str | None:
    """Return the canonical metric a canonical name or W&B key names, or None."""
    if name in config.wandb.metrics:
        return name
    for canonical, key in config.wandb.metrics.items():
        if key == name:
            return canonical
    return None


def _stat(stat: str, t: np.ndarray, v: np.ndarray) -> Reading:
    if not v.size:
        return Reading(None, None)
    if stat in ("max", "min", "abs_max"):
        i = int(np.argmax(v) if stat == "max" else np.argmin(v) if stat == "min"
                else np.argmax(np.abs(v)))
        return Reading(float(abs(v[i]) if stat == "abs_max" else v[i]), float(t[i]))
    if stat == "last":
        return Reading(float(v[-1]), float(t[-1]))
    if stat == "mean":
        return Reading(float(v.mean()), float(t[0]))
    if stat == "count":
        return Reading(float(v.size), float(t[0]))
    if stat in ("p10", "p50", "p90"):
        return Reading(float(np.percentile(v, int(stat[1:]))), float(t[0]))
    return Reading(None, None, f"stat {stat} does not apply to a metric")


def _increase(series: Series, name: str, start: float, end: float) -> Reading:
    """Worst rise of a value logged this day above the best value logged before it."""
    values = series.values.get(name)
    if values is None:
        return Reading(None, None)
    ok = np.flatnonzero(np.isfinite(values) & (series.timestamp < end))
    t, v = series.timestamp[ok], values[ok]
    best_before = np.concatenate(([np.inf], np.minimum.accumulate(v)[:-1]))
    today = (t >= start) & np.isfinite(best_before)
    if not today.any():
        return Reading(None, None, "no earlier value to compare with")
    rise = np.where(today, v - best_before, -np.inf)
    i = int(np.argmax(rise))
    return Reading(float(rise[i]), float(t[i]))


def _gap(series: Series, start: float, end: float) -> Reading:
    """Longest stretch of [start, end) without a logged row, in minutes."""
    if not len(series) or float(series.timestamp.min()) >= end:
        return Reading(None, None, "the run had not started")
    t = series.timestamp_sorted_index()
    lo = max(start, float(t[0]))
    inside = t[(t >= lo) & (t < end)]
    before = t[t < lo]
    points = np.concatenate(([before[-1]] if before.size else [], inside, [end]))
    points = np.maximum(points, lo)  # a silence that began the day before counts from 00:00
    if points.size < 2:
        return Reading(None, None)
    gaps = np.diff(points)
    i = int(np.argmax(gaps))
    return Reading(float(gaps[i]) / 60.0, float(points[i]))


def _prediction(stat: str, prediction: Mapping[str, Any] | None) -> Reading:
    if not prediction or prediction.get(stat) is None:
        return Reading(None, None, "no prediction for this point of the run")
    when = prediction.get("eval_time")
    ts = datetime.fromisoformat(when).timestamp() if isinstance(when, str) else None
    return Reading(float(prediction[stat]), ts)
