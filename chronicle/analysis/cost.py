"""Run-wide cost, throughput and reliability from the sealed days' figures and failures.

Accelerator-hours = accelerator count x wall-clock since the first logged row (downtime
included: idle accelerators are still paid for); dollars = hours x each configured price.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Any

import numpy as np

from chronicle.analysis.ledger import Ledger
from chronicle.analysis.run_state import RunState
from chronicle.config import RunConfig

RECENT_DAYS = 7  # the sustained rate the projection extrapolates


def _sum(days: Sequence[Mapping[str, Any]], *path: str) -> float:
    total = 0.0
    for d in days:
        v: Any = d
        for p in path:
            v = v.get(p) if isinstance(v, Mapping) else None
        total += float(v) if isinstance(v, int | float) else 0.0
    return total


def summarize_cost(days: Sequence[Mapping[str, Any]], config: RunConfig,
                   state: RunState | None = None) -> dict[str, Any]:
    """Return accelerator-hours and dollars to date, per billion tokens, and the projection
    (none once the run's `state` says it finished: `finished` says when and why)."""
    count = config.run.accelerators.count
    prices = config.run.prices_usd_per_accelerator_hour
    hours = _sum(days, "accelerator_hours")
    tokens = next((d["tokens"]["cumulative"] for d in reversed(days)
                   if d["tokens"].get("cumulative") is not None), None)
    recent = [d["tokens"]["day"] for d in days[-RECENT_DAYS:]
              if d["tokens"].get("day") is not None]
    rate = sum(recent) / len(recent) if recent else None  # tokens per day
    budget = config.run.token_budget
    finish = state.finish if state is not None else None
    remaining_days = ((budget - tokens) / rate if rate and tokens is not None and tokens < budget
                      else 0.0 if tokens is not None and tokens >= budget else None)
    if finish is not None:
        remaining_days = None  # over: nothing to project
    total_hours = hours + remaining_days * 24 * count if remaining_days is not None else None
    last = date.fromisoformat(days[-1]["date"]) if days else None
    end = (last + timedelta(days=1 + remaining_days)).isoformat() if (
        last and remaining_days is not None) else None
    return {
        "accelerators": count, "kind": config.run.accelerators.kind,
        "wall_clock_hours": hours / count if count else None,
        "accelerator_hours": hours,
        "usd": {k: hours * p for k, p in prices.items()},
        "tokens": tokens,
        "usd_per_billion_tokens": {k: hours * p / (tokens / 1e9) for k, p in prices.items()}
        if tokens else {},
        "recent_tokens_per_day": rate, "recent_days": len(recent),
        "remaining_days": remaining_days, "projected_end": end,
        "projected_accelerator_hours": total_hours,
        "projected_usd": {k: total_hours * p for k, p in prices.items()}
        if total_hours is not None else {},
        "through": days[-1]["date"] if days else None,
        "finished": None if finish is None else {
            "date": datetime.fromtimestamp(finish.at, tz=UTC).date().isoformat(),
            "step": finish.step, "by": finish.by, "target": finish.target},
    }


def summarize_throughput(days: Sequence[Mapping[str, Any]], ledger: Ledger,
                         config: RunConfig) -> dict[str, Any]:
    """Return per-day compute vs sustained throughput, the gap split, and reliability: its
    downtime, restarts and lost accelerator-hours the ledger's (each total the sum of its
    days: analysis/ledger.py)."""
    counted = ledger.per_day()
    rows = []
    for d in days:
        th = d["throughput"]
        compute, tokens = th.get("compute_tokens_per_second_p50"), d["tokens"].get("day")
        wall = (d.get("accelerator_hours") or 0.0) * 3600.0 / config.run.accelerators.count
        figures = counted.get(d["date"]) or {}
        down = figures.get("downtime_seconds", d.get("downtime_seconds") or 0.0)
        sustained, goodput = th.get("sustained_tokens_per_second"), th.get("goodput")
        fixed = ledger.corrected(d["date"], "tokens.day")
        if fixed is not None:  # a fork found later re-did part of the day: its tokens now
            tokens = float(fixed)
            sustained = tokens / wall if wall else None
            goodput = sustained / compute if sustained is not None and compute else None
        busy = tokens / compute if compute and tokens is not None else None
        rows.append({
            "date": d["date"], "compute": compute, "sustained": sustained,
            "goodput": goodput, "tokens": tokens,
            "wall_seconds": wall, "downtime_seconds": down,
            "compute_seconds": busy,
            "overhead_seconds": max(0.0, wall - down - busy) if busy is not None else None,
            "mfu_p10": th.get("mfu_p10"), "mfu_p50": th.get("mfu_p50"),
            "mfu_p90": th.get("mfu_p90"), "mfu_unit": th.get("mfu_unit", "percent"),
            "drop_p50": d["moe"].get("drop_fraction_p50"),
            "drop_max": d["moe"].get("drop_fraction_max"), "phase": d.get("phase"),
            "restarts": int(figures.get("restarts", d.get("restarts") or 0)),
        })
    wall = sum(r["wall_seconds"] for r in rows)
    tokens = sum(r["tokens"] or 0.0 for r in rows)
    computes = [r["compute"] for r in rows if r["compute"] is not None]
    restarts = sum(r["restarts"] for r in rows)
    phases: dict[str, list[float]] = {}
    for r in rows:
        if r["drop_p50"] is not None:
            phases.setdefault(r["phase"] or "unknown", []).append(r["drop_p50"])
    return {
        "days": rows,
        "overall": {
            "compute_p50": float(np.median(computes)) if computes else None,
            "sustained": tokens / wall if wall else None,
            "goodput": (tokens / wall) / float(np.median(computes)) if wall and computes
            else None,
            "downtime_seconds": sum(r["downtime_seconds"] for r in rows),
            "overhead_seconds": sum(r["overhead_seconds"] or 0.0 for r in rows),
            "wall_seconds": wall,
        },
        "restarts": restarts,
        "mtbf_hours": wall / 3600.0 / restarts if restarts else None,
        "mtbf_seconds": wall / restarts if restarts else None,
        "accelerator_hours_lost": sum(counted.get(r["date"], {}).get("accelerator_hours_lost",
                                                                     0.0) for r in rows),
        "drop_by_phase": {k: float(np.median(v)) for k, v in phases.items()},
        "sequence_length": config.run.sequence_length,
    }
