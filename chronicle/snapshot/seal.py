"""Sealing closed days: a day's figures, verdicts, provenance and charts -> its files
(snapshot stage).

A day is sealed once (snapshot/plan.py says when); its files are staged with the snapshot
that seals it, committed by the same rename, and never change afterwards.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any, cast

from chronicle.analysis.changes import RunChanges
from chronicle.analysis.day_model import DaySummary
from chronicle.analysis.days import summarize_day
from chronicle.analysis.ledger import LedgerInputs, build_ledger
from chronicle.analysis.run_state import RunState, run_state
from chronicle.analysis.series import build_series, day_bounds
from chronicle.analysis.verdicts import day1_sha256, watch_day
from chronicle.config import RunConfig
from chronicle.executor import Executor
from chronicle.render.day import render_day_files
from chronicle.render.day_charts import day_charts
from chronicle.render.day_edition import edition_day_files, edition_folder
from chronicle.render.i18n import ENGLISH, editions
from chronicle.render.prose import write_summary
from chronicle.render.svg import seal_workers, start_statics
from chronicle.snapshot.evidence import Evidence
from chronicle.snapshot.plan import DaySeal
from chronicle.snapshot.provenance import SealContext, day_provenance
from chronicle.store import Store, sha256_bytes, snapshot_id

FEED_IMAGES = ("loss",)  # charts sealed with a PNG too: the feeds' image
# (the folder the charts are sealed in, relative to docs/: days/<date> or an edition's
# days/<language>/<date>; their specs) -> a call returning (SVG per chart, PNG per chart
# in FEED_IMAGES).
Drawn = Callable[[], tuple[dict[str, str], dict[str, bytes]]]
Draw = Callable[[str, dict[str, dict[str, Any]]], Drawn]


@dataclass(frozen=True)
class SealInputs:
    """Everything the days sealed by one snapshot are computed from."""

    config: RunConfig
    store: Store
    as_of: datetime
    snapshot: str
    days: tuple[DaySeal, ...]  # oldest first (snapshot/plan.py)
    evidence: Callable[[datetime], Evidence]  # the data as of a day's figures_as_of
    backfilled: bool
    context: SealContext | None = None
    corrections: tuple[dict[str, Any], ...] = ()
    changes: RunChanges | None = None
    # Who draws a day's charts: None = this process (render/svg.py); the demo's nights hand
    # in the executor's render workers (`drawn_by`); `verify --recompute` hands in the
    # sealed drawings instead (it compares specs, draws nothing).
    draw: Draw | None = None
    states: bool = True  # record the run's state (False: replaying days sealed without it)
    # The editions to seal beside the record (language codes; None: the site's other
    # languages): `verify --recompute` replays the ones a snapshot sealed.
    languages: tuple[str, ...] | None = None


def seal_days(inputs: SealInputs) -> dict[str, dict[str, bytes]]:
    """Return {day: {path under docs/: bytes}} of every day this snapshot seals: its
    record in English (page, JSON, charts) and its edition in every other language of the
    site (render/day_edition.py), from the same facts."""
    return _seal_days(inputs)


def drawn_by(executor: Executor | None) -> Draw | None:
    """Return who draws the sealed charts with `executor`'s render workers (`seal_workers`),
    each language's charts started as soon as its specs are made; None (in this process)
    without them."""
    workers = seal_workers(executor)
    if executor is None or not workers:
        return None

    def draw(folder: str, charts: dict[str, dict[str, Any]]) -> Drawn:
        return start_statics(charts, FEED_IMAGES, executor, workers).result

    return draw


def _draw(inputs: SealInputs, folder: str, charts: dict[str, dict[str, Any]]) -> Drawn:
    """Start drawing `charts` (sealed in `folder`); the call returned waits for them."""
    if inputs.draw is not None:
        return inputs.draw(folder, charts)
    return start_statics(charts, FEED_IMAGES).result


def _seal_days(inputs: SealInputs) -> dict[str, dict[str, bytes]]:
    config, store = inputs.config, inputs.store
    sealed: dict[str, dict[str, bytes]] = {}
    previous: Mapping[str, Any] | None = None
    day1: Mapping[str, Any] | None = None  # day 1 holds the prediction's registered sha256
    # The changes known tonight: each day takes those that took effect in it.
    changes = inputs.changes.changes if inputs.changes else ()
    languages = [lang for lang in editions(config)
                 if inputs.languages is None or lang.code in inputs.languages]
    for plan in inputs.days:
        day, seen = plan.day, inputs.evidence(plan.figures_as_of)
        # The charts are drawn in this process when the day's files are rendered below, or
        # by render workers from now on (`drawn_by`): the editions' first, whose text is
        # measured through a Han font, the longest drawings, so the last to finish is short.
        own = {lang.code: day_charts(day, seen.series, seen.failures, config, lang, changes)
               for lang in languages}
        own_drawn = {code: _draw(inputs, edition_folder(day.isoformat(), code), specs)
                     for code, specs in own.items()}
        charts = day_charts(day, seen.series, seen.failures, config, ENGLISH, changes)
        drawn = _draw(inputs, f"days/{day.isoformat()}", charts)
        if previous is None or previous["date"] != (day - timedelta(days=1)).isoformat():
            previous = store.sealed_day(day - timedelta(days=1))
        state = (run_state(seen.series, seen.finish, config, plan.figures_as_of)
                 if inputs.states else None)
        summary = summarize_day(
            day, seen.series, seen.failures, seen.threads, config, inputs.snapshot,
            inputs.as_of, previous=previous, backfilled=inputs.backfilled,
            changes=inputs.changes, as_of=plan.figures_as_of, state=state)
        if day1 is None and day != config.run.start:
            day1 = store.sealed_day(config.run.start)
        summary["summary"] = write_summary(summary, ENGLISH)
        if plan.missing:
            _mark_missing(summary, plan, config)
        verdicts = watch_day(day, summary["tokens"]["budget_fraction"], seen.series,
                             seen.failures, config, plan.figures_as_of, previous,
                             day1_sha256(day, config, day1), changes,
                             state.since if state is not None and state.finish else None)
        summary["prediction"] = verdicts["prediction"]
        summary["health"] = verdicts["health"]
        summary["risks"] = verdicts["risks"]
        day1 = summary if day == config.run.start else day1
        summary["ledger"] = _told(inputs, plan, summary, previous, seen, state, sealed)
        if inputs.context is not None:
            summary["provenance"] = day_provenance(
                summary, seen.series.raw_keys, inputs.context.scopes(day, sealed))
        # Late data about sealed days is announced by the first entry sealed after it.
        summary["corrections"] = list(inputs.corrections) if not sealed else []
        svgs, pngs = drawn()
        files = render_day_files(summary, charts, svgs, config, pngs)
        record = {"snapshot": inputs.snapshot,
                  "sha256": sha256_bytes(files[f"days/{day.isoformat()}.md"])}
        for lang in languages:
            svgs, pngs = own_drawn[lang.code]()
            files.update(edition_day_files(summary, own[lang.code], svgs, config, record,
                                           lang, pngs))
        sealed[day.isoformat()] = files
        previous = summary
    return sealed


def _told(inputs: SealInputs, plan: DaySeal, summary: DaySummary,
          previous: Mapping[str, Any] | None, seen: Evidence, state: RunState | None,
          tonight: Mapping[str, Mapping[str, bytes]]) -> list[dict[str, Any]]:
    """Return what the ledger (analysis/ledger.py) tells on the day being sealed, as of its
    figures: every event that touched it and, on the first day a night seals, the
    corrections of earlier days found since the last day was sealed."""
    # Load inputs: the store as this snapshot found it, and tonight's knowledge.
    store, day = inputs.store, plan.day.isoformat()
    stored = store.sealed_days()
    sealers = {d.isoformat(): (s.id, s.taken_at.timestamp()) for d, s in stored.items()}
    sealers.update({d: (inputs.snapshot, inputs.as_of.timestamp()) for d in tonight})
    sealed = {d.isoformat(): store.sealed_day(d) or {} for d in stored}
    first_seen = {fid: (snapshot_id(at), at.timestamp())
                  for fid, at in store.failures_first_seen().items()}
    for f in seen.failures:
        first_seen.setdefault(f.id, (inputs.snapshot, inputs.as_of.timestamp()))
    as_of = plan.figures_as_of

    def refigure(when: str) -> DaySummary:
        return summarize_day(date.fromisoformat(when), seen.series, seen.failures, {},
                             inputs.config, inputs.snapshot, inputs.as_of, as_of=as_of)

    # Process.
    ledger = build_ledger(LedgerInputs(
        inputs.config, [d for d in (previous, summary) if d], seen.series, seen.failures,
        inputs.changes.changes if inputs.changes else (),
        state.finish if state is not None else None, as_of.timestamp(),
        first_seen=first_seen, sealers=sealers, refigure=refigure, sealed=sealed))
    told = [e.to_json() for e in ledger.on(day) if e.kind != "correction"]
    if not tonight:  # the first day this night seals announces what was found since
        since = max((s.taken_at.timestamp() for s in store.snapshots() if s.sealed),
                    default=float("-inf"))
        for e in ledger.of_kind("correction"):
            if e.start > since:
                found = e.to_json()
                found["facts"]["announced_in"] = day
                told.append(found)
    return told


def _mark_missing(summary: DaySummary, plan: DaySeal, config: RunConfig) -> None:
    """Say, in the day JSON and its summary, which sources a day was sealed without."""
    names = ", ".join(m.source for m in plan.missing)
    summary["missing_sources"] = [m.to_json() for m in plan.missing]
    summary["summary"] += (
        f" Sealed without {names}: it had not answered since the day ended and the day "
        f"waited sealing.max_wait_days ({config.sealing.max_wait_days}), so figures from it "
        "are missing or partial.")


@dataclass(frozen=True)
class EditionInputs:
    """What the editions a snapshot seals later are computed from: the store as it found
    it (every day sealed before it), and who draws (as in SealInputs)."""

    config: RunConfig
    store: Store
    snapshot: str
    changes: RunChanges | None = None
    draw: Draw | None = None
    # Only these days (None: every sealed day without an edition in a site language), and
    # these languages (None: the site's other languages).
    days: tuple[str, ...] | None = None
    languages: tuple[str, ...] | None = None


def seal_editions(inputs: EditionInputs) -> dict[str, dict[str, bytes]]:
    """Return {day: {path under docs/: bytes}} of the editions this snapshot seals later:
    a day sealed before has no page yet in a language the site now has (a store sealed
    before editions were, or `site.languages` gained one). Each is rendered from the day's
    sealed JSON, its charts from the data its English charts were drawn from (the rows the
    store held when the day was sealed, logged up to its figures' snapshot, and the
    changes known then); the page names the record and says it was sealed later."""
    config, store = inputs.config, inputs.store
    languages = [lang for lang in editions(config)
                 if inputs.languages is None or lang.code in inputs.languages]
    if not languages:
        return {}
    out: dict[str, dict[str, bytes]] = {}
    snapshots = store.snapshots()
    runs = store.load_runs()
    known = inputs.changes.changes if inputs.changes else ()
    for day, sealer in sorted(store.sealed_days().items()):
        when = day.isoformat()
        todo = [lang for lang in languages if store.edition_sealer(day, lang.code) is None]
        if not todo or (inputs.days is not None and when not in inputs.days):
            continue
        sealed = store.sealed_day(day)
        english = store.sealed_bytes(f"days/{when}.md")
        if sealed is None or english is None:
            continue
        summary = cast(DaySummary, sealed)
        figures = next((s for s in snapshots if s.taken_at.timestamp()
                        >= day_bounds(day)[1]), sealer)
        rows = store.metrics_seen_by(sealer, figures.taken_at.timestamp())
        series = build_series(rows, runs, config)
        failures = sorted(store.failures_at(figures), key=lambda f: (f.start, f.id))
        changes = [c for c in known if str(c.get("recorded_by") or "") <= sealer.id]
        record = {"snapshot": sealer.id, "sha256": sha256_bytes(english),
                  "sealed_later": inputs.snapshot}
        files: dict[str, bytes] = {}
        for lang in todo:
            folder = edition_folder(when, lang.code)
            charts = day_charts(day, series, failures, config, lang, changes)
            drawn = inputs.draw(folder, charts) if inputs.draw is not None \
                else start_statics(charts, FEED_IMAGES).result
            svgs, pngs = drawn()
            files.update(edition_day_files(summary, charts, svgs, config, record, lang, pngs))
        out[when] = files
    return out
