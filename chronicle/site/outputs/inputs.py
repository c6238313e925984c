"""What one build reads from the store, loaded once (site stage).

Every generated page and every page hook of a build works from one `BuildInputs`: the
sealed days' JSON, the stitched series, failures, runs, threads and the snapshot chain.
The store is read here and nowhere else in the build. The watchers' verdicts of every
day are computed from those here, once a build (no cache: they cost less than reading one).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import date, datetime
from functools import cached_property
from typing import Any, cast

from chronicle.analysis.changes import ChangeInputs, RunChanges, run_changes
from chronicle.analysis.day_model import DaySummary
from chronicle.analysis.days import summarize_day
from chronicle.analysis.ledger import Ledger, LedgerInputs, build_ledger
from chronicle.analysis.mixture import weight_prefix
from chronicle.analysis.run_state import RunState, run_finish, run_state
from chronicle.analysis.series import Series, build_series, day_bounds
from chronicle.analysis.signals import dropping_facts, signals
from chronicle.analysis.verdicts import watch_history
from chronicle.clean import scrub_urls
from chronicle.config import CONFIG_NAME, RunConfig
from chronicle.models import FailureRecord, RunRecord, Thread, parse_time
from chronicle.render.i18n import Language
from chronicle.render.ledger_text import added_later
from chronicle.site.build_cache import (
    Caches,
)
from chronicle.store import SnapshotInfo, Store, damaged, read_json, sha256_file, snapshot_id
from chronicle.store.mementos import Memento
from chronicle.store.swhid import DaySwhids, day_swhids

log = logging.getLogger("mkdocs.plugins.chronicle")
# The watchers' keys of a sealed day JSON (analysis/verdicts.py watch_day).
VERDICT_KEYS = ("prediction", "health", "risks")


@dataclass(frozen=True)
class BuildInputs:
    """The store as one build sees it (read once, shared by every page)."""

    config: RunConfig
    store: Store
    snapshots: list[SnapshotInfo]
    sealers: dict[date, SnapshotInfo]
    days: list[DaySummary]  # the sealed day JSON, oldest first
    series: Series
    failures: list[FailureRecord]
    runs: list[RunRecord]
    threads: dict[int, list[tuple[SnapshotInfo, Thread]]]
    stale: list[dict[str, Any]]
    waiting: list[dict[str, Any]]  # closed days the newest snapshot left unsealed, and why
    changes: RunChanges = field(default_factory=RunChanges)
    caches: Caches | None = None  # what earlier builds made (site/build_cache.py)

    @cached_property
    def history(self) -> list[dict[str, Any]]:
        """The watchers' verdicts for every sealed day, as sealed: a day's prediction,
        health and risks are what its JSON says, never computed again. A chronicle with
        days sealed before the watchers existed gets them recomputed at each build."""
        if all(all(k in d for k in VERDICT_KEYS) for d in self.days):
            return [{"date": d["date"], "day": d["day"], "prediction": d.get("prediction"),
                     "health": d.get("health"), "risks": d.get("risks")} for d in self.days]
        return watch_history(self.days, self.series, self.failures, self.config,
                             self.changes.changes)

    @cached_property
    def signals(self) -> dict[str, Any]:
        """The three signals' figures as of the newest sealed day (analysis/signals.py)."""
        return signals(self.days, self.events)

    @cached_property
    def dropping_by_day(self) -> list[dict[str, Any]]:
        """Token dropping as each sealed day's feed item says it: as of that day (the
        item's text and its title read the same facts)."""
        return [dropping_facts(self.days[: i + 1], self.events) for i in range(len(self.days))]

    @cached_property
    def state(self) -> RunState:
        """The run's state as of the newest snapshot: running, stalled or finished."""
        latest = self.latest
        return run_state(self.series, run_finish(self.series, self.runs, self.config),
                         self.config, latest.taken_at if latest else None)

    @cached_property
    def ledger(self) -> Ledger:
        """Every event of the run, computed once for every page (analysis/ledger.py)."""
        latest = self.latest
        first_seen = {fid: (snapshot_id(at), at.timestamp())
                      for fid, at in self.store.failures_first_seen().items()}
        return build_ledger(LedgerInputs(
            self.config, self.days, self.series, self.failures, self.changes.changes,
            self.state.finish, latest.taken_at.timestamp() if latest else None,
            self.store.corrections(), first_seen,
            {d.isoformat(): (s.id, s.taken_at.timestamp()) for d, s in self.sealers.items()},
            self._refigure))

    @cached_property
    def events(self) -> list[dict[str, Any]]:
        """The ledger's events as JSON (analysis/ledger.py Event.to_json), for the signals'
        facts, which read plain data."""
        return [e.to_json() for e in self.ledger.events]

    def told(self, day: str) -> list[dict[str, Any]]:
        """Return what a day tells (Event.to_json): as its sealed JSON records it, or the
        ledger's events on it for a day sealed before days recorded them."""
        sealed = self.day_json(day)
        if sealed is not None and "ledger" in sealed:
            return list(sealed["ledger"])
        return [e.to_json() for e in self.ledger.on(day) if e.kind != "correction"]

    def ledger_of(self, day: str, lang: Language) -> str:
        """Return what a sealed day page gets from the ledger when the site is built
        (render/ledger_text.py added_later): '' when its page tells it all."""
        sealed = self.day_json(day)
        if sealed is None:
            return ""
        events = [e.to_json() for e in self.ledger.on(day) if e.kind != "correction"]
        fixes = [{**e.facts, "id": e.id} for e in self.ledger.of_kind("correction")
                 if e.days == (day,)]
        return added_later(sealed, events, fixes, lang, self.config)

    def _refigure(self, day: str) -> DaySummary:
        """Return a sealed day's figures computed again from every stored row (the tracked
        figures a fork found after the day was sealed moves)."""
        sealed = self.day_json(day)
        latest = self.latest
        assert sealed is not None and latest is not None
        return summarize_day(date.fromisoformat(day), self.series, self.failures, {},
                             self.config, str(sealed["sealed_by"]), latest.taken_at,
                             as_of=latest.taken_at)

    @cached_property
    def swhids(self) -> dict[str, DaySwhids]:
        """Each sealed day's SWHIDs (date -> page and chart folder), computed from its
        stored bytes: one home for api/index.json, the citations and CITATION.cff."""
        return {d["date"]: day_swhids(self.store.days, d["date"]) for d in self.days
                if (self.store.days / f"{d['date']}.md").is_file()}

    @cached_property
    def mementos(self) -> dict[str, Memento]:
        """Each sealed day's archived copy (date -> its first memento in the chain): one
        home for the citation blocks (the Cite box, data-versionurl)."""
        return {day.isoformat(): m for day, m in self.store.day_mementos().items()}

    @property
    def latest(self) -> SnapshotInfo | None:
        return self.snapshots[-1] if self.snapshots else None

    @property
    def source_date_epoch(self) -> str:
        """The build's date, as either engine reads it (SOURCE_DATE_EPOCH: sitemaps, pages'
        dates, the feeds' build dates): the newest snapshot's time, so the same store
        builds the same bytes."""
        latest = self.latest
        return str(int(latest.taken_at.timestamp())) if latest else "0"

    def figures_snapshot(self, day: date) -> SnapshotInfo | None:
        """Return the snapshot a timely seal of `day` computed its figures as of: the first
        one taken after the day ended (documentation/pages/store.md, "When a day is sealed")."""
        end = day_bounds(day)[1]
        return next((s for s in self.snapshots if s.taken_at.timestamp() >= end), None)

    def day_evidence(self, day: date) -> tuple[Series, list[FailureRecord]] | None:
        """Return the stitched series and the failure records as of `day`'s figures (the
        rows logged up to its figures snapshot that the store held when the day was
        sealed, the records that snapshot stored): what the day's sealed charts were drawn
        from, for another language's charts. None when no snapshot was taken after the
        day. Fixed once the day is sealed: rows a later snapshot adds are not counted."""
        snap = self.figures_snapshot(day)
        if snap is None:
            return None
        upto = self.store.metrics_seen_by(self.sealers.get(day) or self.snapshots[-1],
                                          snap.taken_at.timestamp())
        series = build_series(upto, self.runs, self.config)
        return series, sorted(self.store.failures_at(snap), key=lambda f: (f.start, f.id))

    def day_json(self, day: str) -> DaySummary | None:
        """Return the sealed JSON of `day` (YYYY-MM-DD), or None."""
        return next((d for d in self.days if d["date"] == day), None)

    def artifact(self, rel: str) -> tuple[str, str | None]:
        """Return (path, sha256) of a file under the chronicle folder (None if missing)."""
        path = self.config.root / rel
        return rel, sha256_file(path) if path.is_file() else None

    def config_artifact(self) -> tuple[str, str | None]:
        return self.artifact(CONFIG_NAME)

    def manifest_artifact(self) -> tuple[str, str | None]:
        latest = self.latest
        if latest is None:
            return "no snapshot", None
        return f"data/{latest.id}/MANIFEST.json", latest.manifest_sha256


