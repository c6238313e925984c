"""Appending one snapshot (and the days it seals) to the store (store stage).

The only code that writes docs/data and docs/days. A snapshot is written to a temporary
folder and renamed into place: the rename is the commit point. Each MANIFEST.json names
its predecessor's sha256, so the manifests form a hash chain (store/verify.py walks it).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Mapping
from datetime import date, datetime
from pathlib import Path
from typing import Any

from chronicle import __version__
from chronicle.errors import StoreError
from chronicle.models import (
    FailureRecord,
    MetricRow,
    PullRequest,
    RunRecord,
    SourceStatus,
    Thread,
    iso,
)
from chronicle.store.hashing import dump_json, sha256_bytes
from chronicle.store.read import (
    DAYS_DIR,
    MANIFEST,
    MANIFEST_FORMAT,
    TMP_PREFIX,
    SnapshotInfo,
    Store,
    read_snapshot_info,
    snapshot_id,
)
from chronicle.store.tables import parquet_bytes


def write_snapshot(
    store: Store,
    taken_at: datetime,
    metrics: list[MetricRow] | None,
    runs: list[RunRecord] | None,
    threads: list[Thread] | None,
    failures: list[FailureRecord],
    statuses: Iterable[SourceStatus],
    sealed: Mapping[str, Mapping[str, bytes]] | None = None,
    extra: Mapping[str, Any] | None = None,
    pulls: list[PullRequest] | None = None,
) -> SnapshotInfo:
    """Append one snapshot (and seal the given days); return it.

    `metrics` holds only rows not stored before; None (source failed) writes no file.
    `pulls` None (GitHub failed, or no `github.pulls` configured) writes no pulls.json.
    `sealed` maps a day (YYYY-MM-DD) to its files, paths relative to docs/.
    """
    # Load inputs.
    sid = snapshot_id(taken_at)
    final = store.data / sid
    latest = store.latest()
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
    already = store.sealed_days()
    for day in sealed:
        if date.fromisoformat(day) in already:
            raise StoreError(
                f"{store.days / (day + '.md')}: day {day} was sealed by snapshot "
                f"{already[date.fromisoformat(day)].id}; sealed pages never change"
            )
    _clean_interrupted(store)
    tmp = store.data / f"{TMP_PREFIX}{sid}"
    tmp.mkdir(parents=True)

    # Process.
    try:
        files = _snapshot_files(metrics, runs, threads, failures, pulls)
        for name, blob in files.items():
            (tmp / name).write_bytes(blob)
        sealed_paths = {p for s in store.snapshots() for d in s.sealed.values() for p in d}
        sealed_meta: dict[str, dict[str, dict[str, Any]]] = {}
        for day, day_files in sorted(sealed.items()):
            sealed_meta[day] = {}
            for rel, blob in sorted(day_files.items()):
                _write_day_file(store, rel, blob, sealed_paths)
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
    store.refresh()
    return read_snapshot_info(final)


def _snapshot_files(
    metrics: list[MetricRow] | None,
    runs: list[RunRecord] | None,
    threads: list[Thread] | None,
    failures: list[FailureRecord],
    pulls: list[PullRequest] | None = None,
) -> dict[str, bytes]:
    """Return the snapshot's data files; a source that failed (None) writes none."""
    files: dict[str, bytes] = {}
    if metrics is not None:
        files["metrics.parquet"] = parquet_bytes(metrics)
    if runs is not None:
        files["runs.json"] = dump_json([r.to_json() for r in runs])
    if threads is not None:
        files["threads.json"] = dump_json([t.to_json() for t in threads])
    if pulls is not None:
        files["pulls.json"] = dump_json([p.to_json() for p in pulls])
    files["failures.json"] = dump_json([f.to_json() for f in failures])
    return files


def _write_day_file(store: Store, rel: str, blob: bytes, sealed_paths: set[str]) -> None:
    if not rel.startswith(DAYS_DIR + "/") or ".." in Path(rel).parts:
        raise ValueError(f"sealed files live under {DAYS_DIR}/, got {rel!r}")
    path = store.docs / rel
    if rel in sealed_paths:
        raise StoreError(f"{path}: already sealed; sealed pages are never rewritten")
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(path.name + ".part")
    part.write_bytes(blob)
    # A file here that no manifest seals is left over from an interrupted snapshot
    # that never committed: replacing it loses nothing published.
    os.replace(part, path)


def _clean_interrupted(store: Store) -> None:
    if store.data.is_dir():
        for child in store.data.iterdir():
            if child.name.startswith(TMP_PREFIX):
                shutil.rmtree(child, ignore_errors=True)
