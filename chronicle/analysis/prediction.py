"""The pre-registered loss prediction against the run's own eval loss.

Eval loss is compared with the predicted eval loss only, never with train loss. The
x axis is the fraction of the token budget at the eval's step (tokens read off
`throughput/total_tokens` at that step; `run_progress` when tokens were not logged).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import numpy as np

from chronicle.analysis.records import Inference, PredictionRecord
from chronicle.analysis.series import Series
from chronicle.config import RunConfig
from chronicle.config.watchers import Prediction
from chronicle.models import iso


def metric_name(prediction: Prediction, config: RunConfig) -> str | None:
    """Return the canonical metric the prediction is about (None if not stored)."""
    if prediction.metric in config.wandb.metrics:
        return prediction.metric
    for canonical, key in config.wandb.metrics.items():
        if key == prediction.metric:
            return canonical
    return None


def predict(prediction: Prediction, fraction: np.ndarray,
            budget: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return (predicted, low, high) at budget fractions (NaN outside the table / band)."""
    f = np.asarray(fraction, dtype=float)
    nan = np.full(f.shape, np.nan)
    if prediction.table:
        xs = np.array([r[0] for r in prediction.table])
        inside = (f >= xs[0]) & (f <= xs[-1])  # never extrapolated past the table
        pred = np.where(inside, np.interp(f, xs, [r[1] for r in prediction.table]), np.nan)
        if all(r[2] is not None and r[3] is not None for r in prediction.table):
            lo = np.where(inside, np.interp(f, xs, [float(r[2] or 0) for r in prediction.table]),
                          np.nan)
            hi = np.where(inside, np.interp(f, xs, [float(r[3] or 0) for r in prediction.table]),
                          np.nan)
            return pred, lo, hi
        return pred, nan, nan.copy()
    form = prediction.form
    compute = form["flops_per_token"] * f * budget
    with np.errstate(divide="ignore", invalid="ignore"):
        pred = np.where(compute > 0, form["E"] + form["A"] * compute ** -form["alpha"], np.nan)
    band = form.get("band")
    if band is None:
        return pred, nan, nan.copy()
    return pred, pred - band, pred + band


def eval_points(series: Series, config: RunConfig, prediction: Prediction,
                until: float = np.inf) -> dict[str, np.ndarray]:
    """Return every finite eval before `until`: step, time, fraction, actual, predicted, band."""
    name = metric_name(prediction, config)
    values = series.values.get(name) if name else None
    empty = np.empty(0)
    if values is None:
        return {k: empty for k in ("step", "time", "fraction", "actual", "predicted", "low",
                                   "high", "residual")}
    ok = np.flatnonzero(np.isfinite(values) & (series.timestamp < until))
    steps = series.step[ok].astype(float)
    fraction = _fractions(series, config, steps)
    pred, lo, hi = predict(prediction, fraction, config.run.token_budget)
    actual = values[ok]
    return {"step": steps, "time": series.timestamp[ok], "fraction": fraction,
            "actual": actual, "predicted": pred, "low": lo, "high": hi,
            "residual": actual - pred}


def _fractions(series: Series, config: RunConfig, steps: np.ndarray) -> np.ndarray:
    for name, scale in (("total_tokens", 1.0 / config.run.token_budget), ("run_progress", 1.0)):
        v = series.values.get(name)
        if v is None:
            continue
        ok = np.isfinite(v)
        if ok.sum() >= 1:
            xs, ys = series.step[ok].astype(float), v[ok] * scale
            order = np.argsort(xs, kind="stable")
            return np.interp(steps, xs[order], ys[order])
    return np.full(steps.shape, np.nan)


def summarize_prediction(series: Series, config: RunConfig, end: float, start: float,
                         day1_sha256: str | None) -> PredictionRecord | None:
    """Return the day's prediction record: latest eval by `end`, residual, band, sha256."""
    prediction = config.watch.prediction
    if prediction is None:
        return None
    sha = prediction.sha256()
    registered = day1_sha256 or sha
    out: PredictionRecord = {
        "metric": prediction.metric, "sha256": sha, "registered_sha256": registered,
        "changed": sha != registered, "registered": prediction.registered.isoformat()
        if prediction.registered else None,
        "eval_step": None, "eval_time": None, "evals_this_day": 0, "fraction": None,
        "actual": None, "predicted": None, "low": None, "high": None, "residual": None,
        "sign": None, "outside_band": None, "band_excess": None,
    }
    pts = eval_points(series, config, prediction, until=end)
    if not pts["step"].size:
        return out
    out["evals_this_day"] = int(np.count_nonzero(pts["time"] >= start))
    out["eval_step"] = int(pts["step"][-1])
    out["eval_time"] = iso(datetime.fromtimestamp(float(pts["time"][-1]), tz=UTC))
    out["fraction"], out["actual"] = _f(pts["fraction"][-1]), _f(pts["actual"][-1])
    out["predicted"], out["residual"] = _f(pts["predicted"][-1]), _f(pts["residual"][-1])
    out["low"], out["high"] = _f(pts["low"][-1]), _f(pts["high"][-1])
    r, lo, hi, a = out["residual"], out["low"], out["high"], out["actual"]
    if r is not None:
        out["sign"] = "above" if r > 0 else "below" if r < 0 else "on"
    if lo is not None and hi is not None and a is not None:
        excess = max(0.0, lo - a, a - hi)
        out["band_excess"], out["outside_band"] = excess, excess > 0
    out["inference"] = infer(out)
    return out


def infer(p: PredictionRecord) -> Inference | None:
    """Return the verdict a reader would draw from the record, labelled as an inference
    with the observation that would falsify it (None when there is nothing to infer)."""
    if p.get("outside_band") is None:
        return None
    lo, hi, step = p["low"], p["high"], p["eval_step"]
    basis = (f"one eval ({p['metric']}) at step {step:,} against the prediction "
             f"registered {p['registered']}")
    if not p["outside_band"]:
        return {"kind": "INFERRED", "statement": "on track: the eval loss is inside the "
                "pre-registered band", "basis": basis,
                "falsified_by": "a later eval outside the band at its own budget fraction"}
    ahead = p["sign"] == "below"
    return {
        "kind": "INFERRED",
        "statement": ("ahead of prediction: eval loss below the band" if ahead
                      else "behind prediction: eval loss above the band"),
        "basis": basis,
        "falsified_by": (f"a later eval at or above the band's lower edge ({lo:.3f} here)"
                         if ahead else
                         f"a later eval at or below the band's upper edge ({hi:.3f} here)"),
    }


def _f(v: Any) -> float | None:
    return float(v) if v is not None and np.isfinite(v) else None
