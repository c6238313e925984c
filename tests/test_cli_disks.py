"""A disk that refuses a write (full, read-only, a file-size limit) ends a command in one
message naming the path, exit 2, with nothing half-written in the store
(documentation/pages/commands.md, "Exit codes"). The disks are real (tests/support/disks.py):
a small tmpfs filled up, a read-only remount, RLIMIT_FSIZE; the kernel refuses, nothing is
faked."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from chronicle.errors import EXIT_USAGE
from tests.support.commands import cli, night, take_nights
from tests.support.config import scaffold_simulated
from tests.support.disks import on_small_disk, tree_digest, with_file_size_limit


@pytest.fixture(scope="module")
def three_nights(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = scaffold_simulated(tmp_path_factory.mktemp("disks") / "c")
    take_nights(root)
    return root


@pytest.fixture
def root(three_nights: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(three_nights, tmp_path / "c", symlinks=True))


def test_a_snapshot_on_a_full_disk_is_one_message_and_writes_nothing(
        root: Path, tmp_path: Path) -> None:
    run = on_small_disk(root, tmp_path / "disk", ["snapshot", "--as-of", night(4)], 40)
    assert run.returncode == EXIT_USAGE, run.output
    assert "Traceback" not in run.output and len(run.output.strip().splitlines()) == 1
    assert "docs/data: the disk is full; no snapshot was written (the store is as it " \
           "was): free space on it, then run the command again" in run.output
    assert run.after == run.before  # not a byte of the store changed
    assert run.data == sorted(p.name for p in (root / "docs" / "data").iterdir())  # no .tmp-


def test_a_build_on_a_full_disk_is_one_message_naming_the_file(
        root: Path, tmp_path: Path) -> None:
    run = on_small_disk(root, tmp_path / "disk", ["build"], 1500)
    assert run.returncode == EXIT_USAGE, run.output
    assert "Traceback" not in run.output, run.output
    [line] = [x for x in run.output.splitlines() if x.startswith("error: ")]
    # The build writes into a staging folder beside the site (documentation/pages/
    # commands.md, "chronicle build"): the file named is there, and neither it nor a
    # half-built site is left behind.
    assert "/c/.site.building-" in line and (
        ": the disk is full; the store and the published site are as they were" in line
        or "No space left" in line), line
    assert run.after == run.before
    assert not [n for n in run.top if n.startswith(".site.") or n == "site"], run.top


def test_a_write_past_the_file_size_limit_is_one_message_and_writes_nothing(
        root: Path) -> None:
    before = tree_digest(root / "docs")
    result = with_file_size_limit(16 << 10, "snapshot", "--dir", str(root), "--as-of", night(4))
    assert result.returncode == EXIT_USAGE, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert f"{root / 'docs' / 'data'}: the file is larger than this process may write " \
           "(ulimit -f); no snapshot was written" in result.stderr
    assert tree_digest(root / "docs") == before
    assert not any(p.name.startswith(".tmp-") for p in (root / "docs" / "data").iterdir())
    assert cli("verify", "--dir", str(root)).exit_code == 0
