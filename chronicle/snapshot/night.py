"""What a snapshot computes before it seals: the series, failure records, corrections,
changes, seal plan and evidence of the store plus the snapshot being taken (snapshot stage).

`chronicle snapshot` computes it for the snapshot it is about to write (take.py); `chronicle
verify --recompute` for each stored snapshot, from the store as that snapshot found it plus
that snapshot's own files (recompute.py). One code path: a recomputed day is computed by
exactly what sealed it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import pyarrow as pa

from chronicle.analysis.changes import RunChanges
from chronicle.analysis.incidents import detect_failures
from chronicle.analysis.run_state import run_finish
from chronicle.analysis.series import Series, build_series
from chronicle.config import RunConfig
from chronicle.models import (
    FailureRecord,
    PullRequest,
    RunRecord,
    SourceStatus,
    Thread,
)
from chronicle.snapshot.changes import known_changes, pending_snapshot
from chronicle.snapshot.corrections import snapshot_corrections
from chronicle.snapshot.evidence import Evidence, EvidenceAt, merge_failures
from chronicle.snapshot.plan import SEALING, SealPlan, plan_seals
from chronicle.snapshot.provenance import SealContext
from chronicle.sources.manual import failures_from_threads
from chronicle.store import SnapshotInfo, Store


@dataclass(frozen=True)
class Tonight:
    """The snapshot being taken (or, replayed, a stored one): its id, time and data."""

    sid: str
    as_of: datetime
    rows: pa.Table | None  # the rows new in it (None: W&B failed)
    table: pa.Table | None  # the same rows (None: no row)
    runs: list[RunRecord] | None  # None: the source failed (the newest stored ones count)
    threads: list[Thread] | None
    pulls: list[PullRequest] | None
    statuses: tuple[SourceStatus, ...]
    given: list[FailureRecord]  # hand-written (failures.yml) and source-given records
    stored: SnapshotInfo | None = None  # replayed: the snapshot as stored (its files' sha256s)
    # Whether the run's state (analysis/run_state.py) is tracked: False only to replay a
    # snapshot taken before it was, whose days were sealed without it.
    states: bool = True
    # The rules it seals by (snapshot/plan.py SEALING); a replayed snapshot's own.
    sealing: int = SEALING


@dataclass(frozen=True)
class Night:
    """What the snapshot `tonight` computes from the store and its own data."""

    tonight: Tonight
    series: Series
    history: dict[int, list[Thread]]
    failures: list[FailureRecord]
    corrections: list[dict[str, Any]]  # late rows of sealed days found by this snapshot
    context: SealContext
    changes: RunChanges
    plan: SealPlan
    evidence: EvidenceAt


def prepare_night(config: RunConfig, store: Store, tonight: Tonight) -> Night:
    """Compute everything the snapshot `tonight` seals from (`store`: as it found it)."""
    # Load inputs: the stored rows (each file checked against the chain) and tonight's.
    table = store.load_metrics()
    if tonight.table is not None:
        table = pa.concat_tables([table, tonight.table], promote_options="default")
    runs = tonight.runs if tonight.runs is not None else store.load_runs()

    # Process.
    series = build_series(table, runs, config)
    finish = run_finish(series, runs, config) if tonight.states else None
    timed = timed_threads(store, tonight.threads, tonight.as_of)
    history = {n: [t for _, t in states] for n, states in timed.items()}
    latest_threads = [states[-1] for states in history.values() if states]
    failures = merge_failures(
        detect_failures(series, config, tonight.as_of, finish),
        failures_from_threads(latest_threads, config),
        tonight.given,
    )
    corrections = snapshot_corrections(
        config, store, series, failures, history, tonight.rows, tonight.sid, tonight.as_of)
    context = SealContext(config, store, tonight.sid, tonight.rows, failures, tonight.runs,
                          stored=tonight.stored)
    pending = tonight.stored or pending_snapshot(
        tonight.sid, tonight.as_of, tonight.runs, tonight.pulls, context.new_metrics)
    changes = known_changes(config, store, series, pending, tonight.runs, tonight.pulls,
                            tonight.rows)
    plan = plan_seals(config, store, tonight.as_of, tonight.sid, tonight.statuses,
                      float(series.timestamp.min()) if len(series) else None,
                      finish.at if finish is not None and tonight.sealing >= 2 else None)
    given = list(tonight.given)
    evidence = EvidenceAt(config, table, runs, timed, lambda: list(given),
                          (tonight.as_of, Evidence(series, failures, history, finish)))
    return Night(tonight, series, history, failures, corrections, context, changes, plan,
                 evidence)


def timed_threads(store: Store, threads: Sequence[Thread] | None,
                  as_of: datetime) -> dict[int, list[tuple[datetime, Thread]]]:
    """Return each thread's stored states and tonight's, with when each was fetched."""
    timed: dict[int, list[tuple[datetime, Thread]]] = {
        n: [(snap.taken_at, t) for snap, t in states]
        for n, states in store.thread_history().items()}
    for thread in threads or ():
        timed.setdefault(thread.number, []).append((as_of, thread))
    return timed
