"""Data-mixture stage switches from the logged `mixture/stage` (analysis stage, pure).

levanter logs the stage, with its weights under `mixture/weight/<name>`, when a stage
starts and again after every restart. A switch is a logged stage that differs from the
one logged before it, on the stitched lineage (rows a fork superseded do not count). NaN,
missing values and re-logs of the same stage are no switch. A stage's weights are a
complete snapshot: levanter omits zero weights, so a name missing from the new stage's
row weighs 0 there.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np

from chronicle.analysis.recorded import Recorded, evidence_file, slug
from chronicle.analysis.records import ChangeRecord
from chronicle.analysis.series import Series
from chronicle.config import RunConfig
from chronicle.models import MetricRow, iso

StageRows = Sequence[tuple[Recorded, Sequence[MetricRow]]]
TOP_MOVERS = 5


def weight_prefix(stage_key: str) -> str:
    """Return the prefix of the weight keys logged next to `stage_key` (mixture/weight/)."""
    return stage_key.rsplit("/", 1)[0] + "/weight/" if "/" in stage_key else "weight/"


@dataclass(frozen=True)
class _Point:
    step: int
    timestamp: float
    run: str
    stage: float
    recorded: Recorded
    weights: dict[str, float] = field(default_factory=dict)


def _points(stages: StageRows, series: Series, key: str) -> list[_Point]:
    """Return the logged stages that survived stitching, by step, each (run, step) once."""
    prefix = weight_prefix(key)
    found: dict[tuple[str, int], _Point] = {}
    for recorded, rows in stages:
        for row in rows:
            value, run, step = row.get(key), str(row["run"]), int(row["step"])
            if not isinstance(value, int | float) or not math.isfinite(value):
                continue
            i = int(np.searchsorted(series.step, step))
            if i >= len(series) or series.step[i] != step or series.run[i] != run:
                continue  # superseded by a fork (or not stitched)
            weights = {k[len(prefix):]: float(v) for k, v in row.items()
                       if k.startswith(prefix) and isinstance(v, int | float)
                       and math.isfinite(v)}
            found.setdefault((run, step), _Point(step, float(row["timestamp"]), run,
                                                 float(value), recorded, weights))
    return sorted(found.values(), key=lambda p: p.step)


def movers(before: Mapping[str, float], after: Mapping[str, float],
           top: int = TOP_MOVERS) -> list[dict[str, Any]]:
    """Return the `top` weights that moved most, largest move first (absent = 0)."""
    names = sorted(set(before) | set(after))
    pairs = [(n, before.get(n, 0.0), after.get(n, 0.0)) for n in names]
    pairs = [p for p in pairs if p[1] != p[2]]
    pairs.sort(key=lambda p: (-abs(p[2] - p[1]), p[0]))
    return [{"key": n, "before": b, "after": a} for n, b, a in pairs[:top]]


def _value(stage: float) -> int | float:
    return int(stage) if stage.is_integer() else stage


def mixture_changes(stages: StageRows, series: Series, config: RunConfig) -> list[ChangeRecord]:
    """Return one change per switch of the logged mixture stage."""
    key = config.wandb.metrics["mixture_stage"]
    out: list[ChangeRecord] = []
    last: _Point | None = None
    weights: dict[str, float] = {}
    for p in _points(stages, series, key):
        if last is not None and p.stage != last.stage:
            moved = movers(weights, p.weights) if weights and p.weights else []
            out.append({
                "id": slug("mixture", p.step), "kind": "mixture",
                "time": iso(datetime.fromtimestamp(p.timestamp, tz=UTC)), "step": p.step,
                "budget_fraction": None, "key": key, "name": None,
                "before": _value(last.stage), "after": _value(p.stage), "run": p.run,
                "parent": None, "evidence": evidence_file(p.recorded, "metrics.parquet"),
                "recorded_by": p.recorded.id, "recorded_at": iso(p.recorded.taken_at),
                "detail": {"movers": moved, "weights_logged": len(p.weights)},
            })
        last = p
        weights = p.weights or weights
    return out
