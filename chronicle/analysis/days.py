"""Per-UTC-day summaries: the figures of one day page and its JSON (contract: README).

Pure: every input is passed in. Missing data stays missing (None), never zero.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime
from typing import Any

import numpy as np

from chronicle.analysis.series import Series, day_bounds, day_of_run
from chronicle.config import RunConfig
from chronicle.models import FailureRecord, Thread, iso

DAY_SCHEMA = "chronicle-day/1"
# Failure kinds that mean the job stopped and came back: they count as restarts.
RESTART_KINDS = ("gap", "fork", "restart")


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


def _thread_updates(day: date, threads: Mapping[int, Sequence[Thread]]) -> list[dict[str, Any]]:
    start, end = day_bounds(day)
    out = []
    for number in sorted(threads):
        states = threads[number]
        if not states:
            continue
        latest = states[-1]
        new, edited = [], []
        for c in latest.comments:
            made, changed = c.created_at.timestamp(), c.updated_at.timestamp()
            if start <= made < end:
                new.append(
                    {
                        "id": c.id,
                        "author": c.author,
                        "created_at": iso(c.created_at),
                        "url": c.url,
                        "body": c.body,
                        "edited": c.edited,
                    }
                )
            elif made < start and start <= changed < end and c.edited:
                before = None
                for s in states:
                    for old in s.comments:
                        if old.id == c.id and old.updated_at.timestamp() < start:
                            before = old.body
                edited.append(
                    {
                        "id": c.id,
                        "author": c.author,
                        "created_at": iso(c.created_at),
                        "updated_at": iso(c.updated_at),
                        "url": c.url,
                        "body": c.body,
                        "previous_body": before,
                    }
                )
        opened = start <= latest.created_at.timestamp() < end
        if new or edited or opened:
            out.append(
                {
                    "number": number,
                    "title": latest.title,
                    "url": latest.url,
                    "labels": list(latest.labels),
                    "state": latest.state,
                    "opened": opened,
                    "new_comments": new,
                    "edited_comments": edited,
                }
            )
    return out


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
) -> dict[str, Any]:
    """Return the day's figures as the JSON-ready dict of the day contract."""
    # Load inputs.
    start, end = day_bounds(day)
    now = sealed_at.timestamp()
    rows = series.window(start, end)
    before = series.window(-np.inf, start)
    v = rows.values

    # Process: tokens.
    total_day = _finite(v.get("total_tokens"))
    total_before = _finite(before.values.get("total_tokens"))
    cumulative = (
        _f(total_day.max())
        if total_day.size
        else (_f(total_before.max()) if total_before.size else None)
    )
    base = _f(total_before.max()) if total_before.size else 0.0
    tokens_day = None
    if total_day.size and base is not None:
        tokens_day = max(0.0, float(total_day.max()) - base)
    budget = config.run.token_budget
    fraction = cumulative / budget if cumulative is not None else None

    # Wall-clock of the run within the day: from the first row ever logged.
    first_ever = float(series.timestamp.min()) if len(series) else None
    on_from = max(start, first_ever) if first_ever is not None else None
    wall = (end - on_from) if on_from is not None and on_from < end else 0.0
    threshold = config.failures.gap_minutes * 60.0
    downtime = downtime_in(series.timestamp, on_from, end, threshold, now) if on_from else None

    compute_p50 = _pct(v.get("tokens_per_second"), 50)
    sustained = tokens_day / wall if tokens_day is not None and wall > 0 else None
    goodput = sustained / compute_p50 if sustained is not None and compute_p50 else None

    loss_day = _finite(v.get("loss"))
    train_last = _f(loss_day[-1]) if loss_day.size else None
    prev_last = previous.get("loss", {}).get("train_last") if previous else None
    eval_all = series.window(-np.inf, end)
    eval_vals = eval_all.values.get("eval_loss")
    eval_last = eval_step = None
    if eval_vals is not None:
        ok = np.flatnonzero(np.isfinite(eval_vals))
        if ok.size:
            eval_last, eval_step = _f(eval_vals[ok[-1]]), int(eval_all.step[ok[-1]])
    bad_loss = rows.bad.get("loss")

    hours = config.run.accelerators.count * wall / 3600.0
    prices = config.run.prices_usd_per_accelerator_hour
    prev_cum = previous.get("cumulative", {}) if previous else {}
    cum_hours = (prev_cum.get("accelerator_hours") or 0.0) + hours
    day_failures = [
        f
        for f in failures
        if f.start.timestamp() < end and (f.end is None or f.end.timestamp() >= start)
    ]
    restarts = sum(
        1 for f in day_failures if f.kind in RESTART_KINDS and start <= f.start.timestamp() < end
    )
    forks = [
        {
            "run": k.run,
            "parent": k.parent,
            "step": k.step,
            "time": iso(datetime.fromtimestamp(k.timestamp, tz=UTC)),
        }
        for k in series.forks
        if start <= k.timestamp < end
    ]
    steps = rows.step

    summary: dict[str, Any] = {
        "schema": DAY_SCHEMA,
        "run": config.run.name,
        "date": day.isoformat(),
        "day": day_of_run(config, day),
        "planned_days": config.run.planned_days,
        "title": f"Day {day_of_run(config, day)} · {day.isoformat()}",
        "sealed_by": sealed_by,
        "sealed_at": iso(sealed_at),
        "backfilled": backfilled,
        "data": {
            "rows": len(rows),
            "first": iso(datetime.fromtimestamp(rows.timestamp.min(), tz=UTC))
            if len(rows)
            else None,
            "last": iso(datetime.fromtimestamp(rows.timestamp.max(), tz=UTC))
            if len(rows)
            else None,
        },
        "steps": {
            "first": int(steps.min()) if steps.size else None,
            "last": int(steps.max()) if steps.size else None,
            "count": int(steps.max() - steps.min()) if steps.size else None,
        },
        "tokens": {
            "day": _f(tokens_day),
            "cumulative": cumulative,
            "budget": budget,
            "budget_fraction": _f(fraction),
        },
        "phase": phase_at(config, fraction),
        "loss": {
            "train_last": train_last,
            "train_mean": _f(loss_day.mean()) if loss_day.size else None,
            "train_min": _f(loss_day.min()) if loss_day.size else None,
            "train_change": _f(train_last - prev_last)
            if train_last is not None and prev_last is not None
            else None,
            "eval_last": eval_last,
            "eval_step": eval_step,
            "nan_rows": int(bad_loss.sum()) if bad_loss is not None else 0,
        },
        "throughput": {
            "compute_tokens_per_second_p50": compute_p50,
            "sustained_tokens_per_second": _f(sustained),
            "goodput": _f(goodput),
            "mfu_p10": _pct(v.get("mfu"), 10),
            "mfu_p50": _pct(v.get("mfu"), 50),
            "mfu_p90": _pct(v.get("mfu"), 90),
            "mfu_unit": "percent",
        },
        "moe": {
            "drop_fraction_p50": _pct(v.get("drop_fraction"), 50),
            "drop_fraction_max": _pct(v.get("drop_fraction"), 100),
        },
        "grad_norm": {"max": _pct(v.get("grad_norm"), 100), "p50": _pct(v.get("grad_norm"), 50)},
        "learning_rate": {"last": _last(v.get("learning_rate"))},
        "downtime_seconds": _f(downtime),
        "restarts": restarts,
        "runs": sorted(set(rows.run.tolist())),
        "forks": forks,
        "accelerator_hours": _f(hours),
        "cost": {"usd": {name: _f(hours * price) for name, price in prices.items()}},
        "cumulative": {
            "accelerator_hours": _f(cum_hours),
            "usd": {name: _f(cum_hours * price) for name, price in prices.items()},
            "downtime_seconds": _f((prev_cum.get("downtime_seconds") or 0.0) + (downtime or 0.0)),
        },
        "failures": [f.to_json() for f in day_failures],
        "threads_updated": _thread_updates(day, threads),
        "previous": _previous_brief(previous),
    }
    summary["summary"] = write_summary(summary, config)
    return summary


