"""Run the chronicle CLI and SIGKILL it at a chosen point of a store write or a build.

    python -m tests.support.killpoint POINT [--alone] -- snapshot --dir DIR --as-of ...

A Python audit hook (PEP 578: observation, not patching) sees each file opened, each
folder made or removed, each rename and each process started, before it happens, and
kills the process group when POINT is reached (with `--alone`, this process only: what
it started must then end by itself, chronicle/executor.py):

- `stage`:   the first sealed day file staged inside the snapshot's temporary folder
             (its data files are written, the snapshot never commits);
- `commit`:  the rename that commits the snapshot (everything staged, nothing committed);
- `publish`: the first move of a staged day file into docs/days (the snapshot has
             committed, its day files are not published yet);
- `staged`:  a build making the folder it builds the site in (its first moment: nothing
             built yet);
- `workers`: a build writing a file once it has started two processes (the translated
             edition's and a render worker drawing its new charts);
- `english`: a build writing its first file into that folder, once a process of its own
             has been started (the translated edition building beside English);
- `joined`:  a build moving its translated edition into the staged site (every edition
             complete, nothing published);
- `swapped`: a build removing the site it replaced (the new one is published).

If POINT is never reached the command finishes normally and its exit code is returned:
the caller tells the two apart by KILLED_EXIT (-9 as seen by subprocess).
"""

from __future__ import annotations

import os
import re
import signal
import sys
from typing import Any

SNAPSHOT_POINTS = ("stage", "commit", "publish")
BUILD_POINTS = ("staged", "workers", "english", "joined", "swapped")
POINTS = SNAPSHOT_POINTS + BUILD_POINTS
KILLED_EXIT = -signal.SIGKILL
_BUILDING = re.compile(r"/\.[^/]+\.building-\d+(-[a-z]+)?$")


class _Watch:
    """What the audit events said so far, and whether POINT is reached."""

    def __init__(self, point: str) -> None:
        self.point = point
        self.children = 0  # processes chronicle.executor started

    def reached(self, event: str, args: tuple[Any, ...]) -> bool:
        point = self.point
        if event == "subprocess.Popen" and len(args) >= 2 and "chronicle.executor" in args[1]:
            self.children += 1
            return False
        if event == "open" and args and isinstance(args[0], str | bytes):
            path, mode = os.fsdecode(args[0]), str(args[1] or "r")
            writing = any(m in mode for m in "wax")
            if point == "workers":
                return self.children >= 2
            if point == "stage":
                return "/.sealed/" in path and writing
            if point == "english":
                return self.children >= 1 and writing and _in_staged_site(path)
        if event == "os.mkdir" and args and point == "staged":
            return _BUILDING.search(os.fsdecode(args[0])) is not None
        if event == "os.rename" and len(args) >= 2:
            src = os.fsdecode(args[0])
            if point == "commit":
                return os.path.basename(src).startswith(".tmp-")
            if point == "publish":
                return "/.sealed/" in src
            if point == "joined":  # the edition's folder, named .<site>.building-<pid>-<lang>
                return bool((found := _BUILDING.search(src)) and found.group(1))
        if event == "shutil.rmtree" and args and point == "swapped":
            path = os.fsdecode(args[0])  # this build's folder, now holding the old site
            return path.endswith(f".building-{os.getpid()}") \
                and os.path.isfile(os.path.join(path, "index.html"))
        return False


def _in_staged_site(path: str) -> bool:
    """Whether `path` is a file of the staged English site (not an edition's folder)."""
    parts = path.split("/")
    return any(re.fullmatch(r"\.[^/]+\.building-\d+", p) for p in parts)


def install(point: str, alone: bool = False) -> None:
    """Kill this process (and its group, when it leads one, unless `alone`) once `point`
    is reached."""
    if point not in POINTS:
        raise SystemExit(f"unknown kill point {point!r}; one of {', '.join(POINTS)}")
    watch = _Watch(point)

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if watch.reached(event, args):
            if not alone and os.getpgid(0) == os.getpid():
                os.killpg(0, signal.SIGKILL)  # wandb-core and friends go too
            os.kill(os.getpid(), signal.SIGKILL)

    sys.addaudithook(hook)


def main(argv: list[str]) -> None:
    alone = "--alone" in argv[:argv.index("--")] if "--" in argv else False
    argv = [a for i, a in enumerate(argv) if not (a == "--alone" and "--" in argv[i:])]
    if len(argv) < 2 or argv[1] != "--":
        raise SystemExit(
            "usage: python -m tests.support.killpoint POINT [--alone] -- CHRONICLE-ARGS")
    install(argv[0], alone)
    from chronicle.cli import main as cli

    cli(argv[2:], prog_name="chronicle")


if __name__ == "__main__":
    main(sys.argv[1:])
