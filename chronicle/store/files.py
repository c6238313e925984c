"""Reading one store file, and the error that names it when it is damaged (store stage).

A truncated Parquet file or a JSON file that no longer parses is met by `build` or
`snapshot` long after it was written: the message names the file and the fix (restore
it from git), never a traceback from deep inside a reader. So is a file whose bytes the
chain vouches for but whose content is not what chronicle writes (someone who can write
the repository can rewrite the chain too): JSON is parsed with a bound on its size and
depth (clean.load_json), and a metrics table's columns must have the store's types.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pyarrow as pa
import pyarrow.parquet as pq

from chronicle.clean import load_json
from chronicle.errors import StoreError
from chronicle.models import ROW_KEYS

T = TypeVar("T")
# Far above what a run writes (a busy repository's threads of one night are a few MB),
# far below what would exhaust a runner's memory.
MAX_JSON_BYTES = 256 * 1024 * 1024
# The store's one metrics shape (store/tables.py): every other column is a float64 metric.
_ROW_TYPES = {"run": pa.string(), "step": pa.int64(), "timestamp": pa.float64()}


def damaged(path: Path, what: str, err: object) -> StoreError:
    """Return the error for a store file that cannot be read: which, why, and the fix."""
    detail = " ".join(str(err).split())[:200]
    return StoreError(
        f"{path}: {what} is damaged ({detail}); run `chronicle verify` to see what else is, "
        f"and restore it from git (`git checkout -- {path}`)")


def read_bounded(path: Path, max_bytes: int) -> bytes:
    """Return the bytes of `path`; ValueError, without reading it, when it has more than
    `max_bytes` (OSError when it cannot be read)."""
    size = path.stat().st_size
    if size > max_bytes:
        raise ValueError(f"{size:,} bytes, more than the {max_bytes:,} it may have")
    return path.read_bytes()


def read_json(path: Path, what: str, max_bytes: int = MAX_JSON_BYTES) -> Any:
    """Return the parsed JSON file `path`; StoreError naming it if it is not JSON (or is
    larger or deeper than JSON the store holds)."""
    try:
        return load_json(read_bounded(path, max_bytes), max_bytes)
    except (OSError, ValueError) as err:
        raise damaged(path, what, err) from err


def parse_json(blob: bytes, path: Path, what: str, max_bytes: int = MAX_JSON_BYTES) -> Any:
    """Return the parsed JSON `blob` read from `path`; StoreError naming it if it is not
    JSON (or is larger or deeper than JSON the store holds)."""
    try:
        return load_json(blob, max_bytes)
    except ValueError as err:
        raise damaged(path, what, err) from err


def parquet_from_bytes(blob: bytes, path: Path, columns: Sequence[str] | None = None,
                       schema_only: bool = False) -> pa.Table:
    """Return the metrics table in `blob` (read from `path`): some `columns`, or no rows
    (`schema_only`); StoreError naming the file if it cannot be read."""
    try:
        source = pa.BufferReader(blob)
        if schema_only:
            table = pq.read_schema(source).empty_table()
        else:
            table = pq.read_table(source, columns=list(columns) if columns is not None else None)
    except (OSError, pa.ArrowException) as err:
        raise damaged(path, "metrics file", err) from err
    problem = metrics_schema_problem(table.schema, columns is None)
    if problem:
        raise damaged(path, "metrics file", problem)
    return table


def metrics_schema_problem(schema: pa.Schema, whole: bool = True) -> str | None:
    """Return how `schema` differs from the store's metrics shape (None: it does not): run
    string, step int64, timestamp float64 (each present, when `whole`), every other
    column float64 (a metric: NaN and null are data, text is not)."""
    names = schema.names
    if whole and (missing := [k for k in ROW_KEYS if k not in names]):
        return f"no {', '.join(missing)} column"
    if len(set(names)) != len(names):
        return "a column named twice"
    for field in schema:
        want = _ROW_TYPES.get(field.name, pa.float64())
        if field.type != want and not (field.name not in _ROW_TYPES and pa.types.is_null(
                field.type)):
            return f"column {field.name[:80]!r} is {field.type}, not {want}"
    return None


def parquet_time_range(blob: bytes, path: Path) -> tuple[float, float] | None:
    """Return (min, max) timestamp of the metrics file in `blob`, from its footer
    statistics (None: no rows, or no statistics)."""
    try:
        meta = pq.read_metadata(pa.BufferReader(blob))
        schema = meta.schema.to_arrow_schema()
    except (OSError, pa.ArrowException) as err:
        raise damaged(path, "metrics file", err) from err
    problem = metrics_schema_problem(schema)
    if problem:
        raise damaged(path, "metrics file", problem)
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
