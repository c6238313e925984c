"""`chronicle verify`: check every manifest, the hash chain and every sealed file (store stage).

Mementos records (store/mementos.py) listed by a manifest are checked like any other
store file; one not listed yet (pending until the next snapshot) must at least be a record.

Pure reading: it returns findings and changes nothing. A finding names the file (relative
to the chronicle folder) and what is wrong with it. A damaged manifest is one finding among
the others, never the end of the check. The chain's newest snapshot can only be checked
against a copy of it published earlier (`verify_against`): the home page and
api/latest.json publish its manifest's sha256.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chronicle.clean import load_json
from chronicle.errors import ChronicleError, StoreError
from chronicle.files.nofollow import links_under
from chronicle.models import parse_time
from chronicle.store.files import read_bounded
from chronicle.store.hashing import sha256_bytes, sha256_file
from chronicle.store.manifest import (
    MAX_MANIFEST_BYTES,
    SHA256,
    SNAPSHOT_ID,
    manifest_problems,
    mementos_problems,
    sealed_problems,
)
from chronicle.store.mementos import MAX_RECORD_BYTES, MEMENTOS_DIR, RECORD_NAME, parse_record
from chronicle.store.read import MANIFEST, MANIFEST_FORMAT, SnapshotInfo, Store, snapshot_id


@dataclass
class Problem:
    """One verify finding: the file and what is wrong with it."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


@dataclass(frozen=True)
class Head:
    """A published chain head: the newest snapshot's id (if known), its manifest's sha256."""

    snapshot: str | None
    sha256: str
    source: str  # where it was read, for messages


@dataclass(frozen=True)
class _Entry:
    """One snapshot folder: its manifest's bytes (None: missing) and, if well-formed, it."""

    folder: Path
    raw: bytes | None
    info: SnapshotInfo | None
    manifest: Any = None  # parsed, even when malformed

    @property
    def sha256(self) -> str | None:
        return sha256_bytes(self.raw) if self.raw is not None else None


def verify_store(store: Store) -> list[Problem]:
    """Check every manifest, the hash chain and every sealed file; return the problems."""
    if not store.docs.is_dir():
        return [Problem(str(store.docs), "missing: the store (docs/) is not here; check --dir, "
                                         "or restore docs/ from git")]
    problems = _check_layout(store)
    entries, found = _read_entries(store)
    problems += found
    previous: _Entry | None = None
    sealed_paths: set[str] = set()
    sealed_by: dict[str, str] = {}
    listed_by: dict[str, str] = {}
    for entry in entries:
        problems += _check_mementos(store, entry, listed_by)
        problems += _check_link(store, entry, previous)
        previous = entry
        if entry.info is not None:
            problems += _check_snapshot_files(store, entry.info)
        for day, files in _sealed_of(entry).items():
            where = _rel(store, entry.folder / MANIFEST)
            if day in sealed_by:
                problems.append(Problem(where, f"seals day {day} again (already sealed by "
                                               f"{sealed_by[day]}): a day is sealed once"))
            sealed_by.setdefault(day, entry.folder.name)
            for sealed_rel, meta in files.items():
                sealed_paths.add(sealed_rel)
                problems += _check_file(store, store.docs / sealed_rel, meta)
        for day, files in _sealed_of(entry, "editions").items():
            where = _rel(store, entry.folder / MANIFEST)
            if day not in sealed_by:
                problems.append(Problem(where, f"seals an edition of day {day}, which no "
                                               "earlier snapshot sealed"))
            for sealed_rel, meta in files.items():
                if sealed_rel in sealed_paths:
                    problems.append(Problem(where, f"seals {sealed_rel} again: a page is "
                                                   "sealed once"))
                sealed_paths.add(sealed_rel)
                problems += _check_file(store, store.docs / sealed_rel, meta)
    return (problems + _unsealed(store, sealed_paths)
            + _check_pending_mementos(store, set(listed_by)))


