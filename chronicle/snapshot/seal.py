"""Sealing closed days: a day's figures, verdicts, provenance and charts -> its files
(snapshot stage).

A day is sealed once, by the first snapshot taken after it ended; its files are written
by the store together with that snapshot and never change afterwards.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from chronicle.analysis.changes import RunChanges
from chronicle.analysis.days import summarize_day
from chronicle.analysis.series import Series
from chronicle.analysis.verdicts import day1_sha256, watch_day
from chronicle.config import RunConfig
from chronicle.models import FailureRecord, Thread
from chronicle.render.day import render_day_files
from chronicle.render.day_charts import day_charts
from chronicle.render.prose import write_summary
from chronicle.render.svg import render_svgs
from chronicle.snapshot.provenance import SealContext, day_provenance
from chronicle.store import Store


@dataclass(frozen=True)
class SealInputs:
    """Everything the days sealed by one snapshot are computed from."""

    config: RunConfig
    store: Store
    as_of: datetime
    snapshot: str
    series: Series
    failures: list[FailureRecord]
    threads: Mapping[int, list[Thread]]
    backfilled: bool
    context: SealContext | None = None
    corrections: tuple[dict[str, Any], ...] = ()
    changes: RunChanges | None = None


def days_to_seal(config: RunConfig, store: Store, as_of: datetime) -> list[date]:
    """Return the closed, not yet sealed days of the run up to `as_of`, oldest first."""
    sealed = store.sealed_days()
    last_closed = as_of.astimezone(UTC).date() - timedelta(days=1)
    out = []
    day = config.run.start
    while day <= last_closed:
        if day not in sealed:
            out.append(day)
        day += timedelta(days=1)
    return out


def sealed_day_json(store: Store, day: date) -> dict[str, Any] | None:
    """Return the sealed JSON of `day`, or None if it was not sealed."""
    path = store.days / f"{day.isoformat()}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def seal_days(inputs: SealInputs) -> dict[str, dict[str, bytes]]:
    """Return {day: {path under docs/: bytes}} of every day this snapshot seals."""
    config, store = inputs.config, inputs.store
    sealed: dict[str, dict[str, bytes]] = {}
    previous: Mapping[str, Any] | None = None
    day1: Mapping[str, Any] | None = None  # day 1 holds the prediction's registered sha256
    changes = inputs.changes.changes if inputs.changes else ()
    for day in days_to_seal(config, store, inputs.as_of):
        if previous is None or previous["date"] != (day - timedelta(days=1)).isoformat():
            previous = sealed_day_json(store, day - timedelta(days=1))
        summary = summarize_day(
            day, inputs.series, inputs.failures, inputs.threads, config, inputs.snapshot,
            inputs.as_of, previous=previous, backfilled=inputs.backfilled,
            changes=inputs.changes)
        if day1 is None and day != config.run.start:
            day1 = sealed_day_json(store, config.run.start)
        summary["summary"] = write_summary(summary)
        verdicts = watch_day(day, summary["tokens"]["budget_fraction"], inputs.series,
                             inputs.failures, config, inputs.as_of, previous,
                             day1_sha256(day, config, day1), changes)
        summary["prediction"] = verdicts["prediction"]
        summary["health"] = verdicts["health"]
        summary["risks"] = verdicts["risks"]
        day1 = summary if day == config.run.start else day1
        if inputs.context is not None:
            summary["provenance"] = day_provenance(
                summary, inputs.series.raw_keys, inputs.context.scopes(day, sealed))
        # Late data about sealed days is announced by the first entry sealed after it.
        summary["corrections"] = list(inputs.corrections) if not sealed else []
        charts = day_charts(day, inputs.series, inputs.failures, changes)
        sealed[day.isoformat()] = render_day_files(summary, charts, render_svgs(charts), config)
        previous = summary
    return sealed
