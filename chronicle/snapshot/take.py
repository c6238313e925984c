"""`chronicle snapshot`: fetch every source, append one snapshot, seal closed days
(snapshot stage).

This is the only command that touches the network (through sources/, see fetch.py). A
source that fails is recorded in the manifest and the snapshot is still written for the
others; nothing stored before is ever changed. It holds the store's lock throughout, and
seals only the days whose data is complete (plan.py), as of when a timely seal would have.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa

from chronicle.config import RunConfig
from chronicle.executor import Executor
from chronicle.models import FailureRecord, Fetched, SourceStatus
from chronicle.render.svg import require_han_font
from chronicle.snapshot.fetch import Fetcher, fetch_live, fetch_simulated_source
from chronicle.snapshot.mementos import record_check
from chronicle.snapshot.night import Tonight, prepare_night
from chronicle.snapshot.plan import SEALING, WaitingDay
from chronicle.snapshot.preflight import check_as_of, check_scaffold_values
from chronicle.snapshot.seal import (
    EditionInputs,
    SealInputs,
    drawn_by,
    seal_days,
    seal_editions,
)
from chronicle.sources.manual import load_failures_file
from chronicle.store import (
    Store,
    check_pending_mementos,
    locked,
    snapshot_id,
    unstored_rows,
    write_snapshot,
)


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
    waiting: tuple[WaitingDay, ...] = ()  # closed days left unsealed, and why
    incomplete: tuple[str, ...] = ()  # days sealed anyway without every source
    recovered: tuple[str, ...] = ()  # what a killed earlier snapshot left, now finished
    editions: tuple[str, ...] = ()  # days sealed before whose other-language pages it sealed

    @property
    def degraded(self) -> bool:
        return any(s.degraded for s in self.statuses)


def take_snapshot(
    config: RunConfig,
    as_of: datetime,
    fetcher: Fetcher | None = None,
    store: Store | None = None,
    backfilled: bool = False,
    now: datetime | None = None,
    executor: Executor | None = None,
) -> SnapshotResult:
    """Append one snapshot as of `as_of` and seal every day whose data is complete.

    Without an `executor` it starts no process of its own (the live sources' clients
    may: wandb-core): the sealed days' charts are drawn in this process. With one (the
    demo's nights), its render workers draw them (`drawn_by`).
    """
    # Bad input stops us before the store is even locked.
    check_scaffold_values(config)
    require_han_font(config.site.languages, "sealing a day")
    manual = load_failures_file(config)
    store = store or Store(config.docs_dir)
    with locked(store, "snapshot") as recovered:
        store.refresh()
        result = _take(config, store, as_of, manual, fetcher, backfilled,
                       now or datetime.now(UTC), executor)
    return replace(result, recovered=tuple(recovered))


def _take(config: RunConfig, store: Store, as_of: datetime, manual: list[FailureRecord],
          fetcher: Fetcher | None, backfilled: bool, now: datetime,
          executor: Executor | None = None) -> SnapshotResult:
    # Load inputs.
    check_as_of(config, store, as_of, now)
    # A mementos record someone else wrote is refused before anything is fetched.
    check_record = record_check(config, store, os.environ)
    check_pending_mementos(store, check_record)
    if fetcher is None:
        fetcher = fetch_simulated_source if config.source == "simulated" else fetch_live
    fetched = fetcher(config, store, as_of)

    # Process.
    new_rows = _new_rows(store, fetched, as_of)
    sid = snapshot_id(as_of)
    night = prepare_night(config, store, Tonight(
        sid, as_of, new_rows, new_rows if new_rows is not None and new_rows.num_rows else None,
        fetched.runs, fetched.threads, fetched.pulls, fetched.statuses,
        [*manual, *fetched.failures]))
    failures, corrections, plan = night.failures, night.corrections, night.plan
    draw = drawn_by(executor)
    sealed = seal_days(SealInputs(
        config, store, as_of, sid, plan.ready, night.evidence, backfilled,
        context=night.context,
        corrections=tuple(store.pending_corrections() + corrections), changes=night.changes,
        draw=draw))
    # Days sealed before without a page in one of the site's languages get it now.
    later = seal_editions(EditionInputs(config, store, sid, night.changes, draw=draw))
    extra: dict[str, Any] = {"sealing": SEALING}
    if backfilled:
        extra["backfilled"] = backfilled
    if corrections:
        extra["corrections"] = corrections
    if plan.waiting:
        extra["waiting"] = [w.to_json() for w in plan.waiting]

    # Save outputs.
    info = write_snapshot(store, as_of, new_rows, fetched.runs, fetched.threads, failures,
                          fetched.statuses, sealed=sealed, extra=extra or None,
                          pulls=fetched.pulls, check_record=check_record, editions=later)
    return SnapshotResult(
        snapshot=info.id,
        taken_at=as_of,
        rows=new_rows.num_rows if new_rows is not None else 0,
        threads=len(fetched.threads or ()),
        failures=len(failures),
        sealed=tuple(sorted(sealed)),
        editions=tuple(sorted(later)),
        statuses=fetched.statuses,
        waiting=plan.waiting,
        incomplete=tuple(d.day.isoformat() for d in plan.ready if d.missing),
    )


def _new_rows(store: Store, fetched: Fetched, as_of: datetime) -> pa.Table | None:
    """Return the fetched rows not stored before (a re-fetched step is never stored twice)."""
    if fetched.metrics is None:
        return None
    return unstored_rows(store.load_metrics(), fetched.metrics, as_of.timestamp())
