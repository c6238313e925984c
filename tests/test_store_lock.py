"""One process at a time on a store (store/lock.py), through the CLI: a second command
exits 2 naming the holder; the lock goes with its holder however it ends (SIGKILL too)."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from chronicle.errors import EXIT_USAGE
from tests.support.commands import cli, night
from tests.support.config import scaffold_simulated
from tests.support.paths import REPO

HOLD = """
import sys, time
from pathlib import Path
from chronicle.store import Store, locked
with locked(Store(Path(sys.argv[1]) / "docs"), "snapshot"):
    print("held", flush=True)
    time.sleep(120)
"""


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return scaffold_simulated(tmp_path / "c")


def _holder(root: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(root)], text=True,
                            stdout=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.stdout is not None and proc.stdout.readline() == "held\n"
    return proc


def test_a_second_process_exits_2_naming_the_holder_until_it_dies(root: Path) -> None:
    holder = _holder(root)
    try:
        for command in (["snapshot", "--as-of", night(1)], ["build"], ["verify"]):
            result = cli(*command, "--dir", str(root))
            assert result.exit_code == EXIT_USAGE, result.output
            said = re.search(r"the store is locked by `chronicle snapshot` \(pid (\d+) on host "
                             r"(\S+), since (\S+)\)", result.output)
            assert said, result.output
            assert int(said.group(1)) == holder.pid and said.group(2) == socket.gethostname()
            assert said.group(3).startswith("20") and said.group(3).endswith("Z")
        assert list((root / "docs" / "data").iterdir()) == []  # nothing was written
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    # The kernel released the lock with its holder: no stale lock to clean up by hand.
    assert json.loads((root / ".chronicle.lock").read_text())["pid"] == holder.pid
    result = cli("snapshot", "--dir", str(root), "--as-of", night(1))
    assert result.exit_code == 0, result.output
    assert cli("verify", "--dir", str(root)).exit_code == 0


def test_the_lock_is_released_after_an_error(root: Path) -> None:
    assert cli("snapshot", "--dir", str(root), "--as-of", "1999-01-01T00:00:00Z").exit_code == 2
    assert (root / ".chronicle.lock").read_text() == ""  # released: nobody to name
    assert cli("snapshot", "--dir", str(root), "--as-of", night(1)).exit_code == 0
    assert (root / ".chronicle.lock").read_text() == ""
    assert ".chronicle.lock" in (root / ".gitignore").read_text()


def test_bad_input_is_refused_before_the_store_is_locked(root: Path) -> None:
    (root / "failures.yml").write_text("- id: x\n  what: [unclosed\n")
    assert cli("snapshot", "--dir", str(root), "--as-of", night(1)).exit_code == 2
    assert not (root / ".chronicle.lock").exists()
