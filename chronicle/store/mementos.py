"""The Wayback mementos a chronicle recorded, and the shape of their record files
(store stage).

`chronicle archive` writes one record file per run that learnt something,
`docs/mementos/<YYYY-MM-DD>T<HHMMSS>Z.json` (never rewritten): the captures that succeeded
(`Memento`) and the ones that ended in an error (`Attempt`, retried on a later night up to
a limit). The next snapshot lists every record file not yet listed in its manifest's
`mementos` (path -> sha256 + size), which puts it in the hash chain: from then on it is
read like any other store file, checked against that manifest (store/read.py), and
`verify` reports it altered or missing. Until then it is *pending*: `archive` reads it
(so a page is never asked for twice), the build does not publish it.

A record is data anyone could have written (a merged pull request, whatever answered at
the archive's address), so it is checked where it enters: every record read is well
formed (`parse_record`: its URLs plain http(s) URLs, its times and days real), and one
about to be chained is this chronicle's own (`record_problems`: each URL one of its pages
of a sealed day, each memento exactly the archive's address of that page at that time).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from chronicle.clean import clean_line, plain_url
from chronicle.models import iso, parse_time
from chronicle.store.files import damaged, parse_json
from chronicle.store.hashing import dump_json

MEMENTOS_DIR = "mementos"
MEMENTOS_FORMAT = "chronicle-mementos/1"
RECORD_NAME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{6}Z\.json$")
MAX_RECORD_BYTES = 4 * 1024 * 1024  # a night asks for 30 captures at most: a few KB


def memento_url(api_url: str, timestamp: datetime, url: str) -> str:
    """Return the Wayback URL of `url` as captured at `timestamp` (`api_url`: the archive's
    base, e.g. https://web.archive.org)."""
    return f"{api_url}/web/{timestamp.astimezone(UTC).strftime('%Y%m%d%H%M%S')}/{url}"


@dataclass(frozen=True)
class Memento:
    """An archived copy of a published page: `url` as captured at `datetime` (UTC), kept
    at `memento`; `day` is the sealed day of a day page, None for the home page."""

    url: str
    memento: str
    datetime: datetime
    day: date | None

    def to_json(self) -> dict[str, Any]:
        return {"url": self.url, "memento": self.memento, "datetime": iso(self.datetime),
                "day": self.day.isoformat() if self.day else None}

    @classmethod
    def from_json(cls, d: Any) -> Memento:
        when = parse_time(_text(d, "datetime"))
        if when is None:
            raise ValueError("datetime: missing")
        return cls(_url(d, "url"), _url(d, "memento"), when.astimezone(UTC), _day(d.get("day")))


@dataclass(frozen=True)
class Attempt:
    """A capture of `url` that the archive answered with an error at `at` (`reason`, its
    `status_ext` or message): counted against the retry limit, never a memento."""

    url: str
    day: date | None
    at: datetime
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"url": self.url, "day": self.day.isoformat() if self.day else None,
                "at": iso(self.at), "reason": self.reason}

    @classmethod
    def from_json(cls, d: Any) -> Attempt:
        when = parse_time(_text(d, "at"))
        if when is None:
            raise ValueError("at: missing")
        return cls(_url(d, "url"), _day(d.get("day")), when.astimezone(UTC),
                   _text(d, "reason"))


@dataclass(frozen=True)
class MementoRecord:
    """One record file: when `archive` wrote it, its mementos and its failed attempts."""

    recorded_at: datetime
    mementos: tuple[Memento, ...]
    attempts: tuple[Attempt, ...]


def _text(d: Any, key: str) -> str:
    value = d[key]
    if not isinstance(value, str) or not value:
        raise ValueError(f"{key}: expected text, got {value!r}")
    return value


def _url(d: Any, key: str) -> str:
    value = _text(d, key)
    if not plain_url(value):
        raise ValueError(f"{key}: not a plain http(s) URL: {value[:80]!r}")
    return value


def _day(value: Any) -> date | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"day: expected a date or null, got {value!r}")
    return date.fromisoformat(value)


# Why a record is not the chronicle's to chain (record_problems, with its pages and archive).
RecordCheck = Callable[["MementoRecord"], list[str]]


def record_problems(record: MementoRecord, site_url: str, api_url: str,
                    sealed: Collection[date]) -> list[str]:
    """Return why `record` is not this chronicle's to chain (empty: it is): each URL must
    be its home page (`site_url`) or the page of a sealed day, and each memento the
    archive's (`api_url`) address of that page at the memento's time."""
    out: list[str] = []
    entries = [("mementos", i, m.url, m.day) for i, m in enumerate(record.mementos)]
    entries += [("attempts", i, a.url, a.day) for i, a in enumerate(record.attempts)]
    for kind, i, url, day in entries:
        page = site_url if day is None else f"{site_url}days/{day.isoformat()}.html"
        if url != page:
            out.append(f"{kind}[{i}].url: {url!r} is not this chronicle's "
                       + ("home page" if day is None else f"page of {day}") + f" ({page})")
        if day is not None and day not in sealed:
            out.append(f"{kind}[{i}].day: {day} is not a sealed day")
    for i, m in enumerate(record.mementos):
        want = memento_url(api_url, m.datetime, m.url)
        if m.memento != want:
            out.append(f"mementos[{i}].memento: {m.memento[:120]!r} is not the archive's copy "
                       f"of the page at {iso(m.datetime)} ({want})")
    for i, a in enumerate(record.attempts):
        if clean_line(a.reason) != a.reason:
            out.append(f"attempts[{i}].reason: holds control characters")
    return out


def record_bytes(recorded_at: datetime, mementos: Iterable[Memento],
                 attempts: Iterable[Attempt]) -> bytes:
    """Return the canonical bytes of a record file."""
    return dump_json({"format": MEMENTOS_FORMAT, "recorded_at": iso(recorded_at),
                      "mementos": [m.to_json() for m in mementos],
                      "attempts": [a.to_json() for a in attempts]})


def parse_record(blob: bytes, path: Path) -> MementoRecord:
    """Return the record in `blob` (read from `path`); StoreError naming it if malformed."""
    what = "mementos record"
    raw = parse_json(blob, path, what, MAX_RECORD_BYTES)
    try:
        if not isinstance(raw, dict) or raw.get("format") != MEMENTOS_FORMAT:
            raise ValueError(f"not a {MEMENTOS_FORMAT} file")
        when = parse_time(raw["recorded_at"])
        if when is None:
            raise ValueError("recorded_at: missing")
        return MementoRecord(when.astimezone(UTC),
                             tuple(Memento.from_json(m) for m in raw["mementos"]),
                             tuple(Attempt.from_json(a) for a in raw["attempts"]))
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise damaged(path, what, f"a malformed record: {err!r}") from err
