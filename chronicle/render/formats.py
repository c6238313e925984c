"""Number and word formats: the one place every page, sentence, chart and feed formats a
value (render stage, pure).

One format everywhere: SI prefixes with three significant digits for counts and rates
(2.5M tok/s, 3.69T tokens, 207B), percentages with one decimal, a true minus sign (−),
no negative zero, proper plurals, and "—" for a missing value (missing is never zero).
The Vega-Lite axes and tooltips use the same rules through `SI_EXPR` / `vega_si`, so a
chart's 2.5M is the text's 2.5M.

Each format follows the language being rendered (render/i18n.py): on Chinese pages large
numbers count in 万 / 亿 / 万亿 (3.69万亿 token, 1938亿, 170万 GPU-hours), dollars are
written 美元 (prices stay in USD), dates 2026年9月8日, times with UTC stated.
"""

from __future__ import annotations

import math
from datetime import date, datetime
from typing import Any

from chronicle.models import parse_time

MISSING = "—"
MINUS = "−"  # U+2212, as d3-format (Vega) prints it
SI_DIGITS = 3
# Short scale names a reader of training-run posts expects (d3's "G" for 1e9 is not one).
_SI = (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3))


def finite(value: Any) -> bool:
    """Return whether `value` is a real, finite number (bools and None are not)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _minus(text: str) -> str:
    return text.replace("-", MINUS)


def _unsigned_zero(value: float, digits: int) -> float:
    # −0.0004 shown with 3 decimals is 0.000, not −0.000.
    return 0.0 if round(value, digits) == 0 else value


def fmt_num(value: Any, digits: int = 3, suffix: str = "") -> str:
    """Return a finite number with `digits` decimals and thousands separators (1,234.5)."""
    if not finite(value):
        return MISSING
    v = _unsigned_zero(float(value), digits)
    return _minus(f"{v:,.{digits}f}") + suffix


def fmt_signed(value: Any, digits: int = 3, suffix: str = "") -> str:
    """Return a change with its sign (+0.012, −0.004); a change that rounds to zero is 0.000."""
    if not finite(value):
        return MISSING
    v = _unsigned_zero(float(value), digits)
    text = f"{v:,.{digits}f}" if v == 0 else f"{v:+,.{digits}f}"
    return _minus(text) + suffix


def fmt_pct(value: Any, digits: int = 1) -> str:
    """Return a fraction (0.0123) as a percentage (1.2%)."""
    if not finite(value):
        return MISSING
    return fmt_num(float(value) * 100, digits, "%")


def fmt_points(value: Any, digits: int = 1, *, zh: bool = False) -> str:
    """Return a change of a fraction in percentage points (+1.2 pp, 0.0 pp; on Chinese
    pages +1.2 个百分点)."""
    if not finite(value):
        return MISSING
    return fmt_signed(float(value) * 100, digits, " 个百分点" if zh else " pp")


def _sig(value: float, digits: int) -> str:
    """Return `value` with `digits` significant digits, trailing zeros trimmed (2.5, 207)."""
    if value == 0:
        return "0"
    places = max(digits - 1 - math.floor(math.log10(abs(value))), 0)
    text = f"{value:.{places}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def fmt_si(value: Any, unit: str = "", *, zh: bool, digits: int = SI_DIGITS) -> str:
    """Return 2.07e11 as 207B, 2.5e6 as 2.5M, 18e12 as 18T (three significant digits, or
    `digits`); on Chinese pages 2070亿, 250万, 18万亿 (fmt_zh)."""
    if not finite(value):
        return MISSING
    v = float(value)
    if zh:
        return _minus(fmt_zh(v) if digits <= SI_DIGITS else _zh_sig(v, digits)) + unit
    for name, scale in _SI:
        if abs(v) >= scale * (1 - 5e-4):  # 999.96K rounds to 1M, not 1000K
            scaled = float(_sig(v / scale, digits))
            if abs(scaled) >= 1000 and name != "T":
                continue
            return _minus(_sig(scaled, digits) + name) + unit
    return _minus(_sig(v, digits)) + unit


def exact_digits(value: float, most: int = 9) -> int:
    """Return the fewest significant digits (at least three) that write `value` as it is:
    a claim of 18.75T is shown as 18.75T, not rounded to the site's 18.8T."""
    for digits in range(SI_DIGITS, most + 1):
        if math.isclose(float(f"{value:.{digits - 1}e}"), value, rel_tol=1e-12, abs_tol=0.0):
            return digits
    return most


