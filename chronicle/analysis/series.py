"""Stitch the stored rows of a W&B lineage into one step axis of canonical metrics.

A run is a lineage of W&B runs: each child, forked from its parent at a step, replaces
the parent from its first logged step on (the parent's rows past that point were
rewound and re-done by the child). Analysis only ever sees the stitched series.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from chronicle.config import RunConfig
from chronicle.models import RunRecord


@dataclass(frozen=True)
class Fork:
    """Where one W&B run of the lineage took over from its parent."""

    run: str
    parent: str | None
    step: int
    timestamp: float
    parent_last_step: int | None = None  # the parent's last logged step: steps re-done


@dataclass(frozen=True)
class Series:
    """Stitched, step-sorted arrays: `step`, `timestamp`, `run` and canonical metrics.

    `values[name]` is a float array aligned with `step` (NaN where the row lacks it);
    metrics that were never logged are absent (missing, never zero).
    """

    step: np.ndarray
    timestamp: np.ndarray
    run: np.ndarray
    values: dict[str, np.ndarray]
    forks: tuple[Fork, ...] = ()
    # canonical -> mask of rows where the value was *logged* but NaN/inf (a real NaN
    # loss), as opposed to a row that simply lacks the key (null). `values` holds NaN
    # for both, so statistics can ignore them.
    bad: dict[str, np.ndarray] = field(default_factory=dict)
    lineage: tuple[str, ...] = ()
    raw_keys: dict[str, str] = field(default_factory=dict)  # canonical -> W&B key

    def __len__(self) -> int:
        return int(self.step.size)

    def get(self, name: str) -> np.ndarray | None:
        return self.values.get(name)

    def finite(self, name: str) -> tuple[np.ndarray, np.ndarray] | None:
        """Return (timestamps, values) of the rows where `name` is finite, or None if none."""
        values = self.values.get(name)
        if values is None:
            return None
        ok = np.isfinite(values)
        return (self.timestamp[ok], values[ok]) if ok.any() else None

    def window(self, start: float, end: float) -> Series:
        """Return the rows with start <= timestamp < end (epoch seconds)."""
        lo, hi = np.searchsorted(self.timestamp_sorted_index(), [start, end])
        if lo == 0 and hi == len(self):
            return self  # every row: no copy of every array (a night may hold 10^6 rows)
        idx = self._by_time[lo:hi]
        idx.sort()
        return Series(
            step=self.step[idx],
            timestamp=self.timestamp[idx],
            run=self.run[idx],
            values={k: v[idx] for k, v in self.values.items()},
            bad={k: v[idx] for k, v in self.bad.items()},
            forks=self.forks,
            lineage=self.lineage,
            raw_keys=self.raw_keys,
        )

    def timestamp_sorted_index(self) -> np.ndarray:
        return self.timestamp[self._by_time]

    @property
    def _by_time(self) -> np.ndarray:
        cached = self.__dict__.get("_order")
        if cached is None:
            cached = np.argsort(self.timestamp, kind="stable")
            object.__setattr__(self, "_order", cached)
        return cached

    def day(self, day: date) -> Series:
        """Return the rows logged on one UTC calendar day."""
        return self.window(*day_bounds(day))

    def until(self, when: float) -> Series:
        """Return the rows logged before `when` (epoch seconds)."""
        return self.window(-np.inf, when)


def lineage_order(
    runs: Sequence[RunRecord], config: RunConfig, stored_runs: Sequence[str]
) -> list[str]:
    """Return W&B run ids in lineage order: config order, else creation order."""
    order: list[str] = []
    configured = [r.rsplit("/", 1)[-1] for r in config.wandb.runs]
    if config.source == "live" and configured:
        order = list(configured)
    else:
        order = [r.id for r in sorted(runs, key=lambda r: (r.created_at, r.id))]
    for run_id in stored_runs:  # rows of a run we have no record for still count
        if run_id not in order:
            order.append(run_id)
    return order


def build_series(table: pa.Table, runs: Sequence[RunRecord], config: RunConfig) -> Series:
    """Return the stitched Series of every stored row (see module docstring)."""
    # Load inputs.
    run_col = _shared_strings(table.column("run"))
    steps = table.column("step").to_numpy().astype(np.int64, copy=False)
    stamps = table.column("timestamp").to_numpy().astype(np.float64, copy=False)
    order = lineage_order(runs, config, list(dict.fromkeys(run_col.tolist())))

    # Process.
    idx, forks, present = _stitch(run_col, steps, stamps, order)
    values, bad, raw_keys = _canonical(table, idx, config)

    # Save outputs.
    return Series(step=steps[idx], timestamp=stamps[idx], run=run_col[idx], values=values,
                  bad=bad, forks=tuple(forks), lineage=tuple(present), raw_keys=raw_keys)


def _shared_strings(column: pa.ChunkedArray) -> np.ndarray:
    """Return a string column as an object array in which equal values are one str object:
    a few run ids repeated 10^6 times, not 10^6 strings."""
    names = column.unique()
    index = pc.index_in(column, value_set=names)
    if index.null_count:  # a null (chronicle never writes one): each value as it is
        return np.asarray(column.to_numpy(zero_copy_only=False), dtype=object)
    return np.asarray(names.to_pylist(), dtype=object)[index.to_numpy()]


def _stitch(run_col: np.ndarray, steps: np.ndarray, stamps: np.ndarray, order: Sequence[str],
            ) -> tuple[np.ndarray, list[Fork], list[str]]:
    """Return the kept rows in step order, the forks and the runs present.

    Each run keeps its rows below the next run's first step; a step re-logged within a
    run keeps its first row only.
    """
    firsts: dict[str, int] = {}
    for run_id in order:
        mask = run_col == run_id
        if mask.any():
            firsts[run_id] = int(steps[mask].min())
    present = [r for r in order if r in firsts]
    keep = np.zeros(len(steps), dtype=bool)
    forks: list[Fork] = []
    for i, run_id in enumerate(present):
        mask = run_col == run_id
        if i + 1 < len(present):
            mask &= steps < firsts[present[i + 1]]
        keep |= mask
        if i > 0:
            first = firsts[run_id]
            at = np.flatnonzero((run_col == run_id) & (steps == first))
            parent_steps = steps[run_col == present[i - 1]]
            forks.append(Fork(run_id, present[i - 1], first, float(stamps[at[0]]),
                              int(parent_steps.max()) if parent_steps.size else None))
    idx = np.flatnonzero(keep)
    idx = idx[np.lexsort((stamps[idx], steps[idx]))]
    if idx.size:
        dup = np.concatenate(([False], steps[idx][1:] == steps[idx][:-1]))
        idx = idx[~dup]
    return idx, forks, present


def _canonical(table: pa.Table, idx: np.ndarray, config: RunConfig,
               ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], dict[str, str]]:
    """Return each canonical metric's values on the kept rows (NaN where missing), the
    rows where it was logged but not finite, and the W&B key it was read from."""
    values: dict[str, np.ndarray] = {}
    bad: dict[str, np.ndarray] = {}
    raw_keys: dict[str, str] = {}
    names = set(table.column_names)
    for canonical, key in config.wandb.metrics.items():
        if key in names:
            column = table.column(key)
            valid = np.asarray(column.is_valid().to_numpy(zero_copy_only=False), dtype=bool)[idx]
            col = np.asarray(column.to_numpy(zero_copy_only=False), dtype=np.float64)[idx]
            finite = np.isfinite(col)
            bad[canonical] = valid & ~finite
            values[canonical] = np.where(finite, col, np.nan)
            raw_keys[canonical] = key
    if "mfu" in values and config.wandb.mfu_unit == "fraction":
        values["mfu"] = values["mfu"] * 100.0  # analysis speaks percent; the unit is config
    return values, bad, raw_keys


def day_of_run(config: RunConfig, day: date) -> int:
    """Return the run's day number (day 1 = config.run.start)."""
    return (day - config.run.start).days + 1


def day_bounds(day: date) -> tuple[float, float]:
    """Return the epoch-second bounds [start, end) of a UTC calendar day."""
    start = datetime(day.year, day.month, day.day, tzinfo=UTC)
    return start.timestamp(), (start + timedelta(days=1)).timestamp()


def tokens_at(series: Series, times: np.ndarray) -> np.ndarray:
    """Return the tokens processed at each time (epoch s), interpolated on the logged
    `total_tokens`; NaN outside the logged span or when tokens were never logged."""
    when = np.asarray(times, dtype=float)
    logged = series.finite("total_tokens")
    if logged is None:
        return np.full(when.shape, np.nan)
    t, tokens = logged
    order = np.argsort(t, kind="stable")
    return np.interp(when, t[order], tokens[order], left=np.nan, right=np.nan)
