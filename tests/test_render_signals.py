"""render/signals.py: the three signals' verdicts, true at any point of the run."""

from __future__ import annotations

from typing import Any

from chronicle.render.i18n import ENGLISH
from chronicle.render.signals import (
    drop_rows,
    dropping_verdict,
    prediction_verdict,
    risk_rows,
    risks_verdict,
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
    assert dropping_verdict(rows, kind, 0.07, ENGLISH) == (
        "Token dropping: 0.50% p50 on 2026-08-21, one "
                                                   "phase so far (pretraining); below the alert "
                                                   "line at 7.0%.")


def test_dropping_rebound_after_a_context_extension() -> None:
    days = [_day("2026-11-01", 0.79, 0.03, by_length={"4096": {"p50": 0.03, "rows": 10}}),
            _day("2026-11-02", 0.80, 0.03, by_length={"4096": {"p50": 0.03, "rows": 5},
                                                       "16384": {"p50": 0.09, "rows": 5}}),
            _day("2026-11-03", 0.81, 0.09, by_length={"16384": {"p50": 0.12, "rows": 10}})]
    rows, kind = drop_rows(days, ENGLISH)
    assert kind == "sequence length"
    assert {r["regime"] for r in rows} == {"4,096 tokens", "16,384 tokens"}
    text = dropping_verdict(rows, kind, 0.07, ENGLISH)
    assert text.startswith("Token dropping at 16,384 tokens: 12.00% p50 on 2026-11-03, against "
                           "3.00% at 4,096 tokens (×4.0)")
    assert text.endswith("above the alert line at 7.0%.")


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
