"""W&B history rows -> one Arrow table, column by column (sources stage).

A night can bring 10^6 rows. Kept as a dict per row they took ~3 KB each (4 GB for such a
night); here each page of rows the client hands over (up to PAGE_ROWS) is turned into one
float64 array per W&B key at once, so a row costs its 8-byte values and nothing else.

This is also where a history row is judged (the edge: nothing here is trusted):
- a row whose `_step` is not a whole number >= 0, or whose `_timestamp` is missing, not a
  finite number, or outside the time the run can have logged in (`RowBounds`) is a *bad
  row*: never stored, counted, and the first one named (run, step, value), so the source
  is reported degraded instead of a nonsense time reaching the store (a `_timestamp` of 0
  would be a gap from 1970; -1e12 a date no calendar holds);
- a value is a float: Go's integers become floats, "NaN"/"Infinity" strings their floats
  (NaN is data), anything else (a bool, a string, media, a nested object) is not a metric
  value and counts as missing (null), never as zero;
- a step logged twice keeps its first row (a re-logged or rewound step); rows before the
  run's first new step, or logged after `as_of`, are left out and counted.
A W&B key holding control characters is cleaned like any other untrusted text.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from itertools import islice
from typing import Any

import numpy as np
import pyarrow as pa

from chronicle.clean import clean_line
from chronicle.models import ROW_KEYS

# Rows turned into columns at once: one page of the client's (sources/wandb.py PAGE_SIZE).
PAGE_ROWS = 1000
# The calendar a timestamp must fall in (chronicle.yml's dates are bounded the same way).
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
LATEST = datetime(2101, 1, 1, tzinfo=UTC)  # exclusive: 2100-12-31 is the last day
# How far before run.start a row may be logged: `--as-of` accepts snapshots 31 days
# before run.start (a chronicle set up before launch), so rows from then are plausible.
BEFORE_RUN = timedelta(days=31)
# How far past the snapshot's own clock a row may be stamped (a host clock running ahead):
# beyond it the row could only be stored by a snapshot in the future, so it never would be.
AHEAD = timedelta(days=1)
_MAX_SHOWN = 60  # characters of a bad value quoted in the manifest

_SPECIAL = {"NaN": math.nan, "nan": math.nan, "Infinity": math.inf, "-Infinity": -math.inf,
            "inf": math.inf, "-inf": -math.inf}
_NUMBERS = {float, int}
_STEP_MAX = 2**62  # far above any real step; keeps int64 arithmetic safe


def parse_value(value: Any) -> float | None:
    """Normalise one history value to float: ints (Go turns 1.0 into 1), NaN strings."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        if value in _SPECIAL:
            return _SPECIAL[value]
        try:
            return float(value)
        except ValueError:
            return None
    return None  # media, histograms, nested dicts: not metric values


@dataclass(frozen=True)
class RowBounds:
    """The timestamps (epoch seconds, [first, last)) a row of this run can have."""

    first: float
    last: float

    @classmethod
    def of_run(cls, start: date, now: datetime) -> RowBounds:
        """Return the bounds of a run that starts on `start`, fetched at `now` (wall clock)."""
        first = max(EARLIEST, datetime.combine(start, time(0), tzinfo=UTC) - BEFORE_RUN)
        last = min(LATEST, now.astimezone(UTC) + AHEAD)
        return cls(first.timestamp(), max(first, last).timestamp())

    def describe(self) -> str:
        """Return the bounds as a reader sees them."""
        def show(t: float) -> str:
            return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return f"{show(self.first)} to {show(self.last)}"


@dataclass
class BadRows:
    """The bad rows of a fetch: how many, and the first one (run, step, value, why)."""

    count: int = 0
    first: dict[str, Any] | None = None

    def add(self, count: int, run: str, step: Any, value: Any, why: str) -> None:
        if count and self.first is None:
            self.first = {"run": run, "step": _shown(step), "timestamp": _shown(value),
                          "why": why}
        self.count += count


