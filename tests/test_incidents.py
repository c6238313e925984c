"""Failure records from the stitched series: forks, gaps, loss spikes, NaN loss."""

from __future__ import annotations

import csv
import itertools
import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from chronicle.analysis.incidents import detect_failures, loss_spikes
from chronicle.analysis.series import Fork, Series, build_series
from chronicle.config import DEFAULT_METRICS
from chronicle.models import FailureRecord, RunRecord, iso
from chronicle.render.i18n import ENGLISH, language
from chronicle.render.record_text import evidence_text, failure_text
from tests.support.config import make_config

HERO = Path(__file__).parent / "fixtures" / "hero_head.csv"
HERO_RUN = "hero-12d8b6f0-dee637"
T0 = 1_787_192_041.0  # 2026-08-20 02:14 UTC, the hero run's step 0
CONFIG = make_config()


def series(ts: Any, loss: Any = None, *, step: Any = None, run: Any = "r1",
           forks: tuple[Fork, ...] = (), **values: Any) -> Series:
    """Return a Series from plain arrays (step defaults to 10 x row index)."""
    ts = np.asarray(ts, dtype=float)
    cols = {k: np.asarray(v, dtype=float) for k, v in values.items()}
    if loss is not None:
        cols["loss"] = np.asarray(loss, dtype=float)
    steps = np.arange(ts.size) * 10 if step is None else np.asarray(step)
    runs = np.array([run] * ts.size, dtype=object) if isinstance(run, str) else np.asarray(run)
    return Series(step=steps, timestamp=ts, run=runs, values=cols, forks=forks)


def at(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, tz=UTC)


def kinds(records: list[FailureRecord], kind: str) -> list[FailureRecord]:
    return [r for r in records if r.kind == kind]


def steady(n: int, every: float = 60.0, sd: float = 0.005, seed: int = 1) -> tuple:
    """Return (timestamps, loss): a slowly falling loss with Gaussian noise."""
    rng = np.random.default_rng(seed)
    ts = T0 + np.arange(n) * every
    return ts, 2.0 - 1e-5 * np.arange(n) + rng.normal(0.0, sd, n)


# ---------------------------------------------------------------------------
# The real run's first 2,000 rows.

def hero_series() -> Series:
    by_key = {v: k for k, v in DEFAULT_METRICS.items()}
    with HERO.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    cols = {by_key[k]: [float(r[k]) for r in rows] for k in rows[0] if k in by_key}
    return Series(step=np.array([int(r["_step"]) for r in rows]),
                  timestamp=np.array([float(r["_timestamp"]) for r in rows]),
                  run=np.array([HERO_RUN] * len(rows), dtype=object),
                  values={k: np.array(v) for k, v in cols.items()})


def test_hero_stall_between_steps_170_and_180_is_one_gap() -> None:
    s = hero_series()
    stall = s.timestamp[s.step == 180][0] - s.timestamp[s.step == 170][0]
    records = detect_failures(s, CONFIG, at(s.timestamp[-1] + 60))
    gap = {r.id: r for r in records}[f"gap-{HERO_RUN}-170"]
    assert gap.kind == "gap" and gap.source == "metrics"
    assert gap.duration_seconds is not None
    assert gap.duration_seconds == pytest.approx(stall, abs=1e-3)
    assert 4.3 < gap.duration_seconds / 3600 < 4.45
    assert gap.what == "no metrics for 4.4 h after step 170"
    assert gap.accelerator_hours_lost == pytest.approx(704 * stall / 3600)
    assert gap.start == at(s.timestamp[s.step == 170][0])


def test_hero_gap_count_matches_an_independent_count() -> None:
    with HERO.open(newline="") as fh:
        stamps = [float(r["_timestamp"]) for r in csv.DictReader(fh)]
    expected = sum(1 for a, b in itertools.pairwise(stamps) if b - a > 600)
    s = hero_series()
    records = detect_failures(s, CONFIG, at(s.timestamp[-1] + 60))
    gaps = kinds(records, "gap")
    assert expected > 20  # the slice really has many stalls (29)
    assert len(gaps) == expected
    assert len({g.id for g in gaps}) == len(gaps)
    assert all(g.end is not None for g in gaps)  # as_of is a minute after the last row
    assert not kinds(records, "nan_loss")
    assert [r.start for r in records] == sorted(r.start for r in records)


