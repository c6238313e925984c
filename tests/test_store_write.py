"""Atomic sealing (store/write.py): a snapshot and the days it seals commit with one rename.
A `chronicle snapshot` SIGKILLed at each point of the write leaves a store that the next
command (any of them) finishes or cleans: `verify` passes, `build` builds, nothing is lost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chronicle.store import sha256_file
from tests.support.commands import cli, cli_process, night
from tests.support.config import scaffold_simulated
from tests.support.killpoint import KILLED_EXIT


def _killed(root: Path, point: str, n: int) -> None:
    proc = cli_process("snapshot", "--dir", str(root), "--as-of", night(n), kill_at=point)
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == KILLED_EXIT, out


@pytest.mark.parametrize("command", ["verify", "build", "snapshot"])
def test_killed_after_the_commit_the_next_command_publishes_the_sealed_days(
        tmp_path: Path, command: str) -> None:
    root = scaffold_simulated(tmp_path / "c")
    assert cli("snapshot", "--dir", str(root), "--as-of", night(1)).exit_code == 0
    _killed(root, "publish", 2)
    snap = root / "docs" / "data" / "2026-08-22T031700Z"
    assert (snap / ".sealed" / "days" / "2026-08-21.md").is_file()
    assert not (root / "docs" / "days" / "2026-08-21.md").exists()

    args = ["--as-of", night(3)] if command == "snapshot" else []
    result = cli(command, "--dir", str(root), *args)
    assert result.exit_code == 0, result.output
    if command != "build":
        assert ("finished an interrupted snapshot: published the days sealed by "
                "2026-08-22T031700Z") in result.output
    assert not (snap / ".sealed").exists()
    sealed = json.loads((snap / "MANIFEST.json").read_text())["sealed"]["2026-08-21"]
    for rel, meta in sealed.items():
        assert sha256_file(root / "docs" / rel) == meta["sha256"], rel
    verify = cli("verify", "--dir", str(root))
    assert verify.exit_code == 0, verify.output


@pytest.mark.parametrize("point", ["stage", "commit"])
def test_killed_before_the_commit_nothing_is_sealed_and_the_night_can_rerun(
        tmp_path: Path, point: str) -> None:
    root = scaffold_simulated(tmp_path / "c")
    assert cli("snapshot", "--dir", str(root), "--as-of", night(1)).exit_code == 0
    before = sorted(p for p in (root / "docs").rglob("*") if p.is_file())
    _killed(root, point, 2)
    tmp = root / "docs" / "data" / ".tmp-2026-08-22T031700Z"
    assert tmp.is_dir() and (tmp / "metrics.parquet").is_file()
    assert not (root / "docs" / "days" / "2026-08-21.md").exists()

    verify = cli("verify", "--dir", str(root))
    assert verify.exit_code == 0, verify.output
    assert "removed .tmp-2026-08-22T031700Z" in verify.output
    assert sorted(p for p in (root / "docs").rglob("*") if p.is_file()) == before
    rerun = cli("snapshot", "--dir", str(root), "--as-of", night(2))
    assert rerun.exit_code == 0 and "sealed: 2026-08-21" in rerun.output, rerun.output
    assert cli("build", "--dir", str(root)).exit_code == 0