def _check_mementos(store: Store, entry: _Entry, listed_by: dict[str, str]) -> list[Problem]:
    """Check the mementos records a manifest lists (each once in the chain, unaltered)."""
    manifest = entry.manifest
    if not isinstance(manifest, Mapping) or mementos_problems(manifest.get("mementos", {})):
        return []  # a malformed list is reported with the manifest's other problems
    out = []
    for rel, meta in manifest.get("mementos", {}).items():
        if rel in listed_by:
            out.append(Problem(_rel(store, entry.folder / MANIFEST),
                               f"lists {rel} again (already listed by {listed_by[rel]}): a "
                               "mementos record is put in the chain once"))
        listed_by.setdefault(rel, entry.folder.name)
        found = _check_file(store, store.docs / rel, meta)
        out += found or _record_problems(store, store.docs / rel, "in the chain, but")
    return out


def _record_problems(store: Store, path: Path, where: str) -> list[Problem]:
    """Return the problem of a mementos record that is not one (none if it is)."""
    try:
        parse_record(read_bounded(path, MAX_RECORD_BYTES), path)
    except (ChronicleError, OSError, ValueError) as err:
        return [Problem(_rel(store, path), f"{where} unreadable: {err}")]
    return []


def _check_pending_mementos(store: Store, listed: set[str]) -> list[Problem]:
    """Find what has no place in docs/mementos (records are named by their time), and
    records not yet in the chain that are not records at all."""
    folder = store.docs / MEMENTOS_DIR
    if not folder.is_dir() or folder.is_symlink():
        return []
    out = []
    for child in sorted(folder.iterdir()):
        rel = f"{MEMENTOS_DIR}/{child.name}"
        if child.is_symlink() or rel in listed:
            continue  # a link is reported by the layout check; listed ones are checked
        if not RECORD_NAME.match(child.name) or not child.is_file():
            out.append(Problem(_rel(store, child), "not a mementos record (named like "
                               "2026-09-30T041200Z.json, written by `chronicle archive`): "
                               "remove it"))
            continue
        out += _record_problems(store, child, "not in the chain yet, and")
    return out


def _sealed_of(entry: _Entry, key: str = "sealed") -> dict[str, dict[str, Any]]:
    """Return what a manifest seals (`sealed`: its days; `editions`: other languages' pages
    of earlier days), even one malformed elsewhere (if this part is sound)."""
    if entry.info is not None:
        return entry.info.sealed if key == "sealed" else entry.info.editions
    manifest = entry.manifest
    if isinstance(manifest, Mapping) and not sealed_problems(manifest.get(key, {}), key):
        return dict(manifest.get(key, {}))
    return {}


def _unsealed(store: Store, sealed_paths: set[str]) -> list[Problem]:
    """Find the files in docs/days no manifest seals (one finding per day)."""
    if not store.days.is_dir():
        return []
    by_day: dict[str, list[Path]] = {}
    for path in sorted(store.days.rglob("*")):
        rel = path.relative_to(store.docs).as_posix()
        if path.is_file() and rel not in sealed_paths:
            # One finding per day and edition: days/<date>... or days/<language>/<date>...
            parts = rel.split("/")
            edition = len(parts) > 2 and len(parts[1]) == 2
            key = f"{parts[1]}/{parts[2].split('.')[0]}" if edition else parts[1].split(".")[0]
            by_day.setdefault(key, []).append(path)
    out = []
    for paths in by_day.values():
        shown = next((p for p in paths if p.suffix == ".md"), paths[0])
        more = f" (and {len(paths) - 1} more file(s) of that day)" if len(paths) > 1 else ""
        out.append(Problem(_rel(store, shown) + more,
                           "not sealed by any readable snapshot manifest (added by hand or "
                           "out of order, or its manifest is damaged: see above)"))
    return out


def refuse_unsealed(store: Store) -> None:
    """Refuse (StoreError, exit 2) a store whose docs/days holds a file no manifest seals:
    `build` would publish it as a sealed page (and a name that is not a date stopped it
    with a traceback). `verify` lists each such file; this names the first."""
    sealed = {rel for snap in store.snapshots() for rel in snap.sealed_files()}
    strays = _unsealed(store, sealed)
    if strays:
        more = f" ({len(strays) - 1} more day(s): `chronicle verify` lists them)" \
            if len(strays) > 1 else ""
        raise StoreError(
            f"{store.docs.parent / strays[0].path}: not sealed by any snapshot manifest{more}; "
            "docs/days holds sealed pages only (a file added by hand, or copied from another "
            "chronicle): remove it, or restore docs/ from git, then build again")


