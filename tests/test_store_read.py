"""A damaged store file (store/read.py) stops `build` and `snapshot` with one message that
names the file and the fix, never a traceback, and writes nothing."""

from __future__ import annotations

import json
import shutil
from datetime import datetime
from pathlib import Path

import pytest

from chronicle.config import load_config
from chronicle.errors import EXIT_USAGE
from chronicle.models import RunRecord, Thread
from chronicle.snapshot.take import take_snapshot
from chronicle.store import Store
from tests.support.commands import cli, night
from tests.support.config import scaffold_simulated


@pytest.fixture(scope="module")
def two_nights(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = scaffold_simulated(tmp_path_factory.mktemp("read") / "c")
    for n in (1, 2):
        assert cli("snapshot", "--dir", str(root), "--as-of", night(n)).exit_code == 0
    return root


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


DAMAGES = {
    "data/2026-08-21T031700Z/metrics.parquet": ("metrics file", _truncate),
    "data/2026-08-22T031700Z/threads.json": ("issue threads file", _truncate),
    "data/2026-08-22T031700Z/failures.json": ("failure records file",
                                              lambda p: p.write_text("[{]")),
    "data/2026-08-22T031700Z/runs.json": ("run records file", lambda p: p.write_text('{"a": 1}')),
    "days/2026-08-21.json": ("sealed day JSON", lambda p: p.write_bytes(b"\xff\xfe not json")),
}


# A snapshot fetches the run records and failure records anew (the simulated source):
# it reads neither stored file; `build` reads every one of them.
CASES = [("build", rel) for rel in sorted(DAMAGES)] + [
    ("snapshot", rel) for rel in sorted(DAMAGES) if not rel.endswith(("runs.json",
                                                                      "failures.json"))]


@pytest.mark.parametrize(("command", "rel"), CASES)
def test_a_damaged_file_is_named_with_its_fix(two_nights: Path, tmp_path: Path, rel: str,
                                              command: str) -> None:
    root = Path(shutil.copytree(two_nights, tmp_path / "c"))
    what, damage = DAMAGES[rel]
    damage(root / "docs" / rel)
    args = ["--as-of", night(3)] if command == "snapshot" else []
    data_before = sorted(p.name for p in (root / "docs" / "data").iterdir())
    result = cli(command, "--dir", str(root), *args)
    assert result.exit_code == EXIT_USAGE, result.output
    assert "Traceback" not in result.output
    assert f"{root / 'docs' / rel}: {what} is damaged" in result.output, result.output
    assert f"git checkout -- {root / 'docs' / rel}" in result.output
    assert sorted(p.name for p in (root / "docs" / "data").iterdir()) == data_before


def _answers(store: Store) -> tuple[object, ...]:
    return (
        [s.id for s in store.snapshots()],
        {n: [(s.id, t) for s, t in states] for n, states in store.thread_history().items()},
        [(s.id, runs) for s, runs in store.run_history()],
        [(s.id, pulls) for s, pulls in store.pull_history()],
        [(s.id, rows) for s, rows in store.rows_with("train/loss")],
        store.last_steps(),
        len(store.stored_keys()),
    )


def test_one_store_kept_across_nights_reads_what_a_fresh_one_reads(
        two_nights: Path, tmp_path: Path) -> None:
    # A Store keeps what it read from complete snapshots across refresh() (the demo
    # appends a snapshot a night with one Store): the next night's data must show up.
    root = Path(shutil.copytree(two_nights, tmp_path / "c"))
    config = load_config(root)
    store = Store(config.docs_dir)
    before = _answers(store)
    take_snapshot(config, datetime.fromisoformat(night(3)), store=store)
    after = _answers(store)
    # repr: the stored metrics hold NaNs, which never compare equal
    assert repr(after) == repr(_answers(Store(config.docs_dir)))
    assert after != before
    assert len(after[0]) == len(before[0]) + 1  # type: ignore[arg-type]
    assert after[5] != before[5]  # the new night's rows moved the last steps
    # and each snapshot's answers are that snapshot's own file
    for snap, runs in store.run_history():
        raw = json.loads((snap.path / "runs.json").read_text())
        assert runs == [RunRecord.from_json(r) for r in raw]
    for states in store.thread_history().values():
        for snap, thread in states:
            raw = json.loads((snap.path / "threads.json").read_text())
            assert thread in [Thread.from_json(t) for t in raw]
