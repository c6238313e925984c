"""The executor (chronicle/executor.py): what a command runs beside itself ends with the
command, however it ends. SIGKILLed `chronicle snapshot` runs at several points leave no
process running 4 s later (read from /proc); a command that returns leaves no process and
no environment variable changed."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from chronicle.config import load_config
from chronicle.executor import PARALLEL, SPEEDUPS, ChildGone, Executor, environment
from chronicle.snapshot.take import take_snapshot
from chronicle.store import Store
from chronicle.workers import draw
from tests.support.commands import cli, cli_process, night
from tests.support.config import scaffold_simulated
from tests.support.killpoint import KILLED_EXIT, SNAPSHOT_POINTS
from tests.support.paths import REPO
from tests.support.processes import children, in_session, left_in_session

# A command that starts render workers from its main thread and a child from another
# thread (whose end must not end the child: no kernel signal there, the child watches its
# parent itself), says so, and waits to be killed.
PARENT = """
import sys, threading, time
from chronicle.executor import Executor
from tests.support.processes import sleep_in_child
executor = Executor(cores=2)
executor.render_pool(2)
thread = threading.Thread(target=lambda: executor.start(sleep_in_child, name="sleeper"))
thread.start(); thread.join()
print("started", flush=True)
time.sleep(600)
"""


def test_children_die_with_their_parent_killed_by_sigkill() -> None:
    proc = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(REPO)},
                            start_new_session=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "started\n"
        started = in_session(proc.pid)
        # The parent, two render workers and the child of the other thread, still running
        # (that thread has ended: its child did not go with it).
        assert len(started) == 4, started
        os.kill(proc.pid, signal.SIGKILL)  # the parent alone, no cleanup of any kind
        proc.wait()
        assert left_in_session(proc.pid) == []
    finally:
        if in_session(proc.pid):
            os.killpg(proc.pid, signal.SIGKILL)


def test_closing_the_executor_ends_its_processes_and_folders(tmp_path: Path) -> None:
    from tests.support.processes import sleep_in_child

    before = {p.pid for p in children()}
    folder = tmp_path / "staging"
    folder.mkdir()
    with Executor(cores=2) as executor:
        executor.render_pool(2)
        executor.start(sleep_in_child, name="sleeper")
        executor.remove_on_close(folder)
        assert len({p.pid for p in children()} - before) == 3
    assert {p.pid for p in children()} == before
    assert not folder.exists()
    with pytest.raises(RuntimeError, match="closed"):
        executor.render_pool(1)


def test_a_command_that_fails_ends_its_workers_without_waiting_for_their_jobs() -> None:
    before = {p.pid for p in children()}
    spec = {"mark": "point", "data": {"values": [{"x": 1}]},
            "encoding": {"x": {"field": "x", "type": "quantitative"}}}
    with pytest.raises(ValueError, match="the command failed"), Executor(cores=2) as executor:
        pool = executor.render_pool(2)
        assert pool is not None
        futures = [pool.submit(draw.svg, {**spec, "width": 100 + i}, None) for i in range(40)]
        raise ValueError("the command failed")
    assert {p.pid for p in children()} == before
    assert any(isinstance(f.exception(), ChildGone) for f in futures)  # not all were drawn


def test_speedups_are_named_and_the_parallel_ones_need_two_cores() -> None:
    with pytest.raises(ValueError, match="unknown speed-ups"):
        Executor(without=["turbo"])
    assert all(Executor(cores=2).uses(s) for s in SPEEDUPS)
    assert not any(Executor(cores=1).uses(s) for s in PARALLEL)
    assert Executor(cores=1).uses("engine-cache")  # a cache takes no second core


def test_an_environment_is_set_for_a_block_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "7")
    monkeypatch.delenv("CHRONICLE_TEST_UNSET", raising=False)
    with environment(SOURCE_DATE_EPOCH="1", CHRONICLE_TEST_UNSET="x"):
        assert os.environ["SOURCE_DATE_EPOCH"] == "1"
        assert os.environ["CHRONICLE_TEST_UNSET"] == "x"
    assert os.environ["SOURCE_DATE_EPOCH"] == "7"
    assert "CHRONICLE_TEST_UNSET" not in os.environ


@pytest.fixture(scope="module")
def one_night(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = scaffold_simulated(tmp_path_factory.mktemp("executor") / "c", days=4)
    assert cli("snapshot", "--dir", str(root), "--as-of", night(1)).exit_code == 0
    return root


def test_a_snapshot_in_this_process_leaves_no_process_or_variable(one_night: Path,
                                                                 tmp_path: Path) -> None:
    root = Path(shutil.copytree(one_night, tmp_path / "c"))
    before, environ = {p.pid for p in children()}, dict(os.environ)
    result = take_snapshot(load_config(root), datetime(2026, 8, 22, 3, 17, tzinfo=UTC))
    assert result.sealed == ("2026-08-21",)
    assert {p.pid for p in children()} == before
    assert dict(os.environ) == environ


def _sealed(root: Path) -> dict[str, bytes]:
    docs = root / "docs"
    return {str(p.relative_to(docs)): p.read_bytes() for sub in ("data", "days")
            for p in sorted((docs / sub).rglob("*")) if p.is_file()}


def test_a_snapshot_drawing_with_render_workers_seals_the_same_bytes(
        one_night: Path, tmp_path: Path) -> None:
    # `seal-workers` (the demo's nights): the sealed charts drawn by the executor's render
    # workers are the bytes this process draws, and the workers end with the executor.
    alone = Path(shutil.copytree(one_night, tmp_path / "alone"))
    drawn = Path(shutil.copytree(one_night, tmp_path / "drawn"))
    as_of = datetime(2026, 8, 22, 3, 17, tzinfo=UTC)
    take_snapshot(load_config(alone), as_of)
    before = {p.pid for p in children()}
    with Executor(cores=2) as executor:
        result = take_snapshot(load_config(drawn), as_of, executor=executor)
        assert len({p.pid for p in children()} - before) == 2  # one worker per core
    assert result.sealed == ("2026-08-21",)
    assert {p.pid for p in children()} == before
    assert _sealed(drawn) == _sealed(alone)
    assert any(name.endswith(".svg") for name in _sealed(drawn))
    # Turned off (or on one core), the snapshot draws in its own process.
    with Executor(cores=2, without=["seal-workers"]) as executor:
        take_snapshot(load_config(Path(shutil.copytree(one_night, tmp_path / "off"))), as_of,
                      executor=executor)
        assert {p.pid for p in children()} == before


@pytest.mark.slow
@pytest.mark.parametrize("point", SNAPSHOT_POINTS)
def test_a_snapshot_killed_alone_leaves_no_process_and_the_next_one_works(
        one_night: Path, tmp_path: Path, point: str) -> None:
    root = Path(shutil.copytree(one_night, tmp_path / "c"))
    proc = cli_process("snapshot", "--dir", str(root), "--as-of", night(2),
                       kill_at=point, alone=True)
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == KILLED_EXIT, out
    assert left_in_session(proc.pid) == []
    # Whatever it left is finished or ignored; the night is taken (again) and verifies.
    if not (root / "docs" / "data" / "2026-08-22T031700Z").is_dir():
        assert cli("snapshot", "--dir", str(root), "--as-of", night(2)).exit_code == 0
    assert cli("verify", "--dir", str(root)).exit_code == 0
    assert [d.isoformat() for d in Store(root / "docs").sealed_days()] == [
        "2026-08-20", "2026-08-21"]
