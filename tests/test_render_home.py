"""render/home.py: the dashboard's sentences stay true at the start and the end of a run."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from chronicle.analysis.run_state import run_finish, run_state
from chronicle.analysis.series import build_series
from chronicle.models import FailureRecord, RunRecord
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
    finish = run_finish(series, runs, config)
    return HomeInputs(config, [day], series, [], [], None, [], runs,
                      state=run_state(series, finish, config, None))


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
    # Finished at its last row (W&B says so), the day of that row.
    last = datetime.fromtimestamp(T0 + 299 * 600, tz=UTC)
    assert facts["eta"] is None and facts["finished"] == last.date().isoformat()
    assert facts["progress_pct"] == 100.0


def test_home_renders_before_any_day_is_sealed() -> None:
    i = _inputs(1e10)
    out: dict[str, str | bytes] = {}
    page = render_home(HomeInputs(i.config, [], i.series, [], [], None, [], [],
                                  state=i.state), out, ENGLISH)
    assert "No day has been sealed yet" in page
    assert sorted(p for p in out if p.endswith(".vl.json")) == [
        "home/dropping.vl.json", "home/prediction.vl.json", "home/risks.vl.json"]
    assert "3T of 18T tokens (16.7% of the budget)" in page


def test_a_run_that_ends_short_of_the_budget_says_so() -> None:
    i = _inputs(17.99e12 / 300, "finished")
    out: dict[str, str | bytes] = {}
    page = render_home(i, out, ENGLISH)
    assert "18T of 18T tokens (99.9% of the budget): the run finished 10B tokens short" in page
    assert "would be reached" not in page and "**Finished on day 3 of the 10 planned**" \
        in page


def _gap_open_since_the_last_row(i: HomeInputs) -> FailureRecord:
    last = datetime.fromtimestamp(float(i.series.timestamp.max()), tz=UTC)
    return FailureRecord("gap-r-2990", "gap", last, None, "no metrics since step 2990")


def test_a_finished_run_has_no_open_incident() -> None:
    # A chronicle whose snapshots recorded the finish's silence as an open gap (before
    # run states were tracked) still reads as finished, not as an outage.
    i = _inputs(17.99e12 / 300, "finished")
    page = render_home(replace(i, failures=[_gap_open_since_the_last_row(i)]), {}, ENGLISH)
    assert "| Open incidents | 0 | none: the run has finished |" in page
    assert "no metrics since" not in page and "stalled" not in page


def test_a_silent_run_that_has_not_finished_is_stalled_with_its_incident() -> None:
    i = _inputs(1e10)
    last = float(i.series.timestamp.max())
    taken = datetime.fromtimestamp(last + 3 * 3600, tz=UTC)  # three hours without a row
    stalled = run_state(i.series, None, i.config, taken)
    assert stalled.state == "stalled" and stalled.step == 2990
    page = render_home(replace(i, state=stalled, failures=[_gap_open_since_the_last_row(i)]),
                       {}, ENGLISH)
    assert "**stalled**: no metrics since 2026-08-22 01:50 UTC (step 2,990)" in page
    assert "| Open incidents | 1 | no metrics since step 2990" in page
    assert "the run finished" not in page
    # A minute after its last row, the same run is running.
    soon = datetime.fromtimestamp(last + 60, tz=UTC)
    assert run_state(i.series, None, i.config, soon).state == "running"


def test_home_links_every_section_and_the_changes_feed() -> None:
    i = _inputs(1e10)
    sections = [("Archive", "archive.md"), ("Cost", "cost.md"), ("Claims", "claims.md")]
    page = render_home(replace(i, sections=sections), {}, ENGLISH)
    assert "[Archive](archive.md) · [Cost](cost.md) · [Claims](claims.md)" in page
    assert '<nav class="chronicle-sections" aria-label="Sections" markdown>' in page
    assert "[Changes feed](feed_changes.xml) ([JSON](feed_changes.json))" in page


def test_a_chronicle_without_data_says_so() -> None:
    # A fresh scaffold: no row, no sealed day. Not "Day 0 of 100", not "— of 18T tokens".
    i = _inputs(1e10)
    empty = replace(i, series=build_series(rows_to_table([]), [], i.config), days=[],
                    state=None)
    page = render_home(empty, {}, ENGLISH)
    assert "**No data yet.** Day 1 of the run is 2026-08-20; 10 days and 18T tokens" in page
    assert "Day 0" not in page and "of 18T tokens (" not in page

    # A scaffold whose run values are init's examples says that, not Marin's plan.
    example = replace(empty, config=replace(empty.config, run=replace(empty.config.run,
                                                                      example=True)))
    page = render_home(example, {}, ENGLISH)
    assert "are still `chronicle init`'s examples" in page and "are planned" not in page
