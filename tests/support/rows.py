"""Metric rows as dicts, for tests that read what a fetch returned (an Arrow table)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa


def as_rows(table: pa.Table | None) -> list[dict[str, Any]]:
    """Return a table's rows as dicts, each without the keys it has no value for (as the
    store's rows are read); None (a failed source) gives no rows."""
    if table is None:
        return []
    return [{k: v for k, v in r.items() if v is not None} for r in table.to_pylist()]
