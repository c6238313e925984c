"""The home page: the run at a glance (render stage, pure).

Day N of planned, tokens against the budget, the latest figures, open incidents, the stale
banner and the newest entries, all as of the newest data in the store.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from chronicle.analysis.day_model import DaySummary
from chronicle.analysis.series import Series, day_of_run
from chronicle.config import RunConfig
from chronicle.models import Archived, FailureRecord
from chronicle.render import render
from chronicle.render.day import one_line

ETA_WINDOW_DAYS = 7


def _last(series: Series, name: str, before: float = np.inf) -> float | None:
    xy = series.finite(name)
    if xy is None:
        return None
    idx = np.flatnonzero(xy[0] <= before)
    return float(xy[1][idx[-1]]) if idx.size else None


def _recent(series: Series, name: str, since: float) -> np.ndarray:
    xy = series.finite(name)
    return xy[1][xy[0] >= since] if xy is not None else np.array([])


def render_home(config: RunConfig, days: Sequence[DaySummary], series: Series,
                failures: Sequence[FailureRecord], stale: Sequence[Mapping[str, Any]],
                latest: Archived | None, waiting: Sequence[Mapping[str, Any]] = (),
                head_sha256: str | None = None) -> str:
    """Return the home page: the run at a glance, as of the newest data.

    `waiting` lists the closed days the newest snapshot left unsealed; `head_sha256` is the
    newest manifest's sha256, published so a copy of the chain can be checked against it.
    """
    last_t = float(series.timestamp.max()) if len(series) else None
    as_of = datetime.fromtimestamp(last_t, tz=UTC) if last_t is not None else None
    now = as_of or (latest.taken_at if latest else None)
    day_now = day_of_run(config, now.date()) if now else 0
    newest = days[-1] if days else None
    tokens = _last(series, "total_tokens")
    if tokens is None and newest:
        tokens = newest["tokens"]["cumulative"]
    budget = config.run.token_budget
    pct = round(min(100.0, max(0.0, 100.0 * (tokens or 0.0) / budget)), 1)
    window = [d["tokens"]["day"] for d in days[-ETA_WINDOW_DAYS:] if d["tokens"]["day"]]
    rate = sum(window) / len(window) if window else None
    eta = None
    if rate and tokens is not None and now is not None and tokens < budget:
        eta = (now + timedelta(days=(budget - tokens) / rate)).strftime("%Y-%m-%d")
    day_ago = (last_t - 86400.0) if last_t is not None else np.inf
    loss_last = _last(series, "loss")
    loss_before = _last(series, "loss", day_ago)
    mfu = _recent(series, "mfu", day_ago)
    drop = _recent(series, "drop_fraction", day_ago)
    with_goodput = [d for d in days if d["throughput"].get("goodput") is not None]
    return render(
        "home.md.j2", title=config.site.title, run_name=config.run.name, stale=list(stale),
        waiting=list(waiting), head_sha256=head_sha256,
        day_now=day_now, planned_days=config.run.planned_days,
        phase=newest.get("phase") if newest else None, progress_pct=pct, tokens_done=tokens,
        token_budget=budget, eta=eta, eta_days=len(window), eta_rate=rate,
        loss_last=loss_last,
        loss_change=(loss_last - loss_before) if loss_last is not None and loss_before is not None
        else None,
        mfu_p50=float(np.median(mfu)) if mfu.size else None,
        goodput=with_goodput[-1]["throughput"]["goodput"] if with_goodput else None,
        goodput_day=with_goodput[-1]["date"] if with_goodput else None,
        drop_p50=float(np.median(drop)) if drop.size else None,
        drop_max=float(drop.max()) if drop.size else None,
        open_failures=[f for f in failures if f.end is None],
        data_as_of=as_of, snapshot=latest.id if latest else None,
        snapshot_at=latest.taken_at if latest else None,
        recent=[(d, one_line(d)) for d in reversed(days[-7:])])
