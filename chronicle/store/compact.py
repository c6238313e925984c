"""A compact copy of every stored metric row, kept outside the published tree (store stage).

Reading a hundred snapshots' `metrics.parquet` files on every snapshot and build costs a
file open and a footer parse each; one compact table of all of them, keyed by the
sha256 of the newest manifest it includes, costs one read plus the snapshots taken since.
The hash chain makes the key safe: a manifest's sha256 fixes every earlier manifest and
every metrics file they name, so the copy is valid exactly while that chain is. It lives
in `<chronicle>/.cache/chronicle/` (never committed, never published) and is rebuilt from
the store whenever it is missing, unreadable or stale.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import BinaryIO

import pyarrow as pa

from chronicle.atomic import write_atomic

# Arrow's own file format, LZ4-compressed: read in ~3 ms where the zstd Parquet copy of
# 40,000 rows took ~60 ms (a build, a snapshot and each demo night read it once).
FORMAT = 2  # bump when the table's layout changes: older copies are then ignored
_WRITE = pa.ipc.IpcWriteOptions(compression="lz4")


def cache_dir(docs: Path) -> Path:
    """Return the folder of the compact copies of the chronicle whose store is `docs`."""
    return docs.parent / ".cache" / "chronicle" / "metrics"


def _name(manifest_sha256: str) -> str:
    return f"v{FORMAT}-{manifest_sha256}.arrow"


def read_compact(docs: Path, manifests: Sequence[str]) -> tuple[int, pa.Table] | None:
    """Return (how many snapshots it holds, the table) of the newest valid compact copy.

    `manifests` are the stored snapshots' manifest sha256s, oldest first.
    """
    folder = cache_dir(docs)
    if not folder.is_dir():
        return None
    for count in range(len(manifests), 0, -1):
        path = folder / _name(manifests[count - 1])
        if path.is_file():
            try:
                with pa.OSFile(str(path)) as source:
                    return count, pa.ipc.open_file(source).read_all()
            except (OSError, pa.ArrowException):
                return None  # a damaged copy is only a cache: read the store instead
    return None


def write_compact(docs: Path, manifest_sha256: str, table: pa.Table) -> None:
    """Keep `table` as the compact copy up to the manifest `manifest_sha256`; drop older
    copies. Best effort: a chronicle on a read-only disk still builds."""
    folder = cache_dir(docs)
    with contextlib.suppress(OSError):
        folder.mkdir(parents=True, exist_ok=True)

        def arrow_file(sink: BinaryIO) -> None:
            with pa.ipc.new_file(sink, table.schema, options=_WRITE) as writer:
                writer.write_table(table)

        write_atomic(folder / _name(manifest_sha256), arrow_file)
        for old in folder.glob("v*"):  # older copies, and older formats (v1: .parquet)
            if old.name != _name(manifest_sha256):
                old.unlink(missing_ok=True)
