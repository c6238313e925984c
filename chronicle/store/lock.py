"""One process at a time on a chronicle's store (store stage).

Two snapshots at once fork the hash chain and store rows twice; a build or verify during
a snapshot reads a store between its commit and its publication. Every command that opens
the store takes an exclusive `fcntl.flock` on `<chronicle>/.chronicle.lock` (next to docs/,
outside what the nightly job commits) and, holding it, finishes what a killed snapshot
left (store/write.py). The kernel drops the lock when the process exits, however it exits
(SIGKILL included), so a stale lock cannot exist. A second process does not wait: it
fails at once naming the holder (pid, host, since when, command), written into the file
while it is held (and left there only by a holder that was killed).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from chronicle.errors import ChronicleError
from chronicle.models import iso
from chronicle.store.read import LOCK_FILE, Store
from chronicle.store.write import finish_interrupted

# Lock files this process holds -> nesting depth (flock is per open file: a second open of
# the same file in one process would wait on itself).
_HELD: dict[Path, int] = {}


class StoreBusy(ChronicleError):
    """Another process holds the store lock."""


def lock_path(store: Store) -> Path:
    """Return the lock file of a store: in the chronicle folder, next to docs/."""
    return store.docs.parent / LOCK_FILE


def holder(path: Path) -> dict[str, Any] | None:
    """Return who holds (or last held) the lock at `path`, as written by the holder."""
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "null")
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _busy(path: Path, command: str) -> StoreBusy:
    who = holder(path)
    if who is None:
        said = "another chronicle process (it is just starting)"
    else:
        said = (f"`chronicle {who.get('command', '?')}` (pid {who.get('pid', '?')} on host "
                f"{who.get('host', '?')}, since {who.get('since', '?')})")
    return StoreBusy(
        f"{path.parent}: the store is locked by {said}; `chronicle {command}` needs it alone: "
        "wait for that process to finish and run this again (a crashed process frees the "
        "lock itself; never delete the lock file by hand while that process runs)")


@contextlib.contextmanager
def locked(store: Store, command: str) -> Iterator[list[str]]:
    """Hold the store's lock for `command`; yield what finishing a killed snapshot did."""
    path = lock_path(store).resolve()
    if path in _HELD:
        _HELD[path] += 1
        try:
            yield []
        finally:
            _HELD[path] -= 1
        return
    if not path.parent.is_dir():
        raise ChronicleError(f"{path.parent}: folder does not exist; pass --dir")
    fh: IO[str] = path.open("a+", encoding="utf-8")
    try:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as err:
            raise _busy(path, command) from err
        fh.seek(0)
        fh.truncate()
        fh.write(json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                             "since": iso(datetime.now(UTC)), "command": command}) + "\n")
        fh.flush()
        _HELD[path] = 1
        try:
            yield finish_interrupted(store)
        finally:
            del _HELD[path]
            fh.truncate(0)  # nobody holds it now: no holder to name
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
    finally:
        fh.close()
