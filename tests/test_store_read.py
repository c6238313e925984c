"""A damaged store file (store/read.py) stops `build` and `snapshot` with one message that
names the file and the fix, never a traceback, and writes nothing."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

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
    # An earlier snapshot's records: read (for when each failure was first seen), not kept.
    "data/2026-08-21T031700Z/failures.json": ("failure records file",
                                              lambda p: p.write_text('[{"source": "x"}]')),
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
        # Who sealed each day and its edition, asked of the kept store before (its index
        # of sealed files is made again with the snapshot list).
        {d.isoformat(): (s.id, store.sealed_day(d), store.edition_sealer(d, "zh"),
                         store.sealed_bytes(f"days/{d.isoformat()}.md"))
         for d, s in store.sealed_days().items()},
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
    assert len(after[7]) == len(before[7]) + 1  # type: ignore[arg-type]  # the day it sealed
    # and each snapshot's answers are that snapshot's own file
    for snap, runs in store.run_history():
        raw = json.loads((snap.path / "runs.json").read_text())
        assert runs == [RunRecord.from_json(r) for r in raw]
    for states in store.thread_history().values():
        for snap, thread in states:
            raw = json.loads((snap.path / "threads.json").read_text())
            assert thread in [Thread.from_json(t) for t in raw]


def _rewrite_parquet(path: Path) -> None:
    """A well-formed metrics file with every loss tripled (what a hand or a tool that
    "fixes" the data would leave)."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    col = table.schema.get_field_index("train/loss")
    pq.write_table(table.set_column(col, "train/loss", pc.multiply(table["train/loss"], 3.0)),
                   path)


def _edit_json(edit: Callable[[Any], None]) -> Callable[[Path], None]:
    def apply(path: Path) -> None:
        doc = json.loads(path.read_bytes())
        edit(doc)
        path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    return apply


# Well-formed files whose bytes are not the ones their manifest recorded: every reader
# parses them without complaint, so only the check against the chain can refuse them.
ALTERED = {
    "data/2026-08-21T031700Z/metrics.parquet": _rewrite_parquet,
    "data/2026-08-22T031700Z/threads.json": _edit_json(lambda d: d[0].update(title="edited")),
    "data/2026-08-22T031700Z/runs.json": _edit_json(lambda d: d[0].update(state="crashed")),
    "days/2026-08-21.json": _edit_json(lambda d: d["loss"].update(train_last=9.0)),
    # An earlier manifest, re-serialised with one more key: its sha256 is no longer the
    # one the next manifest's `previous` names.
    "data/2026-08-21T031700Z/MANIFEST.json": _edit_json(lambda d: d.update(note="x")),
}


@pytest.mark.parametrize("rel", sorted(ALTERED))
def test_a_snapshot_refuses_a_file_its_manifest_did_not_record(
        two_nights: Path, tmp_path: Path, rel: str) -> None:
    root = Path(shutil.copytree(two_nights, tmp_path / "c"))
    ALTERED[rel](root / "docs" / rel)
    before = sorted(p.relative_to(root).as_posix() for p in (root / "docs").rglob("*"))
    result = cli("snapshot", "--dir", str(root), "--as-of", night(3))
    assert result.exit_code == EXIT_USAGE, result.output
    assert "Traceback" not in result.output
    assert f"{root / 'docs' / rel}: " in result.output, result.output
    assert "altered: its sha256 is" in result.output or "altered: its size is" in result.output
    assert f"git checkout -- {root / 'docs' / rel}" in result.output
    # nothing written: no snapshot, no sealed day
    assert sorted(p.relative_to(root).as_posix() for p in (root / "docs").rglob("*")) == before


def test_a_snapshot_refuses_a_chain_with_a_snapshot_missing(two_nights: Path,
                                                           tmp_path: Path) -> None:
    root = Path(shutil.copytree(two_nights, tmp_path / "c"))
    shutil.rmtree(root / "docs" / "data" / "2026-08-21T031700Z")
    result = cli("snapshot", "--dir", str(root), "--as-of", night(3))
    assert result.exit_code == EXIT_USAGE, result.output
    assert "2026-08-22T031700Z/MANIFEST.json: names the predecessor 2026-08-21T031700Z" \
        in result.output
    assert len(list((root / "docs" / "data").iterdir())) == 1