def parse_head(data: bytes, source: str) -> Head:
    """Return the chain head published in `data`: an api/latest.json, or a MANIFEST.json.

    What was read is checked before anything uses it: a snapshot id names a snapshot
    folder (never a path such as `/etc` or `../x`), a sha256 is 64 hex digits.
    """
    fix = "pass a chronicle's api/latest.json, a MANIFEST.json, or the head's sha256"
    try:
        doc = load_json(data, MAX_MANIFEST_BYTES)
    except ValueError as err:
        raise ChronicleError(f"{source}: not JSON a chronicle writes ({err}); {fix}") from None
    if isinstance(doc, Mapping) and isinstance(doc.get("head"), Mapping):
        head = doc["head"]
        sid, sha = head.get("snapshot"), head.get("sha256")
        if not (isinstance(sid, str) and SNAPSHOT_ID.match(sid)):
            raise ChronicleError(f"{source}: head.snapshot is {_shown(sid)}, not a snapshot "
                                 f"id (like 2026-09-30T031700Z); {fix}")
        if not (isinstance(sha, str) and SHA256.match(sha)):
            raise ChronicleError(f"{source}: head.sha256 is {_shown(sha)}, not a sha256 (64 "
                                 f"hex digits); {fix}")
        return Head(sid, sha.lower(), source)
    if isinstance(doc, Mapping) and doc.get("format") == MANIFEST_FORMAT:
        problems = manifest_problems(doc)
        if problems:
            raise ChronicleError(f"{source}: a malformed manifest ({problems[0]}); {fix}")
        return Head(str(doc["snapshot"]), sha256_bytes(data), source)
    older = isinstance(doc, Mapping) and "snapshot" in doc and "head" not in doc
    raise ChronicleError(f"{source}: holds no chain head" + (
        " (a site built by an older chronicle publishes none: use the sha256 of the "
        "newest MANIFEST.json it serves)" if older else f"; {fix}"))


def _shown(value: Any) -> str:
    """Return a value read from outside, cut short and printable, for a message."""
    text = json.dumps(value, ensure_ascii=True)
    return text if len(text) <= 40 else text[:37] + "..."


def verify_against(store: Store, head: Head) -> list[Problem]:
    """Check that the published chain head `head` is in this store's hash chain."""
    entries, _ = _read_entries(store)
    for entry in entries:
        if entry.sha256 == head.sha256:
            if head.snapshot not in (None, entry.folder.name):
                return [Problem(_rel(store, entry.folder / MANIFEST),
                                f"{head.source} names the head {head.snapshot}, but the "
                                f"manifest with its sha256 is {entry.folder.name}'s")]
            return []
    local = next((e for e in entries if e.folder.name == head.snapshot), None)
    newest = entries[-1].folder.name if entries else "no snapshot"
    if local is not None:
        return [Problem(_rel(store, local.folder / MANIFEST),
                        f"rewritten: {head.source} published its sha256 as "
                        f"{head.sha256[:12]}…, this copy's is {str(local.sha256)[:12]}…")]
    if head.snapshot is not None:
        return [Problem(_rel(store, store.data / head.snapshot),
                        f"missing: {head.source} published snapshot {head.snapshot} as the "
                        f"chain head; this copy ends at {newest}: its newest snapshots were "
                        "removed (or this copy is older than the published one: update it)")]
    return [Problem(_rel(store, store.data),
                    f"no manifest has the sha256 {head.sha256[:12]}… given by {head.source}: "
                    f"the chain (ending at {newest}) was truncated or rewritten, or the "
                    "checksum is not a chronicle manifest's")]


def _rel(store: Store, path: Path) -> str:
    return path.relative_to(store.docs.parent).as_posix()


