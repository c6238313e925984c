"""Checksums and canonical JSON bytes of the store (store stage).

Every file the store writes is named in a manifest by its sha256; canonical JSON (sorted
keys, UTF-8, trailing newline) makes the same record give the same checksum.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any


def sha256_bytes(data: bytes) -> str:
    """Return the hex sha256 of `data`."""
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    """Return the hex sha256 of a file, read in 1 MiB chunks."""
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def dump_json(obj: Any) -> bytes:
    """Canonical JSON bytes: sorted keys, UTF-8, trailing newline (stable checksums)."""
    return (
        json.dumps(obj, indent=1, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"
    ).encode()
