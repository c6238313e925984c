"""Metric rows <-> Arrow tables and deterministic Parquet bytes (store stage).

The same rows always give the same bytes, so a snapshot's manifest sha256 can be computed
before the file is written (provenance names it while the day is being sealed).
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from chronicle.models import ROW_KEYS, MetricRow


def rows_to_table(rows: list[MetricRow]) -> pa.Table:
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


def parquet_bytes(rows: list[MetricRow]) -> bytes:
    """Serialise metric rows to Parquet bytes (deterministic for the same rows)."""
    table = rows_to_table(rows)
    sink = pa.BufferOutputStream()
    # No statistics timestamps or writer-dependent metadata: the same rows give the same bytes.
    pq.write_table(table, sink, compression="zstd", write_statistics=True)
    return bytes(sink.getvalue().to_pybytes())


def _num(value: Any) -> float | None:
    if value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None
