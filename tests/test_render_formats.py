"""render/formats.py: one number format everywhere, no negative zero, proper plurals."""

from __future__ import annotations

import math

import pytest

from chronicle.render.formats import (
    MISSING,
    fmt_num,
    fmt_pct,
    fmt_plain,
    fmt_points,
    fmt_signed,
    vega_si,
)
from chronicle.render.i18n import ENGLISH


@pytest.mark.parametrize(("value", "text"), [
    (2.5e6, "2.5M"), (3.69e12, "3.69T"), (2.07e11, "207B"), (18e12, "18T"), (1234, "1.23K"),
    (999_960, "1M"), (999_400, "999K"), (12.345, "12.3"), (0, "0"), (-2.5e6, "−2.5M"),
])
def test_si_has_three_significant_digits_and_short_scale_names(value: float, text: str) -> None:
    assert ENGLISH.si(value) == text
    assert ENGLISH.si(value, " tok/s") == text + " tok/s"


def test_changes_never_show_a_negative_zero() -> None:
    assert fmt_signed(-0.0001) == "0.000"
    assert fmt_signed(-0.004) == "−0.004" and fmt_signed(0.0123) == "+0.012"
    assert fmt_points(-0.00001) == "0.0 pp" and fmt_points(0.012) == "+1.2 pp"
    assert fmt_num(-0.0001) == "0.000" and fmt_num(-1.5, 1) == "−1.5"
    assert ENGLISH.si_signed(0) == "0" and ENGLISH.si_signed(-3e8) == "−300M"
    assert ENGLISH.usd(-12.4) == "−$12" and ENGLISH.usd(7.2e6) == "$7,200,000"


def test_plurals() -> None:
    assert ENGLISH.plural(1, "failure") == "1 failure"
    assert ENGLISH.plural(2, "failure") == "2 failures"
    assert ENGLISH.plural(0, "restart") == "0 restarts"
    assert ENGLISH.plural(1, "entry", "entries") == "1 entry"
    assert ENGLISH.plural(3, "entry", "entries") == "3 entries"
    assert ENGLISH.plural(12_000, "row") == "12,000 rows"


@pytest.mark.parametrize("missing", [None, math.nan, math.inf, "x", True])
def test_missing_is_never_zero(missing: object) -> None:
    for fmt in (fmt_num, fmt_signed, fmt_pct, ENGLISH.si, ENGLISH.duration, fmt_plain,
                ENGLISH.usd):
        assert fmt(missing) == MISSING


def test_plain_readings_and_value_kinds() -> None:
    assert fmt_plain(3.0) == "3.0" and fmt_plain(5.92) == "5.92" and fmt_plain(400) == "400"
    assert ENGLISH.value(0.07, "fraction") == "7.0%"
    assert ENGLISH.value(15, "percent") == "15.0%"
    assert ENGLISH.value(2e6, "si", "tok/s") == "2M tok/s"
    assert ENGLISH.value(3e-4, "sci") == "3e−4"
    assert ENGLISH.duration(5400) == "1 h 30 min" and ENGLISH.duration(200_000) == "2 d 8 h"


def test_charts_format_like_the_text() -> None:
    expr = vega_si("datum.value")
    assert "'.3~s'" in expr and "'G', 'B'" in expr and "'k', 'K'" in expr


def test_a_claim_keeps_the_digits_it_was_made_with() -> None:
    # The site writes three significant digits; a claim of 18.75T tokens is not "18.8T",
    # and the figure it is tested against is shown with as many digits as the claim.
    from chronicle.render.formats import exact_digits, fmt_si
    from chronicle.render.run_pages import _fig

    assert [exact_digits(v) for v in (18e12, 18.75e12, 704.0, 4.22)] == [3, 4, 3, 3]
    assert fmt_si(18.75e12, zh=False, digits=4) == "18.75T"
    assert fmt_si(18.75e12, zh=True, digits=4) == "18.75万亿"
    assert _fig(18.75e12, ENGLISH) == "18.75T"
    assert _fig(17.8237e12, ENGLISH, claimed=18.75e12) == "17.82T"
    assert _fig(17.8237e12, ENGLISH) == "17.8237T"
    assert _fig(None, ENGLISH) == "not known yet"
