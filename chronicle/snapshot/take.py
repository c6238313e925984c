"""`chronicle snapshot`: fetch every source, append one snapshot, seal closed days.

This is the only stage that touches the network (through sources/). A source that
fails is recorded in the manifest and the snapshot is still written for the others;
nothing stored before is ever changed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pyarrow as pa

from chronicle.analysis.days import summarize_day
from chronicle.analysis.incidents import detect_failures
from chronicle.analysis.series import Series, build_series
from chronicle.analysis.verdicts import day1_sha256, watch_day
from chronicle.config import RunConfig
from chronicle.errors import ChronicleError, SourceError, StoreError
from chronicle.models import FailureRecord, Fetched, MetricRow, SourceStatus, Thread, iso
from chronicle.render.day import render_day_files
from chronicle.render.day_charts import day_charts, render_svgs
from chronicle.snapshot.provenance import day_provenance
from chronicle.snapshot.sealing import SealContext, pending_corrections, snapshot_corrections
from chronicle.sources.manual import failures_from_threads, load_failures_file
from chronicle.store import Store, rows_to_table, snapshot_id

# A nightly job that runs a little late must not be mistaken for a clock in the future.
_FUTURE_SLACK = timedelta(minutes=5)


@dataclass(frozen=True)
class SnapshotResult:
    """What one `chronicle snapshot` did."""

    snapshot: str
    taken_at: datetime
    rows: int
    threads: int
    failures: int
    sealed: tuple[str, ...]
    statuses: tuple[SourceStatus, ...]
    warnings: tuple[str, ...] = field(default_factory=tuple)

    @property
    def degraded(self) -> bool:
        return any(not s.ok for s in self.statuses)


Fetcher = Callable[[RunConfig, Store, datetime], Fetched]


def fetch_live(config: RunConfig, store: Store, as_of: datetime) -> Fetched:
    """Fetch W&B and GitHub; a failing source is recorded, never fatal."""
    from chronicle.sources.github import fetch_github
    from chronicle.sources.wandb import fetch_wandb

    statuses: list[SourceStatus] = []
    metrics = runs = threads = None
    try:
        got = fetch_wandb(config, store.last_steps(), as_of)
        # A child's fork step is only seen the night it first logs: carry it forward.
        known = {r.id: r.fork_step for r in store.load_runs()}
        metrics = got.rows
        runs = [
            replace(r, fork_step=known.get(r.id)) if r.fork_step is None else r for r in got.runs
        ]
        statuses.append(SourceStatus("wandb", True, detail=got.detail))
    except SourceError as err:
        statuses.append(SourceStatus("wandb", False, error=str(err)))
    try:
        gh = fetch_github(config, _since_last_ok(store, "github"), as_of)
        threads = gh.threads
        statuses.append(SourceStatus("github", True, detail=gh.detail))
    except SourceError as err:
        statuses.append(SourceStatus("github", False, error=str(err)))
    return Fetched(metrics, runs, threads, [], tuple(statuses))


def _since_last_ok(store: Store, source: str) -> datetime | None:
    """Fetch threads updated since the last snapshot where this source succeeded."""
    for snap in reversed(store.snapshots()):
        status = snap.sources.get(source)
        if status is not None and status.ok:
            return snap.taken_at
    return None


def fetch_simulated_source(
    config: RunConfig, store: Store, as_of: datetime, sim: Any = None
) -> Fetched:
    """Fetch from the simulated run (offline demo) through the real parsers."""
    from chronicle.sources.simulated import fetch_simulated

    return fetch_simulated(
        config, store.last_steps(), _since_last_ok(store, "github"), as_of, sim=sim
    )


def days_to_seal(config: RunConfig, store: Store, as_of: datetime) -> list[date]:
    """Return the closed, not yet sealed days of the run up to `as_of`, oldest first."""
    sealed = store.sealed_days()
    last_closed = as_of.astimezone(UTC).date() - timedelta(days=1)
    out = []
    day = config.run.start
    while day <= last_closed:
        if day not in sealed:
            out.append(day)
        day += timedelta(days=1)
    return out


def _merge_threads(history: dict[int, list[Thread]], new: list[Thread] | None) -> None:
    for thread in new or ():
        history.setdefault(thread.number, []).append(thread)


def _previous_day(store: Store, day: date) -> dict[str, Any] | None:
    path = store.days / f"{(day - timedelta(days=1)).isoformat()}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def take_snapshot(
    config: RunConfig,
    as_of: datetime,
    fetcher: Fetcher | None = None,
    store: Store | None = None,
    backfilled: bool = False,
    now: datetime | None = None,
) -> SnapshotResult:
    """Append one snapshot as of `as_of` and seal every day that has closed."""
    # Load inputs.
    store = store or Store(config.docs_dir)
    now = now or datetime.now(UTC)
    latest = store.latest()
    if as_of.tzinfo is None:
        raise ValueError("as_of must be an aware UTC datetime")
    if latest is not None and as_of <= latest.taken_at:
        raise StoreError(
            f"--as-of {iso(as_of)} is not after the newest snapshot {latest.id} "
            f"({iso(latest.taken_at)}); snapshots are append-only: pass a later time"
        )
    if config.source == "live" and as_of > now + _FUTURE_SLACK:
        raise ChronicleError(
            f"--as-of {iso(as_of)} is in the future (now {iso(now)}); "
            "pass a time that has passed, or omit --as-of"
        )
    if (store.data / snapshot_id(as_of)).exists():
        raise StoreError(
            f"{store.data / snapshot_id(as_of)}: snapshot already exists; "
            "snapshots are never rewritten"
        )
    manual = load_failures_file(config)  # a bad failures.yml stops us before any fetch
    if fetcher is None:
        fetcher = fetch_simulated_source if config.source == "simulated" else fetch_live
    fetched = fetcher(config, store, as_of)

    # Process: only rows not stored before (a re-fetched step is never stored twice).
    stored = store.stored_keys()
    new_rows: list[MetricRow] | None = None
    if fetched.metrics is not None:
        seen: set[tuple[str, int]] = set()
        new_rows = []
        for row in fetched.metrics:
            key = (row["run"], int(row["step"]))
            if key not in stored and key not in seen and row["timestamp"] <= as_of.timestamp():
                seen.add(key)
                new_rows.append(row)
    table = store.load_metrics()
    if new_rows:
        table = pa.concat_tables([table, rows_to_table(new_rows)], promote_options="default")
    runs = fetched.runs if fetched.runs is not None else store.load_runs()
    series = build_series(table, runs, config)
    history = {n: [t for _, t in states] for n, states in store.thread_history().items()}
    _merge_threads(history, fetched.threads)
    latest_threads = [states[-1] for states in history.values() if states]
    failures = _merge_failures(
        detect_failures(series, config, as_of),
        failures_from_threads(latest_threads, config),
        manual,
        fetched.failures,
    )
    sid = snapshot_id(as_of)
    corrections = snapshot_corrections(
        config, store, series, failures, history, new_rows, sid, as_of
    )
    context = SealContext(config, store, sid, new_rows, failures)
    announce = pending_corrections(store) + corrections
    sealed = _seal_days(
        config, store, as_of, sid, series, failures, history, backfilled, context, announce
    )
    extra: dict[str, Any] = {"backfilled": backfilled} if backfilled else {}
    if corrections:
        extra["corrections"] = corrections

    # Save outputs.
    info = store.write_snapshot(
        as_of,
        new_rows,
        fetched.runs,
        fetched.threads,
        failures,
        fetched.statuses,
        sealed=sealed,
        extra=extra or None,
    )
    return SnapshotResult(
        snapshot=info.id,
        taken_at=as_of,
        rows=len(new_rows or ()),
        threads=len(fetched.threads or ()),
        failures=len(failures),
        sealed=tuple(sorted(sealed)),
        statuses=fetched.statuses,
    )


def _merge_failures(*groups: list[FailureRecord]) -> list[FailureRecord]:
    """One record per id; a hand-written record overrides a detected one."""
    merged: dict[str, FailureRecord] = {}
    for group in groups:
        for record in group:
            merged[record.id] = record
    return sorted(merged.values(), key=lambda f: (f.start, f.id))


def _seal_days(
    config: RunConfig,
    store: Store,
    as_of: datetime,
    sid: str,
    series: Series,
    failures: list[FailureRecord],
    history: dict[int, list[Thread]],
    backfilled: bool,
    context: SealContext | None = None,
    corrections: list[dict[str, Any]] | None = None,
) -> dict[str, dict[str, bytes]]:
    sealed: dict[str, dict[str, bytes]] = {}
    previous: dict[str, Any] | None = None
    day1: dict[str, Any] | None = None  # day 1 holds the prediction's registered sha256
    for day in days_to_seal(config, store, as_of):
        if previous is None or previous["date"] != (day - timedelta(days=1)).isoformat():
            previous = _previous_day(store, day)
        summary = summarize_day(
            day,
            series,
            failures,
            history,
            config,
            sid,
            as_of,
            previous=previous,
            backfilled=backfilled,
        )
        if day1 is None and day != config.run.start:
            day1 = _previous_day(store, config.run.start + timedelta(days=1))
        fraction = summary["tokens"]["budget_fraction"]
        summary.update(watch_day(day, fraction, series, failures, config, as_of, previous,
                                 day1_sha256(day, config, day1)))
        day1 = summary if day == config.run.start else day1
        if context is not None:
            summary["provenance"] = day_provenance(
                summary, series.raw_keys, context.scopes(day, sealed)
            )
        # Late data about sealed days is announced by the first entry sealed after it.
        summary["corrections"] = (corrections or []) if not sealed else []
        charts = day_charts(day, series, failures)
        svgs = render_svgs(charts)
        sealed[day.isoformat()] = render_day_files(summary, charts, svgs, config)
        previous = summary
    return sealed
