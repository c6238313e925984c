"""analysis/run_state.py: a run is running, stalled or finished, and a finished run's
silence is the end, not an outage (no open gap, no downtime, no accelerator-hours, no
telemetry verdict, no projection)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

import numpy as np
import pytest

from chronicle.analysis.cost import summarize_cost
from chronicle.analysis.days import summarize_day
from chronicle.analysis.health import check_all
from chronicle.analysis.incidents import detect_failures
from chronicle.analysis.run_state import (
    FINISHED,
    RUNNING,
    STALLED,
    Finish,
    RunState,
    recorded_state,
    run_finish,
    run_state,
)
from chronicle.analysis.series import Series
from chronicle.models import RunRecord
from tests.support.config import make_config

DAY = date(2026, 8, 21)
START = datetime(2026, 8, 21, tzinfo=UTC).timestamp()
CONFIG = make_config()  # gap_minutes 10 (telemetry_gone), heartbeat at 60 min, budget 18T


def _series(hours: float, *, tokens_per_row: float = 1e9, every: float = 60.0,
            first_step: int = 0) -> Series:
    """A run logging a row a minute from START for `hours`, 10 steps a row."""
    ts = START + np.arange(0.0, hours * 3600.0, every)
    steps = first_step + np.arange(ts.size) * 10
    tokens = (np.arange(ts.size) + 1) * tokens_per_row
    return Series(step=steps, timestamp=ts, run=np.array(["r"] * ts.size, dtype=object),
                  values={"total_tokens": tokens, "loss": np.full(ts.size, 2.0),
                          "tokens_per_second": np.full(ts.size, 1.5 * tokens_per_row / every)},
                  lineage=("r",))


def _run(state: str = "running", steps: int | None = None) -> RunRecord:
    config: dict[str, Any] = ({"trainer": {"trainer": {"num_train_steps": steps}}}
                              if steps is not None else {})
    return RunRecord("r", "r", state, datetime(2026, 8, 20, tzinfo=UTC), None, config)


def _at(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, tz=UTC)


# --- when a run is finished ---------------------------------------------------------

@pytest.mark.parametrize("extra", [0, 1])  # steps counted from 1, or from 0
def test_reaching_the_configured_steps_finishes_the_run_at_its_last_row(extra: int) -> None:
    s = _series(12.0)  # steps 0..7190
    last = int(s.step[-1])
    finish = run_finish(s, [_run(steps=last + extra)], CONFIG)
    assert finish == Finish(float(s.timestamp[-1]), last, "steps", float(last + extra))
    # Two steps short is not the end.
    assert run_finish(s, [_run(steps=last + 2)], CONFIG) is None


def test_the_budget_w_and_b_or_the_config_finish_a_run() -> None:
    s = _series(6.0, tokens_per_row=1e9)  # 360 rows: 360B tokens
    assert run_finish(s, [_run()], CONFIG) is None
    by_budget = run_finish(s, [_run()], make_config(run__token_budget=3.6e11))
    assert by_budget is not None and (by_budget.by, by_budget.target) == ("budget", 3.6e11)
    by_wandb = run_finish(s, [_run("finished")], CONFIG)
    assert by_wandb is not None and by_wandb.by == "wandb" and by_wandb.target is None
    by_config = run_finish(s, [_run()], make_config(run__finished=True))
    assert by_config is not None and by_config.by == "config"
    # W&B's word for a crash is not a finish.
    assert run_finish(s, [_run("crashed")], CONFIG) is None


def test_a_run_is_stalled_after_the_gap_threshold_and_running_before() -> None:
    s = _series(6.0)
    last = float(s.timestamp[-1])
    assert run_state(s, None, CONFIG, _at(last + 9 * 60)).state == RUNNING
    stalled = run_state(s, None, CONFIG, _at(last + 11 * 60))
    assert (stalled.state, stalled.since, stalled.step) == (STALLED, last, int(s.step[-1]))
    finish = Finish(last, int(s.step[-1]), "wandb")
    done = run_state(s, finish, CONFIG, _at(last + 86400))
    assert (done.state, done.since, done.finish) == (FINISHED, last, finish)
    # Rows after a finish: the run was resumed (the finish is an older view's).
    resumed = _series(7.0)
    assert run_state(resumed, finish, CONFIG, _at(float(resumed.timestamp[-1]))).state == RUNNING
    assert run_state(_series(0.0), None, CONFIG, None) == RunState(RUNNING, None, None)


def test_a_recorded_state_reads_back_and_junk_reads_as_none() -> None:
    s = _series(6.0)
    done = run_state(s, Finish(float(s.timestamp[-1]), 3590, "steps", 3591.0), CONFIG, None)
    assert recorded_state(done.to_json()) == done
    stalled = run_state(s, None, CONFIG, _at(float(s.timestamp[-1]) + 3600))
    assert recorded_state(stalled.to_json()) == stalled
    for junk in (None, {}, {"state": "done"}, {"state": "finished", "since": None, "step": 3},
                 "finished", {"state": "finished", "since": "2026-08-21T06:00:00Z"}):
        assert recorded_state(junk) is None  # type: ignore[arg-type]


# --- what a finish means ------------------------------------------------------------

def test_a_finished_run_has_no_open_gap_and_a_stopped_one_has() -> None:
    s = _series(6.0)
    last = float(s.timestamp[-1])
    night = _at(last + 5 * 3600)
    gaps = [f for f in detect_failures(s, CONFIG, night) if f.kind == "gap"]
    assert [(f.end, f.start) for f in gaps] == [(None, _at(last))]
    finish = Finish(last, int(s.step[-1]), "steps", 3591.0)
    assert [f for f in detect_failures(s, CONFIG, night, finish) if f.kind == "gap"] == []


def test_the_day_the_run_finishes_counts_no_wall_clock_or_downtime_after_it() -> None:
    s = _series(6.0)  # 00:00-06:00, then silence
    last = float(s.timestamp[-1])
    sealed = _at(START + 86400 + 3 * 3600)
    running = summarize_day(DAY, s, [], {}, CONFIG, "snap", sealed)
    assert running["accelerator_hours"] == pytest.approx(CONFIG.run.accelerators.count * 24)
    assert running["downtime_seconds"] == pytest.approx(START + 86400 - last)
    state = run_state(s, Finish(last, int(s.step[-1]), "steps", 3591.0), CONFIG, sealed)
    done = summarize_day(DAY, s, [], {}, CONFIG, "snap", sealed, state=state)
    assert done["run_state"]["state"] == "finished"
    assert done["accelerator_hours"] == pytest.approx(
        CONFIG.run.accelerators.count * (last - START) / 3600)
    assert done["downtime_seconds"] == 0.0
    assert done["throughput"]["goodput"] is not None
    assert done["throughput"]["goodput"] > running["throughput"]["goodput"] * 3
    # The day after: nothing ran, nothing was paid for, nothing was down.
    after = summarize_day(DAY + timedelta(days=1), s, [], {}, CONFIG, "snap",
                          sealed + timedelta(days=1), state=state)
    assert (after["accelerator_hours"], after["downtime_seconds"]) == (0.0, 0.0)
    assert after["cost"]["usd"] and set(after["cost"]["usd"].values()) == {0.0}


def test_telemetry_checks_stop_at_the_finish() -> None:
    s = _series(6.0)
    last = float(s.timestamp[-1])
    now = START + 86400 + 3 * 3600

    def telemetry(day: date, finished: float | None) -> dict[str, str]:
        health = check_all(day, s, [], CONFIG, now, None, finished)
        return {c["id"]: c["status"] for c in health["checks"]
                if c["id"] in ("telemetry_gone", "heartbeat")}

    assert telemetry(DAY, None) == {"telemetry_gone": "warn", "heartbeat": "fail"}
    assert telemetry(DAY, last) == {"telemetry_gone": "pass", "heartbeat": "pass"}
    assert telemetry(DAY + timedelta(days=1), last) == {"telemetry_gone": "no-data",
                                                        "heartbeat": "no-data"}


def test_the_cost_of_a_finished_run_has_no_projection() -> None:
    day: dict[str, Any] = {"date": "2026-08-21", "accelerator_hours": 100.0,
                           "tokens": {"cumulative": 1e12, "day": 1e11}}
    running = summarize_cost([day], CONFIG)
    assert running["remaining_days"] == pytest.approx(170.0) and running["finished"] is None
    s = _series(6.0)
    state = run_state(s, Finish(float(s.timestamp[-1]), 3590, "steps", 3591.0), CONFIG, None)
    done = summarize_cost([day], CONFIG, state)
    assert done["remaining_days"] is None and done["projected_usd"] == {}
    assert done["finished"] == {"date": "2026-08-21", "step": 3590, "by": "steps",
                                "target": 3591.0}
