"""Metric rows <-> Arrow tables and deterministic Parquet bytes (store stage).

The same rows always give the same bytes, so a snapshot's manifest sha256 can be computed
before the file is written (provenance names it while the day is being sealed). Rows come
as an Arrow table (a fetch, sources/history.py) or as MetricRow dicts (tests, small
callers); both reach Parquet in one canonical shape (`metrics_table`), so the same rows
give the same bytes whichever way they came.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeAlias

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from chronicle.models import ROW_KEYS, MetricRow

Rows: TypeAlias = "pa.Table | Sequence[MetricRow]"


def rows_to_table(rows: Sequence[MetricRow]) -> pa.Table:
    """Return metric rows as a table: run, step, timestamp, then one float column per key."""
    keys = sorted({k for r in rows for k in r} - set(ROW_KEYS))
    columns: dict[str, pa.Array] = {
        "run": pa.array([r["run"] for r in rows], pa.string()),
        "step": pa.array([int(r["step"]) for r in rows], pa.int64()),
        "timestamp": pa.array([float(r["timestamp"]) for r in rows], pa.float64()),
    }
    for key in keys:
        columns[key] = pa.array([_num(r.get(key)) for r in rows], pa.float64())
    return pa.table(columns)


def metrics_table(rows: Rows) -> pa.Table:
    """Return rows in the store's one shape: run (string), step (int64), timestamp (float64),
    then one float64 column per key, sorted by name, each in one chunk; a key no row has
    a value for is no column (as a list of dicts without that key gives none)."""
    if not isinstance(rows, pa.Table):
        return rows_to_table(rows)
    columns: dict[str, pa.Array] = {
        "run": _one_chunk(rows.column("run"), pa.string()),
        "step": _one_chunk(rows.column("step"), pa.int64()),
        "timestamp": _one_chunk(rows.column("timestamp"), pa.float64()),
    }
    for name in sorted(set(rows.column_names) - set(ROW_KEYS)):
        column = rows.column(name)
        if column.null_count < len(column):
            columns[name] = _one_chunk(column, pa.float64())
    return pa.table(columns)


def _one_chunk(column: pa.ChunkedArray, kind: pa.DataType) -> pa.Array:
    if column.type != kind:
        column = column.cast(kind)
    # Parquet pages are cut along the chunks it is given: one chunk, as a list of dicts
    # makes, gives the same bytes for the same rows.
    if column.num_chunks == 1:
        return column.chunk(0)
    return pa.concat_arrays(column.chunks) if column.num_chunks else pa.array([], kind)


def parquet_bytes(rows: Rows) -> bytes:
    """Serialise metric rows to Parquet bytes (deterministic for the same rows)."""
    table = metrics_table(rows)
    sink = pa.BufferOutputStream()
    # No statistics timestamps or writer-dependent metadata: the same rows give the same bytes.
    pq.write_table(table, sink, compression="zstd", write_statistics=True)
    return bytes(sink.getvalue().to_pybytes())


def unstored_rows(stored: pa.Table, fetched: Rows, cutoff: float) -> pa.Table:
    """Return the fetched rows whose (run, step) is not stored and was not fetched earlier
    in `fetched`, logged by `cutoff` (epoch seconds), in the order they came.

    Compared run by run as arrays of steps: never a Python tuple per row.
    """
    table = metrics_table(fetched)
    if table.num_rows == 0:
        return table
    steps = table.column("step").to_numpy()
    keep = table.column("timestamp").to_numpy() <= cutoff
    for run in pc.unique(table.column("run")).to_pylist():
        mine = np.asarray(pc.equal(table.column("run"), run).to_numpy(zero_copy_only=False),
                          dtype=bool)
        where = np.flatnonzero(mine & keep)
        if not where.size:
            continue
        if stored.num_rows:
            done = stored.column("step").filter(pc.equal(stored.column("run"), run))
            seen = np.isin(steps[where], done.to_numpy())
            keep[where[seen]] = False
            where = where[~seen]
        # A step fetched twice: the first row stands.
        _, first = np.unique(steps[where], return_index=True)
        again = np.ones(where.size, dtype=bool)
        again[first] = False
        keep[where[again]] = False
    if keep.all():
        return table
    return metrics_table(table.filter(pa.array(keep)))


def _num(value: Any) -> float | None:
    if value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None