def _shown(value: Any) -> Any:
    """Return a raw value as the manifest can hold it: an int as is, else short JSON text."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) < 2**53:
        return value
    try:
        text = json.dumps(value, allow_nan=True)
    except (TypeError, ValueError):
        text = repr(value)
    text = clean_line(text)
    return text if len(text) <= _MAX_SHOWN else text[:_MAX_SHOWN] + "…"


@dataclass
class _Run:
    """What is kept of one run so far: its steps, for the first-row-stands rule."""

    kept: list[np.ndarray] = field(default_factory=list)
    last: int = -1  # the largest kept step
    first: int | None = None  # the smallest kept step


class HistoryTable:
    """The kept history rows of one fetch, accumulated page by page as Arrow arrays.

    `keeps(key)` says whether a W&B key is stored (asked once per key); rows logged after
    `cutoff` (epoch seconds) are left for a later snapshot.
    """

    def __init__(self, keeps: Callable[[str], bool], bounds: RowBounds, cutoff: float) -> None:
        self.keeps, self.bounds, self.cutoff = keeps, bounds, cutoff
        self.stats = {"duplicates": 0, "after_as_of": 0}
        self.bad = BadRows()
        self._names: dict[str, str | None] = {}  # raw W&B key -> stored column (None: not kept)
        self._runs: dict[str, _Run] = {}
        self._batches: list[tuple[str, np.ndarray, np.ndarray, dict[str, pa.Array]]] = []
        self._table: pa.Table | None = None
        self.rows = 0  # kept
        self.good = 0  # with a good step and time, kept or not

    def first_step(self, run: str) -> int | None:
        """Return the smallest step kept of `run` (None: no row kept)."""
        found = self._runs.get(run)
        return found.first if found else None

    def add(self, run: str, rows: Iterable[Any], start: int = 0) -> None:
        """Add a run's rows in the order the source gave them; `start` is the first step
        not stored yet (earlier steps are duplicates)."""
        if self._table is not None:
            raise ValueError("the table of this fetch was already made")
        # A generator over `rows`: islice calls iter() on what it is given each time, and
        # wandb's HistoryScan starts over from its first page when iter() is called on it.
        it = (row for row in rows)
        while page := list(islice(it, PAGE_ROWS)):
            self._page(run, page, start)

    def _page(self, run: str, page: Sequence[Any], start: int) -> None:
        if any(type(raw) is not dict for raw in page):
            for raw in page:
                if not isinstance(raw, Mapping):
                    raise ValueError(f"history row is a {type(raw).__name__}, not an object")
        # Judge each row's step and time.
        steps, step_ok = _steps([raw.get("_step") for raw in page])
        stamps, _ = _floats([raw.get("_timestamp") for raw in page])
        time_ok = np.isfinite(stamps)
        time_ok[time_ok] = (stamps[time_ok] >= self.bounds.first) & (
            stamps[time_ok] < self.bounds.last)
        good = step_ok & time_ok
        self.good += int(good.sum())
        if not good.all():
            i = int(np.flatnonzero(~good)[0])
            why = "_step is not a whole number >= 0" if not step_ok[i] else (
                f"_timestamp is not a time from {self.bounds.describe()}")
            self.bad.add(int((~good).sum()), run, page[i].get("_step"),
                         page[i].get("_timestamp"), why)
        # Each step once: the first row stands, among rows logged by the cutoff.
        state = self._runs.setdefault(run, _Run())
        fresh = good & (steps >= start)
        self.stats["duplicates"] += int((good & (steps < start)).sum())
        if state.kept and fresh.any() and int(steps[fresh].min()) <= state.last:
            fresh &= ~np.isin(steps, np.concatenate(state.kept))  # an out-of-order page
        self.stats["duplicates"] += int((good & (steps >= start) & ~fresh).sum())
        timely = fresh & (stamps <= self.cutoff)
        idx = np.flatnonzero(timely)
        _, first = np.unique(steps[idx], return_index=True)
        keep_idx = np.sort(idx[first])
        keep = np.zeros(len(page), dtype=bool)
        keep[keep_idx] = True
        self.stats["duplicates"] += int((timely & ~keep).sum())
        late = np.flatnonzero(fresh & ~timely)
        relogged = _kept_before(steps, keep_idx, late)
        self.stats["duplicates"] += int(relogged.sum())
        self.stats["after_as_of"] += int(late.size - relogged.sum())
        if not keep_idx.size:
            return
        # Keep the rows' values, one float64 array per stored key.
        kept_rows = [page[i] for i in keep_idx.tolist()]
        columns: dict[str, pa.Array] = {}
        for key in self._keys(kept_rows):
            name = self._names[key]
            assert name is not None
            values, missing = _floats([raw.get(key) for raw in kept_rows])
            if missing.all():
                continue
            array = pa.array(values, pa.float64(), mask=missing if missing.any() else None)
            if name in columns:  # two raw keys cleaned to one name: the first one stands
                array = _coalesce(columns[name], array)
            columns[name] = array
        state.kept.append(steps[keep_idx])
        state.last = max(state.last, int(steps[keep_idx].max()))
        low = int(steps[keep_idx].min())
        state.first = low if state.first is None else min(state.first, low)
        self._batches.append((run, steps[keep_idx], stamps[keep_idx], columns))
        self.rows += int(keep_idx.size)

    def _keys(self, rows: Sequence[Mapping[str, Any]]) -> Iterator[str]:
        """Yield the raw keys of `rows` that are stored, deciding each new key once."""
        for key in sorted(set().union(*rows)):
            if key not in self._names:
                name = clean_line(key) if isinstance(key, str) else None
                # W&B's own keys (_step, _runtime, ...) and the row's own are no metrics.
                ok = bool(name) and not name.startswith("_") and name not in ROW_KEYS
                self._names[key] = name if ok and self.keeps(key) else None
            if self._names[key] is not None:
                yield key

    def table(self) -> pa.Table:
        """Return every kept row, in the order the source gave them, as one table: run,
        step, timestamp, then one float64 column per W&B key (sorted), nulls where a row
        lacks the key. The table is made once: no row can be added after."""
        if self._table is not None:
            return self._table
        batches, self._batches = self._batches, []

        names = sorted({n for *_, cols in batches for n in cols})
        columns: dict[str, pa.Array] = {
            "run": pa.concat_arrays([pa.repeat(pa.scalar(run, pa.string()), steps.size)
                                     for run, steps, *_ in batches])
            if batches else pa.array([], pa.string()),
            "step": pa.array(np.concatenate([b[1] for b in batches]) if batches
                             else np.zeros(0, np.int64), pa.int64()),
            "timestamp": pa.array(np.concatenate([b[2] for b in batches]) if batches
                                  else np.zeros(0, np.float64), pa.float64()),
        }
        for name in names:  # one column at a time: the batches' arrays go as it is made
            parts = [cols.pop(name) if name in cols else pa.nulls(steps.size, pa.float64())
                     for _, steps, _, cols in batches]
            columns[name] = pa.concat_arrays(parts)
        self._table = pa.table(columns)
        return self._table


def _steps(raw: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    """Return the steps as int64 (0 where bad) and which are whole numbers in [0, 2^62)."""
    if set(map(type, raw)) <= {int}:
        try:
            steps = np.array(raw, dtype=np.int64)
            ok = (steps >= 0) & (steps < _STEP_MAX)
            return np.where(ok, steps, 0), ok
        except OverflowError:
            pass
    out = np.zeros(len(raw), dtype=np.int64)
    ok = np.zeros(len(raw), dtype=bool)
    for i, value in enumerate(raw):
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue
        if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
            continue
        if 0 <= value < _STEP_MAX:
            out[i], ok[i] = int(value), True
    return out, ok


def _floats(raw: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    """Return history values as float64, and where a value is missing: absent, or not a
    number (a bool, a string, media; NaN there). A logged NaN is data, not missing."""
    if set(map(type, raw)) <= _NUMBERS | {type(None)}:
        try:
            array = pa.array(raw, pa.float64())
            missing = np.asarray(array.is_null().to_numpy(zero_copy_only=False), dtype=bool)
            return np.asarray(array.to_numpy(zero_copy_only=False)), missing
        except (pa.ArrowInvalid, OverflowError):
            pass  # an int a double cannot hold exactly: float() rounds it, as before
    parsed = [parse_value(v) for v in raw]
    missing = np.array([v is None for v in parsed], dtype=bool)
    return np.array([math.nan if v is None else v for v in parsed], dtype=np.float64), missing


def _kept_before(steps: np.ndarray, kept: np.ndarray, late: np.ndarray) -> np.ndarray:
    """Return, for each row index in `late`, whether its step is that of a row index in
    `kept` (sorted) that comes before it: a step logged again after the cutoff."""
    if not kept.size or not late.size:
        return np.zeros(late.size, dtype=bool)
    kept_steps = steps[kept]
    order = np.argsort(kept_steps, kind="stable")
    pos = np.minimum(np.searchsorted(kept_steps[order], steps[late]), kept.size - 1)
    return (kept_steps[order][pos] == steps[late]) & (kept[order][pos] < late)


def _coalesce(first: pa.Array, second: pa.Array) -> pa.Array:
    """Return `first`, with `second`'s values where `first` is null."""
    a = first.to_numpy(zero_copy_only=False)
    b = second.to_numpy(zero_copy_only=False)
    a_null = np.asarray(first.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    b_null = np.asarray(second.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    values = np.where(a_null, b, a)
    mask = a_null & b_null
    return pa.array(values, pa.float64(), mask=mask if mask.any() else None)
