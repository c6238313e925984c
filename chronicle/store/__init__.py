"""The append-only, checksummed store under docs/: the only module that writes it.

Layout (contract, see README "Store layout"):
    docs/data/<YYYY-MM-DD>T<HHMMSS>Z/{metrics.parquet,runs.json,threads.json,failures.json,
                                       MANIFEST.json}
    docs/days/<date>.md, <date>.json, <date>/*.vl.json|*.svg   (sealed day pages)

Snapshots are written to a temporary folder and renamed into place; the rename is the
commit point. Each MANIFEST.json names its predecessor's sha256, so the manifests form a
hash chain that `verify()` walks.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from chronicle import __version__
from chronicle.errors import StoreError
from chronicle.models import (
    ROW_KEYS,
    FailureRecord,
    MetricRow,
    RunRecord,
    SourceStatus,
    Thread,
    iso,
    parse_time,
)

MANIFEST = "MANIFEST.json"
MANIFEST_FORMAT = "chronicle-manifest/1"
DATA_DIR = "data"
DAYS_DIR = "days"
_TMP_PREFIX = ".tmp-"
SNAPSHOT_FILES = ("metrics.parquet", "runs.json", "threads.json", "failures.json")


def snapshot_id(when: datetime) -> str:
    """Return the snapshot id (folder name) for a UTC time: 2026-09-30T031700Z."""
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H%M%SZ")


def parse_snapshot_id(sid: str) -> datetime:
    """Inverse of snapshot_id()."""
    return datetime.strptime(sid, "%Y-%m-%dT%H%M%SZ").replace(tzinfo=UTC)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def dump_json(obj: Any) -> bytes:
    """Canonical JSON bytes: sorted keys, UTF-8, trailing newline (stable checksums)."""
    return (
        json.dumps(obj, indent=1, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"
    ).encode()


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
class Problem:
    """One verify finding: the file and what is wrong with it."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


@dataclass
class _Cache:
    ids: tuple[str, ...] = ()
    metrics: pa.Table | None = None
    keys: set[tuple[str, int]] = field(default_factory=set)


