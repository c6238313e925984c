"""Health checks on hand-made days: windows, evidence, no-data, config overrides."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

import numpy as np
import pytest

from chronicle.analysis.health import check_all, check_day
from chronicle.analysis.series import Series, day_bounds
from chronicle.config.watchers import DEFAULT_CHECKS
from chronicle.errors import ConfigError
from chronicle.models import FailureRecord
from tests.support.config import make_config

DAY = date(2026, 8, 21)
START, END = day_bounds(DAY)
NOW = END + 3 * 3600


def _series(**values: Any) -> Series:
    ts = START - 600 + np.arange(0, 86400 + 600, 120.0)  # every 2 minutes, from 23:50
    cols = {k: np.asarray(v(ts) if callable(v) else v, dtype=float) for k, v in values.items()}
    return Series(step=np.arange(ts.size) * 10, timestamp=ts,
                  run=np.array(["r"] * ts.size, dtype=object), values=cols,
                  bad={k: np.zeros(ts.size, dtype=bool) for k in cols})


def _check(cid: str) -> Any:
    return next(c for c in DEFAULT_CHECKS if c.id == cid)


def test_twelve_default_checks_each_with_a_reason() -> None:
    ids = [c.id for c in DEFAULT_CHECKS]
    assert len(ids) == 12 == len(set(ids))
    assert all(len(c.reason) > 20 for c in DEFAULT_CHECKS)
    assert make_config().watch.health == DEFAULT_CHECKS


def test_one_slow_hour_fails_the_windowed_mfu_check_the_day_median_would_miss() -> None:
    slow = (START + 5 * 3600, START + 6 * 3600)
    s = _series(mfu=lambda t: np.where((t >= slow[0]) & (t < slow[1]), 10.0, 21.0))
    config = make_config()
    r = check_day(_check("mfu"), DAY, s, [], config, NOW)
    assert r["status"] == "warn" and r["value"] == pytest.approx(10.0)
    assert r["when"] == "2026-08-21T05:00:00Z"
    fine = _series(mfu=21.0 * np.ones(1))  # broadcast below
    fine.values["mfu"] = np.full(fine.step.size, 21.0)
    assert check_day(_check("mfu"), DAY, fine, [], config, NOW)["status"] == "pass"


def test_grad_norm_evidence_names_the_row() -> None:
    s = _series(grad_norm=lambda t: np.where(t == START + 7200, 2.5, 0.3))
    r = check_day(_check("grad_norm"), DAY, s, [], make_config(), NOW)
    assert (r["status"], r["value"], r["threshold"]) == ("warn", 2.5, 2.0)
    assert r["when"] == "2026-08-21T02:00:00Z"


def test_missing_metric_and_empty_day_are_no_data_never_pass() -> None:
    config = make_config()
    s = _series(loss=lambda t: 2.0 + 0 * t)
    got = check_all(DAY, s, [], config, NOW)
    status = {c["id"]: c["status"] for c in got["checks"]}
    assert status["router_entropy"] == status["mfu"] == status["prediction_band"] == "no-data"
    assert status["skipped_steps"] == "pass" and status["telemetry_gone"] == "pass"
    later = check_all(date(2026, 8, 25), s, [], config, NOW + 4 * 86400)
    by_id = {c["id"]: c for c in later["checks"]}
    assert by_id["loss_spike"]["status"] == "no-data"  # no rows that day: cannot tell
    assert by_id["heartbeat"]["status"] == "fail"  # but the silence itself is a failure


def test_telemetry_gap_and_failure_records() -> None:
    s = _series(loss=lambda t: 2.0 + 0 * t)
    keep = (s.timestamp < START + 3600) | (s.timestamp > START + 3600 + 25 * 60)
    s = Series(step=s.step[keep], timestamp=s.timestamp[keep], run=s.run[keep],
               values={"loss": s.values["loss"][keep]})
    spike = FailureRecord("spike-9", "loss_spike", datetime(2026, 8, 21, 9, tzinfo=UTC), None,
                          "spike", None, (), "metrics")
    got = {c["id"]: c for c in check_all(DAY, s, [spike], make_config(), NOW)["checks"]}
    assert got["telemetry_gone"]["status"] == "warn"
    assert got["telemetry_gone"]["value"] == pytest.approx(28.0)  # rows 00:58 -> 01:26
    assert got["heartbeat"]["status"] == "pass"
    assert got["loss_spike"]["status"] == "fail" and got["loss_spike"]["when"].startswith(
        "2026-08-21T09:00")


def test_config_overrides_disables_and_extends_checks() -> None:
    config = make_config(health=[
        {"id": "grad_norm", "rule": "max > 3.0"},
        {"id": "mfu", "enabled": False},
        {"id": "memory", "metric": "memory_peak_gib", "rule": "max > 180", "severity": "fail",
         "reason": "near the accelerator's memory"},
    ])
    checks = {c.id: c for c in config.watch.health}
    assert "mfu" not in checks and checks["grad_norm"].rule.threshold == 3.0
    assert checks["grad_norm"].severity == "warn" and checks["memory"].severity == "fail"
    assert len(checks) == 12


def test_every_bad_check_is_reported_at_once() -> None:
    with pytest.raises(ConfigError) as err:
        make_config(health=[{"id": "x", "metric": "mfu", "rule": "median < 3",
                             "severity": "oops", "windw": 5}])
    text = str(err.value)
    for part in ("health[0].rule", "health[0].severity", "did you mean 'window'"):
        assert part in text


def test_window_percentiles_equal_numpy_per_window() -> None:
    from chronicle.analysis.health import _bucket_percentiles

    rng = np.random.default_rng(3)
    bucket = np.sort(rng.integers(0, 24, 700))
    v = rng.normal(20, 3, bucket.size)
    for q in (10.0, 50.0, 90.0):
        want = [np.percentile(v[bucket == b], q) for b in np.unique(bucket)]
        np.testing.assert_allclose(_bucket_percentiles(bucket, v, q), want, rtol=1e-12)
