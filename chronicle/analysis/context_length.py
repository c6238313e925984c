"""Sequence length per logged row, and token dropping split by it (analysis stage, pure).

The sequence length in effect at a step is that of the W&B run that logged it (its
config, through `wandb.config_keys.sequence_length`), else `run.sequence_length`; with
neither it is unknown (None), never 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

import numpy as np

from chronicle.analysis.day_model import DropStats
from chronicle.analysis.records import ChangeRecord
from chronicle.analysis.series import Series

UNKNOWN = "unknown"


def lengths(series: Series, by_run: Mapping[str, int | None],
            fallback: int | None) -> np.ndarray:
    """Return the sequence length of each row of `series` (NaN: unknown)."""
    out = np.full(len(series), np.nan)
    for run in dict.fromkeys(series.run.tolist()):
        value = by_run.get(run, fallback)
        if value is not None:
            out[series.run == run] = float(value)
    return out


def label(value: float) -> str:
    """Return a sequence length as a day JSON key ("4096", or "unknown")."""
    return str(int(value)) if np.isfinite(value) else UNKNOWN


def in_effect(rows: Series, by_run: Mapping[str, int | None],
              fallback: int | None) -> list[int | None]:
    """Return the sequence lengths of the runs that logged `rows`, ascending (None last)."""
    values = {by_run.get(run, fallback) for run in set(rows.run.tolist())}
    return sorted(v for v in values if v is not None) + ([None] if None in values else [])


def drop_by_length(rows: Series, by_run: Mapping[str, int | None],
                   fallback: int | None) -> dict[str, DropStats]:
    """Return the drop fraction's p50, max and row count per sequence length."""
    drop = rows.values.get("drop_fraction")
    if drop is None:
        return {}
    seq = lengths(rows, by_run, fallback)
    ok = np.isfinite(drop)
    out: dict[str, DropStats] = {}
    known = np.isfinite(seq)
    groups = [(label(v), ok & (seq == v)) for v in sorted(set(seq[ok & known].tolist()))]
    groups.append((UNKNOWN, ok & ~known))
    for name, mask in groups:
        if mask.any():
            out[name] = {"p50": float(np.percentile(drop[mask], 50)),
                         "max": float(drop[mask].max()), "rows": int(mask.sum())}
    return out


def changes_between(changes: Sequence[ChangeRecord], start: float,
                    end: float) -> list[ChangeRecord]:
    """Return the changes that took effect in [start, end) (epoch seconds)."""
    out = []
    for c in changes:
        if c["time"] is None:
            continue
        t = datetime.fromisoformat(c["time"].replace("Z", "+00:00")).astimezone(UTC)
        if start <= t.timestamp() < end:
            out.append(c)
    return out
