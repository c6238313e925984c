"""A day's verdicts: prediction residual, health checks, risks (analysis stage, pure).

These are the keys the watchers add to a day JSON when the day is sealed, and what the
run-wide Health, Prediction and Risks pages recompute for every sealed day at build time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date, datetime
from typing import Any

from chronicle.analysis.health import check_all
from chronicle.analysis.prediction import summarize_prediction
from chronicle.analysis.records import ChangeRecord, Verdicts
from chronicle.analysis.risks import risks_day
from chronicle.analysis.run_state import recorded_state
from chronicle.analysis.series import Series, day_bounds
from chronicle.config import RunConfig
from chronicle.models import FailureRecord


def watch_day(day: date, fraction: float | None, series: Series,
              failures: Sequence[FailureRecord], config: RunConfig, sealed_at: datetime,
              previous: Mapping[str, Any] | None,
              day1_sha256: str | None, changes: Sequence[ChangeRecord] = (),
              finished: float | None = None) -> Verdicts:
    """Return {"prediction", "health", "risks"} for one day (the day JSON's new keys).
    `finished`: when the run finished (epoch s), if it had by `sealed_at`."""
    start, end = day_bounds(day)
    now = sealed_at.timestamp()
    pred = summarize_prediction(series, config, end, start, day1_sha256)
    return {
        "prediction": pred,
        "health": check_all(day, series, failures, config, now, pred, finished),
        "risks": risks_day(day, fraction, series, failures, config, now,
                           (previous or {}).get("risks"), pred, changes),
    }


def sealed_finish(day: Mapping[str, Any]) -> float | None:
    """Return when the run finished as a sealed day JSON records it (None: it had not, or
    the day was sealed before run states were recorded)."""
    state = recorded_state(day.get("run_state"))
    return state.finish.at if state is not None and state.finish is not None else None


def day1_sha256(day: date, config: RunConfig, day1: Mapping[str, Any] | None) -> str | None:
    """Return the prediction sha256 recorded on day 1 (None when this is day 1 or unknown)."""
    if day == config.run.start or not day1:
        return None
    pred = day1.get("prediction")
    return pred.get("sha256") if isinstance(pred, Mapping) else None


def watch_history(days: Sequence[Mapping[str, Any]], series: Series,
                  failures: Sequence[FailureRecord], config: RunConfig,
                  changes: Sequence[ChangeRecord] = ()) -> list[dict[str, Any]]:
    """Return `watch_day` for every sealed day in order, recomputed from every stored row."""
    out: list[dict[str, Any]] = []
    # The registered sha256 is the one sealed on day 1, when that day's JSON recorded it.
    first: str | None = (days[0].get("prediction") or {}).get("sha256") if days else None
    previous: Mapping[str, Any] | None = None
    for d in days:
        day = date.fromisoformat(d["date"])
        sealed_at = datetime.fromisoformat(d["sealed_at"].replace("Z", "+00:00"))
        w = watch_day(day, d["tokens"].get("budget_fraction"), series, failures, config,
                      sealed_at, previous, first, changes, sealed_finish(d))
        if first is None and w["prediction"]:
            first = w["prediction"]["sha256"]
        out.append({"date": d["date"], "day": d["day"], **w})
        previous = w
    return out
