"""Times as chronicle keeps them (kernel): aware UTC datetimes in memory, ISO 8601 strings
ending in "Z" on disk."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any, Protocol


class Archived(Protocol):
    """A stored snapshot as pages name it: its id and when it was taken."""

    @property
    def id(self) -> str: ...

    @property
    def taken_at(self) -> datetime: ...


def iso(dt: datetime | None) -> str | None:
    """Return `dt` as an ISO 8601 UTC string ending in Z (None stays None)."""
    if dt is None:
        return None
    if dt.tzinfo is None:
        raise ValueError(f"naive datetime {dt!r}: chronicle only handles aware UTC times")
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(value: Any) -> datetime | None:
    """Parse an ISO 8601 string, epoch seconds or datetime into an aware UTC datetime."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, int | float):
        if not math.isfinite(value):
            return None
        return datetime.fromtimestamp(float(value), tz=UTC)
    text = str(value).strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    parsed = datetime.fromisoformat(text)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def required_time(value: Any) -> datetime:
    parsed = parse_time(value)
    if parsed is None:
        raise ValueError("missing timestamp")
    return parsed