class Store:
    """Read and append to the store rooted at a chronicle's docs/ folder."""

    def __init__(self, docs: Path) -> None:
        self.docs = docs
        self.data = docs / DATA_DIR
        self.days = docs / DAYS_DIR
        self._cache = _Cache()
        self._snapshots: list[SnapshotInfo] | None = None

    # -- reading -------------------------------------------------------------------

    def snapshots(self) -> list[SnapshotInfo]:
        """Return every complete snapshot, oldest first."""
        if self._snapshots is None:
            found = []
            if self.data.is_dir():
                for child in sorted(self.data.iterdir()):
                    if child.name.startswith(".") or not child.is_dir():
                        continue
                    found.append(self._read_info(child))
            self._snapshots = found
        return list(self._snapshots)

    def _read_info(self, folder: Path) -> SnapshotInfo:
        path = folder / MANIFEST
        try:
            raw = path.read_bytes()
            manifest = json.loads(raw)
            taken = parse_time(manifest["taken_at"])
        except (OSError, ValueError, KeyError) as err:
            raise StoreError(
                f"{path}: unreadable manifest ({err}); run `chronicle verify` to see what is "
                "damaged, and restore the folder from git (`git checkout -- docs/data`)"
            ) from err
        assert taken is not None
        return SnapshotInfo(folder.name, taken, folder, manifest, sha256_bytes(raw))

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
        """Return every stored metric row once (first stored wins), sorted by run, step."""
        snaps = self.snapshots()
        ids = tuple(s.id for s in snaps)
        if self._cache.ids != ids[: len(self._cache.ids)] or self._cache.metrics is None:
            self._cache = _Cache()
        new = [s for s in snaps[len(self._cache.ids) :] if "metrics.parquet" in s.files]
        tables = [self._cache.metrics] if self._cache.metrics is not None else []
        tables += [pq.read_table(s.path / "metrics.parquet") for s in new]
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
        self._cache.ids, self._cache.metrics = ids, table
        return table

    def stored_keys(self) -> set[tuple[str, int]]:
        """Return the (run, step) pairs already stored."""
        table = self.load_metrics()
        if len(self._cache.keys) != table.num_rows:
            runs = table.column("run").to_pylist()
            steps = table.column("step").to_pylist()
            self._cache.keys = set(zip(runs, steps, strict=True))
        return self._cache.keys

    def last_steps(self) -> dict[str, int]:
        """Return the last stored step of each W&B run (for incremental fetches)."""
        out: dict[str, int] = {}
        for run, step in self.stored_keys():
            if step > out.get(run, -1):
                out[run] = step
        return out

    def _latest_json(self, name: str) -> tuple[SnapshotInfo, Any] | None:
        for snap in reversed(self.snapshots()):
            if name in snap.files:
                return snap, json.loads((snap.path / name).read_bytes())
        return None

    def load_runs(self) -> list[RunRecord]:
        """Return the W&B run records of the newest snapshot that has them."""
        found = self._latest_json("runs.json")
        return [RunRecord.from_json(r) for r in found[1]] if found else []

    def load_failures(self) -> list[FailureRecord]:
        """Return the failure records known at the newest snapshot that has them."""
        found = self._latest_json("failures.json")
        return [FailureRecord.from_json(r) for r in found[1]] if found else []

    def thread_history(self) -> dict[int, list[tuple[SnapshotInfo, Thread]]]:
        """Return, per issue number, each stored state of the thread, oldest first."""
        out: dict[int, list[tuple[SnapshotInfo, Thread]]] = {}
        for snap in self.snapshots():
            if "threads.json" not in snap.files:
                continue
            for raw in json.loads((snap.path / "threads.json").read_bytes()):
                thread = Thread.from_json(raw)
                out.setdefault(thread.number, []).append((snap, thread))
        return out

    # -- writing -------------------------------------------------------------------

    def write_snapshot(
        self,
        taken_at: datetime,
        metrics: list[MetricRow] | None,
        runs: list[RunRecord] | None,
        threads: list[Thread] | None,
        failures: list[FailureRecord],
        statuses: Iterable[SourceStatus],
        sealed: Mapping[str, Mapping[str, bytes]] | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> SnapshotInfo:
        """Append one snapshot (and seal the given days); return it.

        `metrics` holds only rows not stored before; None (source failed) writes no file.
        `sealed` maps a day (YYYY-MM-DD) to its files, paths relative to docs/.
        """
        # Load inputs.
        sid = snapshot_id(taken_at)
        final = self.data / sid
        latest = self.latest()
        if final.exists():
            raise StoreError(
                f"{final}: snapshot {sid} already exists and snapshots are never rewritten; "
                "pass a later --as-of"
            )
        if latest is not None and latest.taken_at >= taken_at:
            raise StoreError(
                f"--as-of {iso(taken_at)} is not after the newest snapshot {latest.id}; "
                "snapshots are append-only: pass a later time"
            )
        sealed = sealed or {}
        already = self.sealed_days()
        for day in sealed:
            if date.fromisoformat(day) in already:
                raise StoreError(
                    f"{self.days / (day + '.md')}: day {day} was sealed by snapshot "
                    f"{already[date.fromisoformat(day)].id}; sealed pages never change"
                )
        self._clean_interrupted()
        tmp = self.data / f"{_TMP_PREFIX}{sid}"
        tmp.mkdir(parents=True)

        # Process.
        try:
            files: dict[str, bytes] = {}
            if metrics is not None:
                files["metrics.parquet"] = parquet_bytes(metrics)
            if runs is not None:
                files["runs.json"] = dump_json([r.to_json() for r in runs])
            if threads is not None:
                files["threads.json"] = dump_json([t.to_json() for t in threads])
            files["failures.json"] = dump_json([f.to_json() for f in failures])
            for name, blob in files.items():
                (tmp / name).write_bytes(blob)
            sealed_paths = {p for s in self.snapshots() for d in s.sealed.values() for p in d}
            sealed_meta: dict[str, dict[str, dict[str, Any]]] = {}
            for day, day_files in sorted(sealed.items()):
                sealed_meta[day] = {}
                for rel, blob in sorted(day_files.items()):
                    self._write_day_file(rel, blob, sealed_paths)
                    sealed_meta[day][rel] = {"sha256": sha256_bytes(blob), "size": len(blob)}
            manifest = {
                "format": MANIFEST_FORMAT,
                "snapshot": sid,
                "taken_at": iso(taken_at),
                "chronicle_version": __version__,
                "previous": (
                    {"snapshot": latest.id, "sha256": latest.manifest_sha256} if latest else None
                ),
                "files": {
                    n: {"sha256": sha256_bytes(b), "size": len(b)} for n, b in sorted(files.items())
                },
                "sources": {s.name: s.to_json() for s in statuses},
                "sealed": sealed_meta,
                **(dict(extra) if extra else {}),
            }
            (tmp / MANIFEST).write_bytes(dump_json(manifest))
            # Save outputs: the rename is the commit point.
            os.replace(tmp, final)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        self._snapshots = None
        info = self._read_info(final)
        return info

    def _write_day_file(self, rel: str, blob: bytes, sealed_paths: set[str]) -> None:
        if not rel.startswith(DAYS_DIR + "/") or ".." in Path(rel).parts:
            raise ValueError(f"sealed files live under {DAYS_DIR}/, got {rel!r}")
        path = self.docs / rel
        if rel in sealed_paths:
            raise StoreError(f"{path}: already sealed; sealed pages are never rewritten")
        path.parent.mkdir(parents=True, exist_ok=True)
        part = path.with_name(path.name + ".part")
        part.write_bytes(blob)
        # A file here that no manifest seals is left over from an interrupted snapshot
        # that never committed: replacing it loses nothing published.
        os.replace(part, path)

    def _clean_interrupted(self) -> None:
        if self.data.is_dir():
            for child in self.data.iterdir():
                if child.name.startswith(_TMP_PREFIX):
                    shutil.rmtree(child, ignore_errors=True)

    # -- verifying -----------------------------------------------------------------

    def verify(self) -> list[Problem]:
        """Check every manifest, the hash chain and every sealed file; return problems."""
        problems: list[Problem] = []
        rel = lambda p: str(p.relative_to(self.docs.parent))  # noqa: E731
        previous: SnapshotInfo | None = None
        sealed_paths: set[str] = set()
        try:
            snaps = self.snapshots()
        except StoreError as err:
            return [Problem(str(self.data), str(err))]
        for snap in snaps:
            m = snap.manifest
            if m.get("snapshot") != snap.id:
                problems.append(
                    Problem(
                        rel(snap.path / MANIFEST),
                        f"names snapshot {m.get('snapshot')!r} but lives in folder {snap.id}",
                    )
                )
            prev = m.get("previous")
            if previous is None and prev is not None:
                problems.append(
                    Problem(
                        rel(snap.path / MANIFEST),
                        f"chain broken: its predecessor {prev.get('snapshot')} "
                        "is missing (a snapshot was deleted)",
                    )
                )
            elif previous is not None:
                if prev is None or prev.get("snapshot") != previous.id:
                    want = prev.get("snapshot") if prev else None
                    problems.append(
                        Problem(
                            rel(snap.path / MANIFEST),
                            f"chain broken: names predecessor {want}, but the "
                            f"previous snapshot on disk is {previous.id} (a "
                            "snapshot was deleted or added out of order)",
                        )
                    )
                elif prev.get("sha256") != previous.manifest_sha256:
                    problems.append(
                        Problem(
                            rel(previous.path / MANIFEST),
                            "altered: its sha256 no longer matches the one "
                            f"recorded by the next snapshot {snap.id}",
                        )
                    )
            listed = set(snap.files) | {MANIFEST}
            for name, meta in snap.files.items():
                problems += self._check_file(snap.path / name, meta, rel)
            for child in sorted(snap.path.iterdir()):
                if child.name not in listed:
                    problems.append(
                        Problem(
                            rel(child),
                            "not listed in its snapshot's manifest "
                            "(added after the snapshot was taken)",
                        )
                    )
            for files in snap.sealed.values():
                for sealed_rel, meta in files.items():
                    sealed_paths.add(sealed_rel)
                    problems += self._check_file(self.docs / sealed_rel, meta, rel)
            previous = snap
        if self.days.is_dir():
            for path in sorted(self.days.rglob("*")):
                if path.is_file() and str(path.relative_to(self.docs)) not in sealed_paths:
                    problems.append(
                        Problem(
                            rel(path),
                            "not sealed by any snapshot manifest "
                            "(added out of order, or left by an interrupted run)",
                        )
                    )
        return problems

    @staticmethod
    def _check_file(path: Path, meta: Mapping[str, Any], rel: Any) -> list[Problem]:
        if not path.is_file():
            return [Problem(rel(path), "missing (listed in a manifest)")]
        if path.stat().st_size != meta.get("size") or sha256_file(path) != meta.get("sha256"):
            return [
                Problem(
                    rel(path),
                    f"altered: sha256 is {sha256_file(path)[:12]}…, the "
                    f"manifest recorded {str(meta.get('sha256'))[:12]}…",
                )
            ]
        return []


def rows_to_table(rows: list[MetricRow]) -> pa.Table:
    """Return metric rows as a table: run, step, timestamp, then one float column per key."""
    keys = sorted({k for r in rows for k in r} - set(ROW_KEYS))
    columns: dict[str, pa.Array] = {
        "run": pa.array([r["run"] for r in rows], pa.string()),
        "step": pa.array([int(r["step"]) for r in rows], pa.int64()),
        "timestamp": pa.array([float(r["timestamp"]) for r in rows], pa.float64()),
    }
    for key in keys:
        columns[key] = pa.array([_num(r.get(key)) for r in rows], pa.float64())
    return pa.table(columns)


def parquet_bytes(rows: list[MetricRow]) -> bytes:
    """Serialise metric rows to Parquet bytes (deterministic for the same rows)."""
    table = rows_to_table(rows)
    sink = pa.BufferOutputStream()
    # No statistics timestamps or writer-dependent metadata: the same rows give the same bytes.
    pq.write_table(table, sink, compression="zstd", write_statistics=True)
    return bytes(sink.getvalue().to_pybytes())


def _num(value: Any) -> float | None:
    if value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None
