"""One process at a time on a store (store/lock.py), through the CLI: a second command
exits 2 naming the holder; the lock goes with its holder however it ends (SIGKILL too).
The lock is opened as a file: a link, folder, FIFO or hard link in its place is refused
(exit 2 naming it), never followed or truncated; so is a link or FIFO in the store. A
user who cannot write the chronicle (another account, a read-only mount) still verifies."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from chronicle.errors import EXIT_USAGE
from tests.support.commands import cli, night
from tests.support.config import scaffold_simulated
from tests.support.disks import as_reader, on_small_disk, reader_of, tree_digest
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


# ---- the lock is opened as a file (chronicle/files/nofollow.py) --------------------------------


@pytest.fixture(scope="module")
def one_night(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A chronicle with one sealed day (copied by each test)."""
    root = scaffold_simulated(tmp_path_factory.mktemp("lock") / "c")
    assert cli("snapshot", "--dir", str(root), "--as-of", night(1)).exit_code == 0
    (root / ".chronicle.lock").unlink()
    return root


@pytest.fixture
def sealed(one_night: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(one_night, tmp_path / "c", symlinks=True))


SEALED_PAGE = "docs/days/2026-08-20.md"


def _plant(root: Path, what: str, outside: Path) -> None:
    lock = root / ".chronicle.lock"
    if what == "a link to a sealed page":
        lock.symlink_to(root / SEALED_PAGE)
    elif what == "a dangling link":
        lock.symlink_to(outside)
    elif what == "a folder":
        lock.mkdir()
    elif what == "a FIFO":
        os.mkfifo(lock)
    elif what == "a hard link to a sealed page":
        os.link(root / SEALED_PAGE, lock)


@pytest.mark.parametrize("what", ["a link to a sealed page", "a dangling link", "a folder",
                                  "a FIFO", "a hard link to a sealed page"])
@pytest.mark.parametrize("command", [["verify"], ["snapshot", "--as-of", night(2)],
                                     ["build"]], ids=lambda c: c[0])
def test_a_lock_that_is_not_a_plain_file_is_refused_and_nothing_is_touched(
        sealed: Path, tmp_path: Path, what: str, command: list[str]) -> None:
    outside = tmp_path / "created-through-the-link"
    _plant(sealed, what, outside)
    page = (sealed / SEALED_PAGE).read_bytes()
    before = tree_digest(sealed / "docs")
    result = cli(*command, "--dir", str(sealed))
    assert result.exit_code == EXIT_USAGE, result.output
    assert isinstance(result.exception, SystemExit)  # a message, never a traceback
    shown = {"a link to a sealed page": "a symbolic link", "a dangling link": "a symbolic link",
             "a FIFO": "a FIFO (named pipe)",
             "a hard link to a sealed page": "a file with another name (a hard link)"
             }.get(what, what)
    assert f"{sealed / '.chronicle.lock'}: {shown}, where chronicle expects a regular file" \
        in result.output
    assert (sealed / SEALED_PAGE).read_bytes() == page  # never truncated through the link
    assert not outside.exists()  # a dangling link made nothing where it points
    assert tree_digest(sealed / "docs") == before


def test_a_link_or_fifo_in_the_store_stops_a_build_and_a_snapshot_and_verify_names_it(
        sealed: Path) -> None:
    days = sealed / "docs" / "days"
    (days / "2026-08-21.md").symlink_to("/etc/hostname")
    for command in (["build"], ["snapshot", "--as-of", night(2)]):
        result = cli(*command, "--dir", str(sealed))
        assert result.exit_code == EXIT_USAGE, result.output
        assert f"{days / '2026-08-21.md'}: a symbolic link" in result.output
    assert not (sealed / "site" / "days" / "2026-08-21.md").exists()
    assert [p.name for p in (sealed / "docs" / "data").iterdir()] == ["2026-08-21T031700Z"]
    result = cli("verify", "--dir", str(sealed))
    assert result.exit_code == 1 and "docs/days/2026-08-21.md: a symlink" in result.output
    (days / "2026-08-21.md").unlink()
    os.mkfifo(sealed / "docs" / "assets" / "pipe")
    result = cli("build", "--dir", str(sealed))
    assert result.exit_code == EXIT_USAGE and "assets/pipe: a FIFO (named pipe)" in \
        result.output
    (sealed / "docs" / "assets" / "pipe").unlink()
    # A link that stays inside the chronicle, outside the store, is the chronicle's own.
    (sealed / "brand.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg'/>")
    (sealed / "docs" / "assets" / "brand.svg").symlink_to("../../brand.svg")
    assert cli("build", "--dir", str(sealed)).exit_code == 0
    (sealed / "docs" / "assets" / "brand.svg").unlink()
    (sealed / "docs" / "assets" / "hostname").symlink_to("/etc/hostname")
    result = cli("build", "--dir", str(sealed))
    assert result.exit_code == EXIT_USAGE and "assets/hostname: a symbolic link" in \
        result.output


