"""Reading one store file, and the error that names it when it is damaged (store stage).

A truncated Parquet file or a JSON file that no longer parses is met by `build` or
`snapshot` long after it was written: the message names the file and the fix (restore
it from git), never a traceback from deep inside a reader.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pyarrow as pa
import pyarrow.parquet as pq

from chronicle.errors import StoreError

T = TypeVar("T")


def damaged(path: Path, what: str, err: object) -> StoreError:
    """Return the error for a store file that cannot be read: which, why, and the fix."""
    detail = " ".join(str(err).split())[:200]
    return StoreError(
        f"{path}: {what} is damaged ({detail}); run `chronicle verify` to see what else is, "
        f"and restore it from git (`git checkout -- {path}`)")


def read_json(path: Path, what: str) -> Any:
    """Return the parsed JSON file `path`; StoreError naming it if it is not JSON."""
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError) as err:
        raise damaged(path, what, err) from err


def parse_json(blob: bytes, path: Path, what: str) -> Any:
    """Return the parsed JSON `blob` read from `path`; StoreError naming it if not JSON."""
    try:
        return json.loads(blob)
    except ValueError as err:
        raise damaged(path, what, err) from err


def parquet_from_bytes(blob: bytes, path: Path, columns: Sequence[str] | None = None,
                       schema_only: bool = False) -> pa.Table:
    """Return the metrics table in `blob` (read from `path`): some `columns`, or no rows
    (`schema_only`); StoreError naming the file if it cannot be read."""
    try:
        source = pa.BufferReader(blob)
        if schema_only:
            return pq.read_schema(source).empty_table()
        return pq.read_table(source, columns=list(columns) if columns is not None else None)
    except (OSError, pa.ArrowException) as err:
        raise damaged(path, "metrics file", err) from err


def parquet_time_range(blob: bytes, path: Path) -> tuple[float, float] | None:
    """Return (min, max) timestamp of the metrics file in `blob`, from its footer
    statistics (None: no rows, or no statistics)."""
    try:
        meta = pq.read_metadata(pa.BufferReader(blob))
    except (OSError, pa.ArrowException) as err:
        raise damaged(path, "metrics file", err) from err
    names = [meta.schema.column(i).name for i in range(meta.num_columns)]
    if "timestamp" not in names or meta.num_rows == 0:
        return None
    col = names.index("timestamp")
    lo, hi = float("inf"), float("-inf")
    for g in range(meta.num_row_groups):
        stats = meta.row_group(g).column(col).statistics
        if stats is None or not stats.has_min_max:
            return None
        lo, hi = min(lo, float(stats.min)), max(hi, float(stats.max))
    return lo, hi


def parse_json_records(blob: bytes, path: Path, what: str, parse: Callable[[Any], T]) -> list[T]:
    """Return the records of a stored JSON list file (`blob`, read from `path`), each
    through `parse`."""
    raw = parse_json(blob, path, what)
    try:
        if not isinstance(raw, list):
            raise TypeError(f"expected a JSON list, got {type(raw).__name__}")
        return [parse(item) for item in raw]
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise damaged(path, what, f"a malformed record: {err!r}") from err
