"""History rows -> one Arrow table (chronicle/sources/history.py): every kind of value a
history row can carry, judged at the edge. Through the real client: test_sources_wandb.py."""

from __future__ import annotations

import math
from datetime import UTC, date, datetime
from typing import Any

import pyarrow as pa
import pytest

from chronicle.sources.history import PAGE_ROWS, HistoryTable, RowBounds
from chronicle.store import parquet_bytes, rows_to_table
from tests.support.rows import as_rows

START = date(2026, 8, 20)
NOW = datetime(2026, 12, 1, tzinfo=UTC)
T0 = datetime(2026, 8, 20, 2, tzinfo=UTC).timestamp()


def table(rows: list[Any], start: int = 0, cutoff: float = NOW.timestamp(),
          keeps: Any = None) -> HistoryTable:
    history = HistoryTable(keeps or (lambda key: True), RowBounds.of_run(START, NOW), cutoff)
    history.add("r1", rows, start)
    return history


_ON_TIME = object()


def row(step: Any, when: Any = _ON_TIME, **values: Any) -> dict[str, Any]:
    out = {"_step": step, "_timestamp": T0 + 10.0 * step if when is _ON_TIME else when,
           "_runtime": 1.0}
    out.update({k.replace("__", "/"): v for k, v in values.items()})
    return out


def test_values_become_floats_nan_is_data_and_the_rest_is_missing() -> None:
    got = table([row(0, train__loss=1), row(1, train__loss="NaN"), row(2, train__loss=True),
                 row(3, train__loss={"_type": "histogram"}), row(4, train__loss="Infinity"),
                 row(5), row(6, train__loss=None), row(7, train__loss="2.5"),
                 row(8, train__loss=2**80)])
    loss = [r.get("train/loss") for r in as_rows(got.table())]
    assert loss[0] == 1.0 and math.isnan(loss[1])
    assert loss[2:4] == [None, None]  # a bool, media: not metric values, never 0
    assert loss[4] == math.inf and loss[5:7] == [None, None]
    assert loss[7] == 2.5 and loss[8] == float(2**80)
    assert got.table().schema.field("train/loss").type == pa.float64()


def test_the_same_rows_give_the_bytes_a_list_of_dicts_gives() -> None:
    raw = [row(s, train__loss=1.5 + s, **({"eval__loss": s} if s % 3 else {}))
           for s in range(2500)]
    got = table(raw).table()
    dicts = [{"run": "r1", "step": r["_step"], "timestamp": r["_timestamp"],
              **{k: float(v) for k, v in r.items() if not k.startswith("_")}} for r in raw]
    assert got.equals(rows_to_table(dicts))
    assert parquet_bytes(got) == parquet_bytes(dicts)
    assert got.column("step").num_chunks == 1  # pages are joined, as Parquet wants them


@pytest.mark.parametrize(("when", "why"), [
    (-1e12, "_timestamp"), (0, "_timestamp"), ("NaN", "_timestamp"), (math.inf, "_timestamp"),
    (None, "_timestamp"), ("soon", "_timestamp"),
    (datetime(2101, 1, 1, tzinfo=UTC).timestamp(), "_timestamp"),
    (datetime(2026, 7, 19, 23, tzinfo=UTC).timestamp(), "_timestamp"),  # > 31 days early
    (datetime(2026, 12, 3, tzinfo=UTC).timestamp(), "_timestamp"),  # past the clock + 1 day
])
def test_a_row_at_an_impossible_time_is_a_bad_row(when: Any, why: str) -> None:
    got = table([row(0), row(1, when), row(2)])
    assert [r["step"] for r in as_rows(got.table())] == [0, 2]
    assert got.bad.count == 1
    assert got.bad.first is not None and got.bad.first["run"] == "r1"
    assert got.bad.first["step"] == 1 and why in got.bad.first["why"]


def test_the_edges_of_the_time_bounds() -> None:
    bounds = RowBounds.of_run(START, NOW)
    assert bounds.first == datetime(2026, 7, 20, tzinfo=UTC).timestamp()
    assert bounds.last == datetime(2026, 12, 2, tzinfo=UTC).timestamp()
    early = RowBounds.of_run(date(1970, 1, 10), NOW)
    assert early.first == 0.0  # never before 1970
    got = table([row(0, bounds.first), row(1, bounds.last - 1), row(2, bounds.last)],
                cutoff=bounds.last)
    assert [r["step"] for r in as_rows(got.table())] == [0, 1] and got.bad.count == 1


