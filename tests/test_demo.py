"""`chronicle demo` (chronicle/demo.py): its nights run in a child process of the demo's
executor and its build in the demo's own, so the nights' memory is gone before the build
starts; the child's progress lines and its errors reach the user as the demo's own."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from chronicle.errors import EXIT_USAGE
from chronicle.store import Store
from tests.support.commands import cli, cli_process
from tests.support.processes import left_in_session


@pytest.fixture(scope="module")
def two_days(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("demo") / "d"
    proc = cli_process("demo", "--days", "2", "--out", str(out))
    output, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0, output
    assert "night   2: snapshot 2026-08-22T031700Z, sealed 2026-08-21" in output
    assert "demo chronicle: 2 sealed days, 2 snapshots" in output
    # It says each step while it runs (the build's from each edition's process too), and
    # ends with how to look at the site: served, not opened from disk.
    for step in ("night   1: snapshot", "building the site (en, zh)",
                 "en edition: post-build steps done", "zh edition: post-build steps done"):
        assert step in output, step
    assert output.splitlines()[-1] == (
        f"preview it: chronicle serve --dir {out}, then open http://127.0.0.1:8000/")
    assert left_in_session(proc.pid) == []  # the nights' process and every worker ended
    return out


def test_the_nights_and_the_build_make_a_chronicle_that_verifies(two_days: Path) -> None:
    assert (two_days / "site" / "index.html").is_file()
    assert (two_days / "site" / "zh" / "days" / "2026-08-21.html").is_file()
    assert cli("verify", "--dir", str(two_days)).exit_code == 0
    assert cli("check-site", "--dir", str(two_days)).exit_code == 0


def test_an_error_in_the_nights_is_the_demos_one_message_and_exit_code(
        two_days: Path, tmp_path: Path) -> None:
    # A damaged store stops the next night in the child: the demo says what the snapshot
    # would say, with its exit code, and no traceback of either process.
    out = tmp_path / "d"
    shutil.copytree(two_days, out, symlinks=True)
    first = Store(out / "docs").snapshots()[0]
    manifest = out / "docs" / "data" / first.id / "MANIFEST.json"
    manifest.write_bytes(manifest.read_bytes()[:-20])
    result = cli("demo", "--days", "3", "--out", str(out))
    assert result.exit_code == EXIT_USAGE, result.output
    assert "Traceback" not in result.output
    [line] = [x for x in result.output.splitlines() if x.startswith("error: ")]
    assert f"{first.id}/MANIFEST.json" in line, line
    assert not (out / "docs" / "data" / "2026-08-23T031700Z").exists()
