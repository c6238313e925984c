"""Run the chronicle CLI and SIGKILL it at a chosen point of a store write.

    python -m tests.support.killpoint POINT -- snapshot --dir DIR --as-of ...

A Python audit hook (PEP 578: observation, not patching) sees each file opened and each
rename, before it happens, and kills the process group when POINT is reached:

- `stage`:   the first sealed day file staged inside the snapshot's temporary folder
             (its data files are written, the snapshot never commits);
- `commit`:  the rename that commits the snapshot (everything staged, nothing committed);
- `publish`: the first move of a staged day file into docs/days (the snapshot has
             committed, its day files are not published yet).

If POINT is never reached the command finishes normally and its exit code is returned:
the caller tells the two apart by KILLED_EXIT (-9 as seen by subprocess).
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

POINTS = ("stage", "commit", "publish")
KILLED_EXIT = -signal.SIGKILL


def _reached(point: str, event: str, args: tuple[Any, ...]) -> bool:
    if point == "stage" and event == "open" and args and isinstance(args[0], str | bytes):
        path, mode = os.fsdecode(args[0]), str(args[1] or "r")
        return "/.sealed/" in path and any(m in mode for m in "wax")
    if event == "os.rename" and len(args) >= 2:
        src = os.fsdecode(args[0])
        if point == "commit":
            return os.path.basename(src).startswith(".tmp-")
        if point == "publish":
            return "/.sealed/" in src
    return False


def install(point: str) -> None:
    """Kill this process (and its group, when it leads one) once `point` is reached."""
    if point not in POINTS:
        raise SystemExit(f"unknown kill point {point!r}; one of {', '.join(POINTS)}")

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if _reached(point, event, args):
            if os.getpgid(0) == os.getpid():
                os.killpg(0, signal.SIGKILL)  # wandb-core and friends go too
            os.kill(os.getpid(), signal.SIGKILL)

    sys.addaudithook(hook)


def main(argv: list[str]) -> None:
    if len(argv) < 2 or argv[1] != "--":
        raise SystemExit("usage: python -m tests.support.killpoint POINT -- CHRONICLE-ARGS")
    install(argv[0])
    from chronicle.cli import main as cli

    cli(argv[2:], prog_name="chronicle")


if __name__ == "__main__":
    main(sys.argv[1:])
