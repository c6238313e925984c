from __future__ import annotations

import json
import math
from datetime import UTC, date, datetime, timedelta

import numpy as np
import pytest

from chronicle.analysis.days import downtime_in, summarize_day
from chronicle.analysis.series import build_series
from chronicle.models import Comment, FailureRecord, Thread
from chronicle.render.i18n import ENGLISH
from chronicle.render.prose import write_summary
from chronicle.store import rows_to_table
from tests.support.config import make_config

DAY = date(2026, 8, 21)
D0 = datetime(2026, 8, 21, tzinfo=UTC).timestamp()
TOK = 46_137_344.0


def _rows(t_start: float, t_end: float, step0: int, dt: float = 190.0) -> list[dict]:
    out, step, t = [], step0, t_start
    while t < t_end:
        out.append(
            {
                "run": "r1",
                "step": step,
                "timestamp": t,
                "train/loss": 3.0 - step * 1e-5,
                "throughput/total_tokens": (step + 1) * TOK,
                "throughput/tokens_per_second": 2.4e6,
                "throughput/mfu": 21.0,
                "moe/drop_fraction": 0.01,
                "grad/norm/total": 0.3,
            }
        )
        step, t = step + 10, t + dt
    return out


def _summary(rows: list[dict], day: date = DAY, **kw: object) -> dict:
    config = make_config()
    series = build_series(rows_to_table(rows), [], config)
    sealed = datetime(2026, 8, 22, 3, 17, tzinfo=UTC)
    return summarize_day(
        day,
        series,
        kw.get("failures", []),
        kw.get("threads", {}),
        config,
        "2026-08-22T031700Z",
        sealed,
        previous=kw.get("previous"),
    )


def test_full_day_without_gaps() -> None:
    rows = _rows(D0 - 86400, D0 + 86400 + 3600, 0)
    d = _summary(rows)
    json.dumps(d, allow_nan=False)
    assert d["day"] == 2 and d["title"] == "Day 2 · 2026-08-21"
    # tokens of the day = last cumulative of the day - last cumulative before it
    in_day = [r for r in rows if D0 <= r["timestamp"] < D0 + 86400]
    before = [r for r in rows if r["timestamp"] < D0]
    expected = in_day[-1]["throughput/total_tokens"] - before[-1]["throughput/total_tokens"]
    assert d["tokens"]["day"] == pytest.approx(expected)
    assert d["tokens"]["budget_fraction"] == pytest.approx(
        in_day[-1]["throughput/total_tokens"] / 18e12
    )
    assert d["downtime_seconds"] == 0.0
    assert d["throughput"]["sustained_tokens_per_second"] == pytest.approx(expected / 86400)
    assert d["throughput"]["goodput"] == pytest.approx(expected / 86400 / 2.4e6)
    assert d["accelerator_hours"] == pytest.approx(704 * 24)
    assert d["cost"]["usd"]["spot"] == pytest.approx(704 * 24 * 4.22)
    assert d["phase"] == "pretraining"


def test_gap_counts_as_downtime_clipped_to_the_day() -> None:
    rows = _rows(D0 - 3600, D0 + 7200, 0) + _rows(D0 + 7200 + 5 * 3600, D0 + 86400 + 600, 10_000)
    d = _summary(rows)
    assert d["downtime_seconds"] == pytest.approx(5 * 3600 + 190, abs=200)


def test_missing_metrics_are_none_not_zero() -> None:
    d = _summary([])
    assert d["tokens"]["day"] is None and d["loss"]["train_last"] is None
    assert d["throughput"]["mfu_p50"] is None and d["moe"]["drop_fraction_max"] is None
    assert "No metrics were logged" in write_summary(d, ENGLISH)


def test_change_vs_previous_day_and_failures_and_threads() -> None:
    rows = _rows(D0 - 86400, D0 + 86400, 0)
    prev = _summary(rows, day=date(2026, 8, 20))
    fail = FailureRecord(
        "gap-r1-5",
        "gap",
        datetime(2026, 8, 21, 5, tzinfo=UTC),
        datetime(2026, 8, 21, 6, tzinfo=UTC),
        "stall",
    )
    old = Comment(
        5, "bot", "v1", datetime(2026, 8, 20, 9, tzinfo=UTC), datetime(2026, 8, 20, 9, tzinfo=UTC)
    )
    new_state = Comment(5, "bot", "v2", old.created_at, datetime(2026, 8, 21, 9, tzinfo=UTC))
    fresh = Comment(
        6,
        "alice",
        "hello",
        datetime(2026, 8, 21, 10, tzinfo=UTC),
        datetime(2026, 8, 21, 10, tzinfo=UTC),
    )

    def mk(cs: list[Comment]) -> Thread:
        return Thread(
            1,
            "status",
            "",
            "open",
            (),
            "bob",
            datetime(2026, 8, 19, tzinfo=UTC),
            datetime(2026, 8, 21, 10, tzinfo=UTC),
            None,
            "u",
            tuple(cs),
        )

    d = _summary(
        rows, previous=prev, failures=[fail], threads={1: [mk([old]), mk([new_state, fresh])]}
    )
    assert d["loss"]["train_change"] == pytest.approx(
        d["loss"]["train_last"] - prev["loss"]["train_last"]
    )
    assert d["restarts"] == 1 and d["failures"][0]["id"] == "gap-r1-5"
    upd = d["threads_updated"][0]
    assert [c["id"] for c in upd["new_comments"]] == [6]
    assert upd["edited_comments"][0]["previous_body"] == "v1"
    assert d["previous"]["date"] == "2026-08-20"
    assert d["cumulative"]["accelerator_hours"] == pytest.approx(
        prev["accelerator_hours"] + 704 * 24
    )


def test_downtime_in_counts_open_gap_until_now() -> None:
    t = np.array([0.0, 100.0, 200.0])
    assert downtime_in(t, 0.0, 10_000.0, 600.0, now=20_000.0) == pytest.approx(9800.0)
    assert downtime_in(t, 0.0, 10_000.0, 600.0, now=500.0) == 0.0
    assert math.isclose(downtime_in(np.array([]), 0.0, 50.0, 1.0, now=100.0), 50.0)
    assert timedelta(seconds=1)
