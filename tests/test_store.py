from __future__ import annotations

import json
import math
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from chronicle.errors import StoreError
from chronicle.models import Comment, FailureRecord, RunRecord, SourceStatus, Thread
from chronicle.store import (
    MANIFEST,
    SnapshotInfo,
    Store,
    snapshot_id,
    verify_store,
    write_snapshot,
)

T0 = datetime(2026, 8, 21, 3, 17, tzinfo=UTC)
OK = (SourceStatus("wandb", True), SourceStatus("github", True))


def _rows(run: str, steps: range, t0: float = 1787192041.0) -> list[dict]:
    return [
        {"run": run, "step": s, "timestamp": t0 + s * 19.0, "train/loss": 3.0 - s * 1e-4}
        for s in steps
    ]


def _thread(n: int, body: str, updated: datetime) -> Thread:
    c = Comment(10 * n, "alice", body, T0 - timedelta(days=1), updated)
    return Thread(
        n,
        f"issue {n}",
        "body",
        "open",
        ("hero-run",),
        "bob",
        T0 - timedelta(days=2),
        updated,
        None,
        f"https://x/{n}",
        (c,),
    )


def _write(
    store: Store,
    when: datetime,
    rows: list[dict] | None,
    sealed: dict | None = None,
    statuses: tuple[SourceStatus, ...] = OK,
) -> None:
    run = RunRecord("r1", "r1", "running", T0 - timedelta(days=2), when)
    write_snapshot(store,
        when,
        rows,
        [run],
        [_thread(1, "hi", when)],
        [FailureRecord("gap-r1-1", "gap", T0, T0 + timedelta(hours=1), "x")],
        statuses,
        sealed=sealed,
    )


def test_snapshots_chain_and_verify_clean(tmp_path: Path) -> None:
    store = Store(tmp_path / "docs")
    _write(store, T0, _rows("r1", range(0, 100, 10)))
    _write(
        store,
        T0 + timedelta(days=1),
        _rows("r1", range(100, 200, 10)),
        sealed={
            "2026-08-21": {"days/2026-08-21.md": b"# day\n", "days/2026-08-21/x.svg": b"<svg/>"}
        },
    )
    snaps = store.snapshots()
    assert [s.id for s in snaps] == [snapshot_id(T0), snapshot_id(T0 + timedelta(days=1))]
    assert snaps[1].manifest["previous"] == {
        "snapshot": snaps[0].id,
        "sha256": snaps[0].manifest_sha256,
    }
    assert verify_store(store) == []
    assert store.load_metrics().num_rows == 20
    assert store.last_steps() == {"r1": 190}
    assert list(store.sealed_days()) == [datetime(2026, 8, 21, tzinfo=UTC).date()]
    assert (tmp_path / "docs/days/2026-08-21.md").read_bytes() == b"# day\n"
    assert store.thread_history()[1][0][1].comments[0].body == "hi"


def test_nan_is_data_and_missing_is_null(tmp_path: Path) -> None:
    store = Store(tmp_path / "docs")
    rows = _rows("r1", range(0, 30, 10))
    rows[1]["train/loss"] = math.nan
    del rows[2]["train/loss"]
    _write(store, T0, rows)
    col = store.load_metrics().column("train/loss")
    assert col.null_count == 1
    assert math.isnan(col[1].as_py())


def test_rows_seen_by_a_snapshot_leave_out_what_later_ones_backfilled(tmp_path: Path) -> None:
    # W&B answered again after an outage: the third snapshot stores rows logged before
    # the second was taken. What the second saw must not change because of them.
    store = Store(tmp_path / "docs")
    t0 = T0.timestamp() - 3600
    _write(store, T0, _rows("r1", range(0, 50, 10), t0))
    _write(store, T0 + timedelta(days=1), _rows("r1", range(50, 60, 10), t0))
    _write(store, T0 + timedelta(days=2), _rows("r1", range(60, 100, 10), t0)
           + _rows("r2", range(0, 30, 10), t0 + 86400 * 2.5))
    first, second, third = store.snapshots()
    cutoff = second.taken_at.timestamp()

    def steps(snap: SnapshotInfo, upto: float) -> list[tuple[str, int]]:
        table = store.metrics_seen_by(snap, upto)
        return list(zip(table["run"].to_pylist(), table["step"].to_pylist(), strict=True))

    assert steps(second, cutoff) == [("r1", s) for s in range(0, 60, 10)]
    assert steps(first, cutoff) == [("r1", s) for s in range(0, 50, 10)]
    # Seen by the newest, by time alone: every row logged by then, the backfill included.
    assert steps(third, cutoff) == [("r1", s) for s in range(0, 100, 10)]
    # Nothing later is that old (the fast path): the same as filtering every row.
    assert steps(third, third.taken_at.timestamp() + 1e6) == (
        [("r1", s) for s in range(0, 100, 10)] + [("r2", s) for s in range(0, 30, 10)])
    assert steps(second, t0 - 1) == []


