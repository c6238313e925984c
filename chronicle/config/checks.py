"""Config stage: the checks keys are declared with (each returns the value or raises Invalid).

Every message says what was expected, with an example, and echoes the bad value cut to
~80 characters. Numbers are finite (YAML's `.nan` / `.inf` are refused everywhere) and
dates fall between FIRST_DAY and LAST_DAY, so no later date arithmetic can overflow.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Mapping
from datetime import UTC, date, datetime
from typing import Any

from chronicle.clean import clean_text, plain_url
from chronicle.config.fields import Check, Invalid, Problem, key_text, show, suggest, type_name
from chronicle.models import parse_time

FIRST_DAY = date(1970, 1, 1)
LAST_DAY = date(2100, 12, 31)
_ISO_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
# A URL echoed into HTML attributes, feeds and citations: scheme, host, optional port and
# path only, from characters that need no escaping anywhere (no quotes, <>, spaces, \).
# A DOI as CFF 1.2.0 writes one (its schema's pattern, less the backslash): the name alone,
# never the resolver URL; it is written as is into BibTeX, CSL-JSON and links.
_DOI = re.compile(r"^10\.\d{4,9}(\.\d+)?/[A-Za-z0-9:/_;.()\[\]-]+$")
_LINK = re.compile(
    r"^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?([/?#][^\s\"'<>\\`{}|^\x00-\x1f\x7f-\x9f]*)?$")


def text(expected: str = "a non-empty string", *, empty: bool = False) -> Check:
    """A string (stripped) without control characters; `empty` allows ''."""

    def check(value: Any) -> str:
        if isinstance(value, str) and (empty or value.strip()):
            return no_controls(value).strip()
        raise Invalid(f"expected {expected}, got {show(value)}")

    return check


def no_controls(value: str) -> str:
    """Return `value`; Invalid when it holds a control character (an escape, a NUL: a
    feed cannot hold one, a terminal obeys one), naming the first and where it is."""
    if clean_text(value) == value:
        return value
    at = next(i for i, ch in enumerate(value) if clean_text(ch) != ch)
    raise Invalid(f"holds a control character (U+{ord(value[at]):04X}) at character "
                  f"{at + 1}: remove it (in YAML, an escape such as \"\\x07\" in double "
                  "quotes writes one)")


def choice(options: tuple[str, ...]) -> Check:
    """One of `options`, with a suggestion for a near miss."""

    def check(value: Any) -> str:
        if isinstance(value, str) and value in options:
            return value
        raise Invalid(f"expected one of {', '.join(options)}, got {show(value)}"
                      f"{suggest(value, options)}")

    return check


def boolean(value: Any) -> bool:
    """true or false."""
    if isinstance(value, bool):
        return value
    raise Invalid(f"expected true or false, got {show(value)}")


def integer(low: int | None = None, high: int | None = None, what: str = "a whole number",
            ) -> Check:
    """A whole number in [low, high]."""
    bounds = _bounds(low, high)

    def check(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise Invalid(f"expected {what}{bounds}, got {show(value)}")
        if (low is not None and value < low) or (high is not None and value > high):
            raise Invalid(f"expected {what}{bounds}, got {show(value)}")
        return value

    return check


def number(low: float | None = None, high: float | None = None, *, above: bool = False,
           example: str = "", what: str = "") -> Check:
    """A finite number >= low (> low when `above`) and <= high.

    PyYAML (YAML 1.1) reads 18.0e12 as a string: it wants 18.0e+12. Strings that parse
    as a number are accepted.
    """
    expected = what or _number_words(low, high, above)
    eg = f" (e.g. {example})" if example else ""

    def check(value: Any) -> float:
        got = value
        if isinstance(value, str):
            with contextlib.suppress(ValueError):
                value = float(value)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise Invalid(f"expected {expected}{eg}, got {show(got)}")
        value = float(value)
        if not math.isfinite(value):
            raise Invalid(f"expected {expected}{eg}, got {show(got)} (NaN and infinity are "
                          "not numbers a chronicle can use)")
        too_low = low is not None and (value <= low if above else value < low)
        if too_low or (high is not None and value > high):
            raise Invalid(f"expected {expected}{eg}, got {show(got)}")
        return value

    return check


def day(value: Any) -> date:
    """A date like 2026-08-20 between FIRST_DAY and LAST_DAY (a time's date counts)."""
    expected = f"expected a date like 2026-08-20, got {show(value)}"
    if isinstance(value, datetime):
        value = value.date()
    elif isinstance(value, str):
        try:
            value = date.fromisoformat(value.strip())
        except ValueError as err:
            raise Invalid(expected + _why(value, err)) from err
    if not isinstance(value, date):
        raise Invalid(expected)
    if not FIRST_DAY <= value <= LAST_DAY:
        raise Invalid(expected + _RANGE)
    return value


def utc_time(value: Any) -> datetime:
    """A time like 2026-09-02T04:10:00Z (no zone means UTC; a bare date is midnight)."""
    expected = f"expected a UTC time like 2026-09-02T04:10:00Z, got {show(value)}"
    if isinstance(value, date) and not isinstance(value, datetime):
        value = datetime(value.year, value.month, value.day, tzinfo=UTC)
    try:
        parsed = parse_time(value) if isinstance(value, datetime | str) else None
    except (ValueError, OverflowError) as err:
        raise Invalid(expected + _why(value, err)) from err
    if parsed is None:
        raise Invalid(expected)
    if not FIRST_DAY <= parsed.date() <= LAST_DAY:
        raise Invalid(expected + _RANGE)
    return parsed.astimezone(UTC)


_RANGE = f" (outside {FIRST_DAY.year} to {LAST_DAY.year})"


def _why(value: Any, err: Exception) -> str:
    """Say why a date-shaped string is no date: `2026-02-30` reaches checks as a string
    (config/yaml.py keeps what PyYAML cannot build), and 'day is out of range' helps."""
    looks_iso = isinstance(value, str) and _ISO_DAY.match(value.strip()[:10])
    return f" ({err})" if looks_iso else ""


def strings(example: str) -> Check:
    """A list of non-empty strings."""

    def check(value: Any) -> tuple[str, ...]:
        if isinstance(value, list) and all(isinstance(v, str) and v.strip() for v in value):
            return tuple(no_controls(v) for v in value)
        raise Invalid(f"expected a list of strings, e.g. {example}, got {show(value)}")

    return check


def issue_numbers(value: Any) -> tuple[int, ...]:
    """A list of GitHub issue numbers."""
    if isinstance(value, list) and all(
        isinstance(v, int) and not isinstance(v, bool) and 0 < v < 2**31 for v in value
    ):
        return tuple(value)
    raise Invalid(f"expected a list of issue numbers, e.g. [8435, 8506], got {show(value)}")


def repo(value: Any) -> str:
    """A GitHub owner/name."""
    if isinstance(value, str) and _REPO.match(value):
        return value
    raise Invalid(f"expected owner/name, e.g. marin-community/marin, got {show(value)}")


def site_url(value: Any) -> str:
    """A plain http(s) URL of a folder, ending in '/': no userinfo, query or fragment."""
    if isinstance(value, str) and plain_url(value.strip()):
        value = value.strip()
        return value if value.endswith("/") else value + "/"
    raise Invalid(f"expected a plain http(s) URL, e.g. https://example.org/chronicle/ "
                  f"(no quotes, spaces, <>, user@, ?query or #fragment), got {show(value)}")


def doi_name(value: Any) -> str:
    """A DOI name such as 10.5281/zenodo.1234567 (not its https://doi.org/ URL)."""
    if isinstance(value, str) and _DOI.match(value.strip()):
        return value.strip()
    raise Invalid("expected a DOI, e.g. 10.5281/zenodo.1234567 (the name alone, without "
                  f"https://doi.org/), got {show(value)}")


def links(value: Any) -> tuple[str, ...]:
    """A list of one or more http(s) URLs (queries and fragments allowed)."""
    if isinstance(value, list) and value and all(
        isinstance(u, str) and _LINK.match(u) for u in value
    ):
        return tuple(value)
    raise Invalid("expected a list of one or more http(s) URLs, e.g. "
                  f"[https://github.com/owner/repo/issues/123], got {show(value)}")


def name_map(values: Check, example: str) -> Check:
    """A mapping of names to values that each pass `values`; one problem per bad entry."""

    def check(value: Any) -> dict[str, Any]:
        if not isinstance(value, Mapping):
            raise Invalid(f"expected a mapping of names, e.g. {example}, "
                          f"got {type_name(value)}")
        out: dict[str, Any] = {}
        problems: list[Problem] = []
        for name, item in value.items():
            if not isinstance(name, str):
                problems.append((key_text(name), f"expected a name (a string), e.g. {example}"))
                continue
            try:
                out[name] = values(item)
            except Invalid as err:
                problems += err.at(key_text(name))
        if problems:
            raise Invalid(problems=problems)
        return out

    return check


def _bounds(low: float | None, high: float | None) -> str:
    if low is not None and high is not None:
        return f" from {low:,} to {high:,}"
    if low is not None:
        return " >= 1" if low == 1 else f" >= {low:,}"
    return f" <= {high:,}" if high is not None else ""


def _number_words(low: float | None, high: float | None, above: bool) -> str:
    if above and low == 0 and high is None:
        return "a positive number"
    if above:
        return f"a number > {low:g}" + (f" and <= {high:g}" if high is not None else "")
    if low is not None and high is not None:
        return f"a number from {low:g} to {high:g}"
    if low is not None:
        return f"a number >= {low:g}"
    return f"a number <= {high:g}" if high is not None else "a number"

