"""The pre-registered prediction against real hero-run evals (fixture numbers only)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from chronicle.analysis.prediction import (
    eval_points,
    infer,
    predict,
    summarize_prediction,
)
from chronicle.analysis.series import Series
from chronicle.errors import ConfigError
from chronicle.render.i18n import ENGLISH
from chronicle.render.prose import residual_line
from tests.support.config import make_config

FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "prediction_matched_progress.json")
                     .read_text())
BUDGET = 18.0e12


def _config(**prediction: Any) -> Any:
    return make_config(prediction=prediction or {"metric": FIXTURE["metric"],
                                                  "table": FIXTURE["table"]},
                       run__token_budget=BUDGET)


def _hero_series() -> Series:
    """Train rows (tokens) every 500 steps plus the real eval rows, step-sorted."""
    tok = np.array(FIXTURE["total_tokens"], dtype=float)
    ev = np.array(FIXTURE["evals"], dtype=float)
    step = np.concatenate([tok[:, 0], ev[:, 0]])
    ts = np.concatenate([1.7872e9 + tok[:, 0] * 19.0, ev[:, 1]])
    tokens = np.concatenate([tok[:, 1], np.full(len(ev), np.nan)])
    loss = np.concatenate([np.full(len(tok), np.nan), ev[:, 2]])
    order = np.argsort(step, kind="stable")
    return Series(step=step[order].astype(np.int64), timestamp=ts[order],
                  run=np.array(["hero"] * step.size, dtype=object),
                  values={"total_tokens": tokens[order], "eval_loss": loss[order]})


def _by_hand(fraction: float) -> tuple[float, float, float] | None:
    rows = FIXTURE["table"]
    if not rows[0][0] <= fraction <= rows[-1][0]:
        return None
    for (f0, *a), (f1, *b) in itertools.pairwise(rows):
        if f0 <= fraction <= f1:
            w = (fraction - f0) / (f1 - f0)
            return tuple(x + w * (y - x) for x, y in zip(a, b, strict=True))  # type: ignore
    raise AssertionError(fraction)


def test_real_evals_against_the_real_prediction() -> None:
    config = _config()
    pts = eval_points(_hero_series(), config, config.watch.prediction)
    assert pts["step"].size == len(FIXTURE["evals"])
    checked = 0
    for step, actual, f, pred, lo, hi, res in zip(pts["step"], pts["actual"], pts["fraction"],
                                                  pts["predicted"], pts["low"], pts["high"],
                                                  pts["residual"], strict=True):
        assert f == pytest.approx((step + 1) * 11264 * 4096 / BUDGET, rel=1e-6)
        want = _by_hand(f)
        if want is None:  # before 5% of the budget: never extrapolated
            assert np.isnan(pred) and np.isnan(res)
            continue
        checked += 1
        assert (pred, lo, hi) == pytest.approx(want, abs=1e-9)
        assert res == pytest.approx(actual - want[0], abs=1e-12)
    assert checked >= 5


def test_day_record_of_the_hero_at_10_percent_is_below_and_outside_the_band() -> None:
    # Step 38,999 is 10.0% of the budget: 2.2707 against a predicted ~2.3261.
    config = _config()
    s = _hero_series()
    rec = summarize_prediction(s, config, end=float(s.timestamp.max()) + 1, start=0.0,
                               day1_sha256=None)
    assert rec is not None and rec["eval_step"] == 38999
    want = _by_hand(rec["fraction"])
    assert want is not None
    assert rec["residual"] == pytest.approx(FIXTURE["evals"][-1][2] - want[0], abs=1e-12)
    assert rec["sign"] == "below" and rec["outside_band"] is True
    assert rec["band_excess"] == pytest.approx(want[1] - rec["actual"], abs=1e-12)
    assert rec["changed"] is False and rec["registered_sha256"] == rec["sha256"]
    moved = summarize_prediction(s, config, float(s.timestamp.max()) + 1, 0.0, "0" * 64)
    assert moved is not None and moved["changed"] is True
    verdict = rec["inference"]
    assert verdict["kind"] == "INFERRED" and verdict["statement"].startswith("ahead")
    assert f"{rec['low']:.3f}" in verdict["falsified_by"]
    line = residual_line(rec, ENGLISH)
    assert line is not None and "Inference: ahead of prediction" in line
    assert "falsified by" in line


def test_inside_the_band_is_on_track_and_nothing_is_inferred_without_an_eval() -> None:
    rec = {"outside_band": False, "low": 2.0, "high": 2.4, "eval_step": 3000, "sign": "above",
           "metric": "eval_loss", "registered": "2026-08-19"}
    verdict = infer(rec)
    assert verdict is not None and verdict["statement"].startswith("on track")
    assert "outside the band" in verdict["falsified_by"]
    assert infer({"outside_band": None}) is None


def test_functional_form_in_compute() -> None:
    form = {"E": 1.5, "A": 2.0e6, "alpha": 0.25, "flops_per_token": 1.38e11, "band": 0.01}
    config = _config(metric="eval_loss", form=form)
    f = np.array([0.1, 0.5, 1.0])
    pred, lo, hi = predict(config.watch.prediction, f, BUDGET)
    want = 1.5 + 2.0e6 * (1.38e11 * f * BUDGET) ** -0.25
    np.testing.assert_allclose(pred, want, rtol=1e-12)
    np.testing.assert_allclose(hi - lo, 0.02, rtol=1e-9)


def test_sha256_is_of_canonical_json_and_moves_with_any_number() -> None:
    a = _config().watch.prediction
    rows = [list(r) for r in FIXTURE["table"]]
    rows[-1][1] += 1e-4
    b = _config(metric=FIXTURE["metric"], table=rows).watch.prediction
    assert a.sha256() != b.sha256()
    assert a.sha256() == _config().watch.prediction.sha256()
    assert json.loads(a.canonical_json())["table"][0] == FIXTURE["table"][0]


def test_train_loss_is_never_a_prediction_metric() -> None:
    with pytest.raises(ConfigError, match="train loss"):
        _config(metric="train/loss", table=FIXTURE["table"])
