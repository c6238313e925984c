"""render/change_text.py: a change said in the site's words and numbers."""

from __future__ import annotations

from chronicle.render.change_text import describe, marker_label, token_pair
from chronicle.render.i18n import ENGLISH, language


def test_a_budget_change_keeps_three_digits_unless_more_tell_it_apart() -> None:
    # Not "18.000T tokens → 17.820T tokens": the site writes three significant digits.
    assert token_pair(18e12, 17.82036e12, ENGLISH) == ("18T tokens", "17.8T tokens")
    assert token_pair(18e12, 18.0004e12, ENGLISH) == ("18T tokens", "18.0004T tokens")
    assert token_pair(18e12, None, ENGLISH) == ("18T tokens", "unknown")
    change = {"kind": "budget", "before": 18e12, "after": 17.82036e12, "id": "b",
              "time": "2026-09-13T10:00:00Z", "step": 97_530, "budget_fraction": 0.25}
    assert marker_label(change, ENGLISH) == "budget 18T → 17.8T"  # short: not cut
    assert "18T tokens → 17.8T tokens at step 97,530 (25.0% of the budget)" in describe(
        change, ENGLISH)
    assert marker_label(change, language("zh")) == "预算 18万亿 → 17.82万亿"
