"""Software Heritage identifiers (SWHIDs, ISO/IEC 18670) of sealed files (store stage).

A SWHID is intrinsic: anyone can compute it from the bytes, and Software Heritage
resolves it once it has archived the repository that holds them. A file's is
`swh:1:cnt:` + its git blob id; a folder's is `swh:1:dir:` + its git tree id. Both are
computed here, without git or swh-model, the way git computes them (tests compare with
`git hash-object` and `git write-tree`).
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from chronicle.errors import StoreError

CONTENT = "swh:1:cnt:"
DIRECTORY = "swh:1:dir:"
# git's tree entry modes. A sealed file is never executable, so every file is 100644 (what
# git records for a file written 0644); links are refused, never followed.
_FILE_MODE = b"100644"
_DIR_MODE = b"40000"


@dataclass(frozen=True)
class DaySwhids:
    """A sealed day's SWHIDs: its page's, and its chart folder's (None without one)."""

    page: str
    folder: str | None


def blob_id(data: bytes) -> bytes:
    """Return the raw 20-byte git blob id of `data` (sha1 of `blob <size>\\0` + data)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).digest()


def content_swhid(data: bytes) -> str:
    """Return the SWHID of a file holding `data`: swh:1:cnt:<git blob id>."""
    return CONTENT + blob_id(data).hex()


def tree_id(folder: Path) -> bytes:
    """Return the raw 20-byte git tree id of `folder`: its files and subfolders, hashed as
    `git write-tree` would (StoreError for a link or anything else that is not a file or
    a folder)."""
    entries: list[tuple[bytes, bytes, bytes]] = []  # (sort key, mode + name, id)
    for path in folder.iterdir():
        name = os.fsencode(path.name)
        mode = path.lstat().st_mode
        if stat.S_ISREG(mode):
            entries.append((name, _FILE_MODE + b" " + name, blob_id(path.read_bytes())))
        elif stat.S_ISDIR(mode):
            # git compares a folder's name as if it ended in "/": "a.b" < "a/" < "a0".
            entries.append((name + b"/", _DIR_MODE + b" " + name, tree_id(path)))
        else:
            raise StoreError(f"{path}: not a regular file or folder (a link?); a sealed day's "
                             "folder holds files only: restore it from git")
    body = b"".join(head + b"\0" + oid for _, head, oid in sorted(entries))
    return hashlib.sha1(b"tree %d\0" % len(body) + body).digest()


def directory_swhid(folder: Path) -> str:
    """Return the SWHID of `folder`: swh:1:dir:<git tree id>."""
    return DIRECTORY + tree_id(folder).hex()


def day_swhids(days: Path, day: str) -> DaySwhids:
    """Return the SWHIDs of the sealed day `day` (YYYY-MM-DD) under `days` (docs/days):
    of `<day>.md` as stored, and of the folder `<day>/` when there is one."""
    page, folder = days / f"{day}.md", days / day
    for path in (page, folder):
        if path.is_symlink():
            raise StoreError(f"{path}: a link where sealed files should be: restore it "
                             "from git")
    return DaySwhids(content_swhid(page.read_bytes()),
                     directory_swhid(folder) if folder.is_dir() else None)
