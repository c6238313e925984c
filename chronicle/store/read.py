"""Reading the append-only store under a chronicle's docs/ folder (store stage).

Layout (contract, see documentation/pages/store.md):
    docs/data/<YYYY-MM-DD>T<HHMMSS>Z/{metrics.parquet,runs.json,threads.json,pulls.json,
                                       failures.json,MANIFEST.json}
    docs/days/<date>.md, <date>.json, <date>/*.vl.json|*.svg   (sealed day pages)
    docs/days/<lang>/<date>.md, <date>/*                       (their other editions)
    docs/mementos/<YYYY-MM-DD>T<HHMMSS>Z.json   (Wayback mementos, listed by the next
                                                 manifest: store/mementos.py)

`Store` reads snapshots, sealed days, metrics, runs, threads, failure records and
mementos; writing
is store/write.py's and checking store/verify.py's.

Everything `Store` returns comes from bytes it checked against the chain: the manifests'
`previous` links are followed from the newest one back to the first (each must name its
predecessor's sha256), and every file it reads (a snapshot's data file, a sealed day's
JSON) is hashed and compared with the sha256 and size its manifest recorded, once, from the
same bytes it then parses. A mismatch is a StoreError naming the file and the fix; nothing
is ever read from `.cache/`. What a snapshot seals is therefore computed from verified store
data only (documentation/pages/store.md, "Caches").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import pyarrow as pa
import pyarrow.compute as pc

from chronicle.clean import load_json
from chronicle.errors import StoreError
from chronicle.files.nofollow import read_file
from chronicle.models import (
    FailureRecord,
    MetricRow,
    PullRequest,
    RunRecord,
    SourceStatus,
    Thread,
    parse_time,
)
from chronicle.store.files import (
    damaged,
    parquet_from_bytes,
    parquet_time_range,
    parse_json,
    parse_json_records,
    read_bounded,
)
from chronicle.store.hashing import sha256_bytes
from chronicle.store.manifest import MAX_MANIFEST_BYTES, manifest_problems
from chronicle.store.mementos import (
    MEMENTOS_DIR,
    RECORD_NAME,
    Attempt,
    Memento,
    MementoRecord,
    parse_record,
)

MANIFEST = "MANIFEST.json"
MANIFEST_FORMAT = "chronicle-manifest/1"
DATA_DIR = "data"
DAYS_DIR = "days"


def edition_page(day: date, code: str) -> str:
    """Return the path (relative to docs/) of `day`'s sealed page in language `code`, an
    edition beside the English record: days/<code>/<date>.md, its charts in
    days/<code>/<date>/."""
    return f"{DAYS_DIR}/{code}/{day.isoformat()}.md"
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
    def editions(self) -> dict[str, dict[str, dict[str, Any]]]:
        """date -> {path relative to docs/: {sha256, size}} of the other languages' pages
        of days sealed before, that this snapshot sealed later (their day stays sealed by
        the snapshot that sealed its English record)."""
        return dict(self.manifest.get("editions", {}))

    def sealed_files(self) -> dict[str, dict[str, Any]]:
        """Every file this snapshot seals (its days' and the editions it sealed later):
        path relative to docs/ -> {sha256, size}."""
        return {rel: meta for group in (self.sealed, self.editions)
                for files in group.values() for rel, meta in files.items()}

    @property
    def mementos(self) -> dict[str, dict[str, Any]]:
        """path relative to docs/ -> {sha256, size} of the mementos records this snapshot
        put in the chain (store/mementos.py)."""
        return dict(self.manifest.get("mementos", {}))

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
        raw = read_bounded(path, MAX_MANIFEST_BYTES)
        manifest = load_json(raw, MAX_MANIFEST_BYTES)
    except (OSError, ValueError) as err:
        raise damaged(path, "manifest", err) from err
    problems = manifest_problems(manifest)
    if problems:
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        raise damaged(path, "manifest", "; ".join(problems[:3]) + more)
    taken = parse_time(manifest["taken_at"])
    assert taken is not None
    return SnapshotInfo(folder.name, taken, folder, manifest, sha256_bytes(raw))


class _Shared:
    """What every view of one store shares (Store.before): what was read, once."""

    def __init__(self) -> None:
        # A complete snapshot never changes (append-only, published by one rename), so
        # what was read from it is kept across refresh(): a process that appends a
        # snapshot a night (the demo) reads and checks each earlier one once, not once
        # a night. Only what passed its check against the chain is ever kept here.
        self.read: dict[tuple[str, ...], Any] = {}
        self.snapshots: list[SnapshotInfo] | None = None
        # Each sealed file (path relative to docs/) -> the first snapshot of `snapshots`
        # that seals it and its entry there; made again with the list.
        self.sealers: dict[str, tuple[SnapshotInfo, dict[str, Any]]] | None = None


class Store:
    """Read the store rooted at a chronicle's docs/ folder (cached until `refresh()`),
    checking every byte it returns against the hash chain."""

    def __init__(self, docs: Path, *, until: str | None = None,
                 shared: _Shared | None = None) -> None:
        self.docs = docs
        self.data = docs / DATA_DIR
        self.days = docs / DAYS_DIR
        self.until = until  # a view: only the snapshots taken before this one (`before`)
        self._cache = _Cache()
        self._shared = shared or _Shared()

    def refresh(self) -> None:
        """Forget the snapshot list (a snapshot was just appended)."""
        self._shared.snapshots = None

    def before(self, sid: str) -> Store:
        """Return the store as the snapshot `sid` found it: the snapshots taken before it
        (what it has read and checked is shared; rows already loaded are kept)."""
        view = Store(self.docs, until=sid, shared=self._shared)
        if self._cache.metrics is not None and all(i < sid for i in self._cache.ids):
            view._cache = _Cache(self._cache.ids, self._cache.metrics)
        return view

    def snapshots(self) -> list[SnapshotInfo]:
        """Return every complete snapshot, oldest first (of a view: those before it).

        StoreError if a manifest does not name its predecessor's exact sha256: the chain
        is what every other file is checked against.
        """
        if self._shared.snapshots is None:
            found = []
            if self.data.is_dir():
                for child in sorted(self.data.iterdir()):
                    if child.name.startswith(".") or not child.is_dir():
                        continue
                    found.append(self._once((child.name, MANIFEST),
                                            partial(read_snapshot_info, child)))
            _check_chain(found)
            self._shared.snapshots = found
            self._shared.sealers = None
        if self.until is None:
            return list(self._shared.snapshots)
        return [s for s in self._shared.snapshots if s.id < self.until]

    def _once(self, key: tuple[str, ...], read: Callable[[], T]) -> T:
        """Return what `read` reads from a complete snapshot, reading it once per Store."""
        if key not in self._shared.read:
            self._shared.read[key] = read()
        value: T = self._shared.read[key]
        return value

    def file_bytes(self, snap: SnapshotInfo, name: str, what: str) -> bytes:
        """Return the bytes of a snapshot's file `name` (listed in its manifest), checked
        against the sha256 and size the manifest recorded; StoreError naming it if not."""
        path = snap.path / name
        meta = snap.files.get(name)
        if meta is None:
            raise damaged(path, what, f"not listed in its manifest {snap.id}/{MANIFEST}")
        return _checked(path, what, meta, f"its manifest {snap.id}/{MANIFEST}")

    def _records(self, snap: SnapshotInfo, name: str, what: str,
                 parse: Callable[[Any], T], keep: bool = True) -> list[T]:
        """Return a snapshot's checked JSON records, each through `parse`; kept for the
        Store's life unless not `keep`."""
        def read() -> list[T]:
            return parse_json_records(self.file_bytes(snap, name, what), snap.path / name,
                                      what, parse)
        return self._once((snap.id, name), read) if keep else read()

    def _metrics(self, snap: SnapshotInfo) -> pa.Table:
        """Return a snapshot's checked metrics.parquet, whole (not kept: load_metrics keeps
        every table it reads, concatenated)."""
        path = snap.path / "metrics.parquet"
        blob = self.file_bytes(snap, "metrics.parquet", "metrics file")
        # Its time range (provenance) comes from the same checked bytes: one read each.
        self._once((snap.id, "metrics.parquet", "range"),
                   partial(parquet_time_range, blob, path))
        return parquet_from_bytes(blob, path)

    def metrics_range(self, snap: SnapshotInfo) -> tuple[float, float] | None:
        """Return (first, last) timestamp of a snapshot's metrics file (None: no rows)."""
        def read() -> tuple[float, float] | None:
            blob = self.file_bytes(snap, "metrics.parquet", "metrics file")
            return parquet_time_range(blob, snap.path / "metrics.parquet")

        return self._once((snap.id, "metrics.parquet", "range"), read)

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

    def _sealer(self, rel: str) -> tuple[SnapshotInfo, dict[str, Any]] | None:
        """Return the snapshot (of this view) that sealed `rel`, and its manifest entry."""
        self.snapshots()
        if self._shared.sealers is None:
            # One pass over every manifest, not one per file asked for: a night asks for
            # every sealed day's JSON (the ledger), each in every snapshot before.
            sealers: dict[str, tuple[SnapshotInfo, dict[str, Any]]] = {}
            for snap in self._shared.snapshots or ():
                for path, meta in snap.sealed_files().items():
                    sealers.setdefault(path, (snap, meta))
            self._shared.sealers = sealers
        found = self._shared.sealers.get(rel)
        # The first snapshot to seal it is the view's, if the view has it at all (a view
        # holds the snapshots before one, oldest first).
        if found is None or (self.until is not None and found[0].id >= self.until):
            return None
        return found

    def edition_sealer(self, day: date, code: str) -> SnapshotInfo | None:
        """Return the snapshot that sealed `day`'s page in language `code` (not English:
        `sealed_days` says who sealed the record), or None while it has none."""
        found = self._sealer(edition_page(day, code))
        return found[0] if found is not None else None

    def sealed_bytes(self, rel: str) -> bytes | None:
        """Return a sealed file (path relative to docs/) checked against the manifest that
        sealed it; None if no snapshot (of this view) seals it."""
        found = self._sealer(rel)
        if found is None:
            return None
        snap, meta = found
        return _checked(self.docs / rel, "sealed file", meta,
                        f"the manifest {snap.id}/{MANIFEST} that sealed it")

    def sealed_day(self, day: date) -> dict[str, Any] | None:
        """Return the sealed JSON of `day` (checked against its sealing manifest), or None
        if the day is not sealed (in this view)."""
        rel = f"{DAYS_DIR}/{day.isoformat()}.json"
        found = self._sealer(rel)
        if found is None:
            return None
        snap, meta = found

        def read() -> dict[str, Any]:
            blob = _checked(self.docs / rel, "sealed day JSON", meta,
                            f"the manifest {snap.id}/{MANIFEST} that sealed it")
            parsed = parse_json(blob, self.docs / rel, "sealed day JSON")
            if not isinstance(parsed, dict) or parsed.get("date") != day.isoformat():
                raise damaged(self.docs / rel, "sealed day JSON",
                              f"not the JSON of day {day.isoformat()}")
            return parsed

        # A sealed file never changes either: read and checked once per process.
        return self._once((snap.id, rel), read)

    def memento_records(self) -> list[MementoRecord]:
        """Return the mementos records in the chain, oldest first, each checked against the
        manifest that listed it."""
        out = []
        for snap in self.snapshots():
            for rel, meta in sorted(snap.mementos.items()):
                def read(rel: str = rel, meta: dict[str, Any] = meta,
                         snap: SnapshotInfo = snap) -> MementoRecord:
                    blob = _checked(self.docs / rel, "mementos record", meta,
                                    f"the manifest {snap.id}/{MANIFEST} that listed it")
                    return parse_record(blob, self.docs / rel)

                out.append(self._once((snap.id, rel), read))
        return out

    def mementos(self) -> list[Memento]:
        """Return every recorded memento (in the chain), oldest first."""
        return [m for r in self.memento_records() for m in r.mementos]

    def day_mementos(self) -> dict[date, Memento]:
        """Return each archived day's memento: the first recorded of its page."""
        out: dict[date, Memento] = {}
        for m in self.mementos():
            if m.day is not None:
                out.setdefault(m.day, m)
        return out

    def memento_of(self, day: date) -> Memento | None:
        """Return the first recorded memento of `day`'s page (None: not archived yet)."""
        return self.day_mementos().get(day)

    def pending_memento_paths(self) -> list[str]:
        """Return the mementos records (paths relative to docs/) no manifest lists yet:
        written by `chronicle archive` since the newest snapshot, oldest first."""
        folder = self.docs / MEMENTOS_DIR
        if not folder.is_dir() or folder.is_symlink():
            return []
        listed = {rel for snap in self.snapshots() for rel in snap.mementos}
        names = sorted(p.name for p in folder.iterdir() if RECORD_NAME.match(p.name))
        return [rel for n in names if (rel := f"{MEMENTOS_DIR}/{n}") not in listed]

    def pending_memento_records(self) -> list[MementoRecord]:
        """Return the records no manifest lists yet (read without following a link; not
        in the chain: `archive` reads them, the build never does)."""
        return [parse_record(read_file(self.docs / rel), self.docs / rel)
                for rel in self.pending_memento_paths()]

    def memento_attempts(self) -> list[Attempt]:
        """Return every capture that ended in an error, recorded or pending."""
        return [a for r in (*self.memento_records(), *self.pending_memento_records())
                for a in r.attempts]

    def load_metrics(self) -> pa.Table:
        """Return every stored metric row once, sorted by run, step.

        The first call reads every snapshot's metrics.parquet (each checked against its
        manifest); later calls (a demo's nights in one process) extend the table in
        memory by the snapshots added since.
        """
        snaps = self.snapshots()
        ids = tuple(s.id for s in snaps)
        if self._cache.ids != ids[: len(self._cache.ids)] or self._cache.metrics is None:
            self._cache = _Cache()
        new = [s for s in snaps[len(self._cache.ids) :] if "metrics.parquet" in s.files]
        rows_before = self._cache.metrics.num_rows if self._cache.metrics is not None else 0
        tables = [self._cache.metrics] if self._cache.metrics is not None else []
        added = [self._metrics(s) for s in new]
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
        if self._cache.keys and len(self._cache.keys) == rows_before:
            # A step is stored once (snapshot/take.py), so the keys only grow by the new rows.
            self._cache.keys |= {key for t in added for key in _keys(t)}
        if self._cache.last_steps is not None and self._cache.last_steps[0] == rows_before:
            # ...and each run's last step is the larger of the known one and the new rows'
            last = dict(self._cache.last_steps[1])
            for t in added:
                for run, step in _last_steps(t).items():
                    last[run] = max(step, last.get(run, step))
            self._cache.last_steps = (table.num_rows, dict(sorted(last.items())))
        self._cache.ids, self._cache.metrics = ids, table
        return table

    def metrics_seen_by(self, snap: SnapshotInfo, logged_by: float) -> pa.Table:
        """Return the rows logged up to `logged_by` (UNIX time) that the store held when
        `snap` was taken: those `snap` and the snapshots before it stored, sorted by run,
        step. A later snapshot may store rows logged long before it (W&B answered again
        after an outage); they are left out, so the answer never changes once `snap`
        exists."""
        table = self.load_metrics()
        later = [s for s in self.snapshots()
                 if s.taken_at > snap.taken_at and "metrics.parquet" in s.files]
        # Usually no later snapshot holds a row that old: the whole table, filtered, is
        # the answer (each file's time range is read once, with its rows).
        if all((span := self.metrics_range(s)) is None or span[0] > logged_by for s in later):
            return table.filter(pc.less_equal(table["timestamp"], logged_by))
        held = [t for s in self.snapshots() if s.taken_at <= snap.taken_at
                and (t := self.metrics_of(s)) is not None]
        if not held:
            return table.slice(0, 0)
        seen = pa.concat_tables(held, promote_options="default")
        seen = seen.filter(pc.less_equal(seen["timestamp"], logged_by))
        return seen.sort_by([("run", "ascending"), ("step", "ascending")])

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
                return self._records(snap, name, what, parse)
        return None

    def load_runs(self) -> list[RunRecord]:
        """Return the W&B run records of the newest snapshot that has them."""
        return self._latest("runs.json", "run records file", RunRecord.from_json) or []

    def load_failures(self) -> list[FailureRecord]:
        """Return the failure records known at the newest snapshot that has them."""
        found = self._latest("failures.json", "failure records file", FailureRecord.from_json)
        return found or []

    def failures_of(self, snap: SnapshotInfo) -> list[FailureRecord]:
        """Return the failure records a snapshot stored (none if it has no failures.json)."""
        if "failures.json" not in snap.files:
            return []
        return self._records(snap, "failures.json", "failure records file",
                             FailureRecord.from_json, keep=False)

    # A snapshot's failures.json holds every record known by then, so the files of a long
    # run add up (365 nights: ~110,000 records, ~100 MB as objects): an earlier snapshot's
    # records are read when asked for and not kept, only the newest's are.

    def failures_at(self, snap: SnapshotInfo) -> list[FailureRecord]:
        """Return the failure records known at `snap`: those of the newest snapshot up to
        it that stored them (a snapshot whose sources all failed may have none)."""
        for earlier in reversed([s for s in self.snapshots() if s.taken_at <= snap.taken_at]):
            if "failures.json" in earlier.files:
                return self._records(earlier, "failures.json", "failure records file",
                                     FailureRecord.from_json,
                                     keep=earlier == self.snapshots()[-1])
        return []

    def failures_first_seen(self) -> dict[str, datetime]:
        """Return when each failure id first appeared in a snapshot's failures.json (each
        file checked, its ids read: the records are not kept)."""
        seen: dict[str, datetime] = {}
        for snap in self.snapshots():
            if "failures.json" not in snap.files:
                continue
            # Only the ids are kept (a process sealing a night after another asks again).
            ids = self._once((snap.id, "failures.json", "ids"), partial(
                self._records, snap, "failures.json", "failure records file", _record_id,
                False))
            for failure_id in ids:
                seen.setdefault(failure_id, snap.taken_at)
        return seen

    def thread_history(self) -> dict[int, list[tuple[SnapshotInfo, Thread]]]:
        """Return, per issue number, each stored state of the thread, oldest first."""
        out: dict[int, list[tuple[SnapshotInfo, Thread]]] = {}
        for snap in self.snapshots():
            for thread in self.threads_of(snap) or ():
                out.setdefault(thread.number, []).append((snap, thread))
        return out

    def threads_of(self, snap: SnapshotInfo) -> list[Thread] | None:
        """Return the threads a snapshot stored (None: it has no threads.json)."""
        if "threads.json" not in snap.files:
            return None
        return self._records(snap, "threads.json", "issue threads file", Thread.from_json)

    def runs_of(self, snap: SnapshotInfo) -> list[RunRecord] | None:
        """Return the W&B run records a snapshot stored (None: it has no runs.json)."""
        if "runs.json" not in snap.files:
            return None
        return self._records(snap, "runs.json", "run records file", RunRecord.from_json)

    def pulls_of(self, snap: SnapshotInfo) -> list[PullRequest] | None:
        """Return the merged pull requests a snapshot stored (None: it has no pulls.json)."""
        if "pulls.json" not in snap.files:
            return None
        return self._records(snap, "pulls.json", "pull requests file", PullRequest.from_json)

    def metrics_of(self, snap: SnapshotInfo) -> pa.Table | None:
        """Return the rows a snapshot stored, as read (None: it has no metrics.parquet)."""
        return self._metrics(snap) if "metrics.parquet" in snap.files else None

    def run_history(self) -> list[tuple[SnapshotInfo, list[RunRecord]]]:
        """Return each snapshot's W&B run records (runs.json), oldest first."""
        return [(snap, runs) for snap in self.snapshots()
                if (runs := self.runs_of(snap)) is not None]

    def pull_history(self) -> list[tuple[SnapshotInfo, list[PullRequest]]]:
        """Return each snapshot's merged pull requests (pulls.json), oldest first."""
        return [(snap, pulls) for snap in self.snapshots()
                if (pulls := self.pulls_of(snap)) is not None]

    def rows_with(self, key: str, prefix: str = "") -> list[tuple[SnapshotInfo, list[MetricRow]]]:
        """Return, per snapshot, its stored rows where `key` was logged (not null).

        Each row has run, step, timestamp, `key` and the columns starting with `prefix`
        that are not null in it. Only the Parquet columns needed are decoded.
        """
        out: list[tuple[SnapshotInfo, list[MetricRow]]] = []
        for snap in self.snapshots():
            if "metrics.parquet" not in snap.files:
                continue

            def read(snap: SnapshotInfo = snap) -> list[MetricRow]:
                blob = self.file_bytes(snap, "metrics.parquet", "metrics file")
                return _rows_with(blob, snap.path / "metrics.parquet", key, prefix)

            rows = self._once((snap.id, "metrics.parquet", key, prefix), read)
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


def _checked(path: Path, what: str, meta: Mapping[str, Any], recorded_by: str) -> bytes:
    """Return the bytes of `path` if they are the ones `meta` records; StoreError if not."""
    try:
        # Not read at all when its size is not the one recorded (a planted file of any size).
        size = path.stat().st_size
        blob = path.read_bytes() if size == meta.get("size") else b""
    except OSError as err:
        raise damaged(path, what, f"listed in {recorded_by} but unreadable: {err}") from err
    if size != meta.get("size"):
        raise damaged(path, what, f"altered: its size is {size:,} bytes, {recorded_by} "
                                  f"recorded {meta.get('size')}")
    if sha256_bytes(blob) != meta.get("sha256"):
        raise damaged(path, what, f"altered: its sha256 is {sha256_bytes(blob)[:12]}…, "
                                  f"{recorded_by} recorded {str(meta.get('sha256'))[:12]}…")
    return blob


def _check_chain(snaps: list[SnapshotInfo]) -> None:
    """StoreError unless each manifest names its predecessor's id and exact sha256."""
    before: SnapshotInfo | None = None
    for snap in snaps:
        prev = snap.manifest.get("previous")
        where = snap.path / MANIFEST
        if before is None and prev is not None:
            raise StoreError(
                f"{where}: names the predecessor {prev.get('snapshot')}, which is not in "
                f"{snap.path.parent} (a snapshot was deleted); restore it from git, and run "
                "`chronicle verify` to see what else is missing")
        if before is not None and (prev is None or prev.get("snapshot") != before.id):
            want = prev.get("snapshot") if prev else None
            raise StoreError(
                f"{where}: names the predecessor {want}, but the snapshot before it is "
                f"{before.id} (a snapshot was deleted or added out of order); restore "
                "docs/data from git, and run `chronicle verify` to see what else is wrong")
        if before is not None and prev is not None and prev.get("sha256") != before.manifest_sha256:
            old = before.path / MANIFEST
            raise damaged(old, "manifest", f"altered: its sha256 is "
                          f"{before.manifest_sha256[:12]}…, the next snapshot {snap.id} "
                          f"recorded {str(prev.get('sha256'))[:12]}…")
        before = snap


def _last_steps(table: pa.Table) -> dict[str, int]:
    """Return the largest step of each run in `table`, by run name."""
    if table.num_rows == 0:
        return {}
    last = table.group_by("run").aggregate([("step", "max")])
    return dict(sorted(zip(last.column("run").to_pylist(), last.column("step_max").to_pylist(),
                           strict=True)))


def _rows_with(blob: bytes, path: Path, key: str, prefix: str) -> list[MetricRow]:
    """Return the rows of one metrics file where `key` was logged (Store.rows_with)."""
    names = parquet_from_bytes(blob, path, schema_only=True).schema.names
    if key not in names:
        return []
    extra = [n for n in names if prefix and n.startswith(prefix) and n != key]
    table = parquet_from_bytes(blob, path, columns=["run", "step", "timestamp", key, *extra])
    table = table.filter(table.column(key).is_valid())
    return [{k: v for k, v in row.items() if v is not None} for row in table.to_pylist()]


def _keys(table: pa.Table) -> list[tuple[str, int]]:
    """Return the (run, step) pair of each row of a metrics table."""
    return list(zip(table.column("run").to_pylist(), table.column("step").to_pylist(),
                    strict=True))


def _record_id(item: Any) -> str:
    """Return a stored failure record's id (KeyError, TypeError if it has none)."""
    found = item["id"]
    if not isinstance(found, str):
        raise TypeError(f"a record's id is {type(found).__name__}, not a string")
    return found
