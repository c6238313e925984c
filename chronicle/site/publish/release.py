"""A week's release notes: the days sealed in one ISO week, each with the identifiers a
citation can outlive the site with (permalink, sha256, SWHID, Wayback mementos).

The nightly job makes a GitHub release tagged `week-YYYY-Www` once a week has closed
(documentation/pages/citing.md); a repository linked to Zenodo gets a version DOI for each.
The notes are a pure function of the store and the built site's `api/mementos.json`: nothing here
touches the network.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

from chronicle.clean import load_json, plain_url
from chronicle.config import RunConfig
from chronicle.errors import ChronicleError
from chronicle.store import Store
from chronicle.store.files import read_bounded
from chronicle.store.swhid import content_swhid

_WEEK = re.compile(r"([0-9]{4})-W([0-9]{2})")  # whole: no space, newline or other digits
TAG_PREFIX = "week-"
MEMENTOS_FILE = "api/mementos.json"
MAX_MEMENTOS_BYTES = 50_000_000  # a published list this large is not read


@dataclass(frozen=True)
class Week:
    """An ISO week: its year and number, Monday to Sunday."""

    year: int
    number: int

    @property
    def name(self) -> str:
        return f"{self.year}-W{self.number:02d}"

    @property
    def tag(self) -> str:
        return TAG_PREFIX + self.name

    @property
    def monday(self) -> date:
        return date.fromisocalendar(self.year, self.number, 1)

    @property
    def sunday(self) -> date:
        return self.monday + timedelta(days=6)


@dataclass(frozen=True)
class ReleaseDay:
    """A sealed day as the release notes cite it."""

    date: date
    permalink: str
    sealed_by: str
    sha256: str
    swhid: str
    mementos: tuple[tuple[str, str], ...]  # (datetime, memento URL), oldest first


@dataclass(frozen=True)
class WeekRelease:
    """What a week's release says, or why there is none yet (`wait`)."""

    week: Week
    days: tuple[ReleaseDay, ...]
    wait: str = ""  # non-empty: the week is not released (yet), and why
    warnings: tuple[str, ...] = ()


def parse_week(text: str) -> Week:
    """Return the ISO week written `YYYY-Www` (2026-W47)."""
    match = _WEEK.fullmatch(text)
    if match:
        week = Week(int(match[1]), int(match[2]))
        try:
            week.monday  # noqa: B018 - the check: week 53 exists in some years only
        except ValueError:
            pass
        else:
            return week
    raise ChronicleError(f"--week {text!r}: expected an ISO week such as 2026-W47 "
                         "(`date -u +%G-W%V` prints this week's)")


def week_of(day: date) -> Week:
    """Return the ISO week holding `day`."""
    year, number, _ = day.isocalendar()
    return Week(year, number)


def week_release(config: RunConfig, week: Week, now: datetime,
                 site_dir: Path | None = None) -> WeekRelease:
    """Return the release of `week`: its sealed days, or why it waits.

    A week is released once the day of its Sunday is sealed (days are sealed oldest
    first, so every day of it that will be is), or once every day of it has been closed
    for longer than `sealing.max_wait_days` (after which a day is sealed anyway).
    """
    # Load inputs.
    store = Store(config.docs_dir)
    sealed = store.sealed_days()
    mementos, warnings = _mementos(site_dir or config.root / "site")
    # Process.
    newest = max(sealed, default=None)
    settled = now.date() > week.sunday + timedelta(days=config.sealing.max_wait_days + 1)
    if week.sunday >= now.date():
        return WeekRelease(week, (), f"week {week.name} has not ended", warnings)
    if not settled and (newest is None or newest < week.sunday):
        return WeekRelease(week, (), f"week {week.name}: {week.sunday} is not sealed yet "
                           "(a day waits for a source, at most sealing.max_wait_days)",
                           warnings)
    days = []
    for day in sorted(d for d in sealed if week.monday <= d <= week.sunday):
        rel = f"days/{day.isoformat()}.md"
        content = store.sealed_bytes(rel)
        snap = sealed[day]
        if content is None:  # a manifest sealing the day without its page: verify says so
            raise ChronicleError(f"docs/{rel}: sealed by {snap.id} but not in its manifest; "
                                 "run `chronicle verify`")
        days.append(ReleaseDay(
            day, f"{config.site.url}days/{day.isoformat()}.html", snap.id,
            str(snap.sealed[day.isoformat()][rel]["sha256"]), content_swhid(content),
            tuple(sorted(mementos.get(day.isoformat(), ())))))
    wait = "" if days else f"week {week.name}: no day of it is sealed"
    return WeekRelease(week, tuple(days), wait, warnings)


def _mementos(site: Path) -> tuple[dict[str, list[tuple[str, str]]], tuple[str, ...]]:
    """Return {day: [(datetime, memento)]} from the built site's api/mementos.json (absent:
    none), and warnings about what could not be read from it."""
    path = site / MEMENTOS_FILE
    if not path.is_file() or path.is_symlink():
        return {}, ()
    try:
        data: Any = load_json(read_bounded(path, MAX_MEMENTOS_BYTES), MAX_MEMENTOS_BYTES)
    except (OSError, ValueError) as err:
        return {}, (f"{path}: not read ({err}); the notes list no memento",)
    entries = data.get("mementos") if isinstance(data, Mapping) else data
    out: dict[str, list[tuple[str, str]]] = {}
    skipped = 0
    for entry in entries if isinstance(entries, list) else []:
        fields = [entry.get(k) if isinstance(entry, Mapping) else None
                  for k in ("day", "datetime", "memento")]
        if all(isinstance(f, str) and f for f in fields) and plain_url(fields[2]):
            out.setdefault(str(fields[0]), []).append((str(fields[1]), str(fields[2])))
        elif not (isinstance(entry, Mapping) and entry.get("day") is None):
            skipped += 1  # the home page's mementos have no day; anything else is odd
    warnings = (f"{path}: {skipped} entr{'y' if skipped == 1 else 'ies'} without a day, "
                "time or memento URL left out",) if skipped else ()
    if not isinstance(entries, list):
        warnings = (f"{path}: expected a list of mementos; the notes list none",)
    return out, warnings


def release_notes(config: RunConfig, release: WeekRelease) -> str:
    """Return the Markdown notes of a week's release."""
    week = release.week
    count = len(release.days)
    lines = [
        f"Week {week.name} ({week.monday} to {week.sunday}) of {config.site.title}: "
        f"{count} sealed day{'' if count == 1 else 's'}.",
        "",
        "| Day | Sealed by | sha256 | SWHID | Memento |",
        "|---|---|---|---|---|",
    ]
    for d in release.days:
        archived = "<br>".join(f"[{when}]({_cell_url(url)})" for when, url in d.mementos) \
            or "none yet"
        lines.append(f"| [{d.date}]({d.permalink}) | `{d.sealed_by}` | `{d.sha256}` | "
                     f"`{d.swhid}` | {archived} |")
    lines += [
        "",
        "Each page's sha256 is the one its sealing snapshot's manifest records "
        "(`chronicle verify` checks it); its SWHID is the git blob id of the same bytes "
        "(`git hash-object docs/days/<date>.md`), which Software Heritage resolves once it "
        "has archived this repository. A memento is a Wayback Machine copy of the page.",
    ]
    return "\n".join(lines) + "\n"


def _cell_url(url: str) -> str:
    """Return `url` safe as a Markdown link target inside a table cell."""
    return url.replace("|", "%7C").replace("(", "%28").replace(")", "%29").replace(" ", "%20")
