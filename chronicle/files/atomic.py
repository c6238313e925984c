"""Write a file whole or not at all (used by every stage that keeps a file outside the store).

A temporary file in the same folder, renamed over the target: a reader (a concurrent
build, the next run after a crash or a full disk) sees the old file or the new one, never
half of one. The store's own commits are whole snapshot folders (store/write.py).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO


def write_atomic(path: Path, content: bytes | Callable[[BinaryIO], None],
                 mode: int = 0o644) -> None:
    """Write `content` (bytes, or a function writing to a binary file) to `path`.

    `mode` is set before the rename (mkstemp makes files 0600). OSError is the caller's
    to handle; the temporary file never stays behind.
    """
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as sink:
            if isinstance(content, bytes):
                sink.write(content)
            else:
                content(sink)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)


def write_atomic_at(dir_fd: int, name: str, content: bytes, mode: int = 0o644) -> None:
    """Write `content` to the file `name` of the folder open as `dir_fd`, whole or not at
    all, never through a link: the temporary file is made new (O_EXCL, O_NOFOLLOW) and
    renamed over `name`, which replaces a link there instead of writing where it points.
    """
    tmp = f".{name}.{secrets.token_hex(6)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                 mode, dir_fd=dir_fd)
    try:
        with os.fdopen(fd, "wb") as sink:
            os.fchmod(sink.fileno(), mode)
            sink.write(content)
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise
