from __future__ import annotations

import math
from datetime import UTC, datetime

import numpy as np

from chronicle.analysis.series import build_series
from chronicle.models import RunRecord
from chronicle.store import rows_to_table
from tests.support.config import make_config

T = 1787192041.0
C0 = datetime(2026, 8, 20, tzinfo=UTC)


def _row(run: str, step: int, loss: float | None = None, **extra: float) -> dict:
    row = {"run": run, "step": step, "timestamp": T + step * 19.0, **extra}
    if loss is not None:
        row["train/loss"] = loss
    return row


def test_child_replaces_parent_from_its_first_step() -> None:
    rows = [_row("a", s, 5.0) for s in range(0, 200, 10)]
    rows += [_row("b", s, 4.0) for s in range(150, 300, 10)]  # rewound: 150-190 re-done
    runs = [
        RunRecord("a", "a", "crashed", C0, None),
        RunRecord("b", "b", "running", C0.replace(hour=5), None),
    ]
    series = build_series(rows_to_table(rows), runs, make_config())
    assert list(series.step) == list(range(0, 300, 10))
    assert set(series.run[series.step >= 150]) == {"b"}
    assert len(series.forks) == 1 and series.forks[0].step == 150
    assert series.forks[0].parent == "a"


def test_logged_nan_is_bad_missing_is_not() -> None:
    rows = [
        _row("a", 0, 5.0),
        _row("a", 10, math.nan),
        _row("a", 20, None, **{"eval_dropless/paloma/macro_loss": 3.0}),
    ]
    series = build_series(rows_to_table(rows), [], make_config())
    assert np.isnan(series.values["loss"][1]) and np.isnan(series.values["loss"][2])
    assert list(series.bad["loss"]) == [False, True, False]
    assert series.values["eval_loss"][2] == 3.0


def test_mfu_fraction_is_converted_to_percent() -> None:
    rows = [_row("a", 0, 5.0, **{"throughput/mfu": 0.21})]
    series = build_series(rows_to_table(rows), [], make_config(wandb__mfu_unit="fraction"))
    assert math.isclose(series.values["mfu"][0], 21.0)


def test_window_by_day_is_sorted_by_step() -> None:
    rows = [_row("a", s, 5.0) for s in range(0, 10000, 10)]
    series = build_series(rows_to_table(list(reversed(rows))), [], make_config())
    day = datetime.fromtimestamp(T, tz=UTC).date()
    part = series.day(day)
    assert len(part) > 0 and np.all(np.diff(part.step) > 0)
    assert part.timestamp.max() < T + 86400
