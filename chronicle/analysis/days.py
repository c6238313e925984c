"""Per-UTC-day summaries: the figures of one day page and its JSON (analysis stage, pure).

`summarize_day` assembles a `DaySummary` (analysis/day_model.py, the contract) from one
small function per section. Every input is passed in. Missing data stays missing (None),
never zero.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

import numpy as np

from chronicle.analysis.changes import RunChanges
from chronicle.analysis.context_length import changes_between, drop_by_length, in_effect
from chronicle.analysis.day_model import (
    DAY_SCHEMA,
    Cost,
    Cumulative,
    DataRange,
    DaySummary,
    ForkRecord,
    GradNorm,
    Loss,
    Moe,
    PreviousBrief,
    Steps,
    Throughput,
    Tokens,
)
from chronicle.analysis.run_state import FINISHED, RunState
from chronicle.analysis.series import Series, day_bounds, day_of_run
from chronicle.analysis.threads import thread_updates
from chronicle.config import RunConfig
from chronicle.models import RESTART_KINDS, FailureRecord, Thread, iso


def _f(value: Any) -> float | None:
    """Return a finite float or None (JSON has no NaN)."""
    if value is None:
        return None
    value = float(value)
    return value if np.isfinite(value) else None


def _finite(a: np.ndarray | None) -> np.ndarray:
    if a is None:
        return np.empty(0)
    return a[np.isfinite(a)]


def _pct(a: np.ndarray | None, q: float) -> float | None:
    v = _finite(a)
    return _f(np.percentile(v, q)) if v.size else None


def _last(a: np.ndarray | None) -> float | None:
    v = _finite(a)
    return _f(v[-1]) if v.size else None


def downtime_in(
    timestamps: np.ndarray, start: float, end: float, threshold: float, now: float
) -> float:
    """Return seconds of [start, end) inside gaps longer than `threshold` between rows.

    The time before the first row and after the last one (up to `now`) counts as a gap
    too when it is longer than the threshold: no telemetry is downtime.
    """
    if timestamps.size == 0:
        return max(0.0, min(end, now) - start)
    t = np.sort(timestamps)
    lo = np.concatenate(([-np.inf], t))
    hi = np.concatenate((t, [now]))
    wide = (hi - lo) > threshold
    wide[0] = False  # before the run started is not downtime
    a, b = np.maximum(lo[wide], start), np.minimum(hi[wide], end)
    return float(np.clip(b - a, 0.0, None).sum())


def phase_at(config: RunConfig, fraction: float | None) -> str | None:
    """Return the configured phase whose start fraction is the largest <= `fraction`."""
    if fraction is None or not config.run.phases:
        return None
    current = None
    for name, start in sorted(config.run.phases.items(), key=lambda kv: kv[1]):
        if fraction >= start:
            current = name
    return current


@dataclass(frozen=True)
class _Day:
    """One day's rows and what every section is computed from."""

    day: date
    start: float
    end: float
    now: float  # when the day is summarised (epoch s): a gap still open counts until then
    rows: Series
    before: Series
    series: Series
    config: RunConfig
    previous: Mapping[str, Any] | None
    finished: float | None = None  # when the run finished (epoch s), if it had by `now`

    @property
    def values(self) -> dict[str, np.ndarray]:
        return self.rows.values

    @property
    def until(self) -> float:
        """The end of the day's wall-clock: the day's end, or the run's finish in it."""
        return min(self.end, self.finished) if self.finished is not None else self.end

    def wall_seconds(self) -> tuple[float | None, float]:
        """Return (when the run was on within the day, wall-clock seconds since then, up
        to the day's end or the run's finish)."""
        first_ever = float(self.series.timestamp.min()) if len(self.series) else None
        on_from = max(self.start, first_ever) if first_ever is not None else None
        wall = (self.until - on_from) if on_from is not None and on_from < self.until else 0.0
        return on_from, wall


def _data_range(d: _Day) -> DataRange:
    rows = d.rows
    first = iso(datetime.fromtimestamp(rows.timestamp.min(), tz=UTC)) if len(rows) else None
    last = iso(datetime.fromtimestamp(rows.timestamp.max(), tz=UTC)) if len(rows) else None
    return {"rows": len(rows), "first": first, "last": last}


