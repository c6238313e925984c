"""`chronicle verify`: check every manifest, the hash chain and every sealed file (store stage).

Pure reading: it returns findings and changes nothing. A finding names the file (relative
to the chronicle folder) and what is wrong with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chronicle.errors import StoreError
from chronicle.store.hashing import sha256_file
from chronicle.store.read import MANIFEST, SnapshotInfo, Store


@dataclass
class Problem:
    """One verify finding: the file and what is wrong with it."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


def verify_store(store: Store) -> list[Problem]:
    """Check every manifest, the hash chain and every sealed file; return the problems."""
    try:
        snaps = store.snapshots()
    except StoreError as err:
        return [Problem(str(store.data), str(err))]
    problems: list[Problem] = []
    previous: SnapshotInfo | None = None
    sealed_paths: set[str] = set()
    for snap in snaps:
        problems += _check_link(store, snap, previous)
        problems += _check_snapshot_files(store, snap)
        for files in snap.sealed.values():
            for sealed_rel, meta in files.items():
                sealed_paths.add(sealed_rel)
                problems += _check_file(store, store.docs / sealed_rel, meta)
        previous = snap
    if store.days.is_dir():
        for path in sorted(store.days.rglob("*")):
            if path.is_file() and str(path.relative_to(store.docs)) not in sealed_paths:
                problems.append(Problem(
                    _rel(store, path),
                    "not sealed by any snapshot manifest "
                    "(added out of order, or left by an interrupted run)"))
    return problems


def _rel(store: Store, path: Path) -> str:
    return str(path.relative_to(store.docs.parent))


def _check_link(store: Store, snap: SnapshotInfo, previous: SnapshotInfo | None) -> list[Problem]:
    """Check that a manifest names its folder and its predecessor's sha256."""
    where = _rel(store, snap.path / MANIFEST)
    m = snap.manifest
    out = []
    if m.get("snapshot") != snap.id:
        out.append(Problem(where, f"names snapshot {m.get('snapshot')!r} but lives in folder "
                                  f"{snap.id}"))
    prev = m.get("previous")
    if previous is None and prev is not None:
        out.append(Problem(where, f"chain broken: its predecessor {prev.get('snapshot')} "
                                  "is missing (a snapshot was deleted)"))
    elif previous is not None:
        if prev is None or prev.get("snapshot") != previous.id:
            want = prev.get("snapshot") if prev else None
            out.append(Problem(where, f"chain broken: names predecessor {want}, but the "
                                      f"previous snapshot on disk is {previous.id} (a snapshot "
                                      "was deleted or added out of order)"))
        elif prev.get("sha256") != previous.manifest_sha256:
            out.append(Problem(_rel(store, previous.path / MANIFEST),
                               "altered: its sha256 no longer matches the one recorded by the "
                               f"next snapshot {snap.id}"))
    return out


def _check_snapshot_files(store: Store, snap: SnapshotInfo) -> list[Problem]:
    """Check every file a manifest lists, and that the folder holds nothing else."""
    out: list[Problem] = []
    for name, meta in snap.files.items():
        out += _check_file(store, snap.path / name, meta)
    listed = set(snap.files) | {MANIFEST}
    for child in sorted(snap.path.iterdir()):
        if child.name not in listed:
            out.append(Problem(_rel(store, child), "not listed in its snapshot's manifest "
                                                   "(added after the snapshot was taken)"))
    return out


def _check_file(store: Store, path: Path, meta: Mapping[str, Any]) -> list[Problem]:
    if not path.is_file():
        return [Problem(_rel(store, path), "missing (listed in a manifest)")]
    if path.stat().st_size != meta.get("size") or sha256_file(path) != meta.get("sha256"):
        return [Problem(_rel(store, path),
                        f"altered: sha256 is {sha256_file(path)[:12]}…, the manifest recorded "
                        f"{str(meta.get('sha256'))[:12]}…")]
    return []