# ---- verify by a user who cannot write the chronicle --------------------------------------


def test_verify_works_for_a_reader_who_cannot_write_the_chronicle(sealed: Path) -> None:
    # With a lock file to open (any earlier command leaves one): a shared lock, no note.
    assert cli("verify", "--dir", str(sealed)).exit_code == 0
    with reader_of(sealed) as prefix:
        result = as_reader(prefix, "verify", "--dir", str(sealed))
        assert result.returncode == 0, result.stdout + result.stderr
        assert "ok: 1 snapshots, 1 sealed days" in result.stdout and "note:" not in \
            result.stderr
        refused = as_reader(prefix, "snapshot", "--dir", str(sealed), "--as-of", night(2))
    assert refused.returncode == EXIT_USAGE and "Traceback" not in refused.stderr
    assert (f"{sealed / '.chronicle.lock'}: cannot open the store's lock file for writing "
            "(permission denied)") in refused.stderr


def test_a_reader_without_a_lock_file_verifies_unlocked_and_says_so_once(
        sealed: Path) -> None:
    (sealed / "docs" / "data" / ".tmp-2026-08-22T031700Z").mkdir()  # a killed snapshot
    with reader_of(sealed) as prefix:
        result = as_reader(prefix, "verify", "--dir", str(sealed))
    assert "Traceback" not in result.stderr, result.stderr
    notes = [line for line in result.stderr.splitlines() if line.startswith("note:")]
    assert len(notes) == 2, result.stderr
    assert notes[0].startswith(f"note: {sealed / '.chronicle.lock'}: not locked: it does not "
                               "exist and this user cannot create it (permission denied)")
    assert ".tmp-2026-08-22T031700Z: a snapshot interrupted before it committed" in notes[1]
    # The killed snapshot is left to a user who can write (verify reports it meanwhile).
    assert result.returncode == 1 and "hidden entry in docs/data" in result.stderr
    assert not (sealed / ".chronicle.lock").exists()
    result = cli("verify", "--dir", str(sealed))
    assert result.exit_code == 0 and "removed .tmp-2026-08-22T031700Z" in result.output


READ = """
import sys, time
from pathlib import Path
from chronicle.store import Store, reading
with reading(Store(Path(sys.argv[1]) / "docs"), "verify") as access:
    print("reading", access.notes, flush=True)
    time.sleep(120)
"""


def test_a_readers_shared_lock_keeps_a_snapshot_out(sealed: Path) -> None:
    assert cli("verify", "--dir", str(sealed)).exit_code == 0  # leaves the lock file
    with reader_of(sealed) as prefix:
        proc = subprocess.Popen([*prefix, sys.executable, "-c", READ, str(sealed)], text=True,
                                stdout=subprocess.PIPE,
                                env={**os.environ, "PYTHONPATH": str(REPO)})
        try:
            assert proc.stdout is not None and proc.stdout.readline() == "reading []\n"
            second = as_reader(prefix, "verify", "--dir", str(sealed))
            assert second.returncode == 0, second.stderr  # readers share it
            # The owner's snapshot would commit under the reader: refused, as with any
            # holder (a reader cannot write its name into the lock file).
            result = cli("snapshot", "--dir", str(sealed), "--as-of", night(2))
            assert result.exit_code == EXIT_USAGE, result.output
            assert "the store is locked by another chronicle process (one that has not " \
                   "named itself" in result.output
        finally:
            proc.kill()
            proc.wait()
    assert cli("snapshot", "--dir", str(sealed), "--as-of", night(2)).exit_code == 0


# ---- a read-only mount, a full disk (a real small file system) ---------------------------


def test_on_a_read_only_mount_verify_passes_and_a_snapshot_is_one_message(
        sealed: Path, tmp_path: Path) -> None:
    assert cli("verify", "--dir", str(sealed)).exit_code == 0
    run = on_small_disk(sealed, tmp_path / "ro", ["verify"], 0, read_only=True)
    assert run.returncode == 0 and "ok: 1 snapshots" in run.output, run.output
    run = on_small_disk(sealed, tmp_path / "ro2", ["snapshot", "--as-of", night(2)], 0,
                        read_only=True)
    assert run.returncode == EXIT_USAGE and "Traceback" not in run.output, run.output
    assert ".chronicle.lock: cannot open the store's lock file for writing (read-only file " \
           "system)" in run.output
    assert run.after == run.before