def _steps(d: _Day) -> Steps:
    steps = d.rows.step
    if not steps.size:
        return {"first": None, "last": None, "count": None}
    return {"first": int(steps.min()), "last": int(steps.max()),
            "count": int(steps.max() - steps.min())}


def _tokens(d: _Day) -> Tokens:
    total_day = _finite(d.values.get("total_tokens"))
    total_before = _finite(d.before.values.get("total_tokens"))
    before = _f(total_before.max()) if total_before.size else None
    cumulative = _f(total_day.max()) if total_day.size else before
    tokens_day = max(0.0, float(total_day.max()) - (before or 0.0)) if total_day.size else None
    budget = d.config.run.token_budget
    return {"day": _f(tokens_day), "cumulative": cumulative, "budget": budget,
            "budget_fraction": _f(cumulative / budget) if cumulative is not None else None}


def _loss(d: _Day) -> Loss:
    loss_day = _finite(d.values.get("loss"))
    train_last = _f(loss_day[-1]) if loss_day.size else None
    prev_last = d.previous.get("loss", {}).get("train_last") if d.previous else None
    through = d.series.window(-np.inf, d.end)
    eval_vals = through.values.get("eval_loss")
    eval_last = eval_step = None
    if eval_vals is not None:
        ok = np.flatnonzero(np.isfinite(eval_vals))
        if ok.size:
            eval_last, eval_step = _f(eval_vals[ok[-1]]), int(through.step[ok[-1]])
    bad_loss = d.rows.bad.get("loss")
    return {
        "train_last": train_last,
        "train_mean": _f(loss_day.mean()) if loss_day.size else None,
        "train_min": _f(loss_day.min()) if loss_day.size else None,
        "train_change": _f(train_last - prev_last)
        if train_last is not None and prev_last is not None else None,
        "eval_last": eval_last,
        "eval_step": eval_step,
        "nan_rows": int(bad_loss.sum()) if bad_loss is not None else 0,
    }


def _throughput(d: _Day, tokens_day: float | None, wall: float) -> Throughput:
    compute_p50 = _pct(d.values.get("tokens_per_second"), 50)
    sustained = tokens_day / wall if tokens_day is not None and wall > 0 else None
    goodput = sustained / compute_p50 if sustained is not None and compute_p50 else None
    mfu = d.values.get("mfu")
    return {
        "compute_tokens_per_second_p50": compute_p50,
        "sustained_tokens_per_second": _f(sustained),
        "goodput": _f(goodput),
        "mfu_p10": _pct(mfu, 10),
        "mfu_p50": _pct(mfu, 50),
        "mfu_p90": _pct(mfu, 90),
        "mfu_unit": "percent",
    }


def _moe(d: _Day) -> Moe:
    drop = d.values.get("drop_fraction")
    return {"drop_fraction_p50": _pct(drop, 50), "drop_fraction_max": _pct(drop, 100)}


def _grad_norm(d: _Day) -> GradNorm:
    gn = d.values.get("grad_norm")
    return {"max": _pct(gn, 100), "p50": _pct(gn, 50)}


def _cost(d: _Day, hours: float, downtime: float | None) -> tuple[Cost, Cumulative]:
    prices = d.config.run.prices_usd_per_accelerator_hour
    prev_cum = d.previous.get("cumulative", {}) if d.previous else {}
    cum_hours = (prev_cum.get("accelerator_hours") or 0.0) + hours
    cost: Cost = {"usd": {name: _f(hours * price) for name, price in prices.items()}}
    cumulative: Cumulative = {
        "accelerator_hours": _f(cum_hours),
        "usd": {name: _f(cum_hours * price) for name, price in prices.items()},
        "downtime_seconds": _f((prev_cum.get("downtime_seconds") or 0.0) + (downtime or 0.0)),
    }
    return cost, cumulative


def _day_failures(d: _Day, failures: Sequence[FailureRecord]) -> list[FailureRecord]:
    """Return the failure records open at any time during the day."""
    return [f for f in failures
            if f.start.timestamp() < d.end and (f.end is None or f.end.timestamp() >= d.start)]


def _forks(d: _Day) -> list[ForkRecord]:
    return [{"run": k.run, "parent": k.parent, "step": k.step,
             "time": iso(datetime.fromtimestamp(k.timestamp, tz=UTC))}
            for k in d.series.forks if d.start <= k.timestamp < d.end]