def load_inputs(config: RunConfig, caches: Caches | None = None) -> BuildInputs:
    """Read everything a build needs from the store of `config` (`caches`: what earlier
    builds made, site/build_cache.py)."""
    store = Store(config.docs_dir)
    snapshots = store.snapshots()
    sealers = store.sealed_days()
    series = build_series(store.load_metrics(), store.load_runs(), config)
    return BuildInputs(
        config=config,
        store=store,
        snapshots=snapshots,
        sealers=sealers,
        days=_sealed_days(store, sealers),
        series=series,
        failures=sorted(store.load_failures(), key=lambda f: (f.start, f.id)),
        runs=store.load_runs(),
        threads=store.thread_history(),
        stale=stale_sources(snapshots),
        waiting=waiting_days(snapshots),
        changes=stored_changes(config, store, series),
        caches=caches,
    )


def stored_changes(config: RunConfig, store: Store, series: Series) -> RunChanges:
    """Return the changes the store shows (analysis/changes.py)."""
    key = config.wandb.metrics["mixture_stage"]
    inputs = ChangeInputs(store.run_history(), store.pull_history(),
                          store.rows_with(key, weight_prefix(key)))
    return run_changes(inputs, series, config)


def _sealed_days(store: Store, sealers: dict[date, SnapshotInfo]) -> list[DaySummary]:
    out = []
    for day, snap in sorted(sealers.items()):
        path = store.days / f"{day.isoformat()}.json"
        if not path.is_file():
            log.warning("%s: sealed by snapshot %s but missing; run `chronicle verify`",
                        path, snap.id)
            continue
        d = read_json(path, "sealed day JSON")
        if not isinstance(d, dict) or d.get("date") != day.isoformat():
            raise damaged(path, "sealed day JSON", f"not the JSON of day {day.isoformat()}")
        out.append(cast(DaySummary, d))
    return out