@pytest.mark.parametrize("step", [-5, 1.5, True, "7", None, math.nan, 2**70])
def test_a_row_without_a_whole_step_is_a_bad_row(step: Any) -> None:
    got = table([row(0), {**row(1), "_step": step}, row(2)])
    assert [r["step"] for r in as_rows(got.table())] == [0, 2]
    assert got.bad.count == 1 and got.bad.first is not None
    assert "_step" in got.bad.first["why"]


def test_the_first_bad_row_is_named_once_and_all_are_counted() -> None:
    rows = [row(s) for s in range(3000)]
    for s in (1500, 2500, 2600):
        rows[s]["_timestamp"] = 0
    got = table(rows)
    assert got.bad.count == 3 and got.rows == 2997
    assert got.bad.first == {"run": "r1", "step": 1500, "timestamp": 0,
                             "why": "_timestamp is not a time from 2026-07-20T00:00:00Z "
                                    "to 2026-12-02T00:00:00Z"}


def test_a_step_logged_twice_keeps_its_first_row_even_across_pages() -> None:
    rows = [row(s, x=1.0) for s in range(PAGE_ROWS + 10)]
    rows.insert(5, row(3, x=99.0))  # re-logged in the same page
    rows.append(row(7, x=98.0))  # re-logged pages later (out of order)
    rows.append(row(2, T0 + 1e6, x=97.0))  # ...and after the cutoff
    got = table(rows, cutoff=T0 + 1e5)
    kept = as_rows(got.table())
    assert [r["step"] for r in kept] == list(range(PAGE_ROWS + 10))
    assert all(r["x"] == 1.0 for r in kept)
    assert got.stats == {"duplicates": 3, "after_as_of": 0}


def test_out_of_order_rows_keep_their_order_and_late_rows_wait() -> None:
    rows = [row(5), row(3), row(9, T0 + 2e5), row(4), row(1, T0 - 1)]
    got = table(rows, start=2, cutoff=T0 + 1e5)
    assert [r["step"] for r in as_rows(got.table())] == [5, 3, 4]
    assert got.stats == {"duplicates": 1, "after_as_of": 1}  # step 1 < start; step 9 late


def test_keys_are_decided_once_cleaned_and_never_private() -> None:
    asked: list[str] = []

    def keeps(key: str) -> bool:
        asked.append(key)
        return not key.startswith("memory/")

    rows = [row(s, **{"train/loss": 1.0, "memory/x": 2.0, "throughput/\x1b[31mred\x07": 3.0,
                      "run": 4.0}) for s in range(2500)]
    got = table(rows, keeps=keeps).table()
    assert got.column_names == ["run", "step", "timestamp", "throughput/[31mred", "train/loss"]
    assert sorted(asked) == sorted(["memory/x", "throughput/\x1b[31mred\x07", "train/loss"])


def test_a_key_with_no_value_in_any_kept_row_is_no_column() -> None:
    got = table([row(0, a=1.0), row(1, b="text"), row(2, T0 + 9e9, c=3.0)],
                cutoff=T0 + 1e5).table()
    assert got.column_names == ["run", "step", "timestamp", "a"]


def test_a_row_that_is_not_an_object_fails_the_fetch() -> None:
    with pytest.raises(ValueError, match="history row is a list"):
        table([row(0), [1, 2]])


class _Restarting:
    """Rows the way wandb's HistoryScan hands them over: iter() starts it over."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows, self.at, self.started = rows, 0, 0

    def __iter__(self) -> _Restarting:
        self.started += 1
        assert self.started == 1, "the rows were read from the start again"
        self.at = 0
        return self

    def __next__(self) -> dict[str, Any]:
        if self.at >= len(self.rows):
            raise StopIteration
        self.at += 1
        return self.rows[self.at - 1]


def test_rows_are_read_once_from_an_iterator_that_restarts() -> None:
    got = table(_Restarting([row(s) for s in range(PAGE_ROWS + 5)]))
    assert got.rows == PAGE_ROWS + 5 and got.stats["duplicates"] == 0