def test_hero_gaps_seen_on_an_earlier_night_keep_their_ids() -> None:
    s = hero_series()
    night = s.timestamp[0] + 86400
    early = {r.id: r for r in detect_failures(s.until(night), CONFIG, at(night))}
    late = {r.id: r for r in detect_failures(s, CONFIG, at(s.timestamp[-1] + 60))}
    closed = [i for i, r in early.items() if r.end is not None]
    assert closed and all(late[i] == early[i] for i in closed)


# ---------------------------------------------------------------------------
# Gaps and forks.

def test_open_gap_has_no_end_and_keeps_its_id_once_closed() -> None:
    ts, loss = steady(100)
    last = ts[-1]
    records = detect_failures(series(ts, loss), CONFIG, at(last + 2 * 3600))
    [gap] = kinds(records, "gap")
    assert (gap.id, gap.end, gap.start) == ("gap-r1-990", None, at(last))
    assert gap.accelerator_hours_lost == pytest.approx(704 * 2)
    assert "no metrics since step 990" in gap.what

    resumed = np.concatenate((ts, last + 3 * 3600 + np.arange(20) * 60.0))
    later = detect_failures(series(resumed, np.resize(loss, resumed.size)), CONFIG,
                            at(resumed[-1] + 60))
    [closed] = kinds(later, "gap")
    assert closed.id == gap.id
    assert closed.end == at(last + 3 * 3600)
    assert closed.what == "no metrics for 3.0 h after step 990"


def test_no_open_gap_within_the_threshold() -> None:
    ts, loss = steady(100)
    assert detect_failures(series(ts, loss), CONFIG, at(ts[-1] + 9 * 60)) == []
    cfg = make_config(failures__gap_minutes=5)
    [gap] = detect_failures(series(ts, loss), cfg, at(ts[-1] + 9 * 60))
    assert gap.end is None


def test_rows_after_as_of_are_not_seen() -> None:
    ts, loss = steady(100)
    ts[60:] += 3600  # a 1 h stall after row 59
    s = series(ts, loss)
    assert [r.id for r in detect_failures(s, CONFIG, at(ts[59] + 1800))] == ["gap-r1-590"]
    assert detect_failures(s, CONFIG, at(ts[59] + 1800))[0].end is None


def _forked() -> tuple[Series, float, float]:
    """Run A logs steps 0-440; run B resumes at step 450 two hours later."""
    a = T0 + np.arange(45) * 60.0
    b = a[-1] + 7200 + np.arange(30) * 60.0
    ts = np.concatenate((a, b))
    steps = np.concatenate((np.arange(45) * 10, 450 + np.arange(30) * 10))
    runs = np.array(["A"] * 45 + ["B"] * 30, dtype=object)
    fork = Fork(run="B", parent="A", step=450, timestamp=float(b[0]))
    return series(ts, np.full(ts.size, 2.0), step=steps, run=runs, forks=(fork,)), a[-1], b[0]


def test_a_fork_is_one_record_not_a_fork_and_a_gap() -> None:
    s, last_a, first_b = _forked()
    records = detect_failures(s, CONFIG, at(s.timestamp[-1] + 60))
    assert [r.kind for r in records] == ["fork"]
    [fork] = records
    assert fork.id == "fork-B"
    assert (fork.start, fork.end) == (at(last_a), at(first_b))
    assert fork.accelerator_hours_lost == pytest.approx(704 * 2.0)
    assert fork.what.startswith("W&B run B forked from A at step 450")
    assert "no metrics for 2.0 h" in fork.what
    assert "replaces gap-A-440" in fork.evidence
    # Each evidence line is stored as written since v1, beside the facts it states.
    assert fork.evidence == (f"W&B run A last row kept: step 440 at {iso(at(last_a))}",
                             f"W&B run B first row: step 450 at {iso(at(first_b))}",
                             "replaces gap-A-440")
    assert fork.detail["evidence"] == [
        {"role": "last_row_kept", "run": "A", "step": 440, "time": iso(at(last_a))},
        {"role": "first_row", "run": "B", "step": 450, "time": iso(at(first_b))},
        {"role": "replaces", "id": "gap-A-440"}]
    zh = language("zh")
    said = evidence_text(fork, zh)
    assert said[0] == f"W&B run A 保留的最后一行：第 440 步，{zh.time(at(last_a), True)}"
    assert said[2] == "取代 gap-A-440"
    assert evidence_text(fork.to_json(), ENGLISH)[1] == (
        f"W&B run B first row: step 450 at {at(first_b):%Y-%m-%d %H:%M:%S} UTC")


