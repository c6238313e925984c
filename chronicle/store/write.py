"""Appending one snapshot (and the days it seals) to the store (store stage).

The only code that writes docs/data and docs/days. A snapshot is written to a temporary
folder, the files of the days it seals staged inside it (`.sealed/days/...`), and the
folder is renamed into place: that one rename commits both. The staged day files are then
moved to docs/days. A run killed before the rename leaves a `.tmp-*` folder that never
committed; one killed after it leaves staged files whose snapshot's manifest proves them
sealed: `finish_interrupted` (run by every command that takes the store lock) deletes the
first and publishes the second, so no reader ever sees a day file no manifest seals.
Each MANIFEST.json names its predecessor's sha256: the manifests form a hash chain.
`write_mementos` adds a mementos record under docs/mementos (`chronicle archive`); the
next snapshot lists it in its manifest, which puts it in the chain (store/mementos.py).
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

from chronicle import __version__
from chronicle.errors import StoreError
from chronicle.files.nofollow import folder as folder_fd
from chronicle.files.nofollow import read_file
from chronicle.models import (
    FailureRecord,
    PullRequest,
    RunRecord,
    SourceStatus,
    Thread,
    iso,
)
from chronicle.store.hashing import dump_json, sha256_bytes, sha256_file
from chronicle.store.mementos import (
    MAX_RECORD_BYTES,
    MEMENTOS_DIR,
    RECORD_NAME,
    Attempt,
    Memento,
    RecordCheck,
    parse_record,
    record_bytes,
)
from chronicle.store.read import (
    DAYS_DIR,
    MANIFEST,
    MANIFEST_FORMAT,
    STAGED,
    TMP_PREFIX,
    SnapshotInfo,
    Store,
    parse_snapshot_id,
    read_snapshot_info,
    snapshot_id,
)
from chronicle.store.tables import Rows, parquet_bytes


def write_snapshot(
    store: Store,
    taken_at: datetime,
    metrics: Rows | None,
    runs: list[RunRecord] | None,
    threads: list[Thread] | None,
    failures: list[FailureRecord],
    statuses: Iterable[SourceStatus],
    sealed: Mapping[str, Mapping[str, bytes]] | None = None,
    extra: Mapping[str, Any] | None = None,
    pulls: list[PullRequest] | None = None,
    check_record: RecordCheck | None = None,
    editions: Mapping[str, Mapping[str, bytes]] | None = None,
) -> SnapshotInfo:
    """Append one snapshot (and seal the given days); return it.

    `metrics` holds only rows not stored before (a table, or MetricRow dicts); None
    (source failed) writes no file.
    `pulls` None (GitHub failed, or no `github.pulls` configured) writes no pulls.json.
    `sealed` maps a day (YYYY-MM-DD) to its files, paths relative to docs/; `editions`
    maps a day sealed before to the files of its pages in other languages, sealed later
    by this snapshot (`days/<language>/<date>...`: the day keeps its sealer).
    `check_record` says why a pending mementos record is not the chronicle's to chain
    (the snapshot stage knows its pages and archive); one with a problem is refused.
    """
    # Load inputs.
    sid = snapshot_id(taken_at)
    final = store.data / sid
    latest = store.latest()
    sealed, editions = sealed or {}, editions or {}
    _refuse_rewrites(store, taken_at, sealed)
    finish_interrupted(store)
    tmp = store.data / f"{TMP_PREFIX}{sid}"
    tmp.mkdir(parents=True)

    # Process.
    try:
        files = _snapshot_files(metrics, runs, threads, failures, pulls)
        for name, blob in files.items():
            (tmp / name).write_bytes(blob)
        sealed_paths = {p for s in store.snapshots() for p in s.sealed_files()}
        staged = {key: _stage(store, tmp, given, sealed_paths)
                  for key, given in (("sealed", sealed), ("editions", editions))}
        if editions:  # absent when there is none: manifests without them are as before
            extra = {**(extra or {}), "editions": staged["editions"]}
        manifest = _manifest(sid, taken_at, latest, files, statuses, staged["sealed"], extra)
        listed = _pending_mementos(store, check_record)
        if listed:  # absent when there is none: manifests without mementos are as before
            manifest["mementos"] = listed
        (tmp / MANIFEST).write_bytes(dump_json(manifest))
        # Save outputs: the rename commits the snapshot and the days it seals at once.
        os.replace(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    store.refresh()
    info = read_snapshot_info(final)
    _publish(store, info)
    return info


def _refuse_rewrites(store: Store, taken_at: datetime, sealed: Mapping[str, Any]) -> None:
    """Refuse a snapshot that exists, is not after the newest one, or reseals a day."""
    sid = snapshot_id(taken_at)
    latest = store.latest()
    if (store.data / sid).exists():
        raise StoreError(
            f"{store.data / sid}: snapshot {sid} already exists and snapshots are never "
            "rewritten; pass a later --as-of"
        )
    if latest is not None and latest.taken_at >= taken_at:
        raise StoreError(
            f"--as-of {iso(taken_at)} is not after the newest snapshot {latest.id}; "
            "snapshots are append-only: pass a later time"
        )
    already = store.sealed_days()
    for day in sealed:
        if date.fromisoformat(day) in already:
            raise StoreError(
                f"{store.days / (day + '.md')}: day {day} was sealed by snapshot "
                f"{already[date.fromisoformat(day)].id}; sealed pages never change"
            )


def _manifest(sid: str, taken_at: datetime, latest: SnapshotInfo | None,
              files: Mapping[str, bytes], statuses: Iterable[SourceStatus],
              sealed: Mapping[str, Any], extra: Mapping[str, Any] | None) -> dict[str, Any]:
    """Return a snapshot's manifest: its files, sources, sealed days, and its predecessor."""
    return {
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
        "sealed": sealed,
        **(dict(extra) if extra else {}),
    }


