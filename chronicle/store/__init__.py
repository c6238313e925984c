"""The append-only, checksummed store under docs/ (store stage).

read.py reads it (`Store`), write.py appends a snapshot and seals days
(`write_snapshot`, the only writer), verify.py checks the hash chain (`verify_store`),
hashing.py and tables.py give the bytes their checksums are taken of.
"""

from chronicle.store.hashing import dump_json, sha256_bytes, sha256_file
from chronicle.store.read import (
    DATA_DIR,
    DAYS_DIR,
    MANIFEST,
    SnapshotInfo,
    Store,
    parse_snapshot_id,
    snapshot_id,
)
from chronicle.store.tables import parquet_bytes, rows_to_table
from chronicle.store.verify import Problem, verify_store
from chronicle.store.write import write_snapshot

__all__ = [
    "DATA_DIR",
    "DAYS_DIR",
    "MANIFEST",
    "Problem",
    "SnapshotInfo",
    "Store",
    "dump_json",
    "parquet_bytes",
    "parse_snapshot_id",
    "rows_to_table",
    "sha256_bytes",
    "sha256_file",
    "snapshot_id",
    "verify_store",
    "write_snapshot",
]
