"""Corrections: late data about a sealed day, compared with what its sealed page says.

A sealed page never changes. When a later snapshot stores rows of a sealed day (API lag,
a backfill, a corrected value), its figures are recomputed and every tracked figure that
moved beyond its tolerance becomes a correction record: kept in that snapshot's manifest,
carried by the next sealed entry and listed on the corrections page and feed. Pure.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from datetime import date, datetime, timedelta
from typing import Any

import numpy as np

from chronicle.analysis.day_model import figure_at
from chronicle.models import iso

CORRECTION_SCHEMA = "chronicle-correction/1"
# figure path -> (absolute tolerance, relative tolerance): smaller moves are rounding noise.
TRACKED: dict[str, tuple[float, float]] = {
    "tokens.day": (1.0, 1e-9),
    "loss.train_last": (1e-9, 1e-9),
    "data.rows": (0.0, 0.0),
    "downtime_seconds": (1.0, 0.0),
}


def late_days(timestamps: Iterable[float] | np.ndarray) -> dict[date, int]:
    """Return how many of the given row timestamps fall on each UTC day."""
    # POSIX days are 86,400 s each: whole arrays at once (a night may bring 10^6 rows).
    stamps = np.asarray(timestamps if isinstance(timestamps, np.ndarray)
                        else list(timestamps), dtype=np.float64)
    days, counts = np.unique(np.floor(stamps / 86_400).astype(np.int64), return_counts=True)
    epoch = date(1970, 1, 1)
    return {epoch + timedelta(days=int(d)): int(n)
            for d, n in zip(days.tolist(), counts.tolist(), strict=True)}


def differs(before: Any, after: Any, path: str) -> bool:
    """Return True when a tracked figure moved beyond its tolerance (missing vs present too)."""
    if before is None or after is None:
        return (before is None) != (after is None)
    absolute, relative = TRACKED[path]
    a, b = float(before), float(after)
    if not (math.isfinite(a) and math.isfinite(b)):
        return str(a) != str(b)
    return abs(a - b) > max(absolute, relative * max(abs(a), abs(b)))


def correction_id(day: str, path: str, snapshot: str) -> str:
    """Return the stable id of a correction: the day, the figure and the snapshot that found it."""
    return f"{day}/{path}/{snapshot}"


def find_corrections(
    day: date,
    sealed: Mapping[str, Any],
    recomputed: Mapping[str, Any],
    earlier: Iterable[Mapping[str, Any]],
    late_rows: int,
    snapshot: str,
    found_at: datetime,
) -> list[dict[str, Any]]:
    """Return correction records for one sealed day whose recomputed figures moved.

    `earlier` are corrections already published: a figure is compared with its latest
    published value (sealed, or corrected since), so a correction is never repeated.
    """
    current = {p: figure_at(sealed, p) for p in TRACKED}
    for c in sorted(earlier, key=lambda c: c["found_at"]):
        if c["day"] == day.isoformat() and c["figure"] in current:
            current[c["figure"]] = c["corrected"]
    out = []
    for path in TRACKED:
        now = figure_at(recomputed, path)
        if not differs(current[path], now, path):
            continue
        out.append({
            "schema": CORRECTION_SCHEMA,
            "id": correction_id(day.isoformat(), path, snapshot),
            "day": day.isoformat(),
            "figure": path,
            "sealed": figure_at(sealed, path),
            "previous": current[path],
            "corrected": now,
            "sealed_by": sealed.get("sealed_by"),
            "found_by": snapshot,
            "found_at": iso(found_at),
            "reason": f"{late_rows} metric row(s) of this day arrived after it was sealed",
            "late_rows": late_rows,  # every language says the reason from this
        })
    return out
