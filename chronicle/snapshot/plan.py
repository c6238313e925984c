"""Which closed days a snapshot seals, and which wait (snapshot stage).

A day is sealed only from complete data: by the first snapshot, taken after the day
ended, by which every source has answered at least once since the day ended. Until then
it waits, and each snapshot says which days wait and why. Its figures are computed as of
the first snapshot taken after it ended (whether that one worked or not), so a day sealed
late shows what a timely seal would have shown. After `sealing.max_wait_days` a day is
sealed anyway, marked with the sources it lacks, so a dead API never blocks the archive.
Days before the run's first logged row are not sealed at all: nothing happened yet; nor
are days after the day a finished run finished (its page is the closing entry; a run
resumed later seals them again, as the closed days they are). Snapshots record the rules
they sealed by (`"sealing": SEALING` in the manifest), so a snapshot written before a rule
is replayed by the rules it had (snapshot/recompute.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from chronicle.config import RunConfig
from chronicle.models import SourceStatus, iso
from chronicle.store import Store


@dataclass(frozen=True)
class MissingSource:
    """A source that has not answered since a day ended."""

    source: str
    error: str | None  # why it failed most recently
    last_ok: str | None  # the snapshot of its last answer (before the day ended), if any

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "error": self.error, "last_ok": self.last_ok}


@dataclass(frozen=True)
class DaySeal:
    """A day this snapshot seals: as of when its figures are computed, what it lacks."""

    day: date
    figures_as_of: datetime
    missing: tuple[MissingSource, ...] = ()  # only when sealed after waiting too long


@dataclass(frozen=True)
class WaitingDay:
    """A closed day left unsealed by this snapshot: the sources it waits for, and until when."""

    day: date
    missing: tuple[MissingSource, ...]
    seal_anyway_at: datetime

    def to_json(self) -> dict[str, Any]:
        return {"day": self.day.isoformat(), "sources": [m.to_json() for m in self.missing],
                "seal_anyway_at": iso(self.seal_anyway_at)}


@dataclass(frozen=True)
class SealPlan:
    """The days one snapshot seals (oldest first) and those that keep waiting."""

    ready: tuple[DaySeal, ...] = ()
    waiting: tuple[WaitingDay, ...] = ()


@dataclass(frozen=True)
class _Attempt:
    taken_at: datetime
    snapshot: str
    sources: dict[str, SourceStatus]


# The rules a snapshot seals by: 2 = no day after a finished run's last day.
SEALING = 2


def day_end(day: date) -> datetime:
    """Return the UTC midnight that closes `day`."""
    return datetime.combine(day + timedelta(days=1), time(0, tzinfo=UTC))


def plan_seals(config: RunConfig, store: Store, as_of: datetime, snapshot: str,
               statuses: Sequence[SourceStatus], first_row: float | None,
               finished: float | None = None) -> SealPlan:
    """Return what the snapshot `snapshot` taken at `as_of` seals and what waits.

    `first_row` is the timestamp of the run's first logged row (None: nothing logged yet);
    `finished` when the run finished, if it had as of `as_of`: no later day is sealed.
    """
    if first_row is None:
        return SealPlan()
    attempts = [_Attempt(s.taken_at, s.id, s.sources) for s in store.snapshots()]
    attempts.append(_Attempt(as_of, snapshot, {s.name: s for s in statuses}))
    names = [s.name for s in statuses]
    sealed = store.sealed_days()
    day = max(config.run.start, datetime.fromtimestamp(first_row, tz=UTC).date())
    last_closed = as_of.astimezone(UTC).date() - timedelta(days=1)
    if finished is not None:
        last_closed = min(last_closed, datetime.fromtimestamp(finished, tz=UTC).date())
    wait = timedelta(days=config.sealing.max_wait_days)
    ready: list[DaySeal] = []
    waiting: list[WaitingDay] = []
    while day <= last_closed:
        if day not in sealed:
            end = day_end(day)
            after = [a for a in attempts if a.taken_at >= end]
            missing = tuple(_missing(name, after, attempts, end) for name in names
                            if not any(_ok(a, name) for a in after))
            if not missing:
                ready.append(DaySeal(day, after[0].taken_at))
            elif as_of >= end + wait:
                ready.append(DaySeal(day, after[0].taken_at, missing))
            else:
                waiting.append(WaitingDay(day, missing, end + wait))
        day += timedelta(days=1)
    return SealPlan(tuple(ready), tuple(waiting))


def _ok(attempt: _Attempt, name: str) -> bool:
    status = attempt.sources.get(name)
    return status is not None and status.ok


def _missing(name: str, after: list[_Attempt], attempts: list[_Attempt],
             end: datetime) -> MissingSource:
    last_error = next((a.sources[name].error for a in reversed(after) if name in a.sources),
                      None)
    before = [a for a in attempts if a.taken_at < end and _ok(a, name)]
    return MissingSource(name, last_error, before[-1].snapshot if before else None)
