"""Files under a chronicle are opened as files: never through a link, never a FIFO.

A chronicle folder is a git checkout, and git stores symbolic links: a pull request can
plant `.chronicle.lock -> docs/days/<day>.md` (opening the lock truncated a sealed page)
or `.cache/chronicle/threads -> ../../docs/days` (a build pruned every sealed file). So
every file chronicle opens, truncates or deletes in place under the chronicle is opened
with O_NOFOLLOW (a link is refused, wherever it points, even nowhere) and O_NONBLOCK (a
FIFO does not hang the open), and what was opened is checked with fstat *after* the
open, so nothing can be swapped in between a check and the use. Folders are walked the
same way, one `openat` per component, so a folder that is a link is refused too.

A path the user names (the chronicle folder itself, --site-dir) is theirs to point
anywhere; only what chronicle finds inside it is held to this.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path

from chronicle.errors import ChronicleError

CACHE_FOLDERS = (".cache", "chronicle")  # where a chronicle keeps its caches, under its folder
_FILE_FLAGS = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class NotAFile(ChronicleError):
    """A link, folder, FIFO or device where chronicle expects a regular file (or a folder)."""

    def __init__(self, path: Path, found: str, expected: str = "a regular file",
                 fix: str = "") -> None:
        self.path = path
        self.found = found
        super().__init__(
            f"{path}: {found}, where chronicle expects {expected}; chronicle never follows a "
            "link or opens a FIFO or device inside a chronicle (a link planted in a "
            "checkout could point at a sealed page or outside the chronicle). "
            + (fix or "Remove it (`rm` removes a link, not what it points at), then run the "
                      "command again"))


def describe(mode: int) -> str:
    """Return what a file of `mode` (st_mode) is, in words."""
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a regular file" if stat.S_ISREG(mode) else "not a regular file"


def _found(path: Path, dir_fd: int | None = None) -> str | None:
    """Return what is at `path` (not following a link), or None if nothing is."""
    try:
        return describe(os.stat(path, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return None


def open_file(path: Path, flags: int, mode: int = 0o644, *, dir_fd: int | None = None,
              shown: Path | None = None) -> int:
    """Return a descriptor of the regular file `path`, opened with `flags`.

    NotAFile when `path` is a symbolic link (dangling or not), a folder, a FIFO, a socket
    or a device; OSError for the rest (missing, permission, read-only file system).
    `shown` is the path a message names when `path` is relative to `dir_fd`.
    """
    shown = shown or path
    try:
        fd = os.open(path, flags | _FILE_FLAGS, mode, dir_fd=dir_fd)
    except OSError as err:
        found = _found(path, dir_fd)
        if err.errno in (errno.ELOOP, errno.EISDIR, errno.ENXIO, errno.EMLINK) or (
                found is not None and found != "a regular file"):
            raise NotAFile(shown, found or "not a regular file") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotAFile(shown, describe(info.st_mode))
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_file(path: Path, limit: int | None = None, *, dir_fd: int | None = None,
              shown: Path | None = None) -> bytes:
    """Return the bytes of the regular file `path` (at most `limit` + 1 of them, so a
    caller can tell a file over its limit without reading all of it)."""
    fd = open_file(path, os.O_RDONLY, dir_fd=dir_fd, shown=shown)
    with os.fdopen(fd, "rb") as source:
        return source.read() if limit is None else source.read(limit + 1)


def open_dir(base: Path, parts: Sequence[str], create: bool = False) -> int:
    """Return a descriptor of the folder `base`/`parts`, each part opened without
    following a link (`base` itself is the caller's, followed as given).

    NotAFile when a part is a link, FIFO or device; FileNotFoundError when one is missing
    (unless `create`); OSError for the rest (NotADirectoryError: a regular file).
    """
    fd = os.open(base, _DIR_FLAGS & ~os.O_NOFOLLOW)
    try:
        where = base
        for part in parts:
            where = where / part
            try:
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):  # made meanwhile: open it below
                    os.mkdir(part, 0o755, dir_fd=fd)
                child = _open_child_dir(part, fd, where)
            except OSError as err:
                _refuse_dir(err, part, fd, where)
                raise
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_child_dir(part: str, fd: int, where: Path) -> int:
    try:
        return os.open(part, _DIR_FLAGS, dir_fd=fd)
    except OSError as err:
        _refuse_dir(err, part, fd, where)
        raise


def _refuse_dir(err: OSError, part: str, fd: int, where: Path) -> None:
    """Raise NotAFile when opening the folder `part` failed on a link, FIFO or device; a
    regular file in its place stays an OSError (ENOTDIR), as a disk that cannot be
    written is: the caller's to take as "no folder"."""
    if err.errno not in (errno.ELOOP, errno.ENOTDIR):
        return
    found = _found(Path(part), fd)
    if found != "a regular file":
        raise NotAFile(where, found or "not a folder", "a folder") from None


@contextlib.contextmanager
def folder(base: Path, parts: Sequence[str], create: bool = False) -> Iterator[int]:
    """Hold a descriptor of `base`/`parts` (see `open_dir`) for the `with` block."""
    fd = open_dir(base, parts, create)
    try:
        yield fd
    finally:
        os.close(fd)


def links_under(top: Path) -> list[tuple[Path, str]]:
    """Return every entry under the folder `top` that is neither a regular file nor a
    folder (a link, a FIFO, a socket, a device), with what it is; links are not followed.
    The kind comes from the directory entry (d_type): no stat per file."""
    found: list[tuple[Path, str]] = []
    folders = [top]
    while folders:
        try:
            entries = list(os.scandir(folders.pop()))
        except (FileNotFoundError, NotADirectoryError):
            continue  # gone meanwhile
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    folders.append(Path(entry.path))
                elif entry.is_symlink() or not entry.is_file(follow_symlinks=False):
                    found.append((Path(entry.path),
                                  describe(entry.stat(follow_symlinks=False).st_mode)))
            except FileNotFoundError:
                continue
    return sorted(found)


def check_cache_folders(root: Path) -> None:
    """Refuse (NotAFile, exit 2) a link, FIFO or device where the chronicle at `root`
    keeps its caches: `.cache`, `.cache/chronicle` and what is directly in either (a
    planted `.cache/chronicle/threads -> ../../docs/days` once made a build prune every
    sealed day file). Deeper entries are never followed either (site/build_cache.py
    opens them with `folder`)."""
    fix = ("Remove it (`rm` removes a link, not what it points at): a cache only saves "
           "work, the next command makes it again")
    path = root
    for part in CACHE_FOLDERS:
        path = path / part
        try:
            mode = os.stat(path, follow_symlinks=False).st_mode
        except FileNotFoundError:
            return
        if stat.S_ISREG(mode):
            return  # a cache that cannot be written: every entry a miss
        if not stat.S_ISDIR(mode):
            raise NotAFile(path, describe(mode), "a folder", fix)
        for child in sorted(os.scandir(path), key=lambda entry: entry.name):
            kind = child.stat(follow_symlinks=False).st_mode
            # A regular file in a folder's place is only a cache that cannot be written.
            if not (stat.S_ISDIR(kind) or stat.S_ISREG(kind)):
                raise NotAFile(Path(child.path), describe(kind), "a folder", fix)
