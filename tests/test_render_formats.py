"""render/formats.py: one number format everywhere, no negative zero, proper plurals."""

from __future__ import annotations

import math

import pytest

from chronicle.render.formats import (
    MISSING,
    fmt_duration,
    fmt_num,
    fmt_pct,
    fmt_plain,
    fmt_points,
    fmt_si,
    fmt_si_signed,
    fmt_signed,
    fmt_usd,
    fmt_value,
    plural,
    vega_si,
)


@pytest.mark.parametrize(("value", "text"), [
    (2.5e6, "2.5M"), (3.69e12, "3.69T"), (2.07e11, "207B"), (18e12, "18T"), (1234, "1.23K"),
    (999_960, "1M"), (999_400, "999K"), (12.345, "12.3"), (0, "0"), (-2.5e6, "−2.5M"),
])
def test_si_has_three_significant_digits_and_short_scale_names(value: float, text: str) -> None:
    assert fmt_si(value) == text
    assert fmt_si(value, " tok/s") == text + " tok/s"


def test_changes_never_show_a_negative_zero() -> None:
    assert fmt_signed(-0.0001) == "0.000"
    assert fmt_signed(-0.004) == "−0.004" and fmt_signed(0.0123) == "+0.012"
    assert fmt_points(-0.00001) == "0.0 pp" and fmt_points(0.012) == "+1.2 pp"
    assert fmt_num(-0.0001) == "0.000" and fmt_num(-1.5, 1) == "−1.5"
    assert fmt_si_signed(0) == "0" and fmt_si_signed(-3e8) == "−300M"
    assert fmt_usd(-12.4) == "−$12" and fmt_usd(7.2e6) == "$7,200,000"


def test_plurals() -> None:
    assert plural(1, "failure") == "1 failure"
    assert plural(2, "failure") == "2 failures"
    assert plural(0, "restart") == "0 restarts"
    assert plural(1, "entry", "entries") == "1 entry"
    assert plural(3, "entry", "entries") == "3 entries"
    assert plural(12_000, "row") == "12,000 rows"


@pytest.mark.parametrize("missing", [None, math.nan, math.inf, "x", True])
def test_missing_is_never_zero(missing: object) -> None:
    for fmt in (fmt_num, fmt_signed, fmt_pct, fmt_si, fmt_duration, fmt_plain, fmt_usd):
        assert fmt(missing) == MISSING


def test_plain_readings_and_value_kinds() -> None:
    assert fmt_plain(3.0) == "3.0" and fmt_plain(5.92) == "5.92" and fmt_plain(400) == "400"
    assert fmt_value(0.07, "fraction") == "7.0%"
    assert fmt_value(15, "percent") == "15.0%"
    assert fmt_value(2e6, "si", "tok/s") == "2M tok/s"
    assert fmt_value(3e-4, "sci") == "3e−4"
    assert fmt_duration(5400) == "1 h 30 min" and fmt_duration(200_000) == "2 d 8 h"


def test_charts_format_like_the_text() -> None:
    expr = vega_si("datum.value")
    assert "'.3~s'" in expr and "'G', 'B'" in expr and "'k', 'K'" in expr
