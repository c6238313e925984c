"""Disks that refuse writes, for real: a user without write access, a small full file
system, a read-only mount, a file-size limit. Nothing is faked: the kernel refuses.

- `as_reader`: the chronicle CLI run by a user who cannot write the chronicle. As root
  (CI runs as root) the tree is given to `nobody` and the CLI runs as root with no
  capability at all (`setpriv --bounding-set=-all`), so the kernel checks plain file
  permissions; as another user, the tree's write bits are removed.
- `on_small_disk`: the CLI run on a small tmpfs (full, or remounted read-only) in a
  private mount namespace (`unshare --mount`, as root; `unshare -rm` otherwise). Where
  the machine allows no namespace (a Docker container without CAP_SYS_ADMIN), the tests
  that need one are skipped, and `with_file_size_limit` (RLIMIT_FSIZE: EFBIG) still
  runs a write the kernel refuses.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.paths import REPO

NOBODY = 65534
_CLI = [sys.executable, "-m", "chronicle.cli"]


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "NO_MKDOCS_2_WARNING": "1", **extra}


def tree_digest(root: Path) -> dict[str, str]:
    """Return {path: sha256} of every file under `root` (links by their target text)."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            out[rel] = "-> " + os.readlink(path)
        elif path.is_file():
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


@contextmanager
def reader_of(root: Path) -> Iterator[list[str]]:
    """Make `root` unwritable for the command prefix yielded (see the module docstring);
    give it back afterwards."""
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("needs setpriv (util-linux) to run as root without capabilities")
        _chown_tree(root, NOBODY)
        try:
            yield ["setpriv", "--bounding-set=-all", "--"]
        finally:
            _chown_tree(root, 0)
        return
    modes = {p: p.stat().st_mode for p in [root, *root.rglob("*")] if not p.is_symlink()}
    for path, mode in modes.items():
        path.chmod(mode & ~0o222)
    try:
        yield []
    finally:
        for path, mode in modes.items():
            path.chmod(mode)


def _chown_tree(root: Path, uid: int) -> None:
    for path in [root, *root.rglob("*")]:
        os.chown(path, uid, uid, follow_symlinks=False)


def as_reader(prefix: list[str], *args: str) -> subprocess.CompletedProcess[str]:
    """Run the chronicle CLI under `prefix` (from `reader_of`)."""
    return subprocess.run([*prefix, *_CLI, *args], env=_env(), capture_output=True,
                          text=True, timeout=600, check=False)


@dataclass(frozen=True)
class DiskRun:
    """What a command did on a small disk: its exit code and output, the chronicle's
    files before and after (path -> sha256), and the entries of docs/data and of the
    chronicle's own folder after."""

    returncode: int
    output: str
    before: dict[str, str]
    after: dict[str, str]
    data: list[str]
    top: list[str]


def _unshare() -> list[str]:
    return ["unshare", "--mount"] if os.geteuid() == 0 else ["unshare", "-rm"]


def namespaces_work() -> bool:
    """Return whether this machine lets a test mount a tmpfs in a private namespace."""
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run([*_unshare(), "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"],
                           capture_output=True, timeout=30, check=False)
    return probe.returncode == 0


def on_small_disk(chronicle: Path, scratch: Path, args: list[str], free_kb: int,
                  read_only: bool = False) -> DiskRun:
    """Copy `chronicle` (without its site and caches) onto a small tmpfs, leave `free_kb`
    free on it (or remount it read-only), run `chronicle ARGS --dir <copy>` there."""
    if not namespaces_work():
        pytest.skip("needs a private mount namespace (unshare --mount): not allowed here")
    scratch.mkdir(parents=True, exist_ok=True)
    mount, out = scratch / "mnt", scratch / "out"
    mount.mkdir()
    out.mkdir()
    digest = (f"{shlex.quote(sys.executable)} -c 'import json, sys; "
              "from tests.support.disks import tree_digest; from pathlib import Path; "
              "print(json.dumps(tree_digest(Path(sys.argv[1]))))'")
    cli = " ".join(shlex.quote(a) for a in [*_CLI, *args, "--dir", str(mount / "c")])
    fill = ('avail=$(df -k --output=avail "$M" | tail -1)\n'
            f'fallocate -l $(( (avail - {free_kb}) * 1024 )) "$M/filler"\n')
    squeeze = 'mount -o remount,ro "$M"' if read_only else fill
    script = f"""set -eu
M={shlex.quote(str(mount))}
O={shlex.quote(str(out))}
mount -t tmpfs -o size=8m tmpfs "$M"
mkdir "$M/c"
tar -C {shlex.quote(str(chronicle))} --exclude=./site --exclude=./.cache -cf - . \\
  | tar -C "$M/c" -xf -
{digest} "$M/c/docs" > "$O/before.json"
{squeeze}
set +e
{cli} > "$O/output.txt" 2>&1
echo $? > "$O/rc"
set -e
{digest} "$M/c/docs" > "$O/after.json"
ls -a "$M/c/docs/data" > "$O/data.txt"
ls -a "$M/c" > "$O/top.txt"
"""
    subprocess.run([*_unshare(), "bash", "-c", script], env=_env(), cwd=REPO, timeout=900,
                   check=True, capture_output=True, text=True)
    return DiskRun(int((out / "rc").read_text()), (out / "output.txt").read_text(),
                   json.loads((out / "before.json").read_text()),
                   json.loads((out / "after.json").read_text()),
                   *([n for n in (out / name).read_text().split() if n not in (".", "..")]
                     for name in ("data.txt", "top.txt")))


def with_file_size_limit(limit_bytes: int, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the CLI with RLIMIT_FSIZE set: a write past `limit_bytes` fails with EFBIG
    (Python ignores SIGXFSZ), wherever the machine runs, no mount needed."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))

    return subprocess.run([*_CLI, *args], env=_env(), capture_output=True, text=True,
                          timeout=600, check=False, preexec_fn=limit)
