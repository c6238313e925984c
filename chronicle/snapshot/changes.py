"""The changes known when a snapshot is taken: the store's plus those in the snapshot
being written (snapshot stage).

The snapshot being taken is evidence too: its files are named by the sha256 of the exact
bytes the store is about to write, so a sealed day can cite a change found tonight.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from chronicle.analysis.changes import ChangeInputs, RunChanges, run_changes
from chronicle.analysis.mixture import weight_prefix
from chronicle.analysis.recorded import Recorded
from chronicle.analysis.series import Series
from chronicle.config import RunConfig
from chronicle.models import MetricRow, PullRequest, RunRecord
from chronicle.store import Store, dump_json, sha256_bytes


@dataclass(frozen=True)
class Pending:
    """The snapshot being taken, shaped like a stored one (id, time, files' sha256s)."""

    id: str
    taken_at: datetime
    files: dict[str, dict[str, Any]] = field(default_factory=dict)


def pending_snapshot(sid: str, as_of: datetime, runs: Sequence[RunRecord] | None,
                     pulls: Sequence[PullRequest] | None,
                     metrics: dict[str, Any] | None) -> Pending:
    """Return the snapshot being taken with the sha256 of the files it will hold.

    `metrics` is the {sha256, size} of its metrics.parquet (None when it writes none).
    """
    files: dict[str, dict[str, Any]] = {}
    for name, items in (("runs.json", runs), ("pulls.json", pulls)):
        if items is not None:
            blob = dump_json([item.to_json() for item in items])
            files[name] = {"sha256": sha256_bytes(blob), "size": len(blob)}
    if metrics is not None:
        files["metrics.parquet"] = metrics
    return Pending(sid, as_of, files)


def known_changes(config: RunConfig, store: Store, series: Series, pending: Recorded,
                  runs: Sequence[RunRecord] | None, pulls: Sequence[PullRequest] | None,
                  new_rows: pa.Table | None) -> RunChanges:
    """Return the changes the store and the snapshot being taken show together."""
    # Load inputs.
    key = config.wandb.metrics["mixture_stage"]
    run_history: list[tuple[Recorded, Sequence[RunRecord]]] = list(store.run_history())
    pull_history: list[tuple[Recorded, Sequence[PullRequest]]] = list(store.pull_history())
    stages: list[tuple[Recorded, Sequence[MetricRow]]] = list(
        store.rows_with(key, weight_prefix(key)))
    # Process: tonight's files join the history as the newest snapshot.
    if runs is not None:
        run_history.append((pending, runs))
    if pulls is not None:
        pull_history.append((pending, pulls))
    tonight = _rows_with(new_rows, key)
    if tonight:
        stages.append((pending, tonight))
    return run_changes(ChangeInputs(run_history, pull_history, stages), series, config)


def _rows_with(rows: pa.Table | None, key: str) -> list[MetricRow]:
    """Return the rows where `key` was logged, each without its null columns (as stored
    rows are read: Store.rows_with)."""
    if rows is None or key not in rows.column_names:
        return []
    found = rows.filter(pc.is_valid(rows.column(key)))
    return [{k: v for k, v in row.items() if v is not None} for row in found.to_pylist()]
