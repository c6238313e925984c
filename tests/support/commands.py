"""The chronicle CLI, run in this process or in its own (killable) one."""

from __future__ import annotations

import os
import subprocess
import sys

from click.testing import CliRunner, Result

from chronicle.cli import main
from tests.support.paths import REPO


def cli(*args: str) -> Result:
    """Run the chronicle CLI in this process."""
    return CliRunner().invoke(main, list(args))


def night(n: int) -> str:
    """The --as-of of night `n` of a chronicle starting 2026-08-20 (03:17 UTC)."""
    return f"2026-08-{20 + n:02d}T03:17:00Z"


def take_nights(root: object, nights: int = 3) -> None:
    """Take nights 1..`nights` of the chronicle at `root` with `chronicle snapshot`."""
    for n in range(1, nights + 1):
        result = cli("snapshot", "--dir", str(root), "--as-of", night(n))
        assert result.exit_code == 0, result.output


def cli_process(*args: str, kill_at: str | None = None, alone: bool = False,
                env: dict[str, str] | None = None, **kw: object) -> subprocess.Popen[str]:
    """Start the chronicle CLI in its own process group and session (optionally killed at a
    point of a store write or a build, with its group or `alone`, see
    tests/support/killpoint.py)."""
    prefix = ["-m", "tests.support.killpoint", kill_at, *(["--alone"] if alone else []), "--"] \
        if kill_at else ["-m", "chronicle.cli"]
    full_env = {**os.environ, **(env or {}), "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, *prefix, *args], env=full_env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True, **kw)  # type: ignore[call-overload]