def test_a_fork_not_yet_logged_at_as_of_is_an_open_gap() -> None:
    s, last_a, _ = _forked()
    [gap] = detect_failures(s, CONFIG, at(last_a + 3600))
    assert (gap.kind, gap.id, gap.end) == ("gap", "gap-A-440", None)


def test_fork_from_a_real_lineage_via_build_series() -> None:
    # A logged up to step 620 before it died; B resumed from the step-450 checkpoint.
    a_steps, b_steps = np.arange(0, 630, 10), np.arange(450, 800, 10)
    a_ts = T0 + a_steps * 6.0
    b_ts = a_ts[-1] + 5400 + (b_steps - 450) * 6.0
    table = pa.table({
        "run": ["A"] * a_steps.size + ["B"] * b_steps.size,
        "step": np.concatenate((a_steps, b_steps)),
        "timestamp": np.concatenate((a_ts, b_ts)),
        "train/loss": np.full(a_steps.size + b_steps.size, 2.0),
    })
    runs = [RunRecord("A", "A", "crashed", at(T0), None),
            RunRecord("B", "B", "running", at(b_ts[0]), None, parent="A", fork_step=450)]
    s = build_series(table, runs, CONFIG)
    records = detect_failures(s, CONFIG, at(b_ts[-1] + 60))
    [fork] = records
    assert fork.id == "fork-B" and fork.start == at(a_ts[a_steps == 440][0])
    # The parent's last stitched row (step 440) to the child's first row.
    assert fork.duration_seconds == pytest.approx(b_ts[0] - a_ts[44], abs=1e-3)


def test_series_without_loss_still_yields_gaps() -> None:
    ts, _ = steady(50)
    ts[25:] += 7200
    s = series(ts, grad_norm=np.ones(50))
    assert [r.kind for r in detect_failures(s, CONFIG, at(ts[-1]))] == ["gap"]


def test_naive_as_of_is_refused() -> None:
    ts, loss = steady(20)
    with pytest.raises(ValueError, match="naive"):
        detect_failures(series(ts, loss), CONFIG, datetime(2026, 8, 21))  # noqa: DTZ001


# ---------------------------------------------------------------------------
# Loss spikes.

def test_injected_spike_is_found_once_with_a_stable_id() -> None:
    ts, loss = steady(600)
    loss[300:310] += 0.5  # ten minutes well above the trailing hour
    s = series(ts, loss)
    [(i, j)] = loss_spikes(ts, loss)
    assert 300 <= i < j <= 310
    records = detect_failures(s, CONFIG, at(ts[-1] + 60))
    [spike] = kinds(records, "loss_spike")
    assert spike.id == f"spike-{i * 10}"
    assert spike.start == at(ts[300])  # the window that cleared the bar began at onset
    assert spike.accelerator_hours_lost is None
    assert f"loss spike to {loss[300:j].max():.4g}" in spike.what
    # Seen on an earlier night while still high: same id, still open.
    early = kinds(detect_failures(s.until(ts[i] + 1), CONFIG, at(ts[i] + 1)), "loss_spike")
    assert [(r.id, r.end) for r in early] == [(spike.id, None)]


def test_slow_drift_is_not_a_spike() -> None:
    ts, loss = steady(1200)
    loss += np.arange(1200) * (0.5 / 60)  # +0.5 per hour for 20 hours
    assert loss_spikes(ts, loss) == []
    assert not kinds(detect_failures(series(ts, loss), CONFIG, at(ts[-1])), "loss_spike")


