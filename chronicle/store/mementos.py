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
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from chronicle.models import iso, parse_time
from chronicle.store.files import damaged, parse_json
from chronicle.store.hashing import dump_json

MEMENTOS_DIR = "mementos"
MEMENTOS_FORMAT = "chronicle-mementos/1"
RECORD_NAME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{6}Z\.json$")


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
        when = parse_time(d["datetime"])
        if when is None:
            raise ValueError("datetime: missing")
        return cls(_text(d, "url"), _text(d, "memento"), when, _day(d.get("day")))


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
        when = parse_time(d["at"])
        if when is None:
            raise ValueError("at: missing")
        return cls(_text(d, "url"), _day(d.get("day")), when, _text(d, "reason"))


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


def _day(value: Any) -> date | None:
    return None if value is None else date.fromisoformat(value)


def record_bytes(recorded_at: datetime, mementos: Iterable[Memento],
                 attempts: Iterable[Attempt]) -> bytes:
    """Return the canonical bytes of a record file."""
    return dump_json({"format": MEMENTOS_FORMAT, "recorded_at": iso(recorded_at),
                      "mementos": [m.to_json() for m in mementos],
                      "attempts": [a.to_json() for a in attempts]})


def parse_record(blob: bytes, path: Path) -> MementoRecord:
    """Return the record in `blob` (read from `path`); StoreError naming it if malformed."""
    what = "mementos record"
    raw = parse_json(blob, path, what)
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
