"""A damaged store file (store/read.py) stops `build` and `snapshot` with one message that
names the file and the fix, never a traceback, and writes nothing."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from chronicle.errors import EXIT_USAGE
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
