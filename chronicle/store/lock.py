"""One process at a time on a chronicle's store (store stage).

Two snapshots at once fork the hash chain and store rows twice; a build or verify during
a snapshot reads a store between its commit and its publication. Every command that opens
the store takes an exclusive `fcntl.flock` on `<chronicle>/.chronicle.lock` (next to docs/,
outside what the nightly job commits) and, holding it, finishes what a killed snapshot
left (store/write.py). The kernel drops the lock when the process exits, however it exits
(SIGKILL included), so a stale lock cannot exist. A second process does not wait: it
fails at once naming the holder (pid, host, since when, command), written into the file
while it is held (and left there only by a holder that was killed).

The lock file is opened as a file (chronicle/files/nofollow.py): a link, folder or FIFO in its
place is refused, never followed or truncated, and so is a link or FIFO anywhere in the
store, before anything reads or moves a stored file.

`verify` only reads, so it also runs for a user who cannot write the chronicle (another
account, a read-only mount): it takes the lock shared through a read-only descriptor
(a snapshot still cannot start under it), or, when the lock file does not exist and
cannot be created, runs without it and says so once. Such a reader cannot finish a killed
snapshot either; it says that too, and verify reports the store as it is.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import socket
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from chronicle.clean import load_json
from chronicle.errors import ChronicleError
from chronicle.files.nofollow import (
    NotAFile,
    links_under,
    open_file,
    read_file,
)
from chronicle.models import iso
from chronicle.store.mementos import MEMENTOS_DIR
from chronicle.store.read import DAYS_DIR, LOCK_FILE, MANIFEST, STAGED, TMP_PREFIX, Store
from chronicle.store.write import finish_interrupted

# Lock files this process holds -> nesting depth (flock is per open file: a second open of
# the same file in one process would wait on itself).
_HELD: dict[Path, int] = {}
# Errors that mean "this user may not write here", not "something is wrong".
_NO_WRITE = (errno.EACCES, errno.EPERM, errno.EROFS)
_HOLDER_BYTES = 4096  # the holder's line is ~150 bytes


class StoreBusy(ChronicleError):
    """Another process holds the store lock."""


@dataclass
class Access:
    """How a reading command holds the store: what finishing a killed snapshot did, and
    what the reader should be told (no lock, an interrupted snapshot left as it was)."""

    recovered: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def lock_path(store: Store) -> Path:
    """Return the lock file of a store: in the chronicle folder, next to docs/."""
    return store.docs.parent / LOCK_FILE


def holder(path: Path) -> dict[str, Any] | None:
    """Return who holds (or last held) the lock at `path`, as written by the holder."""
    try:
        data = load_json(read_file(path, _HOLDER_BYTES) or b"null", _HOLDER_BYTES)
    except (OSError, ValueError, ChronicleError):
        return None
    return data if isinstance(data, dict) else None


def _busy(path: Path, command: str) -> StoreBusy:
    who = holder(path)
    if who is None:
        said = ("another chronicle process (one that has not named itself: just starting, "
                "or a `verify` by a user who cannot write the folder)")
    else:
        said = (f"`chronicle {who.get('command', '?')}` (pid {who.get('pid', '?')} on host "
                f"{who.get('host', '?')}, since {who.get('since', '?')})")
    return StoreBusy(
        f"{path.parent}: the store is locked by {said}; `chronicle {command}` needs it alone: "
        "wait for that process to finish and run this again (a crashed process frees the "
        "lock itself; never delete the lock file by hand while that process runs)")


def _key(store: Store) -> Path:
    # The folder resolved, never the lock file: resolving it would follow a planted link.
    return store.docs.parent.resolve() / LOCK_FILE


def _folder(store: Store) -> Path:
    folder = store.docs.parent
    if not folder.is_dir():
        raise ChronicleError(f"{folder}: folder does not exist; pass --dir")
    return folder


def _no_write(path: Path, err: OSError, command: str) -> ChronicleError:
    why = os.strerror(err.errno or errno.EACCES).lower()
    return ChronicleError(
        f"{path}: cannot open the store's lock file for writing ({why}); `chronicle "
        f"{command}` writes to the chronicle: run it as a user who can write {path.parent} "
        "(on a read-only mount, in a writable copy); `chronicle verify` works without write "
        "access")


@contextlib.contextmanager
def locked(store: Store, command: str) -> Iterator[list[str]]:
    """Hold the store's lock for `command`; yield what finishing a killed snapshot did."""
    key = _key(store)
    if key in _HELD:
        _HELD[key] += 1
        try:
            yield []
        finally:
            _HELD[key] -= 1
        return
    path = lock_path(store)
    _folder(store)
    try:
        fd = open_file(path, os.O_RDWR | os.O_CREAT)
    except OSError as err:
        if err.errno in _NO_WRITE:
            raise _no_write(path, err, command) from None
        raise
    with _exclusive(fd, path, key, command):
        _refuse_links(store)
        yield finish_interrupted(store)