def _previous_brief(previous: Mapping[str, Any] | None) -> dict[str, Any] | None:
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


def human_tokens(n: float | None) -> str:
    """Return a token count as 207.1B / 7.70T."""
    if n is None:
        return "no data"
    for unit, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if abs(n) >= scale:
            return f"{n / scale:.3g}{unit}" if unit != "T" else f"{n / scale:.2f}T"
    return f"{n:.0f}"


def human_duration(seconds: float | None) -> str:
    """Return 5400 as '1.5 h', 300 as '5 min'."""
    if seconds is None:
        return "no data"
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 60:.0f} min"


def write_summary(d: Mapping[str, Any], config: RunConfig) -> str:
    """Return the one-paragraph summary of a day, written from its numbers only."""
    parts = [f"Day {d['day']} of {d['planned_days']}."]
    t = d["tokens"]
    if d["data"]["rows"] == 0:
        parts.append("No metrics were logged this day.")
    if t["day"] is not None:
        frac = (
            f", {t['budget_fraction']:.1%} of the {human_tokens(t['budget'])} budget"
            if t["budget_fraction"] is not None
            else ""
        )
        parts.append(
            f"The run processed {human_tokens(t['day'])} tokens "
            f"({human_tokens(t['cumulative'])} so far{frac})."
        )
    loss = d["loss"]
    if loss["train_last"] is not None:
        change = (
            f" ({loss['train_change']:+.3f} on the day before)"
            if loss["train_change"] is not None
            else ""
        )
        parts.append(f"Train loss ended at {loss['train_last']:.3f}{change}.")
    if loss["eval_last"] is not None:
        parts.append(f"Latest eval loss: {loss['eval_last']:.3f} at step {loss['eval_step']:,}.")
    if loss["nan_rows"]:
        parts.append(f"{loss['nan_rows']} logged loss value(s) were NaN or infinite.")
    th = d["throughput"]
    if th["compute_tokens_per_second_p50"] is not None:
        text = (
            f"Compute-step throughput was {th['compute_tokens_per_second_p50'] / 1e6:.2f}M tokens/s"
        )
        if th["sustained_tokens_per_second"] is not None and th["goodput"] is not None:
            text += (
                f", sustained {th['sustained_tokens_per_second'] / 1e6:.2f}M "
                f"(goodput {th['goodput']:.0%})"
            )
        if th["mfu_p50"] is not None:
            text += f"; MFU p50 {th['mfu_p50']:.1f}%"
        parts.append(text + ".")
    if d["moe"]["drop_fraction_max"] is not None:
        parts.append(f"Token dropping peaked at {d['moe']['drop_fraction_max']:.1%}.")
    if d["restarts"] or d["downtime_seconds"]:
        parts.append(
            f"{d['restarts']} restart(s), {human_duration(d['downtime_seconds'])} "
            "without telemetry."
        )
    n_fail, n_thr = len(d["failures"]), len(d["threads_updated"])
    if n_fail or n_thr:
        parts.append(f"{n_fail} failure record(s); {n_thr} issue thread(s) updated.")
    return " ".join(parts)