def test_noise_below_six_sigma_does_not_trigger() -> None:
    ts, loss = steady(3000, sd=0.02)  # 6 sigma = 0.12 clears the 0.05 floor
    assert loss_spikes(ts, loss) == []
    for lift, found in ((0.1, False), (0.2, True)):  # 5 and 10 sigma for 6 minutes
        bumped = loss.copy()
        bumped[1500:1506] += lift
        assert bool(loss_spikes(ts, bumped)) is found


def test_the_floor_of_0_05_applies_to_a_quiet_loss() -> None:
    ts, loss = steady(600, sd=0.0005)
    for lift, found in ((0.04, False), (0.06, True)):
        bumped = loss.copy()
        bumped[300:310] += lift
        assert bool(loss_spikes(ts, bumped)) is found


def test_spike_needs_ten_points_in_the_trailing_hour() -> None:
    for every, found in ((400.0, False), (360.0, True)):  # 9 vs 10 points per hour
        ts, loss = steady(60, every=every)
        loss[40:] += 1.0
        assert bool(loss_spikes(ts, loss)) is found


def _reference_flags(ts: list[float], loss: list[float]) -> set[int]:
    """The upstream rule written the slow, obvious way."""
    flagged = set()
    for k, (t, y) in enumerate(zip(ts, loss, strict=True)):
        if not math.isfinite(y):
            continue
        recent = [v for u, v in zip(ts[: k + 1], loss[: k + 1], strict=True)
                  if t - 300 < u and math.isfinite(v)]
        hour = [v for u, v in zip(ts, loss, strict=True)
                if t - 3900 < u <= t - 300 and math.isfinite(v)]
        if len(hour) < 10:
            continue
        mean = sum(hour) / len(hour)
        sd = math.sqrt(sum((v - mean) ** 2 for v in hour) / len(hour))
        if min(recent) > mean + max(0.05, 6 * sd):
            flagged.add(k)
    return flagged


def test_spike_rule_matches_a_brute_force_reference() -> None:
    rng = np.random.default_rng(5)
    ts = T0 + np.cumsum(rng.uniform(5, 120, 900))  # irregular logging
    loss = 2.0 + rng.normal(0, 0.01, 900)
    for start in (200, 420, 700):
        loss[start:start + rng.integers(3, 15)] += rng.uniform(0.1, 1.0)
    loss[rng.choice(900, 30, replace=False)] = np.nan
    got = {k for i, j in loss_spikes(ts, loss) for k in range(i, j) if np.isfinite(loss[k])}
    want = _reference_flags(ts.tolist(), loss.tolist())
    assert want and got == want


# ---------------------------------------------------------------------------
# NaN loss.

def test_nan_rows_merge_and_missing_rows_do_not_count() -> None:
    ts, loss = steady(100)
    loss[[10, 11, 12, 13, 20, 30, 98, 99]] = np.nan
    bad = np.zeros(100, dtype=bool)
    bad[[10, 11, 13, 20, 98, 99]] = True  # 12 and 30 lack the loss (eval-only rows)
    s = Series(step=np.arange(100) * 10, timestamp=ts, run=np.array(["r1"] * 100, dtype=object),
               values={"loss": loss}, bad={"loss": bad})
    records = kinds(detect_failures(s, CONFIG, at(ts[-1])), "nan_loss")
    assert [r.id for r in records] == ["nan-100", "nan-200", "nan-980"]
    first, second, last = records
    assert (first.start, first.end) == (at(ts[10]), at(ts[13]))
    assert "on 3 logged row(s), steps 100-130" in first.what
    assert first.accelerator_hours_lost is None
    assert second.start == second.end == at(ts[20])
    # A page says one row's step once, in each language; a run of rows as a range.
    assert failure_text(second, ENGLISH) == "loss was NaN or inf on one logged row, at step 200"
    zh = language("zh")
    assert "200" in failure_text(second, zh) and "–" not in failure_text(second, zh)
    assert failure_text(first, ENGLISH) == "loss was NaN or inf on 3 logged rows, steps 100–130"
    assert last.end is None  # still NaN at the last row


def test_non_finite_loss_without_a_mask_counts() -> None:
    ts, loss = steady(50)
    loss[5], loss[6] = np.inf, np.nan
    [rec] = kinds(detect_failures(series(ts, loss), CONFIG, at(ts[-1])), "nan_loss")
    assert rec.id == "nan-50" and rec.end == at(ts[6])
