"""Write a file whole or not at all (used by every stage that keeps a file outside the store).

A temporary file in the same folder, renamed over the target: a reader (a concurrent
build, the next run after a crash or a full disk) sees the old file or the new one, never
half of one. The store's own commits are whole snapshot folders (store/write.py).
"""

from __future__ import annotations

import os
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
