"""The append-only, checksummed store under docs/ (store stage).

read.py reads it (`Store`), write.py appends a snapshot and seals days
(`write_snapshot`, the only writer; `write_mementos` adds a Wayback mementos record,
mementos.py its shape), lock.py lets one process at a time in (`locked`),
verify.py checks the hash chain (`verify_store`), manifest.py the shape of a manifest,
files.py names a damaged file, hashing.py and tables.py give the bytes their checksums
are taken of.
"""

from chronicle.store.files import damaged, read_json
from chronicle.store.hashing import dump_json, sha256_bytes, sha256_file
from chronicle.store.lock import Access, StoreBusy, locked, reading
from chronicle.store.mementos import (
    MEMENTOS_DIR,
    Attempt,
    Memento,
    MementoRecord,
    RecordCheck,
    memento_url,
    record_problems,
)
from chronicle.store.read import (
    DATA_DIR,
    DAYS_DIR,
    MANIFEST,
    SnapshotInfo,
    Store,
    edition_page,
    parse_snapshot_id,
    snapshot_id,
)
from chronicle.store.tables import metrics_table, parquet_bytes, rows_to_table, unstored_rows
from chronicle.store.verify import (
    Head,
    Problem,
    parse_head,
    refuse_unsealed,
    verify_against,
    verify_store,
)
from chronicle.store.write import (
    check_pending_mementos,
    finish_interrupted,
    write_mementos,
    write_snapshot,
)

__all__ = [
    "DATA_DIR",
    "DAYS_DIR",
    "MANIFEST",
    "MEMENTOS_DIR",
    "Access",
    "Attempt",
    "Head",
    "Memento",
    "MementoRecord",
    "Problem",
    "RecordCheck",
    "SnapshotInfo",
    "Store",
    "StoreBusy",
    "check_pending_mementos",
    "damaged",
    "dump_json",
    "edition_page",
    "finish_interrupted",
    "locked",
    "memento_url",
    "metrics_table",
    "parquet_bytes",
    "parse_head",
    "parse_snapshot_id",
    "read_json",
    "reading",
    "record_problems",
    "refuse_unsealed",
    "rows_to_table",
    "sha256_bytes",
    "sha256_file",
    "snapshot_id",
    "unstored_rows",
    "verify_against",
    "verify_store",
    "write_mementos",
    "write_snapshot",
]
