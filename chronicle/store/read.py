"""Reading the append-only store under a chronicle's docs/ folder (store stage).

Layout (contract, see README "Store layout"):
    docs/data/<YYYY-MM-DD>T<HHMMSS>Z/{metrics.parquet,runs.json,threads.json,pulls.json,
                                       failures.json,MANIFEST.json}
    docs/days/<date>.md, <date>.json, <date>/*.vl.json|*.svg   (sealed day pages)

`Store` reads snapshots, sealed days, metrics, runs, threads and failure records; writing
is store/write.py's and checking store/verify.py's.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import pyarrow as pa

from chronicle.models import (
    FailureRecord,
    MetricRow,
    PullRequest,
    RunRecord,
    SourceStatus,
    Thread,
    parse_time,
)
from chronicle.store.compact import read_compact, write_compact
from chronicle.store.files import damaged, parse_records, read_parquet
from chronicle.store.hashing import sha256_bytes
from chronicle.store.manifest import manifest_problems

MANIFEST = "MANIFEST.json"
MANIFEST_FORMAT = "chronicle-manifest/1"
DATA_DIR = "data"
DAYS_DIR = "days"
TMP_PREFIX = ".tmp-"
STAGED = ".sealed"  # inside a snapshot folder: its sealed day files, until published
LOCK_FILE = ".chronicle.lock"  # in the chronicle folder (next to docs/): one writer at a time
SNAPSHOT_FILES = ("metrics.parquet", "runs.json", "threads.json", "pulls.json",
                  "failures.json")
T = TypeVar("T")


def snapshot_id(when: datetime) -> str:
    """Return the snapshot id (folder name) for a UTC time: 2026-09-30T031700Z."""
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H%M%SZ")


def parse_snapshot_id(sid: str) -> datetime:
    """Inverse of snapshot_id()."""
    return datetime.strptime(sid, "%Y-%m-%dT%H%M%SZ").replace(tzinfo=UTC)


@dataclass(frozen=True)
class SnapshotInfo:
    """One stored snapshot, read from its manifest."""

    id: str
    taken_at: datetime
    path: Path
    manifest: dict[str, Any]
    manifest_sha256: str

    @property
    def files(self) -> dict[str, dict[str, Any]]:
        return dict(self.manifest.get("files", {}))

    @property
    def sources(self) -> dict[str, SourceStatus]:
        return {
            name: SourceStatus.from_json(name, d)
            for name, d in self.manifest.get("sources", {}).items()
        }

    @property
    def sealed(self) -> dict[str, dict[str, dict[str, Any]]]:
        """date -> {path relative to docs/: {sha256, size}} of the days this snapshot sealed."""
        return dict(self.manifest.get("sealed", {}))

    @property
    def degraded(self) -> bool:
        return any(not s.ok for s in self.sources.values())


@dataclass
class _Cache:
    ids: tuple[str, ...] = ()
    metrics: pa.Table | None = None
    keys: set[tuple[str, int]] = field(default_factory=set)
    last_steps: tuple[int, dict[str, int]] | None = None  # (rows it was computed from, steps)


def read_snapshot_info(folder: Path) -> SnapshotInfo:
    """Return the snapshot stored in `folder`; StoreError if its manifest is unreadable."""
    path = folder / MANIFEST
    try:
        raw = path.read_bytes()
        manifest = json.loads(raw)
    except (OSError, ValueError) as err:
        raise damaged(path, "manifest", err) from err
    problems = manifest_problems(manifest)
    if problems:
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        raise damaged(path, "manifest", "; ".join(problems[:3]) + more)
    taken = parse_time(manifest["taken_at"])
    assert taken is not None
    return SnapshotInfo(folder.name, taken, folder, manifest, sha256_bytes(raw))


class Store:
    """Read the store rooted at a chronicle's docs/ folder (cached until `refresh()`)."""

    def __init__(self, docs: Path) -> None:
        self.docs = docs
        self.data = docs / DATA_DIR
        self.days = docs / DAYS_DIR
        self._cache = _Cache()
        self._snapshots: list[SnapshotInfo] | None = None
        # A complete snapshot never changes (append-only, published by one rename), so
        # what was read from it is kept across refresh(): a process that appends a
        # snapshot a night (the demo) reads each earlier one once, not once a night.
        self._read: dict[tuple[str, ...], Any] = {}

    def refresh(self) -> None:
        """Forget the snapshot list (a snapshot was just appended)."""
        self._snapshots = None

    def snapshots(self) -> list[SnapshotInfo]:
        """Return every complete snapshot, oldest first."""
        if self._snapshots is None:
            found = []
            if self.data.is_dir():
                for child in sorted(self.data.iterdir()):
                    if child.name.startswith(".") or not child.is_dir():
                        continue
                    found.append(self._once((child.name, MANIFEST),
                                            partial(read_snapshot_info, child)))
            self._snapshots = found
        return list(self._snapshots)

    def _once(self, key: tuple[str, ...], read: Callable[[], T]) -> T:
        """Return what `read` reads from a complete snapshot, reading it once per Store."""
        if key not in self._read:
            self._read[key] = read()
        value: T = self._read[key]
        return value

    def _records(self, snap: SnapshotInfo, name: str, what: str,
                 parse: Callable[[Any], T]) -> list[T]:
        return self._once((snap.id, name),
                          lambda: parse_records(snap.path / name, what, parse))

    def latest(self) -> SnapshotInfo | None:
        snaps = self.snapshots()
        return snaps[-1] if snaps else None

    def sealed_days(self) -> dict[date, SnapshotInfo]:
        """Return each sealed day and the snapshot that sealed it."""
        out: dict[date, SnapshotInfo] = {}
        for snap in self.snapshots():
            for day in snap.sealed:
                out.setdefault(date.fromisoformat(day), snap)
        return out

    def load_metrics(self) -> pa.Table:
        """Return every stored metric row once, sorted by run, step.

        The first call in a process starts from the compact copy of earlier snapshots'
        rows when one is valid (store/compact.py), and leaves an up-to-date one behind;
        later calls (a demo's nights in one process) extend the table in memory only.
        """
        snaps = self.snapshots()
        ids = tuple(s.id for s in snaps)
        from_disk = self._cache.metrics is None
        if self._cache.ids != ids[: len(self._cache.ids)] or self._cache.metrics is None:
            from_disk = True
            self._cache = _Cache()
            found = read_compact(self.docs, [s.manifest_sha256 for s in snaps])
            if found is not None:
                self._cache.ids, self._cache.metrics = ids[: found[0]], found[1]
        new = [s for s in snaps[len(self._cache.ids) :] if "metrics.parquet" in s.files]
        rows_before = self._cache.metrics.num_rows if self._cache.metrics is not None else 0
        tables = [self._cache.metrics] if self._cache.metrics is not None else []
        added = [read_parquet(s.path / "metrics.parquet") for s in new]
        tables += added
        if not tables:
            table = pa.table(
                {
                    "run": pa.array([], pa.string()),
                    "step": pa.array([], pa.int64()),
                    "timestamp": pa.array([], pa.float64()),
                }
            )
        elif len(tables) == 1:
            table = tables[0]
        else:
            table = pa.concat_tables(tables, promote_options="default")
        if new:
            table = table.sort_by([("run", "ascending"), ("step", "ascending")])
            if from_disk:
                write_compact(self.docs, snaps[-1].manifest_sha256, table)
        if self._cache.keys and len(self._cache.keys) == rows_before:
            # A step is stored once (snapshot/take.py), so the keys only grow by the new rows.
            self._cache.keys |= {key for t in added for key in _keys(t)}
        if self._cache.last_steps is not None and self._cache.last_steps[0] == rows_before:
            # ...and each run's last step is the larger of the known one and the new rows'
            # (grouping the whole table again took a demo night ~10 ms more at 100 days).
            last = dict(self._cache.last_steps[1])
            for t in added:
                for run, step in _last_steps(t).items():
                    last[run] = max(step, last.get(run, step))
            self._cache.last_steps = (table.num_rows, dict(sorted(last.items())))
        self._cache.ids, self._cache.metrics = ids, table
        return table

    def keep_compact(self) -> None:
        """Leave the compact copy of every stored row behind (store/compact.py), for the
        next process to start from: load_metrics() only writes it when it read from disk,
        so one that appended many snapshots (the demo) would leave an old one."""
        table, snaps = self.load_metrics(), self.snapshots()
        if snaps and table.num_rows:
            write_compact(self.docs, snaps[-1].manifest_sha256, table)

    def stored_keys(self) -> set[tuple[str, int]]:
        """Return the (run, step) pairs already stored."""
        table = self.load_metrics()
        if len(self._cache.keys) != table.num_rows:
            self._cache.keys = set(_keys(table))
        return self._cache.keys

    def last_steps(self) -> dict[str, int]:
        """Return the last stored step of each W&B run (for incremental fetches)."""
        table = self.load_metrics()
        # The table only grows, so its row count says whether the answer is current.
        if self._cache.last_steps is None or self._cache.last_steps[0] != table.num_rows:
            self._cache.last_steps = (table.num_rows, _last_steps(table))
        return dict(self._cache.last_steps[1])

    def _latest(self, name: str, what: str, parse: Callable[[Any], T]) -> list[T] | None:
        for snap in reversed(self.snapshots()):
            if name in snap.files:
                return parse_records(snap.path / name, what, parse)
        return None

    def load_runs(self) -> list[RunRecord]:
        """Return the W&B run records of the newest snapshot that has them."""
        return self._latest("runs.json", "run records file", RunRecord.from_json) or []

    def load_failures(self) -> list[FailureRecord]:
        """Return the failure records known at the newest snapshot that has them."""
        found = self._latest("failures.json", "failure records file", FailureRecord.from_json)
        return found or []

    def failures_at(self, snap: SnapshotInfo) -> list[FailureRecord]:
        """Return the failure records known at `snap`: those of the newest snapshot up to
        it that stored them (a snapshot whose sources all failed may have none)."""
        for earlier in reversed([s for s in self.snapshots() if s.taken_at <= snap.taken_at]):
            if "failures.json" in earlier.files:
                return self._records(earlier, "failures.json", "failure records file",
                                     FailureRecord.from_json)
        return []

    def failures_first_seen(self) -> dict[str, datetime]:
        """Return when each failure id first appeared in a snapshot's failures.json."""
        seen: dict[str, datetime] = {}
        for snap in self.snapshots():
            if "failures.json" in snap.files:
                path = snap.path / "failures.json"
                for fid in parse_records(path, "failure records file", lambda r: str(r["id"])):
                    seen.setdefault(fid, snap.taken_at)
        return seen

    def thread_history(self) -> dict[int, list[tuple[SnapshotInfo, Thread]]]:
        """Return, per issue number, each stored state of the thread, oldest first."""
        out: dict[int, list[tuple[SnapshotInfo, Thread]]] = {}
        for snap in self.snapshots():
            if "threads.json" not in snap.files:
                continue
            for thread in self._records(snap, "threads.json", "issue threads file",
                                        Thread.from_json):
                out.setdefault(thread.number, []).append((snap, thread))
        return out

    def run_history(self) -> list[tuple[SnapshotInfo, list[RunRecord]]]:
        """Return each snapshot's W&B run records (runs.json), oldest first."""
        return [(snap, self._records(snap, "runs.json", "run records file",
                                     RunRecord.from_json))
                for snap in self.snapshots() if "runs.json" in snap.files]

    def pull_history(self) -> list[tuple[SnapshotInfo, list[PullRequest]]]:
        """Return each snapshot's merged pull requests (pulls.json), oldest first."""
        return [(snap, self._records(snap, "pulls.json", "pull requests file",
                                     PullRequest.from_json))
                for snap in self.snapshots() if "pulls.json" in snap.files]

    def rows_with(self, key: str, prefix: str = "") -> list[tuple[SnapshotInfo, list[MetricRow]]]:
        """Return, per snapshot, its stored rows where `key` was logged (not null).

        Each row has run, step, timestamp, `key` and the columns starting with `prefix`
        that are not null in it. Only the Parquet columns needed are read.
        """
        out: list[tuple[SnapshotInfo, list[MetricRow]]] = []
        for snap in self.snapshots():
            if "metrics.parquet" not in snap.files:
                continue
            rows = self._once((snap.id, "metrics.parquet", key, prefix),
                              partial(_rows_with, snap.path / "metrics.parquet", key, prefix))
            if rows:
                out.append((snap, rows))
        return out

    def corrections(self) -> list[dict[str, Any]]:
        """Return every correction recorded in a manifest, oldest first."""
        return [c for snap in self.snapshots() for c in snap.manifest.get("corrections", ())]

    def pending_corrections(self) -> list[dict[str, Any]]:
        """Return corrections found since the newest snapshot that sealed a day (unannounced)."""
        out: list[dict[str, Any]] = []
        for snap in reversed(self.snapshots()):
            if snap.sealed:
                break
            out[:0] = snap.manifest.get("corrections", ())
        return out


def _last_steps(table: pa.Table) -> dict[str, int]:
    """Return the largest step of each run in `table`, by run name."""
    if table.num_rows == 0:
        return {}
    last = table.group_by("run").aggregate([("step", "max")])
    return dict(sorted(zip(last.column("run").to_pylist(), last.column("step_max").to_pylist(),
                           strict=True)))


def _rows_with(path: Path, key: str, prefix: str) -> list[MetricRow]:
    """Return the rows of one metrics file where `key` was logged (Store.rows_with)."""
    names = read_parquet(path, schema_only=True).schema.names
    if key not in names:
        return []
    extra = [n for n in names if prefix and n.startswith(prefix) and n != key]
    table = read_parquet(path, columns=["run", "step", "timestamp", key, *extra])
    table = table.filter(table.column(key).is_valid())
    return [{k: v for k, v in row.items() if v is not None} for row in table.to_pylist()]


def _keys(table: pa.Table) -> list[tuple[str, int]]:
    """Return the (run, step) pair of each row of a metrics table."""
    return list(zip(table.column("run").to_pylist(), table.column("step").to_pylist(),
                    strict=True))
