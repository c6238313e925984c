"""render/home.py: the dashboard's sentences stay true at the start and the end of a run."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from chronicle.analysis.series import build_series
from chronicle.models import RunRecord
from chronicle.render.home import HomeInputs, progress, render_home
from chronicle.render.i18n import ENGLISH
from chronicle.store import rows_to_table
from tests.support.config import make_config

T0 = datetime(2026, 8, 20, tzinfo=UTC).timestamp()


def _inputs(tokens_per_row: float, state: str = "running") -> HomeInputs:
    config = make_config()  # token budget 18T
    rows = [{"run": "r", "step": i * 10, "timestamp": T0 + i * 600.0, "train/loss": 2.0,
             "throughput/total_tokens": (i + 1) * tokens_per_row} for i in range(300)]
    runs = [RunRecord("r", "r", state, datetime(2026, 8, 20, tzinfo=UTC), None)]
    series = build_series(rows_to_table(rows), runs, config)
    day: Any = {"date": "2026-08-21", "day": 2, "title": "Day 2", "loss": {}, "moe": {},
                "throughput": {}, "tokens": {"day": 144 * tokens_per_row}}
    return HomeInputs(config, [day], series, [], [], None, [], runs)


def test_before_the_budget_the_home_page_gives_an_eta() -> None:
    i = _inputs(1e10)  # 3T after 300 rows
    now = datetime.fromtimestamp(T0 + 299 * 600, tz=UTC)
    facts = progress(i, now, 3e12)
    assert facts["reached"] is None and facts["finished"] is None and facts["eta"]


def test_after_the_budget_it_says_when_it_was_reached() -> None:
    i = _inputs(1e11, "finished")  # crosses 18T at row 179
    now = datetime.fromtimestamp(T0 + 299 * 600, tz=UTC)
    facts = progress(i, now, 3e13)
    assert facts["reached"] == datetime.fromtimestamp(T0 + 179 * 600, tz=UTC).date().isoformat()
    assert facts["eta"] is None and facts["finished"] == now.date().isoformat()
    assert facts["progress_pct"] == 100.0


def test_home_renders_before_any_day_is_sealed() -> None:
    i = _inputs(1e10)
    out: dict[str, str | bytes] = {}
    page = render_home(HomeInputs(i.config, [], i.series, [], [], None, [], []), out, ENGLISH)
    assert "No day has been sealed yet" in page
    assert sorted(p for p in out if p.endswith(".vl.json")) == [
        "home/dropping.vl.json", "home/prediction.vl.json", "home/risks.vl.json"]
    assert "3T of 18T tokens (16.7% of the budget)" in page


def test_a_run_that_ends_short_of_the_budget_says_so() -> None:
    i = _inputs(17.99e12 / 300, "finished")
    out: dict[str, str | bytes] = {}
    page = render_home(i, out, ENGLISH)
    assert "18T of 18T tokens (99.9% of the budget): the run finished 10B tokens short" in page
    assert "would be reached" not in page and "the run finished on" in page