def _check_layout(store: Store) -> list[Problem]:
    """Find what has no place in the store: stray entries in docs/data, symlinks."""
    out: list[Problem] = []
    if store.data.is_dir():
        for child in sorted(store.data.iterdir()):
            if child.is_symlink():
                continue  # reported below
            if child.name.startswith("."):
                out.append(Problem(_rel(store, child), "a hidden entry in docs/data, which "
                                   "`build` publishes as is: remove it"))
            elif not child.is_dir():
                out.append(Problem(_rel(store, child), "a file directly in docs/data (which "
                                   "`build` publishes as is); snapshots are folders: remove it"))
            elif not SNAPSHOT_ID.match(child.name):
                out.append(Problem(_rel(store, child), "not a snapshot folder (named like "
                                   "2026-09-30T031700Z): remove it from docs/data"))
    for top in (store.data, store.days, store.docs / MEMENTOS_DIR):
        for path, what in links_under(top) if top.is_dir() else ():
            what = "a symlink" if what == "a symbolic link" else what
            out.append(Problem(_rel(store, path), f"{what}: the store holds regular files "
                               "only (a link can point anywhere, a FIFO never ends): "
                               "replace it with the file from git"))
    return out


def _read_entries(store: Store) -> tuple[list[_Entry], list[Problem]]:
    """Return every snapshot folder, oldest first, and the problems of its manifest."""
    entries: list[_Entry] = []
    problems: list[Problem] = []
    if not store.data.is_dir():
        return entries, problems
    for child in sorted(store.data.iterdir()):
        if (child.name.startswith(".") or child.is_symlink() or not child.is_dir()
                or not SNAPSHOT_ID.match(child.name)):
            continue
        path, where = child / MANIFEST, _rel(store, child / MANIFEST)
        if not path.is_file():
            problems.append(Problem(where, "missing: every snapshot folder has a manifest"))
            entries.append(_Entry(child, None, None))
            continue
        raw: bytes | None = None
        try:
            raw = read_bounded(path, MAX_MANIFEST_BYTES)
            manifest: Any = load_json(raw, MAX_MANIFEST_BYTES)
        except (OSError, ValueError) as err:
            problems.append(Problem(where, f"not a manifest chronicle can read ({err})"))
            entries.append(_Entry(child, raw, None))
            continue
        found = manifest_problems(manifest)
        problems += [Problem(where, f"malformed: {p}") for p in found]
        taken = None if found else parse_time(manifest["taken_at"])
        info = SnapshotInfo(child.name, taken, child, manifest, sha256_bytes(raw)) if taken \
            else None
        entries.append(_Entry(child, raw, info, manifest))
    return entries, problems


def _check_link(store: Store, entry: _Entry, previous: _Entry | None) -> list[Problem]:
    """Check that a manifest names its folder, its time and its predecessor's sha256."""
    if entry.info is None:
        return []
    where = _rel(store, entry.folder / MANIFEST)
    m, sid = entry.info.manifest, entry.folder.name
    out = []
    if m.get("snapshot") != sid:
        out.append(Problem(where, f"names snapshot {m.get('snapshot')!r} but lives in folder "
                                  f"{sid}"))
    elif snapshot_id(entry.info.taken_at) != sid:
        out.append(Problem(where, f"taken_at {m.get('taken_at')} does not match its id {sid}"))
    prev = m.get("previous")
    if previous is None and prev is not None:
        out.append(Problem(where, f"chain broken: its predecessor {prev.get('snapshot')} "
                                  "is missing (a snapshot was deleted)"))
    elif previous is not None:
        before = previous.folder.name
        if prev is None or prev.get("snapshot") != before:
            want = prev.get("snapshot") if prev else None
            out.append(Problem(where, f"chain broken: names predecessor {want}, but the "
                                      f"previous snapshot on disk is {before} (a snapshot "
                                      "was deleted or added out of order)"))
        elif previous.raw is not None and prev.get("sha256") != previous.sha256:
            out.append(Problem(_rel(store, previous.folder / MANIFEST),
                               "altered: its sha256 no longer matches the one recorded by the "
                               f"next snapshot {sid}"))
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