def test_a_view_before_a_snapshot_sees_only_what_that_snapshot_saw(two_nights: Path) -> None:
    store = Store(two_nights / "docs")
    first, second = store.snapshots()
    view = store.before(second.id)
    assert [s.id for s in view.snapshots()] == [first.id]
    assert {d.isoformat() for d in view.sealed_days()} == set(first.sealed)
    assert view.load_metrics().num_rows < store.load_metrics().num_rows
    [day] = second.sealed
    assert view.sealed_day(datetime.fromisoformat(day).date()) is None
    assert store.sealed_day(datetime.fromisoformat(day).date()) is not None


def test_earlier_failure_records_are_read_when_asked_for_and_not_kept(two_nights: Path
                                                                      ) -> None:
    # Each failures.json holds every record known by then: a long run's add up, so only
    # the newest snapshot's are kept; the answers are those of reading every file whole.
    store = Store(two_nights / "docs")
    first, newest = store.snapshots()
    whole = {}
    for snap in (first, newest):
        for record in json.loads((snap.path / "failures.json").read_bytes()):
            whole.setdefault(record["id"], snap.taken_at)
    assert whole and store.failures_first_seen() == whole
    assert [f.id for f in store.failures_at(first)] == [
        r["id"] for r in json.loads((first.path / "failures.json").read_bytes())]
    assert store.load_failures() == store.failures_at(newest)
    # What is kept of an earlier one is its ids (when each record was first seen).
    kept = [key for key in store._shared.read if "failures.json" in key and key[-1] != "ids"]
    assert kept == [(newest.id, "failures.json")], kept


# A forger who can write the repository rewrites the chain too: every sha256 holds, and
# the file holds what chronicle never writes. Each is named (exit 2), never a traceback.
def _deep(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def _text_loss(path: Path) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    col = table.schema.get_field_index("train/loss")
    loss = pa.array([str(v) for v in table["train/loss"].to_pylist()], pa.string())
    sink = pa.BufferOutputStream()
    pq.write_table(table.set_column(col, "train/loss", loss), sink)
    return bytes(sink.getvalue().to_pybytes())


def _json_with(path: Path, edit: Callable[[Any], None]) -> bytes:
    doc = json.loads(path.read_bytes())
    edit(doc)
    return json.dumps(doc).encode()


FORGED: dict[str, tuple[str, str, Callable[[Path], bytes]]] = {
    "deep threads": ("threads.json", "nested deeper than 64 levels",
                     lambda p: _deep(100_000)),
    "threads 900 deep": ("threads.json", "nested deeper than 64 levels",
                         lambda p: b'[{"number": 1, "x": ' + _deep(900) + b"}]"),
    "text loss column": ("metrics.parquet", "column 'train/loss' is string, not double",
                         _text_loss),
    "a title that is a number": ("threads.json", "title: expected text",
                                 lambda p: _json_with(p, lambda d: d[0].update(title=5))),
    "labels that are an object": ("threads.json", "labels: expected a list of text",
                                  lambda p: _json_with(p, lambda d: d[0].update(labels={}))),
    "a config that is a list": ("runs.json", "config: expected an object",
                                lambda p: _json_with(p, lambda d: d[0].update(config=[1]))),
    "evidence that is text": ("failures.json", "evidence: expected a list of text",
                              lambda p: _json_with(p, lambda d: d[0].update(evidence="x"))),
}


@pytest.mark.parametrize("case", sorted(FORGED))
def test_a_forged_store_file_with_a_sound_chain_is_named_not_a_traceback(
        two_nights: Path, tmp_path: Path, case: str) -> None:
    from tests.support.chain import rewrite_snapshot_file

    root = Path(shutil.copytree(two_nights, tmp_path / "c"))
    name, said, forge = FORGED[case]
    sid = "2026-08-22T031700Z"
    path = root / "docs/data" / sid / name
    rewrite_snapshot_file(root / "docs", sid, name, forge(path))
    assert cli("verify", "--dir", str(root)).exit_code == 0  # every hash holds
    # runs.json and failures.json are fetched anew by a simulated snapshot: build reads them.
    commands = [["verify", "--recompute"], ["build"]]
    if name in ("threads.json", "metrics.parquet"):
        commands.append(["snapshot", "--as-of", night(3)])
    for command in commands:
        result = cli(command[0], "--dir", str(root), *command[1:])
        assert result.exit_code == EXIT_USAGE, (command, result.output)
        assert isinstance(result.exception, SystemExit), (command, result.exception)
        assert f"{path}: " in result.output and said in result.output, (command, result.output)
        assert f"git checkout -- {path}" in result.output
