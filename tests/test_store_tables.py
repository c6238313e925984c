"""Metric rows as the store keeps them (chronicle/store/tables.py): one canonical table, the
same Parquet bytes whichever way the rows came, and the rows a snapshot has not stored."""

from __future__ import annotations

import math
from typing import Any

import pyarrow as pa

from chronicle.store import metrics_table, parquet_bytes, rows_to_table, unstored_rows
from tests.support.rows import as_rows

T0 = 1787192041.0


def rows(run: str, steps: range, **extra: Any) -> list[dict[str, Any]]:
    return [{"run": run, "step": s, "timestamp": T0 + s, "train/loss": 2.0 + s / 100, **extra}
            for s in steps]


def test_a_chunked_table_gives_the_bytes_of_the_same_rows_as_dicts() -> None:
    dicts = [*rows("a", range(0, 3000)),
             {"run": "b", "step": 1, "timestamp": T0, "eval/loss": math.nan}]
    whole = rows_to_table(dicts)
    chunked = pa.Table.from_batches(whole.to_batches(max_chunksize=700))
    reordered = chunked.select(list(reversed(chunked.column_names)))  # columns in any order
    assert chunked.column("step").num_chunks > 1
    assert parquet_bytes(reordered) == parquet_bytes(dicts) == parquet_bytes(whole)
    assert metrics_table(reordered).column_names == whole.column_names


def test_a_column_no_row_has_a_value_for_is_dropped() -> None:
    table = rows_to_table(rows("a", range(3))).append_column(
        "empty", pa.nulls(3, pa.float64()))
    assert "empty" not in metrics_table(table).column_names
    assert parquet_bytes(table) == parquet_bytes(rows("a", range(3)))


def test_stored_steps_and_later_rows_are_not_new_and_the_first_row_of_a_step_stands() -> None:
    stored = rows_to_table(rows("a", range(0, 10)))
    fetched = (rows("a", range(8, 14)) + rows("b", range(0, 3)) + rows("a", range(12, 13))
               + [{"run": "a", "step": 20, "timestamp": T0 + 1e6, "train/loss": 9.0}])
    fetched[-2]["train/loss"] = 99.0  # step 12 logged again: not stored twice
    new = unstored_rows(stored, fetched, cutoff=T0 + 1000)
    assert [(r["run"], r["step"]) for r in as_rows(new)] == [
        ("a", 10), ("a", 11), ("a", 12), ("a", 13), ("b", 0), ("b", 1), ("b", 2)]
    assert next(r for r in as_rows(new) if r["step"] == 12)["train/loss"] == 2.12
    assert unstored_rows(stored, rows_to_table(fetched), T0 + 1000).equals(new)


def test_nothing_new_is_an_empty_table_and_a_column_only_dropped_rows_had_goes() -> None:
    stored = rows_to_table(rows("a", range(5)))
    again = rows("a", range(5), **{"eval/loss": 1.0})
    new = unstored_rows(stored, again, cutoff=T0 + 1000)
    assert new.num_rows == 0 and new.column_names == ["run", "step", "timestamp"]
    assert parquet_bytes(new) == parquet_bytes([])