@pytest.mark.parametrize("target", ["metrics.parquet", "threads.json", MANIFEST])
def test_one_flipped_byte_is_named_by_verify(tmp_path: Path, target: str) -> None:
    store = Store(tmp_path / "docs")
    _write(store, T0, _rows("r1", range(0, 100, 10)))
    _write(store, T0 + timedelta(days=1), _rows("r1", range(100, 200, 10)))
    path = store.snapshots()[0].path / target
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    problems = verify_store(Store(tmp_path / "docs"))
    assert problems, "a flipped byte must be detected"
    assert any(target in p.path for p in problems)


def test_sealed_page_alteration_and_stray_file(tmp_path: Path) -> None:
    store = Store(tmp_path / "docs")
    _write(store, T0, [], sealed={"2026-08-20": {"days/2026-08-20.md": b"# sealed\n"}})
    (tmp_path / "docs/days/2026-08-20.md").write_bytes(b"# Sealed\n")
    (tmp_path / "docs/days/2026-08-21.md").write_bytes(b"# sneaked in\n")
    problems = {p.path: p.message for p in verify_store(Store(tmp_path / "docs"))}
    assert "altered" in problems["docs/days/2026-08-20.md"]
    assert "not sealed" in problems["docs/days/2026-08-21.md"]


def test_deleted_middle_snapshot_breaks_the_chain(tmp_path: Path) -> None:
    store = Store(tmp_path / "docs")
    for i in range(3):
        _write(store, T0 + timedelta(days=i), _rows("r1", range(i * 100, i * 100 + 50, 10)))
    shutil.rmtree(store.snapshots()[1].path)
    problems = verify_store(Store(tmp_path / "docs"))
    assert any("chain broken" in p.message for p in problems)


def test_refuses_to_rewrite_or_go_back_and_leaves_store_unchanged(tmp_path: Path) -> None:
    store = Store(tmp_path / "docs")
    _write(
        store,
        T0,
        _rows("r1", range(0, 50, 10)),
        sealed={"2026-08-20": {"days/2026-08-20.md": b"x"}},
    )
    before = sorted((p, p.read_bytes()) for p in (tmp_path / "docs").rglob("*") if p.is_file())
    with pytest.raises(StoreError, match="not after the newest snapshot"):
        _write(store, T0 - timedelta(hours=1), [])
    with pytest.raises(StoreError, match="already exists"):
        _write(store, T0, [])
    with pytest.raises(StoreError, match="sealed"):
        _write(
            store, T0 + timedelta(days=1), [], sealed={"2026-08-20": {"days/2026-08-20.md": b"y"}}
        )
    after = sorted((p, p.read_bytes()) for p in (tmp_path / "docs").rglob("*") if p.is_file())
    assert before == after


def test_failed_source_writes_no_file_and_keeps_previous_data(tmp_path: Path) -> None:
    store = Store(tmp_path / "docs")
    _write(store, T0, _rows("r1", range(0, 50, 10)))
    failed = (SourceStatus("wandb", False, error="wandb: 500"), SourceStatus("github", True))
    write_snapshot(store, T0 + timedelta(days=1), None, None, [], [], failed)
    snap = store.latest()
    assert snap is not None and snap.degraded
    assert "metrics.parquet" not in snap.files and "runs.json" not in snap.files
    assert snap.manifest["sources"]["wandb"] == {"status": "failed", "error": "wandb: 500"}
    assert store.load_metrics().num_rows == 5
    assert [r.id for r in store.load_runs()] == ["r1"]
    assert verify_store(store) == []


def test_interrupted_write_leaves_no_snapshot(tmp_path: Path) -> None:
    store = Store(tmp_path / "docs")
    _write(store, T0, _rows("r1", range(0, 50, 10)))

    class Boom(Exception):
        pass

    class BadRun(RunRecord):
        def to_json(self) -> dict:
            raise Boom

    with pytest.raises(Boom):
        write_snapshot(store,
            T0 + timedelta(days=1), [], [BadRun("r", "r", "x", T0, None)], [], [], OK
        )
    assert len(Store(tmp_path / "docs").snapshots()) == 1
    assert not [p for p in (tmp_path / "docs/data").iterdir() if p.name.startswith(".")]
    assert verify_store(Store(tmp_path / "docs")) == []


def test_manifest_is_canonical_json(tmp_path: Path) -> None:
    store = Store(tmp_path / "docs")
    _write(store, T0, _rows("r1", range(0, 50, 10)))
    manifest = json.loads((store.snapshots()[0].path / MANIFEST).read_text())
    assert manifest["format"] == "chronicle-manifest/1"
    assert set(manifest["files"]) == {
        "metrics.parquet",
        "runs.json",
        "threads.json",
        "failures.json",
    }
    assert all(len(v["sha256"]) == 64 for v in manifest["files"].values())