def summarize_day(
    day: date,
    series: Series,
    failures: Sequence[FailureRecord],
    threads: Mapping[int, Sequence[Thread]],
    config: RunConfig,
    sealed_by: str,
    sealed_at: datetime,
    previous: Mapping[str, Any] | None = None,
    backfilled: bool = False,
    changes: RunChanges | None = None,
    as_of: datetime | None = None,
    state: RunState | None = None,
) -> DaySummary:
    """Return the day's figures (the day JSON contract, without the sealing additions).

    With `changes`, the day also gets the changes that took effect in it, the sequence
    length(s) in effect and its token dropping per sequence length. `as_of` is the time the
    figures are computed as of (default `sealed_at`): a day sealed late is computed as of
    the first snapshot taken after it ended, like a timely seal. With the run's `state` as
    of then (analysis/run_state.py), the day records it, and after a finish no time counts
    as wall-clock or downtime (days sealed before states were recorded have none).
    """
    start, end = day_bounds(day)
    finished = state.since if state is not None and state.state == FINISHED else None
    d = _Day(day, start, end, (as_of or sealed_at).timestamp(), series.window(start, end),
             series.window(-np.inf, start), series, config, previous, finished)
    tokens = _tokens(d)
    on_from, wall = d.wall_seconds()
    gap = config.failures.gap_minutes * 60.0
    downtime = downtime_in(series.timestamp, on_from, d.until, gap,
                           min(d.now, d.until)) if on_from else None
    hours = config.run.accelerators.count * wall / 3600.0
    cost, cumulative = _cost(d, hours, downtime)
    day_failures = _day_failures(d, failures)
    number = day_of_run(config, day)
    summary: DaySummary = {
        "schema": DAY_SCHEMA, "run": config.run.name, "date": day.isoformat(), "day": number,
        "planned_days": config.run.planned_days, "title": f"Day {number} · {day.isoformat()}",
        "sealed_by": sealed_by, "sealed_at": iso(sealed_at), "backfilled": backfilled,
        "figures_as_of": iso(as_of or sealed_at) or "",
        "data": _data_range(d),
        "steps": _steps(d),
        "tokens": tokens,
        "phase": phase_at(config, tokens["budget_fraction"]),
        "loss": _loss(d),
        "throughput": _throughput(d, tokens["day"], wall),
        "moe": _moe(d),
        "grad_norm": _grad_norm(d),
        "learning_rate": {"last": _last(d.values.get("learning_rate"))},
        "downtime_seconds": _f(downtime),
        "restarts": sum(1 for f in day_failures
                        if f.kind in RESTART_KINDS and start <= f.start.timestamp() < end),
        "runs": sorted(set(d.rows.run.tolist())),
        "forks": _forks(d),
        "accelerator_hours": _f(hours),
        "cost": cost,
        "cumulative": cumulative,
        "failures": [f.to_json() for f in day_failures],
        "threads_updated": thread_updates(day, threads),
        "previous": _previous_brief(previous),
    }
    if state is not None:
        summary["run_state"] = state.to_json()
    if changes is not None:
        _add_changes(summary, d, changes)
    return summary


def _add_changes(summary: DaySummary, d: _Day, known: RunChanges) -> None:
    """Add the day's changes, sequence length(s) and dropping per sequence length."""
    fallback = d.config.run.sequence_length
    summary["changes"] = changes_between(known.changes, d.start, d.end)
    summary["sequence_length"] = in_effect(d.rows, known.sequence_lengths, fallback)
    summary["moe"]["by_sequence_length"] = drop_by_length(d.rows, known.sequence_lengths,
                                                          fallback)


def _previous_brief(previous: Mapping[str, Any] | None) -> PreviousBrief | None:
    if not previous:
        return None
    return {
        "date": previous["date"],
        "loss_train_last": previous["loss"]["train_last"],
        "tokens_day": previous["tokens"]["day"],
        "mfu_p50": previous["throughput"]["mfu_p50"],
        "goodput": previous["throughput"]["goodput"],
        "drop_fraction_max": previous["moe"]["drop_fraction_max"],
        "grad_norm_max": previous["grad_norm"]["max"],
        "downtime_seconds": previous["downtime_seconds"],
    }
