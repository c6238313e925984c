"""The ledger (analysis/ledger.py): every event of the run computed once, and the pages
that read it agreeing with it.

The first half builds ledgers from a few hand-made records (each rule alone: midnight,
overlap, fork, finish, incident, alert, decision, correction). The second reads the
demo's store after eight nights (no site build): the run's totals are the sum of their
days on every page, the fork found after two days were sealed corrects them, and the
days open with what happened in both languages.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from chronicle.analysis.cost import summarize_throughput
from chronicle.analysis.ledger import FIGURES, Ledger, LedgerInputs, build_ledger
from chronicle.analysis.run_state import Finish
from chronicle.analysis.series import build_series
from chronicle.config import RunConfig, load_config
from chronicle.demo import run_demo
from chronicle.models import FailureRecord
from chronicle.render.day import render_day_markdown
from chronicle.render.i18n import ENGLISH, language
from chronicle.site.outputs.inputs import BuildInputs, load_inputs
from chronicle.site.outputs.pages import site_files
from chronicle.store import rows_to_table
from tests.support.config import make_config

DAY1, DAY2, DAY3 = "2026-08-20", "2026-08-21", "2026-08-22"


def at(day: str, hh: int, mm: int = 0) -> datetime:
    return datetime.fromisoformat(day).replace(hour=hh, minute=mm, tzinfo=UTC)


def record(rid: str, kind: str, start: datetime, end: datetime | None,
           what: str = "") -> FailureRecord:
    return FailureRecord(rid, kind, start, end, what or f"{kind} {rid}", source="metrics")


def ledger(config: RunConfig, failures: list[FailureRecord], days: list[dict[str, Any]],
           **more: Any) -> Ledger:
    series = build_series(rows_to_table([]), [], config)
    return build_ledger(LedgerInputs(config, days, series, failures, **more))


def sealed(*dates: str) -> list[dict[str, Any]]:
    return [{"date": d} for d in dates]


# ---------------------------------------------------------------------------
# Each rule alone.

def test_downtime_over_midnight_is_split_and_an_overlap_is_counted_once() -> None:
    config = make_config()
    per_hour = config.run.accelerators.count
    gap = record("gap-1", "gap", at(DAY1, 23), at(DAY2, 1))  # 1 h on each day
    restart = record("restart-1", "restart", at(DAY2, 0, 30), at(DAY2, 1, 30))  # half inside
    got = ledger(config, [gap, restart], sealed(DAY1, DAY2))
    days = got.per_day()
    assert days[DAY1] == {"downtime_seconds": 3600.0, "accelerator_hours_lost": per_hour,
                          "restarts": 1.0}
    # The restart's first half was the gap's: only 01:00-01:30 is new; it still counts
    # one restart, on the day it started.
    assert days[DAY2]["downtime_seconds"] == 3600.0 + 1800.0
    assert days[DAY2]["restarts"] == 1.0
    assert got.totals() == {k: days[DAY1][k] + days[DAY2][k] for k in FIGURES}
    event = next(e for e in got.events if e.id == "downtime:gap-1")
    assert event.days == (DAY1, DAY2)


def test_a_fork_taken_over_within_the_gap_threshold_is_a_restart_without_downtime() -> None:
    config = make_config()
    quick = config.failures.gap_minutes * 60 - 60
    fork = record("fork-1", "fork", at(DAY1, 10), at(DAY1, 10) + timedelta(seconds=quick))
    slow = record("fork-2", "fork", at(DAY1, 12), at(DAY1, 14))
    days = ledger(config, [fork, slow], sealed(DAY1)).per_day()
    assert days[DAY1]["restarts"] == 2.0
    assert days[DAY1]["downtime_seconds"] == 7200.0


def test_nothing_is_counted_after_the_finish_and_no_day_after_it() -> None:
    config = make_config()
    still_open = record("gap-open", "gap", at(DAY2, 20), None)
    finish = Finish(at(DAY2, 21).timestamp(), 5000, "steps", 5000.0)
    got = ledger(config, [still_open], sealed(DAY1, DAY2, DAY3), finish=finish,
                 as_of=at(DAY3, 3).timestamp())
    days = got.per_day()
    assert days[DAY2]["downtime_seconds"] == 3600.0  # 20:00 to the finish at 21:00
    assert days[DAY3]["downtime_seconds"] == 0.0
    told = [e for e in got.events if e.kind == "finish"]
    assert [(e.days, e.facts["step"]) for e in told] == [((DAY2,), 5000)]


def test_an_incident_is_linked_to_the_downtime_it_describes_never_added() -> None:
    config = make_config()
    gap = record("gap-1", "gap", at(DAY1, 10), at(DAY1, 12))
    issue = FailureRecord("gh-7", "issue", at(DAY1, 9), at(DAY1, 13), "NCCL hang",
                          accelerator_hours_lost=9999.0, source="github")
    got = ledger(config, [gap, issue], sealed(DAY1))
    incident = next(e for e in got.events if e.kind == "incident")
    assert incident.links == ("downtime:gap-1",)
    assert incident.facts["accelerator_hours_reported"] == 9999.0
    assert got.totals()["downtime_seconds"] == 7200.0  # the gap's two hours, once
    assert got.totals()["restarts"] == 1.0


def test_every_warned_or_failed_check_is_an_alert_on_its_day() -> None:
    config = make_config()
    days = [{"date": DAY1, "health": {"checks": [
        {"id": "heartbeat", "status": "fail", "when": "2026-08-20T04:00:00Z"},
        {"id": "telemetry_gone", "status": "warn"},
        {"id": "loss_nan", "status": "pass"}]}}]
    alerts = [e for e in ledger(config, [], days).events if e.kind == "alert"]
    assert sorted(e.facts["check"]["id"] for e in alerts) == ["heartbeat", "telemetry_gone"]
    assert all(e.days == (DAY1,) for e in alerts)


def _change(cid: str, kind: str, when: datetime, **more: Any) -> dict[str, Any]:
    return {"id": cid, "kind": kind, "time": when.isoformat(), "step": None,
            "budget_fraction": None, "key": more.get("key", cid), "name": None,
            "before": more.get("before"), "after": more.get("after"), "run": None,
            "parent": None, "evidence": [], "recorded_by": "", "recorded_at": None,
            "detail": {}}


def test_a_budget_change_after_a_risk_point_is_the_decision_taken_there() -> None:
    config = make_config()
    risk = {"id": "go-no-go", "title": "First 25% of the budget", "status": "triggered",
            "evidence": {"date": DAY2}}
    days = [{"date": DAY1, "risks": [{**risk, "status": "upcoming"}]},
            {"date": DAY2, "risks": [risk]}, {"date": DAY3, "risks": [risk]}]
    pull = _change("pr-12", "pull_request", at(DAY2, 15), key="#12")
    budget = _change("budget-1", "budget", at(DAY3, 9), before=18e12, after=17.8e12)
    before_risk = _change("pr-3", "pull_request", at(DAY1, 9), key="#3")
    got = ledger(config, [], days, changes=[before_risk, pull, budget])
    fired = [e for e in got.events if e.kind == "risk_fired"]
    assert [(e.facts["risk"], e.days) for e in fired] == [("go-no-go", (DAY2,))]
    decisions = [e for e in got.events if e.kind == "decision"]
    assert len(decisions) == 1
    decision = decisions[0]
    assert decision.days == (DAY3,)
    assert [c["id"] for c in decision.facts["changes"]] == ["budget-1"]
    assert decision.facts["pull"]["id"] == "pr-12"  # merged after the risk, not pr-3
    assert set(decision.links) == {"risk_fired:go-no-go", "change:budget-1", "change:pr-12"}


def test_a_budget_change_long_after_the_risk_point_is_no_decision_of_it() -> None:
    config = make_config()
    risk = {"id": "go-no-go", "status": "triggered", "evidence": {"date": DAY1}}
    later = at(DAY1, 0) + timedelta(days=10)
    budget = _change("budget-1", "budget", later, before=18e12, after=17e12)
    got = ledger(config, [], [{"date": DAY1, "risks": [risk]}], changes=[budget])
    assert [e for e in got.events if e.kind == "decision"] == []


def test_a_record_stored_after_its_day_was_sealed_corrects_that_day() -> None:
    config = make_config()
    gap = record("gap-late", "gap", at(DAY1, 10), at(DAY1, 11))
    sealed_day1 = {"date": DAY1, "downtime_seconds": 0.0, "restarts": 0}
    days = [sealed_day1, {"date": DAY2, "downtime_seconds": 0.0, "restarts": 0}]
    sealers = {DAY1: ("2026-08-21T031700Z", at(DAY2, 3, 17).timestamp()),
               DAY2: ("2026-08-22T031700Z", at(DAY3, 3, 17).timestamp())}
    found = ("2026-08-22T031700Z", at(DAY3, 3, 17).timestamp())  # stored with day 2's seal
    got = ledger(config, [gap], days, sealers=sealers, first_seen={"gap-late": found})
    fixes = {e.facts["figure"]: e.facts for e in got.events if e.kind == "correction"}
    assert set(fixes) == {"downtime_seconds", "restarts"}
    assert (fixes["downtime_seconds"]["previous"], fixes["downtime_seconds"]["corrected"]) \
        == (0.0, 3600.0)
    assert (fixes["restarts"]["previous"], fixes["restarts"]["corrected"]) == (0, 1)
    assert fixes["restarts"]["announced_in"] == DAY2  # the next entry sealed after it
    assert got.corrected(DAY1, "restarts") == 1 and got.corrected(DAY2, "restarts") is None
    # Stored before the day was sealed: the day already counted it, nothing to correct.
    early = ("2026-08-21T031700Z", at(DAY2, 3, 17).timestamp())
    again = ledger(config, [gap], days, sealers=sealers, first_seen={"gap-late": early})
    assert [e for e in again.events if e.kind == "correction"] == []


# ---------------------------------------------------------------------------
# The demo's store after eight nights, read as a build reads it.

@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> BuildInputs:
    out = tmp_path_factory.mktemp("ledger") / "demo"
    run_demo(out, 8, echo=lambda _: None, build=False)
    return load_inputs(load_config(out))


@pytest.fixture(scope="module")
def pages(demo: BuildInputs) -> dict[str, dict[str, Any]]:
    return {code: site_files(demo, language(code, None, demo.config), bundle=False)
            for code in ("en", "zh")}


def _text(page: Any) -> str:
    return re.sub(r"\\(.)", r"\1", str(page))  # Markdown's escapes taken out


def test_each_total_is_the_sum_of_its_days_on_every_page(
        demo: BuildInputs, pages: Mapping[str, Mapping[str, Any]]) -> None:
    book = demo.ledger
    totals = book.totals()
    for figure in FIGURES:
        assert totals[figure] == pytest.approx(sum(d[figure] for d in book.per_day().values()))
    api = json.loads(pages["en"]["api/ledger.json"])
    assert api["totals"] == pytest.approx(totals)
    # Counts are integers where they are published (26, not 26.0), totals and days alike.
    assert type(api["totals"]["restarts"]) is int
    assert {type(d["restarts"]) for d in api["per_day"].values()} == {int}
    throughput = summarize_throughput(demo.days, book, demo.config)
    assert throughput["restarts"] == totals["restarts"] == 26
    assert throughput["overall"]["downtime_seconds"] == pytest.approx(totals["downtime_seconds"])
    assert throughput["accelerator_hours_lost"] == pytest.approx(
        totals["accelerator_hours_lost"])
    # The same words on the Failures page ("All" row), Throughput and the home page.
    hours = f"{totals['accelerator_hours_lost']:,.0f}"
    failures, through, home = (_text(pages["en"][p]) for p in
                               ("failures.md", "throughput.md", "index.md"))
    assert f"| **All** | **38** | **36 h 33 min** | **{hours}** |" in failures
    assert "| Restarts (gaps, forks and recorded restarts) | 26 |" in through
    assert f"| Accelerator-hours lost (downtime × accelerators) | {hours} |" in through
    assert re.search(rf"36 h 33 min \| 26 restarts, {hours} accelerator-hours lost", home)
    assert "| 停机时间（整个训练） | 36 小时 33 分钟 |" in _text(pages["zh"]["index.md"])


def test_a_fork_found_after_two_days_were_sealed_corrects_them_in_the_next_entries(
        demo: BuildInputs, pages: Mapping[str, Mapping[str, Any]]) -> None:
    book = demo.ledger
    fixes = [e.facts for e in book.events if e.kind == "correction"]
    assert {(f["day"], f["announced_in"]) for f in fixes} == {
        ("2026-08-21", "2026-08-22"), ("2026-08-22", "2026-08-23")}
    assert {f["figure"] for f in fixes if f["day"] == "2026-08-21"} == {
        "data.rows", "downtime_seconds", "loss.train_last", "tokens.day"}
    assert all(f["cause"] == "found_later" for f in fixes)
    # Each total counts the day as corrected, not as sealed.
    day = next(d for d in demo.days if d["date"] == "2026-08-21")
    assert day["downtime_seconds"] < book.per_day()["2026-08-21"]["downtime_seconds"] \
        == book.corrected("2026-08-21", "downtime_seconds")
    # Throughput's row of the day agrees with the corrected downtime beside it: its
    # sustained rate is the corrected tokens over the day's wall-clock.
    rows = summarize_throughput(demo.days, book, demo.config)["days"]
    row = next(r for r in rows if r["date"] == "2026-08-21")
    tokens = book.corrected("2026-08-21", "tokens.day")
    assert tokens < day["tokens"]["day"]
    assert row["sustained"] == pytest.approx(tokens / row["wall_seconds"])
    # The corrections page lists each, linking the entry that announced it; the entry of
    # the next day, sealed with the finding, says it (its page is the sealed one).
    corrections = _text(pages["en"]["corrections.md"])
    assert corrections.count("a fork found after the day was sealed rewound it") == 8
    assert "[2026-08-22](days/2026-08-22.md) | tokens this day | 139B | 125B" in corrections
    entry = (demo.config.docs_dir / "days" / "2026-08-22.md").read_text(encoding="utf-8")
    assert "## Corrections to earlier entries" in entry
    assert "tokens this day 173B → 167B" in _text(entry)
    feed = json.loads(pages["en"]["feed_corrections.json"])
    assert len(feed["items"]) == 2  # one item per corrected day and finding, not per figure


def test_a_sealed_day_opens_with_what_happened_in_both_languages(demo: BuildInputs) -> None:
    day = next(d for d in demo.days if d["date"] == "2026-08-22")
    assert [e["kind"] for e in day["ledger"]].count("downtime") == 6
    english = render_day_markdown(day, {}, demo.config, ENGLISH)
    chinese = render_day_markdown(day, {}, demo.config, language("zh", None, demo.config))
    lead = "**W&amp;B run hero\\-sim\\-e4c188 took over from hero\\-sim\\-fcccd3 at step 7,470"
    assert english.split("\n# ", 1)[1].split("\n\n")[1].startswith(lead)
    head = chinese.split("\n# ", 1)[1].split("\n\n")[1]
    assert head.startswith("**W&amp;B run hero\\-sim\\-e4c188 在第 7,470 步接替"), head
    assert "遥测中断 8 小时 2 分钟" in _text(head) and "其中本日 4 小时 14 分钟" in _text(head)


def test_the_ledger_file_says_each_event_in_each_language(
        pages: Mapping[str, Mapping[str, Any]]) -> None:
    api = json.loads(pages["en"]["api/ledger.json"])
    assert api["schema"] == "chronicle-ledger/1"
    kinds = {e["kind"] for e in api["events"]}
    assert {"downtime", "alert", "incident", "correction", "finish"} <= kinds
    for e in api["events"]:
        assert set(e["text"]) == {"en", "zh"}, e["id"]
        assert e["text"]["en"] and re.search(r"[\u4e00-\u9fff]", e["text"]["zh"]), e["id"]


def test_an_empty_ledger_counts_zero_not_nothing() -> None:
    # A chronicle before its first sealed day: every total is there, at zero.
    empty = ledger(make_config(), [], [])
    assert empty.events == () and empty.totals() == dict.fromkeys(FIGURES, 0.0)
    assert empty.to_json()["totals"] == dict.fromkeys(FIGURES, 0.0)