@contextlib.contextmanager
def reading(store: Store, command: str) -> Iterator[Access]:
    """Hold the store for a command that only reads it (`verify`).

    With write access it is `locked` (exclusive, a killed snapshot finished). Without, a
    shared lock through a read-only descriptor; when there is no lock file to open and none
    can be made, no lock at all. Either way the `Access` notes say what could not be done.
    Links and FIFOs in the store are left for the command to report, never followed.
    """
    key = _key(store)
    if key in _HELD:
        with locked(store, command) as recovered:
            yield Access(recovered)
        return
    path = lock_path(store)
    _folder(store)
    try:
        fd = open_file(path, os.O_RDWR | os.O_CREAT)
    except OSError as err:
        if err.errno not in _NO_WRITE:
            raise
        why = os.strerror(err.errno or errno.EACCES).lower()
        with _shared(path, key, command, why) as notes:
            notes += _interrupted(store)
            yield Access(notes=notes)
        return
    with _exclusive(fd, path, key, command):
        if _links(store):
            yield Access()  # the command reports them; nothing is moved through a link
        else:
            yield Access(finish_interrupted(store))


@contextlib.contextmanager
def _exclusive(fd: int, path: Path, key: Path, command: str) -> Iterator[None]:
    """Hold an exclusive lock through the writable descriptor `fd`, naming the holder."""
    with os.fdopen(fd, "r+b", buffering=0) as fh:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as err:
            raise _busy(path, command) from err
        if os.fstat(fh.fileno()).st_nlink != 1:
            # A hard link shares its bytes with another file (a sealed page): the holder's
            # line would be written into it.
            raise NotAFile(path, "a file with another name (a hard link)")
        line = json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                           "since": iso(datetime.now(UTC)), "command": command}) + "\n"
        with contextlib.suppress(OSError):  # who holds it is a courtesy: a full disk still locks
            fh.truncate(0)
            fh.write(line.encode())
        _HELD[key] = 1
        try:
            yield
        finally:
            del _HELD[key]
            with contextlib.suppress(OSError):
                fh.truncate(0)  # nobody holds it now: no holder to name
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


@contextlib.contextmanager
def _shared(path: Path, key: Path, command: str, why: str) -> Iterator[list[str]]:
    """Hold a shared lock through a read-only descriptor, or none when none can be opened;
    yield the notes saying which."""
    try:
        fd: int | None = open_file(path, os.O_RDONLY)
    except OSError as err:
        fd = None
        missing = isinstance(err, FileNotFoundError)
        said = (f"it does not exist and this user cannot create it ({why})" if missing
                else f"this user cannot open it ({os.strerror(err.errno or 0).lower()})")
        notes = [f"{path}: not locked: {said}; `chronicle {command}` checked the store "
                 "without the lock, so a snapshot taken at the same time could show as a "
                 "half-written one: if this fails, run it again when no snapshot runs"]
    if fd is None:
        yield notes
        return
    with os.fdopen(fd, "rb", buffering=0) as fh:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError as err:
            raise _busy(path, command) from err
        _HELD[key] = 1
        try:
            yield []
        finally:
            del _HELD[key]
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def _links(store: Store) -> list[tuple[Path, str]]:
    """Return the links, FIFOs, sockets and devices in the store (docs/data, docs/days),
    and those elsewhere in docs/ that lead out of the chronicle or are not files."""
    if not store.docs.is_dir() or store.docs.is_symlink():
        return []
    found = []
    inside = store.docs.parent.resolve()
    for path, what in links_under(store.docs):
        rel = path.relative_to(store.docs).parts
        if what == "a symbolic link" and rel[0] not in (store.data.name, DAYS_DIR,
                                                        MEMENTOS_DIR):
            target = path.resolve()
            if target.is_relative_to(inside) and (target.is_file() or target.is_dir()):
                continue  # docs/assets/logo.svg -> ../../brand/logo.svg: the chronicle's own
        found.append((path, what))
    return found


def _refuse_links(store: Store) -> None:
    """Refuse a store holding a link or FIFO (exit 2 naming it): a build would publish
    what a link points at, a snapshot could move files through one."""
    if store.docs.is_symlink():
        raise NotAFile(store.docs, "a symbolic link", "the chronicle's docs/ folder",
                       "Replace it with the folder itself")
    found = _links(store)
    if found:
        path, what = found[0]
        more = f" (and {len(found) - 1} more: `chronicle verify` lists them)" \
            if len(found) > 1 else ""
        raise NotAFile(path, what + more, fix=(
            "Remove it and restore the file from git if it is a stored one "
            f"(`git checkout -- {path}`), then run the command again; nothing was written"))


def _interrupted(store: Store) -> list[str]:
    """Return a note for each killed snapshot this reader cannot finish (no write access)."""
    if not store.data.is_dir():
        return []
    notes = []
    for child in sorted(store.data.iterdir()):
        if child.is_symlink():
            continue
        if child.name.startswith(TMP_PREFIX) and child.is_dir():
            notes.append(f"{child}: a snapshot interrupted before it committed (it never "
                         "counted); a user who can write the chronicle removes it by running "
                         "any chronicle command")
        elif (child / STAGED).is_dir() and (child / MANIFEST).is_file():
            notes.append(f"{child}: a snapshot interrupted after it committed, its sealed "
                         "days not yet published; a user who can write the chronicle "
                         "publishes them by running any chronicle command")
    return notes
