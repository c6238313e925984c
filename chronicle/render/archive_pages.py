"""The Archive, Failures and About pages (render stage, pure)."""

from __future__ import annotations

import string
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from urllib.parse import urlsplit

from chronicle.analysis.day_model import DaySummary
from chronicle.analysis.ledger import Ledger
from chronicle.config import RunConfig
from chronicle.models import FailureRecord
from chronicle.render import href, render
from chronicle.render.day import one_line
from chronicle.render.formats import finite
from chronicle.render.i18n import Language, site_title
from chronicle.render.record_text import evidence_text, failure_text

ANCHOR_PREFIX = "failure:"
# An id made of these keeps its anchor as written (`failure:gap-run-2100`), so the GUIDs of
# feed items already published stay the same; any other character is written `~XX`.
_ANCHOR_SAFE = frozenset(string.ascii_letters + string.digits + "-._")
LINK_CHARS = 48  # an evidence link's visible address is cut in the middle beyond this


def archive_page(days: Sequence[DaySummary], lang: Language) -> str:
    """Return the Archive page: every sealed day, newest first, by month."""
    groups: dict[str, list[tuple[DaySummary, str]]] = defaultdict(list)
    for d in reversed(days):
        groups[lang.month(date.fromisoformat(d["date"]))].append((d, one_line(d, lang)))
    return render("archive.md.j2", lang, months=list(groups.items()))


def failure_anchor(failure_id: str) -> str:
    """Return the HTML id of a failure record on the Failures page, which is also the URL
    fragment of its feed item: `failure:<id>`, where each UTF-8 byte of a character other
    than A-Z a-z 0-9 - . _ is written `~XX` (so is `~`). Ids come from issues, W&B and
    hand-written records: any id gives a valid id and fragment, a different one for each."""
    out = []
    for ch in failure_id:
        if ch in _ANCHOR_SAFE:
            out.append(ch)
        else:
            out.extend(f"~{b:02X}" for b in ch.encode("utf-8", "surrogatepass"))
    return ANCHOR_PREFIX + "".join(out)


@dataclass(frozen=True)
class _Row:
    """One failure record as a row of the Failures page, its words in the page's language."""

    anchor: str
    ended: bool
    when: str  # 13:45 – 14:17 under its day's heading
    duration: str  # "" when the record has no length to show
    kind: str
    what: str
    hours: float | None
    evidence: tuple[tuple[str, str], ...]  # (text, link or "")


def failures_page(failures: Sequence[FailureRecord], snapshot: str | None,
                  lang: Language, ledger: Ledger) -> str:
    """Return the Failures page: the open records, the ledger's downtime by kind, then
    every other record by the UTC day it started, newest first.

    Downtime and lost accelerator-hours are the ledger's (analysis/ledger.py): gaps, forks
    and recorded restarts, each second counted once, never after the run's finish; the
    Throughput page and every day count the same. Incidents people reported describe
    such downtime (or a slowdown): their own estimates are shown, never added.
    """
    counted = {str(e.facts["record"]): e.figures for e in ledger.of_kind("downtime")}
    kinds: dict[str, list[FailureRecord]] = defaultdict(list)
    for f in failures:
        kinds[f.kind].append(f)
    by_kind = []
    for kind, records in sorted(kinds.items()):
        figures = [counted[f.id] for f in records if f.id in counted]
        by_kind.append({
            "kind": kind, "records": len(records),
            "seconds": sum(x.get("downtime_seconds", 0.0) for x in figures) if figures
            else None,
            "hours": sum(x.get("accelerator_hours_lost", 0.0) for x in figures) if figures
            else None,
            "reported": None if figures else sum(f.accelerator_hours_lost or 0.0
                                                 for f in records
                                                 if f.accelerator_hours_lost is not None)
            if any(f.accelerator_hours_lost is not None for f in records) else None})
    totals = ledger.totals()
    newest = sorted(failures, key=lambda f: (f.start, f.id), reverse=True)
    days: dict[date, list[_Row]] = defaultdict(list)
    for f in newest:
        if f.end is not None:
            days[_utc(f.start).date()].append(_row(f, lang, counted.get(f.id)))
    return render(
        "failures.md.j2", lang, count=len(failures), snapshot=snapshot,
        still_open=[_row(f, lang, counted.get(f.id)) for f in newest if f.end is None],
        days=list(days.items()), total_seconds=totals["downtime_seconds"],
        total_hours=totals["accelerator_hours_lost"], restarts=int(totals["restarts"]),
        incidents=len(ledger.of_kind("incident")), by_kind=by_kind)


def _utc(when: datetime) -> datetime:
    return when.astimezone(UTC)


def _row(f: FailureRecord, lang: Language, counted: Mapping[str, float] | None) -> _Row:
    start = _utc(f.start)
    clock = f"{start:%H:%M}"
    if f.end is None:  # no day heading above it: its date is said (the template adds "open")
        when, duration = f"{lang.date(start)} {clock}", ""
    else:
        end = _utc(f.end)
        until = f"{end:%H:%M}" if end.date() == start.date() else f"{lang.date(end)} {end:%H:%M}"
        when = clock if until == clock else f"{clock} – {until}"
        # A record shorter than half a minute (a NaN row, a spike) shows its time only.
        short = (end - start).total_seconds() < 30
        duration = "" if short else lang.duration(f.duration_seconds)
    # Downtime: what the ledger counts of it (a second another record counted is not
    # counted again); an incident or a spike: what its record says, if anything.
    hours = counted.get("accelerator_hours_lost") if counted is not None else (
        f.accelerator_hours_lost if finite(f.accelerator_hours_lost) else None)
    evidence = tuple((_link_label(u), u) if (u := href(e)) else (e, "")
                     for e in evidence_text(f, lang))
    return _Row(failure_anchor(f.id), f.end is not None, when, duration,
                lang.term(f.kind, "failure kind"), failure_text(f, lang), hours, evidence)


def _link_label(url: str) -> str:
    """Return the address a link shows: without its scheme, cut in the middle when long."""
    parts = urlsplit(url)
    text = parts.netloc + parts.path.rstrip("/") + ("?…" if parts.query else "")
    if len(text) <= LINK_CHARS:
        return text
    last = parts.path.rstrip("/").rsplit("/", 1)[-1][-LINK_CHARS // 2:]
    return f"{parts.netloc[:LINK_CHARS // 2]}/…/{last}"


def about_page(config: RunConfig, lang: Language) -> str:
    """Return the About page: sources, method, verification and citing."""
    return render(
        "about.md.j2", lang, title=site_title(config, lang), run_name=config.run.name,
        entity=config.wandb.entity, project=config.wandb.project, runs=config.wandb.runs,
        repo=config.github.repo, issues=config.github.issues, labels=config.github.labels,
        failure_labels=config.github.failure_labels, license=config.site.license,
        accelerators=f"{config.run.accelerators.count} × {config.run.accelerators.kind}",
        prices=sorted(config.run.prices_usd_per_accelerator_hour.items()),
        site_url=config.site.url, doi=config.site.doi)
