"""`chronicle snapshot`: fetch every source, append one snapshot, seal closed days
(snapshot stage).

This is the only command that touches the network (through sources/, see fetch.py). A
source that fails is recorded in the manifest and the snapshot is still written for the
others; nothing stored before is ever changed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pyarrow as pa

from chronicle.analysis.incidents import detect_failures
from chronicle.analysis.series import build_series
from chronicle.config import RunConfig
from chronicle.errors import ChronicleError, StoreError
from chronicle.models import FailureRecord, Fetched, MetricRow, SourceStatus, iso
from chronicle.snapshot.changes import known_changes, pending_snapshot
from chronicle.snapshot.corrections import snapshot_corrections
from chronicle.snapshot.fetch import Fetcher, fetch_live, fetch_simulated_source
from chronicle.snapshot.provenance import SealContext
from chronicle.snapshot.seal import SealInputs, seal_days
from chronicle.sources.manual import failures_from_threads, load_failures_file
from chronicle.store import Store, rows_to_table, snapshot_id, write_snapshot

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
    _check_time(config, store, as_of, now or datetime.now(UTC))
    manual = load_failures_file(config)  # a bad failures.yml stops us before any fetch
    if fetcher is None:
        fetcher = fetch_simulated_source if config.source == "simulated" else fetch_live
    fetched = fetcher(config, store, as_of)

    # Process.
    new_rows = _new_rows(store, fetched, as_of)
    table = store.load_metrics()
    if new_rows:
        table = pa.concat_tables([table, rows_to_table(new_rows)], promote_options="default")
    runs = fetched.runs if fetched.runs is not None else store.load_runs()
    series = build_series(table, runs, config)
    history = {n: [t for _, t in states] for n, states in store.thread_history().items()}
    for thread in fetched.threads or ():
        history.setdefault(thread.number, []).append(thread)
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
    context = SealContext(config, store, sid, new_rows, failures, fetched.runs)
    pending = pending_snapshot(sid, as_of, fetched.runs, fetched.pulls, context.new_metrics)
    known = known_changes(config, store, series, pending, fetched.runs, fetched.pulls,
                          new_rows)
    sealed = seal_days(SealInputs(
        config, store, as_of, sid, series, failures, history, backfilled,
        context=context, corrections=tuple(store.pending_corrections() + corrections),
        changes=known))
    extra: dict[str, Any] = {"backfilled": backfilled} if backfilled else {}
    if corrections:
        extra["corrections"] = corrections

    # Save outputs.
    info = write_snapshot(store, as_of, new_rows, fetched.runs, fetched.threads, failures,
                          fetched.statuses, sealed=sealed, extra=extra or None,
                          pulls=fetched.pulls)
    return SnapshotResult(
        snapshot=info.id,
        taken_at=as_of,
        rows=len(new_rows or ()),
        threads=len(fetched.threads or ()),
        failures=len(failures),
        sealed=tuple(sorted(sealed)),
        statuses=fetched.statuses,
    )


def _check_time(config: RunConfig, store: Store, as_of: datetime, now: datetime) -> None:
    """Refuse an --as-of that is naive, not after the newest snapshot, or in the future."""
    if as_of.tzinfo is None:
        raise ValueError("as_of must be an aware UTC datetime")
    latest = store.latest()
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


def _new_rows(store: Store, fetched: Fetched, as_of: datetime) -> list[MetricRow] | None:
    """Return the fetched rows not stored before (a re-fetched step is never stored twice)."""
    if fetched.metrics is None:
        return None
    stored = store.stored_keys()
    seen: set[tuple[str, int]] = set()
    out: list[MetricRow] = []
    for row in fetched.metrics:
        key = (row["run"], int(row["step"]))
        if key not in stored and key not in seen and row["timestamp"] <= as_of.timestamp():
            seen.add(key)
            out.append(row)
    return out


def _merge_failures(*groups: list[FailureRecord]) -> list[FailureRecord]:
    """One record per id; a hand-written record overrides a detected one."""
    merged: dict[str, FailureRecord] = {}
    for group in groups:
        for record in group:
            merged[record.id] = record
    return sorted(merged.values(), key=lambda f: (f.start, f.id))

