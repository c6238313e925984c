"""`chronicle archive`: ask the Wayback Machine for a copy of every sealed day page that has
none yet, and of the home page once a UTC day; record what it made (snapshot stage).

Run after the site is deployed (the pages must be online). One page at a time, paced
under the Save Page Now 2 limit (12 captures a minute with keys), each job polled for a
bounded time. A rate limit (HTTP 429, or a limit's status_ext) is backed off a bounded
number of times, then the rest is left for the next night; so is a job still pending
after `poll_for` seconds, and everything after the archive stops answering: none of that
fails the night. A job that ends in an error is recorded as an attempt, and the page is
asked for again on a later night, `max_attempts` times at most. Successes and attempts
go into one mementos record (store/mementos.py), which the next snapshot puts in the
hash chain. A page with a memento is never asked for again; nothing new: nothing asked.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from urllib.parse import urlsplit

from chronicle.config import CONFIG_NAME, RunConfig
from chronicle.errors import ChronicleError, ConfigError
from chronicle.snapshot.mementos import api_url
from chronicle.sources.wayback import (
    RateLimited,
    Rejected,
    SavePageNow,
    Unavailable,
    WaybackKeys,
)
from chronicle.store import Attempt, Memento, Store, locked, memento_url, write_mementos

ACCESS_VAR = "WAYBACK_S3_ACCESS_KEY"
SECRET_VAR = "WAYBACK_S3_SECRET_KEY"


@dataclass(frozen=True)
class Pacing:
    """How hard `archive` may ask (SPN2's documented limits, and a night's budget)."""

    captures_per_minute: float = 12.0  # SPN2 with keys (4 without)
    poll_every: float = 5.0  # seconds between status requests of a job
    poll_for: float = 180.0  # a job still pending after this is left for the next night
    backoff: float = 60.0  # the longest wait after a 429 (its Retry-After, bounded)
    backoff_tries: int = 2  # rate limits in a row before the rest waits for the next night
    per_night: int = 30  # captures asked for in one run
    run_for: float = 1200.0  # seconds: later pages wait for the next night
    max_attempts: int = 3  # failed captures of one page (of the home page: a day)


PACING = Pacing()


@dataclass(frozen=True)
class Target:
    """A page to archive: its public URL and its sealed day (None: the home page)."""

    url: str
    day: date | None


@dataclass
class ArchiveReport:
    """What one run asked for and what came of it."""

    captured: list[Memento] = field(default_factory=list)
    pending: list[Target] = field(default_factory=list)  # still pending: next night
    failed: list[Attempt] = field(default_factory=list)  # ended in an error: recorded
    deferred: list[Target] = field(default_factory=list)  # not asked tonight
    given_up: list[Target] = field(default_factory=list)  # max_attempts reached
    why_deferred: str | None = None
    record: str | None = None  # the mementos record written (relative to docs/)

    def summary(self) -> str:
        said = (f"archive: {len(self.captured)} captured, {len(self.pending)} pending, "
                f"{len(self.failed)} failed, {len(self.deferred)} deferred")
        if self.given_up:
            said += f", {len(self.given_up)} given up after repeated errors"
        return said + (f" ({self.why_deferred})" if self.why_deferred else "")


# Hosts the Internet Archive cannot capture: the reserved example and test names
# (RFC 2606: the scaffold's site.url is https://example.org/chronicle/) and this machine.
_PRIVATE_HOST = re.compile(r"(^|\.)(example\.(com|net|org)|example|test|invalid|localhost)$")


def check_archivable(config: RunConfig) -> None:
    """Refuse to ask for captures of a site that is not published where its chronicle.yml
    says (the scaffold's example values): each would be an error the archive records."""
    host = (urlsplit(config.site.url).hostname or "").lower()
    problems = []
    if _PRIVATE_HOST.search(host) or host in ("127.0.0.1", "::1"):
        problems.append(f"site.url: {config.site.url} is not a public address the Internet "
                        "Archive can capture; set where your site is published (nothing "
                        "was asked for)")
    if config.run.example:
        problems.append("run.example: true: the run: values are still the scaffold's "
                        "examples; set them and delete the `example: true` line (nothing "
                        "was asked for)")
    if problems:
        raise ConfigError(str(config.root / CONFIG_NAME), problems)


def wayback_settings(environ: Mapping[str, str]) -> tuple[str, WaybackKeys]:
    """Return the SPN2 URL and keys from the environment; ChronicleError (exit 2) naming
    every variable missing and how to set it."""
    missing = [v for v in (ACCESS_VAR, SECRET_VAR) if not environ.get(v, "").strip()]
    if missing:
        raise ChronicleError(
            f"{' and '.join(missing)} not set: `chronicle archive` needs the S3 keys of an "
            f"archive.org account (https://archive.org/account/s3.php) in {ACCESS_VAR} and "
            f"{SECRET_VAR}; in the nightly workflow, add them as repository secrets "
            "(Settings -> Secrets and variables -> Actions) of those names")
    return api_url(environ), WaybackKeys(environ[ACCESS_VAR].strip(), environ[SECRET_VAR].strip())


def plan_targets(config: RunConfig, store: Store, now: datetime,
                 pacing: Pacing) -> tuple[list[Target], list[Target]]:
    """Return the pages to ask for (the home page first, then days newest first) and
    those given up: a page with a memento (recorded or pending) is never asked again."""
    records = [*store.memento_records(), *store.pending_memento_records()]
    archived = {m.url for r in records for m in r.mementos}
    home_today = any(m.day is None and m.datetime.date() == now.date()
                     for r in records for m in r.mementos)
    tries: dict[str, int] = {}
    for record in records:
        for a in record.attempts:
            if a.day is not None or a.at.date() == now.date():
                tries[a.url] = tries.get(a.url, 0) + 1
    site = config.site.url
    pages = [Target(site, None)] if not home_today else []
    pages += [Target(f"{site}days/{d.isoformat()}.html", d)
              for d in sorted(store.sealed_days(), reverse=True)]
    wanted = [t for t in pages if t.day is None or t.url not in archived]
    ask = [t for t in wanted if tries.get(t.url, 0) < pacing.max_attempts]
    return ask, [t for t in wanted if t not in ask]


def archive_site(config: RunConfig, now: datetime, api_url: str, keys: WaybackKeys,
                 pacing: Pacing | None = None, echo: Callable[[str], None] | None = None,
                 ) -> ArchiveReport:
    """Ask for the captures that are due, record what came of them; return the report."""
    # Load inputs.
    pacing = pacing or PACING
    store = Store(config.docs_dir)
    say = echo or (lambda _line: None)
    with locked(store, "archive"):
        targets, given_up = plan_targets(config, store, now, pacing)
        report = ArchiveReport(given_up=given_up)
        # Process.
        if targets:
            with SavePageNow(api_url, keys) as spn:
                _capture_all(spn, targets, report, now, pacing, say)
        # Save outputs.
        if report.captured or report.failed:
            report.record = write_mementos(store, now, report.captured, report.failed)
    return report


class _Pace:
    """When the next capture may be asked for, and when the night's budget ends."""

    def __init__(self, pacing: Pacing) -> None:
        self.gap = 60.0 / pacing.captures_per_minute
        self.next_at = time.monotonic()
        self.ends_at = time.monotonic() + pacing.run_for

    def wait(self) -> None:
        time.sleep(max(0.0, self.next_at - time.monotonic()))
        self.next_at = time.monotonic() + self.gap


def _capture_all(spn: SavePageNow, targets: list[Target], report: ArchiveReport,
                 now: datetime, pacing: Pacing, say: Callable[[str], None]) -> None:
    pace = _Pace(pacing)
    for i, target in enumerate(targets):
        if i >= pacing.per_night or time.monotonic() >= pace.ends_at:
            report.deferred += targets[i:]
            report.why_deferred = (f"{pacing.per_night} captures a night at most" if
                                   i >= pacing.per_night else "the night's time is up")
            return
        try:
            job = _submit(spn, target, pace, pacing)
            outcome = _poll(spn, job, pacing)
        except RateLimited as err:
            report.deferred += targets[i:]
            report.why_deferred = f"rate limited: {err}; the rest waits for the next night"
            return
        except Unavailable as err:
            report.deferred += targets[i:]
            report.why_deferred = f"the archive did not answer: {err}"
            return
        except Rejected as err:
            outcome = str(err)
        if isinstance(outcome, datetime):
            memento = Memento(target.url, memento_url(spn.api_url, outcome, target.url),
                              outcome, target.day)
            report.captured.append(memento)
            say(f"captured {target.url}: {memento.memento}")
        elif outcome is None:
            report.pending.append(target)
            say(f"pending {target.url}: still being captured after {pacing.poll_for:g} s; "
                "asked again next night")
        else:
            report.failed.append(Attempt(target.url, target.day, now, outcome))
            say(f"failed {target.url}: {outcome}")


def _submit(spn: SavePageNow, target: Target, pace: _Pace, pacing: Pacing) -> str:
    """Return the job id of a capture of `target`, backing off after a rate limit."""
    for tries in range(pacing.backoff_tries + 1):
        pace.wait()
        try:
            return spn.submit(target.url)
        except RateLimited as err:
            if tries == pacing.backoff_tries:
                raise
            time.sleep(min(pacing.backoff, err.retry_after if err.retry_after is not None
                           else pacing.backoff))
    raise AssertionError("unreachable")


def _poll(spn: SavePageNow, job: str, pacing: Pacing) -> datetime | str | None:
    """Return the capture's time (success), its reason (error) or None (still pending)."""
    deadline = time.monotonic() + pacing.poll_for
    limited = 0
    while time.monotonic() < deadline:
        time.sleep(min(pacing.poll_every, max(0.0, deadline - time.monotonic())))
        try:
            status = spn.status(job)
        except RateLimited as err:
            limited += 1
            if limited > pacing.backoff_tries:
                raise
            time.sleep(min(pacing.backoff, err.retry_after if err.retry_after is not None
                           else pacing.backoff))
            continue
        if status.limited:
            raise RateLimited(status.reason or "a rate limit")
        if status.status == "success":
            return status.timestamp
        if status.status == "error":
            return status.reason or "error"
    return None
