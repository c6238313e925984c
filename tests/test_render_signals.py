"""render/signals.py: the three signals' verdicts, true at any point of the run."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import numpy as np

from chronicle.analysis.signals import (
    BASELINE_LAST_DAY,
    BASELINE_RISK,
    dropping_facts,
    signals,
)
from chronicle.models import FailureRecord
from chronicle.render.i18n import ENGLISH, language
from chronicle.render.panels import residual_chart, risk_timeline
from chronicle.render.signal_charts import after_spikes
from chronicle.render.signals import (
    drop_rows,
    dropping_verdict,
    prediction_verdict,
    risk_rows,
    risks_verdict,
    short_verdict,
    signals_json,
)


def _day(date: str, f: float, p50: float, phase: str = "pretraining",
         by_length: dict[str, Any] | None = None) -> dict[str, Any]:
    moe: dict[str, Any] = {"drop_fraction_p50": p50, "drop_fraction_max": p50 * 2}
    if by_length is not None:
        moe["by_sequence_length"] = by_length
    return {"date": date, "phase": phase, "tokens": {"budget_fraction": f}, "moe": moe}


def test_prediction_verdict_names_the_side_and_the_band() -> None:
    p = {"actual": 2.1, "predicted": 2.09, "residual": 0.01, "fraction": 0.45, "low": 2.078,
         "high": 2.102, "outside_band": False}
    text = prediction_verdict(p, ENGLISH)
    assert text == ("Eval loss 2.100 at 45.0% of the budget is 0.0100 above the prediction "
                    "(2.090): inside the band (±0.0120).")
    assert "outside the band" in prediction_verdict({**p, "outside_band": True}, ENGLISH)
    assert "below" in prediction_verdict({**p, "residual": -0.01}, ENGLISH)
    assert prediction_verdict(None, ENGLISH).startswith("No eval")
    assert prediction_verdict(None, ENGLISH, configured=False).startswith("No loss prediction")


def test_dropping_per_phase_until_sequence_lengths_are_recorded() -> None:
    days = [_day("2026-08-20", 0.01, 0.004), _day("2026-08-21", 0.02, 0.005)]
    rows, kind = drop_rows(days, ENGLISH)
    assert kind == "phase" and [r["regime"] for r in rows] == ["pretraining"] * 2
    assert dropping_verdict(dropping_facts(days), ENGLISH) == (
        "Token dropping: 0.50% p50 on 2026-08-21, one phase so far (pretraining).")
    # With the day's alert check, the sentence says what the check said.
    checked = [*days[:1], {**days[1], "health": _health("pass", 0.006)}]
    assert dropping_verdict(dropping_facts(checked), ENGLISH).endswith(
        "; below the alert line at 7.0% in every 60 minutes (worst 0.60%).")


def _health(status: str, value: float) -> dict[str, Any]:
    return {"checks": [{"id": "drop_fraction", "metric": ["drop_fraction"], "status": status,
                        "value": value, "threshold": 0.07, "rule": "p50 > 0.07",
                        "window_minutes": 60}]}


CONTEXT_DAYS = [
    _day("2026-11-01", 0.79, 0.03, by_length={"4096": {"p50": 0.03, "rows": 10}}),
    _day("2026-11-02", 0.80, 0.03, by_length={"4096": {"p50": 0.028, "rows": 5},
                                               "16384": {"p50": 0.09, "rows": 5}}),
    {**_day("2026-11-03", 0.81, 0.066, by_length={"16384": {"p50": 0.066, "rows": 10}}),
     "health": _health("warn", 0.071)},
]


def test_dropping_rebound_after_a_context_extension_has_one_baseline() -> None:
    rows, kind = drop_rows(CONTEXT_DAYS, ENGLISH)
    assert kind == "sequence length"
    assert {r["regime"] for r in rows} == {"4,096 tokens", "16,384 tokens"}
    facts = dropping_facts(CONTEXT_DAYS)
    assert (facts["sequence_length"], facts["baseline_sequence_length"]) == (16384, 4096)
    assert facts["baseline_p50"] == 0.028 and facts["baseline"] == BASELINE_LAST_DAY
    text = dropping_verdict(facts, ENGLISH)
    assert text.startswith("Token dropping at 16,384 tokens: 6.60% p50 on 2026-11-03, against "
                           "2.80% at 4,096 tokens (its p50 on 2026-11-02, the last day of it): "
                           "×2.4")
    # The day's p50 is under the line, but its alert check warned: the sentence says so.
    assert text.endswith("; its alert check fired: 7.10% in its worst 60 minutes, above the "
                         "line at 7.0%.")
    assert "below" not in text


def test_a_rebound_risk_point_gives_dropping_its_baseline() -> None:
    risk = {"id": "drop-rebound", "title": "Rebound", "after": "sequence_length",
            "metric": ["moe/drop_fraction"], "baseline": 0.027, "status": "triggered",
            "watch": [0.8, 1.0], "since": "2026-11-02",
            "evidence": {"date": "2026-11-02", "value": 2.55, "threshold": 2.0}}
    days = [*CONTEXT_DAYS[:2], {**CONTEXT_DAYS[2], "risks": [risk]}]
    facts = dropping_facts(days)
    assert facts["baseline_p50"] == 0.027 and facts["baseline"] == BASELINE_RISK
    assert facts["ratio"] == 0.066 / 0.027
    assert "against 2.70% at 4,096 tokens (its p50 over the 24 h before the change): ×2.4" \
        in dropping_verdict(facts, ENGLISH)
    # The same figures and sentence in api/signals.json, in each language.
    for lang in (ENGLISH, language("zh")):
        data = signals_json(signals(days), [risk], lang)
        assert data["dropping"]["verdict"] == dropping_verdict(facts, lang)
        assert data["dropping"]["baseline_p50"] == 0.027
        assert data["risks"]["first_fired"] == {"id": "drop-rebound", "date": "2026-11-02"}
        point = data["risks"]["points"][0]
        assert (point["value"], point["threshold"]) == (2.55, 2.0)
    assert data["risks"]["points"][0]["verdict"] == "于 2026年11月2日触发：2.550，阈值 2.0"


def _risk(rid: str, status: str, evidence: str | None = None) -> dict[str, Any]:
    return {"id": rid, "title": rid.title(), "watch": [0.2, 0.25], "status": status,
            "since": "2026-09-01", "evidence": {"date": evidence} if evidence else None}


def test_risks_verdict_names_the_first_to_fire() -> None:
    records = [_risk("b", "triggered", "2026-09-10"), _risk("a", "triggered", "2026-09-03"),
               _risk("c", "watching"), _risk("d", "upcoming")]
    assert risks_verdict(records, ENGLISH) == (
        "A fired first, on 2026-09-03; 1 other risk point fired "
                                      "since; 1 watching, 1 upcoming.")
    assert risks_verdict([_risk("c", "watching"), _risk("d", "passed")], ENGLISH) == (
        "No risk point has fired; watching C (20%–25% of the budget); 1 watching, 1 passed.")
    assert risks_verdict([_risk("d", "passed")], ENGLISH) == (
        "No risk point fired: the one configured passed its window.")
    assert risks_verdict([_risk("d", "passed"), _risk("e", "passed")], ENGLISH) == (
        "No risk point fired: all 2 passed their windows.")
    assert risks_verdict([], ENGLISH).startswith("No risk points are configured")
    rows = risk_rows(records, {"2026-09-03": 0.21})
    assert rows[1]["at"] == 0.21 and rows[0]["at"] is None and rows[2]["at"] is None


def test_a_feed_title_carries_the_days_verdict_in_a_few_words() -> None:
    risk = {"id": "r", "title": "R", "status": "triggered", "watch": [0.8, 1.0],
            "since": "2026-11-03", "evidence": {"date": "2026-11-03", "value": 2.4,
                                                 "threshold": 2.0}}
    day = {**CONTEXT_DAYS[2], "run_state": {"state": "finished"}, "risks": [risk],
           "prediction": {"outside_band": False, "residual": 0.001}}
    days = [*CONTEXT_DAYS[:2], day]
    assert short_verdict(day, dropping_facts(days), ENGLISH) == (
        "run finished, loss on the prediction, dropping ×2.4, risk point “R” fired")
    assert short_verdict(day, dropping_facts(days), language("zh")) == (
        "运行已结束、损失符合预测、丢弃率 ×2.4、风险点“R”触发")
    # A quiet day says nothing: its title stays the page's.
    assert short_verdict(CONTEXT_DAYS[0], dropping_facts(CONTEXT_DAYS[:1]), ENGLISH) == ""


def test_the_feeds_titles_gain_the_verdict_and_keep_the_rest() -> None:
    from chronicle.site.publish.daily_feed import _fill_json, _fill_rss

    guid = "https://x.test/days/2026-11-03.html"
    rss = ("<?xml version='1.0' encoding='UTF-8'?><rss version='2.0'><channel><title>T</title>"
           f"<item><title>Day 3 · 2026-11-03</title><guid>{guid}</guid>"
           "<description>d</description></item>"
           "<item><title>Day 2</title><guid>other</guid></item></channel></rss>")
    out = _fill_rss(rss, {}, {}, {guid: "run finished & over"})
    assert "<title>Day 3 · 2026-11-03 · run finished &amp; over</title>" in out
    assert "<title>Day 2</title>" in out and "<title>T</title>" in out
    doc = {"items": [{"id": guid, "title": "Day 3"}, {"id": "other", "title": "Day 2"}]}
    titles = [i["title"] for i in _fill_json(doc, {}, {guid: "stalled"})["items"]]
    assert titles == ["Day 3 · stalled", "Day 2"]


def test_the_risk_timeline_draws_each_stretch_in_the_status_it_had() -> None:
    # A risk watched over the whole run that waited for the context change at 82% is
    # drawn upcoming until then and triggered after, not triggered from 0% to 100%.
    def day(date: str, status: str, evidence: str | None = None) -> dict[str, Any]:
        return {"date": date, "risks": [{**_risk("rebound", status, evidence),
                                         "watch": [0.0, 1.0]}]}

    history = [day("2026-11-01", "upcoming"), day("2026-11-02", "upcoming"),
               day("2026-11-03", "triggered", "2026-11-03"),
               day("2026-11-04", "triggered", "2026-11-03")]
    fraction_of = {"2026-11-01": 0.80, "2026-11-02": 0.82, "2026-11-03": 0.84,
                   "2026-11-04": 0.86}
    [row] = risk_rows(history[-1]["risks"], fraction_of, history)
    assert row["segments"] == [(0.0, 0.82, "upcoming"), (0.82, 0.86, "triggered")]
    assert row["at"] == 0.84
    spec = risk_timeline([row], 0.86, title="", description="d", lang=ENGLISH)
    stretches = spec["datasets"]["stretches"]
    assert [(s["f"], s["f2"], s["status"]) for s in stretches] == [
        (0.0, 0.82, "upcoming"), (0.82, 0.86, "triggered")]
    # The triangle is in the legend, white-edged; "now" is written on its rule.
    fired = next(lay for lay in spec["layer"] if "shape" in lay.get("encoding", {}))
    assert fired["encoding"]["shape"]["scale"]["domain"] == ["fired here"]
    assert fired["mark"]["stroke"] == "white"
    assert spec["datasets"]["now"] == [{"f": 0.86, "t": "now"}]


def _failure(kind: str, at: float) -> FailureRecord:
    start = datetime.fromtimestamp(at, UTC)
    return FailureRecord(id=f"{kind}-{at:g}", kind=kind, start=start, end=start,
                         what=f"{kind} at {at:g}")


def test_the_first_eval_after_a_loss_spike_is_marked_on_the_residual_chart() -> None:
    # A residual far off the band right after a loss spike is the spike's, not the
    # prediction's: the chart marks that eval, and its tooltip names the spike.
    evals = np.array([100.0, 200.0, 300.0, 400.0])
    failures = [_failure("loss_spike", 150), _failure("gap", 250),
                _failure("loss_spike", 390), _failure("loss_spike", 500)]
    assert after_spikes(evals, failures) == [None, 0, None, 2]  # none after the last eval
    zh = language("zh")
    for lang, name in ((ENGLISH, "first eval after a loss spike"), (zh, zh.gettext(
            "first eval after a loss spike"))):
        spec = residual_chart([(0.1, 0.001, ""), (0.2, 0.26, "loss spike to 2 at step 7"),
                               (0.3, 0.002, "")], [], title="", description="d", lang=lang)
        assert spec["datasets"]["after-spikes"] == [
            {"f": 0.2, "r": 0.26, "k": name, "what": "loss spike to 2 at step 7"}]
        marked = next(lay for lay in spec["layer"]
                      if lay.get("data", {}).get("name") == "after-spikes")
        assert marked["encoding"]["color"]["scale"]["domain"] == [name]
        assert "what" in [t["field"] for t in marked["encoding"]["tooltip"]]
    assert zh.gettext("first eval after a loss spike") != "first eval after a loss spike"
    plain = residual_chart([(0.1, 0.001, "")], [], title="", description="d", lang=ENGLISH)
    assert "after-spikes" not in plain["datasets"]