def stale_sources(snaps: list[SnapshotInfo]) -> list[dict[str, Any]]:
    """Return each source failing in the newest snapshot: since when, last good snapshot."""
    if not snaps:
        return []
    out = []
    for name, status in sorted(snaps[-1].sources.items()):
        if status.ok:
            continue
        since, last_good = snaps[-1], None
        for snap in reversed(snaps):
            s = snap.sources.get(name)
            if s is not None and s.ok:
                last_good = snap
                break
            since = snap
        since_at: datetime = since.taken_at
        error = scrub_urls(status.error) if status.error else None  # older stores may hold some
        out.append({"name": name, "error": error, "since": since_at,
                    "last_good": last_good.id if last_good else None,
                    "last_good_at": last_good.taken_at if last_good else None})
    return out


def waiting_days(snaps: list[SnapshotInfo]) -> list[dict[str, Any]]:
    """Return the days the newest snapshot left waiting: day, sources and their errors."""
    if not snaps:
        return []
    out = []
    for w in snaps[-1].manifest.get("waiting") or ():
        sources = [{**m, "error": scrub_urls(m["error"]) if m.get("error") else None}
                   for m in w.get("sources") or ()]
        out.append({"day": w.get("day"), "sources": sources,
                    "seal_anyway_at": parse_time(w.get("seal_anyway_at"))})
    return out
