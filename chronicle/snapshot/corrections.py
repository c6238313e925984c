"""Corrections found by a snapshot: late rows about days already sealed (snapshot stage).

A sealed page never changes; when a snapshot stores rows of a sealed day, the day's figures
are recomputed and every figure that moved becomes a correction recorded in the manifest
and announced by the next sealed entry (analysis/corrections.py compares).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import pyarrow as pa

from chronicle.analysis.corrections import find_corrections, late_days
from chronicle.analysis.days import summarize_day
from chronicle.analysis.run_state import recorded_state
from chronicle.analysis.series import Series
from chronicle.config import RunConfig
from chronicle.models import FailureRecord, Thread
from chronicle.store import Store


def snapshot_corrections(
    config: RunConfig,
    store: Store,
    series: Series,
    failures: Sequence[FailureRecord],
    history: Mapping[int, Sequence[Thread]],
    new_rows: pa.Table | None,
    sid: str,
    as_of: datetime,
) -> list[dict[str, Any]]:
    """Return corrections to sealed days that received rows in this snapshot."""
    if new_rows is None or not new_rows.num_rows:
        return []
    touched = late_days(new_rows.column("timestamp").to_numpy())
    sealed = store.sealed_days()
    earlier = store.corrections()
    out: list[dict[str, Any]] = []
    for day in sorted(set(touched) & set(sealed)):
        before = store.sealed_day(day)  # checked against the manifest that sealed it
        if before is None:
            continue
        now = summarize_day(day, series, failures, history, config, before.get("sealed_by", sid),
                            as_of, state=recorded_state(before.get("run_state")))
        out += find_corrections(day, before, now, earlier, touched[day], sid, as_of)
    return out