def _pending_mementos(store: Store, check: RecordCheck | None = None
                      ) -> dict[str, dict[str, Any]]:
    """Return the mementos records `chronicle archive` wrote since the newest snapshot
    (path relative to docs/ -> {sha256, size}), each read once without following a link,
    parsed and passed through `check` from the same bytes: a damaged or foreign one is
    refused (StoreError naming it), never put in the chain."""
    out: dict[str, dict[str, Any]] = {}
    for rel in store.pending_memento_paths():
        path = store.docs / rel
        blob = read_file(path, MAX_RECORD_BYTES)
        record = parse_record(blob, path)
        problems = check(record) if check is not None else []
        if problems:
            raise refused_record(path, problems)
        out[rel] = {"sha256": sha256_bytes(blob), "size": len(blob)}
    return out


def check_pending_mementos(store: Store, check: RecordCheck) -> None:
    """Refuse (StoreError naming it) a pending mementos record the next snapshot would not
    chain: a snapshot checks them before it fetches anything."""
    _pending_mementos(store, check)


def refused_record(path: Path, problems: Sequence[str]) -> StoreError:
    """Return the error for a pending mementos record that is not this chronicle's."""
    more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
    return StoreError(
        f"{path}: not a mementos record of this chronicle ({'; '.join(problems[:3])}{more}); "
        "it was not put in the chain. `chronicle archive` writes these records; one that came "
        "from elsewhere (a pull request, a copied folder) is not to be trusted: remove it "
        f"(`git rm {path}`: nothing published depends on a record not yet chained) and run "
        "the snapshot again. If WAYBACK_API_URL named another archive when it was written, "
        "set it to that archive for the snapshot too")


def write_mementos(store: Store, now: datetime, mementos: Sequence[Memento],
                   attempts: Sequence[Attempt]) -> str:
    """Write a new mementos record (the caller holds the store lock); return its path
    relative to docs/. Named by its time, after every record before it; never rewritten:
    the next snapshot lists it in its manifest (store/mementos.py)."""
    folder = store.docs / MEMENTOS_DIR
    newest = max((parse_snapshot_id(p.name.removesuffix(".json"))
                  for p in folder.iterdir() if RECORD_NAME.match(p.name)),
                 default=None) if folder.is_dir() else None
    when = now if newest is None or now > newest else newest + timedelta(seconds=1)
    name = f"{snapshot_id(when)}.json"
    blob = record_bytes(when, mementos, attempts)
    with folder_fd(store.docs, [MEMENTOS_DIR], create=True) as fd:
        # O_EXCL: a record is written once, never over anything (a link included).
        out = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644,
                      dir_fd=fd)
        try:
            with os.fdopen(out, "wb") as sink:
                sink.write(blob)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(name, dir_fd=fd)
            raise
    return f"{MEMENTOS_DIR}/{name}"


def _snapshot_files(
    metrics: Rows | None,
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


def _stage(store: Store, tmp: Path, days: Mapping[str, Mapping[str, bytes]],
           sealed_paths: set[str]) -> dict[str, dict[str, dict[str, Any]]]:
    """Stage the files of `days` in the snapshot being written; return their manifest
    entries (day -> path -> {sha256, size})."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for day, day_files in sorted(days.items()):
        out[day] = {}
        for rel, blob in sorted(day_files.items()):
            _stage_day_file(store, tmp, rel, blob, sealed_paths)
            out[day][rel] = {"sha256": sha256_bytes(blob), "size": len(blob)}
    return out


def _stage_day_file(store: Store, tmp: Path, rel: str, blob: bytes,
                    sealed_paths: set[str]) -> None:
    if not rel.startswith(DAYS_DIR + "/") or ".." in Path(rel).parts:
        raise ValueError(f"sealed files live under {DAYS_DIR}/, got {rel!r}")
    if rel in sealed_paths:
        raise StoreError(f"{store.docs / rel}: already sealed; sealed pages are never rewritten")
    path = tmp / STAGED / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(blob)


def _publish(store: Store, snap: SnapshotInfo) -> None:
    """Move a committed snapshot's staged day files to docs/days (idempotent)."""
    staged = snap.path / STAGED
    if not staged.is_dir():
        return
    wanted = snap.sealed_files()
    for path in sorted(p for p in staged.rglob("*") if p.is_file() and not p.is_symlink()):
        rel = path.relative_to(staged).as_posix()
        meta, target = wanted.get(rel), store.docs / rel
        if meta is None or sha256_file(path) != meta["sha256"]:
            continue  # not what the manifest seals: never published (removed below)
        # A file already at `target` is sealed by no other manifest (a path is sealed
        # once): it is debris of an older version's interrupted run, safe to replace.
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(path, target)
    shutil.rmtree(staged)


def finish_interrupted(store: Store) -> list[str]:
    """Finish what a killed snapshot left; return what was done, one line each.

    A `.tmp-*` folder never committed: deleted. Staged day files of a committed snapshot
    are sealed by its manifest: published. Nothing else is touched.
    """
    done: list[str] = []
    if not store.data.is_dir():
        return done
    for child in sorted(store.data.iterdir()):
        if child.name.startswith(TMP_PREFIX) and child.is_dir() and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)
            done.append(f"removed {child.name}: a snapshot interrupted before it committed")
        elif (child / STAGED).is_dir() and (child / MANIFEST).is_file():
            _publish(store, read_snapshot_info(child))
            done.append(f"published the days sealed by {child.name} (interrupted after commit)")
    return done