def _zh_sig(v: float, digits: int) -> str:
    """Return a large number the Chinese way with `digits` significant digits (18.75万亿)."""
    for name, scale in _ZH_UNITS:
        if abs(v) >= scale:
            return _sig(v / scale, digits) + name
    return _sig(v, digits)


def fmt_si_signed(value: Any, unit: str = "", *, zh: bool) -> str:
    """Return a change in SI form with its sign (+2.5B, −300M, 0)."""
    if not finite(value):
        return MISSING
    v = float(value)
    text = fmt_si(abs(v), unit, zh=zh)
    return text if fmt_si(abs(v), zh=zh) == "0" else ("+" if v > 0 else MINUS) + text


def fmt_count(value: Any) -> str:
    """Return an integer count with thousands separators (1,234)."""
    if not finite(value):
        return MISSING
    return _minus(f"{round(float(value)):,}")


def fmt_usd(value: Any, digits: int = 0, *, zh: bool) -> str:
    """Return dollars rounded to the dollar ($7,201,554; `digits` for prices, $4.22); on
    Chinese pages in 美元, large sums in 万 (720万美元): no yuan is invented."""
    if not finite(value):
        return MISSING
    v = float(value)
    if zh:
        text = fmt_zh(abs(v)) if abs(v) >= 1e4 else f"{abs(v):,.{digits}f}"
        return (MINUS if round(v, digits) < 0 else "") + text + "美元"
    text = f"${abs(v):,.{digits}f}"
    return MINUS + text if round(v, digits) < 0 else text


def fmt_duration(seconds: Any, *, zh: bool) -> str:
    """Return seconds as '2 h 05 min', '12 min' or '3 d 4 h'; in Chinese in the one form
    the glossary gives (2 小时 5 分钟, 12 分钟, 3 天 4 小时)."""
    if not finite(seconds):
        return MISSING
    minutes = round(float(seconds) / 60)
    if minutes >= 48 * 60:
        hours = round(minutes / 60)
        return f"{hours // 24} 天 {hours % 24} 小时" if zh else f"{hours // 24} d {hours % 24} h"
    if minutes >= 60:
        return (f"{minutes // 60} 小时 {minutes % 60} 分钟" if zh
                else f"{minutes // 60} h {minutes % 60:02d} min")
    return f"{minutes} 分钟" if zh else f"{minutes} min"


def fmt_time(value: Any, *, zh: bool, seconds: bool = False) -> str:
    """Return an ISO time or datetime as '2026-09-30 03:17 UTC' (2026年9月30日 03:17 UTC),
    with its seconds if asked ('03:17:05': the time of one logged row)."""
    when = value if isinstance(value, datetime) else parse_time(value)
    if when is None:
        return MISSING
    clock = f"{when:%H:%M:%S}" if seconds else f"{when:%H:%M}"
    if zh:
        return f"{when.year}年{when.month}月{when.day}日 {clock} UTC"
    return f"{when:%Y-%m-%d} {clock} UTC"


def fmt_date(value: Any, *, zh: bool) -> str:
    """Return a date (ISO text, date or datetime) as 2026-09-08 (2026年9月8日)."""
    if isinstance(value, str):
        try:
            value = date.fromisoformat(value[:10])
        except ValueError:
            return value
    if not isinstance(value, date):
        return MISSING
    if zh:
        return f"{value.year}年{value.month}月{value.day}日"
    return value.strftime("%Y-%m-%d")


def fmt_month(value: date, *, zh: bool) -> str:
    """Return a month heading: September 2026 (2026年9月)."""
    if zh:
        return f"{value.year}年{value.month}月"
    return value.strftime("%B %Y")


def fmt_hours(value: Any, *, zh: bool) -> str:
    """Return accelerator-hours: 1,234,567 (123万 on Chinese pages)."""
    if zh and finite(value) and abs(float(value)) >= 1e4:
        return fmt_zh(value)
    return fmt_num(value, 0)


