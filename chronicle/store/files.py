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


def read_parquet(path: Path, columns: Sequence[str] | None = None,
                 schema_only: bool = False) -> pa.Table:
    """Return a stored metrics.parquet (some `columns`, or no rows: `schema_only`);
    StoreError naming it if it cannot be read."""
    try:
        if schema_only:
            return pq.read_schema(path).empty_table()
        return pq.read_table(path, columns=list(columns) if columns is not None else None)
    except (OSError, pa.ArrowException) as err:
        raise damaged(path, "metrics file", err) from err


def parse_records(path: Path, what: str, parse: Callable[[Any], T]) -> list[T]:
    """Return the records of a stored JSON list file, each through `parse`."""
    raw = read_json(path, what)
    try:
        if not isinstance(raw, list):
            raise TypeError(f"expected a JSON list, got {type(raw).__name__}")
        return [parse(item) for item in raw]
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise damaged(path, what, f"a malformed record: {err!r}") from err
