"""Whether the run is running, stalled or finished (analysis stage, pure).

A run ends. When its newest logged row reaches the configured number of steps (the newest
W&B run's `train_steps`, see `wandb.config_keys`) or the token budget, or W&B marks the
lineage's newest run `finished`, or the operator says so (`run.finished: true`), the run
finished at that row. From then on its silence is not an outage: no gap is open, nothing
counts as downtime, no accelerator-hour is spent, the telemetry checks have nothing to
check and the projection says the run is over. Rows logged later make it a running run
again (it was resumed), so the state is always the one the newest row shows.

A run that has not finished and has logged nothing for longer than
`failures.gap_minutes` (as of the snapshot) is stalled; otherwise it is running.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

from chronicle.analysis.day_model import RunStateRecord
from chronicle.analysis.run_config import canonical
from chronicle.analysis.series import Series
from chronicle.config import RunConfig
from chronicle.models import RunRecord, iso

RUNNING, STALLED, FINISHED = "running", "stalled", "finished"
# Why a run is finished, in the order they are tried: what the data shows comes first.
BY_STEPS, BY_BUDGET, BY_WANDB, BY_CONFIG = "steps", "budget", "wandb", "config"


@dataclass(frozen=True)
class Finish:
    """When the run finished (its last logged row) and what says so."""

    at: float  # epoch seconds
    step: int
    by: str  # BY_STEPS, BY_BUDGET, BY_WANDB or BY_CONFIG
    target: float | None = None  # the steps or the budget it reached


@dataclass(frozen=True)
class RunState:
    """The run's state as of a time: running, stalled or finished, and since when."""

    state: str
    since: float | None  # finished: the finish; stalled: the last row; running: None
    step: int | None  # the last step logged (None: nothing logged yet)
    finish: Finish | None = None

    def to_json(self) -> RunStateRecord:
        return {"state": self.state, "since": _iso(self.since), "step": self.step,
                "finished_by": self.finish.by if self.finish else None,
                "target": self.finish.target if self.finish else None}


def recorded_state(record: Mapping[str, Any] | None) -> RunState | None:
    """Return the state a sealed day JSON records (`run_state`), or None for a day sealed
    before states were recorded (or a record that does not parse)."""
    if not isinstance(record, Mapping) or record.get("state") not in (RUNNING, STALLED, FINISHED):
        return None
    since = record.get("since")
    at = (datetime.fromisoformat(since.replace("Z", "+00:00")).timestamp()
          if isinstance(since, str) else None)
    step = record.get("step") if isinstance(record.get("step"), int) else None
    finish = None
    if record["state"] == FINISHED:
        if at is None or step is None:
            return None
        target = record.get("target")
        finish = Finish(at, step, str(record.get("finished_by")),
                        float(target) if isinstance(target, int | float) else None)
    return RunState(str(record["state"]), at, step, finish)


def run_finish(series: Series, runs: Sequence[RunRecord], config: RunConfig) -> Finish | None:
    """Return how the run finished, or None while it has not (see the module docstring)."""
    if not len(series):
        return None
    last = int(np.argmax(series.timestamp))
    at, step = float(series.timestamp[last]), int(series.step[last])
    newest = _newest_run(series, runs)
    steps = canonical(newest.config, "train_steps", config) if newest is not None else None
    # A trainer counts steps from 0 or from 1: its last step is `steps - 1` or `steps`.
    if steps is not None and int(series.step.max()) >= steps - 1:
        return Finish(at, step, BY_STEPS, float(steps))
    tokens = series.finite("total_tokens")
    budget = config.run.token_budget
    if tokens is not None and tokens[1].size and float(tokens[1][-1]) >= budget:
        return Finish(at, step, BY_BUDGET, budget)
    if newest is not None and newest.state == FINISHED:
        return Finish(at, step, BY_WANDB)
    if config.run.finished:
        return Finish(at, step, BY_CONFIG)
    return None


def run_state(series: Series, finish: Finish | None, config: RunConfig,
              as_of: datetime | None) -> RunState:
    """Return the run's state as of `as_of` (the snapshot's time; None: the newest row's),
    given `finish` (run_finish of the same or a later view of the series)."""
    if not len(series):
        return RunState(RUNNING, None, None)
    last = int(np.argmax(series.timestamp))
    t, step = float(series.timestamp[last]), int(series.step[last])
    # The finish is the newest row of its view: rows after it mean the run was resumed.
    if finish is not None and finish.at == t:
        return RunState(FINISHED, finish.at, step, finish)
    now = as_of.timestamp() if as_of is not None else t
    if now - t > config.failures.gap_minutes * 60.0:
        return RunState(STALLED, t, step)
    return RunState(RUNNING, None, step)


def _newest_run(series: Series, runs: Sequence[RunRecord]) -> RunRecord | None:
    """Return the record of the W&B run that logged the newest row (None: no record)."""
    newest = str(series.run[int(np.argmax(series.timestamp))])
    return next((r for r in runs if r.id == newest), None)


def _iso(ts: float | None) -> str | None:
    return iso(datetime.fromtimestamp(ts, tz=UTC)) if ts is not None else None