# Chinese groups large numbers by 万 (1e4), 亿 (1e8) and 万亿 (1e12): 18.75万亿 token.
_ZH_UNITS = (("万亿", 1e12), ("亿", 1e8), ("万", 1e4))


def _zh_digits(x: float) -> str:
    """Up to two decimals below 100 (3.69, 18.75), whole numbers above (1938, not 1940)."""
    text = f"{x:.0f}" if abs(x) >= 99.995 else f"{x:.2f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def fmt_zh(value: Any) -> str:
    """Return a large number the Chinese way: 3.69万亿, 1938亿, 170万; below 万 as is."""
    if not finite(value):
        return MISSING
    v = float(value)
    for i, (name, scale) in enumerate(_ZH_UNITS):
        if abs(v) >= scale * 0.99995:
            text = _zh_digits(v / scale)
            # 9999.6亿 rounds to 10000亿: say 1万亿 instead.
            if i and abs(float(text)) >= 1e4:
                return _zh_digits(v / _ZH_UNITS[i - 1][1]) + _ZH_UNITS[i - 1][0]
            return text + name
    return _zh_digits(v) if abs(v) < 100 else f"{v:,.0f}"


def fmt_value(value: Any, kind: str, unit: str = "", *, zh: bool) -> str:
    """Return a metric value by its display kind (see render/metrics.py)."""
    if kind == "si":
        return fmt_si(value, f" {unit}" if unit else "", zh=zh)
    if kind == "fraction":
        return fmt_pct(value, 1)
    if kind == "percent":
        return fmt_num(value, 1, "%")
    if kind == "sci":
        return fmt_sci(value)
    suffix = f" {unit}" if unit else ""
    return fmt_plain(value) + (suffix if finite(value) else "")


def fmt_plain(value: Any) -> str:
    """Return a plain reading: 1.118, 5.92, 3.0 (a whole number keeps one decimal), 400."""
    if not finite(value):
        return MISSING
    v = float(value)
    if v.is_integer() and abs(v) < 100:
        return fmt_num(v, 1)
    if abs(v) >= 100:
        return fmt_num(v, 0)
    return _minus(_sig(v, 4))


def fmt_sci(value: Any) -> str:
    """Return a small or large value in scientific form (3e-4, 1.2e-5)."""
    if not finite(value):
        return MISSING
    mantissa, exponent = f"{float(value):.2e}".split("e")
    mantissa = mantissa.rstrip("0").rstrip(".")
    return _minus(f"{mantissa}e{int(exponent)}")


# --- the same formats for Vega (axes, tooltips) -------------------------------------------

# d3-format's SI form with G read as B and k as K: "2.5M", "3.69T", "207B" (as fmt_si); in
# Chinese the same number counted in 万 / 亿 / 万亿 (as fmt_zh: 2.5M is 250万).
def vega_si(expr: str, unit: str = "", *, zh: bool = False) -> str:
    """Return a Vega expression formatting the number `expr` like fmt_si."""
    if zh:
        text = (f"(abs({expr}) >= 1e12 ? format({expr} / 1e12, '.4~r') + '万亿' : "
                f"abs({expr}) >= 1e8 ? format({expr} / 1e8, '.4~r') + '亿' : "
                f"abs({expr}) >= 1e4 ? format({expr} / 1e4, '.4~r') + '万' : "
                f"format({expr}, '.4~r'))")
    else:
        text = f"replace(replace(format({expr}, '.3~s'), 'G', 'B'), 'k', 'K')"
    return f"{text} + ' {unit}'" if unit else text


def vega_format(kind: str, expr: str, unit: str = "", *, zh: bool = False) -> str:
    """Return a Vega expression formatting `expr` like fmt_value(kind)."""
    if kind == "si":
        return vega_si(expr, unit, zh=zh)
    if kind == "fraction":
        return f"format({expr}, '.1%')"
    if kind == "percent":
        return f"format({expr}, '.1f') + '%'"
    if kind == "sci":
        return f"format({expr}, '.2~e')"
    text = f"format({expr}, '.4~r')"
    return f"{text} + ' {unit}'" if unit else text
