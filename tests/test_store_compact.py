"""The compact copy of every stored metric row (store/compact.py): same table as reading
every snapshot, extended by new snapshots, ignored when stale or damaged."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow as pa

from chronicle.models import RunRecord, SourceStatus
from chronicle.store import Store, write_snapshot
from chronicle.store.compact import cache_dir

T0 = datetime(2026, 8, 21, 3, 17, tzinfo=UTC)
OK = (SourceStatus("wandb", True), SourceStatus("github", True))


def _night(store: Store, n: int, rows: list[dict] | None) -> None:
    when = T0 + timedelta(days=n)
    run = RunRecord("r1", "r1", "running", T0, when)
    write_snapshot(store, when, rows, [run], [], [], OK)


def _rows(steps: range, key: str = "train/loss") -> list[dict]:
    return [{"run": "r1", "step": s, "timestamp": 1787192041.0 + s * 19.0, key: 3.0 - s * 1e-4}
            for s in steps]


def _fresh(docs: Path) -> pa.Table:
    """The table a process with no compact copy reads (every snapshot's file)."""
    for old in cache_dir(docs).glob("*"):
        old.unlink()
    return Store(docs).load_metrics()


def test_the_copy_gives_the_same_table_and_follows_new_snapshots(tmp_path: Path) -> None:
    docs = tmp_path / "c" / "docs"
    store = Store(docs)
    for n in range(3):
        _night(store, n, _rows(range(n * 10, n * 10 + 10)))
    full = Store(docs).load_metrics()  # a new process: reads 3 files, leaves the copy
    [copy] = list(cache_dir(docs).iterdir())
    assert copy.name.endswith(f"{store.latest().manifest_sha256}.arrow")  # type: ignore
    assert Store(docs).load_metrics().equals(full)
    # A new snapshot (here with late rows of an earlier day and a new column, as a
    # correction brings) invalidates the copy: the next process reads it on top.
    late = _rows(range(100, 105), key="eval/loss")
    _night(store, 3, late)
    extended = Store(docs).load_metrics()
    assert extended.num_rows == 35 and "eval/loss" in extended.column_names
    assert extended.equals(_fresh(docs))
    [copy] = list(cache_dir(docs).iterdir())
    assert copy.name.endswith(f"{Store(docs).latest().manifest_sha256}.arrow")  # type: ignore


def test_a_damaged_or_foreign_copy_is_ignored(tmp_path: Path) -> None:
    docs = tmp_path / "c" / "docs"
    store = Store(docs)
    for n in range(2):
        _night(store, n, _rows(range(n * 10, n * 10 + 10)))
    full = Store(docs).load_metrics()
    [copy] = list(cache_dir(docs).iterdir())
    copy.write_bytes(b"not an Arrow file")
    assert Store(docs).load_metrics().equals(full)
    # A copy keyed by a manifest the store does not hold is never read.
    (cache_dir(docs) / "v2-0000.arrow").write_bytes(copy.read_bytes())
    assert Store(docs).load_metrics().equals(full)


def test_an_older_formats_copy_is_not_read_and_is_replaced(tmp_path: Path) -> None:
    docs = tmp_path / "c" / "docs"
    store = Store(docs)
    _night(store, 0, _rows(range(10)))
    full = Store(docs).load_metrics()
    sha = store.latest().manifest_sha256  # type: ignore[union-attr]
    # A v1 copy (zstd Parquet) of the newest manifest, with other rows: never read.
    for p in cache_dir(docs).iterdir():
        p.unlink()
    import pyarrow.parquet as pq

    pq.write_table(full.slice(0, 3), cache_dir(docs) / f"v1-{sha}.parquet")
    assert Store(docs).load_metrics().equals(full)
    assert [p.name for p in cache_dir(docs).iterdir()] == [f"v2-{sha}.arrow"]


def test_one_process_many_nights_writes_no_copy_per_night(tmp_path: Path) -> None:
    docs = tmp_path / "c" / "docs"
    store = Store(docs)
    for n in range(4):
        _night(store, n, _rows(range(n * 10, n * 10 + 10)))
        store.load_metrics()  # as a demo does, night after night
    # Only the first load read from disk (and left a copy); later nights extended the
    # table in memory, so the copy is still the first night's.
    first = store.snapshots()[0].manifest_sha256
    assert [p.name for p in cache_dir(docs).iterdir()] == [f"v2-{first}.arrow"]
    assert store.load_metrics().num_rows == 40
    # keep_compact() (the demo, before its build) leaves a copy of every night's rows,
    # so the next process reads no snapshot's file.
    store.keep_compact()
    newest = store.latest().manifest_sha256  # type: ignore[union-attr]
    assert [p.name for p in cache_dir(docs).iterdir()] == [f"v2-{newest}.arrow"]
    full = store.load_metrics()
    for snap in store.snapshots():  # proof that no snapshot's file is read any more
        (snap.path / "metrics.parquet").write_bytes(b"unreadable")
    assert Store(docs).load_metrics().equals(full)
